//! [`Clock`]: the state of one game's clock for both sides, driven turn by turn.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use thiserror::Error;

use super::{TimeControl, TimeControlError, ABANDONMENT_MS};
use crate::game::Side;

/// A side ran out of time. The actor ends the game with the other side winning by
/// `timeout` (protocol/docs/PROTOCOL.md), as a diff of `status`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Error, Serialize, Deserialize)]
#[error("{side:?} ran out of time (at {deadline_ms})")]
pub struct Flagged {
    /// The side whose time ran out (it loses).
    #[serde(with = "side_index")]
    pub side: Side,
    /// The server time at which its time reached zero (before any lag grace).
    pub deadline_ms: u64,
}

/// What one completed turn did to the clock (for logs, metrics and tests).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TurnResult {
    /// The side whose turn ended.
    pub side: Side,
    /// This was the side's first action: no clock was running, nothing was charged.
    pub first_action: bool,
    /// Server time from the start of the turn to its end.
    pub elapsed_ms: u64,
    /// The lag credit actually applied (the credit asked for, at most `elapsed_ms`).
    pub credited_ms: u64,
    /// Time charged to the side: `elapsed_ms - credited_ms` (0 for an untimed turn).
    pub charged_ms: u64,
    /// Time added after the turn (the Fischer increment).
    pub added_ms: u64,
    /// The side's main time after the turn (correspondence: the next turn's allowance).
    pub main_ms: u64,
    /// The side's byo-yomi periods after the turn (0 for other kinds).
    pub periods_left: u32,
    /// Byo-yomi periods used up entirely by this turn.
    pub periods_used: u32,
}

/// The turn in progress: who is to act and since when (server time).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Turn {
    #[serde(with = "side_index")]
    side: Side,
    since: u64,
}

/// One game's clock: main time and byo-yomi periods of each side, whether each side has
/// made its first action, the turn in progress, a pause, and a flag once one fell.
///
/// All times are server milliseconds passed in by the caller. The clock is charged only
/// when a turn ends ([`Clock::end_turn`]); in between, the running side's time at `since` is
/// what is stored and what the document shows. It is `Serialize`/`Deserialize` so the store
/// can persist it with the game (see [`Clock::pause`] for restarts).
///
/// Everything is indexed by [`Side`]; after a pie-rule swap call [`Clock::swap_sides`] so
/// that times follow the persons, as protocol/docs/PROTOCOL.md requires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    tc: TimeControl,
    main_ms: [u64; 2],
    periods_left: [u32; 2],
    started: [bool; 2],
    turn: Option<Turn>,
    paused_at: Option<u64>,
    flagged: Option<Flagged>,
    /// Sides that went berserk (an arena's rule, see [`Clock::berserk`]).
    #[serde(default, skip_serializing_if = "no_berserk")]
    berserk: [bool; 2],
}

fn no_berserk(b: &[bool; 2]) -> bool {
    !b[0] && !b[1]
}

/// The absolute time at which a side that became to act at `to_act_since` without having
/// made its first action aborts the game: 30 s later, or its initial time if shorter
/// (see [`TimeControl::first_action_window_ms`] for no clock, delay, byo-yomi and
/// correspondence).
pub fn first_action_deadline(to_act_since: u64, tc: &TimeControl) -> u64 {
    to_act_since.saturating_add(tc.first_action_window_ms())
}

impl Clock {
    /// A clock for a validated copy of `tc`, both sides at their starting time, no turn yet.
    pub fn new(tc: TimeControl) -> Result<Clock, TimeControlError> {
        let tc = tc.validate()?;
        Ok(Clock {
            tc,
            main_ms: [tc.starting_main_ms(); 2],
            periods_left: [tc.starting_periods(); 2],
            started: [false; 2],
            turn: None,
            paused_at: None,
            flagged: None,
            berserk: [false; 2],
        })
    }

    /// The time control.
    pub fn time_control(&self) -> &TimeControl {
        &self.tc
    }

    /// Time as the clock sees it: frozen at the pause while paused.
    fn effective(&self, now: u64) -> u64 {
        match self.paused_at {
            Some(p) => p.min(now),
            None => now,
        }
    }

