//! Writes that count only once replicas hold them (`--redis-min-replicas N`): a move's
//! append is followed by `WAIT N` in the same pipeline; the read that settles a write in
//! doubt, a game's creation and its end, and the writes of identities, accounts, devices,
//! rooms and ratings are followed by a marker write and `WAIT N`.
//!
//! Why a pipeline: `WAIT` counts the replicas that acknowledged this client's last write.
//! The pipeline goes out on one socket, so the `WAIT` is that write's; sent apart, a
//! reconnection in between would make it a new client's, with no write to wait for.
//!
//! Why the marker on the read: the primary may hold an entry that was written on another
//! connection, or on this one before it reconnected, and that no replica has yet. A write
//! after the read makes the `WAIT` cover everything the primary held when it read, so an
//! entry read here survives a promotion of a replica that acknowledged.

use std::time::Duration;

use redis::{ErrorKind, Pipeline, RedisError};

use super::encoding::{decode, encode};
use super::{RedisStore, StoreError, StoreResult};
use crate::ids::GameId;
use crate::store::ActionRecord;

/// How many replicas must acknowledge a move, and how long to wait for them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Replication {
    /// Replicas that must hold a move's write before it is answered `ok` (0: no wait).
    pub min_replicas: u32,
    /// Longest `WAIT`, in ms.
    pub wait: Duration,
}

impl RedisStore {
    /// Whether writes of moves wait for replicas.
    pub(super) fn waits_for_replicas(&self) -> bool {
        self.inner.replication.min_replicas > 0
    }

    /// Runs the append script (`APPEND_ACTION`): its answer, with `WAIT` when moves wait
    /// for replicas.
    pub(super) async fn append_script(
        &self,
        game_id: &GameId,
        action: &ActionRecord,
    ) -> StoreResult<i64> {
        if self.waits_for_replicas() {
            return self.append_waited(game_id, action).await;
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.append_action.prepare_invoke();
        inv.key(self.game_key(game_id))
            .key(self.log_key(game_id))
            .key(self.lease_key(game_id))
            .arg(action.seq)
            .arg(encode(action)?)
            .arg(self.inner.fence.as_deref().unwrap_or(""));
        self.run(inv.invoke_async(&mut conn)).await
    }

    /// The append script, then `WAIT`: `Ok(script's answer)` only when enough replicas
    /// acknowledged; in doubt when fewer did (the primary took it, a promotion may lose it).
    async fn append_waited(&self, game_id: &GameId, action: &ActionRecord) -> StoreResult<i64> {
        let script = &self.inner.scripts.append_action;
        let mut eval = redis::cmd("EVALSHA");
        eval.arg(script.get_hash())
            .arg(3)
            .arg(self.game_key(game_id))
            .arg(self.log_key(game_id))
            .arg(self.lease_key(game_id))
            .arg(action.seq)
            .arg(encode(action)?)
            .arg(self.inner.fence.as_deref().unwrap_or(""));
        let mut pipe = redis::pipe();
        pipe.add_command(eval);
        if !self.is_up() {
            return Err(StoreError::Unavailable("redis is unreachable".into()));
        }
        // Any failure now may follow a script that ran (a `WAIT` unblocked by a demotion,
        // refused on a replica): in doubt, settled from the log, never a definite refusal.
        let (r, acked): (i64, i64) = self.waited(pipe).await.map_err(|e| match e {
            StoreError::Unavailable(m) => StoreError::InDoubt(m),
            other => other,
        })?;
        // 2: the very entry was already logged, perhaps by a write on another connection
        // that this `WAIT` does not cover: only a read with a marker can tell.
        if r == 2 {
            return Err(StoreError::InDoubt("an earlier write of this move".into()));
        }
        self.enough(acked)?;
        Ok(r)
    }

    /// [`crate::store::Store::replicated_actions`]: the log, read and then covered by a
    /// marker write and `WAIT`.
    pub(super) async fn actions_waited(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>> {
        let mut read = redis::cmd("LRANGE");
        read.arg(self.log_key(game_id)).arg(0).arg(-1);
        let mut mark = redis::cmd("INCR");
        mark.arg(self.key(&["replicated"]));
        let mut pipe = redis::pipe();
        pipe.add_command(read).add_command(mark).ignore();
        let (entries, acked): (Vec<String>, i64) = self.waited(pipe).await?;
        self.enough(acked)?;
        entries.iter().map(|e| decode(e)).collect()
    }

    /// With replicas asked for, waits until they hold every write the primary took so far
    /// (a marker write and `WAIT`): a game's creation and its end are then as safe as its
    /// moves. In doubt when fewer acknowledged in time. Nothing to do without replicas.
    pub(super) async fn replicated(&self) -> StoreResult<()> {
        if !self.waits_for_replicas() {
            return Ok(());
        }
        let mut mark = redis::cmd("INCR");
        mark.arg(self.key(&["replicated"]));
        let mut pipe = redis::pipe();
        pipe.add_command(mark);
        let (_, acked): (i64, i64) = self.waited(pipe).await.map_err(|e| match e {
            StoreError::Unavailable(m) => StoreError::InDoubt(m),
            other => other,
        })?;
        self.enough(acked)
    }

    /// A write's outcome, once replicas hold it too ([`RedisStore::replicated`]): identities,
    /// accounts, devices, rooms and ratings survive a failover as moves do.
    pub(super) async fn durable<T>(&self, written: StoreResult<T>) -> StoreResult<T> {
        let value = written?;
        self.replicated().await?;
        Ok(value)
    }

    /// Runs `pipe` followed by `WAIT`, loading the append script on a primary that lacks
    /// it (a promoted replica: scripts are not replicated).
    async fn waited<T: redis::FromRedisValue>(&self, mut pipe: Pipeline) -> StoreResult<(T, i64)> {
        let Replication { min_replicas, wait } = self.inner.replication;
        pipe.cmd("WAIT")
            .arg(min_replicas)
            .arg(wait.as_millis() as u64);
        let within = self.inner.timeout + wait;
        let mut conn = self.conn();
        let script = &self.inner.scripts.append_action;
        let op = async {
            match pipe.query_async(&mut conn).await {
                Err(e) if no_script(&e) => {
                    script.load_async(&mut conn).await?;
                    pipe.query_async(&mut conn).await
                }
                other => other,
            }
        };
        self.run_within(op, within).await
    }

    /// Fewer replicas than asked acknowledged: in doubt (and perhaps the primary moved).
    fn enough(&self, acked: i64) -> StoreResult<()> {
        let wanted = i64::from(self.inner.replication.min_replicas);
        if acked >= wanted {
            return Ok(());
        }
        self.inner.conn.suspect_primary();
        Err(StoreError::InDoubt(format!(
            "the write reached {acked} of the {wanted} replicas asked in time"
        )))
    }
}

/// Whether an error is the primary's "this script is not loaded".
fn no_script(e: &RedisError) -> bool {
    e.kind() == ErrorKind::NoScriptError
}
