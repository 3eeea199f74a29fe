//! Following a Redis primary through Sentinel: the node asks the Sentinels where the
//! primary is, connects there, and asks again when the connection says it is no longer
//! talking to a primary (a `READONLY` answer, a failed connection, a write that reached
//! fewer replicas than asked) or when the Sentinels name another primary.
//!
//! Why our own follower rather than the `redis` crate's Sentinel client: the store needs one
//! long-lived multiplexed connection (scripts, `WAIT` on the connection that wrote) that is
//! swapped for a new one at a promotion, and a way to tell, per call, which connection it
//! went to; one `SENTINEL get-master-addr-by-name` plus a `ROLE` check is all the protocol
//! this takes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError, Value};

/// Where the Sentinels are and which primary to follow.
#[derive(Clone, Debug)]
pub struct SentinelOptions {
    /// `host:port` of each Sentinel.
    pub sentinels: Vec<String>,
    /// The monitored primary's name (`sentinel monitor <name> …`).
    pub master: String,
}

/// How often the Sentinels are asked whether the primary moved, even while every call
/// succeeds (a switchover with the old primary alive gives no error until it is demoted).
const WATCH_PERIOD: Duration = Duration::from_millis(500);
/// Pause between two rounds of asking the Sentinels during a promotion.
const RETRY_PAUSE: Duration = Duration::from_millis(200);
/// How long one search for the new primary goes on before it stops (the next suspect call
/// starts another).
const SEARCH_FOR: Duration = Duration::from_secs(60);

/// The connection to the current primary, and which one it is.
struct Current {
    /// Bumped at each switch: a failure on an older connection asks nothing again.
    generation: u64,
    /// `host:port` of the primary.
    addr: String,
    conn: ConnectionManager,
}

/// A connection that follows the primary the Sentinels name.
pub struct Follower {
    options: SentinelOptions,
    timeout: Duration,
    config: ConnectionManagerConfig,
    current: RwLock<Current>,
    searching: AtomicBool,
    /// The generation of the current connection, for whoever holds state at the primary
    /// that a switch does not carry over (the cluster bus's subscription).
    switched: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("master", &self.options.master)
            .field("addr", &self.address())
            .finish_non_exhaustive()
    }
}

impl Follower {
    /// Finds the primary (asking for up to `within`: it may be in the middle of a
    /// promotion) and connects to it; then watches the Sentinels for a switch.
    pub async fn connect(
        options: SentinelOptions,
        config: ConnectionManagerConfig,
        timeout: Duration,
        within: Duration,
    ) -> Result<Arc<Follower>, String> {
        if options.sentinels.is_empty() {
            return Err("no sentinel address given".into());
        }
        let deadline = Instant::now() + within;
        let (addr, conn) = loop {
            match find_primary(&options, &config, timeout).await {
                Ok(found) => break found,
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(RETRY_PAUSE).await,
            }
        };
        tracing::info!(primary = %addr, master = %options.master, "redis primary found through sentinel");
        let follower = Arc::new(Follower {
            options,
            timeout,
            config,
            current: RwLock::new(Current {
                generation: 0,
                addr,
                conn,
            }),
            searching: AtomicBool::new(false),
            switched: tokio::sync::watch::Sender::new(0),
        });
        tokio::spawn(watch(Arc::downgrade(&follower)));
        Ok(follower)
    }

    /// The connection to the current primary and its generation.
    pub fn current(&self) -> (u64, ConnectionManager) {
        let c = self.current.read().unwrap_or_else(|e| e.into_inner());
        (c.generation, c.conn.clone())
    }

    /// Changes at each switch to another connection: a subscription held at the old
    /// primary must be made again at the new one (a demoted primary still passes on what
    /// is published at the new one while it replicates, but `PUBLISH` there counts only the
    /// new primary's subscribers).
    pub fn switches(&self) -> tokio::sync::watch::Receiver<u64> {
        self.switched.subscribe()
    }

    /// `host:port` of the current primary.
    pub fn address(&self) -> String {
        let c = self.current.read().unwrap_or_else(|e| e.into_inner());
        c.addr.clone()
    }

    /// The connection of `generation` failed as a primary would not: search for the
    /// primary (once at a time; a failure of an older connection asks nothing).
    pub fn suspect(self: &Arc<Self>, generation: u64) {
        if self.current().0 != generation || self.searching.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::spawn(self.clone().search(generation));
    }

