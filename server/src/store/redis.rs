//! The Redis store: everything that must survive a crash or restart, written so that one
//! logged move costs one round trip.
//!
//! Key layout (every key under the deployment's prefix `P`, `--redis-prefix`, so several
//! deployments share one Redis without seeing each other). Every hash field holds one JSON
//! value, so a record round-trips through serde and stays readable with `HGETALL`:
//!
//! | key | type | what |
//! |---|---|---|
//! | `P:player:{id}` | hash | a [`PlayerRecord`] (the token only as its SHA-256) |
//! | `P:token:<sha256>` | string | the player id owning that token hash |
//! | `P:player:{id}:unfinished` | sorted set | unfinished games of the player, by creation ms |
//! | `P:player:{id}:finished` | sorted set | finished games of the player, by end ms |
//! | `P:player:{id}:ratings` | hash | kind → the player's JSON `Rating` in that kind |
//! | `P:ratings:<kind>` | sorted set | players by rating in a kind (a leaderboard index) |
//! | `P:room:{code}` | hash | a [`RoomRecord`] |
//! | `P:rooms:waiting` | set | codes of rooms waiting for an opponent |
//! | `P:game:{id}` | hash | a [`GameRecord`] plus `last_seq` |
//! | `P:game:{id}:log` | list | the action log, one JSON [`ActionRecord`] per entry |
//! | `P:game:{id}:final` | string | the JSON [`FinishedGame`] once ended |
//! | `P:game:{id}:lease` | string | the node owning the live game (cluster mode, with a TTL) |
//! | `P:games:unfinished` | sorted set | every unfinished game, by creation ms (recovery) |
//! | `P:games:finished` | sorted set | every finished game, by end ms |
//! | `P:deployment` | string | the deployment's id (`welcome.deployment`), set once with `SET NX` |
//!
//! Braces are literal: `{id}` and `{code}` are Redis Cluster hash tags, so a game's keys
//! (and a player's, and a room's) live in one slot and the append script (game hash, log,
//! lease) runs on a cluster too. No script or transaction spans two records; the indexes are
//! written beside the records, one command each. The cluster mode adds `P:nodes` (sorted
//! set of heartbeats), `P:matchmaker` (the matchmaking node's lease), `P:lobby:<node>` (each
//! node's part of the lobby) and `P:ratinglock:<player>`; its pub/sub channels are
//! `P:bus:game:<id>`, `P:bus:node:<node>` and `P:bus:push`.
//!
//! Why Lua scripts: appending an action must check the seq, push the entry and raise the
//! seq reservation atomically, in one round trip; a script does all three, and Redis replays
//! it from its AOF as one unit. Why a connection manager plus a health flag: the manager
//! reconnects with exponential backoff on its own; the flag (kept by a 250 ms ping task)
//! lets calls fail at once with `unavailable` while Redis is known to be down, instead of
//! each waiting out a timeout.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, ErrorKind, RedisError, Script};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::connection::RedisConn;
use super::{
    ActionRecord, FinishedGame, GameRecord, PlayerRecord, RatingsByKind, RoomRecord, Store,
    StoreError, StoreResult,
};
use crate::ids;
use crate::rating::Rating;

/// Creates a player hash unless it exists.
/// KEYS: player hash. ARGV: field/value pairs.
const CREATE_PLAYER: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
";

/// Creates a game hash unless its id is taken.
/// KEYS: game hash. ARGV: field/value pairs.
const CREATE_GAME: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'last_seq', '0', unpack(ARGV))
return 1
";

/// Appends one action: 1 appended, 2 already the last entry (a retried write), -1 no such
/// game, -2 seq not exactly one above the last one (the check that makes the log the one
/// order of a game's changes: a writer with a stale view cannot append), -3 the writer is
/// not the node holding the game's lease (cluster mode: a node that lost its lease, paused
/// or cut off, can never write the game again).
/// KEYS: game hash, log, lease. ARGV: seq, entry, the writing node ('' outside a cluster).
const APPEND_ACTION: &str = r"
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  return -3
end
local last = redis.call('HGET', KEYS[1], 'last_seq')
if not last then
  return -1
end
local seq = tonumber(ARGV[1])
if seq ~= tonumber(last) + 1 then
  if seq == tonumber(last) and redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then
    return 2
  end
  return -2
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'last_seq', ARGV[1])
return 1
";

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

struct Scripts {
    create_player: Script,
    create_game: Script,
    append_action: Script,
    claim_room: Script,
}

