//! The composition root: builds a node — store, registries, the single node or the cluster
//! as its topology, the services, the HTTP edge — wires them, and runs it until shutdown.
//!
//! Why one place: every other module takes the handles it needs; only this one knows how
//! they fit together, and only this one names the cluster. The cluster's requests to the
//! services ([`ClusterEvent`]) arrive here, through [`route`], instead of through a pointer
//! from the cluster back into the services.
//!
//! Shutdown order: stop accepting, tell every connection (a `shutdown` message and a close
//! frame 1001), let their writers flush within the grace period, then return.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::cluster::{Cluster, ClusterEvent};
use crate::config::Config;
use crate::game::capabilities::Peers;
use crate::ids;
use crate::ids::GameId;
use crate::services::analysis::keys::WorkerKeys;
use crate::services::analysis::{Analysis, AnalysisSettings};
use crate::services::hub::Hub;
use crate::services::registries::Registries;
use crate::services::topology::{SingleNode, Topology};
use crate::store::memory::MemoryStore;
use crate::store::redis::{Failover, RedisOptions, RedisStore, Replication, SentinelOptions};
use crate::store::Store;

/// Handles the cluster's requests to this node's services until the node stops. Each runs
/// in its own task: a takeover reading a long log must not hold up a game start.
async fn route(mut events: mpsc::UnboundedReceiver<ClusterEvent>, hub: Arc<Hub>) {
    while let Some(event) = events.recv().await {
        let event = match event {
            // In the order heard, so not in a task of its own: it only adds to a list.
            ClusterEvent::RoomLine { code, line } => {
                hub.room_chats.heard(code, line);
                continue;
            }
            other => other,
        };
        let hub = hub.clone();
        tokio::spawn(async move {
            match event {
                ClusterEvent::Started { game, done } => {
                    started_elsewhere(&hub, game).await;
                    let _ = done.send(());
                }
                ClusterEvent::RoomLine { .. } => {}
                ClusterEvent::TakeOver { game, done } => {
                    let taken = match hub.recovery.take_over(&GameId::from(game.as_str())).await {
                        Ok(()) => true,
                        Err(e) => {
                            tracing::error!(game = %game, error = %e, "takeover failed");
                            false
                        }
                    };
                    let _ = done.send(taken);
                }
            }
        });
    }
}

/// A game started on another node: its room (if it waited here) no longer waits, and its
/// players connected here are told and subscribed, through a follower of the game.
async fn started_elsewhere(hub: &Hub, started: crate::services::topology::StartedGame) {
    if let Some(code) = &started.room {
        hub.rooms.started(code, &started.game);
    }
    let here: Vec<usize> = (0..2)
        .filter(|&i| !hub.players.connections(&started.players[i]).is_empty())
        .collect();
    if here.is_empty() {
        return;
    }
    let Ok(Some(handle)) = hub.game(&started.game).await else {
        return;
    };
    for i in here {
        for conn in hub.players.connections(&started.players[i]) {
            hub.announce_to(&handle, &started.side_names[i], &conn)
                .await;
        }
    }
}

/// Runs the server until `shutdown` resolves, over Redis when `--redis` is given and in
/// memory otherwise.
pub async fn run(
    mut config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if config.cluster && config.node_id.is_none() {
        config.node_id = Some(ids::node_id());
    }
    check_failover_options(&mut config)?;
    let mut cluster_store = None;
    let store: Arc<dyn Store> = match redis_target(&config) {
        Some(target) => {
            let store = redis_store(&config, target).await?;
            tracing::info!(prefix = %config.redis_prefix, "persistence: redis");
            if config.cluster {
                cluster_store = Some(store.clone());
            }
            Arc::new(store)
        }
        None => {
            tracing::info!("persistence: off (in memory; nothing survives a restart)");
            Arc::new(MemoryStore::keeping(config.keep_finished))
        }
    };
    let cluster = cluster_store.map(|store| {
        let node = config.node_id.clone().unwrap_or_else(ids::node_id);
        // The bus lives on one Redis server (the first seed of a Redis Cluster, whose
        // classic pub/sub reaches every node's subscribers anyway; with Sentinel, the
        // primary, wherever it is: no URL then).
        let urls = config.redis.clone().unwrap_or_default();
        let url = urls
            .split(',')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        ClusterSetup { node, store, url }
    });
    serve(config, store, cluster, shutdown).await
}

/// The Sentinel and replica options against the others they cannot go with (checked here
/// rather than by clap: an env file lists every variable, those off included).
fn check_failover_options(config: &mut Config) -> std::io::Result<()> {
    if config
        .redis_sentinel
        .as_deref()
        .is_some_and(|s| s.trim().is_empty())
    {
        config.redis_sentinel = None;
    }
    let refuse = |msg: &str| Err(std::io::Error::other(msg.to_string()));
    if config.redis_sentinel.is_some() && config.redis_cluster {
        return refuse("--redis-sentinel cannot be used with --redis-cluster");
    }
    if config.redis_min_replicas > 0 && config.redis_cluster {
        return refuse("--redis-min-replicas cannot be used with --redis-cluster");
    }
    Ok(())
}

