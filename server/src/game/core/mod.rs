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

mod apply;
mod decide;
mod document;
mod patch;

use parking_lot::Mutex;
use serde_json::Value;
use stoa_protocol::wire::{SeatPlayer, Visibility};

use stoa_protocol::{AnyGame, Reason, Side, Tracked};

use super::clock_driver::{ClockDriver, Expiry};
use super::clock_shown::ClockShown;
use super::NewGame;
use crate::domain::setup::GameSetup;
use crate::error::ApiError;
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::store::{ActionKind, ActionRecord};
use document::Fields;
pub use patch::{write_patch, PatchOp};
pub use stoa_protocol::json_text::{write_str, write_value};

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

/// One game's state and rules of play, without I/O.
#[derive(Debug)]
pub struct Core {
    id: GameId,
    setup: GameSetup,
    visibility: Visibility,
    code: Option<RoomCode>,
    /// The rated flag as set up (an abort unrates the game, not its rematch).
    rated_setting: bool,
    /// The arena that paired this game, if one did.
    arena: Option<crate::store::ArenaLink>,
    rated: bool,
    game: Box<dyn AnyGame>,
    /// Players by current side index (a swap exchanges them: they follow the person).
    players: [SeatPlayer; 2],
    moves: Vec<String>,
    result: Option<(Option<Side>, Reason)>,
    draw_offer: Option<Side>,
    /// Players (ids) who made their first action.
    acted: Vec<PlayerId>,
    rematch_requested: Vec<PlayerId>,
    rematch_game: Option<GameId>,
    /// The side whose first action never came (the game was aborted for it): an arena
    /// takes that player out of its pool, since they are not at the board.
    absent: Option<Side>,
    clock: ClockDriver,
    /// The seq of the last applied event (0: none).
    seq: u64,
    /// When the last applied event happened (or the game was created).
    last_ms: u64,
    /// The configured abandonment timeout (ms) before a claim is allowed.
    abandon_timeout_ms: u64,
    fields: Fields,
    /// What the last move changed in the engine's view, when the engine can tell (see
    /// [`stoa_protocol::Game::view_changes`]): the patch replaces just those members of
    /// the view, which is never built or compared per move.
    view_changes: Option<Vec<(String, Value)>>,
    /// What `fields.clock` shows, as numbers (see [`ClockShown`]).
    clock_shown: ClockShown,
    /// The last move decided, as played on a copy: applying it (the usual next step)
    /// takes the copy instead of playing the move a second time.
    prepared: Mutex<Option<Prepared>>,
    /// The position after the move just applied, when its decision computed it already.
    position_known: Option<String>,
}

