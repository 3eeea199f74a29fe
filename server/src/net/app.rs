//! The HTTP edge: the router and its handlers (websocket upgrade, health, metrics, the game
//! API, the web client's pages).
//!
//! Why here: everything that touches HTTP lives in one file; the protocol itself lives in
//! the session and actors, and the server's lifecycle in the composition root
//! ([`crate::node`]).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::ids::{self, ArenaId, GameId, PlayerId, RoomCode};
use crate::metrics::exposition;
use crate::net::api::{self, api_error, bearer};
use crate::net::connection::{self, ConnGuard};
use crate::net::state::AppState;
use crate::net::upgrade::Upgrade;
use crate::services::hub::Hub;
use tungstenite::protocol::WebSocketConfig;

/// The router over a node's services; `guard` is held by every live connection (the
/// server waits for all to close).
pub fn router(hub: Arc<Hub>, guard: ConnGuard) -> Router {
    Router::new()
        .route("/ws", get(ws_upgrade))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/games", get(api::api_games))
        .route("/api/games/{id}", get(api::api_game))
        .route("/api/arenas/{id}", get(api::api_arena))
        .route("/api/games/{id}/record", get(api::api_record))
        .route("/api/games/{id}/replay", get(api::api_replay))
        .route("/api/games/{id}/analysis", get(api::api_analysis))
        .route("/rules", get(crate::net::rules::index))
        .route("/rules/{kind}", get(crate::net::rules::guide))
        .route(
            "/rules/{kind}/developers",
            get(crate::net::rules::developers),
        )
        .route("/api/players/{id}/games", get(api::api_player_games))
        .route("/api/players/{id}", get(api::api_player))
        .route("/api/players/{id}/lessons", get(api::api_player_lessons))
        .route("/api/leaderboard/{kind}", get(api::api_leaderboard))
        .route("/api/kinds/{kind}", get(api::api_kind))
        .route("/api/lessons/{kind}", get(api::api_lesson))
        .route("/learn", get(shell))
        .route("/analysis", get(shell))
        .route("/learn/{kind}", get(learn_shell))
        .route("/", get(shell))
        .route("/g/{id}", get(game_shell))
        .route(
            "/r/{code}",
            get(|State(state): State<AppState>, Path(key): Path<String>| {
                page_if_found(state, key, Shown::Room)
            }),
        )
        .route(
            "/p/{id}",
            get(|State(state): State<AppState>, Path(key): Path<String>| {
                page_if_found(state, key, Shown::Player)
            }),
        )
        .route(
            "/t/{id}",
            get(|State(state): State<AppState>, Path(key): Path<String>| {
                page_if_found(state, key, Shown::Arena)
            }),
        )
        .route("/leaderboard", get(shell))
        .route("/leaderboard/{kind}", get(leaderboard_shell))
        .route("/assets/{*path}", get(crate::net::web::asset))
        .route("/favicon.ico", get(crate::net::web::favicon))
        .merge(crate::net::admin::routes())
        .fallback(crate::net::web::not_found)
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
/// connection's memory, and zero-filled again before every read. Requests are small JSON
/// objects (a move is under 100 bytes); a larger frame (up to the 16 KiB limit) just takes
/// a few reads.
const READ_BUFFER: usize = 1024;

async fn ws_upgrade(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
) -> Response {
    let upgrade = match Upgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return refused.into_response(),
    };
    let headers = req.headers();
    let hub = state.hub.clone();
    if *hub.shutdown.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    }
    let ip = client_ip(peer, headers, hub.config.trust_proxy);
    if hub.moderation.address_banned(ip, hub.time.now_ms()) {
        hub.metrics.connections_refused.inc();
        // The address is not logged in full here: the operator's ban names it already.
        tracing::info!("new connection refused: address banned");
        return (
            StatusCode::FORBIDDEN,
            "connections from this address are not accepted",
        )
            .into_response();
    }
    let allowed = hub.ip_limiter.allow(ip)
        // In a cluster the window is counted in Redis too: a client spreading its
        // connections over the nodes meets the same limit.
        && hub
            .topology
            .allow_ip(ip, hub.config.ip_conn_limit, hub.config.ip_window_ms)
            .await;
    if !allowed {
        hub.metrics.connections_refused.inc();
        tracing::info!(%ip, "new connection refused: per-IP limit");
        return (StatusCode::TOO_MANY_REQUESTS, "too many new connections").into_response();
    }
    let max = hub.config.max_frame_bytes;
    let guard = state.guard.clone();
    // The deployment goes in the upgrade's answer too, so that a client knows, before its
    // `hello`, which of its stored tokens belongs here (`welcome` says it only after).
    let deployment = header::HeaderValue::from_str(&hub.deployment).ok();
    // Only reading goes through the websocket library (frames out are ours): no write
    // buffer beyond the frame at hand.
    let config = WebSocketConfig::default()
        .max_frame_size(Some(max))
        .max_message_size(Some(max))
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0);
    let (mut response, socket) = upgrade.accept();
    tokio::spawn(async move {
        if let Some(socket) = socket.await {
            connection::serve(hub, socket, config, peer, ip, guard).await;
        }
    });
    if let Some(value) = deployment {
        response.headers_mut().insert(DEPLOYMENT_HEADER, value);
    }
    response
}

/// The websocket upgrade's response header naming the deployment (`welcome.deployment`).
pub const DEPLOYMENT_HEADER: &str = "stoa-deployment";