    /// `side` became to act at `now` (game start, or the previous turn just ended). Its
    /// clock runs from `now` once both sides have made their first action; before that the
    /// first-action deadline runs instead ([`Clock::first_action_deadline`]). Calling it
    /// again for the side already to act keeps the original start.
    pub fn start_turn(&mut self, side: Side, now: u64) {
        if self.flagged.is_some() {
            return;
        }
        if matches!(self.turn, Some(t) if t.side == side) {
            return;
        }
        let since = self.effective(now);
        self.turn = Some(Turn { side, since });
    }

    /// `side`'s turn ended at `now` (the other side is now to act, or the game ended by
    /// rule): charges the elapsed time minus `lag_credit_ms` (the credit is capped at the
    /// elapsed time, so nothing is ever charged below zero) and applies the time control:
    /// Fischer adds the increment; delay makes the first `delay_ms` free; byo-yomi takes
    /// main time, then whole periods, and the period the turn ended in is reset;
    /// correspondence restores the full allowance (unused time does not accumulate).
    ///
    /// A side's first action is never charged and marks it as started. Returns
    /// [`Flagged`] when the charged time reached the turn's budget (the clock then stops
    /// with the side at zero), or if the game already flagged.
    ///
    /// `side` should be the side to act (set by [`Clock::start_turn`]); otherwise the turn
    /// is treated as having started at `now` (nothing charged).
    pub fn end_turn(
        &mut self,
        side: Side,
        now: u64,
        lag_credit_ms: u64,
    ) -> Result<TurnResult, Flagged> {
        if let Some(f) = self.flagged {
            return Err(f);
        }
        let now = self.effective(now);
        let since = match self.turn.take() {
            Some(t) if t.side == side => t.since,
            other => {
                debug_assert!(other.is_none(), "end_turn for a side not to act");
                now
            }
        };
        let i = side.index();
        let elapsed_ms = now.saturating_sub(since);
        let mut result = TurnResult {
            side,
            first_action: !self.started[i],
            elapsed_ms,
            credited_ms: 0,
            charged_ms: 0,
            added_ms: 0,
            main_ms: self.main_ms[i],
            periods_left: self.periods_left[i],
            periods_used: 0,
        };
        if !self.tc.is_timed() || !self.both_started() {
            // No clock runs until each side has made its first action.
            self.started[i] = true;
            return Ok(result);
        }
        let credited_ms = lag_credit_ms.min(elapsed_ms);
        let charged = elapsed_ms - credited_ms;
        result.credited_ms = credited_ms;
        result.charged_ms = charged;
        let budget = self.budget(side);
        if charged >= budget {
            return Err(self.flag(side, since.saturating_add(budget)));
        }
        let main = self.main_ms[i];
        match self.tc {
            TimeControl::None => unreachable!("untimed turns returned above"),
            TimeControl::Fischer { increment_ms, .. } => {
                // A berserk side plays without its increment.
                let increment_ms = if self.berserk[i] { 0 } else { increment_ms };
                self.main_ms[i] = main - charged + increment_ms;
                result.added_ms = increment_ms;
            }
            TimeControl::Delay { delay_ms, .. } => {
                self.main_ms[i] = main - charged.saturating_sub(delay_ms);
            }
            TimeControl::Byoyomi { period_ms, .. } => {
                if charged <= main {
                    self.main_ms[i] = main - charged;
                } else {
                    // Whole periods that ran out are gone; the one the turn ended in resets.
                    // `charged < budget` guarantees used < periods_left.
                    let used = ((charged - main) / period_ms) as u32;
                    self.main_ms[i] = 0;
                    self.periods_left[i] -= used;
                    result.periods_used = used;
                }
            }
            TimeControl::Correspondence { .. } => {
                self.main_ms[i] = self.tc.starting_main_ms();
            }
        }
        result.main_ms = self.main_ms[i];
        result.periods_left = self.periods_left[i];
        Ok(result)
    }

