//! Moderation's records: reports by players, sanctions by operators, and the audit log of
//! every operator action — as they are stored, and the rules that say which sanctions are in
//! force.
//!
//! Why plain values: every node enforces the same sanctions, loaded from the store; the
//! store, the enforcement on each node, the admin API and the tests all read these types,
//! and what is "in force" must be decided by one function, not by each of them.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use stoa_protocol::wire::ReportReason;

use crate::ids::{GameId, PlayerId, RoomCode};

/// How many lines before and after a reported chat line a report keeps.
pub const CONTEXT_LINES: usize = 5;

/// The most characters a report's text may have.
pub const REPORT_TEXT_MAX: usize = 500;

/// The most characters an operator's reason may have.
pub const REASON_MAX: usize = 500;

/// A chat line kept in a report (the reported line and the lines around it), so the
/// operator reads it after the chat itself is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextLine {
    /// The game chat's channel (`players`/`spectators`); absent for a room's chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The author.
    pub id: PlayerId,
    /// The author's name then.
    pub name: String,
    /// The text.
    pub text: String,
    /// When it was said (server ms).
    pub ts: u64,
    /// `true` on the reported line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reported: bool,
}

/// How a report was closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportClosed {
    /// The operator.
    pub by: String,
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// The action taken, in the operator's words (`"muted 24 h"`, `"nothing"`).
    pub action: String,
}

/// A player's report about another player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportRecord {
    /// `r` and 12 base32 letters.
    pub id: String,
    /// Who reported.
    pub reporter: PlayerId,
    /// The reporter's name then.
    pub reporter_name: String,
    /// Who is reported.
    pub target: PlayerId,
    /// The reported player's name then.
    pub target_name: String,
    /// Why.
    pub reason: ReportReason,
    /// The reporter's words (may be empty).
    pub text: String,
    /// The game concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<GameId>,
    /// The waiting room whose chat is concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<RoomCode>,
    /// The reported chat line and the lines around it, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextLine>,
    /// When it was made (ms since the epoch).
    pub created_ms: u64,
    /// Set once an operator closed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<ReportClosed>,
}

/// What a sanction does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SanctionKind {
    /// A warning the player sees once.
    Warn,
    /// Chat lines refused until `until_ms`.
    Mute,
    /// Every token of the player refused; live games lost, rooms closed.
    Ban,
    /// New connections from an address or network refused until `until_ms`.
    AddressBan,
    /// The player's name was reset to a neutral one.
    Rename,
}

impl SanctionKind {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SanctionKind::Warn => "warn",
            SanctionKind::Mute => "mute",
            SanctionKind::Ban => "ban",
            SanctionKind::AddressBan => "address_ban",
            SanctionKind::Rename => "rename",
        }
    }
}

/// How a sanction was undone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undone {
    /// The operator.
    pub by: String,
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// Why.
    pub reason: String,
}

/// An operator's sanction on a player or on a network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SanctionRecord {
    /// `s` and 12 base32 letters.
    pub id: String,
    /// What it does.
    pub kind: SanctionKind,
    /// The player (all kinds but `address_ban`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<PlayerId>,
    /// The network (`address_ban`), in CIDR form (`203.0.113.7/32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The operator's reason.
    pub reason: String,
    /// The operator.
    pub by: String,
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// Until when (ms since the epoch); `None`: for good (bans) or not timed (warnings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// A rename: the name it took away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_name: Option<String>,
    /// A warning: whether the player has been shown it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delivered: bool,
    /// Set when an operator undid it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone: Option<Undone>,
}

impl SanctionRecord {
    /// Whether it still acts at `now_ms`: not undone and not run out. Warnings and renames
    /// act once, when given; they are never "in force".
    pub fn in_force(&self, now_ms: u64) -> bool {
        matches!(
            self.kind,
            SanctionKind::Mute | SanctionKind::Ban | SanctionKind::AddressBan
        ) && self.undone.is_none()
            && self.until_ms.is_none_or(|until| until > now_ms)
    }

