//! The analysis queue in Redis: the steps of [`crate::store::analysis::MemoryQueue`] as Lua
//! scripts, so that a request, a lease and a result are each one atomic check-and-write
//! whichever node runs them.
//!
//! Keys, all in the one hash slot `{analysis}` (a script may use them together on a Redis
//! Cluster too):
//!
//! | key | type | what |
//! |---|---|---|
//! | `P:analysis:{analysis}:state` | hash | game → `queued` or `running` (games not done) |
//! | `P:analysis:{analysis}:by` | hash | game → the player who asked (games not done) |
//! | `P:analysis:{analysis}:review:<game>` | hash | a done review: `result` (the JSON result) and `by`; it expires with the game's record |
//! | `P:analysis:{analysis}:queue` | list | queued games, next first |
//! | `P:analysis:{analysis}:lease` | hash | game → the lease id of the worker holding it |
//! | `P:analysis:{analysis}:until` | sorted set | leased games by the ms their lease runs out |
//! | `P:analysis:{analysis}:pending` | hash | player → the game of their pending request |
//! | `P:analysis:{analysis}:seen` | string | when a worker was last seen, ms |
//!
//! Why beside the queue rather than under the game's own keys: the result must be written in
//! the same step as the lease check (exactly once), and a script cannot reach two slots.
//!
//! Retention: a done review leaves the hashes (they hold only the games queued or running,
//! so they stay as small as the queue) for a key of its own, which is given the remaining
//! time to live of the game's record (`P:game:{id}:final`, `--finished-retention-days`):
//! review and record go together, and with no retention both are kept for good (one review
//! per finished game at most, as there is one record). The reviews share the queue's hash
//! slot (one node of a Redis Cluster holds them all): the price of the atomic scripts.

use std::sync::LazyLock;

use redis::{AsyncCommands, Script};
use serde_json::Value;

use super::keys::key_safe;
use super::RedisStore;
use crate::ids::{GameId, PlayerId};
use crate::store::{AnalysisEntry, AnalysisRequested, AnalysisStatus, StoreError, StoreResult};

/// KEYS: state, by, pending, queue, the game's review. ARGV: game, player.
/// Returns {'queued'}, {'exists', state} or {'busy', game}.
static REQUEST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local s = redis.call('HGET', KEYS[1], ARGV[1])
if s then return {'exists', s} end
if redis.call('EXISTS', KEYS[5]) == 1 then return {'exists', 'done'} end
local p = redis.call('HGET', KEYS[3], ARGV[2])
if p then return {'busy', p} end
redis.call('HSET', KEYS[1], ARGV[1], 'queued')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[1])
return {'queued'}
",
    )
});

/// KEYS: state, queue, lease, until, seen. ARGV: lease id, now ms, lease ms.
/// Returns the game leased, or false.
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local now = tonumber(ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for i = #expired, 1, -1 do
  local g = expired[i]
  redis.call('ZREM', KEYS[4], g)
  redis.call('HDEL', KEYS[3], g)
  redis.call('HSET', KEYS[1], g, 'queued')
  redis.call('LPUSH', KEYS[2], g)
end
local seen = tonumber(redis.call('GET', KEYS[5]) or '0')
if now > seen then redis.call('SET', KEYS[5], ARGV[2]) end
local g = redis.call('LPOP', KEYS[2])
if not g then return false end
redis.call('HSET', KEYS[1], g, 'running')
redis.call('HSET', KEYS[3], g, ARGV[1])
redis.call('ZADD', KEYS[4], now + tonumber(ARGV[3]), g)
return g
",
    )
});

/// KEYS: lease, until, seen. ARGV: now ms, lease ms, then game/lease pairs.
static KEEP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local now = tonumber(ARGV[1])
local seen = tonumber(redis.call('GET', KEYS[3]) or '0')
if now > seen then redis.call('SET', KEYS[3], ARGV[1]) end
for i = 3, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[i])
  end
end
return 1
",
    )
});

/// KEYS: state, queue, lease, until. ARGV: game, lease id. Returns 1 given back, 0 not held.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], 'queued')
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
",
    )
});

/// KEYS: state, the game's review, lease, until, by, pending. ARGV: game, lease id, result
/// JSON, time to live in ms (0: none). Returns 1 stored, 0 the lease is not current.
static COMPLETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
local p = redis.call('HGET', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('HSET', KEYS[2], 'result', ARGV[3], 'by', p or '')
local ttl = tonumber(ARGV[4])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
if p and redis.call('HGET', KEYS[6], p) == ARGV[1] then
  redis.call('HDEL', KEYS[6], p)
end
return 1
",
    )
});

impl RedisStore {
    fn analysis_key(&self, part: &str) -> String {
        self.key(&["analysis", "{analysis}", part])
    }

    /// `P:analysis:{analysis}:review:<game>`: a done review (in the queue's slot).
    fn review_key(&self, game: &GameId) -> String {
        self.key(&["analysis", "{analysis}", "review", game.as_str()])
    }

    /// How long a review of `game` is kept, in ms (0: for good): as long as its record
    /// still is (the record's `PTTL`); for a game without a record, the retention of a
    /// record (`--finished-retention-days`).
    async fn review_ttl_ms(&self, game: &GameId) -> StoreResult<u64> {
        let mut conn = self.conn();
        let ttl: i64 = self
            .run(
                redis::cmd("PTTL")
                    .arg(self.final_key(game))
                    .query_async(&mut conn),
            )
            .await?;
        let retention = self.inner.finished_retention;
        Ok(match ttl {
            t if t > 0 => t as u64,
            // -1: the record is kept for good.
            -1 => 0,
            _ => retention.map_or(0, |r| r.as_millis().max(1) as u64),
        })
    }

