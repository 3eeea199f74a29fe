//! The game actor's clock: drives [`Clock`] and one [`LagCompensator`] per player exactly
//! as `stoa_protocol::clock`'s module docs prescribe, and tells the actor when its single
//! timer must fire and what happened when it did.
//!
//! Why a separate type: the actor owns *when* things happen (commands, its one timer, the
//! time source); this file owns *what the clock does* with them, with every time passed in
//! as server milliseconds, so it is tested with plain numbers and the actor with tokio's
//! paused time.
//!
//! Turn accounting is the caller's: it says whether an action ended the acting *person's*
//! turn (the other person is now to act, or the game ended), which covers a Staku move,
//! an Akunur move followed by its owed bonus placement (the move alone does not end the
//! turn), and a pie-rule swap (the colour to act is unchanged, the person to act is not).
//!
//! The first-action window is configurable (`--first-action-ms`, default 30 s as
//! protocol/docs/PROTOCOL.md says): it replaces the protocol crate's 30 s in "30 s, or the side's
//! initial time if shorter"; correspondence keeps one turn's allowance (see
//! [`TimeControl::first_action_window_ms`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use stoa_protocol::clock::{
    Clock, Flagged, LagCompensator, TimeControl, TimeControlError, TurnResult,
};
use stoa_protocol::Side;

/// Why the timer (or a late action) ended the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// The side to act did not make its first action in time: the game ends `aborted`.
    FirstAction(Side),
    /// The running side ran out of time: it loses by `timeout`.
    Flag(Flagged),
}

/// One game's clock, the players' lag compensators and the first-action window.
///
/// Serializable so the store can persist it with a live game (pause it first; see
/// [`ClockDriver::pause`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockDriver {
    clock: Clock,
    /// By player id: compensation follows the person, not the side.
    lag: HashMap<String, LagCompensator>,
    /// The configured cap of the first-action window (ms).
    first_action_ms: u64,
}

impl ClockDriver {
    /// A driver for a time control and the two players (by id), no turn started yet.
    pub fn new(
        tc: TimeControl,
        players: [&str; 2],
        first_action_ms: u64,
    ) -> Result<ClockDriver, TimeControlError> {
        let clock = Clock::new(tc)?;
        let lag = players
            .iter()
            .map(|p| (p.to_string(), LagCompensator::for_time_control(&tc)))
            .collect();
        Ok(ClockDriver {
            clock,
            lag,
            first_action_ms,
        })
    }

    /// A driver without a clock (the fallback when a stored clock no longer validates).
    pub fn untimed(players: [&str; 2], first_action_ms: u64) -> ClockDriver {
        match ClockDriver::new(TimeControl::None, players, first_action_ms) {
            Ok(d) => d,
            Err(_) => unreachable!("a clock of kind none always validates"),
        }
    }

    /// The game started (or the side to act changed without an action, which never happens
    /// today): `side` is to act from `now`.
    pub fn start(&mut self, side: Option<Side>, now: u64) {
        if let Some(side) = side {
            self.clock.start_turn(side, now);
        }
    }

    /// Berserk for `side` (see [`Clock::berserk`]); `false` when not allowed now.
    pub fn berserk(&mut self, side: Side) -> bool {
        self.clock.berserk(side)
    }

    /// The time control.
    pub fn time_control(&self) -> &TimeControl {
        self.clock.time_control()
    }

    /// The clock state (for tests and logs).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The time control as a request object (the lobby shows it).
    pub fn request_json(&self) -> Value {
        crate::domain::clock_request::clock_json(self.clock.time_control())
    }

    /// Both sides made their first action (abort is no longer allowed, clocks run).
    pub fn both_started(&self) -> bool {
        self.clock.both_started()
    }

    /// One measured websocket round trip of one of `player_id`'s connections.
    pub fn record_rtt(&mut self, player_id: &str, rtt_ms: u64) {
        if let Some(c) = self.lag.get_mut(player_id) {
            c.record_rtt(rtt_ms);
        }
    }

    /// The player's lag compensator (for tests and logs).
    pub fn lag(&self, player_id: &str) -> Option<&LagCompensator> {
        self.lag.get(player_id)
    }