/// Saves a room record only while the stored room still waits: 1 saved, 0 not (it started
/// or closed meanwhile, perhaps on another node).
/// KEYS: room hash. ARGV: field/value pairs.
const CLAIM_ROOM: &str = r#"
if redis.call('HGET', KEYS[1], 'status') ~= '"waiting"' then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#;

struct Inner {
    conn: RedisConn,
    prefix: String,
    timeout: Duration,
    /// Whether Redis answered the last call or ping.
    up: AtomicBool,
    scripts: Scripts,
    fence: Option<String>,
    finished_retention: Option<Duration>,
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

/// How often the health task pings Redis.
const PING_PERIOD: Duration = Duration::from_millis(250);

impl RedisStore {
    /// Connects (retrying with backoff for a few seconds) and starts the health task.
    pub async fn connect(options: RedisOptions) -> StoreResult<RedisStore> {
        let prefix = options.prefix.trim().to_string();
        if prefix.is_empty() || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(StoreError::Unavailable(
                "the redis prefix must be non-empty, without spaces".into(),
            ));
        }
        let conn = if options.redis_cluster {
            let seeds: Vec<&str> = options.url.split(',').map(str::trim).collect();
            let client = redis::cluster::ClusterClient::builder(seeds)
                .connection_timeout(options.timeout)
                .response_timeout(options.timeout)
                .retries(3)
                .build()
                .map_err(|e| StoreError::Unavailable(format!("bad redis cluster urls: {e}")))?;
            RedisConn::Cluster(client.get_async_connection().await.map_err(|e| {
                StoreError::Unavailable(format!("cannot reach the redis cluster: {e}"))
            })?)
        } else {
            let client = redis::Client::open(options.url.as_str())
                .map_err(|e| StoreError::Unavailable(format!("bad redis url: {e}")))?;
            // Reconnect attempts at most half a second apart: after an outage the node is
            // back within moments of Redis (games wait on it, with leases running).
            let config = ConnectionManagerConfig::new()
                .set_factor(50)
                .set_exponent_base(2)
                .set_max_delay(500)
                .set_number_of_retries(6)
                .set_connection_timeout(options.timeout)
                .set_response_timeout(options.timeout);
            RedisConn::Single(
                ConnectionManager::new_with_config(client, config)
                    .await
                    .map_err(|e| StoreError::Unavailable(format!("cannot reach redis: {e}")))?,
            )
        };
        let inner = Arc::new(Inner {
            conn,
            prefix,
            timeout: options.timeout,
            up: AtomicBool::new(true),
            scripts: Scripts {
                create_player: Script::new(CREATE_PLAYER),
                create_game: Script::new(CREATE_GAME),
                append_action: Script::new(APPEND_ACTION),
                claim_room: Script::new(CLAIM_ROOM),
            },
            fence: options.fence,
            finished_retention: options.finished_retention,
        });
        tokio::spawn(health_task(Arc::downgrade(&inner)));
        Ok(RedisStore { inner })
    }

    /// Whether Redis answered the last call or ping.
    pub fn is_up(&self) -> bool {
        self.inner.up.load(Ordering::Relaxed)
    }

    /// A key under this deployment's prefix (the cluster keeps its keys beside the store's).
    pub fn key(&self, parts: &[&str]) -> String {
        let mut k = self.inner.prefix.clone();
        for p in parts {
            k.push(':');
            k.push_str(p);
        }
        k
    }

    fn game_key(&self, id: &str) -> String {
        self.key(&["game", &format!("{{{id}}}")])
    }

    fn log_key(&self, id: &str) -> String {
        self.key(&["game", &format!("{{{id}}}"), "log"])
    }

    fn final_key(&self, id: &str) -> String {
        self.key(&["game", &format!("{{{id}}}"), "final"])
    }

    /// A player's keys (`P:player:{id}` and its sets), in the player's hash slot.
    fn player_key(&self, id: &str, suffix: Option<&str>) -> String {
        let tagged = format!("{{{id}}}");
        match suffix {
            Some(suffix) => self.key(&["player", &tagged, suffix]),
            None => self.key(&["player", &tagged]),
        }
    }

    fn room_key(&self, code: &str) -> String {
        self.key(&["room", &format!("{{{code}}}")])
    }

    /// The key holding the id of the node that owns a live game (cluster mode).
    pub fn lease_key(&self, id: &str) -> String {
        self.key(&["game", &format!("{{{id}}}"), "lease"])
    }

    /// A connection for the cluster's own commands (leases, membership).
    pub fn connection(&self) -> RedisConn {
        self.conn()
    }

