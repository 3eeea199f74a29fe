//! Server configuration: every listen address, timeout and limit, from flags or environment.
//!
//! Why one struct: the whole server reads its limits from here, so tests can start the real
//! binary with tight or loose limits, and operators can set them by environment in a unit
//! file or container without a rebuild.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

/// Command-line configuration; every flag also reads an environment variable.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "stoa-server",
    version,
    about = "Stoa game server: websocket at /ws, GET /health, GET /metrics, GET /api/games/{id}",
    // Where Redis is: a URL, or the Sentinels that name the primary (`--cluster` needs one).
    group(clap::ArgGroup::new("redis_store").args(["redis", "redis_sentinel"]).multiple(true))
)]
pub struct Config {
    /// Address to listen on (use port 0 for a free port; the bound address is printed on
    /// stdout as `stoa-server listening on ADDR`).
    #[arg(long, env = "STOA_LISTEN", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,

    /// Threads that run the server's tasks (default: the cores this process may use). With
    /// one, a single thread runs every task and polls the sockets itself, without the
    /// multi-threaded scheduler's work stealing (lower latency on one core).
    #[arg(long, env = "STOA_THREADS", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// Log format on stderr: `text` (coloured only on a terminal) or `json` (one object per
    /// line, for log collectors).
    #[arg(long, env = "STOA_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,

    /// Largest accepted inbound websocket frame/message, in bytes; larger closes with 1009.
    #[arg(long, env = "STOA_MAX_FRAME_BYTES", default_value_t = 16 * 1024)]
    pub max_frame_bytes: usize,

    /// Requests allowed per connection in one rate window (`ping` is free).
    #[arg(long, env = "STOA_RATE_LIMIT", default_value_t = 50)]
    pub rate_limit: u32,

    /// Length of the per-connection rate window, in milliseconds.
    #[arg(long, env = "STOA_RATE_WINDOW_MS", default_value_t = 10_000)]
    pub rate_window_ms: u64,

    /// A connection sending this many times the rate limit in one window is closed (1008).
    #[arg(long, env = "STOA_RATE_CLOSE_FACTOR", default_value_t = 3)]
    pub rate_close_factor: u32,

    /// New websocket connections allowed per client IP in one IP window.
    #[arg(long, env = "STOA_IP_CONN_LIMIT", default_value_t = 30)]
    pub ip_conn_limit: u32,

    /// Length of the per-IP connection window, in milliseconds.
    #[arg(long, env = "STOA_IP_WINDOW_MS", default_value_t = 10_000)]
    pub ip_window_ms: u64,

    /// Behind a reverse proxy: take the client IP for the per-IP limit from the right-most
    /// address of `X-Forwarded-For` (the one the proxy appended; or `X-Real-IP`) instead of
    /// the socket's peer, which is the proxy. Only enable it when every connection comes
    /// through a proxy that sets it.
    #[arg(long, env = "STOA_TRUST_PROXY")]
    pub trust_proxy: bool,

    /// Outbound messages queued per connection; a connection whose queue is full is
    /// disconnected (it can reconnect and resync).
    #[arg(long, env = "STOA_OUTBOUND_QUEUE", default_value_t = 512)]
    pub outbound_queue: usize,

    /// Kernel send buffer per accepted socket, in bytes (0: the OS default). Smaller
    /// buffers make a stalled reader fill its outbound queue (and be dropped) sooner.
    #[arg(long, env = "STOA_SOCKET_SEND_BUFFER", default_value_t = 0)]
    pub socket_send_buffer: usize,

    /// Commands queued per game actor.
    #[arg(long, env = "STOA_GAME_QUEUE", default_value_t = 1024)]
    pub game_queue: usize,

    /// Encoded diffs kept per game for `game.watch` with `since`.
    #[arg(long, env = "STOA_REPLAY_BUFFER", default_value_t = 256)]
    pub replay_buffer: usize,

    /// How long a player must have had no connection before the opponent may claim, in ms
    /// (or the player's remaining clock if shorter; correspondence: its remaining time).
    #[arg(long, env = "STOA_ABANDON_TIMEOUT_MS", default_value_t = 60_000)]
    pub abandon_timeout_ms: u64,

    /// How long a side may take over its first action before the game is aborted, in ms
    /// (protocol/docs/PROTOCOL.md: 30 s, or the side's initial time if shorter; correspondence: one turn).
    #[arg(long, env = "STOA_FIRST_ACTION_MS", default_value_t = 30_000)]
    pub first_action_ms: u64,

    /// How long a device link code (`link.code`) stays valid, in ms.
    #[arg(long, env = "STOA_LINK_CODE_TTL_MS", default_value_t = 300_000)]
    pub link_code_ttl_ms: u64,

    /// Sign-in attempts (`account.login`, `hello.login`) per account name in a minute,
    /// across every node of the deployment; more get `rate_limited`.
    #[arg(long, env = "STOA_LOGIN_PER_NAME", default_value_t = 5)]
    pub login_per_name: u32,

