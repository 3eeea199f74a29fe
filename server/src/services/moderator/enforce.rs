//! What a node does when the standing sanctions change: notices to the players'
//! connections here, a banned player's connections ended and their rooms here closed, owed
//! notices shown once.

use crate::domain::moderation::SanctionKind;
use crate::ids::PlayerId;
use crate::services::hub::Hub;
use crate::services::moderation::standing::Changes;
use crate::services::moderation::{notice, BANNED_CLOSE, RENAMED_CLOSE};

/// Acts on `changes` here.
pub async fn enforce(changes: Changes, hub: &Hub) {
    for ban in &changes.banned {
        let Some(player) = &ban.player else { continue };
        let told = notice(ban, false);
        for conn in hub.players.connections(player) {
            conn.send_msg(&told);
            conn.end(BANNED_CLOSE.0, BANNED_CLOSE.1);
        }
        super::actions::close_rooms_here(hub, player).await;
    }
    for (list, lifted) in [(&changes.muted, false), (&changes.unmuted, true)] {
        for mute in list {
            let Some(player) = &mute.player else { continue };
            let told = notice(mute, lifted);
            for conn in hub.players.connections(player) {
                conn.send_msg(&told);
            }
        }
    }
    for player in changes.owed {
        if hub.players.is_online(&player) {
            deliver_notices(hub, &player).await;
        }
    }
}

/// Shows `player`'s owed notices to their connections here and marks them shown, each once:
/// a notice another node (or this one) showed already is skipped — the standing set may
/// still list it until the next reload, so the stored record is read again first. A notice
/// whose mark could not be written is shown again later (at least once, never lost).
pub async fn deliver_notices(hub: &Hub, player: &PlayerId) {
    let owed = hub.moderation.standing().notices_of(player).to_vec();
    for listed in owed {
        let stored = hub.store.moderation().sanction(&listed.id).await;
        let Ok(Some(mut sanction)) = stored else {
            continue;
        };
        if sanction.delivered || sanction.undone.is_some() {
            continue;
        }
        if !hub.moderation.claim_notice(&sanction.id) {
            continue;
        }
        let told = notice(&sanction, false);
        let renamed = sanction.kind == SanctionKind::Rename;
        for conn in hub.players.connections(player) {
            conn.send_msg(&told);
            if renamed {
                // A session keeps its player's name: it says hello again to take the new
                // one (and a client that says the old one back is refused it).
                conn.end(RENAMED_CLOSE.0, RENAMED_CLOSE.1);
            }
        }
        sanction.delivered = true;
        if let Err(e) = hub.store.moderation().save_sanction(&sanction).await {
            tracing::warn!(error = %e, sanction = %sanction.id, "notice shown but not marked");
            // Shown again at a later chance rather than lost.
            hub.moderation.shown.lock().remove(&sanction.id);
        }
    }
}
