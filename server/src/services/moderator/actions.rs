//! What an operator does: each action checks its input (nothing changes on an error),
//! writes the store, enters the audit log, and acts — here at once, and on every other node
//! at its next reload (see [`super::reload`]).
//!
//! Why functions over the hub: an action reaches games (through the game routing, which
//! reaches a game's owner on any node), rooms, queues and arenas; each takes the operator's
//! name for the log and returns what the admin API answers.

use stoa_protocol::wire::ErrorCode;

use super::reload;
use crate::domain::moderation::{
    checked_reason, parse_network, AuditEntry, ReportClosed, SanctionKind, SanctionRecord, Undone,
};
use crate::error::ApiError;
use crate::game::{Act, Command};
use crate::ids::{self, GameId, PlayerId, RoomCode};
use crate::services::hub::Hub;
use crate::services::rooms::RoomStatus;
use crate::store::PlayerRecord;

/// The longest timed sanction: ten years (longer is "for good": no `until`).
pub const MAX_DURATION_MS: u64 = 10 * 365 * 24 * 3_600_000;

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message)
}

/// A sanction's end from a duration: `None` (for good) without one; at most ten years.
fn until(hub: &Hub, duration_ms: Option<u64>) -> Result<Option<u64>, ApiError> {
    match duration_ms {
        None => Ok(None),
        Some(0) => Err(bad("a duration must be at least 1 ms")),
        Some(d) if d > MAX_DURATION_MS => Err(bad(format!(
            "a duration may be at most {MAX_DURATION_MS} ms (ten years); leave it out for good"
        ))),
        Some(d) => Ok(Some(hub.time.now_ms() + d)),
    }
}

/// The player `id` names, or `not_found`.
pub async fn player(hub: &Hub, id: &PlayerId) -> Result<PlayerRecord, ApiError> {
    hub.store_call(hub.store.player(id))
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no player '{id}'")))
}

/// Writes a new sanction and its audit entry, counts it, and reloads here.
async fn give(
    hub: &Hub,
    sanction: SanctionRecord,
    detail: String,
) -> Result<SanctionRecord, ApiError> {
    let m = hub.store.moderation();
    hub.store_call(m.save_sanction(&sanction)).await?;
    let target = match (&sanction.player, &sanction.network) {
        (Some(p), _) => p.to_string(),
        (None, Some(n)) => n.clone(),
        (None, None) => String::new(),
    };
    log(
        hub,
        &sanction.by,
        sanction.kind.as_str(),
        target,
        &sanction.reason,
        detail,
    )
    .await?;
    hub.metrics.moderation.sanctioned(sanction.kind);
    let _ = reload(hub).await;
    Ok(sanction)
}

/// Enters an action in the audit log.
async fn log(
    hub: &Hub,
    by: &str,
    action: &str,
    target: String,
    reason: &str,
    detail: String,
) -> Result<(), ApiError> {
    let entry = AuditEntry {
        at_ms: hub.time.now_ms(),
        by: by.to_string(),
        action: action.to_string(),
        target,
        reason: reason.to_string(),
        detail,
    };
    tracing::info!(operator = %entry.by, action = %entry.action, target = %entry.target, "moderation");
    hub.store_call(hub.store.moderation().audit(&entry)).await
}

fn new_sanction(hub: &Hub, by: &str, kind: SanctionKind, reason: String) -> SanctionRecord {
    SanctionRecord {
        id: format!("s{}", &ids::player_id().as_str()[1..]),
        kind,
        player: None,
        network: None,
        reason,
        by: by.to_string(),
        at_ms: hub.time.now_ms(),
        until_ms: None,
        old_name: None,
        delivered: false,
        undone: None,
    }
}

/// What a sanction on a player is asked to be.
#[derive(Clone, Debug)]
pub struct PlayerSanction {
    /// The operator.
    pub by: String,
    /// What.
    pub kind: SanctionKind,
    /// Whom.
    pub player: PlayerId,
    /// Why (1-500 characters).
    pub reason: String,
    /// How long (mutes and bans; none: for good, which a mute may not be).
    pub duration_ms: Option<u64>,
}