    /// Stops the clock without ending a turn normally (resignation, agreed draw, abort,
    /// abandonment): the running side is charged the time used so far, with no increment,
    /// no lag credit and no flag, so the final document shows what was left.
    pub fn stop(&mut self, now: u64) {
        let now = self.effective(now);
        let Some(turn) = self.turn.take() else { return };
        if self.flagged.is_some() || !self.tc.is_timed() || !self.both_started() {
            return;
        }
        let i = turn.side.index();
        let used = now.saturating_sub(turn.since);
        match self.tc {
            TimeControl::Fischer { .. } => self.main_ms[i] = self.main_ms[i].saturating_sub(used),
            TimeControl::Delay { delay_ms, .. } => {
                self.main_ms[i] = self.main_ms[i].saturating_sub(used.saturating_sub(delay_ms))
            }
            TimeControl::Byoyomi { period_ms, .. } => {
                let over = used.saturating_sub(self.main_ms[i]);
                self.main_ms[i] = self.main_ms[i].saturating_sub(used);
                if over > 0 && period_ms > 0 {
                    let gone = (over / period_ms).min(u64::from(self.periods_left[i])) as u32;
                    self.periods_left[i] -= gone;
                }
            }
            TimeControl::Correspondence { .. } => {
                self.main_ms[i] = self.main_ms[i].saturating_sub(used)
            }
            TimeControl::None => {}
        }
    }

    fn flag(&mut self, side: Side, deadline_ms: u64) -> Flagged {
        let f = Flagged { side, deadline_ms };
        self.main_ms[side.index()] = 0;
        self.periods_left[side.index()] = 0;
        self.turn = None;
        self.flagged = Some(f);
        f
    }

    /// How long `side`'s turn may last from its start given its current main time and
    /// periods (`u64::MAX` without a clock).
    fn budget(&self, side: Side) -> u64 {
        let i = side.index();
        self.tc
            .turn_budget_ms(self.main_ms[i], self.periods_left[i])
            .unwrap_or(u64::MAX)
    }

    /// Both sides have made their first action (so `game.abort` is no longer allowed and
    /// clocks run).
    pub fn both_started(&self) -> bool {
        self.started[0] && self.started[1]
    }

    /// Whether `side` has made its first action.
    pub fn has_started(&self, side: Side) -> bool {
        self.started[side.index()]
    }

    /// The side to act, as last given to [`Clock::start_turn`] (`None` between turns and
    /// after a flag or [`Clock::stop`]).
    pub fn to_act(&self) -> Option<Side> {
        self.turn.map(|t| t.side)
    }

    /// The timed turn in progress, paused or not.
    fn timed_turn(&self) -> Option<Turn> {
        self.turn
            .filter(|_| self.tc.is_timed() && self.both_started() && self.flagged.is_none())
    }

    /// The side whose clock is running (`None` before both first actions, without a clock,
    /// while paused and after a flag).
    pub fn running(&self) -> Option<Side> {
        self.timed_turn()
            .filter(|_| self.paused_at.is_none())
            .map(|t| t.side)
    }

    /// When the running side's time started (`None` when no clock runs).
    pub fn since(&self) -> Option<u64> {
        self.timed_turn()
            .filter(|_| self.paused_at.is_none())
            .map(|t| t.since)
    }

    /// The side's main time at `since` (or now, when its clock is not running).
    /// Correspondence: the current turn's allowance.
    pub fn main_ms(&self, side: Side) -> u64 {
        self.main_ms[side.index()]
    }

    /// The side's byo-yomi periods left (0 for other kinds).
    pub fn periods_left(&self, side: Side) -> u32 {
        self.periods_left[side.index()]
    }

    /// The absolute time at which the running side flags, for the actor's timer (`None`
    /// when no clock runs). Arm the timer at this plus the player's
    /// [`super::LagCompensator::grace_ms`] and call [`Clock::check_flag`] when it fires.
    pub fn flag_deadline(&self) -> Option<u64> {
        let turn = self.timed_turn().filter(|_| self.paused_at.is_none())?;
        Some(turn.since.saturating_add(self.budget(turn.side)))
    }

    /// The absolute time at which the game is aborted because the side to act has not made
    /// its first action (`None` when that side has already acted, or while paused).
    pub fn first_action_deadline(&self) -> Option<u64> {
        let turn = self.turn.filter(|t| {
            !self.started[t.side.index()] && self.paused_at.is_none() && self.flagged.is_none()
        })?;
        Some(first_action_deadline(turn.since, &self.tc))
    }

    /// The actor's abort timer fired at `now`: the side to act that has not made its first
    /// action by its [`Clock::first_action_deadline`] (the game ends `aborted`, unrated; call
    /// [`Clock::stop`]). `None` if that deadline has not passed or does not apply.
    pub fn check_first_action(&self, now: u64) -> Option<Side> {
        let deadline = self.first_action_deadline()?;
        if now >= deadline {
            self.to_act()
        } else {
            None
        }
    }