    /// Asks the Sentinels until they name a primary that says it is one, and switches to
    /// it (a new connection even when it is the same address: the old one failed).
    async fn search(self: Arc<Self>, generation: u64) {
        let deadline = Instant::now() + SEARCH_FOR;
        loop {
            match find_primary(&self.options, &self.config, self.timeout).await {
                Ok((addr, conn)) => {
                    self.switch(generation, addr, conn);
                    break;
                }
                Err(e) if Instant::now() >= deadline => {
                    tracing::warn!(error = %e, "no redis primary found through sentinel yet");
                    break;
                }
                Err(_) => tokio::time::sleep(RETRY_PAUSE).await,
            }
        }
        self.searching.store(false, Ordering::Release);
    }

    fn switch(&self, generation: u64, addr: String, conn: ConnectionManager) {
        let mut c = self.current.write().unwrap_or_else(|e| e.into_inner());
        if c.generation != generation {
            return;
        }
        if c.addr != addr {
            tracing::warn!(from = %c.addr, to = %addr, "redis primary moved: following it");
        }
        c.generation += 1;
        c.addr = addr;
        c.conn = conn;
        self.switched.send_replace(c.generation);
    }
}

/// Whether an error says this connection no longer reaches a writable primary.
pub fn lost_primary(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(e.kind(), ErrorKind::ReadOnly | ErrorKind::MasterDown)
}

/// Every [`WATCH_PERIOD`], asks the Sentinels where the primary is: a different answer
/// starts a switch. Stops with the follower.
async fn watch(follower: Weak<Follower>) {
    loop {
        tokio::time::sleep(WATCH_PERIOD).await;
        let Some(f) = follower.upgrade() else {
            return;
        };
        let (generation, _) = f.current();
        if let Ok(addr) = ask_sentinels(&f.options, f.timeout).await {
            if addr != f.address() {
                f.suspect(generation);
            }
        }
    }
}

/// The primary the Sentinels name, connected and checked with `ROLE`.
async fn find_primary(
    options: &SentinelOptions,
    config: &ConnectionManagerConfig,
    timeout: Duration,
) -> Result<(String, ConnectionManager), String> {
    let addr = ask_sentinels(options, timeout).await?;
    let client = redis::Client::open(format!("redis://{addr}/"))
        .map_err(|e| format!("bad primary address {addr}: {e}"))?;
    // One plain attempt first: a manager would retry a dead address for seconds, while
    // the Sentinels may name the promoted replica in a moment.
    let role = async {
        let mut probe = client.get_multiplexed_async_connection().await?;
        redis::cmd("ROLE").query_async::<Value>(&mut probe).await
    };
    let role = tokio::time::timeout(timeout, role)
        .await
        .map_err(|_| format!("{addr} did not answer ROLE"))?
        .map_err(|e| format!("{addr} did not answer ROLE: {e}"))?;
    let primary = matches!(&role, Value::Array(items)
        if matches!(items.first(), Some(Value::BulkString(r)) if r == b"master"));
    if !primary {
        return Err(format!("{addr} is not a primary (yet)"));
    }
    let conn = ConnectionManager::new_with_config(client, config.clone())
        .await
        .map_err(|e| format!("cannot reach the primary {addr}: {e}"))?;
    Ok((addr, conn))
}

/// `host:port` of the primary, from the first Sentinel that knows it.
async fn ask_sentinels(options: &SentinelOptions, timeout: Duration) -> Result<String, String> {
    let mut last = String::from("no sentinel answered");
    for s in &options.sentinels {
        match ask_one(s, &options.master, timeout).await {
            Ok(Some(addr)) => return Ok(addr),
            Ok(None) => last = format!("sentinel {s} does not know '{}'", options.master),
            Err(e) => last = format!("sentinel {s}: {e}"),
        }
    }
    Err(last)
}

/// One Sentinel's `SENTINEL get-master-addr-by-name`.
async fn ask_one(
    sentinel: &str,
    master: &str,
    timeout: Duration,
) -> Result<Option<String>, String> {
    let client = redis::Client::open(format!("redis://{sentinel}/")).map_err(|e| e.to_string())?;
    let ask = async {
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(master)
            .query_async::<Option<(String, u16)>>(&mut conn)
            .await
    };
    match tokio::time::timeout(timeout, ask).await {
        Ok(Ok(found)) => Ok(found.map(|(host, port)| format!("{host}:{port}"))),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timed out".into()),
    }
}
