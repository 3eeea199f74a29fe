//! [`TimeControl`]: the `clock` object of requests and documents, and its validation.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{DAY_MS, FIRST_ACTION_MS, HOUR_MS, MINUTE_MS, SECOND_MS};

/// A time control, exactly as protocol/docs/PROTOCOL.md's Clocks section writes it on the wire:
/// `{"kind":"none"}`, `{"kind":"fischer","initial_ms","increment_ms"}`,
/// `{"kind":"delay","initial_ms","delay_ms"}`, `{"kind":"byoyomi","initial_ms","periods","period_ms"}`,
/// `{"kind":"correspondence","days_per_turn"}`.
///
/// Deserializing does not validate; call [`TimeControl::validate`] on anything a client sent.
/// Unknown fields are ignored (the document's `clock` carries extra fields such as
/// `remaining_ms`, and clients must be able to read it back as a `TimeControl`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeControl {
    /// No clock: nobody ever loses on time.
    None,
    /// Sudden death plus a Fischer increment added after each of the side's turns.
    Fischer {
        /// Main time of each side. 0 means "start with one increment" (see
        /// [`TimeControl::starting_main_ms`]), as lichess does for `0+N`.
        initial_ms: u64,
        /// Added to the side's main time when it ends a turn in time.
        increment_ms: u64,
    },
    /// Simple (US) delay: the first `delay_ms` of each turn are free; only the rest is
    /// taken from the main time. Unused delay is lost (unlike an increment).
    Delay {
        /// Main time of each side.
        initial_ms: u64,
        /// Free time at the start of every turn.
        delay_ms: u64,
    },
    /// Japanese byo-yomi: main time first, then `periods` periods of `period_ms`. A period
    /// in which a turn ends is reset for the next turn; each period that runs out entirely
    /// is gone; running out of the last one loses.
    Byoyomi {
        /// Main time of each side (may be 0: byo-yomi from the first turn).
        initial_ms: u64,
        /// Number of byo-yomi periods (may be 0: plain sudden death).
        periods: u32,
        /// Length of one period.
        period_ms: u64,
    },
    /// Correspondence: every turn may take up to `days_per_turn` days. Unused time does not
    /// accumulate: each turn starts again from the full allowance.
    Correspondence {
        /// Days allowed for each turn (1..=14).
        days_per_turn: u32,
    },
}

