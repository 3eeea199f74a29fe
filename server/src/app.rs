//! The HTTP edge: router, handlers, listener, and graceful shutdown.
//!
//! Why here: everything that touches HTTP (upgrade, health, metrics, the game API) and the
//! server's lifecycle lives in one file; the protocol itself lives in the session and actors.
//! Shutdown order: stop accepting, tell every connection (a `shutdown` message and a close
//! frame 1001), let their writers flush within the grace period, then return.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Path, Query, State, WebSocketUpgrade};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use stoa_protocol::wire::Visibility;
use tokio::sync::{mpsc, oneshot, watch};

use crate::config::Config;
use crate::connection::{self, ConnGuard};
use crate::game::Command;
use crate::hub::Hub;
use crate::ids;
use crate::metrics::Metrics;
use crate::recovery;
use crate::store::memory::MemoryStore;
use crate::store::redis::{RedisOptions, RedisStore};
use crate::store::Store;

#[derive(Clone)]
struct AppState {
    hub: Arc<Hub>,
    guard: ConnGuard,
}

/// The router over a hub.
fn router(hub: Arc<Hub>, guard: ConnGuard) -> Router {
    Router::new()
        .route("/ws", get(ws_upgrade))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/games/{id}", get(api_game))
        .route("/api/kinds/{kind}", get(api_kind))
        .with_state(AppState { hub, guard })
}

/// The client address for per-IP limits: the socket peer, or with `--trust-proxy` the
/// address the proxy reports: the right-most of `X-Forwarded-For` (what the proxy itself
/// appended), else `X-Real-IP`.
fn client_ip(peer: SocketAddr, headers: &HeaderMap, trust_proxy: bool) -> IpAddr {
    if trust_proxy {
        let forwarded = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            // The right-most address is the one the trusted proxy appended (the peer it
            // saw); anything left of it came from the client and may be made up.
            .and_then(|v| v.rsplit(',').next())
            .or_else(|| headers.get("x-real-ip").and_then(|v| v.to_str().ok()));
        if let Some(ip) = forwarded.and_then(|v| v.trim().parse().ok()) {
            return ip;
        }
    }
    peer.ip()
}

/// Bytes read from a socket at a time. tungstenite's default (128 KiB) is allocated and
/// zero-filled on a connection's first read and kept for its life: most of an idle
/// connection's memory. Requests are small JSON objects; a larger frame (up to the 16 KiB
/// limit) just takes a few reads.
const READ_BUFFER: usize = 4 * 1024;

/// Frames are buffered up to this many bytes before a write; the writer flushes after
/// everything queued (see `connection`), so a burst of frames is one write.
const WRITE_BUFFER: usize = 16 * 1024;

async fn ws_upgrade(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let hub = state.hub.clone();
    if *hub.shutdown.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    }
    let ip = client_ip(peer, &headers, hub.config.trust_proxy);
    let allowed = hub.ip_limiter.allow(ip, Instant::now())
        && match &hub.cluster {
            // In a cluster the window is counted in Redis too: a client spreading its
            // connections over the nodes meets the same limit.
            Some(cluster) => {
                cluster
                    .allow_ip(ip, hub.config.ip_conn_limit, hub.config.ip_window_ms)
                    .await
            }
            None => true,
        };
    if !allowed {
        Metrics::inc(&hub.metrics.connections_refused);
        tracing::info!(%ip, "new connection refused: per-IP limit");
        return (StatusCode::TOO_MANY_REQUESTS, "too many new connections").into_response();
    }
    let max = hub.config.max_frame_bytes;
    let guard = state.guard.clone();
    ws.max_frame_size(max)
        .max_message_size(max)
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .on_upgrade(move |socket| connection::serve(hub, socket, peer, guard))
}

