//! What the session knows of the game it follows, and what it already said about games.

use serde_json::Value;

use crate::document::Versioned;

/// The followed game's document and what was seen of it; a new game starts from
/// [`Followed::default`].
#[derive(Default)]
pub(super) struct Followed {
    /// The game document.
    pub doc: Option<Versioned>,
    /// The game's last `game.crowd` (spectators, online flags): unversioned and outside the
    /// document. `Null` until one comes.
    pub crowd: Value,
    /// Legal moves at a seq, for completion and `legal`.
    pub legal: Option<(u64, Vec<String>)>,
    /// The draw offer last seen (its side) and the number of moves then.
    pub offer_seen: Option<(String, usize)>,
    /// Our own draw offer was said, at this number of moves: by the answer to our offer or
    /// by the document showing it, whichever came first, so it is said once and before the
    /// opponent's decline.
    pub offer_said: Option<usize>,
    /// Before both first actions: the side to act and its first-move deadline, to tell a
    /// window that ran out from a player's abort (the document says `aborted` for both).
    pub first_move_seen: Option<(String, u64)>,
    /// This session asked to abort the game.
    pub abort_sent: bool,
    /// The time of the newest chat line shown (server ms), so a history sent again after
    /// a reconnect says only what is new.
    pub chat_seen: u64,
    /// Who said something in the chat: each name with its id (the latest one wins), so
    /// `mute <name>` finds whom it means.
    pub chat_authors: std::collections::HashMap<String, String>,
    /// Each chat author's (by id) latest line shown: a `report` points at it.
    pub chat_last: std::collections::HashMap<String, u64>,
}

/// What was already said, so nothing is said twice: each keyed by its game's id, since a
/// late message of the game before (a rematch) must not be said again.
#[derive(Default)]
pub(super) struct Announced {
    /// The moves said so far.
    pub moves: Option<(String, usize)>,
    /// The last `your turn`, at a number of moves.
    pub turn: Option<(String, usize)>,
    /// The game whose end was said.
    pub end: Option<String>,
    /// Rematch requests said, by game and side.
    pub rematch: Vec<(String, String)>,
}