    /// Time `side` has left before it flags, at `now`: main time plus delay plus all
    /// byo-yomi periods, minus what the running turn has used so far (for the side not to
    /// act, its whole next-turn budget). `None` without a clock; 0 once flagged.
    pub fn remaining_at(&self, side: Side, now: u64) -> Option<u64> {
        if !self.tc.is_timed() {
            return None;
        }
        if self.flagged.is_some_and(|f| f.side == side) {
            return Some(0);
        }
        let budget = self.budget(side);
        Some(match self.timed_turn() {
            Some(t) if t.side == side => {
                budget.saturating_sub(self.effective(now).saturating_sub(t.since))
            }
            _ => budget,
        })
    }

    /// Whether a side has flagged, or the running side's deadline has been reached at `now`
    /// (without lag grace).
    pub fn is_flagged(&self, now: u64) -> bool {
        self.flagged.is_some() || self.flag_deadline().is_some_and(|d| now >= d)
    }

    /// The flag, once one fell.
    pub fn flagged(&self) -> Option<Flagged> {
        self.flagged
    }

    /// The actor's flag timer fired at `now`: if the running side's deadline plus
    /// `grace_ms` (its [`super::LagCompensator::grace_ms`]) has passed, the side flags (the
    /// clock stops with it at zero) and the flag is returned; otherwise `None` (re-arm the
    /// timer at [`Clock::flag_deadline`] + grace). Returns the existing flag if one fell.
    pub fn check_flag(&mut self, now: u64, grace_ms: u64) -> Option<Flagged> {
        if self.flagged.is_some() {
            return self.flagged;
        }
        let deadline = self.flag_deadline()?;
        if now >= deadline.saturating_add(grace_ms) {
            let side = self.timed_turn()?.side;
            Some(self.flag(side, deadline))
        } else {
            None
        }
    }

    /// Stops counting at `now` (server shutting down, or restoring a game whose last
    /// persisted moment is `now`): time until [`Clock::resume`] is charged to nobody, and
    /// no deadline fires. Pausing twice keeps the first pause.
    pub fn pause(&mut self, now: u64) {
        if self.paused_at.is_none() {
            self.paused_at = Some(now);
        }
    }

    /// Resumes counting at `now`: the turn in progress (and its first-action deadline)
    /// continues with the time it had at the pause; `since` moves forward by the pause's
    /// length, so the actor publishes the new `since` as a diff.
    pub fn resume(&mut self, now: u64) {
        if let Some(p) = self.paused_at.take() {
            if let Some(t) = &mut self.turn {
                t.since = t.since.saturating_add(now.saturating_sub(p));
            }
        }
    }

    /// When the clock was paused, while it is.
    pub fn paused_at(&self) -> Option<u64> {
        self.paused_at
    }

    /// Whether the clock is paused.
    pub fn is_paused(&self) -> bool {
        self.paused_at.is_some()
    }

    /// Berserk, an arena's rule: `side` halves its main time (rounded down) and plays
    /// without its Fischer increment for the rest of the game. Only before its first action,
    /// only once, only with a running kind of clock (not none, not correspondence);
    /// `false` (nothing changed) otherwise.
    pub fn berserk(&mut self, side: Side) -> bool {
        let i = side.index();
        let clocked = self.tc.is_timed() && !matches!(self.tc, TimeControl::Correspondence { .. });
        if !clocked || self.berserk[i] || self.started[i] || self.flagged.is_some() {
            return false;
        }
        self.main_ms[i] /= 2;
        self.berserk[i] = true;
        true
    }

    /// Whether `side` went berserk.
    pub fn is_berserk(&self, side: Side) -> bool {
        self.berserk[side.index()]
    }

    /// Exchanges everything kept per side (main times, periods, first-action marks, the
    /// turn in progress, a flag) after a pie-rule swap exchanged the players' seats, so
    /// each person keeps their own clock.
    pub fn swap_sides(&mut self) {
        self.main_ms.swap(0, 1);
        self.periods_left.swap(0, 1);
        self.started.swap(0, 1);
        self.berserk.swap(0, 1);
        if let Some(t) = &mut self.turn {
            t.side = t.side.other();
        }
        if let Some(f) = &mut self.flagged {
            f.side = f.side.other();
        }
    }

