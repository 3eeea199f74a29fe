//! The analysis queue in Redis: the steps of [`crate::store::analysis::MemoryQueue`] as Lua
//! scripts, so that a request, a lease and a result are each one atomic check-and-write
//! whichever node runs them.
//!
//! Keys, all in the one hash slot `{analysis}` (a script may use them together on a Redis
//! Cluster too):
//!
//! | key | type | what |
//! |---|---|---|
//! | `P:analysis:{analysis}:state` | hash | game → `queued`, `running` or `done` |
//! | `P:analysis:{analysis}:by` | hash | game → the player who asked |
//! | `P:analysis:{analysis}:result` | hash | game → the JSON result, once done |
//! | `P:analysis:{analysis}:queue` | list | queued games, next first |
//! | `P:analysis:{analysis}:lease` | hash | game → the lease id of the worker holding it |
//! | `P:analysis:{analysis}:until` | sorted set | leased games by the ms their lease runs out |
//! | `P:analysis:{analysis}:pending` | hash | player → the game of their pending request |
//! | `P:analysis:{analysis}:seen` | string | when a worker was last seen, ms |
//!
//! Why beside the queue rather than under the game's own keys: the result must be written in
//! the same step as the lease check (exactly once), and a script cannot reach two slots.

use std::sync::LazyLock;

use redis::{AsyncCommands, Script};
use serde_json::Value;

use super::keys::key_safe;
use super::RedisStore;
use crate::ids::{GameId, PlayerId};
use crate::store::{AnalysisEntry, AnalysisRequested, AnalysisStatus, StoreError, StoreResult};

/// KEYS: state, by, pending, queue. ARGV: game, player.
/// Returns {'queued'}, {'exists', state} or {'busy', game}.
static REQUEST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local s = redis.call('HGET', KEYS[1], ARGV[1])
if s then return {'exists', s} end
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

/// KEYS: state, result, lease, until, by, pending. ARGV: game, lease id, result JSON.
/// Returns 1 stored, 0 the lease is not current.
static COMPLETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], 'done')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local p = redis.call('HGET', KEYS[5], ARGV[1])
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
        let (state, by, result): (Option<String>, Option<String>, Option<String>) = self
            .run(
                redis::pipe()
                    .hget(self.analysis_key("state"), game.as_str())
                    .hget(self.analysis_key("by"), game.as_str())
                    .hget(self.analysis_key("result"), game.as_str())
                    .query_async(&mut conn),
            )
            .await?;
        let Some(state) = state else {
            return Ok(None);
        };
        let status = AnalysisStatus::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("analysis state '{state}'")))?;
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
        let mut inv = COMPLETE.prepare_invoke();
        inv.key(self.analysis_key("state"))
            .key(self.analysis_key("result"))
            .key(self.analysis_key("lease"))
            .key(self.analysis_key("until"))
            .key(self.analysis_key("by"))
            .key(self.analysis_key("pending"))
            .arg(game.as_str())
            .arg(lease)
            .arg(result.to_string());
        let mut conn = self.conn();
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(r == 1)
    }
}
