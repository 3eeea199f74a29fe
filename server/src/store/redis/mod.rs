//! The Redis store: everything that must survive a crash or restart, written so that one
//! logged move costs one round trip.
//!
//! The parts, one concept each: `keys` (the key layout, every key under the deployment's
//! prefix), `encoding` (records as hash fields of JSON values), `scripts` (the Lua scripts
//! that make a check and a write atomic) and `outage` (timeouts, and failing at once while
//! Redis is known to be down); and one part per kind of record whose keys are its own
//! (`accounts`, `devices`, `lessons`, `rooms`, `arenas`, `ratings`). This file connects, keeps a
//! game's keys (its log, its final document, its players' lists), and implements
//! [`Store`] with the parts.

mod accounts;
mod analysis;
mod arenas;
mod backfill;
mod connect;
mod devices;
mod durable;
mod encoding;
mod keys;
mod lessons;
mod moderation;
mod outage;
mod ratings;
mod rooms;
mod scripts;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::AsyncCommands;

use super::connection::RedisConn;
pub use super::sentinel::SentinelOptions;
use super::{
    AccountRecord, ActionRecord, AnalysisEntry, AnalysisRequested, DeviceRecord, FinishedGame,
    GameRecord, LessonSteps, PlayerRecord, RatingsByKind, RoomRecord, Store, StoreError,
    StoreResult,
};
use crate::domain::rating::Rating;
use crate::ids;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
pub use connect::Failover;
pub use durable::Replication;
use encoding::{decode, encode, flat, from_fields, to_fields};
use keys::key_safe;
use outage::health_task;
use scripts::Scripts;

/// How to reach Redis.
#[derive(Clone, Debug)]
pub struct RedisOptions {
    /// `redis://host:port/db` (or `rediss://`, `unix://`).
    pub url: String,
    /// Key prefix isolating this deployment.
    pub prefix: String,
    /// Longest wait for one call before it fails with `unavailable`.
    pub timeout: Duration,
    /// In cluster mode, this node's id: a game's log accepts appends only from the node
    /// holding its lease (a fencing token).
    pub fence: Option<String>,
    /// `url` lists seed nodes of a Redis Cluster (comma-separated).
    pub redis_cluster: bool,
    /// How long a finished game (setup, log, final document) is kept; `None` keeps it for
    /// good.
    pub finished_retention: Option<Duration>,
}

struct Inner {
    conn: RedisConn,
    prefix: String,
    timeout: Duration,
    /// Whether Redis answered the last call or ping; a watch so that games learn of an
    /// outage when it starts (see [`Store::availability`]).
    up: tokio::sync::watch::Sender<bool>,
    scripts: Scripts,
    fence: Option<String>,
    finished_retention: Option<Duration>,
    /// Replicas a move's write must reach before it is acknowledged.
    replication: Replication,
    /// See [`Store::generation`]: moved on when Redis answers again after an outage and
    /// when Sentinel names another primary.
    generation: std::sync::atomic::AtomicU64,
}