/// Warns, mutes, bans or renames a player.
pub async fn sanction_player(hub: &Hub, ask: PlayerSanction) -> Result<SanctionRecord, ApiError> {
    let reason = checked_reason(&ask.reason).map_err(bad)?;
    let mut sanction = new_sanction(hub, &ask.by, ask.kind, reason);
    sanction.player = Some(ask.player.clone());
    sanction.until_ms = match ask.kind {
        SanctionKind::Mute if ask.duration_ms.is_none() => {
            return Err(bad("a mute needs a duration (duration_ms)"))
        }
        SanctionKind::Mute | SanctionKind::Ban => until(hub, ask.duration_ms)?,
        SanctionKind::Warn | SanctionKind::Rename if ask.duration_ms.is_some() => {
            return Err(bad(format!("a {} takes no duration", ask.kind.as_str())))
        }
        SanctionKind::AddressBan => return Err(bad("an address ban names a network")),
        _ => None,
    };
    let record = player(hub, &ask.player).await?;
    let mut detail = String::new();
    if ask.kind == SanctionKind::Rename {
        let name = format!("player-{}", &ids::room_code()[..5].to_ascii_lowercase());
        hub.store_call(hub.store.rename_player(&ask.player, &name))
            .await?;
        sanction.old_name = Some(record.name.clone());
        detail = format!("{} → {name}", record.name);
    }
    let given = give(hub, sanction, detail).await?;
    if ask.kind == SanctionKind::Ban {
        end_everything(hub, &ask.player).await;
    }
    Ok(given)
}

/// Refuses new connections from a network for a time (or for good).
pub async fn ban_network(
    hub: &Hub,
    by: &str,
    network: &str,
    reason: &str,
    duration_ms: Option<u64>,
) -> Result<SanctionRecord, ApiError> {
    let reason = checked_reason(reason).map_err(bad)?;
    let net = parse_network(network).ok_or_else(|| {
        bad(format!(
            "'{network}' is not an address or a network (203.0.113.7, 203.0.113.0/24, 2001:db8::/32)"
        ))
    })?;
    let mut sanction = new_sanction(hub, by, SanctionKind::AddressBan, reason);
    sanction.network = Some(net.to_string());
    sanction.until_ms = until(hub, duration_ms)?;
    give(hub, sanction, String::new()).await
}

/// A banned player's live games end as losses, they leave every queue and arena, and their
/// waiting rooms close (here; the other nodes close theirs at their reload).
async fn end_everything(hub: &Hub, player: &PlayerId) {
    let games = hub
        .store_call(hub.store.unfinished_games(player))
        .await
        .unwrap_or_default();
    for game in games {
        let ended = hub
            .call_game(&game, |reply| Command::Act {
                player_id: player.clone(),
                act: Act::Banned,
                reply,
            })
            .await;
        tracing::info!(%game, %player, ?ended, "banned player's game ended");
    }
    hub.topology.queue_leave(player).await;
    let arenas = hub
        .store_call(hub.store.open_arenas())
        .await
        .unwrap_or_default();
    for arena in arenas {
        // Paused in every arena they joined (an arena they never joined refuses: nothing to do).
        let _ = hub.arenas.pause(player, &arena).await;
    }
    close_rooms_here(hub, player).await;
}

/// Closes the waiting rooms `player` hosts on this node.
pub async fn close_rooms_here(hub: &Hub, player: &PlayerId) {
    for code in hub.rooms.waiting_hosted_by(player) {
        if let Some(room) = hub.rooms.leave(&code, player) {
            let _ = hub.store_call(hub.store.save_room(&room.record())).await;
        }
    }
}