async fn health(State(state): State<AppState>) -> Response {
    let hub = &state.hub;
    let mut reasons = Vec::new();
    if *hub.shutdown.borrow() {
        reasons.push("shutting down".to_string());
    }
    match tokio::time::timeout(Duration::from_secs(2), hub.store.ping()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => reasons.push(format!("store: {e}")),
        Err(_) => reasons.push("store: timeout".to_string()),
    }
    let mut body = json!({
        "status": if reasons.is_empty() { "ok" } else { "degraded" },
        "reasons": reasons,
        "persistence": hub.store.persistence(),
        "games": hub.games.len(),
        "players_online": hub.players.online_count(),
        "server_time": ids::now_ms(),
    });
    if let Some(cluster) = &hub.cluster {
        use crate::game::capabilities::Peers;
        body["node"] = json!(cluster.node());
        body["nodes"] = json!(cluster.nodes().await);
        body["games_owned"] = json!(cluster.owned_count());
    }
    let code = if reasons.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

async fn metrics(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], {
        let mut text = state.hub.metrics.render();
        if let Some(cluster) = &state.hub.cluster {
            use crate::game::capabilities::Peers;
            use std::fmt::Write as _;
            let nodes = cluster.nodes().await;
            let node = cluster.node();
            let _ = write!(
                text,
                "# HELP stoa_cluster_nodes Nodes of the cluster with a recent heartbeat.\n\
                     # TYPE stoa_cluster_nodes gauge\n\
                     stoa_cluster_nodes {}\n\
                     # HELP stoa_cluster_games_owned Live games whose lease this node holds.\n\
                     # TYPE stoa_cluster_games_owned gauge\n\
                     stoa_cluster_games_owned{{node=\"{node}\"}} {}\n\
                     # HELP stoa_cluster_matchmaker Whether this node runs the matchmaking.\n\
                     # TYPE stoa_cluster_matchmaker gauge\n\
                     stoa_cluster_matchmaker{{node=\"{node}\"}} {}\n",
                nodes.len(),
                cluster.owned_count(),
                u8::from(cluster.is_matchmaker()),
            );
        }
        text
    })
        .into_response()
}

