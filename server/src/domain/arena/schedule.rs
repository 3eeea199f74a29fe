//! An arena's timeline: when pairing stops (the cut-off) and its status at a moment.

use stoa_protocol::clock::TimeControl;

/// An arena's status.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArenaStatus {
    /// Before the start: players may join, nobody is paired.
    Scheduled,
    /// Pairing players (until the cut-off).
    Running,
    /// Over: the standings are final once the last games end.
    Finished,
    /// Cancelled by its creator before the start.
    Cancelled,
}

impl ArenaStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ArenaStatus::Scheduled => "scheduled",
            ArenaStatus::Running => "running",
            ArenaStatus::Finished => "finished",
            ArenaStatus::Cancelled => "cancelled",
        }
    }

    /// Scheduled or running.
    pub fn is_open(self) -> bool {
        matches!(self, ArenaStatus::Scheduled | ArenaStatus::Running)
    }

    /// The status at `now` of an arena not cancelled.
    pub fn at(now: u64, starts_at: u64, ends_at: u64) -> ArenaStatus {
        if now < starts_at {
            ArenaStatus::Scheduled
        } else if now < ends_at {
            ArenaStatus::Running
        } else {
            ArenaStatus::Finished
        }
    }
}

/// One side's whole initial time under `tc` (main time, plus byo-yomi periods); `None`
/// for no clock and correspondence (a turn's allowance is not a bound on a game).
pub fn initial_time_ms(tc: &TimeControl) -> Option<u64> {
    match *tc {
        TimeControl::None | TimeControl::Correspondence { .. } => None,
        TimeControl::Byoyomi {
            periods, period_ms, ..
        } => Some(
            tc.starting_main_ms()
                .saturating_add(u64::from(periods).saturating_mul(period_ms)),
        ),
        TimeControl::Fischer { .. } | TimeControl::Delay { .. } => Some(tc.starting_main_ms()),
    }
}

/// When pairing stops: the end minus one side's initial time, so that a game started
/// then can only outlast the end by what its clock allows beyond that; the end itself for
/// arenas without a (bounded) clock. Never before the start.
pub fn cutoff_at(starts_at: u64, ends_at: u64, tc: &TimeControl) -> u64 {
    match initial_time_ms(tc) {
        Some(t) => ends_at.saturating_sub(t).max(starts_at),
        None => ends_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutoff_subtracts_one_sides_initial_time() {
        let f = TimeControl::Fischer {
            initial_ms: 15_000,
            increment_ms: 2_000,
        };
        assert_eq!(cutoff_at(0, 90_000, &f), 75_000);
        let b = TimeControl::Byoyomi {
            initial_ms: 10_000,
            periods: 2,
            period_ms: 5_000,
        };
        assert_eq!(cutoff_at(0, 90_000, &b), 70_000);
        assert_eq!(cutoff_at(0, 90_000, &TimeControl::None), 90_000);
        let c = TimeControl::Correspondence { days_per_turn: 1 };
        assert_eq!(cutoff_at(0, 90_000, &c), 90_000);
        // A clock longer than the arena: no pairing after the start.
        assert_eq!(cutoff_at(50_000, 60_000, &f), 50_000);
    }

    #[test]
    fn status_follows_the_clock() {
        assert_eq!(ArenaStatus::at(9, 10, 20), ArenaStatus::Scheduled);
        assert_eq!(ArenaStatus::at(10, 10, 20), ArenaStatus::Running);
        assert_eq!(ArenaStatus::at(20, 10, 20), ArenaStatus::Finished);
        assert_eq!(ArenaStatus::Running.as_str(), "running");
    }
}
