//! Deciding a seated player's command: whether it is allowed now and, if so, which event
//! it makes.
//!
//! Why apart from applying: a decision only reads the game (refused commands change
//! nothing, a move is tried on copies), while [`Core::apply`](super::Core::apply) is the
//! one place that changes it; recovery replays events and never decides again.

use stoa_protocol::wire::{DrawAction, ErrorCode};
use stoa_protocol::Side;

use super::{Core, Decision, Prepared};
use crate::error::ApiError;
use crate::game::Act;
use crate::ids;
use crate::ids::PlayerId;
use crate::store::ActionKind;

impl Core {
    /// Decides a seated player's command at `now`. `opponent_gone_since`: when the
    /// opponent lost their last connection (`None` while connected), for claims.
    pub fn decide(
        &self,
        player_id: &PlayerId,
        act: &Act,
        now: u64,
        opponent_gone_since: Option<u64>,
    ) -> Result<Decision, ApiError> {
        let Some(side) = self.side_of(player_id) else {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the seated players act in this game",
            ));
        };
        if *act == Act::Rematch {
            return self.decide_rematch(player_id, now);
        }
        if self.result.is_some() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        if self.paused() {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                "the game is paused (the server is restarting or its storage is unreachable): try again",
            ));
        }
        // A deadline that passed before this command arrived ends the game first, so the
        // result never depends on whether the timer or the command was handled first.
        if let Some(end) = self.due(now) {
            let message = match end.action {
                ActionKind::NoFirstAction => "the game was aborted: no first action in time",
                _ => "the game is over: time ran out",
            };
            return Ok(Decision::EndInstead(
                end,
                ApiError::new(ErrorCode::GameOver, message),
            ));
        }
        let kind = match act {
            Act::Move { mv, seq } => return self.decide_move(player_id, side, mv, *seq, now),
            Act::Resign => ActionKind::Resign,
            Act::Draw { action } => self.decide_draw(side, *action)?,
            Act::Abort => self.decide_abort()?,
            Act::Claim => self.decide_claim(side, now, opponent_gone_since)?,
            Act::Rematch => unreachable_rematch()?,
            Act::Berserk => self.decide_berserk(player_id, side)?,
            Act::Banned => ActionKind::Banned,
            Act::OperatorAbort => ActionKind::OperatorAbort,
        };
        Ok(Decision::Record(self.record(player_id, now, kind, None)))
    }

    /// An abort, allowed only until both sides have acted: an abort unrates the game, so
    /// once both have played it must end with a result (a resignation, a draw) instead.
    fn decide_abort(&self) -> Result<ActionKind, ApiError> {
        if self
            .players
            .iter()
            .all(|p| self.acted.iter().any(|a| *a == p.id))
        {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "both sides have acted: the game can no longer be aborted",
            ));
        }
        Ok(ActionKind::Abort)
    }

    /// A claim of the win against an opponent gone for longer than the abandonment
    /// timeout: refused while they are connected or the timeout has not passed, so a
    /// dropped connection that comes back in time costs nothing.
    fn decide_claim(
        &self,
        side: Side,
        now: u64,
        opponent_gone_since: Option<u64>,
    ) -> Result<ActionKind, ApiError> {
        let Some(gone) = opponent_gone_since else {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "your opponent is connected",
            ));
        };
        let timeout_ms =
            self.clock
                .abandonment_timeout_ms(side.other(), now, self.abandon_timeout_ms);
        let gone_ms = now.saturating_sub(gone);
        // "Longer than" the timeout (protocol/docs/PROTOCOL.md).
        if gone_ms <= timeout_ms {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "your opponent left {:.1} s ago; you may claim after {:.1} s",
                    gone_ms as f64 / 1000.0,
                    timeout_ms as f64 / 1000.0
                ),
            ));
        }
        Ok(ActionKind::Claim)
    }

    fn decide_move(
        &self,
        player_id: &PlayerId,
        side: Side,
        mv: &str,
        seq: Option<u64>,
        now: u64,
    ) -> Result<Decision, ApiError> {
        if let Some(seq) = seq {
            if seq != self.seq {
                return Err(ApiError::new(
                    ErrorCode::StaleSeq,
                    format!("seq {seq} is not the current one ({})", self.seq),
                ));
            }
        }
        if self.game.to_act() != Some(side) {
            let to_act = self
                .game
                .to_act()
                .map(|s| self.game.side_name(s))
                .unwrap_or("nobody");
            return Err(ApiError::new(
                ErrorCode::NotYourTurn,
                format!("it is {to_act}'s turn"),
            ));
        }
        // Played on copies: the clock needs the move's effect (does it end this person's
        // turn?), and a refused move must change nothing. The copy is kept for `apply`.
        let (next, tracked) = self
            .game
            .play_on_copy(mv)
            .map_err(|e| ApiError::new(ErrorCode::IllegalMove, e.to_string()))?;
        let played = &tracked.played;
        let credit_ms = self.clock.credit_for(side, player_id);
        let (_, ends_turn) = self.turn_after(next.as_ref(), player_id, played.swap);
        if self
            .clock
            .would_flag(side, player_id, ends_turn, now, credit_ms)
        {
            let end = self.record(player_id, now, ActionKind::Timeout, None);
            return Ok(Decision::EndInstead(
                end,
                ApiError::new(ErrorCode::GameOver, "the game is over: time ran out"),
            ));
        }
        let kind = ActionKind::Move {
            notation: played.notation.clone(),
            credit_ms: if ends_turn { credit_ms } else { 0 },
        };
        let position = next.position();
        let record = self.record(player_id, now, kind, Some(position.clone()));
        self.prepare(Prepared {
            seq: record.seq,
            game: next,
            tracked,
            position,
        });
        Ok(Decision::Record(record))
    }

    fn decide_draw(&self, side: Side, action: DrawAction) -> Result<ActionKind, ApiError> {
        let opponent_offered = self.draw_offer == Some(side.other());
        match action {
            DrawAction::Offer if self.draw_offer == Some(side) => Err(ApiError::new(
                ErrorCode::Conflict,
                "you already offered a draw",
            )),
            DrawAction::Offer if !opponent_offered => Ok(ActionKind::DrawOffer),
            // Offering while the opponent's offer stands accepts it.
            DrawAction::Offer | DrawAction::Accept if opponent_offered => {
                Ok(ActionKind::DrawAccept)
            }
            DrawAction::Decline if opponent_offered => Ok(ActionKind::DrawDecline),
            _ => Err(ApiError::new(
                ErrorCode::Conflict,
                "there is no draw offer from your opponent",
            )),
        }
    }

    /// Berserk: only in an arena game whose arena allows it, only with a running kind of
    /// clock, only once and before the player's own first action.
    fn decide_berserk(&self, player_id: &PlayerId, side: Side) -> Result<ActionKind, ApiError> {
        if !self.arena.as_ref().is_some_and(|a| a.berserk) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "berserk is only allowed in arena games whose arena allows it",
            ));
        }
        if self.berserk(side) {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "you already went berserk",
            ));
        }
        if self.acted.iter().any(|p| p == player_id) {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "berserk is only allowed before your first move",
            ));
        }
        // The clock decides the rest (a kind of clock that runs; not flagged).
        if !self.clock.clone().berserk(side) {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "berserk needs a running clock (not none, not correspondence)",
            ));
        }
        Ok(ActionKind::Berserk)
    }

    fn decide_rematch(&self, player_id: &PlayerId, now: u64) -> Result<Decision, ApiError> {
        if self.arena.is_some() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "arena games have no rematch: the arena pairs you again",
            ));
        }
        if self.result.is_none() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "a rematch can be asked only once the game is over",
            ));
        }
        if self.rematch_game.is_some() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "the rematch has already started",
            ));
        }
        if self.rematch_requested.iter().any(|p| p == player_id) {
            return Ok(Decision::Unchanged);
        }
        // The second request starts the rematch: its id is decided here, so the event
        // (and a replay of it) names the game it started.
        let game_id = (!self.rematch_requested.is_empty()).then(ids::game_id);
        Ok(Decision::Record(self.record(
            player_id,
            now,
            ActionKind::Rematch { game_id },
            None,
        )))
    }
}

fn unreachable_rematch() -> Result<ActionKind, ApiError> {
    Err(ApiError::new(ErrorCode::Conflict, "rematch handled above"))
}