/// Why a time control was refused. Messages are written for a person (the server forwards
/// them in `error.message` with code `invalid_options`; the CLI prints them).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TimeControlError {
    /// The control would give a side no time at all (or so little that network transit alone
    /// would flag it).
    #[error("a {kind} clock must give each side at least {min_ms} ms for its first timed turn (this one gives {got_ms} ms)")]
    TooLittleTime {
        /// The control's kind (`fischer`, …).
        kind: &'static str,
        /// The time the control gives a side's first timed turn.
        got_ms: u64,
        /// The minimum accepted.
        min_ms: u64,
    },
    /// A duration field exceeds its upper bound.
    #[error("{field} of {value_ms} ms is too long (at most {max_ms} ms)")]
    TooLong {
        /// The wire name of the field.
        field: &'static str,
        /// The value given.
        value_ms: u64,
        /// The largest accepted value.
        max_ms: u64,
    },
    /// A byo-yomi period shorter than [`TimeControl::MIN_PERIOD_MS`].
    #[error("period_ms of {value_ms} ms is too short (at least {min_ms} ms when periods > 0)")]
    PeriodTooShort {
        /// The value given.
        value_ms: u64,
        /// The smallest accepted value.
        min_ms: u64,
    },
    /// Too many byo-yomi periods.
    #[error("{periods} byo-yomi periods is too many (at most {max})")]
    TooManyPeriods {
        /// The value given.
        periods: u32,
        /// The largest accepted value.
        max: u32,
    },
    /// Correspondence days outside 1..=14.
    #[error("days_per_turn must be between {min} and {max} (got {days})")]
    Days {
        /// The value given.
        days: u32,
        /// The smallest accepted value.
        min: u32,
        /// The largest accepted value.
        max: u32,
    },
    /// A label (`5+3`, `byoyomi:10m/5x30s`, …) that does not parse.
    #[error("bad clock '{label}': {reason} (expected e.g. none, 5+3, 30s+0, delay:5m/10s, byoyomi:10m/5x30s, corr:3d)")]
    BadLabel {
        /// The text as given.
        label: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl TimeControl {
    /// Upper bound on main time: 24 h. Longer "live" games are correspondence games and
    /// should say so; the bound also keeps every sum in this module far from overflow.
    pub const MAX_MAIN_MS: u64 = 24 * HOUR_MS;
    /// Upper bound on a Fischer increment or a simple delay: 10 min per turn. Anything larger
    /// makes the main time irrelevant; that is correspondence play.
    pub const MAX_PER_TURN_MS: u64 = 10 * MINUTE_MS;
    /// Upper bound on one byo-yomi period: 1 h.
    pub const MAX_PERIOD_MS: u64 = HOUR_MS;
    /// Lower bound on a byo-yomi period when there are periods: 1 s. A shorter period cannot
    /// survive one network round trip plus a human reaction.
    pub const MIN_PERIOD_MS: u64 = SECOND_MS;
    /// Upper bound on the number of byo-yomi periods (traditional play uses 1..=10).
    pub const MAX_PERIODS: u32 = 60;
    /// A side's first timed turn must have at least this much time (1 s): a "zero-time game"
    /// would be decided by transit, not by play.
    pub const MIN_TURN_MS: u64 = SECOND_MS;
    /// Correspondence allowance bounds, in days per turn.
    pub const MIN_DAYS: u32 = 1;
    /// See [`TimeControl::MIN_DAYS`].
    pub const MAX_DAYS: u32 = 14;
    /// A Fischer control with no initial time starts each side with its increment, but never
    /// with less than this (3 s), as lichess does for `0+N`.
    pub const FISCHER_ZERO_START_MS: u64 = 3 * SECOND_MS;

    /// The wire name of the kind (`none`, `fischer`, `delay`, `byoyomi`, `correspondence`).
    pub fn kind(&self) -> &'static str {
        match self {
            TimeControl::None => "none",
            TimeControl::Fischer { .. } => "fischer",
            TimeControl::Delay { .. } => "delay",
            TimeControl::Byoyomi { .. } => "byoyomi",
            TimeControl::Correspondence { .. } => "correspondence",
        }
    }

    /// Whether this control has a clock at all (everything but [`TimeControl::None`]).
    pub fn is_timed(&self) -> bool {
        !matches!(self, TimeControl::None)
    }

    /// Checks the bounds documented on the constants and returns the control unchanged.
    pub fn validate(self) -> Result<TimeControl, TimeControlError> {
        let too_long = |field: &'static str, value_ms: u64, max_ms: u64| {
            if value_ms > max_ms {
                Err(TimeControlError::TooLong {
                    field,
                    value_ms,
                    max_ms,
                })
            } else {
                Ok(())
            }
        };
        match self {
            TimeControl::None => {}
            TimeControl::Fischer {
                initial_ms,
                increment_ms,
            } => {
                too_long("initial_ms", initial_ms, Self::MAX_MAIN_MS)?;
                too_long("increment_ms", increment_ms, Self::MAX_PER_TURN_MS)?;
                if initial_ms == 0 && increment_ms == 0 {
                    return Err(self.too_little(0));
                }
            }
            TimeControl::Delay {
                initial_ms,
                delay_ms,
            } => {
                too_long("initial_ms", initial_ms, Self::MAX_MAIN_MS)?;
                too_long("delay_ms", delay_ms, Self::MAX_PER_TURN_MS)?;
            }
            TimeControl::Byoyomi {
                initial_ms,
                periods,
                period_ms,
            } => {
                too_long("initial_ms", initial_ms, Self::MAX_MAIN_MS)?;
                if periods > Self::MAX_PERIODS {
                    return Err(TimeControlError::TooManyPeriods {
                        periods,
                        max: Self::MAX_PERIODS,
                    });
                }
                too_long("period_ms", period_ms, Self::MAX_PERIOD_MS)?;
                if periods > 0 && period_ms < Self::MIN_PERIOD_MS {
                    return Err(TimeControlError::PeriodTooShort {
                        value_ms: period_ms,
                        min_ms: Self::MIN_PERIOD_MS,
                    });
                }
            }
            TimeControl::Correspondence { days_per_turn } => {
                if !(Self::MIN_DAYS..=Self::MAX_DAYS).contains(&days_per_turn) {
                    return Err(TimeControlError::Days {
                        days: days_per_turn,
                        min: Self::MIN_DAYS,
                        max: Self::MAX_DAYS,
                    });
                }
            }
        }
        if let Some(first) = self.turn_budget_ms(self.starting_main_ms(), self.starting_periods()) {
            if first < Self::MIN_TURN_MS {
                return Err(self.too_little(first));
            }
        }
        Ok(self)
    }

    fn too_little(&self, got_ms: u64) -> TimeControlError {
        TimeControlError::TooLittleTime {
            kind: self.kind(),
            got_ms,
            min_ms: Self::MIN_TURN_MS,
        }
    }

    /// The main time each side starts with (what `remaining_ms` shows before the first turn):
    /// the initial time; for Fischer with no initial time, one increment (at least
    /// [`TimeControl::FISCHER_ZERO_START_MS`]); for correspondence, one turn's allowance;
    /// 0 for no clock.
    pub fn starting_main_ms(&self) -> u64 {
        match *self {
            TimeControl::None => 0,
            TimeControl::Fischer {
                initial_ms: 0,
                increment_ms,
            } => increment_ms.max(Self::FISCHER_ZERO_START_MS),
            TimeControl::Fischer { initial_ms, .. }
            | TimeControl::Delay { initial_ms, .. }
            | TimeControl::Byoyomi { initial_ms, .. } => initial_ms,
            TimeControl::Correspondence { days_per_turn } => u64::from(days_per_turn) * DAY_MS,
        }
    }

    /// The byo-yomi periods each side starts with (0 for every other kind).
    pub fn starting_periods(&self) -> u32 {
        match *self {
            TimeControl::Byoyomi { periods, .. } => periods,
            _ => 0,
        }
    }

    /// How long a turn that starts with `main_ms` of main time and `periods_left` byo-yomi
    /// periods may last before the side flags (`None` without a clock): main time, plus the
    /// delay, plus all remaining periods. A turn flags when its (lag-credited) duration
    /// reaches this budget.
    pub fn turn_budget_ms(&self, main_ms: u64, periods_left: u32) -> Option<u64> {
        match *self {
            TimeControl::None => None,
            TimeControl::Fischer { .. } => Some(main_ms),
            TimeControl::Delay { delay_ms, .. } => Some(main_ms.saturating_add(delay_ms)),
            TimeControl::Byoyomi { period_ms, .. } => {
                Some(main_ms.saturating_add(u64::from(periods_left).saturating_mul(period_ms)))
            }
            TimeControl::Correspondence { days_per_turn } => {
                Some(u64::from(days_per_turn) * DAY_MS)
            }
        }
    }

    /// How long a side may take over its first action before the game is aborted: 30 s, or
    /// the time its first timed turn would have if shorter (protocol/docs/PROTOCOL.md).
    ///
    /// Choices where the protocol's "initial time" is ambiguous: the budget of a first timed
    /// turn counts the delay and all byo-yomi periods (so `byoyomi:0/5x10s` gets 30 s, not 0);
    /// without a clock it is 30 s. Correspondence gets its full per-turn allowance instead:
    /// aborting a days-per-move game after 30 s would make it unplayable, and a correspondence
    /// player who never makes a first move within one turn's allowance has not shown up.
    pub fn first_action_window_ms(&self) -> u64 {
        match self {
            TimeControl::Correspondence { .. } => self.starting_main_ms(),
            _ => match self.turn_budget_ms(self.starting_main_ms(), self.starting_periods()) {
                Some(budget) => budget.min(FIRST_ACTION_MS),
                None => FIRST_ACTION_MS,
            },
        }
    }

    /// A rough length of one side's whole game, used to scale lag compensation
    /// ([`super::LagParams::for_time_control`]): main time plus 40 turns of the per-turn
    /// allowance (increment, delay or period), as lichess estimates `base + 40 × increment`.
    /// `None` for untimed and correspondence games, where seconds do not matter.
    pub fn estimated_side_total_ms(&self) -> Option<u64> {
        let per_turn = match *self {
            TimeControl::None | TimeControl::Correspondence { .. } => return None,
            TimeControl::Fischer { increment_ms, .. } => increment_ms,
            TimeControl::Delay { delay_ms, .. } => delay_ms,
            TimeControl::Byoyomi {
                periods, period_ms, ..
            } => {
                if periods > 0 {
                    period_ms
                } else {
                    0
                }
            }
        };
        Some(
            self.starting_main_ms()
                .saturating_add(per_turn.saturating_mul(40)),
        )
    }
}
