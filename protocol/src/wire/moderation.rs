//! Moderation as players see it: a report about another player, and the notices of what an
//! operator decided about them (warnings, mutes, renames, bans).
//!
//! Why in the protocol: the web client, the terminal client and the tests send and read
//! these; the operators' own API is HTTP (`/api/admin/…`) and stays in the server.

use serde::{Deserialize, Serialize};

use super::Rid;

/// Why a player is reported: a fixed list, so operators can sort and count reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ReportReason {
    /// Abuse in chat (insults, harassment, spam).
    ChatAbuse,
    /// Cheating (engine help, a second account, fixed games).
    Cheating,
    /// An offensive name.
    OffensiveName,
    /// Anything else (the text says what).
    Other,
}

impl ReportReason {
    /// Every reason, in the order clients offer them.
    pub const ALL: [ReportReason; 4] = [
        ReportReason::ChatAbuse,
        ReportReason::Cheating,
        ReportReason::OffensiveName,
        ReportReason::Other,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportReason::ChatAbuse => "chat_abuse",
            ReportReason::Cheating => "cheating",
            ReportReason::OffensiveName => "offensive_name",
            ReportReason::Other => "other",
        }
    }

    /// The reason named `name` on the wire.
    pub fn parse(name: &str) -> Option<ReportReason> {
        ReportReason::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

/// `report`: a player reports another, optionally pointing at a chat line (of a game's
/// chat or a waiting room's, by its author and `ts`) or at a game. Its fields are the
/// message's own (`{"t":"report","player_id":…}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReportRequest {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// The reported player.
    pub player_id: String,
    /// Why.
    pub reason: ReportReason,
    /// The reporter's words (at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The game concerned (its chat, with `ts`, or the game itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    /// The waiting room whose chat line is reported (with `ts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The reported chat line's `ts` (a line of the reported player in that chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub ts: Option<u64>,
}

/// What an operator did that the player concerned is told (`{"t":"moderation",…}`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ModerationAction {
    /// A warning (shown once).
    Warn,
    /// Chat refused until `until_ms`.
    Mute,
    /// A mute was lifted.
    Unmute,
    /// The player's name was reset: they pick another (`account.rename`/`hello.name`).
    Rename,
    /// Banned: the connection closes after this notice.
    Ban,
}
