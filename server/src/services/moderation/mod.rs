//! Moderation on a node: the sanctions in force here (mutes, bans, address bans) and the
//! notices still owed to players, reloaded from the store whenever its moderation version
//! moves, and what each reload makes this node do to its own connections and rooms.
//!
//! Why a poll of the store's version rather than a bus message: a sanction must hold on
//! every node within a second whatever else happens (a bus reconnect, a node started after
//! the sanction); the store is where the sanction lives, a version read every
//! [`POLL`] costs one small `GET`, and the same loop serves one node and a cluster — one
//! seam, one behaviour. The loop itself, the operator's actions and the reports, which need
//! the hub (games, rooms, connections), are [`crate::services::moderator`]'s: this module
//! is what the hub holds.

pub mod operators;
pub mod standing;
pub mod words;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use stoa_protocol::wire::{ErrorCode, ModerationAction, ServerMessage};

use crate::domain::moderation::{SanctionKind, SanctionRecord};
use crate::error::ApiError;
use crate::ids::PlayerId;
pub use operators::Operators;
pub use standing::Standing;
pub use words::WordFilter;

/// How often a node reads the store's moderation version.
pub const POLL: Duration = Duration::from_millis(250);

/// The close code and reason of a renamed player's connections (they reconnect and say
/// hello again, under the new name).
pub const RENAMED_CLOSE: (u16, &str) = (4409, "name reset");

/// The close code and reason of a banned player's connections.
pub const BANNED_CLOSE: (u16, &str) = (4403, "banned");

/// This node's view of moderation.
pub struct Moderation {
    pub(crate) standing: RwLock<Arc<Standing>>,
    /// The version the standing set was loaded at (`None`: never loaded).
    pub(crate) loaded: Mutex<Option<u64>>,
    /// Held through a reload: the poll and an operator's action on this node may reload at
    /// once, and two reloads interleaved could put an older set back (and act twice).
    pub(crate) reloading: tokio::sync::Mutex<()>,
    /// The notices (warnings, renames) this node has shown, by sanction id: the standing
    /// set still lists a notice until the next reload after it was marked shown, and a
    /// `hello` and a reload may both try to show it; each is shown here once.
    pub(crate) shown: Mutex<std::collections::HashSet<String>>,
    /// The operators (`--admin-file`).
    pub operators: Operators,
    /// The deployment's word filter (`--word-filter`).
    pub words: WordFilter,
}

impl std::fmt::Debug for Moderation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Moderation").finish_non_exhaustive()
    }
}

impl Moderation {
    /// Nothing loaded yet; `operators` and `words` from the configuration.
    pub fn new(operators: Operators, words: WordFilter) -> Self {
        Moderation {
            standing: RwLock::new(Arc::new(Standing::default())),
            loaded: Mutex::new(None),
            reloading: tokio::sync::Mutex::new(()),
            shown: Mutex::new(std::collections::HashSet::new()),
            operators,
            words,
        }
    }

    /// The sanctions in force here now.
    pub fn standing(&self) -> Arc<Standing> {
        self.standing.read().clone()
    }

    /// `forbidden` while `player` is muted: what a chat line of theirs is answered.
    pub fn check_chat(&self, player: &PlayerId, now_ms: u64) -> Result<(), ApiError> {
        match self.standing().mute_of(player, now_ms) {
            Some(mute) => Err(ApiError::new(ErrorCode::Forbidden, mute_message(mute))),
            None => Ok(()),
        }
    }

    /// `unauthorized` while `player` is banned: what their `hello` is answered.
    pub fn check_hello(&self, player: &PlayerId, now_ms: u64) -> Result<(), ApiError> {
        match self.standing().ban_of(player, now_ms) {
            Some(ban) => Err(ApiError::new(ErrorCode::Unauthorized, ban_message(ban))),
            None => Ok(()),
        }
    }

    /// Claims the showing of notice `id` on this node: `true` the first time only.
    pub fn claim_notice(&self, id: &str) -> bool {
        self.shown.lock().insert(id.to_string())
    }

    /// Whether new connections from `ip` are refused now.
    pub fn address_banned(&self, ip: IpAddr, now_ms: u64) -> bool {
        self.standing().address_ban(ip, now_ms).is_some()
    }
}

/// What a muted player is told.
pub fn mute_message(mute: &SanctionRecord) -> String {
    match mute.until_ms {
        Some(until) => format!(
            "you are muted until {}: {}",
            crate::time::utc_text(until),
            mute.reason
        ),
        None => format!("you are muted: {}", mute.reason),
    }
}

/// What a banned player is told.
pub fn ban_message(ban: &SanctionRecord) -> String {
    match ban.until_ms {
        Some(until) => format!(
            "this account is banned until {}: {}",
            crate::time::utc_text(until),
            ban.reason
        ),
        None => format!("this account is banned: {}", ban.reason),
    }
}

/// The notice a player is sent for `sanction` (`unmute` when `lifted`).
pub fn notice(sanction: &SanctionRecord, lifted: bool) -> ServerMessage {
    let (action, message) = match (sanction.kind, lifted) {
        (SanctionKind::Mute, true) => (
            ModerationAction::Unmute,
            "an operator lifted your mute: you may chat again".to_string(),
        ),
        (SanctionKind::Mute, false) => (ModerationAction::Mute, mute_message(sanction)),
        (SanctionKind::Ban, _) => (ModerationAction::Ban, ban_message(sanction)),
        (SanctionKind::Rename, _) => (
            ModerationAction::Rename,
            format!(
                "an operator reset your name ({}): choose another one",
                sanction.reason
            ),
        ),
        (SanctionKind::Warn | SanctionKind::AddressBan, _) => (
            ModerationAction::Warn,
            format!("a warning from the operators: {}", sanction.reason),
        ),
    };
    ServerMessage::Moderation {
        action,
        reason: sanction.reason.clone(),
        until_ms: sanction.until_ms,
        message,
    }
}