    /// Runs a command with this store's timeout and outage bookkeeping.
    pub async fn call<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: std::future::Future<Output = Result<T, RedisError>>,
    {
        self.run(op).await
    }

    /// Runs one Redis operation with the timeout, failing at once while Redis is known to
    /// be down (the health task notices when it is back).
    async fn run<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: std::future::Future<Output = Result<T, RedisError>>,
    {
        if !self.is_up() {
            return Err(StoreError::Unavailable("redis is unreachable".into()));
        }
        match tokio::time::timeout(self.inner.timeout, op).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if is_outage(&e) {
                    self.mark_down(&e.to_string());
                    // Sent (or maybe sent) before the connection failed: it may have run.
                    Err(StoreError::InDoubt(e.to_string()))
                } else {
                    Err(StoreError::Unavailable(e.to_string()))
                }
            }
            Err(_) => {
                self.mark_down("timeout");
                // The command may still run: Redis executes it when it can.
                Err(StoreError::InDoubt("redis timed out".into()))
            }
        }
    }

    /// Adds a room to (or removes it from) the waiting index, which recovery and the lobby
    /// read; the room's own hash is the truth, the index may lag it by a crash.
    async fn index_room(&self, code: &str, waiting: bool) -> StoreResult<()> {
        let mut conn = self.conn();
        let key = self.key(&["rooms", "waiting"]);
        if waiting {
            self.run(conn.sadd::<_, _, ()>(&key, code)).await
        } else {
            self.run(conn.srem::<_, _, ()>(&key, code)).await
        }
    }

    async fn claim_room_record(&self, room: &RoomRecord) -> StoreResult<bool> {
        if !key_safe(&room.code) {
            return Err(StoreError::Conflict("malformed room code".into()));
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.claim_room.prepare_invoke();
        inv.key(self.room_key(&room.code))
            .arg(flat(to_fields(room)?));
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(r == 1)
    }

    /// Runs a pipeline of writes: as one transaction on a single server; on a Redis Cluster,
    /// whose transactions cannot span hash slots, command by command (each is idempotent, and
    /// the caller retries the whole on failure).
    async fn run_writes(&self, pipe: redis::Pipeline) -> StoreResult<()> {
        let mut conn = self.conn();
        if !conn.is_cluster() {
            let mut pipe = pipe;
            pipe.atomic();
            return self.run(pipe.query_async::<()>(&mut conn)).await;
        }
        for cmd in pipe.cmd_iter() {
            self.run(cmd.query_async::<()>(&mut conn)).await?;
        }
        Ok(())
    }

    fn mark_down(&self, why: &str) {
        if self.inner.up.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                reason = why,
                "redis unreachable: refusing writes until it answers"
            );
        }
    }

    fn conn(&self) -> RedisConn {
        self.inner.conn.clone()
    }
}

/// Errors that mean Redis cannot serve now (rather than a bad request or bad data).
fn is_outage(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::BusyLoadingError
                | ErrorKind::TryAgain
                | ErrorKind::MasterDown
                | ErrorKind::ReadOnly
                | ErrorKind::ClusterDown
        )
}

/// Pings Redis every [`PING_PERIOD`] and keeps the `up` flag; stops with the store.
async fn health_task(inner: Weak<Inner>) {
    loop {
        tokio::time::sleep(PING_PERIOD).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let mut conn = inner.conn.clone();
        let ping = tokio::time::timeout(
            inner.timeout,
            redis::cmd("PING").query_async::<String>(&mut conn),
        )
        .await;
        let ok = matches!(ping, Ok(Ok(_)));
        let was = inner.up.swap(ok, Ordering::Relaxed);
        if ok && !was {
            tracing::info!("redis is reachable again");
        } else if !ok && was {
            tracing::warn!("redis unreachable: refusing writes until it answers");
        }
    }
}

/// A record as hash fields, each one JSON value.
fn to_fields<T: Serialize>(record: &T) -> StoreResult<Vec<(String, String)>> {
    match serde_json::to_value(record) {
        Ok(Value::Object(m)) => Ok(m.into_iter().map(|(k, v)| (k, v.to_string())).collect()),
        Ok(_) => Err(StoreError::Corrupt("record is not an object".into())),
        Err(e) => Err(StoreError::Corrupt(e.to_string())),
    }
}