    fn grace_ms(&self, player_id: &str) -> u64 {
        self.lag.get(player_id).map_or(0, LagCompensator::grace_ms)
    }

    /// How long a side may take over its first action: the configured window, or the
    /// side's first timed turn if shorter; correspondence: one turn's allowance.
    pub fn first_action_window_ms(&self) -> u64 {
        let tc = self.clock.time_control();
        match tc {
            TimeControl::Correspondence { .. } => tc.first_action_window_ms(),
            _ => tc
                .turn_budget_ms(tc.starting_main_ms(), tc.starting_periods())
                .map_or(self.first_action_ms, |b| b.min(self.first_action_ms)),
        }
    }

    /// When the game aborts unless the side to act makes its first action (`None` when
    /// that side has acted, while paused, or after a flag).
    pub fn first_action_deadline(&self) -> Option<u64> {
        let protocol_deadline = self.clock.first_action_deadline()?;
        let since =
            protocol_deadline.saturating_sub(self.clock.time_control().first_action_window_ms());
        Some(since.saturating_add(self.first_action_window_ms()))
    }

    /// When the actor's one timer must fire: the first-action deadline before both first
    /// actions, else the running side's flag deadline plus its player's lag grace (a move
    /// sent just before the player's displayed zero may still be in flight); `None` when no
    /// clock runs. `players` are the ids by current side index.
    pub fn timer_deadline(&self, players: [&str; 2]) -> Option<u64> {
        if let Some(d) = self.first_action_deadline() {
            return Some(d);
        }
        let running = self.clock.running()?;
        let deadline = self.clock.flag_deadline()?;
        Some(deadline.saturating_add(self.grace_ms(players[running.index()])))
    }

    /// Whether a deadline has passed at `now` (the timer fired, or a command arrived):
    /// the first-action window, or the running side's flag plus its player's lag grace.
    /// Nothing changes here: the end is an event (see `super::core`).
    pub fn expiry(&self, now: u64, players: [&str; 2]) -> Option<Expiry> {
        if let Some(d) = self.first_action_deadline() {
            return (now >= d)
                .then(|| self.clock.to_act().map(Expiry::FirstAction))
                .flatten();
        }
        let running = self.clock.running()?;
        let deadline = self.clock.flag_deadline()?;
        let grace = self.grace_ms(players[running.index()]);
        (now >= deadline.saturating_add(grace)).then_some(Expiry::Flag(Flagged {
            side: running,
            deadline_ms: deadline,
        }))
    }

    /// The running side's time ran out (a logged timeout at `now`): it flags at its
    /// deadline and the clock stops there, with the side at zero.
    pub fn flag(&mut self, now: u64) {
        if self.clock.check_flag(now, 0).is_none() {
            self.clock.stop(now);
        }
    }

    /// The lag credit a turn-ending action by `side` (played by `player_id`) would get
    /// now: the estimated transit, capped by the player's quota; 0 when `side`'s clock is
    /// not running (a first action).
    pub fn credit_for(&self, side: Side, player_id: &str) -> u64 {
        if self.clock.running() == Some(side) {
            self.grace_ms(player_id)
        } else {
            0
        }
    }

    /// An action by `side` (played by `player_id`) at `now`, credited `credit_ms` of lag
    /// compensation (see [`ClockDriver::credit_for`]; the move event carries it, so a
    /// replay charges exactly what the live game did). `ends_turn`: the other person is
    /// now to act or the game ended; `swap`: it was a pie-rule swap; `next`: the side to
    /// act afterwards (`None` when the game ended).
    ///
    /// `Err(Flagged)`: the action arrived too late even with its credit; it must not be
    /// applied, the game ends `timeout`. `Ok(Some(turn))` for a completed turn.
    #[allow(clippy::too_many_arguments)]
    pub fn on_action(
        &mut self,
        side: Side,
        player_id: &str,
        ends_turn: bool,
        swap: bool,
        next: Option<Side>,
        now: u64,
        credit_ms: u64,
    ) -> Result<Option<TurnResult>, Flagged> {
        if !ends_turn {
            let grace = self.grace_ms(player_id);
            return match self.clock.check_flag(now, grace) {
                Some(f) => Err(f),
                None => Ok(None),
            };
        }
        if self.clock.running() == Some(side) {
            if let Some(c) = self.lag.get_mut(player_id) {
                // Spends the player's quota (the credit itself is the event's).
                c.credit(Some(credit_ms));
            }
        }
        let turn = self.clock.end_turn(side, now, credit_ms)?;
        if swap {
            self.clock.swap_sides();
        }
        if let Some(next) = next {
            self.clock.start_turn(next, now);
        }
        Ok(Some(turn))
    }

