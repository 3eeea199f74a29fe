//! Moderation's records in Redis: the steps of [`crate::store::moderation::MemoryModeration`].
//!
//! Keys, all in the one hash slot `{moderation}` (a script may use them together on a Redis
//! Cluster too; moderation writes are rare, so one slot is no hot spot):
//!
//! | key | type | what |
//! |---|---|---|
//! | `P:mod:{moderation}:report` | hash | report id → the JSON [`ReportRecord`] |
//! | `P:mod:{moderation}:reports` | sorted set | every report id by creation ms |
//! | `P:mod:{moderation}:open` | sorted set | open report ids by creation ms |
//! | `P:mod:{moderation}:pair` | hash | `<reporter> <target>` → the open report's id (one open report per pair) |
//! | `P:mod:{moderation}:about:<player>` | sorted set | report ids about a player |
//! | `P:mod:{moderation}:by:<player>` | sorted set | report ids by a reporter, by creation ms (the budget) |
//! | `P:mod:{moderation}:sanction` | hash | sanction id → the JSON [`SanctionRecord`] |
//! | `P:mod:{moderation}:of:<player>` | sorted set | a player's sanction ids by ms |
//! | `P:mod:{moderation}:standing` | set | ids of mutes, bans and address bans not undone |
//! | `P:mod:{moderation}:version` | string | moves on with every sanction saved |
//! | `P:mod:{moderation}:audit` | list | the audit log, newest first, trimmed to [`AUDIT_KEEP`] |
//!
//! Why a script for a report: the one-open-report check and the writes must be one step, or
//! a crash between them would leave a pair blocked by a report that was never stored.

use std::sync::LazyLock;

use redis::{AsyncCommands, Script};

use super::encoding::{decode, encode};
use super::keys::key_safe;
use super::RedisStore;
use crate::domain::moderation::{AuditEntry, ReportClosed, ReportRecord, SanctionRecord};
use crate::ids::PlayerId;
use crate::store::moderation::{ModerationStore, AUDIT_KEEP, REPORTS_KEEP};
use crate::store::{StoreError, StoreResult};

/// KEYS: pair, report, reports, open, about, by. ARGV: pair field, id, json, created ms.
/// Returns 1 stored, 0 an open report of the pair exists.
static OPEN_REPORT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
redis.call('ZADD', KEYS[6], ARGV[4], ARGV[2])
return 1
",
    )
});

/// KEYS: report, open, pair. ARGV: id, pair field, the closed report's json. Returns -1 no
/// such report, 0 closed already, 1 closed now.
static CLOSE_REPORT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HGET', KEYS[3], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[3], ARGV[2]) end
return 1
",
    )
});

impl RedisStore {
    fn mod_key(&self, part: &str) -> String {
        self.key(&["mod", "{moderation}", part])
    }

    fn mod_player_key(&self, part: &str, player: &PlayerId) -> StoreResult<String> {
        if !key_safe(player.as_str()) {
            return Err(StoreError::Conflict("malformed player id".into()));
        }
        Ok(self.key(&["mod", "{moderation}", part, player.as_str()]))
    }

