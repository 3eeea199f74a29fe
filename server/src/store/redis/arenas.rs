//! Arenas' states, saved by version (see [`Store::save_arena`](crate::store::Store::save_arena)).
//!
//! Keys: `P:arena:{id}` (hash: `version` and `state`, the arenas service's JSON, written by
//! a script that checks the version) and `P:arenas:open` (set: the ids of the arenas saved
//! as open). The index lives in another slot and is written after the arena.

use redis::AsyncCommands;

use super::keys::key_safe;
use super::RedisStore;
use crate::ids::ArenaId;
use crate::store::{StoreError, StoreResult};

impl RedisStore {
    pub(super) async fn save_arena_state(
        &self,
        id: &ArenaId,
        version: u64,
        open: bool,
        state: &serde_json::Value,
    ) -> StoreResult<bool> {
        if !key_safe(id) {
            return Err(StoreError::Conflict("malformed arena id".into()));
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.save_arena.prepare_invoke();
        inv.key(self.arena_key(id))
            .arg(version)
            .arg(state.to_string());
        let saved: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        if saved != 1 {
            return Ok(false);
        }
        // The index lives in another slot: written after the arena. A crash in between
        // leaves an arena listed as it was, which the next save corrects.
        let index = self.key(&["arenas", "open"]);
        if open {
            self.run(conn.sadd::<_, _, ()>(&index, id)).await?;
        } else {
            self.run(conn.srem::<_, _, ()>(&index, id)).await?;
        }
        Ok(true)
    }

    pub(super) async fn arena_state(
        &self,
        id: &ArenaId,
    ) -> StoreResult<Option<(u64, serde_json::Value)>> {
        if !key_safe(id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let (version, state): (Option<u64>, Option<String>) = self
            .run(conn.hget(self.arena_key(id), &["version", "state"]))
            .await?;
        match (version, state) {
            (Some(v), Some(s)) => {
                let state = serde_json::from_str(&s)
                    .map_err(|e| StoreError::Corrupt(format!("arena {id}: {e}")))?;
                Ok(Some((v, state)))
            }
            _ => Ok(None),
        }
    }

    pub(super) async fn open_arena_ids(&self) -> StoreResult<Vec<ArenaId>> {
        let mut conn = self.conn();
        let mut ids: Vec<ArenaId> = self
            .run(conn.smembers(self.key(&["arenas", "open"])))
            .await?;
        ids.sort();
        Ok(ids)
    }
}