/// The web client's page, naming the deployment the page keeps its token under.
async fn shell(State(state): State<AppState>) -> Response {
    crate::net::web::shell(&state.hub.deployment)
}

/// `GET /g/{id}` (`?code=` for a private game): the page of a game, or a `404` page saying
/// there is no such game. The game is looked up in the store (live and finished games are
/// both there). A private game's page is served without a code too — its players reload
/// their own page, and a browser sends no token with a page request; its random id is as
/// hard to guess as its code, and what the page then shows is decided by the websocket's
/// `game.watch`. A code that does not open the game gets the very page an unknown id gets,
/// so a wrong code tells nothing about the game.
async fn game_shell(
    State(state): State<AppState>,
    Path(id): Path<GameId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let hub = &state.hub;
    let setup = match hub.store_call(hub.store.game(&id)).await {
        Ok(setup) => setup,
        Err(e) => return api_error(e),
    };
    let shown = match (setup, q.get("code")) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(setup), Some(code)) => {
            let viewer = bearer(hub, &headers).await;
            // The one rule for who may see a game (`domain::visibility`).
            crate::domain::visibility::Access {
                visibility: setup.visibility,
                players: [setup.players[0].id.as_str(), setup.players[1].id.as_str()],
                code: setup.code.as_ref().map(RoomCode::as_str),
            }
            .may_see(viewer.as_ref().map(PlayerId::as_str), Some(code))
        }
    };
    if shown {
        crate::net::web::shell(&hub.deployment)
    } else {
        crate::net::web::missing_page(
            "No such game",
            &format!("There is no game with the id '{id}'."),
        )
    }
}

/// What a page served by [`page_if_found`] shows: the thing its path's one parameter names.
#[derive(Clone, Copy)]
enum Shown {
    /// `GET /r/{code}`: an invitation. The room is looked up as `room.join` finds it (in
    /// memory, else in the store, whatever its state: a started room's page offers to
    /// watch its game); the code is matched forgivingly and echoed as typed.
    Room,
    /// `GET /p/{id}`: a player.
    Player,
    /// `GET /t/{id}` (`?code=` for a private arena): an arena. A private arena's page is
    /// served without its code too (its random id is as hard to guess as its code): the
    /// page holds no arena data, and its websocket `arena.watch` (by the `?code=` of the
    /// link, or by id for the arena's creator and players) decides what it shows, so a
    /// player's link without the code works too; `GET /api/arenas/{id}` still wants the code.
    Arena,
}

/// The web client's page when the room, player or arena the path names exists, else a
/// `404` page saying there is no such thing.
async fn page_if_found(state: AppState, key: String, shown: Shown) -> Response {
    let hub = &state.hub;
    let (found, noun, named_by) = match shown {
        Shown::Room => (
            hub.hosting
                .room(&crate::ids::RoomCode::typed(&key))
                .await
                .map(|room| room.is_some()),
            "room",
            "code",
        ),
        Shown::Player => (
            hub.profiles.exists(&PlayerId::from(key.as_str())).await,
            "player",
            "id",
        ),
        Shown::Arena => (
            hub.arenas.exists(&ArenaId::from(key.as_str())).await,
            "arena",
            "id",
        ),
    };
    match found {
        Ok(true) => crate::net::web::shell(&hub.deployment),
        Ok(false) => crate::net::web::missing_page(
            &format!("No such {noun}"),
            &format!("There is no {noun} with the {named_by} '{key}'."),
        ),
        Err(e) => api_error(e),
    }
}

/// `GET /leaderboard/{kind}`: a kind's leaderboard page, or a `404` page for a kind that
/// does not exist.
async fn leaderboard_shell(State(state): State<AppState>, Path(kind): Path<String>) -> Response {
    if stoa_protocol::kind(&kind).is_ok() {
        return crate::net::web::shell(&state.hub.deployment);
    }
    crate::net::web::missing_page(
        "No such game",
        &format!("There is no game kind '{kind}', so no leaderboard for it."),
    )
}

/// `/learn/{kind}`: the web client's lesson page, or a page saying there is no such game.
async fn learn_shell(State(state): State<AppState>, Path(kind): Path<String>) -> Response {
    if stoa_protocol::lessons::source(&kind).is_some() {
        return crate::net::web::shell(&state.hub.deployment);
    }
    crate::net::web::missing_page(
        "No such game",
        &format!("There is no game kind '{kind}', so no lesson for it."),
    )
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
        "deployment": hub.deployment,
    });
    if let Some(members) = hub.topology.members().await {
        body["node"] = json!(members.node);
        body["nodes"] = json!(members.nodes);
        body["games_owned"] = json!(members.owned);
    }
    let code = if reasons.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let metrics = &state.hub.metrics;
    if let Some(m) = state.hub.topology.members().await {
        metrics.set_cluster(&m.node, m.nodes.len(), m.owned, m.matchmaker);
    }
    let waiting = state.hub.rooms.waiting_kinds();
    metrics.set_rooms_open(waiting.iter().map(String::as_str));
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let text = metrics.render();
    if exposition::wants_openmetrics(accept) {
        ([(header::CONTENT_TYPE, exposition::OPENMETRICS)], text).into_response()
    } else {
        (
            [(header::CONTENT_TYPE, exposition::PROMETHEUS_TEXT)],
            exposition::prometheus_text(&text),
        )
            .into_response()
    }
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
