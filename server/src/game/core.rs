//! The pure core of one game: `decide(command, now) -> event` and `apply(event) -> patch`.
//!
//! Why a core without I/O (in the spirit of shakmaty's `Position`): everything a game does
//! is a logged event ([`ActionRecord`]) and [`Core::apply`] is the one place that changes
//! the game. The live actor decides, appends the event to the store, applies it and
//! publishes the patch `apply` returned; recovery is the same `apply` folded over the log,
//! with no mode flags. Events carry every input that is not a function of the game (the
//! moment, the lag credit, the rematch's id), so the fold rebuilds exactly the document
//! the players saw, at exactly the seq they saw it: `seq` is the number of the last event.
//!
//! Server-decided ends (a flag, a missing first action) are events too, so a crash after
//! one can never bring an ended game back to life.
//!
//! Why patches from events instead of diffing documents: an event changes a few fields
//! (a move: one move appended, a few board cells, the position, the side to act, two clock
//! entries). `apply` compares only the fields a game can change — each one small, the
//! move list never — and writes the RFC 6902 operations for what differs, so the cost of
//! a move does not grow with the game's length and the document itself is only built for
//! a snapshot.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{json, Map, Value};
use stoa_protocol::wire::{DrawAction, ErrorCode, SeatPlayer, Visibility};
use stoa_protocol::{AnyGame, Reason, Side};

use super::clock_driver::{ClockDriver, Expiry};
use super::{Act, NewGame};
use crate::error::ApiError;
use crate::ids;
use crate::store::{ActionKind, ActionRecord};

/// What the core decided about a command.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Log this event, apply it and answer `ok`.
    Record(ActionRecord),
    /// Nothing to do (a repeated rematch request): answer `ok`.
    Unchanged,
    /// A deadline passed before the command could act: log and apply this server-decided
    /// end, then answer the command with the error.
    EndInstead(ActionRecord, ApiError),
}

/// An event that does not apply to the game (a corrupt or foreign log entry).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event seq {seq} does not apply: {reason}")]
pub struct ApplyError {
    /// The event's seq.
    pub seq: u64,
    /// Why.
    pub reason: String,
}

/// Which of the costlier parts of the document an event may have changed (the small ones —
/// clock, rated, status, side to act, draw offer — are always compared).
#[derive(Clone, Copy, Debug, Default)]
struct Touched {
    /// The position: `position` and `state` (a move).
    game: bool,
    /// The seats (a swap).
    players: bool,
    /// The rematch requests.
    rematch: bool,
}

/// The parts of the document an event can change, as of the last applied event (the
/// others — id, kind, options, visibility — never change, and `moves` only grows).
#[derive(Clone, Debug, PartialEq)]
struct Fields {
    clock: Value,
    rated: bool,
    players: Value,
    position: String,
    to_act: Value,
    state: Value,
    status: Value,
    draw_offer: Value,
    rematch: Value,
}

/// One game's state and rules of play, without I/O.
#[derive(Debug)]
pub struct Core {
    id: String,
    kind: String,
    options: Value,
    visibility: Visibility,
    code: Option<String>,
    /// The rated flag as set up (an abort unrates the game, not its rematch).
    rated_setting: bool,
    rated: bool,
    game: Box<dyn AnyGame>,
    /// Players by current side index (a swap exchanges them: they follow the person).
    players: [SeatPlayer; 2],
    moves: Vec<String>,
    result: Option<(Option<Side>, Reason)>,
    draw_offer: Option<Side>,
    /// Players (ids) who made their first action.
    acted: Vec<String>,
    rematch_requested: Vec<String>,
    rematch_game: Option<String>,
    clock: ClockDriver,
    /// The seq of the last applied event (0: none).
    seq: u64,
    /// When the last applied event happened (or the game was created).
    last_ms: u64,
    /// The configured abandonment timeout (ms) before a claim is allowed.
    abandon_timeout_ms: u64,
    fields: Fields,
}

