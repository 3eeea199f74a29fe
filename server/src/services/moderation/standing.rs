//! The sanctions standing on a node: who is muted or banned, which networks are refused,
//! and the notices (warnings, renames) still owed — and what a node does when they change.
//!
//! Why a snapshot replaced whole: every chat line and every `hello` reads it, so it is an
//! immutable value behind an `Arc` (a read is a reference count), rebuilt only when the
//! store's version moves.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use ipnet::IpNet;

use super::{notice, BANNED_CLOSE};
use crate::domain::moderation::{network_contains, SanctionKind, SanctionRecord};
use crate::ids::PlayerId;
use crate::services::hub::Hub;

/// The sanctions standing at one load.
#[derive(Debug, Default)]
pub struct Standing {
    /// Each muted player's mutes (several may overlap; any in force mutes).
    mutes: HashMap<PlayerId, Vec<SanctionRecord>>,
    bans: HashMap<PlayerId, Vec<SanctionRecord>>,
    networks: Vec<(IpNet, SanctionRecord)>,
    /// Warnings and renames not yet shown, by player.
    notices: HashMap<PlayerId, Vec<SanctionRecord>>,
}

impl Standing {
    /// The standing set of `records` (as [`crate::store::moderation::ModerationStore::standing_sanctions`]
    /// gives them), leaving out those that ran out by `now_ms`.
    pub fn new(records: Vec<SanctionRecord>, now_ms: u64) -> Standing {
        let mut s = Standing::default();
        for r in records {
            if r.undone.is_some() {
                continue;
            }
            match (r.kind, r.player.clone()) {
                (SanctionKind::Mute, Some(p)) if r.in_force(now_ms) => {
                    s.mutes.entry(p).or_default().push(r)
                }
                (SanctionKind::Ban, Some(p)) if r.in_force(now_ms) => {
                    s.bans.entry(p).or_default().push(r)
                }
                (SanctionKind::AddressBan, _) if r.in_force(now_ms) => {
                    if let Some(net) = r.net() {
                        s.networks.push((net, r));
                    }
                }
                (SanctionKind::Warn | SanctionKind::Rename, Some(p)) if !r.delivered => {
                    s.notices.entry(p).or_default().push(r)
                }
                _ => {}
            }
        }
        s
    }

    /// The mute in force on `player` at `now_ms` that lasts longest.
    pub fn mute_of(&self, player: &PlayerId, now_ms: u64) -> Option<&SanctionRecord> {
        longest(self.mutes.get(player), now_ms)
    }

    /// The ban in force on `player` at `now_ms` that lasts longest.
    pub fn ban_of(&self, player: &PlayerId, now_ms: u64) -> Option<&SanctionRecord> {
        longest(self.bans.get(player), now_ms)
    }

    /// An address ban in force at `now_ms` whose network holds `ip`.
    pub fn address_ban(&self, ip: IpAddr, now_ms: u64) -> Option<&SanctionRecord> {
        self.networks
            .iter()
            .find(|(net, r)| r.in_force(now_ms) && network_contains(net, ip))
            .map(|(_, r)| r)
    }

    /// The notices owed to `player`, oldest first.
    pub fn notices_of(&self, player: &PlayerId) -> &[SanctionRecord] {
        self.notices.get(player).map(Vec::as_slice).unwrap_or(&[])
    }

    fn ids(map: &HashMap<PlayerId, Vec<SanctionRecord>>) -> HashSet<&str> {
        map.values().flatten().map(|r| r.id.as_str()).collect()
    }
}

/// The sanction of `list` in force at `now_ms` that runs longest (`None` until: for good).
fn longest(list: Option<&Vec<SanctionRecord>>, now_ms: u64) -> Option<&SanctionRecord> {
    list?
        .iter()
        .filter(|r| r.in_force(now_ms))
        .max_by_key(|r| r.until_ms.unwrap_or(u64::MAX))
}

/// What changed between two loads, as this node must act on it.
#[derive(Debug, Default)]
pub struct Changes {
    /// New bans: tell the player's connections here, end them, close their rooms here.
    pub banned: Vec<SanctionRecord>,
    /// New mutes: tell the player's connections here.
    pub muted: Vec<SanctionRecord>,
    /// Mutes undone (not run out): tell the player they may chat again.
    pub unmuted: Vec<SanctionRecord>,
    /// Players with notices owed.
    pub owed: Vec<PlayerId>,
}

impl Changes {
    /// The changes from `before` to `after` at `now_ms`.
    pub fn between(before: &Standing, after: &Standing, now_ms: u64) -> Changes {
        let (old_bans, old_mutes) = (Standing::ids(&before.bans), Standing::ids(&before.mutes));
        let new_mutes = Standing::ids(&after.mutes);
        let fresh = |map: &HashMap<PlayerId, Vec<SanctionRecord>>, old: &HashSet<&str>| {
            map.values()
                .flatten()
                .filter(|r| !old.contains(r.id.as_str()))
                .cloned()
                .collect::<Vec<_>>()
        };
        let unmuted = before
            .mutes
            .values()
            .flatten()
            .filter(|r| !new_mutes.contains(r.id.as_str()) && r.in_force(now_ms))
            .filter(|r| {
                let p = r.player.as_ref();
                p.is_none_or(|p| after.mute_of(p, now_ms).is_none())
            })
            .cloned()
            .collect();
        Changes {
            banned: fresh(&after.bans, &old_bans),
            muted: fresh(&after.mutes, &old_mutes),
            unmuted,
            owed: after.notices.keys().cloned().collect(),
        }
    }

    /// Acts on this node: notices to the players' connections here, a banned player's
    /// connections ended and their waiting rooms here closed, owed notices shown (and
    /// marked shown) to players connected here.
    pub async fn enforce(self, hub: &Hub) {
        for ban in &self.banned {
            let Some(player) = &ban.player else { continue };
            let told = notice(ban, false);
            for conn in hub.players.connections(player) {
                conn.send_msg(&told);
                conn.end(BANNED_CLOSE.0, BANNED_CLOSE.1);
            }
            super::actions::close_rooms_here(hub, player).await;
        }
        for (list, lifted) in [(&self.muted, false), (&self.unmuted, true)] {
            for mute in list {
                let Some(player) = &mute.player else { continue };
                let told = notice(mute, lifted);
                for conn in hub.players.connections(player) {
                    conn.send_msg(&told);
                }
            }
        }
        for player in self.owed {
            if hub.players.is_online(&player) {
                deliver_notices(hub, &player).await;
            }
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
        for conn in hub.players.connections(player) {
            conn.send_msg(&told);
        }
        sanction.delivered = true;
        if let Err(e) = hub.store.moderation().save_sanction(&sanction).await {
            tracing::warn!(error = %e, sanction = %sanction.id, "notice shown but not marked");
            // Shown again at a later chance rather than lost.
            hub.moderation.shown.lock().remove(&sanction.id);
        }
    }
}
