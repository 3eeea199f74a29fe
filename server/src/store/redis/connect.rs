//! Connecting to Redis: one server or a Redis Cluster, with the reconnect policy that
//! keeps an outage short.

use super::*;
use crate::store::sentinel::Follower;

/// How the store survives a failover of Redis: following the primary through Sentinel,
/// and waiting for replicas before a move is acknowledged (both off by default).
#[derive(Clone, Debug, Default)]
pub struct Failover {
    /// Find the primary through these Sentinels (instead of `RedisOptions::url`).
    pub sentinel: Option<SentinelOptions>,
    /// Replicas each move's write must reach.
    pub replication: Replication,
}

impl RedisStore {
    /// Connects (retrying with backoff for a few seconds), starts the health task, and
    /// builds the leaderboards once for ratings saved before they were kept.
    pub async fn connect(options: RedisOptions) -> StoreResult<RedisStore> {
        RedisStore::connect_with(options, Failover::default()).await
    }

    /// [`RedisStore::connect`], following the primary and waiting for replicas as
    /// `failover` says.
    pub async fn connect_with(
        options: RedisOptions,
        failover: Failover,
    ) -> StoreResult<RedisStore> {
        let prefix = options.prefix.trim().to_string();
        if prefix.is_empty() || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(StoreError::Unavailable(
                "the redis prefix must be non-empty, without spaces".into(),
            ));
        }
        let conn = if let Some(sentinel) = failover.sentinel {
            let follower = Follower::connect(
                sentinel,
                manager_config(options.timeout),
                options.timeout,
                Duration::from_secs(10),
            )
            .await
            .map_err(|e| {
                StoreError::Unavailable(format!("no redis primary through sentinel: {e}"))
            })?;
            RedisConn::Sentinel(follower)
        } else if options.redis_cluster {
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
            let mut conn =
                ConnectionManager::new_with_config(client, manager_config(options.timeout))
                    .await
                    .map_err(|e| StoreError::Unavailable(format!("cannot reach redis: {e}")))?;
            refuse_replica(&mut conn).await?;
            RedisConn::Single(conn)
        };
        let inner = Arc::new(Inner {
            conn,
            prefix,
            timeout: options.timeout,
            up: tokio::sync::watch::Sender::new(true),
            scripts: Scripts::new(),
            fence: options.fence,
            finished_retention: options.finished_retention,
            replication: failover.replication,
            generation: std::sync::atomic::AtomicU64::new(0),
        });
        tokio::spawn(health_task(Arc::downgrade(&inner)));
        if let Some(follower) = inner.conn.follower() {
            tokio::spawn(follow_switches(Arc::downgrade(&inner), follower.switches()));
        }
        let store = RedisStore { inner };
        // The boards are a view of the ratings: a failure leaves them to fill as games are
        // rated (and is tried again at the next start), never keeps the server down.
        if let Err(e) = store.backfill_leaderboards().await {
            tracing::warn!(error = %e, "could not build the leaderboards from the stored ratings");
        }
        Ok(store)
    }
}

/// Each switch to another primary may have lost writes the old one acknowledged (its
/// replica was behind): the store's generation moves on, and every game is woken to check
/// its log (the availability watch, told even though its value did not change).
async fn follow_switches(
    inner: std::sync::Weak<Inner>,
    mut switches: tokio::sync::watch::Receiver<u64>,
) {
    while switches.changed().await.is_ok() {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        inner.new_generation();
    }
}

/// Reconnect attempts at most half a second apart: after an outage the node is back within
/// moments of Redis (games wait on it, with leases running).
fn manager_config(timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_factor(50)
        .set_exponent_base(2)
        .set_max_delay(500)
        .set_number_of_retries(6)
        .set_connection_timeout(timeout)
        .set_response_timeout(timeout)
}

/// A node given a replica's address would refuse every write (`READONLY`) while its reads
/// succeed: refused at the start with what to do instead (a demoted primary, after a
/// failover, is one). A server that does not know `ROLE` (older than Redis 2.8.12, or a
/// proxy that hides it) is taken as it is.
async fn refuse_replica(conn: &mut ConnectionManager) -> StoreResult<()> {
    let Ok(redis::Value::Array(role)) = redis::cmd("ROLE").query_async(conn).await else {
        return Ok(());
    };
    let text = |v: Option<&redis::Value>| match v {
        Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
        Some(redis::Value::SimpleString(s)) => s.clone(),
        Some(redis::Value::Int(n)) => n.to_string(),
        _ => String::new(),
    };
    if text(role.first()) != "slave" {
        return Ok(());
    }
    Err(StoreError::Unavailable(format!(
        "this Redis is a read-only replica of {}:{}; give --redis the primary's address, or \
         --redis-sentinel to find the primary and follow it through failovers",
        text(role.get(1)),
        text(role.get(2)),
    )))
}