impl Core {
    /// A new game at seq 0, created at `created_ms` (the clock's first-action window
    /// starts then).
    pub fn new(
        new: NewGame,
        game: Box<dyn AnyGame>,
        clock: ClockDriver,
        created_ms: u64,
        abandon_timeout_ms: u64,
    ) -> Core {
        let mut core = Core {
            id: new.id,
            kind: new.kind,
            options: new.options,
            visibility: new.visibility,
            code: new.code,
            rated_setting: new.rated,
            rated: new.rated,
            game,
            players: new.players,
            moves: Vec::new(),
            result: None,
            draw_offer: None,
            acted: Vec::new(),
            rematch_requested: Vec::new(),
            rematch_game: None,
            clock,
            seq: 0,
            last_ms: created_ms,
            abandon_timeout_ms,
            fields: Fields {
                clock: Value::Null,
                rated: false,
                players: Value::Null,
                position: String::new(),
                to_act: Value::Null,
                state: Value::Null,
                status: Value::Null,
                draw_offer: Value::Null,
                rematch: Value::Null,
            },
        };
        core.clock.start(core.game.to_act(), created_ms);
        core.fields = core.build_fields();
        core
    }

    /// The game id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The game kind.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The game's options (every field filled in).
    pub fn options(&self) -> &Value {
        &self.options
    }

    /// The seq of the current document.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// When the last event happened (the creation before any).
    pub fn last_ms(&self) -> u64 {
        self.last_ms
    }

    /// The result once ended: the winner (`None`: a draw) and the reason.
    pub fn result(&self) -> Option<(Option<Side>, Reason)> {
        self.result
    }

    /// Whether the game counts for ratings now (an abort unrates it).
    pub fn rated(&self) -> bool {
        self.rated
    }

    /// Public or private.
    pub fn visibility(&self) -> Visibility {
        self.visibility
    }

    /// The room code of a private game.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// Players by current side index.
    pub fn players(&self) -> &[SeatPlayer; 2] {
        &self.players
    }

    /// Player ids by current side index.
    pub fn player_ids(&self) -> [&str; 2] {
        [self.players[0].id.as_str(), self.players[1].id.as_str()]
    }

    /// Number of moves played.
    pub fn moves(&self) -> usize {
        self.moves.len()
    }

    /// The position string.
    pub fn position(&self) -> &str {
        &self.fields.position
    }

    /// The side names of the game, by side index.
    pub fn side_names(&self) -> [&'static str; 2] {
        self.game.side_names()
    }

    /// The rematch game, once both asked.
    pub fn rematch_game(&self) -> Option<&str> {
        self.rematch_game.as_deref()
    }

    /// The clock (for the actor's timer and tests).
    pub fn clock(&self) -> &ClockDriver {
        &self.clock
    }

    /// The current side of a seated player.
    pub fn side_of(&self, player_id: &str) -> Option<Side> {
        self.players
            .iter()
            .position(|p| p.id == player_id)
            .map(Side::from_index)
    }

    /// Legal moves for the side to act, canonical notation (none once ended).
    pub fn legal(&self) -> Vec<String> {
        if self.result.is_some() {
            Vec::new()
        } else {
            self.game.legal_notations()
        }
    }

    /// The setup of a rematch: same settings, sides exchanged, under the id `game_id`.
    pub fn rematch_setup(&self, game_id: String) -> NewGame {
        NewGame {
            id: game_id,
            kind: self.kind.clone(),
            options: self.options.clone(),
            clock: self.clock.request_json(),
            rated: self.rated_setting,
            visibility: self.visibility,
            code: self.code.clone(),
            players: [self.players[1].clone(), self.players[0].clone()],
            rematch_of: Some(self.id.clone()),
        }
    }

    /// One measured websocket round trip of a player's connection (lag compensation: it
    /// decides credits, which the move events then carry).
    pub fn record_rtt(&mut self, player_id: &str, rtt_ms: u64) {
        self.clock.record_rtt(player_id, rtt_ms);
    }

    /// Stops the clock at `now` without an event (the server shuts down, or the store is
    /// unreachable so no move can be acknowledged): nothing in the document changes; the
    /// [`Core::resume`] event later says how long the clock stood still.
    pub fn pause(&mut self, now: u64) {
        if self.result.is_none() {
            self.clock.pause(now);
        }
    }

    /// Whether the clock is paused (commands wait for the resume).
    pub fn paused(&self) -> bool {
        self.clock.clock().is_paused()
    }

    /// Resumes a paused clock at `now`. When that changes the document (a clock or a
    /// first-action deadline was running), the change is an event to log and apply;
    /// otherwise the clock resumes here and nothing is logged.
    pub fn resume(&mut self, now: u64) -> Option<ActionRecord> {
        let paused_ms = self.clock.clock().paused_at()?;
        let mut probe = self.clock.clone();
        probe.resume(now.max(paused_ms));
        if probe.to_json(self.game.side_names()) == self.fields.clock {
            self.clock = probe;
            return None;
        }
        // The server's own event: no player made it.
        Some(self.record(
            "",
            now.max(paused_ms),
            ActionKind::Resume { paused_ms },
            None,
        ))
    }