/// The static geometry of a game kind (for `?options=<JSON>`, default options without):
/// it is the same for every game with those options, so game documents do not carry it.
async fn api_kind(Path(kind): Path<String>, Query(q): Query<HashMap<String, String>>) -> Response {
    let bad = |status: StatusCode, message: String| {
        (status, Json(json!({"error": message}))).into_response()
    };
    let k = match stoa_protocol::kind(&kind) {
        Ok(k) => k,
        Err(e) => return bad(StatusCode::NOT_FOUND, e.to_string()),
    };
    let raw = match q.get("options").map(|o| serde_json::from_str::<Value>(o)) {
        None => json!({}),
        Some(Ok(v)) => v,
        Some(Err(e)) => return bad(StatusCode::BAD_REQUEST, format!("options: {e}")),
    };
    let game = match k
        .validate_options(&raw)
        .and_then(|o| k.start(&o).map(|g| (o, g)))
    {
        Ok(g) => g,
        Err(e) => return bad(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let (options, game) = game;
    Json(json!({
        "kind": k.id,
        "side_names": k.side_names,
        "options": options,
        "geometry": game.geometry(),
    }))
    .into_response()
}

async fn api_game(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let hub = &state.hub;
    let code = q.get("code").cloned();
    let not_found = || (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response();
    if let Some(h) = hub.game(&id).await {
        let (tx, rx) = oneshot::channel();
        if h.tx
            .send(Command::Snapshot {
                code: code.clone(),
                reply: tx,
            })
            .await
            .is_ok()
        {
            if let Ok(answer) = rx.await {
                return match answer {
                    Some((_, doc)) => Json(doc).into_response(),
                    None => not_found(),
                };
            }
        }
    }
    let (Ok(Some(finished)), Ok(Some(record))) = (
        hub.store.finished_game(&id).await,
        hub.store.game(&id).await,
    ) else {
        return not_found();
    };
    let code_ok =
        matches!((&record.code, &code), (Some(a), Some(b)) if *a == ids::normalize_code(b));
    if record.visibility == Visibility::Public || code_ok {
        Json(finished.doc).into_response()
    } else {
        not_found()
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
    let mut cluster_store = None;
    let store: Arc<dyn Store> = match &config.redis {
        Some(url) => {
            let options = RedisOptions {
                url: url.clone(),
                prefix: config.redis_prefix.clone(),
                timeout: Duration::from_millis(config.redis_timeout_ms.max(1)),
                fence: config.node_id.clone().filter(|_| config.cluster),
                redis_cluster: config.redis_cluster,
            };
            tracing::info!(url = %redact(url), "connecting to Redis");
            let store = RedisStore::connect(options).await.map_err(|e| {
                std::io::Error::other(format!(
                    "cannot use Redis at {}: {e} (is it running and reachable? check --redis / REDIS_URL)",
                    redact(url)
                ))
            })?;
            tracing::info!(prefix = %config.redis_prefix, "persistence: redis");
            if config.cluster {
                cluster_store = Some(store.clone());
            }
            Arc::new(store)
        }
        None => {
            tracing::info!("persistence: off (in memory; nothing survives a restart)");
            Arc::new(MemoryStore::new())
        }
    };
    let cluster = match cluster_store {
        Some(store) => {
            let node = config.node_id.clone().unwrap_or_else(ids::node_id);
            // The bus lives on one Redis server (the first seed of a Redis Cluster, whose
            // classic pub/sub reaches every node's subscribers anyway).
            let urls = config.redis.clone().unwrap_or_default();
            let url = urls
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            let cluster = crate::cluster::Cluster::new(node, store, &url, config.lease_ms)
                .await
                .map_err(std::io::Error::other)?;
            Some(Arc::new(cluster))
        }
        None => None,
    };
    serve(config, store, cluster, shutdown).await
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

/// Runs the server, as one node of `cluster` when given.
async fn serve(
    config: Config,
    store: Arc<dyn Store>,
    cluster: Option<Arc<crate::cluster::Cluster>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen)
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
        })?;
    let addr = listener.local_addr()?;
    let grace = Duration::from_millis(config.shutdown_grace_ms);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut hub = Hub::new(config, store, stop_rx);
    if let Some(cluster) = &cluster {
        hub = hub.with_cluster(cluster.clone());
    }
    let hub = Arc::new(hub);
    if let Some(cluster) = &cluster {
        cluster.start(&hub).await.map_err(|e| {
            std::io::Error::other(format!("cannot join the cluster over Redis: {e}"))
        })?;
    }
    crate::matchmaker::spawn(hub.clone());
    // Unfinished games are back before anyone can connect.
    recovery::recover(&hub)
        .await
        .map_err(|e| std::io::Error::other(format!("recovery failed: {e}")))?;
    let (guard, mut guards_done) = mpsc::channel::<()>(1);
    let app = router(hub.clone(), guard);
    tokio::spawn(crate::lobby::run(hub.clone()));
    println!("stoa-server listening on {addr}");
    tracing::info!(%addr, "listening");
    let limits = crate::listener::Limits {
        header_timeout: Duration::from_millis(hub.config.header_timeout_ms.max(1)),
        max_connections: crate::listener::connection_cap(hub.config.max_connections),
        // Behind a proxy every socket comes from the proxy: the per-IP count at the
        // socket would throttle everyone (the per-IP limit on upgrades still applies,
        // with the client address the proxy reports).
        max_per_ip: if hub.config.trust_proxy {
            usize::MAX
        } else {
            hub.config.max_connections_per_ip.max(1)
        },
        send_buffer: hub.config.socket_send_buffer,
    };
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
    crate::listener::serve(listener, app, limits, hub.shutdown.clone(), grace).await;
    // The router (and its guard) is dropped with the server; wait for live connections to
    // flush their last frames and close.
    let _ = tokio::time::timeout(grace + Duration::from_secs(1), guards_done.recv()).await;
    drop(signal);
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_ip_comes_from_the_proxy_only_when_trusted() {
        let peer: SocketAddr = "10.0.0.1:5000".parse().unwrap();
        let mut headers = HeaderMap::new();
        // A client sent "203.0.113.7" itself; the proxy appended the address it saw.
        headers.insert(
            "x-forwarded-for",
            "203.0.113.7, 198.51.100.4".parse().unwrap(),
        );
        assert_eq!(client_ip(peer, &headers, false), peer.ip());
        assert_eq!(
            client_ip(peer, &headers, true),
            "198.51.100.4".parse::<IpAddr>().unwrap()
        );
        let mut real = HeaderMap::new();
        real.insert("x-real-ip", "2001:db8::1".parse().unwrap());
        assert_eq!(
            client_ip(peer, &real, true),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        let mut junk = HeaderMap::new();
        junk.insert("x-forwarded-for", "not an ip".parse().unwrap());
        assert_eq!(client_ip(peer, &junk, true), peer.ip());
    }
}