/// Where Redis is: a URL (`--redis`), or the Sentinels to ask for the primary
/// (`--redis-sentinel`); `None` keeps everything in memory.
fn redis_target(config: &Config) -> Option<String> {
    match &config.redis_sentinel {
        Some(sentinels) => Some(format!("sentinel {sentinels}")),
        None => config.redis.as_ref().map(|url| redact(url)),
    }
}

/// Connects the Redis store the configuration names (`target`: where, for messages).
async fn redis_store(config: &Config, target: String) -> std::io::Result<RedisStore> {
    let options = RedisOptions {
        url: config.redis.clone().unwrap_or_default(),
        prefix: config.redis_prefix.clone(),
        timeout: Duration::from_millis(config.redis_timeout_ms.max(1)),
        fence: config.node_id.clone().filter(|_| config.cluster),
        redis_cluster: config.redis_cluster,
        finished_retention: (config.finished_retention_days > 0)
            .then(|| Duration::from_secs(config.finished_retention_days * 86_400)),
    };
    let failover = Failover {
        sentinel: config.redis_sentinel.as_ref().map(|list| SentinelOptions {
            sentinels: list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            master: config.redis_sentinel_master.clone(),
        }),
        replication: Replication {
            min_replicas: config.redis_min_replicas,
            wait: Duration::from_millis(config.redis_wait_ms.max(1)),
        },
    };
    tracing::info!(url = %target, "connecting to Redis");
    let check = match config.redis_sentinel {
        Some(_) => "--redis-sentinel / --redis-sentinel-master",
        None => "--redis / REDIS_URL",
    };
    RedisStore::connect_with(options, failover)
        .await
        .map_err(|e| {
            std::io::Error::other(format!(
                "cannot use Redis at {target}: {e} (is it running and reachable? check {check})"
            ))
        })
}

/// A file option's path; an empty value is unset (an env file lists the variable empty).
fn named(path: &Option<String>) -> Option<&std::path::Path> {
    path.as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(std::path::Path::new)
}

/// The operators and the word filter the configuration names (a file that cannot be read
/// stops the server with the reason: an operator who named one expects it to hold).
fn moderation(config: &Config) -> std::io::Result<crate::services::moderation::Moderation> {
    use crate::services::moderation::{Moderation, Operators, WordFilter};
    let operators = match named(&config.admin_file) {
        Some(path) => Operators::load(path).map_err(std::io::Error::other)?,
        None => Operators::default(),
    };
    let words = match named(&config.word_filter) {
        Some(path) => WordFilter::load(path).map_err(std::io::Error::other)?,
        None => WordFilter::default(),
    };
    Ok(Moderation::new(operators, words))
}

/// How this node runs its analysis workers: the lease, and the workers' keys when
/// `--analysis-keys` names a file (one that cannot be read stops the server with the
/// reason; the keys themselves are never said). An empty name is no file.
fn analysis_settings(config: &Config) -> std::io::Result<AnalysisSettings> {
    let file = config.analysis_keys.as_deref();
    let keys = match file.filter(|p| !p.is_empty()) {
        Some(path) => {
            let keys = WorkerKeys::load(path.as_ref()).map_err(std::io::Error::other)?;
            tracing::info!(keys = keys.len(), "analysis workers need a key");
            keys
        }
        None => WorkerKeys::default(),
    };
    Ok(AnalysisSettings {
        lease: Duration::from_millis(config.analysis_lease_ms.max(1)),
        keys,
    })
}

/// A Redis URL without its password, for logs and messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// Runs the server over a given store until `shutdown` resolves. Prints
/// `stoa-server listening on ADDR` on stdout once bound (tests and scripts read it).
pub async fn run_with_store(
    config: Config,
    store: Arc<dyn Store>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve(config, store, None, shutdown).await
}

/// How this node joins a cluster (`--cluster`).
struct ClusterSetup {
    node: String,
    store: RedisStore,
    url: String,
}