    /// Whether [`ClockDriver::on_action`] with these arguments would flag the side, without
    /// changing anything. A move is decided before it is applied (a refused move changes
    /// nothing) and only the flag matters then: this copies the clock, not the lag map
    /// (a table of player ids, which copying the whole driver would clone on every move).
    pub fn would_flag(
        &self,
        side: Side,
        player_id: &str,
        ends_turn: bool,
        now: u64,
        credit_ms: u64,
    ) -> bool {
        let mut clock = self.clock.clone();
        if ends_turn {
            clock.end_turn(side, now, credit_ms).is_err()
        } else {
            clock.check_flag(now, self.grace_ms(player_id)).is_some()
        }
    }

    /// The game ended otherwise (resignation, agreement, abort, abandonment, or by rule
    /// after the turn was already ended): the running side is charged what it used.
    pub fn stop(&mut self, now: u64) {
        self.clock.stop(now);
    }

    /// How long `side` must have had no connection before the opponent may claim: the
    /// configured abandonment timeout (60 s by default), or the side's remaining time at
    /// `now` if shorter; correspondence: its remaining time for the turn (being offline
    /// for minutes is normal there).
    pub fn abandonment_timeout_ms(&self, side: Side, now: u64, configured_ms: u64) -> u64 {
        let remaining = self.clock.remaining_at(side, now).unwrap_or(u64::MAX);
        match self.clock.time_control() {
            TimeControl::Correspondence { .. } => remaining,
            _ => remaining.min(configured_ms),
        }
    }

    /// Stops counting (server shutting down): nobody is charged until
    /// [`ClockDriver::resume`], no deadline fires.
    pub fn pause(&mut self, now: u64) {
        self.clock.pause(now);
    }

    /// Resumes counting at `now` (after a restore); `since` moves on by the pause.
    pub fn resume(&mut self, now: u64) {
        self.clock.resume(now);
    }

