//! Clock maths for PROTOCOL.md's Clocks section: time controls, turn accounting, flags,
//! the first-action rule, abandonment timeouts and lichess-style lag compensation.
//!
//! Everything here is pure and deterministic: every time is a `u64` of milliseconds since
//! the Unix epoch (or any other fixed origin) passed in by the caller, so the server's game
//! actor drives the clock from its own time source and tests run on virtual time.
//!
//! - [`TimeControl`]: what a room or queue asks for (`clock` in requests), its validation,
//!   and its short label (`5+3`, `byoyomi:10m/5x30s`, `corr:3d`, `none`).
//! - [`Clock`]: one game's clock state for both sides, turn by turn.
//! - [`LagCompensator`]: one per player per game; turns measured round trips into a capped
//!   per-move credit.
//! - [`TimeSource`]: where "now" comes from ([`SystemTimeSource`] or [`VirtualTime`]).
//!
//! Turn accounting is the caller's: a turn is a player's actions until the other side is to
//! act, so the actor calls [`Clock::end_turn`] only when the side to act changes (Staku: one
//! action; Akunur: a move plus its owed bonus placement; a pie-rule swap is a turn).

mod label;
mod lag;
mod source;
mod state;
mod time_control;

pub use lag::{LagCompensator, LagParams, MAX_RTT_SAMPLE_MS};
pub use source::{SystemTimeSource, TimeSource, VirtualTime};
pub use state::{first_action_deadline, Clock, Flagged, TurnResult};
pub use time_control::{TimeControl, TimeControlError};

/// One second in milliseconds.
pub const SECOND_MS: u64 = 1_000;
/// One minute in milliseconds.
pub const MINUTE_MS: u64 = 60 * SECOND_MS;
/// One hour in milliseconds.
pub const HOUR_MS: u64 = 60 * MINUTE_MS;
/// One day in milliseconds (correspondence turns are whole days).
pub const DAY_MS: u64 = 24 * HOUR_MS;

/// The longest a side may take over its first action before the game is aborted
/// (PROTOCOL.md: 30 s, or the side's initial time if shorter).
pub const FIRST_ACTION_MS: u64 = 30 * SECOND_MS;

/// How long a seated player must have had no connection before the opponent may
/// `game.claim` (PROTOCOL.md: 60 s, or the remaining clock if shorter; see
/// [`Clock::abandonment_timeout_ms`]).
pub const ABANDONMENT_MS: u64 = 60 * SECOND_MS;