    /// How long `side` must have had no connection before the opponent may `game.claim`:
    /// [`ABANDONMENT_MS`] (60 s), or the side's remaining time at `now` if shorter
    /// (protocol/docs/PROTOCOL.md). Correspondence: the side's remaining time for its turn instead, since
    /// being offline for minutes is normal there (the flag usually comes first).
    pub fn abandonment_timeout_ms(&self, side: Side, now: u64) -> u64 {
        let remaining = self.remaining_at(side, now).unwrap_or(u64::MAX);
        match self.tc {
            TimeControl::Correspondence { .. } => remaining,
            _ => remaining.min(ABANDONMENT_MS),
        }
    }

    /// The document's `clock` object: the time control's own fields, then
    /// `remaining_ms` (each side's main time at `since`; `null`s without a clock),
    /// for byo-yomi `periods_left`, `running` (side name or `null`), `since` (or `null`),
    /// and `first_action_deadline` (when the game aborts unless the side to act makes its
    /// first action; `null` otherwise). Keys are `side_names` (the game's
    /// [`crate::Game::SIDE_NAMES`]). Clients count down locally from `since`: the running
    /// side flags at `since + remaining_ms` (+ delay, + periods × period).
    pub fn to_json(&self, side_names: [&str; 2]) -> Value {
        let mut obj = match serde_json::to_value(self.tc) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let per_side = |f: &dyn Fn(usize) -> Value| {
            let mut m = Map::new();
            m.insert(side_names[0].to_string(), f(0));
            m.insert(side_names[1].to_string(), f(1));
            Value::Object(m)
        };
        let timed = self.tc.is_timed();
        obj.insert(
            "remaining_ms".into(),
            per_side(&|i| {
                if timed {
                    json!(self.main_ms[i])
                } else {
                    Value::Null
                }
            }),
        );
        if let TimeControl::Byoyomi { .. } = self.tc {
            obj.insert(
                "periods_left".into(),
                per_side(&|i| json!(self.periods_left[i])),
            );
        }
        obj.insert(
            "running".into(),
            json!(self.running().map(|s| side_names[s.index()])),
        );
        obj.insert("since".into(), json!(self.since()));
        obj.insert(
            "first_action_deadline".into(),
            json!(self.first_action_deadline()),
        );
        Value::Object(obj)
    }
}

/// `Side` as its index (0/1) in the persisted form; the protocol crate's `Side` has no
/// serde impls of its own (on the wire sides are names, which depend on the game).
mod side_index {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::game::Side;

    pub fn serialize<S: Serializer>(side: &Side, s: S) -> Result<S::Ok, S::Error> {
        (side.index() as u8).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Side, D::Error> {
        match u8::deserialize(d)? {
            0 => Ok(Side::First),
            1 => Ok(Side::Second),
            other => Err(serde::de::Error::custom(format!(
                "side index {other} (expected 0 or 1)"
            ))),
        }
    }
}

#[cfg(test)]
mod berserk_tests {
    use super::*;

    #[test]
    fn berserk_halves_the_time_and_drops_the_increment() {
        let tc = TimeControl::Fischer {
            initial_ms: 15_000,
            increment_ms: 2_000,
        };
        let mut c = Clock::new(tc).unwrap();
        assert!(c.berserk(Side::Second));
        assert!(!c.berserk(Side::Second), "only once");
        assert!(c.is_berserk(Side::Second) && !c.is_berserk(Side::First));
        assert_eq!(c.main_ms, [15_000, 7_500]);
        // First actions are free; then each side is charged, the berserk one without its
        // increment.
        c.start_turn(Side::First, 0);
        c.end_turn(Side::First, 100, 0).unwrap();
        c.start_turn(Side::Second, 100);
        c.end_turn(Side::Second, 200, 0).unwrap();
        assert!(!c.berserk(Side::First), "not after the first action");
        c.start_turn(Side::First, 200);
        c.end_turn(Side::First, 1_200, 0).unwrap();
        c.start_turn(Side::Second, 1_200);
        c.end_turn(Side::Second, 2_200, 0).unwrap();
        assert_eq!(c.main_ms, [16_000, 6_500]);
        c.swap_sides();
        assert!(c.is_berserk(Side::First));
    }

    #[test]
    fn no_berserk_without_a_running_clock() {
        let mut c = Clock::new(TimeControl::None).unwrap();
        assert!(!c.berserk(Side::First));
        let mut c = Clock::new(TimeControl::Correspondence { days_per_turn: 2 }).unwrap();
        assert!(!c.berserk(Side::First));
    }
}