    /// Sign-in attempts per client address in a minute (several people may share one
    /// address behind a NAT, so more than per name).
    #[arg(long, env = "STOA_LOGIN_PER_IP", default_value_t = 20)]
    pub login_per_ip: u32,

    /// Spectator count changes are published at most once per this many milliseconds.
    #[arg(long, env = "STOA_SPECTATOR_BATCH_MS", default_value_t = 1_000)]
    pub spectator_batch_ms: u64,

    /// The lobby document is rebuilt (and a diff pushed if it changed) at most this often,
    /// in ms, so a busy lobby costs watchers a few diffs per second, not one per event.
    #[arg(long, env = "STOA_LOBBY_BATCH_MS", default_value_t = 300)]
    pub lobby_batch_ms: u64,

    /// A connection must send `hello` within this many milliseconds.
    #[arg(long, env = "STOA_HELLO_TIMEOUT_MS", default_value_t = 10_000)]
    pub hello_timeout_ms: u64,

    /// A player whose clock starts running is pinged for a round trip (its lag
    /// compensation) at most once per this many milliseconds. Otherwise connections are
    /// pinged only every half of `--idle-timeout-ms` (if longer), to keep them open.
    #[arg(long, env = "STOA_PING_INTERVAL_MS", default_value_t = 5_000)]
    pub ping_interval_ms: u64,

    /// A connection silent (no frame, no pong) for this long is closed, in milliseconds.
    #[arg(long, env = "STOA_IDLE_TIMEOUT_MS", default_value_t = 60_000)]
    pub idle_timeout_ms: u64,

    /// An ended game with no subscribers leaves memory after this many milliseconds (it
    /// stays readable from the store).
    #[arg(long, env = "STOA_FINISHED_LINGER_MS", default_value_t = 300_000)]
    pub finished_linger_ms: u64,

    /// Without Redis: how many finished games stay readable (records, history); the oldest
    /// go first.
    #[arg(long, env = "STOA_KEEP_FINISHED", default_value_t = 10_000)]
    pub keep_finished: usize,

    /// With Redis: how many days a finished game (its record and its place in the players'
    /// histories) is kept; 0 keeps it for good.
    #[arg(long, env = "STOA_FINISHED_RETENTION_DAYS", default_value_t = 0)]
    pub finished_retention_days: u64,

    /// A waiting room whose host has had no connection for this long closes (a reconnect
    /// within it keeps the room), in milliseconds.
    #[arg(long, env = "STOA_ROOM_HOST_GRACE_MS", default_value_t = 30_000)]
    pub room_host_grace_ms: u64,

    /// How many waiting rooms one player may host at once.
    #[arg(long, env = "STOA_MAX_ROOMS_PER_PLAYER", default_value_t = 5)]
    pub max_rooms_per_player: usize,

    /// A connection must send its request headers within this many milliseconds, or it is
    /// closed (slow or silent clients cannot hold sockets forever).
    #[arg(long, env = "STOA_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,

    /// Open TCP connections at most (0: the open-file limit minus a reserve); past it a new
    /// connection closes the oldest one still waiting for its request headers, or, when
    /// every one is serving a request or is a websocket, gets `503` and is closed.
    #[arg(long, env = "STOA_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,

    /// Open TCP connections at most from one client IP (counted from before any upgrade);
    /// never more than a quarter of `--max-connections`, whatever is set here. Not applied
    /// with `--trust-proxy`.
    #[arg(long, env = "STOA_MAX_CONNECTIONS_PER_IP", default_value_t = 1_000)]
    pub max_connections_per_ip: usize,

    /// On shutdown, how long to wait for connections to flush and close, in milliseconds.
    #[arg(long, env = "STOA_SHUTDOWN_GRACE_MS", default_value_t = 3_000)]
    pub shutdown_grace_ms: u64,

    /// Redis URL (`redis://host:port/db`): players, rooms and games are kept in Redis and
    /// unfinished games are reloaded on start. Without it everything lives in memory and
    /// `/health` says persistence is off.
    #[arg(long = "redis", env = "REDIS_URL")]
    pub redis: Option<String>,

    /// Prefix of every Redis key, so several deployments can share one Redis.
    #[arg(long, env = "STOA_REDIS_PREFIX", default_value = "stoa")]
    pub redis_prefix: String,

    /// Longest wait for one Redis call before the request fails with `unavailable`, in ms.
    #[arg(long, env = "STOA_REDIS_TIMEOUT_MS", default_value_t = 1_000)]
    pub redis_timeout_ms: u64,

    /// `--redis` names seed nodes of a Redis Cluster, comma-separated
    /// (`redis://10.0.0.1:7000,redis://10.0.0.2:7000`): each command goes to its key's slot.
    #[arg(long, env = "STOA_REDIS_CLUSTER", requires_if("true", "redis"))]
    pub redis_cluster: bool,

    /// Find the Redis primary through these Sentinels (`host:port,host:port`) instead of
    /// `--redis`, and follow it when Sentinel promotes a replica: a `READONLY` answer, a
    /// failed connection or a Sentinel naming another primary makes the node ask again and
    /// reconnect. Not with `--redis-cluster` (checked at start: an env file lists it
    /// switched off). Empty is unset.
    #[arg(long, env = "STOA_REDIS_SENTINEL")]
    pub redis_sentinel: Option<String>,