/// A record from hash fields (`None` for a missing key); unknown fields are ignored.
fn from_fields<T: DeserializeOwned>(fields: HashMap<String, String>) -> StoreResult<Option<T>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let mut m = Map::new();
    for (k, v) in fields {
        let value =
            serde_json::from_str(&v).map_err(|e| StoreError::Corrupt(format!("field {k}: {e}")))?;
        m.insert(k, value);
    }
    serde_json::from_value(Value::Object(m))
        .map(Some)
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn decode<T: DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn encode<T: Serialize>(v: &T) -> StoreResult<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Whether an id or code from a client may be part of a key (they are generated as short
/// alphanumerics; anything else cannot exist, and must not reach into other keys).
fn key_safe(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn flat(fields: Vec<(String, String)>) -> Vec<String> {
    fields.into_iter().flat_map(|(k, v)| [k, v]).collect()
}

#[async_trait]
impl Store for RedisStore {
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
            Ok(())
        } else {
            let _: Result<(), _> = self.run(conn.del(&token_key)).await;
            Err(StoreError::Conflict(format!("player {} exists", player.id)))
        }
    }

    async fn player_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<PlayerRecord>> {
        if !key_safe(token_hash) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let key = self.key(&["token", token_hash]);
        let id: Option<String> = self.run(conn.get(key)).await?;
        match id {
            Some(id) => self.player(&id).await,
            None => Ok(None),
        }
    }

    async fn player(&self, id: &str) -> StoreResult<Option<PlayerRecord>> {
        if !key_safe(id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> =
            self.run(conn.hgetall(self.player_key(id, None))).await?;
        from_fields(fields)
    }

    async fn rename_player(&self, id: &str, name: &str) -> StoreResult<()> {
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
        Ok(())
    }

    async fn save_room(&self, room: &RoomRecord) -> StoreResult<()> {
        if !key_safe(&room.code) {
            return Err(StoreError::Conflict("malformed room code".into()));
        }
        let key = self.room_key(&room.code);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .del(&key)
            .ignore()
            .hset_multiple(&key, &to_fields(room)?)
            .ignore();
        let mut conn = self.conn();
        self.run(pipe.query_async::<()>(&mut conn)).await?;
        self.index_room(&room.code, room.status == "waiting").await
    }

    async fn claim_room(&self, room: &RoomRecord) -> StoreResult<bool> {
        let claimed = self.claim_room_record(room).await?;
        if claimed {
            self.index_room(&room.code, room.status == "waiting")
                .await?;
        }
        Ok(claimed)
    }

    async fn room(&self, code: &str) -> StoreResult<Option<RoomRecord>> {
        if !key_safe(code) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self.run(conn.hgetall(self.room_key(code))).await?;
        from_fields(fields)
    }

    async fn create_game(&self, game: &GameRecord) -> StoreResult<()> {
        if !key_safe(&game.id) || game.players.iter().any(|p| !key_safe(&p.id)) {
            return Err(StoreError::Conflict("malformed game or player id".into()));
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.create_game.prepare_invoke();
        inv.key(self.game_key(&game.id)).arg(flat(to_fields(game)?));
        let created: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        if created != 1 {
            return Err(StoreError::Conflict(format!("game {} exists", game.id)));
        }
        // The indexes live in other hash slots: written after the game, each on its own. A
        // crash in between leaves a game its players are not shown (nothing was played).
        let unfinished = self.key(&["games", "unfinished"]);
        self.run(conn.zadd::<_, _, _, ()>(&unfinished, &game.id, game.created_ms))
            .await?;
        for p in &game.players {
            let key = self.player_key(&p.id, Some("unfinished"));
            self.run(conn.zadd::<_, _, _, ()>(&key, &game.id, game.created_ms))
                .await?;
        }
        Ok(())
    }

    async fn game(&self, id: &str) -> StoreResult<Option<GameRecord>> {
        if !key_safe(id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self.run(conn.hgetall(self.game_key(id))).await?;
        from_fields(fields)
    }

    async fn append_action(&self, game_id: &str, action: &ActionRecord) -> StoreResult<()> {
        if !key_safe(game_id) {
            return Err(StoreError::Conflict(format!("no game {game_id}")));
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.append_action.prepare_invoke();
        inv.key(self.game_key(game_id))
            .key(self.log_key(game_id))
            .key(self.lease_key(game_id))
            .arg(action.seq)
            .arg(encode(action)?)
            .arg(self.inner.fence.as_deref().unwrap_or(""));
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
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

    async fn actions(&self, game_id: &str) -> StoreResult<Vec<ActionRecord>> {
        if !key_safe(game_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let entries: Vec<String> = self.run(conn.lrange(self.log_key(game_id), 0, -1)).await?;
        entries.iter().map(|e| decode(e)).collect()
    }

    async fn last_action(&self, game_id: &str) -> StoreResult<Option<ActionRecord>> {
        if !key_safe(game_id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let last: Option<String> = self.run(conn.lindex(self.log_key(game_id), -1)).await?;
        last.as_deref().map(decode).transpose()
    }

    async fn finish_game(&self, game_id: &str, finished: &FinishedGame) -> StoreResult<()> {
        let Some(game) = self.game(game_id).await? else {
            return Err(StoreError::Conflict(format!("no game {game_id}")));
        };
        let now = if finished.ended_ms > 0 {
            finished.ended_ms
        } else {
            ids::now_ms()
        };
        let mut pipe = redis::pipe();
        pipe.set(self.final_key(game_id), encode(finished)?)
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
        self.run_writes(pipe).await
    }

    async fn finished_games_of(
        &self,
        player_id: &str,
        before_ms: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(String, u64)>> {
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
        Ok(rows.into_iter().map(|(id, at)| (id, at as u64)).collect())
    }

    async fn finished_game(&self, game_id: &str) -> StoreResult<Option<FinishedGame>> {
        if !key_safe(game_id) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let text: Option<String> = self.run(conn.get(self.final_key(game_id))).await?;
        text.as_deref().map(decode).transpose()
    }

    async fn unfinished_games(&self, player_id: &str) -> StoreResult<Vec<String>> {
        if !key_safe(player_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        self.run(conn.zrange(self.player_key(player_id, Some("unfinished")), 0, -1))
            .await
    }

    async fn all_unfinished_games(&self) -> StoreResult<Vec<String>> {
        let mut conn = self.conn();
        self.run(conn.zrange(self.key(&["games", "unfinished"]), 0, -1))
            .await
    }

    async fn ratings(&self, player_id: &str) -> StoreResult<RatingsByKind> {
        if !key_safe(player_id) {
            return Ok(RatingsByKind::new());
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self
            .run(conn.hgetall(self.player_key(player_id, Some("ratings"))))
            .await?;
        fields
            .into_iter()
            .map(|(kind, r)| Ok((kind, decode::<Rating>(&r)?)))
            .collect()
    }

    async fn save_ratings(&self, kind: &str, ratings: &[(String, Rating)]) -> StoreResult<()> {
        if !key_safe(kind) || ratings.iter().any(|(p, _)| !key_safe(p)) {
            return Err(StoreError::Conflict("malformed kind or player id".into()));
        }
        // One MULTI on a single server: every rating of the game is written, or none. (A
        // Redis Cluster keeps each player in its own slot: written one after the other.)
        let mut pipe = redis::pipe();
        for (player, rating) in ratings {
            pipe.hset(
                self.player_key(player, Some("ratings")),
                kind,
                encode(rating)?,
            )
            .ignore()
            .zadd(self.key(&["ratings", kind]), player, rating.rating)
            .ignore();
        }
        self.run_writes(pipe).await
    }

    async fn waiting_rooms(&self) -> StoreResult<Vec<RoomRecord>> {
        let mut conn = self.conn();
        let mut codes: Vec<String> = self
            .run(conn.smembers(self.key(&["rooms", "waiting"])))
            .await?;
        codes.sort();
        let mut all: Vec<HashMap<String, String>> = Vec::with_capacity(codes.len());
        for code in &codes {
            all.push(self.run(conn.hgetall(self.room_key(code))).await?);
        }
        let mut rooms = Vec::new();
        for fields in all {
            if let Some(room) = from_fields::<RoomRecord>(fields)? {
                if room.status == "waiting" {
                    rooms.push(room);
                }
            }
        }
        Ok(rooms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let p = PlayerRecord {
            id: "pabc".into(),
            name: "Zoë \"x\"".into(),
            token_hash: "00ff".into(),
            created_ms: 7,
            bot: false,
        };
        let fields: HashMap<String, String> = to_fields(&p).unwrap().into_iter().collect();
        assert_eq!(fields["name"], "\"Zoë \\\"x\\\"\"");
        assert_eq!(fields["created_ms"], "7");
        let back: PlayerRecord = from_fields(fields).unwrap().unwrap();
        assert_eq!(back, p);
        assert_eq!(from_fields::<PlayerRecord>(HashMap::new()).unwrap(), None);
    }

    #[test]
    fn unsafe_ids_never_reach_keys() {
        assert!(key_safe("gabc123"));
        assert!(!key_safe("g:log"));
        assert!(!key_safe(""));
        assert!(!key_safe("a b"));
        assert!(!key_safe(&"a".repeat(65)));
    }
}