    /// The document's `clock`: the time control's fields, `remaining_ms` by side name,
    /// `running`, `since` (protocol/docs/PROTOCOL.md), and the additions `periods_left` (byo-yomi) and
    /// `first_action_deadline` (the configured one).
    pub fn to_json(&self, side_names: [&str; 2]) -> Value {
        let mut v = self.clock.to_json(side_names);
        if let Value::Object(m) = &mut v {
            m.insert(
                "first_action_deadline".into(),
                json!(self.first_action_deadline()),
            );
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use stoa_protocol::Side::{First, Second};

    use super::*;

    /// What the actor does live: credit as `credit_for` says; end deadlines as the core's
    /// events do.
    trait Live {
        fn on_action_live(
            &mut self,
            side: Side,
            player_id: &str,
            ends_turn: bool,
            swap: bool,
            next: Option<Side>,
            now: u64,
        ) -> Result<Option<TurnResult>, Flagged>;
        fn check_deadlines(&mut self, now: u64, players: [&str; 2]) -> Option<Expiry>;
    }

    impl Live for ClockDriver {
        fn on_action_live(
            &mut self,
            side: Side,
            player_id: &str,
            ends_turn: bool,
            swap: bool,
            next: Option<Side>,
            now: u64,
        ) -> Result<Option<TurnResult>, Flagged> {
            let credit = self.credit_for(side, player_id);
            self.on_action(side, player_id, ends_turn, swap, next, now, credit)
        }

        fn check_deadlines(&mut self, now: u64, players: [&str; 2]) -> Option<Expiry> {
            let e = self.expiry(now, players);
            match e {
                Some(Expiry::Flag(_)) => self.flag(now),
                Some(Expiry::FirstAction(_)) => self.stop(now),
                None => {}
            }
            e
        }
    }

    const T: u64 = 1_000_000;
    const P: [&str; 2] = ["alice", "bob"];
    const NAMES: [&str; 2] = ["white", "black"];

    fn fischer(initial_ms: u64, increment_ms: u64) -> ClockDriver {
        let mut d = ClockDriver::new(
            TimeControl::Fischer {
                initial_ms,
                increment_ms,
            },
            P,
            30_000,
        )
        .expect("valid");
        d.start(Some(First), T);
        d
    }

    #[test]
    fn would_flag_says_what_on_action_does() {
        for tc in [
            TimeControl::Fischer {
                initial_ms: 3_000,
                increment_ms: 1_000,
            },
            TimeControl::None,
        ] {
            let mut d = ClockDriver::new(tc, P, 30_000).expect("valid");
            d.start(Some(First), T);
            let (mut flagged, mut kept) = (0, 0);
            let mut turn_start = T;
            for i in 0..30u64 {
                let (side, player) = if i % 2 == 0 {
                    (First, P[0])
                } else {
                    (Second, P[1])
                };
                // Lag compensation builds up: its grace moves the flag.
                d.record_rtt(player, 240);
                let credit = d.credit_for(side, player);
                // Every 7 ms of the turn, over and past the side's remaining time.
                for now in (turn_start..turn_start + 20_000).step_by(7) {
                    for ends_turn in [true, false] {
                        let would = d.would_flag(side, player, ends_turn, now, credit);
                        let mut copy = d.clone();
                        let next = Some(side.other());
                        let did = copy
                            .on_action(side, player, ends_turn, false, next, now, credit)
                            .is_err();
                        assert_eq!(would, did, "{tc:?} action {i} at {now} ends {ends_turn}");
                        if did {
                            flagged += 1;
                        } else {
                            kept += 1;
                        }
                    }
                }
                // The action itself, half a second into the turn: the game goes on.
                turn_start += 500;
                d.on_action(
                    side,
                    player,
                    true,
                    false,
                    Some(side.other()),
                    turn_start,
                    credit,
                )
                .expect("in time");
            }
            assert!(kept > 0);
            // Fischer 3+1 flags within 20 s of a turn; no clock never does.
            assert_eq!(
                flagged > 0,
                matches!(tc, TimeControl::Fischer { .. }),
                "{tc:?}"
            );
        }
    }

    #[test]
    fn default_first_action_window_is_thirty_seconds() {
        let d = fischer(300_000, 0);
        assert_eq!(d.first_action_deadline(), Some(T + 30_000));
        assert_eq!(d.timer_deadline(P), Some(T + 30_000));
        let mut d2 = d.clone();
        assert_eq!(d2.check_deadlines(T + 29_999, P), None);
        assert_eq!(
            d2.check_deadlines(T + 30_000, P),
            Some(Expiry::FirstAction(First))
        );
        // Shorter initial time: the window is the initial time.
        let d = fischer(10_000, 0);
        assert_eq!(d.first_action_deadline(), Some(T + 10_000));
        // Without a clock it is 30 s too.
        let mut none = ClockDriver::new(TimeControl::None, P, 30_000).unwrap();
        none.start(Some(First), T);
        assert_eq!(none.first_action_deadline(), Some(T + 30_000));
        assert_eq!(none.to_json(NAMES)["first_action_deadline"], T + 30_000);
    }

    #[test]
    fn configured_first_action_window() {
        let mut d = ClockDriver::new(
            TimeControl::Fischer {
                initial_ms: 300_000,
                increment_ms: 0,
            },
            P,
            1_500,
        )
        .unwrap();
        d.start(Some(First), T);
        assert_eq!(d.first_action_deadline(), Some(T + 1_500));
        assert_eq!(d.to_json(NAMES)["first_action_deadline"], T + 1_500);
        // The first side moves; the second side's window starts then.
        d.on_action_live(First, "alice", true, false, Some(Second), T + 1_000)
            .unwrap();
        assert_eq!(d.first_action_deadline(), Some(T + 2_500));
        assert_eq!(
            d.check_deadlines(T + 2_500, P),
            Some(Expiry::FirstAction(Second))
        );
        // Correspondence keeps a whole turn.
        let mut c =
            ClockDriver::new(TimeControl::Correspondence { days_per_turn: 2 }, P, 1_500).unwrap();
        c.start(Some(First), T);
        assert_eq!(c.first_action_deadline(), Some(T + 2 * 86_400_000));
    }

    #[test]
    fn fischer_turns_increment_and_flag_with_grace() {
        let mut d = fischer(2_000, 500);
        d.on_action_live(First, "alice", true, false, Some(Second), T + 100)
            .unwrap();
        d.on_action_live(Second, "bob", true, false, Some(First), T + 300)
            .unwrap();
        // Both started: white's clock runs from T+300.
        let j = d.to_json(NAMES);
        assert_eq!(j["running"], "white");
        assert_eq!(j["since"], T + 300);
        assert_eq!(j["remaining_ms"], json!({"white": 2_000, "black": 2_000}));
        assert_eq!(j["first_action_deadline"], Value::Null);
        assert_eq!(d.timer_deadline(P), Some(T + 2_300));
        // White moves after 700 ms: 2000 - 700 + 500.
        d.on_action_live(First, "alice", true, false, Some(Second), T + 1_000)
            .unwrap();
        let j = d.to_json(NAMES);
        assert_eq!(j["remaining_ms"], json!({"white": 1_800, "black": 2_000}));
        assert_eq!(j["running"], "black");
        assert_eq!(j["since"], T + 1_000);
        // Bob has a measured round trip of 100 ms: 50 ms of grace.
        d.record_rtt("bob", 100);
        assert_eq!(d.timer_deadline(P), Some(T + 3_050));
        assert_eq!(d.check_deadlines(T + 3_049, P), None);
        assert_eq!(
            d.check_deadlines(T + 3_050, P),
            Some(Expiry::Flag(Flagged {
                side: Second,
                deadline_ms: T + 3_000
            }))
        );
        assert_eq!(
            d.to_json(NAMES)["remaining_ms"],
            json!({"white": 1_800, "black": 0})
        );
        assert_eq!(d.to_json(NAMES)["running"], Value::Null);
    }

    #[test]
    fn a_late_move_is_credited_its_transit_or_flags() {
        let mut d = fischer(2_000, 0);
        d.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        d.on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        d.record_rtt("alice", 200); // 100 ms each way
                                    // Arrives 2050 ms into a 2000 ms turn: credited 100 ms, charged 1950.
        let turn = d
            .on_action_live(First, "alice", true, false, Some(Second), T + 2_050)
            .unwrap()
            .expect("a turn");
        assert_eq!(turn.credited_ms, 100);
        assert_eq!(turn.main_ms, 50);
        // Bob has no measurement: no credit, 2001 ms is too late.
        let err = d
            .on_action_live(Second, "bob", true, false, Some(First), T + 2_050 + 2_001)
            .unwrap_err();
        assert_eq!(err.side, Second);
    }

    #[test]
    fn an_action_that_does_not_end_the_turn_only_checks_the_flag() {
        let mut d = fischer(2_000, 1_000);
        d.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        d.on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        assert_eq!(
            d.on_action_live(First, "alice", false, false, Some(First), T + 1_500),
            Ok(None)
        );
        // Still white's turn, same since, nothing charged yet.
        let j = d.to_json(NAMES);
        assert_eq!(j["since"], T);
        assert_eq!(j["remaining_ms"]["white"], 2_000);
        let turn = d
            .on_action_live(First, "alice", true, false, Some(Second), T + 1_800)
            .unwrap()
            .unwrap();
        assert_eq!(turn.main_ms, 2_000 - 1_800 + 1_000);
        assert!(d
            .on_action_live(Second, "bob", false, false, Some(Second), T + 1_800 + 2_000)
            .is_err());
    }

    #[test]
    fn a_swap_is_a_turn_and_times_follow_the_person() {
        // Black (First) moves, white (Second) swaps: the person who moved first now plays
        // white and is to act; the swapper now plays black.
        let mut d = fischer(5_000, 0);
        d.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        // Second side's first action is the swap; both have started now.
        d.on_action_live(Second, "bob", true, true, Some(Second), T + 1_000)
            .unwrap();
        let players_after = ["bob", "alice"];
        let j = d.to_json(NAMES);
        assert_eq!(j["running"], "black");
        let mut d2 = d.clone();
        // Alice (now Second) thinks 1.2 s.
        let turn = d2
            .on_action_live(Second, "alice", true, false, Some(First), T + 2_200)
            .unwrap()
            .unwrap();
        assert_eq!(turn.main_ms, 3_800);
        assert_eq!(
            d2.to_json(NAMES)["remaining_ms"],
            json!({"white": 5_000, "black": 3_800})
        );
        assert_eq!(d2.timer_deadline(players_after), Some(T + 2_200 + 5_000));
    }

    #[test]
    fn byoyomi_and_delay_documents() {
        let mut b = ClockDriver::new(
            TimeControl::Byoyomi {
                initial_ms: 1_000,
                periods: 2,
                period_ms: 3_000,
            },
            P,
            30_000,
        )
        .unwrap();
        b.start(Some(First), T);
        let j = b.to_json(NAMES);
        assert_eq!(j["kind"], "byoyomi");
        assert_eq!(j["periods"], 2);
        assert_eq!(j["period_ms"], 3_000);
        assert_eq!(j["periods_left"], json!({"white": 2, "black": 2}));
        b.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        b.on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        // 1 s main + one whole period gone + part of the next: one period used.
        b.on_action_live(First, "alice", true, false, Some(Second), T + 5_500)
            .unwrap();
        let j = b.to_json(NAMES);
        assert_eq!(j["remaining_ms"]["white"], 0);
        assert_eq!(j["periods_left"], json!({"white": 1, "black": 2}));

        let mut d = ClockDriver::new(
            TimeControl::Delay {
                initial_ms: 10_000,
                delay_ms: 2_000,
            },
            P,
            30_000,
        )
        .unwrap();
        d.start(Some(First), T);
        d.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        d.on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        d.on_action_live(First, "alice", true, false, Some(Second), T + 3_000)
            .unwrap();
        let j = d.to_json(NAMES);
        assert_eq!(j["delay_ms"], 2_000);
        assert_eq!(j["remaining_ms"], json!({"white": 9_000, "black": 10_000}));
        // Black's flag: since + main + delay.
        assert_eq!(d.timer_deadline(P), Some(T + 3_000 + 12_000));
    }

    #[test]
    fn abandonment_timeout() {
        let mut d = fischer(300_000, 0);
        assert_eq!(d.abandonment_timeout_ms(Second, T, 60_000), 60_000);
        assert_eq!(d.abandonment_timeout_ms(Second, T, 5_000), 5_000);
        let mut short = fischer(20_000, 0);
        assert_eq!(short.abandonment_timeout_ms(Second, T, 60_000), 20_000);
        short
            .on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        short
            .on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        // White's clock runs: 20 s - 8 s used.
        assert_eq!(
            short.abandonment_timeout_ms(First, T + 8_000, 60_000),
            12_000
        );
        d.stop(T);
        let c =
            ClockDriver::new(TimeControl::Correspondence { days_per_turn: 1 }, P, 30_000).unwrap();
        assert_eq!(c.abandonment_timeout_ms(First, T, 60_000), 86_400_000);
    }

    #[test]
    fn pause_freezes_deadlines_and_resume_moves_since() {
        let mut d = fischer(2_000, 0);
        d.on_action_live(First, "alice", true, false, Some(Second), T)
            .unwrap();
        d.on_action_live(Second, "bob", true, false, Some(First), T)
            .unwrap();
        d.pause(T + 500);
        assert_eq!(d.timer_deadline(P), None);
        assert_eq!(d.check_deadlines(T + 10_000, P), None);
        d.resume(T + 10_000);
        assert_eq!(d.to_json(NAMES)["since"], T + 9_500);
        assert_eq!(d.timer_deadline(P), Some(T + 11_500));
    }

    #[test]
    fn survives_serde() {
        let mut d = fischer(2_000, 0);
        d.record_rtt("alice", 80);
        let back: ClockDriver = serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }
}