/// A [`Store`] in Redis.
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.inner.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A connection for the cluster's own commands (leases, membership).
    pub fn connection(&self) -> RedisConn {
        self.conn()
    }

    fn conn(&self) -> RedisConn {
        self.inner.conn.clone()
    }

    /// Lists a game among each of its players' unfinished games (the last writes of a
    /// game's creation, and what a repair writes again).
    async fn list_unfinished_for_players(&self, game: &GameRecord) -> StoreResult<()> {
        let mut conn = self.conn();
        for p in &game.players {
            let key = self.player_key(&p.id, Some("unfinished"));
            self.run(conn.zadd::<_, _, _, ()>(&key, &game.id, game.created_ms))
                .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl Store for RedisStore {
    fn moderation(&self) -> &dyn super::moderation::ModerationStore {
        self
    }

    async fn ping(&self) -> StoreResult<()> {
        if !self.is_up() {
            return Err(StoreError::Unavailable("redis is unreachable".into()));
        }
        let mut conn = self.conn();
        self.run(redis::cmd("PING").query_async::<String>(&mut conn))
            .await
            .map(|_| ())
    }

    fn persistence(&self) -> &'static str {
        "redis"
    }

    fn available(&self) -> bool {
        self.is_up()
    }

    fn availability(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        Some(self.inner.up.subscribe())
    }

    fn generation(&self) -> u64 {
        self.inner
            .generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    async fn deployment(&self, fresh: &str) -> StoreResult<String> {
        let mut conn = self.conn();
        let key = self.key(&["deployment"]);
        // The first node ever to start sets it; everyone after reads that one.
        self.run(
            redis::cmd("SET")
                .arg(&key)
                .arg(fresh)
                .arg("NX")
                .query_async::<Option<String>>(&mut conn),
        )
        .await?;
        let id: Option<String> = self.run(conn.get(&key)).await?;
        id.ok_or_else(|| StoreError::Unavailable("the deployment id vanished".into()))
    }

    async fn create_player(&self, player: &PlayerRecord) -> StoreResult<()> {
        if !key_safe(&player.id) || !key_safe(&player.token_hash) {
            return Err(StoreError::Conflict(
                "malformed player id or token hash".into(),
            ));
        }
        // Two keys in two hash slots (a cluster cannot script them together): the token is
        // taken first, then the player; a taken id gives the token back.
        let mut conn = self.conn();
        let token_key = self.key(&["token", &player.token_hash]);
        let taken: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(&token_key)
                    .arg(&player.id)
                    .arg("NX")
                    .query_async(&mut conn),
            )
            .await?;
        if taken.is_none() {
            return Err(StoreError::Conflict("token hash exists".into()));
        }
        let mut inv = self.inner.scripts.create_player.prepare_invoke();
        inv.key(self.player_key(&player.id, None))
            .arg(flat(to_fields(player)?));
        let created: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        if created == 1 {
            // An identity handed out must survive a failover as a move does.
            self.replicated().await
        } else {
            let _: Result<(), _> = self.run(conn.del(&token_key)).await;
            Err(StoreError::Conflict(format!("player {} exists", player.id)))
        }
    }

    async fn restore_player(&self, player: &PlayerRecord) -> StoreResult<bool> {
        if !key_safe(&player.id) || !key_safe(&player.token_hash) {
            return Err(StoreError::Conflict(
                "malformed player id or token hash".into(),
            ));
        }
        if self.player(&player.id).await?.is_some() {
            return Ok(false);
        }
        // The token key is written without NX: a token is a random secret of this player
        // alone, and a failover may have kept its key and lost the record written after it.
        let mut conn = self.conn();
        let token_key = self.key(&["token", &player.token_hash]);
        self.run(conn.set::<_, _, ()>(&token_key, &player.id))
            .await?;
        // Not created if another call stored it meanwhile.
        let mut inv = self.inner.scripts.create_player.prepare_invoke();
        inv.key(self.player_key(&player.id, None))
            .arg(flat(to_fields(player)?));
        let _: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        self.replicated().await?;
        Ok(true)
    }

    async fn player_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<PlayerRecord>> {
        if !key_safe(token_hash) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let key = self.key(&["token", token_hash]);
        let id: Option<String> = self.run(conn.get(key)).await?;
        match id {
            Some(id) => self.player(&PlayerId::from(id)).await,
            None => Ok(None),
        }
    }

    async fn player(&self, id: &PlayerId) -> StoreResult<Option<PlayerRecord>> {
        if !key_safe(id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> =
            self.run(conn.hgetall(self.player_key(id, None))).await?;
        from_fields(fields)
    }

    async fn rename_player(&self, id: &PlayerId, name: &str) -> StoreResult<()> {
        if !key_safe(id) {
            return Err(StoreError::Conflict("malformed player id".into()));
        }
        // Fields hold JSON (see `to_fields`); players are never deleted, so the hash exists
        // once `player_by_token_hash` found it.
        let encoded =
            serde_json::to_string(name).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut conn = self.conn();
        let _: i64 = self
            .run(conn.hset(self.player_key(id, None), "name", encoded))
            .await?;
        self.replicated().await
    }

    async fn claim_account(&self, account: &AccountRecord) -> StoreResult<bool> {
        let claimed = self.claim_account_record(account).await;
        self.durable(claimed).await
    }

    async fn account(&self, name_key: &str) -> StoreResult<Option<AccountRecord>> {
        self.account_record(name_key).await
    }

    async fn set_password(&self, name_key: &str, password_hash: &str) -> StoreResult<()> {
        let set = self.set_account_password(name_key, password_hash).await;
        self.durable(set).await
    }

    async fn add_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()> {
        let added = self.add_device_record(player_id, device).await;
        self.durable(added).await
    }

    async fn seen_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()> {
        self.seen_device_record(player_id, device).await
    }

    async fn devices(&self, player_id: &PlayerId) -> StoreResult<Vec<DeviceRecord>> {
        self.device_records(player_id).await
    }

    async fn revoke_device(&self, player_id: &PlayerId, device_id: &str) -> StoreResult<bool> {
        let revoked = self.revoke_device_record(player_id, device_id).await;
        self.durable(revoked).await
    }

    async fn create_link_code(
        &self,
        code: &str,
        player: &PlayerId,
        ttl_ms: u64,
    ) -> StoreResult<bool> {
        self.create_link(code, player, ttl_ms).await
    }

    async fn take_link_code(&self, code: &str) -> StoreResult<Option<PlayerId>> {
        self.take_link(code).await
    }

    async fn add_lesson_steps(
        &self,
        player_id: &PlayerId,
        kind: &str,
        steps: &[String],
    ) -> StoreResult<()> {
        self.add_lesson_records(player_id, kind, steps).await
    }

    async fn lesson_steps(&self, player_id: &PlayerId, kinds: &[&str]) -> StoreResult<LessonSteps> {
        self.lesson_records(player_id, kinds).await
    }

    async fn save_room(&self, room: &RoomRecord) -> StoreResult<()> {
        let saved = self.store_room(room).await;
        self.durable(saved).await
    }

    async fn claim_room(&self, room: &RoomRecord) -> StoreResult<bool> {
        let claimed = self.claim_and_index_room(room).await;
        self.durable(claimed).await
    }

    async fn room(&self, code: &RoomCode) -> StoreResult<Option<RoomRecord>> {
        self.room_record(code).await
    }

    async fn save_arena(
        &self,
        id: &ArenaId,
        version: u64,
        open: bool,
        state: &serde_json::Value,
    ) -> StoreResult<bool> {
        self.save_arena_state(id, version, open, state).await
    }

    async fn arena(&self, id: &ArenaId) -> StoreResult<Option<(u64, serde_json::Value)>> {
        self.arena_state(id).await
    }

    async fn open_arenas(&self) -> StoreResult<Vec<ArenaId>> {
        self.open_arena_ids().await
    }

    async fn create_game(&self, game: &GameRecord) -> StoreResult<()> {
        if !key_safe(&game.id) || game.players.iter().any(|p| !key_safe(&p.id)) {
            return Err(StoreError::Conflict("malformed game or player id".into()));
        }
        let mut conn = self.conn();
        // The indexes live in other hash slots, so the writes are not one transaction. Their
        // order leaves a crash in between repairable by whoever takes the game's lease next
        // ([`Store::repair_unfinished`]): recovery finds every game through this index, so it
        // comes first (an entry without a record is dropped); the players' lists come after
        // the record (they are rebuilt from it).
        let unfinished = self.key(&["games", "unfinished"]);
        let fields = flat(to_fields(game)?);
        let mut inv = self.inner.scripts.create_game.prepare_invoke();
        inv.key(self.game_key(&game.id)).arg(fields);
        let exists: bool = self.run(conn.exists(self.game_key(&game.id))).await?;
        if exists {
            return Err(StoreError::Conflict(format!("game {} exists", game.id)));
        }
        self.run(conn.zadd::<_, _, _, ()>(&unfinished, &game.id, game.created_ms))
            .await?;
        let created: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        if created != 1 {
            return Err(StoreError::Conflict(format!("game {} exists", game.id)));
        }
        self.list_unfinished_for_players(game).await?;
        // Its players are told it started only once a promotion cannot lose it.
        self.replicated().await
    }

    async fn game(&self, id: &GameId) -> StoreResult<Option<GameRecord>> {
        if !key_safe(id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self.run(conn.hgetall(self.game_key(id))).await?;
        from_fields(fields)
    }

    async fn append_action(&self, game_id: &GameId, action: &Arc<ActionRecord>) -> StoreResult<()> {
        if !key_safe(game_id) {
            return Err(StoreError::Conflict(format!("no game {game_id}")));
        }
        let r = self.append_script(game_id, action).await?;
        match r {
            1 | 2 => Ok(()),
            -1 => Err(StoreError::Conflict(format!("no game {game_id}"))),
            -3 => Err(StoreError::NotOwner(game_id.to_string())),
            _ => Err(StoreError::Conflict(format!(
                "action seq {} does not follow the last logged one",
                action.seq
            ))),
        }
    }

    async fn actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>> {
        if !key_safe(game_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let entries: Vec<String> = self.run(conn.lrange(self.log_key(game_id), 0, -1)).await?;
        entries.iter().map(|e| decode(e)).collect()
    }

    async fn replicated_actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>> {
        match self.waits_for_replicas() && key_safe(game_id) {
            true => self.actions_waited(game_id).await,
            false => self.actions(game_id).await,
        }
    }

    async fn last_action(&self, game_id: &GameId) -> StoreResult<Option<ActionRecord>> {
        if !key_safe(game_id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let last: Option<String> = self.run(conn.lindex(self.log_key(game_id), -1)).await?;
        last.as_deref().map(decode).transpose()
    }

    async fn finish_game(&self, game_id: &GameId, finished: FinishedGame) -> StoreResult<()> {
        let Some(game) = self.game(game_id).await? else {
            return Err(StoreError::Conflict(format!("no game {game_id}")));
        };
        let now = if finished.ended_ms > 0 {
            finished.ended_ms
        } else {
            ids::now_ms()
        };
        let mut pipe = redis::pipe();
        pipe.set(self.final_key(game_id), encode(&finished)?)
            .ignore()
            .zrem(self.key(&["games", "unfinished"]), game_id)
            .ignore()
            .cmd("ZADD")
            .arg(self.key(&["games", "finished"]))
            .arg("NX")
            .arg(now)
            .arg(game_id)
            .ignore();
        for p in &game.players {
            pipe.zrem(self.player_key(&p.id, Some("unfinished")), game_id)
                .ignore()
                .cmd("ZADD")
                .arg(self.player_key(&p.id, Some("finished")))
                .arg("NX")
                .arg(now)
                .arg(game_id)
                .ignore();
        }
        if let Some(keep) = self.inner.finished_retention {
            // The game's own keys expire by themselves; the indexes are trimmed as they are
            // read (`finished_games_of`).
            let ms = keep.as_millis().max(1) as u64;
            for key in [
                self.final_key(game_id),
                self.game_key(game_id),
                self.log_key(game_id),
            ] {
                pipe.cmd("PEXPIRE").arg(key).arg(ms).ignore();
            }
        }
        self.run_writes(pipe).await?;
        self.replicated().await
    }

    async fn finished_games_of(
        &self,
        player_id: &PlayerId,
        before_ms: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(GameId, u64)>> {
        if !key_safe(player_id) || limit == 0 {
            return Ok(Vec::new());
        }
        let key = self.player_key(player_id, Some("finished"));
        let mut conn = self.conn();
        if let Some(keep) = self.inner.finished_retention {
            let horizon = ids::now_ms().saturating_sub(keep.as_millis() as u64);
            let _: i64 = self
                .run(
                    redis::cmd("ZREMRANGEBYSCORE")
                        .arg(&key)
                        .arg("-inf")
                        .arg(format!("({horizon}"))
                        .query_async(&mut conn),
                )
                .await?;
        }
        let max = before_ms.map_or("+inf".to_string(), |b| format!("({b}"));
        let rows: Vec<(String, f64)> = self
            .run(
                redis::cmd("ZREVRANGEBYSCORE")
                    .arg(&key)
                    .arg(max)
                    .arg("-inf")
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(limit)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, at)| (GameId::from(id), at as u64))
            .collect())
    }

    async fn finished_game(&self, game_id: &GameId) -> StoreResult<Option<FinishedGame>> {
        if !key_safe(game_id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let text: Option<String> = self.run(conn.get(self.final_key(game_id))).await?;
        text.as_deref().map(decode).transpose()
    }

    async fn unfinished_games(&self, player_id: &PlayerId) -> StoreResult<Vec<GameId>> {
        if !key_safe(player_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        self.run(conn.zrange(self.player_key(player_id, Some("unfinished")), 0, -1))
            .await
    }

    async fn repair_unfinished(
        &self,
        game_id: &GameId,
        record: Option<&GameRecord>,
    ) -> StoreResult<()> {
        if !key_safe(game_id) {
            return Ok(());
        }
        let mut conn = self.conn();
        match record {
            Some(game) => self.list_unfinished_for_players(game).await?,
            None => {
                let unfinished = self.key(&["games", "unfinished"]);
                self.run(conn.zrem::<_, _, ()>(&unfinished, game_id))
                    .await?;
            }
        }
        Ok(())
    }

    async fn all_unfinished_games(&self) -> StoreResult<Vec<GameId>> {
        let mut conn = self.conn();
        self.run(conn.zrange(self.key(&["games", "unfinished"]), 0, -1))
            .await
    }

    async fn ratings(&self, player_id: &PlayerId) -> StoreResult<RatingsByKind> {
        self.rating_records(player_id).await
    }

    async fn save_ratings(&self, kind: &str, ratings: &[(String, Rating)]) -> StoreResult<()> {
        let saved = self.save_rating_records(kind, ratings).await;
        self.durable(saved).await
    }

    async fn leaderboard(&self, kind: &str, limit: usize) -> StoreResult<Vec<(String, Rating)>> {
        self.leaderboard_rows(kind, limit).await
    }

    async fn waiting_rooms(&self) -> StoreResult<Vec<RoomRecord>> {
        self.waiting_room_records().await
    }

    async fn request_analysis(
        &self,
        game_id: &GameId,
        player_id: &PlayerId,
    ) -> StoreResult<AnalysisRequested> {
        self.request_analysis_job(game_id, player_id).await
    }

    async fn analysis(&self, game_id: &GameId) -> StoreResult<Option<AnalysisEntry>> {
        self.analysis_entry(game_id).await
    }

    async fn analysis_workers_seen(&self) -> StoreResult<u64> {
        self.analysis_seen().await
    }

    async fn take_analysis_job(
        &self,
        lease: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<Option<GameId>> {
        self.take_analysis(lease, now_ms, lease_ms).await
    }

    async fn keep_analysis_leases(
        &self,
        leases: &[(GameId, String)],
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<()> {
        self.keep_analysis(leases, now_ms, lease_ms).await
    }

    async fn release_analysis_job(&self, game_id: &GameId, lease: &str) -> StoreResult<bool> {
        self.release_analysis(game_id, lease).await
    }

    async fn complete_analysis(
        &self,
        game_id: &GameId,
        lease: &str,
        result: &serde_json::Value,
    ) -> StoreResult<bool> {
        self.complete_analysis_job(game_id, lease, result).await
    }
}