/// Runs the server, as one node of a cluster when `cluster` is given.
async fn serve(
    config: Config,
    store: Arc<dyn Store>,
    cluster: Option<ClusterSetup>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = bind(&config).await?;
    let addr = listener.local_addr()?;
    let grace = Duration::from_millis(config.shutdown_grace_ms);
    let (stop_tx, stop_rx) = watch::channel(false);
    let registries = Registries::new(&config);
    let (events_tx, events) = mpsc::unbounded_channel();
    let cluster = match cluster {
        Some(setup) => Some(join(setup, &config, &registries, events_tx, &stop_rx).await?),
        None => None,
    };
    let (topology, peers): (Arc<dyn Topology>, Arc<dyn Peers>) = match &cluster {
        Some(c) => (c.clone(), c.clone()),
        None => {
            let single = Arc::new(SingleNode::new(registries.queues.clone()));
            (single.clone(), single)
        }
    };
    let moderation = moderation(&config)?;
    let analysis = analysis_settings(&config)?;
    let mut hub = Hub::assemble(config, store, stop_rx, registries, topology, peers);
    hub.analysis = Analysis::start_with(hub.store.clone(), analysis);
    hub.moderation = Arc::new(moderation);
    // The deployment's id, kept with the data: the same on every node and across restarts.
    hub.deployment = hub
        .store
        .deployment(&hub.deployment)
        .await
        .map_err(|e| std::io::Error::other(format!("cannot read the deployment id: {e}")))?;
    tracing::info!(deployment = %hub.deployment, "deployment");
    let hub = Arc::new(hub);
    tokio::spawn(route(events, hub.clone()));
    if let Some(cluster) = &cluster {
        cluster.start().await.map_err(|e| {
            std::io::Error::other(format!("cannot join the cluster over Redis: {e}"))
        })?;
    }
    hub.matchmaking.clone().spawn();
    // Arenas first, so that a game recovery ends finds its arena to score it.
    hub.arenas
        .discover()
        .await
        .map_err(|e| std::io::Error::other(format!("cannot read the arenas: {e}")))?;
    // Unfinished games are back before anyone can connect.
    hub.recovery
        .recover()
        .await
        .map_err(|e| std::io::Error::other(format!("recovery failed: {e}")))?;
    // Sanctions hold before anyone can connect (a banned player's first `hello` too).
    if let Err(e) = crate::services::moderator::reload(&hub).await {
        tracing::warn!(error = %e, "cannot read the sanctions yet; trying again");
    }
    crate::services::moderator::watch(hub.clone());
    let (guard, mut guards_done) = mpsc::channel::<()>(1);
    let app = crate::net::app::router(hub.clone(), guard);
    tokio::spawn(hub.lobby.clone().run());
    println!("stoa-server listening on {addr}");
    tracing::info!(%addr, "listening");
    let limits = limits(&hub.config);
    tracing::info!(
        max_connections = limits.max_connections,
        max_per_ip = limits.max_per_ip,
        "connection limits"
    );
    let leaving = cluster.clone();
    let signal = tokio::spawn(async move {
        shutdown.await;
        tracing::info!("shutting down: no new connections, notifying clients");
        let _ = stop_tx.send(true);
        if let Some(cluster) = leaving {
            // The other nodes take this node's games over now, their clocks running on.
            cluster.release_all().await;
        }
        stop_tx
    });
    crate::net::listener::serve(listener, app, limits, hub.shutdown.clone(), grace).await;
    // The router (and its guard) is dropped with the server; wait for live connections to
    // flush their last frames and close.
    let _ = tokio::time::timeout(grace + Duration::from_secs(1), guards_done.recv()).await;
    drop(signal);
    tracing::info!("stopped");
    Ok(())
}

/// Binds the listening socket, with a hint for the usual mistakes.
async fn bind(config: &Config) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => {
                    "another process uses it: stop it or choose another --listen / STOA_LISTEN"
                }
                std::io::ErrorKind::PermissionDenied => {
                    "ports below 1024 need privileges: choose a higher port"
                }
                _ => "check --listen / STOA_LISTEN",
            };
            std::io::Error::new(
                e.kind(),
                format!("cannot listen on {}: {e} ({hint})", config.listen),
            )
        })
}

/// This node as a member of the cluster (not started yet: the services come first).
async fn join(
    setup: ClusterSetup,
    config: &Config,
    registries: &Registries,
    events: mpsc::UnboundedSender<ClusterEvent>,
    shutdown: &watch::Receiver<bool>,
) -> std::io::Result<Arc<Cluster>> {
    let cluster = Cluster::new(
        setup.node,
        setup.store,
        &setup.url,
        config.lease_ms,
        registries.clone(),
        events,
        shutdown.clone(),
    )
    .await
    .map_err(std::io::Error::other)?;
    Ok(Arc::new(cluster))
}

/// The listener's limits from the configuration.
fn limits(config: &Config) -> crate::net::listener::Limits {
    let max_connections = crate::net::listener::connection_cap(config.max_connections);
    crate::net::listener::Limits {
        header_timeout: Duration::from_millis(config.header_timeout_ms.max(1)),
        max_connections,
        // Behind a proxy every socket comes from the proxy: the per-IP count at the
        // socket would throttle everyone (the per-IP limit on upgrades still applies,
        // with the client address the proxy reports). Otherwise one address may hold at
        // most a quarter of the sockets, whatever the flag says, so it cannot fill them.
        max_per_ip: if config.trust_proxy {
            usize::MAX
        } else {
            crate::net::listener::per_ip_cap(config.max_connections_per_ip, max_connections)
        },
        send_buffer: config.socket_send_buffer,
    }
}
