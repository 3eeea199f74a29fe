//! The lesson steps each player has done (see [`Store::lesson_steps`](crate::store::Store)).
//!
//! Keys: `P:player:{id}:lessons:<kind>` (set: the ids of the kind's steps done), in the
//! player's hash slot, kept as long as the player's other keys (no expiry). A set makes
//! marking a step one idempotent `SADD`; the kinds are read in one pipeline.

use redis::AsyncCommands;

use super::keys::key_safe;
use super::RedisStore;
use crate::ids::PlayerId;
use crate::store::{LessonSteps, StoreError, StoreResult};

impl RedisStore {
    fn lessons_key(&self, player_id: &PlayerId, kind: &str) -> String {
        self.player_key(player_id, Some(&format!("lessons:{kind}")))
    }

    pub(super) async fn add_lesson_records(
        &self,
        player_id: &PlayerId,
        kind: &str,
        steps: &[String],
    ) -> StoreResult<()> {
        if !key_safe(player_id) || !key_safe(kind) {
            return Err(StoreError::Conflict("malformed player id or kind".into()));
        }
        if steps.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn();
        let _: i64 = self
            .run(conn.sadd(self.lessons_key(player_id, kind), steps))
            .await?;
        Ok(())
    }

    pub(super) async fn lesson_records(
        &self,
        player_id: &PlayerId,
        kinds: &[&str],
    ) -> StoreResult<LessonSteps> {
        let kinds: Vec<&str> = kinds.iter().copied().filter(|k| key_safe(*k)).collect();
        if !key_safe(player_id) || kinds.is_empty() {
            return Ok(LessonSteps::new());
        }
        let mut pipe = redis::pipe();
        for kind in &kinds {
            pipe.smembers(self.lessons_key(player_id, kind));
        }
        let mut conn = self.conn();
        let sets: Vec<Vec<String>> = self.run(pipe.query_async(&mut conn)).await?;
        Ok(kinds
            .into_iter()
            .zip(sets)
            .filter(|(_, steps)| !steps.is_empty())
            .map(|(kind, mut steps)| {
                steps.sort();
                (kind.to_string(), steps)
            })
            .collect())
    }
}