    /// When the actor's timer must fire (server ms), while the game is on and not paused.
    pub fn timer_deadline(&self) -> Option<u64> {
        if self.result.is_some() || self.paused() {
            return None;
        }
        self.clock.timer_deadline(self.player_ids())
    }

    /// The server-decided end due at `now`, if a deadline has passed: the side to act ran
    /// out of time, or made no first action in time.
    pub fn due(&self, now: u64) -> Option<ActionRecord> {
        if self.result.is_some() || self.paused() {
            return None;
        }
        let ids = self.player_ids();
        let (side, kind) = match self.clock.expiry(now, ids)? {
            Expiry::FirstAction(side) => (side, ActionKind::NoFirstAction),
            Expiry::Flag(flag) => (flag.side, ActionKind::Timeout),
        };
        Some(self.record(ids[side.index()], now, kind, None))
    }

    fn record(
        &self,
        player_id: &str,
        at_ms: u64,
        action: ActionKind,
        position: Option<String>,
    ) -> ActionRecord {
        ActionRecord {
            seq: self.seq + 1,
            at_ms,
            player_id: player_id.to_string(),
            action,
            position: Some(position.unwrap_or_else(|| self.fields.position.clone())),
            cmd: None,
        }
    }

    /// Decides a seated player's command at `now`. `opponent_gone_since`: when the
    /// opponent lost their last connection (`None` while connected), for claims.
    pub fn decide(
        &self,
        player_id: &str,
        act: Act,
        now: u64,
        opponent_gone_since: Option<u64>,
    ) -> Result<Decision, ApiError> {
        let Some(side) = self.side_of(player_id) else {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the seated players act in this game",
            ));
        };
        if act == Act::Rematch {
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
            Act::Move { mv, seq } => return self.decide_move(player_id, side, &mv, seq, now),
            Act::Resign => ActionKind::Resign,
            Act::Draw { action } => self.decide_draw(side, action)?,
            Act::Abort => {
                if self.players.iter().all(|p| self.acted.contains(&p.id)) {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        "both sides have acted: the game can no longer be aborted",
                    ));
                }
                ActionKind::Abort
            }
            Act::Claim => {
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
                ActionKind::Claim
            }
            Act::Rematch => unreachable_rematch()?,
        };
        Ok(Decision::Record(self.record(player_id, now, kind, None)))
    }

    fn decide_move(
        &self,
        player_id: &str,
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
        // turn?), and a refused move must change nothing.
        let mut next = self.game.clone_box();
        let played = next
            .play(mv)
            .map_err(|e| ApiError::new(ErrorCode::IllegalMove, e.to_string()))?;
        let credit_ms = self.clock.credit_for(side, player_id);
        let mut clock = self.clock.clone();
        let (next_side, ends_turn) = self.turn_after(next.as_ref(), player_id, played.swap);
        if clock
            .on_action(
                side,
                player_id,
                ends_turn,
                played.swap,
                next_side,
                now,
                credit_ms,
            )
            .is_err()
        {
            let end = self.record(player_id, now, ActionKind::Timeout, None);
            return Ok(Decision::EndInstead(
                end,
                ApiError::new(ErrorCode::GameOver, "the game is over: time ran out"),
            ));
        }
        let kind = ActionKind::Move {
            notation: played.notation,
            credit_ms: if ends_turn { credit_ms } else { 0 },
        };
        Ok(Decision::Record(self.record(
            player_id,
            now,
            kind,
            Some(next.position()),
        )))
    }

    /// After a move that produced `next`: the side to act (`None` once ended) and whether
    /// the move ended the mover's turn as a person (a swap exchanges the seats, not the
    /// colour to act; an Akunur bonus placement keeps the turn).
    fn turn_after(&self, next: &dyn AnyGame, player_id: &str, swap: bool) -> (Option<Side>, bool) {
        let next_side = if next.outcome().is_some() {
            None
        } else {
            next.to_act()
        };
        let next_player = next_side.map(|s| {
            let seat = if swap { s.other() } else { s };
            self.players[seat.index()].id.as_str()
        });
        (next_side, next_player != Some(player_id))
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

    fn decide_rematch(&self, player_id: &str, now: u64) -> Result<Decision, ApiError> {
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
        let fail = |reason: String| ApplyError {
            seq: record.seq,
            reason,
        };
        if record.seq <= self.seq {
            return Err(fail(format!("seq not after {}", self.seq)));
        }
        let side = self.side_of(&record.player_id);
        let seated = || side.ok_or_else(|| fail(format!("{} is not seated", record.player_id)));
        let at = record.at_ms;
        let moves_before = self.moves.len();
        let players_before = self.player_ids().map(str::to_string);
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
                self.apply_move(&record.player_id, seated()?, notation, *credit_ms, at)?;
                touched.players =
                    self.player_ids() != players_before.each_ref().map(String::as_str);
                // The rematch field names sides: a swap moves its entries too.
                touched.rematch = touched.players;
            }
            ActionKind::Resign => self.end(Some(seated()?.other()), Reason::Resign, at),
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
                self.rated = false;
                self.end(None, Reason::Aborted, at);
            }
            ActionKind::Resume { paused_ms } => {
                self.clock.pause(*paused_ms);
                self.clock.resume(at);
            }
        }
        self.seq = record.seq;
        self.last_ms = self.last_ms.max(at);
        Ok(self.patch(moves_before, touched))
    }

    fn apply_move(
        &mut self,
        player_id: &str,
        side: Side,
        notation: &str,
        credit_ms: u64,
        at: u64,
    ) -> Result<(), ApplyError> {
        let fail = |reason: String| ApplyError {
            seq: self.seq + 1,
            reason,
        };
        if self.game.to_act() != Some(side) {
            return Err(fail(format!("{player_id} moved out of turn")));
        }
        // `play` changes nothing when it refuses the move.
        let played = self.game.play(notation).map_err(|e| fail(e.to_string()))?;
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
            self.acted.push(player_id.to_string());
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
        Ok(())
    }

    fn end(&mut self, winner: Option<Side>, reason: Reason, at: u64) {
        // A no-op when the turn already ended (by rule) or a flag fell; otherwise the
        // running side is charged what it used (resignation, agreement, abort, claim).
        self.clock.stop(at);
        // A game that ends before each side made its first action was not played: it is
        // unrated (as lichess treats it), so a resignation cannot farm rating points.
        if !self.players.iter().all(|p| self.acted.contains(&p.id)) {
            self.rated = false;
        }
        self.result = Some((winner, reason));
        self.draw_offer = None;
    }

    /// The patch from the fields as they were to the fields now, plus the moves appended
    /// since `moves_before`. Parts the event cannot have changed are not rebuilt.
    fn patch(&mut self, moves_before: usize, touched: Touched) -> Vec<PatchOp> {
        let new = self.update_fields(touched);
        let mut ops = Vec::new();
        let mut path = String::with_capacity(64);
        let old = &self.fields;
        let mut field = |name: &str, old: &Value, new: &Value, ops: &mut Vec<PatchOp>| {
            path.clear();
            path.push('/');
            path.push_str(name);
            diff_into(&mut path, old, new, ops);
        };
        field("clock", &old.clock, &new.clock, &mut ops);
        if old.rated != new.rated {
            ops.push(PatchOp::replace("/rated".into(), json!(new.rated)));
        }
        field("players", &old.players, &new.players, &mut ops);
        if old.position != new.position {
            ops.push(PatchOp::replace("/position".into(), json!(new.position)));
        }
        field("to_act", &old.to_act, &new.to_act, &mut ops);
        for mv in &self.moves[moves_before..] {
            ops.push(PatchOp {
                op: "add",
                path: "/moves/-".into(),
                value: json!(mv),
            });
        }
        field("state", &old.state, &new.state, &mut ops);
        field("status", &old.status, &new.status, &mut ops);
        field("draw_offer", &old.draw_offer, &new.draw_offer, &mut ops);
        field("rematch", &old.rematch, &new.rematch, &mut ops);
        self.fields = new;
        ops
    }

    /// The fields after an event: the small ones rebuilt, the costly ones only when
    /// `touched` says the event may have changed them.
    fn update_fields(&self, touched: Touched) -> Fields {
        let names = self.game.side_names();
        let (status, to_act) = self.status_fields(names);
        let old = &self.fields;
        Fields {
            clock: self.clock.to_json(names),
            rated: self.rated,
            players: if touched.players {
                self.players_field(names)
            } else {
                old.players.clone()
            },
            position: if touched.game {
                self.game.position()
            } else {
                old.position.clone()
            },
            to_act,
            state: if touched.game {
                self.game.view()
            } else {
                old.state.clone()
            },
            status,
            draw_offer: self.draw_offer_field(names),
            rematch: if touched.rematch {
                self.rematch_field(names)
            } else {
                old.rematch.clone()
            },
        }
    }

    fn players_field(&self, names: [&str; 2]) -> Value {
        let mut players = Map::new();
        for (i, name) in names.iter().enumerate() {
            players.insert(
                name.to_string(),
                serde_json::to_value(&self.players[i]).unwrap_or(Value::Null),
            );
        }
        Value::Object(players)
    }

    fn status_fields(&self, names: [&str; 2]) -> (Value, Value) {
        match self.result {
            Some((winner, reason)) => (
                json!({
                    "state": "ended",
                    "winner": winner.map(|s| names[s.index()]),
                    "reason": reason.as_str(),
                }),
                Value::Null,
            ),
            None => (
                json!({"state": "playing", "winner": null, "reason": null}),
                self.game
                    .to_act()
                    .map(|s| Value::String(names[s.index()].to_string()))
                    .unwrap_or(Value::Null),
            ),
        }
    }

    fn draw_offer_field(&self, names: [&str; 2]) -> Value {
        self.draw_offer
            .map_or(Value::Null, |s| Value::from(names[s.index()]))
    }

    fn rematch_field(&self, names: [&str; 2]) -> Value {
        if self.rematch_requested.is_empty() && self.rematch_game.is_none() {
            return Value::Null;
        }
        let sides: Vec<&str> = self
            .rematch_requested
            .iter()
            .filter_map(|p| self.side_of(p))
            .map(|s| names[s.index()])
            .collect();
        json!({"requested": sides, "game_id": self.rematch_game})
    }

    /// Every field built from the game state.
    fn build_fields(&self) -> Fields {
        let names = self.game.side_names();
        let (status, to_act) = self.status_fields(names);
        Fields {
            clock: self.clock.to_json(names),
            rated: self.rated,
            players: self.players_field(names),
            position: self.game.position(),
            to_act,
            state: self.game.view(),
            status,
            draw_offer: self.draw_offer_field(names),
            rematch: self.rematch_field(names),
        }
    }

    /// The whole document at the current seq (protocol/docs/PROTOCOL.md, "Games and documents").
    pub fn document(&self) -> Value {
        let f = &self.fields;
        json!({
            "id": self.id,
            "kind": self.kind,
            "options": self.options,
            "clock": f.clock,
            "rated": f.rated,
            "visibility": self.visibility.as_str(),
            "players": f.players,
            "position": f.position,
            "to_act": f.to_act,
            "moves": self.moves,
            "state": f.state,
            "status": f.status,
            "draw_offer": f.draw_offer,
            "rematch": f.rematch,
        })
    }

    /// The document as freshly built from the game state (not from the cached fields the
    /// patches are computed against): tests compare it with the patched document.
    pub fn fresh_document(&self) -> Value {
        let mut doc = self.document();
        let f = self.build_fields();
        for (k, v) in [
            ("clock", f.clock),
            ("rated", json!(f.rated)),
            ("players", f.players),
            ("position", json!(f.position)),
            ("to_act", f.to_act),
            ("state", f.state),
            ("status", f.status),
            ("draw_offer", f.draw_offer),
            ("rematch", f.rematch),
        ] {
            doc[k] = v;
        }
        doc
    }
}

