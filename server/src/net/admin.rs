//! The operators' API under `/api/admin/`: reports, players, sanctions, live games and
//! rooms, the audit log. Every request carries `Authorization: Bearer <operator token>`
//! (`--admin-file`); without one, or with a token no operator holds, every path answers
//! exactly what an unknown API path answers (`404 {"error":"not_found"}`), so the console
//! does not announce itself. A tried token is never logged.
//!
//! Why bearer tokens and no cookies: a browser never sends a bearer token by itself, so
//! no other site can make an operator's browser act (no CSRF); scripts (`stoa admin`) use
//! the same header.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use stoa_protocol::wire::ErrorCode;

use super::state::AppState;
use crate::domain::moderation::SanctionKind;
use crate::error::ApiError;
use crate::ids::PlayerId;
use crate::services::hub::Hub;
use crate::services::moderator::actions::{self, PlayerSanction};

/// The most entries a list answers.
const MAX_LIMIT: usize = 500;

/// The admin routes (merged into the router; each checks the operator itself).
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/admin/me", get(me))
        .route("/api/admin/reports", get(reports))
        .route("/api/admin/reports/{id}", get(report))
        .route("/api/admin/reports/{id}/close", post(close_report))
        .route("/api/admin/players/{id}", get(player))
        .route("/api/admin/players/{id}/{action}", post(sanction_player))
        .route("/api/admin/addresses/ban", post(ban_network))
        .route("/api/admin/sanctions", get(sanctions))
        .route("/api/admin/sanctions/{id}/undo", post(undo))
        .route("/api/admin/live", get(live))
        .route("/api/admin/rooms/{code}/close", post(close_room))
        .route("/api/admin/games/{id}/abort", post(abort_game))
        .route("/api/admin/audit", get(audit))
}

/// Exactly the answer of an unknown API path.
fn hidden() -> Response {
    (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response()
}

/// The operator this request's bearer token names.
fn operator(hub: &Hub, headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    hub.moderation.operators.who(token).map(str::to_string)
}

/// An error answer of the admin API: the status its code means, and the message.
fn failed(e: ApiError) -> Response {
    let status = match e.code {
        ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict | ErrorCode::GameOver => StatusCode::CONFLICT,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (
        status,
        Json(json!({"error": e.code.as_str(), "message": e.message})),
    )
        .into_response()
}

fn answer(r: Result<Value, ApiError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => failed(e),
    }
}

fn limit(q: &HashMap<String, String>) -> Result<usize, ApiError> {
    match q.get("limit") {
        None => Ok(100),
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    format!("limit must be 1-{MAX_LIMIT}"),
                )
            }),
    }
}

fn json<T: serde::Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Runs `$body` for an operator (bound to `$op`), or answers as an unknown path.
macro_rules! as_operator {
    ($state:expr, $headers:expr, |$op:ident| $body:expr) => {{
        let Some($op) = operator(&$state.hub, &$headers) else {
            return hidden();
        };
        answer($body)
    }};
}

/// `GET /api/admin/me`: `{"operator": <name>}` (the console checks a token with it).
async fn me(State(state): State<AppState>, headers: HeaderMap) -> Response {
    as_operator!(state, headers, |op| Ok(json!({ "operator": op })))
}

/// `GET /api/admin/reports?status=open|all&limit=`: reports newest first.
async fn reports(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    as_operator!(state, headers, |_op| async {
        let open_only = match q.get("status").map(String::as_str) {
            None | Some("open") => true,
            Some("all") => false,
            Some(other) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("status must be open or all, not '{other}'"),
                ))
            }
        };
        let hub = &state.hub;
        let list = hub
            .store_call(hub.store.moderation().reports(open_only, limit(&q)?))
            .await?;
        Ok(json!({ "reports": list }))
    }
    .await)
}

/// `GET /api/admin/reports/{id}`.
async fn report(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    as_operator!(state, headers, |_op| async {
        let hub = &state.hub;
        match hub.store_call(hub.store.moderation().report(&id)).await? {
            Some(r) => Ok(json(r)),
            None => Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no report '{id}'"),
            )),
        }
    }
    .await)
}

/// What an action's body holds (each action reads the fields it needs).
#[derive(Debug, Default, Deserialize)]
struct Body {
    #[serde(default)]
    reason: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(default)]
    network: String,
}

/// The body as JSON, or `bad_request`.
fn body(raw: &str) -> Result<Body, ApiError> {
    if raw.trim().is_empty() {
        return Ok(Body::default());
    }
    serde_json::from_str(raw)
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("the body is not valid: {e}")))
}

/// `POST /api/admin/reports/{id}/close` `{"action": "<what was done>"}`.
async fn close_report(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    raw: String,
) -> Response {
    as_operator!(state, headers, |op| async {
        let b = body(&raw)?;
        actions::close_report(&state.hub, &op, &id, &b.action).await?;
        Ok(json!({ "closed": id }))
    }
    .await)
}

