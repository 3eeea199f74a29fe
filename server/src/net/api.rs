//! The JSON API under `/api`: games, records, replays, reviews, players, leaderboards,
//! kinds and lessons.
//!
//! Why apart from the router: these handlers read the hub and answer JSON, and share their
//! own helpers (the bearer token, the error body); the router in [`super::app`] only
//! names routes.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use tokio::sync::oneshot;

use super::state::AppState;
use crate::game::Command;
use crate::ids::{self, ArenaId, GameId, PlayerId};
use crate::services::hub::Hub;
use crate::store::{FinishedGame, GameRecord};

/// `GET /api/lessons/{kind}`: the kind's lesson file (`protocol/lessons/<kind>.json`) as
/// written, the same text the terminal client reads; `404` for an unknown kind.
pub(super) async fn api_lesson(Path(kind): Path<String>) -> Response {
    match stoa_protocol::lessons::source(&kind) {
        Some(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": format!("no lesson for '{kind}'")})),
        )
            .into_response(),
    }
}

/// `GET /api/players/{id}`: a player's name, ratings in every kind and recent finished
/// games (private ones only to the player, by bearer token); `404` for an unknown id.
pub(super) async fn api_player(
    State(state): State<AppState>,
    Path(id): Path<PlayerId>,
    headers: HeaderMap,
) -> Response {
    let viewer = bearer(&state.hub, &headers).await;
    match state
        .hub
        .profiles
        .player(&id, viewer.as_ref().map(PlayerId::as_str))
        .await
    {
        Ok(page) => Json(page).into_response(),
        Err(e) => api_error(e),
    }
}

