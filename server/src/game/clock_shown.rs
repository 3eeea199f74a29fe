//! What a game document's `clock` member shows, as plain numbers.
//!
//! Why: every event's patch asks whether the clock member changed. Building the member as
//! JSON and comparing it was a tenth of a move's work; comparing these few numbers is not,
//! and when they differ they name the members to replace. The member itself is built
//! by [`ClockDriver::to_json`] (a snapshot); this struct must show exactly what that
//! JSON shows beyond the time control, which never changes within a game.

use serde_json::{json, Value};
use stoa_protocol::clock::TimeControl;
use stoa_protocol::Side;

use crate::game::clock_driver::ClockDriver;

/// The varying members of the clock's JSON: `remaining_ms` (timed clocks),
/// `periods_left` (byo-yomi), `running`, `since`, `first_action_deadline`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClockShown {
    remaining_ms: Option<[u64; 2]>,
    periods_left: Option<[u32; 2]>,
    running: Option<Side>,
    since: Option<u64>,
    first_action_deadline: Option<u64>,
}

impl ClockShown {
    /// What `driver`'s clock shows now.
    pub fn of(driver: &ClockDriver) -> ClockShown {
        let clock = driver.clock();
        let sides = [Side::First, Side::Second];
        let tc = clock.time_control();
        ClockShown {
            remaining_ms: tc.is_timed().then(|| sides.map(|s| clock.main_ms(s))),
            periods_left: matches!(tc, TimeControl::Byoyomi { .. })
                .then(|| sides.map(|s| clock.periods_left(s))),
            running: clock.running(),
            since: clock.since(),
            first_action_deadline: driver.first_action_deadline(),
        }
    }

    /// The members that differ from `before`, as (JSON pointer below `/clock`, new value),
    /// in the member's key order (as a member-by-member diff of the two JSON forms names
    /// them).
    pub fn changes(&self, before: &ClockShown, names: [&str; 2]) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        if let (Some(now), Some(was)) = (self.remaining_ms, before.remaining_ms) {
            for i in 0..2 {
                if now[i] != was[i] {
                    out.push((
                        stoa_protocol::pointer!("remaining_ms", names[i]),
                        json!(now[i]),
                    ));
                }
            }
        }
        if let (Some(now), Some(was)) = (self.periods_left, before.periods_left) {
            for i in 0..2 {
                if now[i] != was[i] {
                    out.push((
                        stoa_protocol::pointer!("periods_left", names[i]),
                        json!(now[i]),
                    ));
                }
            }
        }
        if self.running != before.running {
            let running = self.running.map(|s| names[s.index()]);
            out.push((stoa_protocol::pointer!("running"), json!(running)));
        }
        if self.since != before.since {
            out.push((stoa_protocol::pointer!("since"), json!(self.since)));
        }
        if self.first_action_deadline != before.first_action_deadline {
            let deadline = self.first_action_deadline;
            out.push((
                stoa_protocol::pointer!("first_action_deadline"),
                json!(deadline),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PlayerId;

    const NAMES: [&str; 2] = ["black", "white"];

    /// Applies `changes` to `before`'s JSON: it must give `now`'s JSON exactly, and name
    /// nothing that did not change.
    fn check(before: &ClockDriver, now: &ClockDriver) {
        let (was, is) = (ClockShown::of(before), ClockShown::of(now));
        let mut json = before.to_json(NAMES);
        let changes = is.changes(&was, NAMES);
        for (pointer, value) in &changes {
            let slot = json.pointer_mut(pointer).expect("a member the JSON has");
            assert_ne!(slot, value, "{pointer} did not change");
            *slot = value.clone();
        }
        assert_eq!(json, now.to_json(NAMES));
        assert_eq!(changes.is_empty(), was == is);
    }

    #[test]
    fn changes_turn_each_clock_into_the_next_for_every_time_control() {
        let controls = [
            TimeControl::None,
            TimeControl::Fischer {
                initial_ms: 60_000,
                increment_ms: 2_000,
            },
            TimeControl::Delay {
                initial_ms: 60_000,
                delay_ms: 3_000,
            },
            TimeControl::Byoyomi {
                initial_ms: 5_000,
                periods: 3,
                period_ms: 10_000,
            },
            TimeControl::Correspondence { days_per_turn: 1 },
        ];
        for tc in controls {
            let mut clock = ClockDriver::new(tc, ["p1", "p2"], 30_000).expect("clock");
            let mut before = clock.clone();
            clock.start(Some(Side::First), 1_000);
            check(&before, &clock);
            let mut now = 1_000;
            let mut side = Side::First;
            // Turns of growing length: byo-yomi spends its main time and then periods.
            for turn in 0..8u64 {
                before = clock.clone();
                now += 2_000 + turn * 3_000;
                let player = PlayerId::from(if side == Side::First { "p1" } else { "p2" });
                if clock
                    .on_action(side, &player, true, false, Some(side.other()), now, 0)
                    .is_err()
                {
                    break;
                }
                check(&before, &clock);
                side = side.other();
                if turn == 3 {
                    before = clock.clone();
                    clock.pause(now + 500);
                    check(&before, &clock);
                    before = clock.clone();
                    now += 60_000;
                    clock.resume(now);
                    check(&before, &clock);
                }
            }
            before = clock.clone();
            clock.stop(now + 100);
            check(&before, &clock);
        }
    }
}