fn unreachable_rematch() -> Result<ActionKind, ApiError> {
    Err(ApiError::new(ErrorCode::Conflict, "rematch handled above"))
}

/// One RFC 6902 operation, typed so that a patch is encoded straight to text (no JSON
/// object per operation); the fields serialize in the order RFC 6902 shows them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchOp {
    /// `replace` or `add`.
    pub op: &'static str,
    /// JSON Pointer.
    pub path: String,
    /// The new value.
    pub value: Value,
}

impl PatchOp {
    fn replace(path: String, value: Value) -> PatchOp {
        PatchOp {
            op: "replace",
            path,
            value,
        }
    }
}

/// Appends to `ops` the operations that turn `old` into `new` at `path`: objects with the
/// same keys and arrays of the same length are compared member by member (so a move
/// replaces single board cells), anything else that differs is replaced whole.
fn diff_into(path: &mut String, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    // Equal subtrees (most of a board) are skipped by one comparison that stops at the
    // first difference, before any path is built.
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b))
            if a.len() == b.len() && a.keys().zip(b.keys()).all(|(x, y)| x == y) =>
        {
            for ((key, x), y) in a.iter().zip(b.values()) {
                if x == y {
                    continue;
                }
                let len = path.len();
                path.push('/');
                push_escaped(path, key);
                diff_into(path, x, y, ops);
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x == y {
                    continue;
                }
                let len = path.len();
                path.push('/');
                let _ = write!(path, "{i}");
                diff_into(path, x, y, ops);
                path.truncate(len);
            }
        }
        _ => ops.push(PatchOp::replace(path.clone(), new.clone())),
    }
}