    /// The primary's name in the Sentinels' configuration (`sentinel monitor <name> …`).
    #[arg(long, env = "STOA_REDIS_SENTINEL_MASTER", default_value = "mymaster")]
    pub redis_sentinel_master: String,

    /// Replicas that must hold a move's write before the move is answered `ok` (Redis
    /// `WAIT`): with 1 or more, a failover to a replica that acknowledged loses no
    /// acknowledged move; a write that reached fewer in time is settled from the log like
    /// a lost answer. 0: replication is asynchronous (a failover may lose the last moves).
    #[arg(long, env = "STOA_REDIS_MIN_REPLICAS", default_value_t = 0)]
    pub redis_min_replicas: u32,

    /// Longest wait for the replicas of `--redis-min-replicas`, in ms.
    #[arg(long, env = "STOA_REDIS_WAIT_MS", default_value_t = 500)]
    pub redis_wait_ms: u64,

    /// Run as one node of several sharing this Redis (needs `--redis` or
    /// `--redis-sentinel`): each live game is owned by one node under a lease, any node
    /// serves any client, and a dead node's games are taken over by the others. Start every
    /// node of a deployment with it.
    #[arg(long, env = "STOA_CLUSTER", requires_if("true", "redis_store"))]
    pub cluster: bool,

    /// This node's name in the cluster (unique per running node; default: random).
    #[arg(long, env = "STOA_NODE_ID")]
    pub node_id: Option<String>,

    /// How long a node's ownership of a game lasts without renewal, in ms: a dead node's
    /// games move to another node within about this time. Renewed every third of it.
    #[arg(long, env = "STOA_LEASE_MS", default_value_t = 5_000)]
    pub lease_ms: u64,

    /// Analysis workers' keys (fishnet style): a file with one key per line (16 characters
    /// or more; `#` comments). With it, a worker's `analysis.serve` must carry one of them;
    /// without it any computer player may serve analysis and so write reviews into the
    /// records: a public deployment should set it. Empty is unset.
    #[arg(long, env = "STOA_ANALYSIS_KEYS")]
    pub analysis_keys: Option<String>,

    /// How long an analysis job stays leased to a worker without word from the worker's
    /// node, in ms (renewed every half second, or every third of it when shorter): when a
    /// node dies, its workers' jobs go to other workers after this.
    #[arg(long, env = "STOA_ANALYSIS_LEASE_MS", default_value_t = 60_000)]
    pub analysis_lease_ms: u64,

    /// Matchmaking: a pairing wave runs at least this often, in milliseconds (and at once
    /// when a join makes a pair possible).
    #[arg(long, env = "STOA_QUEUE_WAVE_MS", default_value_t = 1_000)]
    pub queue_wave_ms: u64,

    /// Rated matchmaking: the rating gap a player accepts right after joining.
    #[arg(long, env = "STOA_QUEUE_GAP_INITIAL", default_value_t = 100.0)]
    pub queue_gap_initial: f64,

    /// Rated matchmaking: how much the accepted gap grows at each step of waiting.
    #[arg(long, env = "STOA_QUEUE_GAP_STEP", default_value_t = 50.0)]
    pub queue_gap_step: f64,

    /// Rated matchmaking: the length of one widening step, in milliseconds.
    #[arg(long, env = "STOA_QUEUE_GAP_STEP_MS", default_value_t = 2_000)]
    pub queue_gap_step_ms: u64,

    /// Operators of the console (`/admin`, `/api/admin/…`, `stoa admin`): a file with one
    /// `<name> <token>` per line (tokens of 24 characters or more; `#` comments). Without
    /// it the console does not exist (every admin path answers `404`). Empty is unset.
    #[arg(long, env = "STOA_ADMIN_FILE")]
    pub admin_file: Option<String>,

    /// A word filter for chat: a file with one word or phrase per line (`#` comments); a
    /// chat line holding one (as a whole word, case and accents folded) is refused. Empty
    /// is unset.
    #[arg(long, env = "STOA_WORD_FILTER")]
    pub word_filter: Option<String>,

    /// Rated matchmaking: after waiting this long (ms) a player accepts any opponent, so
    /// nobody waits forever while anyone else is in the queue.
    #[arg(long, env = "STOA_QUEUE_GAP_UNLIMITED_MS", default_value_t = 30_000)]
    pub queue_gap_unlimited_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config::parse_from(["stoa-server"])
    }
}

impl Config {
    /// The rate window as a duration.
    pub fn rate_window(&self) -> Duration {
        Duration::from_millis(self.rate_window_ms)
    }
    /// The per-IP window as a duration.
    pub fn ip_window(&self) -> Duration {
        Duration::from_millis(self.ip_window_ms)
    }
    /// The abandonment timeout as a duration.
    pub fn abandon_timeout(&self) -> Duration {
        Duration::from_millis(self.abandon_timeout_ms)
    }
}
