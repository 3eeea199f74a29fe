//! The short label form of a [`TimeControl`], for the lobby, queues and the CLI's `--clock`.
//!
//! Grammar (case-insensitive, surrounding spaces ignored):
//! - `none`
//! - Fischer `A+B` like lichess: a bare `A` is minutes and a bare `B` is seconds
//!   (`5+3` = 5 min + 3 s, `0.5+0` = 30 s + 0); either may carry a unit (`30s+0`, `2s+500ms`).
//! - `delay:A/D` (`delay:5m/10s`)
//! - `byoyomi:A/NxP` (`byoyomi:10m/5x30s`)
//! - `corr:Nd` or `correspondence:N` (`corr:3d`)
//!
//! Durations are a decimal number with an optional unit `ms`, `s`, `m`, `h` or `d`. Without a
//! unit, main times are minutes and per-turn times (increment, delay, period) are seconds,
//! everywhere. The canonical label ([`TimeControl::label`], also `Display`) writes units
//! except for Fischer's lichess form, and always parses back to the same control.

// `u64::is_multiple_of` needs Rust 1.87; the workspace declares rust-version 1.80.
#![allow(clippy::manual_is_multiple_of)]

use std::fmt;
use std::str::FromStr;

use super::{TimeControl, TimeControlError, DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS};

impl TimeControl {
    /// The canonical short label: `none`, `5+3`, `30s+0`, `delay:5m/10s`,
    /// `byoyomi:10m/5x30s`, `corr:3d`.
    pub fn label(&self) -> String {
        match *self {
            TimeControl::None => "none".to_string(),
            TimeControl::Fischer {
                initial_ms,
                increment_ms,
            } => {
                let initial = if initial_ms % MINUTE_MS == 0 {
                    (initial_ms / MINUTE_MS).to_string()
                } else {
                    duration(initial_ms)
                };
                let increment = if increment_ms % SECOND_MS == 0 {
                    (increment_ms / SECOND_MS).to_string()
                } else {
                    duration(increment_ms)
                };
                format!("{initial}+{increment}")
            }
            TimeControl::Delay {
                initial_ms,
                delay_ms,
            } => format!("delay:{}/{}", duration(initial_ms), duration(delay_ms)),
            TimeControl::Byoyomi {
                initial_ms,
                periods,
                period_ms,
            } => format!(
                "byoyomi:{}/{}x{}",
                duration(initial_ms),
                periods,
                duration(period_ms)
            ),
            TimeControl::Correspondence { days_per_turn } => format!("corr:{days_per_turn}d"),
        }
    }

    /// Parses a label (see the module docs for the grammar) and validates the result.
    pub fn parse_label(text: &str) -> Result<TimeControl, TimeControlError> {
        let bad = |reason: &str| TimeControlError::BadLabel {
            label: text.to_string(),
            reason: reason.to_string(),
        };
        let s = text.trim().to_ascii_lowercase();
        let tc = if s == "none" {
            TimeControl::None
        } else if let Some(rest) = s.strip_prefix("delay:") {
            let (a, d) = rest
                .split_once('/')
                .ok_or_else(|| bad("delay needs main/delay, e.g. delay:5m/10s"))?;
            TimeControl::Delay {
                initial_ms: parse_duration(a, MINUTE_MS).map_err(|r| bad(&r))?,
                delay_ms: parse_duration(d, SECOND_MS).map_err(|r| bad(&r))?,
            }
        } else if let Some(rest) = s
            .strip_prefix("byoyomi:")
            .or_else(|| s.strip_prefix("byo-yomi:"))
        {
            let (a, rest) = rest
                .split_once('/')
                .ok_or_else(|| bad("byoyomi needs main/NxPERIOD, e.g. byoyomi:10m/5x30s"))?;
            let (n, p) = rest
                .split_once('x')
                .ok_or_else(|| bad("byoyomi needs main/NxPERIOD, e.g. byoyomi:10m/5x30s"))?;
            TimeControl::Byoyomi {
                initial_ms: parse_duration(a, MINUTE_MS).map_err(|r| bad(&r))?,
                periods: n
                    .trim()
                    .parse()
                    .map_err(|_| bad(&format!("'{n}' is not a number of periods")))?,
                period_ms: parse_duration(p, SECOND_MS).map_err(|r| bad(&r))?,
            }
        } else if let Some(rest) = s
            .strip_prefix("corr:")
            .or_else(|| s.strip_prefix("correspondence:"))
        {
            let ms = parse_duration(rest, DAY_MS).map_err(|r| bad(&r))?;
            if ms % DAY_MS != 0 {
                return Err(bad("correspondence allows whole days per turn"));
            }
            TimeControl::Correspondence {
                days_per_turn: u32::try_from(ms / DAY_MS).map_err(|_| bad("too many days"))?,
            }
        } else if let Some((a, b)) = s.split_once('+') {
            TimeControl::Fischer {
                initial_ms: parse_duration(a, MINUTE_MS).map_err(|r| bad(&r))?,
                increment_ms: parse_duration(b, SECOND_MS).map_err(|r| bad(&r))?,
            }
        } else {
            return Err(bad("unknown form"));
        };
        tc.validate()
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimeControl::parse_label(s)
    }
}

/// A duration with the largest unit that divides it exactly (`0`, `1h`, `10m`, `90s`, `1500ms`).
fn duration(ms: u64) -> String {
    if ms == 0 {
        "0".to_string()
    } else if ms % DAY_MS == 0 {
        format!("{}d", ms / DAY_MS)
    } else if ms % HOUR_MS == 0 {
        format!("{}h", ms / HOUR_MS)
    } else if ms % MINUTE_MS == 0 {
        format!("{}m", ms / MINUTE_MS)
    } else if ms % SECOND_MS == 0 {
        format!("{}s", ms / SECOND_MS)
    } else {
        format!("{ms}ms")
    }
}

/// Parses `12`, `1.5`, `30s`, `500ms`, `2h`, `3d`; a bare number is in `default_unit` ms.
/// The result must be a whole number of milliseconds.
fn parse_duration(text: &str, default_unit: u64) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit_ms = match unit.trim() {
        "" => default_unit,
        "ms" => 1,
        "s" => SECOND_MS,
        "m" | "min" => MINUTE_MS,
        "h" => HOUR_MS,
        "d" => DAY_MS,
        other => return Err(format!("unknown unit '{other}' in '{t}'")),
    };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(format!("'{t}' is not a duration"));
    }
    // Keep the arithmetic exact and far from overflow: at most 12 significant digits.
    let digits = format!("{int}{frac}");
    if digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{t}' is not a duration"));
    }
    let n: u128 = digits
        .parse()
        .map_err(|_| format!("'{t}' is not a duration"))?;
    let scale = 10u128.pow(frac.len() as u32);
    let total = n * u128::from(unit_ms);
    if total % scale != 0 {
        return Err(format!("'{t}' is not a whole number of milliseconds"));
    }
    u64::try_from(total / scale).map_err(|_| format!("'{t}' is too long"))
}