/// JSON Pointer escaping (RFC 6901): `~` is `~0`, `/` is `~1`.
fn push_escaped(path: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_protocol::wire::SeatPlayer;

    /// A Fischer 60+1 Ūnane game (4x3) created at t=1000.
    fn timed_core() -> Core {
        let clock = json!({"kind":"fischer","initial_ms":60_000,"increment_ms":1_000});
        let kind = stoa_protocol::kind("unane").unwrap();
        let options = kind
            .validate_options(&json!({"width":4,"height":3}))
            .unwrap();
        let seat = |id: &str| SeatPlayer {
            id: id.into(),
            name: id.into(),
            rating: None,
            bot: false,
        };
        let tc = crate::clock_request::time_control(&clock).unwrap();
        let driver = ClockDriver::new(tc, ["pa", "pb"], 30_000).unwrap();
        let new = NewGame {
            id: "g1".into(),
            kind: "unane".into(),
            options: options.clone(),
            clock,
            rated: false,
            visibility: Visibility::Public,
            code: None,
            players: [seat("pa"), seat("pb")],
            rematch_of: None,
        };
        Core::new(new, kind.start(&options).unwrap(), driver, 1_000, 60_000)
    }

    /// The owner decides a move at `at`; the event it logs.
    fn next_move(core: &Core, at: u64) -> ActionRecord {
        let player = core.player_ids()[core.game.to_act().unwrap().index()].to_string();
        let mv = core.legal()[0].clone();
        match core.decide(&player, Act::Move { mv, seq: None }, at, None) {
            Ok(Decision::Record(event)) => event,
            _ => panic!("the move is refused"),
        }
    }

    /// A node whose clock is paused (its store unreachable) applies a logged event to the
    /// document as every other node does: one document per seq, and the pause goes on.
    #[test]
    fn a_local_pause_never_changes_what_an_event_makes() {
        let mut owner = timed_core();
        let mut follower = timed_core();
        for at in [2_000, 3_000, 4_500] {
            let event = next_move(&owner, at);
            owner.apply(&event).unwrap();
            follower.apply(&event).unwrap();
        }
        // The move is logged, then the owner's store goes away before it applies it.
        let event = next_move(&owner, 6_000);
        owner.pause(6_100);
        let patch_paused = owner.apply(&event).unwrap();
        let patch = follower.apply(&event).unwrap();
        assert_eq!(json!(patch_paused), json!(patch));
        assert_eq!(owner.document(), follower.document());
        assert!(owner.paused(), "the pause goes on after the event");
        // The resume logged later says how long the clock stood still, for everyone.
        let resume = owner.resume(9_000).expect("a resume event");
        owner.apply(&resume).unwrap();
        follower.apply(&resume).unwrap();
        assert_eq!(owner.document(), follower.document());
        assert!(!owner.paused());
    }

    #[test]
    fn diff_replaces_only_changed_members() {
        let old = json!({"a": [1, 2, 3], "b": {"x/y": 1, "z": "k"}, "c": [1]});
        let new = json!({"a": [1, 5, 3], "b": {"x/y": 2, "z": "k"}, "c": [1, 2]});
        let mut ops = Vec::new();
        let mut path = String::new();
        diff_into(&mut path, &old, &new, &mut ops);
        assert_eq!(
            json!(ops),
            json!([
                {"op":"replace","path":"/a/1","value":5},
                {"op":"replace","path":"/b/x~1y","value":2},
                {"op":"replace","path":"/c","value":[1,2]},
            ])
        );
        let mut patched = old.clone();
        let ops: json_patch::Patch = serde_json::from_value(json!(ops)).unwrap();
        json_patch::patch(&mut patched, &ops).unwrap();
        assert_eq!(patched, new);
    }
}
