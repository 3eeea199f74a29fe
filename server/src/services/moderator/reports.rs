//! A player's report: checked, given the context an operator needs (the reported chat line
//! and the lines around it, copied from this node's chat), bounded per reporter, stored.
//!
//! Why the context is copied into the report: chats are kept in memory only while a game
//! or room lives; the operator reads the report later, perhaps after a restart.

use stoa_protocol::wire::{ErrorCode, ReportRequest};

use crate::domain::moderation::{ContextLine, ReportRecord, REPORT_TEXT_MAX};
use crate::error::ApiError;
use crate::game::Command;
use crate::ids::{self, GameId, PlayerId, RoomCode};
use crate::services::hub::Hub;
use crate::store::PlayerRecord;

/// Reports one reporter may make in [`BUDGET_WINDOW_MS`].
pub const BUDGET: usize = 5;

/// The reporters' budget window: an hour.
pub const BUDGET_WINDOW_MS: u64 = 3_600_000;

/// The most characters of a reported player id read.
const MAX_ID_CHARS: usize = 64;

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message)
}

/// Where a report's context comes from: the reporter's connection (room chats are per
/// connection) and who they are.
pub struct Reporter<'a> {
    /// The reporter.
    pub player: &'a PlayerRecord,
    /// Their connection's id.
    pub conn_id: u64,
}

/// Opens a report; its id.
pub async fn open(hub: &Hub, by: Reporter<'_>, ask: ReportRequest) -> Result<String, ApiError> {
    let text = ask.text.as_deref().unwrap_or("").trim().to_string();
    let n = text.chars().count();
    if n > REPORT_TEXT_MAX {
        return Err(bad(format!(
            "a report's text may be at most {REPORT_TEXT_MAX} characters (this one has {n})"
        )));
    }
    if ask.player_id.is_empty() || ask.player_id.chars().count() > MAX_ID_CHARS {
        return Err(bad("player_id must name a player"));
    }
    let target = PlayerId::from(ask.player_id.as_str());
    if target == by.player.id {
        return Err(bad("you cannot report yourself"));
    }
    let Some(reported) = hub.store_call(hub.store.player(&target)).await? else {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no player '{}'", ask.player_id),
        ));
    };
    let game_id = ask.game_id.as_deref().map(GameId::from);
    let room = ask.code.as_deref().map(RoomCode::typed);
    let context = context(hub, &by, &target, &ask, game_id.as_ref(), room.as_ref()).await?;
    let m = hub.store.moderation();
    let now = hub.time.now_ms();
    let made = hub
        .store_call(m.reports_by_since(&by.player.id, now.saturating_sub(BUDGET_WINDOW_MS)))
        .await?;
    if made >= BUDGET {
        return Err(ApiError::new(
            ErrorCode::RateLimited,
            format!("you have made {BUDGET} reports in the last hour: wait before making another"),
        ));
    }
    let report = ReportRecord {
        id: format!("r{}", &ids::player_id().as_str()[1..]),
        reporter: by.player.id.clone(),
        reporter_name: by.player.name.clone(),
        target,
        target_name: reported.name,
        reason: ask.reason,
        text,
        game_id,
        room,
        context,
        created_ms: now,
        closed: None,
    };
    if !hub.store_call(m.open_report(&report)).await? {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "you already have an open report about this player: an operator will read it",
        ));
    }
    hub.metrics.moderation.report_opened();
    tracing::info!(report = %report.id, reason = report.reason.as_str(), "report opened");
    Ok(report.id)
}

/// The reported line and its neighbours, when the report points at one (`ts` with a game
/// or a room); a game that is named must exist.
async fn context(
    hub: &Hub,
    by: &Reporter<'_>,
    target: &PlayerId,
    ask: &ReportRequest,
    game: Option<&GameId>,
    room: Option<&RoomCode>,
) -> Result<Vec<ContextLine>, ApiError> {
    if game.is_some() && room.is_some() {
        return Err(bad("a report names a game or a room, not both"));
    }
    let no_line = || {
        ApiError::new(
            ErrorCode::NotFound,
            format!(
                "no chat line of '{target}' at ts {} there",
                ask.ts.unwrap_or(0)
            ),
        )
    };
    match (ask.ts, game, room) {
        (None, Some(game), _) => {
            let known = hub.store_call(hub.store.game(game)).await?.is_some();
            if !known {
                return Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!("no game '{game}'"),
                ));
            }
            Ok(Vec::new())
        }
        (None, None, Some(_)) => Err(bad("a report about a room's chat names the line (ts)")),
        (None, None, None) => Ok(Vec::new()),
        (Some(_), None, None) => Err(bad(
            "a reported line (ts) is in a game's chat (game_id) or a room's (code)",
        )),
        (Some(ts), Some(game), _) => {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let handle = hub.game(game).await?.ok_or_else(no_line)?;
            let cmd = Command::ChatContext {
                reporter: by.player.id.clone(),
                author: target.clone(),
                ts,
                reply: tx,
            };
            handle.tx.send(cmd).await.map_err(|_| no_line())?;
            let (at, lines) = rx.await.ok().flatten().ok_or_else(no_line)?;
            Ok(lines
                .into_iter()
                .enumerate()
                .map(|(i, e)| ContextLine {
                    channel: Some(e.channel.as_str().to_string()),
                    id: PlayerId::from(e.id),
                    name: e.name,
                    text: e.text,
                    ts: e.ts,
                    reported: i == at,
                })
                .collect())
        }
        (Some(ts), None, Some(room)) => {
            let (at, lines) = hub
                .room_chats
                .context(
                    room,
                    by.conn_id,
                    target.as_str(),
                    ts,
                    crate::domain::moderation::CONTEXT_LINES,
                )
                .ok_or_else(no_line)?;
            Ok(lines
                .into_iter()
                .enumerate()
                .map(|(i, l)| ContextLine {
                    channel: None,
                    id: PlayerId::from(l.id),
                    name: l.name,
                    text: l.text,
                    ts: l.ts,
                    reported: i == at,
                })
                .collect())
        }
    }
}
