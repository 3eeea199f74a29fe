//! The sanctions standing on a node: who is muted or banned, which networks are refused,
//! and the notices (warnings, renames) still owed — and what a node does when they change.
//!
//! Why a snapshot replaced whole: every chat line and every `hello` reads it, so it is an
//! immutable value behind an `Arc` (a read is a reference count), rebuilt only when the
//! store's version moves.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use ipnet::IpNet;

use crate::domain::moderation::{network_contains, SanctionKind, SanctionRecord};
use crate::ids::PlayerId;

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
}
