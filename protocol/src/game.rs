//! The one trait every rules engine implements, and the vocabulary around it.
//!
//! The trait is generic (associated `Options` and `Action` types) so that engines stay
//! allocation-free and fast on the hot paths — validation, bots, perft. The server and the
//! tools never name a concrete game: they go through [`crate::registry`], which erases the
//! type behind [`crate::AnyGame`].

use std::fmt::Debug;
use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One of the two seats of a game, independent of colour names.
///
/// `First` is the side that acts first (Ūnane black, Staku white, Akron vert, Akunur light).
/// Colour names live in [`Game::SIDE_NAMES`], so generic code never hard-codes them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The side that acts first.
    First,
    /// The side that acts second.
    Second,
}

impl Side {
    /// 0 for `First`, 1 for `Second`: the index into [`Game::SIDE_NAMES`] and per-side arrays.
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }

    /// The other side.
    #[inline]
    pub const fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// The side with this index (0 or 1; anything else is `Second`).
    #[inline]
    pub const fn from_index(i: usize) -> Side {
        if i == 0 {
            Side::First
        } else {
            Side::Second
        }
    }
}

/// Why a game ended, with exactly the names protocol/docs/PROTOCOL.md gives (`snake_case` on the wire).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Akron: a connection between the player's two edges.
    Connection,
    /// Staku: a palace taken.
    Palace,
    /// Akunur: enough corners controlled.
    Corners,
    /// Ūnane: all stones in one group.
    OneGroup,
    /// The player to act has no legal action and loses.
    NoMoves,
    /// A player resigned.
    Resign,
    /// A player ran out of time.
    Timeout,
    /// Both players agreed to a draw.
    Agreement,
    /// Staku: the no-capture counter reached 0.
    NoCaptureLimit,
    /// Third occurrence of a position.
    Repetition,
    /// Akunur: two consecutive passes.
    Passes,
    /// Aborted before both sides acted.
    Aborted,
    /// A player left and the opponent claimed the win.
    Abandoned,
    /// An operator banned a player: the banned side loses.
    Banned,
}

impl Reason {
    /// The wire name of the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Connection => "connection",
            Reason::Palace => "palace",
            Reason::Corners => "corners",
            Reason::OneGroup => "one_group",
            Reason::NoMoves => "no_moves",
            Reason::Resign => "resign",
            Reason::Timeout => "timeout",
            Reason::Agreement => "agreement",
            Reason::NoCaptureLimit => "no_capture_limit",
            Reason::Repetition => "repetition",
            Reason::Passes => "passes",
            Reason::Aborted => "aborted",
            Reason::Abandoned => "abandoned",
            Reason::Banned => "banned",
        }
    }
}

/// How a game ended: a winner (or `None` for a draw) and the reason.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winning side, `None` for a draw.
    pub winner: Option<Side>,
    /// Why the game ended.
    pub reason: Reason,
}

/// Everything that can go wrong when driving a rules engine from untrusted text.
///
/// Each variant carries a message written for a person; the server forwards it in
/// `error.message` and the CLI prints it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RulesError {
    /// The game kind is not one of the registered ids.
    #[error("unknown game kind '{0}' (expected one of: unane, staku, akron, akunur)")]
    UnknownKind(String),
    /// Options failed to deserialize or to validate.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// A position string could not be parsed or describes an impossible position.
    #[error("invalid position: {0}")]
    InvalidPosition(String),
    /// A move's text is not in the game's notation.
    #[error("unparsable move '{text}': {reason}")]
    BadNotation {
        /// The text as received.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A well-formed move that is not legal in the current position.
    #[error("illegal move '{text}': {reason}")]
    IllegalMove {
        /// The text as received.
        text: String,
        /// Why it is not legal.
        reason: String,
    },
    /// The game has ended; no action is legal.
    #[error("the game is over")]
    GameOver,
}