/// A decided move, played on a copy of the game ([`Core::decide`]).
#[derive(Debug)]
pub(super) struct Prepared {
    /// The seq of the move's event.
    pub(super) seq: u64,
    /// The game after the move.
    pub(super) game: Box<dyn AnyGame>,
    /// What was played and what it changed in the view.
    pub(super) tracked: Tracked,
    /// The position string after the move.
    pub(super) position: String,
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
            setup: new.setup,
            visibility: new.visibility,
            code: new.code,
            rated_setting: new.rated,
            rated: new.rated,
            arena: new.arena,
            game,
            players: new.players,
            moves: Vec::new(),
            result: None,
            draw_offer: None,
            acted: Vec::new(),
            rematch_requested: Vec::new(),
            rematch_game: None,
            absent: None,
            clock,
            seq: 0,
            last_ms: created_ms,
            abandon_timeout_ms,
            view_changes: None,
            clock_shown: ClockShown::default(),
            prepared: Mutex::new(None),
            position_known: None,
            fields: Fields {
                clock: Value::Null,
                rated: false,
                players: Value::Null,
                position: String::new(),
                to_act: None,
                status: Value::Null,
                draw_offer: Value::Null,
                rematch: Value::Null,
                arena: Value::Null,
            },
        };
        core.clock.start(core.game.to_act(), created_ms);
        core.fields = core.build_fields();
        core.clock_shown = ClockShown::of(&core.clock);
        core
    }

    /// The game id.
    pub fn id(&self) -> &GameId {
        &self.id
    }

    /// The game kind.
    pub fn kind(&self) -> &str {
        self.setup.kind_id()
    }

    /// The game's options (every field filled in).
    pub fn options(&self) -> &Value {
        &self.setup.options
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

    /// The side aborted for not making its first action in time, if the game ended so.
    pub fn absent(&self) -> Option<Side> {
        self.absent
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
    pub fn code(&self) -> Option<&RoomCode> {
        self.code.as_ref()
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

    /// The arena that paired this game.
    pub fn arena(&self) -> Option<&crate::store::ArenaLink> {
        self.arena.as_ref()
    }

    /// Whether the player at `side` (now) went berserk.
    pub fn berserk(&self, side: Side) -> bool {
        self.clock.clock().is_berserk(side)
    }

    /// The rematch game, once both asked.
    pub fn rematch_game(&self) -> Option<&GameId> {
        self.rematch_game.as_ref()
    }

    /// The clock (for the actor's timer and tests).
    pub fn clock(&self) -> &ClockDriver {
        &self.clock
    }

    /// The current side of a seated player.
    pub fn side_of(&self, player_id: &PlayerId) -> Option<Side> {
        self.players
            .iter()
            .position(|p| p.id == player_id.as_str())
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
    pub fn rematch_setup(&self, game_id: GameId) -> NewGame {
        NewGame {
            id: game_id,
            setup: self.setup.clone(),
            rated: self.rated_setting,
            visibility: self.visibility,
            code: self.code.clone(),
            players: [self.players[1].clone(), self.players[0].clone()],
            rematch_of: Some(self.id.clone()),
            arena: None,
        }
    }

    /// One measured websocket round trip of a player's connection (lag compensation: it
    /// decides credits, which the move events then carry).
    pub fn record_rtt(&mut self, player_id: &PlayerId, rtt_ms: u64) {
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
        if ClockShown::of(&probe) == self.clock_shown {
            self.clock = probe;
            return None;
        }
        // The server's own event: no player made it.
        Some(self.record(
            &PlayerId::default(),
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
        Some(self.record(&PlayerId::from(ids[side.index()]), now, kind, None))
    }

    /// Keeps a decided move's copy for `apply` (decisions only read the game, hence
    /// the lock; it is never contended: one actor owns the core).
    fn prepare(&self, prepared: Prepared) {
        *self.prepared.lock() = Some(prepared);
    }

    /// The prepared copy, if it was decided from the game as it is now for the event
    /// at `seq` playing `notation`.
    fn take_prepared(&mut self, seq: u64, notation: &str) -> Option<Prepared> {
        let prepared = self.prepared.get_mut().take()?;
        // Decided at the seq before this one, the game has not changed since (only
        // applying changes it, and every apply moves the seq).
        (prepared.seq == seq && seq == self.seq + 1 && prepared.tracked.played.notation == notation)
            .then_some(prepared)
    }

    fn record(
        &self,
        player_id: &PlayerId,
        at_ms: u64,
        action: ActionKind,
        position: Option<String>,
    ) -> ActionRecord {
        ActionRecord {
            seq: self.seq + 1,
            at_ms,
            player_id: player_id.clone(),
            action,
            position: Some(position.unwrap_or_else(|| self.fields.position.clone())),
            cmd: None,
        }
    }

    /// After a move that produced `next`: the side to act (`None` once ended) and whether
    /// the move ended the mover's turn as a person (a swap exchanges the seats, not the
    /// colour to act; an Akunur bonus placement keeps the turn). Shared by deciding and
    /// applying a move, so the live clock and a replayed one charge the same turn.
    fn turn_after(
        &self,
        next: &dyn AnyGame,
        player_id: &PlayerId,
        swap: bool,
    ) -> (Option<Side>, bool) {
        let next_side = if next.outcome().is_some() {
            None
        } else {
            next.to_act()
        };
        let next_player = next_side.map(|s| {
            let seat = if swap { s.other() } else { s };
            self.players[seat.index()].id.as_str()
        });
        (next_side, next_player != Some(player_id.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Act;
    use serde_json::json;
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
        let tc = crate::domain::clock_request::time_control(&clock).unwrap();
        let driver = ClockDriver::new(tc, ["pa", "pb"], 30_000).unwrap();
        let new = NewGame {
            id: "g1".into(),
            setup: GameSetup {
                kind,
                options: options.clone(),
                clock: tc,
                start: None,
            },
            rated: false,
            visibility: Visibility::Public,
            code: None,
            players: [seat("pa"), seat("pb")],
            rematch_of: None,
            arena: None,
        };
        Core::new(new, kind.start(&options).unwrap(), driver, 1_000, 60_000)
    }

    /// The owner decides a move at `at`; the event it logs.
    fn next_move(core: &Core, at: u64) -> ActionRecord {
        let player = PlayerId::from(core.player_ids()[core.game.to_act().unwrap().index()]);
        let mv = core.legal()[0].clone();
        match core.decide(&player, &Act::Move { mv, seq: None }, at, None) {
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

    /// A decided move keeps its copy for `apply`; a decision that is never applied (its
    /// log write failed, another decision replaced it) must never stand in for the event
    /// that is applied instead.
    #[test]
    fn only_the_event_decided_last_at_this_seq_takes_the_prepared_copy() {
        let mut owner = timed_core();
        let mut follower = timed_core();
        let legal = owner.legal();
        assert!(legal.len() > 1);
        let decide = |core: &Core, mv: &str| match core.decide(
            &"pa".into(),
            &Act::Move {
                mv: mv.to_string(),
                seq: None,
            },
            2_000,
            None,
        ) {
            Ok(Decision::Record(event)) => event,
            _ => panic!("the move is refused"),
        };
        // First a decision that is never logged, then the one that is: it applies.
        let _lost = decide(&owner, &legal[0]);
        let event = decide(&owner, &legal[1]);
        owner.apply(&event).unwrap();
        follower.apply(&event).unwrap();
        assert_eq!(owner.document(), follower.document());
        assert_eq!(owner.moves, vec![legal[1].clone()]);
        // A decision, then another node's event at that seq (the owner changed): the
        // event is played from the log, not taken from the copy.
        let mine = next_move(&owner, 3_000);
        let mut other = timed_core();
        other.apply(&event).unwrap();
        let theirs = {
            let mv = other.legal().last().unwrap().clone();
            match other.decide(&"pb".into(), &Act::Move { mv, seq: None }, 3_500, None) {
                Ok(Decision::Record(e)) => e,
                _ => panic!("the move is refused"),
            }
        };
        assert_ne!(mine.action, theirs.action);
        owner.apply(&theirs).unwrap();
        follower.apply(&theirs).unwrap();
        assert_eq!(owner.document(), follower.document());
        assert_eq!(owner.game.position(), follower.game.position());
    }
}
