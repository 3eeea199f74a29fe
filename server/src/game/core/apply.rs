//! Applying one logged event to the game: the one place a game changes.
//!
//! Why its own file: the live actor and recovery both fold events through here, so this
//! is where "the same log makes the same document" is kept true; deciding (`decide.rs`)
//! and building the document (`document.rs`) only read the game.

use stoa_protocol::{Reason, Side};

use super::document::Touched;
use super::patch::PatchOp;
use super::{ApplyError, Core};
use crate::ids::PlayerId;
use crate::store::{ActionKind, ActionRecord};

impl Core {
    /// Applies one event (live, after it was logged, or from the log on recovery) and
    /// returns the RFC 6902 patch from the document at `seq - 1` to the one at `seq`.
    pub fn apply(&mut self, record: &ActionRecord) -> Result<Vec<PatchOp>, ApplyError> {
        // A pause is this node's own (its store unreachable, a shutdown): it never shows in
        // the document, so an event applies to the clock as the document has it — the same
        // on every node, whatever each was doing — and the pause goes on after it (a
        // `resume` event ends it).
        let local_pause = self.clock.clock().paused_at();
        if let Some(p) = local_pause {
            self.clock.resume(p);
        }
        let applied = self.apply_event(record);
        if let Some(p) = local_pause {
            let resumed = matches!(record.action, ActionKind::Resume { .. });
            if applied.is_err() {
                self.clock.pause(p);
            } else if !resumed && self.result.is_none() {
                self.clock.pause(p.max(record.at_ms));
            }
        }
        applied
    }

    fn apply_event(&mut self, record: &ActionRecord) -> Result<Vec<PatchOp>, ApplyError> {
        if record.seq <= self.seq {
            return Err(ApplyError {
                seq: record.seq,
                reason: format!("seq not after {}", self.seq),
            });
        }
        let moves_before = self.moves.len();
        // Only this event's move may report view changes.
        self.view_changes = None;
        self.position_known = None;
        let touched = self.apply_action(record)?;
        self.seq = record.seq;
        self.last_ms = self.last_ms.max(record.at_ms);
        Ok(self.patch(moves_before, touched))
    }

    /// Applies an event's action to the game; what of the document it touched.
    fn apply_action(&mut self, record: &ActionRecord) -> Result<Touched, ApplyError> {
        let fail = |reason: String| ApplyError {
            seq: record.seq,
            reason,
        };
        let side = self.side_of(&record.player_id);
        let seated = || side.ok_or_else(|| fail(format!("{} is not seated", record.player_id)));
        let at = record.at_ms;
        let mut touched = Touched::default();
        match &record.action {
            ActionKind::Rematch { game_id } => {
                touched.rematch = true;
                seated()?;
                if self.result.is_none() {
                    return Err(fail("a rematch before the end".into()));
                }
                if !self.rematch_requested.contains(&record.player_id) {
                    self.rematch_requested.push(record.player_id.clone());
                }
                if game_id.is_some() {
                    self.rematch_game.clone_from(game_id);
                }
            }
            _ if self.result.is_some() => return Err(fail("the game is over".into())),
            ActionKind::Move {
                notation,
                credit_ms,
            } => {
                touched.game = true;
                let swapped = self.apply_move(
                    &record.player_id,
                    seated()?,
                    notation,
                    *credit_ms,
                    at,
                    record.seq,
                )?;
                // Only a swap moves the players between sides (compared without copying
                // their ids: this runs for every move).
                let [a, b] = self.player_ids();
                touched.players = swapped && a != b;
                // The rematch field names sides: a swap moves its entries too.
                touched.rematch = touched.players;
            }
            ActionKind::Resign => self.end(Some(seated()?.other()), Reason::Resign, at),
            ActionKind::Berserk => {
                if !self.clock.berserk(seated()?) {
                    return Err(fail("berserk is not allowed now".into()));
                }
            }
            ActionKind::DrawOffer => self.draw_offer = Some(seated()?),
            ActionKind::DrawAccept => self.end(None, Reason::Agreement, at),
            ActionKind::DrawDecline => self.draw_offer = None,
            ActionKind::Abort => {
                self.rated = false;
                self.end(None, Reason::Aborted, at);
            }
            ActionKind::Claim => self.end(Some(seated()?), Reason::Abandoned, at),
            ActionKind::Timeout => {
                let side = seated()?;
                self.clock.flag(at);
                self.end(Some(side.other()), Reason::Timeout, at);
            }
            ActionKind::NoFirstAction => {
                self.absent = Some(seated()?);
                self.rated = false;
                self.end(None, Reason::Aborted, at);
            }
            ActionKind::Banned => self.end(Some(seated()?.other()), Reason::Banned, at),
            ActionKind::OperatorAbort => {
                seated()?;
                self.rated = false;
                self.end(None, Reason::Aborted, at);
            }
            ActionKind::Resume { paused_ms } => {
                self.clock.pause(*paused_ms);
                self.clock.resume(at);
            }
        }
        Ok(touched)
    }

    /// Plays a logged move; `true` when it was a swap (the players traded sides).
    fn apply_move(
        &mut self,
        player_id: &PlayerId,
        side: Side,
        notation: &str,
        credit_ms: u64,
        at: u64,
        seq: u64,
    ) -> Result<bool, ApplyError> {
        let fail_seq = self.seq + 1;
        let fail = |reason: String| ApplyError {
            seq: fail_seq,
            reason,
        };
        if self.game.to_act() != Some(side) {
            return Err(fail(format!("{player_id} moved out of turn")));
        }
        let tracked = match self.take_prepared(seq, notation) {
            Some(prepared) => {
                self.game = prepared.game;
                self.position_known = Some(prepared.position);
                prepared.tracked
            }
            // A follower or a recovery folding the log: played here. `play` changes
            // nothing when it refuses the move.
            None => self
                .game
                .play_tracked(notation)
                .map_err(|e| fail(e.to_string()))?,
        };
        let played = tracked.played;
        self.view_changes = tracked.view_changes;
        let (next_side, ends_turn) = self.turn_after(self.game.as_ref(), player_id, played.swap);
        // A logged move was on time when it was decided: a replay applies its credit and
        // never flags it.
        let _ = self.clock.on_action(
            side,
            player_id,
            ends_turn,
            played.swap,
            next_side,
            at,
            credit_ms,
        );
        self.moves.push(played.notation);
        if !self.acted.iter().any(|p| p == player_id) {
            self.acted.push(player_id.clone());
        }
        if self.draw_offer == Some(side) {
            // The offering side acted again: its offer lapses.
            self.draw_offer = None;
        }
        if played.swap {
            // Everything keyed by side follows the person.
            self.players.swap(0, 1);
            self.draw_offer = self.draw_offer.map(Side::other);
        }
        if let Some(outcome) = self.game.outcome() {
            self.end(outcome.winner, outcome.reason, at);
        }
        Ok(played.swap)
    }

    fn end(&mut self, winner: Option<Side>, reason: Reason, at: u64) {
        // A no-op when the turn already ended (by rule) or a flag fell; otherwise the
        // running side is charged what it used (resignation, agreement, abort, claim).
        self.clock.stop(at);
        // A game that ends before each side made its first action was not played: it is
        // unrated (as lichess treats it), so a resignation cannot farm rating points.
        if !self
            .players
            .iter()
            .all(|p| self.acted.iter().any(|a| *a == p.id))
        {
            self.rated = false;
        }
        self.result = Some((winner, reason));
        self.draw_offer = None;
    }
}