    pub(super) async fn request_analysis_job(
        &self,
        game: &GameId,
        player: &PlayerId,
    ) -> StoreResult<AnalysisRequested> {
        if !key_safe(game) || !key_safe(player) {
            return Err(StoreError::Conflict("malformed game or player id".into()));
        }
        let mut inv = REQUEST.prepare_invoke();
        inv.key(self.analysis_key("state"))
            .key(self.analysis_key("by"))
            .key(self.analysis_key("pending"))
            .key(self.analysis_key("queue"))
            .key(self.review_key(game))
            .arg(game.as_str())
            .arg(player.as_str());
        let mut conn = self.conn();
        let answer: Vec<String> = self.run(inv.invoke_async(&mut conn)).await?;
        let corrupt = || StoreError::Corrupt(format!("analysis request answered {answer:?}"));
        match answer.first().map(String::as_str) {
            Some("queued") => Ok(AnalysisRequested::Queued),
            Some("exists") => answer
                .get(1)
                .and_then(|s| AnalysisStatus::parse(s))
                .map(AnalysisRequested::Exists)
                .ok_or_else(corrupt),
            Some("busy") => answer
                .get(1)
                .map(|g| AnalysisRequested::Busy(GameId::from(g.clone())))
                .ok_or_else(corrupt),
            _ => Err(corrupt()),
        }
    }

    pub(super) async fn analysis_entry(&self, game: &GameId) -> StoreResult<Option<AnalysisEntry>> {
        if !key_safe(game) {
            return Ok(None);
        }
        let mut conn = self.conn();
        type Read = (
            Option<String>,
            Option<String>,
            (Option<String>, Option<String>),
        );
        let (state, by, (result, done_by)): Read = self
            .run(
                redis::pipe()
                    .hget(self.analysis_key("state"), game.as_str())
                    .hget(self.analysis_key("by"), game.as_str())
                    .hget(self.review_key(game), &["result", "by"])
                    .query_async(&mut conn),
            )
            .await?;
        let status = match (&state, &result) {
            (Some(state), _) => AnalysisStatus::parse(state)
                .ok_or_else(|| StoreError::Corrupt(format!("analysis state '{state}'")))?,
            (None, Some(_)) => AnalysisStatus::Done,
            (None, None) => return Ok(None),
        };
        let by = by.or(done_by);
        let result = result
            .map(|r| serde_json::from_str::<Value>(&r))
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(Some(AnalysisEntry {
            status,
            requested_by: PlayerId::from(by.unwrap_or_default()),
            result,
        }))
    }

    pub(super) async fn analysis_seen(&self) -> StoreResult<u64> {
        let mut conn = self.conn();
        let seen: Option<u64> = self.run(conn.get(self.analysis_key("seen"))).await?;
        Ok(seen.unwrap_or(0))
    }

    pub(super) async fn take_analysis(
        &self,
        lease: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<Option<GameId>> {
        let mut inv = TAKE.prepare_invoke();
        inv.key(self.analysis_key("state"))
            .key(self.analysis_key("queue"))
            .key(self.analysis_key("lease"))
            .key(self.analysis_key("until"))
            .key(self.analysis_key("seen"))
            .arg(lease)
            .arg(now_ms)
            .arg(lease_ms);
        let mut conn = self.conn();
        let game: Option<String> = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(game.map(GameId::from))
    }

    pub(super) async fn keep_analysis(
        &self,
        leases: &[(GameId, String)],
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<()> {
        let mut inv = KEEP.prepare_invoke();
        inv.key(self.analysis_key("lease"))
            .key(self.analysis_key("until"))
            .key(self.analysis_key("seen"))
            .arg(now_ms)
            .arg(lease_ms);
        for (game, lease) in leases {
            inv.arg(game.as_str()).arg(lease);
        }
        let mut conn = self.conn();
        let _: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(())
    }

    pub(super) async fn release_analysis(&self, game: &GameId, lease: &str) -> StoreResult<bool> {
        let mut inv = RELEASE.prepare_invoke();
        inv.key(self.analysis_key("state"))
            .key(self.analysis_key("queue"))
            .key(self.analysis_key("lease"))
            .key(self.analysis_key("until"))
            .arg(game.as_str())
            .arg(lease);
        let mut conn = self.conn();
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(r == 1)
    }

    pub(super) async fn complete_analysis_job(
        &self,
        game: &GameId,
        lease: &str,
        result: &Value,
    ) -> StoreResult<bool> {
        let ttl_ms = self.review_ttl_ms(game).await?;
        let mut inv = COMPLETE.prepare_invoke();
        inv.key(self.analysis_key("state"))
            .key(self.review_key(game))
            .key(self.analysis_key("lease"))
            .key(self.analysis_key("until"))
            .key(self.analysis_key("by"))
            .key(self.analysis_key("pending"))
            .arg(game.as_str())
            .arg(lease)
            .arg(result.to_string())
            .arg(ttl_ms);
        let mut conn = self.conn();
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(r == 1)
    }
}