    /// Whether every node must hold it: in force now or later, or a notice (a warning, a
    /// rename) the player has not been shown yet. The stores keep these in their standing
    /// set; the rest is history.
    pub fn standing(&self) -> bool {
        self.in_force(0)
            || (matches!(self.kind, SanctionKind::Warn | SanctionKind::Rename)
                && !self.delivered
                && self.undone.is_none())
    }

    /// The network of an address ban, parsed.
    pub fn net(&self) -> Option<IpNet> {
        self.network.as_deref().and_then(parse_network)
    }
}

/// One operator action in the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// The operator.
    pub by: String,
    /// What (`warn`, `mute`, `ban`, `address_ban`, `rename`, `undo`, `close_report`,
    /// `close_room`, `abort_game`).
    pub action: String,
    /// Whom or what: a player id, a network, a room code, a game id, a report id.
    pub target: String,
    /// The operator's reason.
    pub reason: String,
    /// What came of it (the sanction's id, the games ended, …), for the reader.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// An address or a network in CIDR form (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`);
/// a bare address is its own /32 or /128.
pub fn parse_network(text: &str) -> Option<IpNet> {
    let text = text.trim();
    if let Ok(net) = text.parse::<IpNet>() {
        return Some(net.trunc());
    }
    text.parse::<IpAddr>().ok().map(IpNet::from)
}

/// Whether `addr` is in `net`, an IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`, as a
/// dual-stack listener reports it) counted as the IPv4 address.
pub fn network_contains(net: &IpNet, addr: IpAddr) -> bool {
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(addr),
        v4 => v4,
    };
    net.contains(&addr)
}

/// A checked operator's reason: trimmed, 1-500 characters.
pub fn checked_reason(reason: &str) -> Result<String, String> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err("a reason is required".into());
    }
    let n = reason.chars().count();
    if n > REASON_MAX {
        return Err(format!(
            "a reason may be at most {REASON_MAX} characters (this one has {n})"
        ));
    }
    Ok(reason.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sanction(kind: SanctionKind, until_ms: Option<u64>) -> SanctionRecord {
        SanctionRecord {
            id: "s1".into(),
            kind,
            player: Some("p1".into()),
            network: None,
            reason: "r".into(),
            by: "op".into(),
            at_ms: 10,
            until_ms,
            old_name: None,
            delivered: false,
            undone: None,
        }
    }

    #[test]
    fn in_force_until_it_runs_out_or_is_undone() {
        assert!(sanction(SanctionKind::Mute, Some(100)).in_force(99));
        assert!(!sanction(SanctionKind::Mute, Some(100)).in_force(100));
        assert!(sanction(SanctionKind::Ban, None).in_force(u64::MAX));
        assert!(!sanction(SanctionKind::Warn, None).in_force(0));
        assert!(!sanction(SanctionKind::Rename, None).in_force(0));
        let mut undone = sanction(SanctionKind::Ban, None);
        undone.undone = Some(Undone {
            by: "op".into(),
            at_ms: 20,
            reason: "appeal".into(),
        });
        assert!(!undone.in_force(0));
    }

    #[test]
    fn networks_parse_and_contain_mapped_addresses() {
        let net = parse_network("203.0.113.9/24").unwrap();
        assert_eq!(net.to_string(), "203.0.113.0/24");
        assert!(network_contains(&net, "203.0.113.200".parse().unwrap()));
        assert!(network_contains(
            &net,
            "::ffff:203.0.113.1".parse().unwrap()
        ));
        assert!(!network_contains(&net, "203.0.114.1".parse().unwrap()));
        assert_eq!(
            parse_network("10.0.0.1").unwrap().to_string(),
            "10.0.0.1/32"
        );
        assert!(parse_network("10.0.0.1/33").is_none());
        assert!(parse_network("example.com").is_none());
        let v6 = parse_network("2001:db8::/32").unwrap();
        assert!(network_contains(&v6, "2001:db8::1".parse().unwrap()));
    }

    #[test]
    fn reasons_are_checked() {
        assert_eq!(checked_reason("  spam ").unwrap(), "spam");
        assert_eq!(checked_reason(" ").unwrap_err(), "a reason is required");
        assert!(checked_reason(&"x".repeat(501)).is_err());
    }
}
