//! Terms of a game's requests: its clock and the draw actions.

use serde::{Deserialize, Serialize};

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