    /// The records named by `ids` in hash `key`, in the order of `ids` (missing ones left out).
    async fn mod_records<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        ids: &[String],
    ) -> StoreResult<Vec<T>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let raw: Vec<Option<String>> = self
            .run(redis::cmd("HMGET").arg(key).arg(ids).query_async(&mut conn))
            .await?;
        raw.into_iter().flatten().map(|j| decode(&j)).collect()
    }

    /// The newest `limit` ids of sorted set `key`.
    async fn newest_ids(&self, key: &str, limit: usize) -> StoreResult<Vec<String>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        self.run(conn.zrevrange(key, 0, limit as isize - 1)).await
    }

    /// Drops the oldest closed reports beyond [`REPORTS_KEEP`] (the open ones stay).
    async fn trim_reports(&self) -> StoreResult<()> {
        let mut conn = self.conn();
        let all = self.mod_key("reports");
        let n: usize = self.run(conn.zcard(&all)).await?;
        if n <= REPORTS_KEEP {
            return Ok(());
        }
        let oldest: Vec<String> = self.run(conn.zrange(&all, 0, 99)).await?;
        let reports: Vec<ReportRecord> = self.mod_records(&self.mod_key("report"), &oldest).await?;
        for r in reports.iter().filter(|r| r.closed.is_some()) {
            let mut pipe = redis::pipe();
            pipe.zrem(&all, &r.id)
                .hdel(self.mod_key("report"), &r.id)
                .zrem(self.mod_player_key("about", &r.target)?, &r.id);
            self.run_writes(pipe).await?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl ModerationStore for RedisStore {
    async fn open_report(&self, report: &ReportRecord) -> StoreResult<bool> {
        let mut conn = self.conn();
        let mut invocation = OPEN_REPORT.prepare_invoke();
        invocation
            .key(self.mod_key("pair"))
            .key(self.mod_key("report"))
            .key(self.mod_key("reports"))
            .key(self.mod_key("open"))
            .key(self.mod_player_key("about", &report.target)?)
            .key(self.mod_player_key("by", &report.reporter)?)
            .arg(format!("{} {}", report.reporter, report.target))
            .arg(&report.id)
            .arg(encode(report)?)
            .arg(report.created_ms);
        let stored: i64 = self.run(invocation.invoke_async(&mut conn)).await?;
        if stored == 1 {
            self.trim_reports().await?;
        }
        Ok(stored == 1)
    }

    async fn report(&self, id: &str) -> StoreResult<Option<ReportRecord>> {
        let mut conn = self.conn();
        let raw: Option<String> = self.run(conn.hget(self.mod_key("report"), id)).await?;
        raw.map(|j| decode(&j)).transpose()
    }

    async fn reports(&self, open_only: bool, limit: usize) -> StoreResult<Vec<ReportRecord>> {
        let index = self.mod_key(if open_only { "open" } else { "reports" });
        let ids = self.newest_ids(&index, limit).await?;
        self.mod_records(&self.mod_key("report"), &ids).await
    }

    async fn reports_about(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> StoreResult<Vec<ReportRecord>> {
        let ids = self
            .newest_ids(&self.mod_player_key("about", player)?, limit)
            .await?;
        self.mod_records(&self.mod_key("report"), &ids).await
    }

    async fn reports_by_since(&self, reporter: &PlayerId, since_ms: u64) -> StoreResult<usize> {
        let mut conn = self.conn();
        let key = self.mod_player_key("by", reporter)?;
        self.run(conn.zcount(key, since_ms, "+inf")).await
    }

    async fn close_report(&self, id: &str, closed: &ReportClosed) -> StoreResult<Option<bool>> {
        let Some(mut report) = self.report(id).await? else {
            return Ok(None);
        };
        if report.closed.is_some() {
            return Ok(Some(false));
        }
        report.closed = Some(closed.clone());
        let mut conn = self.conn();
        let mut invocation = CLOSE_REPORT.prepare_invoke();
        invocation
            .key(self.mod_key("report"))
            .key(self.mod_key("open"))
            .key(self.mod_key("pair"))
            .arg(id)
            .arg(format!("{} {}", report.reporter, report.target))
            .arg(encode(&report)?);
        let done: i64 = self.run(invocation.invoke_async(&mut conn)).await?;
        Ok(match done {
            -1 => None,
            0 => Some(false),
            _ => Some(true),
        })
    }

    async fn save_sanction(&self, sanction: &SanctionRecord) -> StoreResult<()> {
        let mut pipe = redis::pipe();
        pipe.hset(self.mod_key("sanction"), &sanction.id, encode(sanction)?);
        if let Some(player) = &sanction.player {
            pipe.zadd(
                self.mod_player_key("of", player)?,
                &sanction.id,
                sanction.at_ms,
            );
        }
        if sanction.standing() {
            pipe.sadd(self.mod_key("standing"), &sanction.id);
        } else {
            pipe.srem(self.mod_key("standing"), &sanction.id);
        }
        pipe.incr(self.mod_key("version"), 1);
        // A ban must survive a failover as the moves it stops do.
        let saved = self.run_writes(pipe).await;
        self.durable(saved).await
    }

    async fn sanction(&self, id: &str) -> StoreResult<Option<SanctionRecord>> {
        let mut conn = self.conn();
        let raw: Option<String> = self.run(conn.hget(self.mod_key("sanction"), id)).await?;
        raw.map(|j| decode(&j)).transpose()
    }

    async fn sanctions_of(&self, player: &PlayerId) -> StoreResult<Vec<SanctionRecord>> {
        let ids = self
            .newest_ids(&self.mod_player_key("of", player)?, 1000)
            .await?;
        self.mod_records(&self.mod_key("sanction"), &ids).await
    }

    async fn standing_sanctions(&self) -> StoreResult<Vec<SanctionRecord>> {
        let mut conn = self.conn();
        let mut ids: Vec<String> = self.run(conn.smembers(self.mod_key("standing"))).await?;
        ids.sort();
        let mut all: Vec<SanctionRecord> =
            self.mod_records(&self.mod_key("sanction"), &ids).await?;
        all.sort_by(|a, b| (a.at_ms, &a.id).cmp(&(b.at_ms, &b.id)));
        Ok(all)
    }

    async fn sanctions_version(&self) -> StoreResult<u64> {
        let mut conn = self.conn();
        let v: Option<u64> = self.run(conn.get(self.mod_key("version"))).await?;
        Ok(v.unwrap_or(0))
    }

    async fn bump(&self) -> StoreResult<()> {
        let mut conn = self.conn();
        let _: u64 = self.run(conn.incr(self.mod_key("version"), 1)).await?;
        Ok(())
    }

    async fn audit(&self, entry: &AuditEntry) -> StoreResult<()> {
        let key = self.mod_key("audit");
        let mut pipe = redis::pipe();
        pipe.lpush(&key, encode(entry)?)
            .ltrim(&key, 0, AUDIT_KEEP as isize - 1);
        self.run_writes(pipe).await
    }

    async fn audit_log(&self, limit: usize) -> StoreResult<Vec<AuditEntry>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let raw: Vec<String> = self
            .run(conn.lrange(self.mod_key("audit"), 0, limit as isize - 1))
            .await?;
        raw.iter().map(|j| decode(j)).collect()
    }
}