impl RulesError {
    /// Shorthand for [`RulesError::BadNotation`].
    pub fn notation(text: &str, reason: impl Into<String>) -> Self {
        RulesError::BadNotation {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`RulesError::IllegalMove`].
    pub fn illegal(text: &str, reason: impl Into<String>) -> Self {
        RulesError::IllegalMove {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`RulesError::InvalidOptions`].
    pub fn options(reason: impl Into<String>) -> Self {
        RulesError::InvalidOptions(reason.into())
    }

    /// Shorthand for [`RulesError::InvalidPosition`].
    pub fn position(reason: impl Into<String>) -> Self {
        RulesError::InvalidPosition(reason.into())
    }
}

/// A rules engine: one game's options, positions, actions and end conditions.
///
/// A value of the implementing type is a complete game state (including any history the
/// rules need, such as repetition counts), so cloning it and applying actions is all a
/// search or a server needs. Actions are compact `Copy` values; text only appears at the
/// edges through [`Game::parse_action`] and [`Game::format_action`].
///
/// Adding a game is one new file implementing this trait and one line in
/// [`crate::registry::KINDS`].
pub trait Game: Clone + Debug + Send + Sync + 'static {
    /// The game's options, as given by clients (`serde`, every field defaulted).
    type Options: Serialize + DeserializeOwned + Default + Clone + Debug + PartialEq + Send + Sync;
    /// One action (a whole turn where the rules say so, e.g. Staku).
    type Action: Copy + Eq + Hash + Debug + Send + Sync;

    /// The game id used on the wire (`unane`, `staku`, …).
    const KIND: &'static str;
    /// Side names on the wire, indexed by [`Side::index`] (the first-acting side first).
    const SIDE_NAMES: [&'static str; 2];

    /// Checks options and fills in derived defaults, returning the options the game runs with.
    fn validate_options(options: Self::Options) -> Result<Self::Options, RulesError>;

    /// The start position for (validated) options.
    fn start(options: &Self::Options) -> Self;

    /// Parses a position string for (validated) options. Loading a position never ends a
    /// game by itself unless the page says the string records that (e.g. Staku's counter 0).
    fn from_position(options: &Self::Options, position: &str) -> Result<Self, RulesError>;

    /// The canonical position string.
    fn position(&self) -> String;

    /// The side to act, `None` once the game has ended.
    fn to_act(&self) -> Option<Side>;

    /// The result by rule, `None` while the game is on.
    fn outcome(&self) -> Option<Outcome>;

    /// Appends every legal action to `out` (nothing when the game has ended). Each distinct
    /// action appears once.
    fn legal_actions(&self, out: &mut Vec<Self::Action>);

    /// Applies a legal action. Calling it with an action that [`Game::legal_actions`] does
    /// not list is a logic error (it may panic or corrupt the state); use [`Game::check`].
    fn apply(&mut self, action: Self::Action);

    /// Parses notation (any accepted input form) into an action in this position.
    /// Succeeds for well-formed text even when the action is illegal; legality is [`Game::check`].
    fn parse_action(&self, text: &str) -> Result<Self::Action, RulesError>;

    /// The canonical notation of an action in this position (before it is applied).
    fn format_action(&self, action: Self::Action) -> String;

    /// Whether the action is the pie-rule swap (the server then exchanges the players' seats).
    fn is_swap(&self, _action: Self::Action) -> bool {
        false
    }

    /// The game-specific JSON view of the state for clients (`state` in the game document):
    /// only what changes during a game, each fact once (the side to act, the ply and the
    /// static geometry are elsewhere), so a move's patch is a few replaced members.
    fn view(&self) -> serde_json::Value;

    /// Whether [`Game::view_changes`] is implemented: only then does a caller keep the
    /// state before an action to ask for them.
    const VIEW_CHANGES: bool = false;

    /// The members of [`Game::view`] whose values differ from `before`'s view (an earlier
    /// state of this game), each as a JSON pointer below the view (`/rows/3/5`) and its new
    /// value: what an action changed, found from the compact state instead of building and
    /// comparing two whole views, so its cost does not grow with the board. Replacing
    /// exactly these members in `before.view()` gives `self.view()`. `None` (the default):
    /// the engine cannot tell; compare the views.
    fn view_changes(&self, before: &Self) -> Option<Vec<(String, serde_json::Value)>> {
        let _ = before;
        None
    }

    /// As [`Game::view_changes`], for a state that goes on being played (a server's game):
    /// the engine may keep in `self` what it learnt, so the next action's changes cost
    /// less (Ūnane keeps its group counts). What it returns is what `view_changes` would.
    fn view_changes_kept(&mut self, before: &Self) -> Option<Vec<(String, serde_json::Value)>> {
        self.view_changes(before)
    }

    /// The static geometry clients draw the view on (cell names and coordinates, layout,
    /// special cells), for these options: the same for every game with them, so it is not
    /// in any game document. Its objects and arrays line up with the view's: merging the
    /// two member by member gives everything a drawing needs.
    fn geometry(&self) -> serde_json::Value {
        serde_json::Value::Object(serde_json::Map::new())
    }

    /// `Ok` when `action` is legal here; otherwise an error whose message says why.
    /// Engines may override this with a faster check or more specific reasons.
    fn check(&self, action: Self::Action) -> Result<(), RulesError> {
        if self.outcome().is_some() {
            return Err(RulesError::GameOver);
        }
        let mut legal = Vec::new();
        self.legal_actions(&mut legal);
        if legal.contains(&action) {
            Ok(())
        } else {
            Err(RulesError::illegal(
                &self.format_action(action),
                "not a legal action in this position",
            ))
        }
    }

    /// Number of distinct action sequences of exactly `depth` actions (ended games are not
    /// extended). Engines may override this with a faster count.
    fn perft(&self, depth: u32) -> u64 {
        crate::perft::perft(self, depth)
    }
}