/// `GET /api/admin/players/{id}`: the player, their reports (about them and by them),
/// sanctions, devices and recent games.
async fn player(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<PlayerId>,
) -> Response {
    as_operator!(state, headers, |_op| async {
        let hub = &state.hub;
        let m = hub.store.moderation();
        let record = actions::player(hub, &id).await?;
        let about = hub.store_call(m.reports_about(&id, 100)).await?;
        let sanctions = hub.store_call(m.sanctions_of(&id)).await?;
        let devices = hub.store_call(hub.store.devices(&id)).await?;
        let page = hub.profiles.player(&id, Some(id.as_str())).await?;
        let now = hub.time.now_ms();
        let standing = hub.moderation.standing();
        Ok(json!({
            "id": record.id,
            "name": record.name,
            "bot": record.bot,
            "account": record.account,
            "online": hub.players.is_online(&id),
            "muted": standing.mute_of(&id, now),
            "banned": standing.ban_of(&id, now),
            "reports": about,
            "sanctions": sanctions,
            "devices": devices,
            "recent": page.get("recent").cloned().unwrap_or(Value::Null),
        }))
    }
    .await)
}

/// `POST /api/admin/players/{id}/{warn|mute|ban|rename}` `{"reason", "duration_ms"?}`.
async fn sanction_player(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((id, action)): Path<(PlayerId, String)>,
    raw: String,
) -> Response {
    let Some(op) = operator(&state.hub, &headers) else {
        return hidden();
    };
    let kind = match action.as_str() {
        "warn" => SanctionKind::Warn,
        "mute" => SanctionKind::Mute,
        "ban" => SanctionKind::Ban,
        "rename" => SanctionKind::Rename,
        _ => return hidden(),
    };
    answer(
        async {
            let b = body(&raw)?;
            let ask = PlayerSanction {
                by: op,
                kind,
                player: id,
                reason: b.reason,
                duration_ms: b.duration_ms,
            };
            Ok(json(actions::sanction_player(&state.hub, ask).await?))
        }
        .await,
    )
}

/// `POST /api/admin/addresses/ban` `{"network", "reason", "duration_ms"?}`.
async fn ban_network(State(state): State<AppState>, headers: HeaderMap, raw: String) -> Response {
    as_operator!(state, headers, |op| async {
        let b = body(&raw)?;
        let s = actions::ban_network(&state.hub, &op, &b.network, &b.reason, b.duration_ms).await?;
        Ok(json(s))
    }
    .await)
}

/// `GET /api/admin/sanctions`: the sanctions in force and the notices not yet shown.
async fn sanctions(State(state): State<AppState>, headers: HeaderMap) -> Response {
    as_operator!(state, headers, |_op| async {
        let hub = &state.hub;
        let now = hub.time.now_ms();
        let all = hub
            .store_call(hub.store.moderation().standing_sanctions())
            .await?;
        let standing: Vec<_> = all
            .into_iter()
            .filter(|s| {
                s.in_force(now)
                    || !matches!(
                        s.kind,
                        SanctionKind::Mute | SanctionKind::Ban | SanctionKind::AddressBan
                    )
            })
            .collect();
        Ok(json!({ "sanctions": standing }))
    }
    .await)
}

/// `POST /api/admin/sanctions/{id}/undo` `{"reason"}`.
async fn undo(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    raw: String,
) -> Response {
    as_operator!(state, headers, |op| async {
        let b = body(&raw)?;
        Ok(json(actions::undo(&state.hub, &op, &id, &b.reason).await?))
    }
    .await)
}

/// `GET /api/admin/live`: the live games of every node (public and private, with their
/// players) and the rooms waiting.
async fn live(State(state): State<AppState>, headers: HeaderMap) -> Response {
    as_operator!(state, headers, |_op| {
        async {
        let hub = &state.hub;
        // From the store: every node's live games, not only this one's.
        let ids = hub.store_call(hub.store.all_unfinished_games()).await?;
        let mut games = Vec::new();
        for id in ids.into_iter().take(MAX_LIMIT) {
            if let Some(g) = hub.store_call(hub.store.game(&id)).await? {
                games.push(json!({
                    "id": g.id,
                    "kind": g.kind,
                    "rated": g.rated,
                    "visibility": g.visibility,
                    "players": g.players.iter().map(|p| json!({"id": p.id, "name": p.name})).collect::<Vec<_>>(),
                    "created_ms": g.created_ms,
                }));
            }
        }
        let rooms: Vec<Value> = hub
            .store_call(hub.store.waiting_rooms())
            .await?
            .into_iter()
            .map(json)
            .collect();
        Ok(json!({ "games": games, "rooms": rooms }))
    }
    .await
    })
}

/// `POST /api/admin/rooms/{code}/close` `{"reason"}`.
async fn close_room(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(code): Path<String>,
    raw: String,
) -> Response {
    as_operator!(state, headers, |op| async {
        let b = body(&raw)?;
        actions::close_room(&state.hub, &op, &code, &b.reason).await?;
        Ok(json!({ "closed": code }))
    }
    .await)
}

/// `POST /api/admin/games/{id}/abort` `{"reason"}`.
async fn abort_game(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    raw: String,
) -> Response {
    as_operator!(state, headers, |op| async {
        let b = body(&raw)?;
        actions::abort_game(&state.hub, &op, &id, &b.reason).await?;
        Ok(json!({ "aborted": id }))
    }
    .await)
}

/// `GET /api/admin/audit?limit=`: the audit log, newest first.
async fn audit(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    as_operator!(state, headers, |_op| async {
        let hub = &state.hub;
        let entries = hub
            .store_call(hub.store.moderation().audit_log(limit(&q)?))
            .await?;
        Ok(json!({ "entries": entries }))
    }
    .await)
}
