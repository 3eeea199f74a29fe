//! Terms of a game's requests: its clock and the draw actions.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `clock` object of requests: the time control of [`crate::clock`], whose serde form
/// is exactly the Clocks section's (`kind` selects the other fields).
pub use crate::clock::TimeControl as ClockSpec;

/// Names of all clock kinds, for validating a request's `clock.kind`.
pub const CLOCK_KINDS: [&str; 5] = ["none", "fischer", "delay", "byoyomi", "correspondence"];

/// `game.draw` actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DrawAction {
    /// Offer a draw.
    Offer,
    /// Accept the opponent's offer.
    Accept,
    /// Decline the opponent's offer.
    Decline,
}

/// A practice position as the rules engines see it (the answer to `position.explore`):
/// computed, never a game: nothing is stored, listed or rated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Explored {
    /// Game kind.
    pub kind: String,
    /// The options, every one filled in with its default if not given.
    pub options: Value,
    /// The position string after the moves.
    pub position: String,
    /// The moves played, in canonical notation (as many as were asked for).
    pub moves: Vec<String>,
    /// The side to act; `null` once the game has ended.
    pub to_act: Option<String>,
    /// Every legal action of the side to act, canonical, sorted (empty once ended).
    pub legal: Vec<String>,
    /// `state` `playing` or `ended`, `winner` a side or `null`, `reason` as in a game
    /// document's `status`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "{ state: string, winner: string | null, reason: string | null }")
    )]
    pub status: Value,
    /// The board view, exactly what a game document's `state` carries for this position.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, any>"))]
    pub view: Value,
    /// The static geometry the view is drawn on (as `GET /api/kinds/<kind>` gives it).
    #[cfg_attr(feature = "ts", ts(type = "Record<string, any>"))]
    pub geometry: Value,
}
