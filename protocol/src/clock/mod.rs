//! Clock maths for protocol/docs/PROTOCOL.md's Clocks section: time controls, turn accounting, flags,
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
//!
//! # How the game actor drives it
//! - Game start: `Clock::new(tc)?`, one [`LagCompensator::for_time_control`] per *player*,
//!   then `clock.start_turn(to_act, now)`; arm the abort timer at
//!   [`Clock::first_action_deadline`].
//! - Every measured WebSocket round trip of a seated player's connection:
//!   `comp[player].record_rtt(rtt)`.
//! - An action by the side to act that does not end its turn (Akunur's move before its
//!   bonus placement): `clock.check_flag(now, comp.grace_ms())` first; a flag ends the game.
//! - An action that ends the turn (the other side is now to act, or the game ended by rule):
//!   `credit = if clock.running() == Some(side) { comp.credit(claimed) } else { 0 }`, then
//!   `clock.end_turn(side, now, credit)`. `Err(Flagged)`: the move arrived too late; do not
//!   apply it, end the game `timeout`. Otherwise apply it; after a swap call
//!   [`Clock::swap_sides`]; if the game goes on `clock.start_turn(next, now)`.
//! - After every change: publish [`Clock::to_json`] as the document's `clock`, and re-arm one
//!   timer at `flag_deadline() + grace_ms()` of the running player (or at
//!   `first_action_deadline()` before both first actions). When it fires:
//!   [`Clock::check_flag`] → `timeout`; [`Clock::check_first_action`] → `aborted`.
//! - Resign, agreed draw, abort, abandonment: [`Clock::stop`].
//! - Shutdown: [`Clock::pause`], persist (the clock and compensators are serde); restore:
//!   deserialize, `pause(last_persisted_ms)` if it was not paused, then [`Clock::resume`].
//!
//! ```
//! use stoa_protocol::clock::{Clock, LagCompensator, TimeControl};
//! use stoa_protocol::Side::{First, Second};
//!
//! let tc: TimeControl = "5+3".parse().unwrap();
//! let mut clock = Clock::new(tc).unwrap();
//! let mut lag = [LagCompensator::for_time_control(&tc), LagCompensator::for_time_control(&tc)];
//! let t = 1_000_000;
//! clock.start_turn(First, t);
//! clock.end_turn(First, t + 4_000, 0).unwrap(); // first actions are not charged
//! clock.start_turn(Second, t + 4_000);
//! clock.end_turn(Second, t + 9_000, 0).unwrap();
//! clock.start_turn(First, t + 9_000);
//! assert_eq!(clock.flag_deadline(), Some(t + 9_000 + 300_000));
//! lag[0].record_rtt(400); // 200 ms each way
//! let credit = lag[0].credit(None);
//! let turn = clock.end_turn(First, t + 12_000, credit).unwrap();
//! assert_eq!(turn.main_ms, 300_000 - 2_800 + 3_000);
//! ```

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
/// (protocol/docs/PROTOCOL.md: 30 s, or the side's initial time if shorter).
pub const FIRST_ACTION_MS: u64 = 30 * SECOND_MS;

/// How long a seated player must have had no connection before the opponent may
/// `game.claim` (protocol/docs/PROTOCOL.md: 60 s, or the remaining clock if shorter; see
/// [`Clock::abandonment_timeout_ms`]).
pub const ABANDONMENT_MS: u64 = 60 * SECOND_MS;