/// Undoes a sanction (a mute or ban lifted at once, on every node).
pub async fn undo(hub: &Hub, by: &str, id: &str, reason: &str) -> Result<SanctionRecord, ApiError> {
    let reason = checked_reason(reason).map_err(bad)?;
    let m = hub.store.moderation();
    let mut sanction = hub
        .store_call(m.sanction(id))
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no sanction '{id}'")))?;
    if sanction.undone.is_some() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("sanction '{id}' was undone already"),
        ));
    }
    sanction.undone = Some(Undone {
        by: by.to_string(),
        at_ms: hub.time.now_ms(),
        reason: reason.clone(),
    });
    hub.store_call(m.save_sanction(&sanction)).await?;
    let detail = format!("undid the {} {}", sanction.kind.as_str(), sanction.id);
    let target = sanction
        .player
        .as_ref()
        .map(PlayerId::to_string)
        .or_else(|| sanction.network.clone())
        .unwrap_or_default();
    log(hub, by, "undo", target, &reason, detail).await?;
    let _ = reload(hub).await;
    Ok(sanction)
}

/// Closes an open report with the action taken.
pub async fn close_report(hub: &Hub, by: &str, id: &str, action: &str) -> Result<(), ApiError> {
    let action = checked_reason(action).map_err(|e| bad(e.replace("reason", "action")))?;
    let closed = ReportClosed {
        by: by.to_string(),
        at_ms: hub.time.now_ms(),
        action: action.clone(),
    };
    match hub
        .store_call(hub.store.moderation().close_report(id, &closed))
        .await?
    {
        None => Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no report '{id}'"),
        )),
        Some(false) => Err(ApiError::new(
            ErrorCode::Conflict,
            format!("report '{id}' is closed already"),
        )),
        Some(true) => {
            hub.metrics.moderation.report_closed();
            log(
                hub,
                by,
                "close_report",
                id.to_string(),
                &action,
                String::new(),
            )
            .await
        }
    }
}

/// Closes a waiting room (its host and guests are told as when a host leaves).
pub async fn close_room(hub: &Hub, by: &str, code: &str, reason: &str) -> Result<(), ApiError> {
    let reason = checked_reason(reason).map_err(bad)?;
    let code = RoomCode::typed(code);
    let room = hub
        .hosting
        .room(&code)
        .await?
        .ok_or_else(|| ApiError::no_room(code.as_str()))?;
    if room.status != RoomStatus::Waiting {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("room '{code}' is not waiting (its game started, or it closed)"),
        ));
    }
    let host = PlayerId::from(room.host.id.as_str());
    let mut closed = match hub.rooms.leave(&code, &host) {
        Some(here) => here,
        None => room,
    };
    closed.status = RoomStatus::Closed;
    closed.seats = [None, None];
    // Only while the stored room still waits (a guest may have started its game meanwhile).
    if !hub
        .store_call(hub.store.claim_room(&closed.record()))
        .await?
    {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("room '{code}' started or closed meanwhile"),
        ));
    }
    hub.store_call(hub.store.moderation().bump()).await?;
    log(
        hub,
        by,
        "close_room",
        code.to_string(),
        &reason,
        String::new(),
    )
    .await
}

/// Aborts a live game, whatever was played: no result, unrated.
pub async fn abort_game(hub: &Hub, by: &str, id: &str, reason: &str) -> Result<(), ApiError> {
    let reason = checked_reason(reason).map_err(bad)?;
    let game = GameId::from(id);
    let handle = hub
        .game(&game)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no live game '{id}'")))?;
    let first = handle.players[0].clone();
    match hub
        .call_game(&game, |reply| Command::Act {
            player_id: first,
            act: Act::OperatorAbort,
            reply,
        })
        .await
    {
        Some(Ok(_)) => {
            log(
                hub,
                by,
                "abort_game",
                id.to_string(),
                &reason,
                String::new(),
            )
            .await
        }
        Some(Err(e)) => Err(e),
        None => Err(ApiError::new(ErrorCode::GameOver, "the game is over")),
    }
}

/// Closes this node's waiting rooms that the store says are closed (an operator closed
/// them on another node).
pub async fn sync_rooms_here(hub: &Hub) {
    for code in hub.rooms.waiting_codes() {
        let stored = hub.store.room(&code).await;
        if let Ok(Some(record)) = stored {
            if record.status == stoa_protocol::wire::RoomState::Closed {
                if let Some(room) = hub.rooms.get(&code) {
                    let host = PlayerId::from(room.host.id.as_str());
                    hub.rooms.leave(&code, &host);
                }
            }
        }
    }
}