/// `GET /api/players/{id}/lessons`: the lesson steps the player has done
/// (`{"done":{<kind>:[<step id>…]…}}`, as `lessons.progress`), to the player's own bearer
/// token only; anyone else gets `404`, so whether a player learnt anything is not told.
pub(super) async fn api_player_lessons(
    State(state): State<AppState>,
    Path(id): Path<PlayerId>,
    headers: HeaderMap,
) -> Response {
    if bearer(&state.hub, &headers).await.as_ref() != Some(&id) {
        return (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response();
    }
    let hub = &state.hub;
    match crate::services::lessons::progress(&*hub.store, &hub.metrics, &id).await {
        Ok(done) => Json(json!({ "done": done })).into_response(),
        Err(e) => api_error(e),
    }
}

/// `GET /api/leaderboard/{kind}`: the kind's top established players; `404` for an
/// unknown kind.
pub(super) async fn api_leaderboard(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> Response {
    match state.hub.profiles.leaderboard(&kind).await {
        Ok(board) => Json(board.to_json()).into_response(),
        Err(e) => api_error(e),
    }
}

/// The static geometry of a game kind (for `?options=<JSON>`, default options without):
/// it is the same for every game with those options, so game documents do not carry it.
pub(super) async fn api_kind(
    Path(kind): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
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

/// The player a request speaks for: `Authorization: Bearer <token>` (the same token as the
/// websocket's `hello`), if it is a known one.
pub(super) async fn bearer(hub: &Hub, headers: &HeaderMap) -> Option<PlayerId> {
    let token = headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")?
        .trim();
    let hash = ids::token_hash(token);
    hub.store_call(hub.store.player_by_token_hash(&hash))
        .await
        .ok()
        .flatten()
        .map(|p| p.id)
}

/// An API error as JSON with its HTTP status (a private game reads as not found to
/// strangers, so its existence is not told).
pub(super) fn api_error(e: crate::error::ApiError) -> Response {
    use stoa_protocol::wire::ErrorCode;
    let (status, code) = match e.code {
        ErrorCode::NotFound | ErrorCode::Forbidden => (StatusCode::NOT_FOUND, "not_found"),
        ErrorCode::BadRequest => (StatusCode::BAD_REQUEST, "bad_request"),
        ErrorCode::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    };
    (status, Json(json!({"error": code, "message": e.message}))).into_response()
}

/// `GET /api/games/{id}/record`: the portable text record of a finished game.
pub(super) async fn api_record(
    State(state): State<AppState>,
    Path(id): Path<GameId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    match finished_for(&state, &id, &q, &headers).await {
        Ok((setup, finished)) => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            crate::services::records::record(&setup, &finished).to_text(),
        )
            .into_response(),
        Err(e) => api_error(e),
    }
}

/// A finished game as the record, replay and review routes show it: to whom the bearer
/// token (if any) and the room code (`?code=`, for a private game) give access.
async fn finished_for(
    state: &AppState,
    id: &GameId,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
) -> Result<(GameRecord, FinishedGame), crate::error::ApiError> {
    let viewer = bearer(&state.hub, headers).await;
    state
        .hub
        .records
        .finished_for(
            id,
            viewer.as_ref().map(PlayerId::as_str),
            q.get("code").map(String::as_str),
        )
        .await
}

/// `GET /api/games/{id}/replay`: every position of a finished game (the same access as
/// its record).
pub(super) async fn api_replay(
    State(state): State<AppState>,
    Path(id): Path<GameId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let found = finished_for(&state, &id, &q, &headers).await;
    match found.and_then(|(setup, finished)| crate::services::records::replay(&setup, &finished)) {
        Ok(body) => Json(body).into_response(),
        Err(e) => api_error(e),
    }
}

/// `GET /api/games/{id}/analysis`: a finished game's engine review and where it stands
/// (the same access as its record; `404` for an unknown game).
pub(super) async fn api_analysis(
    State(state): State<AppState>,
    Path(id): Path<GameId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let found = finished_for(&state, &id, &q, &headers).await;
    if let Err(e) = found {
        return api_error(e);
    }
    match state.hub.analysis.review(&id).await {
        Ok(review) => Json(review.json(&id)).into_response(),
        Err(e) => api_error(e),
    }
}

/// `GET /api/games?status=live&kind=<kind>`: public games being played now.
pub(super) async fn api_games(
    State(state): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if q.get("status").is_some_and(|s| s != "live") {
        return api_error(crate::error::ApiError::new(
            stoa_protocol::wire::ErrorCode::BadRequest,
            "status must be live (finished games are in players' histories)",
        ));
    }
    let kind = q.get("kind");
    let mut games: Vec<Value> = state
        .hub
        .games
        .public_summaries()
        .into_iter()
        .filter(|(_, s)| kind.is_none_or(|k| s["kind"] == k.as_str()))
        .map(|(id, mut s)| {
            s["id"] = json!(id);
            s
        })
        .collect();
    games.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    Json(json!({ "games": games })).into_response()
}

/// `GET /api/players/{id}/games?before=<ms>&limit=<n>`: a player's finished games, newest
/// first; private ones only to the player (bearer token).
pub(super) async fn api_player_games(
    State(state): State<AppState>,
    Path(id): Path<PlayerId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let number = |key: &str| match q.get(key) {
        None => Ok(None),
        Some(v) => v.parse::<u64>().map(Some).map_err(|_| {
            crate::error::ApiError::new(
                stoa_protocol::wire::ErrorCode::BadRequest,
                format!("{key} must be a whole number, got '{v}'"),
            )
        }),
    };
    let (before, limit) = match (number("before"), number("limit")) {
        (Ok(b), Ok(l)) => (b, l),
        (Err(e), _) | (_, Err(e)) => return api_error(e),
    };
    let viewer = bearer(&state.hub, &headers).await;
    match state
        .hub
        .records
        .history(&id, viewer.as_ref().map(PlayerId::as_str), before, limit)
        .await
    {
        Ok((games, next)) => Json(json!({"games": games, "next_before": next})).into_response(),
        Err(e) => api_error(e),
    }
}

/// `GET /api/arenas/{id}` (`?code=` for a private arena): the arena's document, as
/// `arena.watch` answers it; the final standings stay readable after the end.
pub(super) async fn api_arena(
    State(state): State<AppState>,
    Path(id): Path<ArenaId>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let code = q.get("code").map(String::as_str);
    match state.hub.arenas.document(&id, code).await {
        Ok(Some(doc)) => Json(doc).into_response(),
        Ok(None) => (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response(),
        Err(e) => api_error(e),
    }
}

pub(super) async fn api_game(
    State(state): State<AppState>,
    Path(id): Path<GameId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let hub = &state.hub;
    let code = q.get("code").cloned();
    let not_found = || (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response();
    // A finished game's full record (times, ratings after) when the store has it.
    let viewer = bearer(hub, &headers).await;
    match hub
        .records
        .finished_for(&id, viewer.as_ref().map(PlayerId::as_str), code.as_deref())
        .await
    {
        Ok((setup, finished)) => {
            return Json(crate::services::records::full_json(&setup, &finished)).into_response()
        }
        Err(e) if e.code == stoa_protocol::wire::ErrorCode::Forbidden => return not_found(),
        Err(_) => {}
    }
    let live = match hub.game(&id).await {
        Ok(live) => live,
        Err(e) => return api_error(e),
    };
    if let Some(h) = live {
        let (tx, rx) = oneshot::channel();
        if h.tx
            .send(Command::Snapshot {
                // Its players see a live private game as they see it once finished.
                viewer: viewer.clone(),
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
    not_found()
}
