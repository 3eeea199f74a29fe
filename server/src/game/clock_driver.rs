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

use crate::ids::PlayerId;
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
    pub fn record_rtt(&mut self, player_id: &PlayerId, rtt_ms: u64) {
        if let Some(c) = self.lag.get_mut(player_id.as_str()) {
            c.record_rtt(rtt_ms);
        }
    }

    /// The player's lag compensator (for tests and logs).
    pub fn lag(&self, player_id: &PlayerId) -> Option<&LagCompensator> {
        self.lag.get(player_id.as_str())
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
    pub fn credit_for(&self, side: Side, player_id: &PlayerId) -> u64 {
        if self.clock.running() == Some(side) {
            self.grace_ms(player_id.as_str())
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
        player_id: &PlayerId,
        ends_turn: bool,
        swap: bool,
        next: Option<Side>,
        now: u64,
        credit_ms: u64,
    ) -> Result<Option<TurnResult>, Flagged> {
        if !ends_turn {
            let grace = self.grace_ms(player_id.as_str());
            return match self.clock.check_flag(now, grace) {
                Some(f) => Err(f),
                None => Ok(None),
            };
        }
        if self.clock.running() == Some(side) {
            if let Some(c) = self.lag.get_mut(player_id.as_str()) {
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
        player_id: &PlayerId,
        ends_turn: bool,
        now: u64,
        credit_ms: u64,
    ) -> bool {
        let mut clock = self.clock.clone();
        if ends_turn {
            clock.end_turn(side, now, credit_ms).is_err()
        } else {
            clock
                .check_flag(now, self.grace_ms(player_id.as_str()))
                .is_some()
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
mod tests;
