//! The game actor: one task per live game that alone mutates it.
//!
//! Why: every action is validated by the rules engine, persisted through the store, applied,
//! and turned into exactly one `seq` step with one RFC 6902 patch, encoded once and handed as
//! the same bytes to every subscriber with `try_send` (a full subscriber queue kicks that
//! subscriber, never delays the game). Order for the acting connection: the diff is queued
//! to subscribers first, then the actor replies and the connection queues `ok` — so a
//! subscribed mover always sees the diff before its `ok`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::Utf8Bytes;
use serde_json::{json, Value};
use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{DrawAction, ErrorCode, Rid, SeatPlayer, ServerMessage, Visibility};
use stoa_protocol::{AnyGame, Reason, Side};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::clock_driver::{ClockDriver, Expiry};
use super::document::{self, DocInput};
use super::replay::Replay;
use super::{Act, Answer, Command, NewGame};
use crate::error::ApiError;
use crate::hub::Hub;
use crate::ids;
use crate::metrics::kind_index;
use crate::outbound::{ConnHandle, SendOutcome};
use crate::store::{ActionKind, ActionRecord, FinishedGame, SEQ_RESERVE};

/// Where the action being applied comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Source {
    /// A player's request: it is logged before it is applied.
    Player,
    /// The log (already durable): not logged again, and checks that depend on the moment
    /// (presence, abandonment time) are skipped. `restoring`: rebuilding before the actor
    /// runs, so nothing is broadcast and no rematch game is created (it has its own log).
    Log {
        /// Rebuilding at start-up.
        restoring: bool,
    },
}

/// The state one actor owns.
struct Actor {
    hub: Arc<Hub>,
    id: String,
    kind: String,
    options: Value,
    /// The clock and the players' lag compensation (see `clock_driver`).
    clock: ClockDriver,
    rated: bool,
    /// The rated flag as set up (an abort unrates the game, not its rematch).
    rated_setting: bool,
    visibility: Visibility,
    code: Option<String>,
    /// Players who presented the room code: they may watch again without it.
    code_viewers: std::collections::HashSet<String>,
    game: Box<dyn AnyGame>,
    /// Players by current side index (a swap exchanges them: they follow the person).
    players: [SeatPlayer; 2],
    moves: Vec<String>,
    result: Option<(Option<Side>, Reason)>,
    draw_offer: Option<Side>,
    /// Players (ids) who made their first action.
    acted: Vec<String>,
    online: HashMap<String, bool>,
    /// When each offline player lost its last connection (server ms, the hub's time).
    offline_since: HashMap<String, u64>,
    subs: HashMap<u64, Arc<ConnHandle>>,
    spectators: u64,
    rematch_requested: Vec<String>,
    rematch_game: Option<String>,
    seq: u64,
    doc: Value,
    replay: Replay,
    ended_at: Option<Instant>,
    source: Source,
    /// The moment of the action being handled: its arrival, or its log timestamp when it
    /// is replayed. One moment for the deadline check, the clock and the log entry, so a
    /// replay charges the clocks exactly what the live game did.
    action_at: Option<u64>,
    /// A logged write whose answer was lost: the log decides whether it happened before
    /// anything else happens in this game.
    in_doubt: Option<ActionRecord>,
    /// No seq above this is issued until the store has reserved more (see `SEQ_RESERVE`).
    seq_ceiling: u64,
    /// The final document could not be stored yet (retried on every tick).
    finish_unsaved: bool,
    /// The clock is paused because the store is unreachable (no move can be acknowledged,
    /// so nobody may lose time meanwhile).
    store_paused: bool,
    /// The lobby's view of this game (public games while they are on).
    summary: Arc<std::sync::Mutex<Option<Value>>>,
}

/// Starts the actor of a new game on its own task.
pub fn spawn(
    hub: Arc<Hub>,
    new: NewGame,
    game: Box<dyn AnyGame>,
    online: [bool; 2],
    rx: mpsc::Receiver<Command>,
    summary: Arc<std::sync::Mutex<Option<Value>>>,
) {
    let now = hub.time.now_ms();
    let mut actor = build(hub, new, game, online, summary, now);
    actor.doc = actor.build_doc();
    actor.update_summary();
    actor.start(rx);
}

/// A game being rebuilt from its action log before its actor runs (see
/// [`crate::recovery`]): actions are applied through the same code as live ones, without
/// logging or broadcasting them.
pub struct Restoring(Actor);

impl Restoring {
    /// A game at its start, both players offline.
    /// The clock starts at `created_ms`, the game's creation time, so that logged actions
    /// replay at their logged times.
    pub fn new(
        hub: Arc<Hub>,
        new: NewGame,
        game: Box<dyn AnyGame>,
        summary: Arc<std::sync::Mutex<Option<Value>>>,
        created_ms: u64,
    ) -> Restoring {
        Restoring(build(hub, new, game, [false, false], summary, created_ms))
    }

    /// Applies one logged action as the rules engine and the actor would have live.
    pub async fn apply(&mut self, record: &ActionRecord) -> Result<(), ApiError> {
        self.0.apply_logged(record, true).await
    }

    /// The current position string.
    pub fn position(&self) -> String {
        self.0.game.position()
    }

    /// Whether the game has ended.
    pub fn ended(&self) -> bool {
        self.0.result.is_some()
    }

    /// Number of moves played.
    pub fn moves(&self) -> usize {
        self.0.moves.len()
    }

    /// Starts the actor at document `seq` (above every seq issued before), with seqs
    /// reserved up to `ceiling`. `last_ms` is the last moment known to be persisted (the
    /// last logged action, or the creation): the clock is paused there and resumed now, so
    /// the time while the server was down is charged to nobody — the turn in progress
    /// continues with the time it had at its last logged action. Both players count as
    /// offline from now (abandonment is measured from the restart).
    pub fn start(mut self, seq: u64, ceiling: u64, last_ms: u64, rx: mpsc::Receiver<Command>) {
        let now = self.0.hub.time.now_ms();
        if self.0.result.is_none() {
            self.0.clock.pause(last_ms);
            self.0.clock.resume(now.max(last_ms));
        }
        for since in self.0.offline_since.values_mut() {
            *since = now;
        }
        self.0.seq = seq;
        self.0.seq_ceiling = ceiling;
        self.0.doc = self.0.build_doc();
        self.0.update_summary();
        self.0.start(rx);
    }
}

fn build(
    hub: Arc<Hub>,
    new: NewGame,
    game: Box<dyn AnyGame>,
    online: [bool; 2],
    summary: Arc<std::sync::Mutex<Option<Value>>>,
    now: u64,
) -> Actor {
    let mut online_map = HashMap::new();
    let mut offline_since = HashMap::new();
    for (i, p) in new.players.iter().enumerate() {
        online_map.insert(p.id.clone(), online[i]);
        if !online[i] {
            offline_since.insert(p.id.clone(), now);
        }
    }
    let replay = Replay::new(hub.config.replay_buffer);
    let clock = start_clock(&hub, &new, game.to_act(), now);
    Actor {
        hub,
        id: new.id,
        kind: new.kind,
        options: new.options,
        clock,
        rated: new.rated,
        rated_setting: new.rated,
        visibility: new.visibility,
        code: new.code,
        code_viewers: Default::default(),
        game,
        players: new.players,
        moves: Vec::new(),
        result: None,
        draw_offer: None,
        acted: Vec::new(),
        online: online_map,
        offline_since,
        subs: HashMap::new(),
        spectators: 0,
        rematch_requested: Vec::new(),
        rematch_game: None,
        seq: 0,
        doc: Value::Null,
        replay,
        ended_at: None,
        source: Source::Player,
        action_at: None,
        in_doubt: None,
        seq_ceiling: SEQ_RESERVE,
        finish_unsaved: false,
        store_paused: false,
        summary,
    }
}

impl Actor {
    fn start(self, rx: mpsc::Receiver<Command>) {
        let span = tracing::info_span!("game", id = %self.id, kind = %self.kind);
        let hub = self.hub.clone();
        let id = self.id.clone();
        let task = tokio::spawn(self.run(rx).instrument(span));
        // Supervision: an actor that panics (a rules-engine bug) must not leave a dead handle
        // behind; its game is unregistered and requests get `not_found` instead of hanging.
        tokio::spawn(async move {
            if let Err(e) = task.await {
                if e.is_panic() {
                    tracing::error!(game = %id, "game actor panicked; game unregistered");
                    hub.games.remove(&id);
                }
            }
        });
    }

    /// The moment of the action being handled (see `action_at`), else the hub's time.
    fn now_ms(&self) -> u64 {
        self.action_at.unwrap_or_else(|| self.hub.time.now_ms())
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        tracing::info!("game started");
        let period = Duration::from_millis(self.hub.config.spectator_batch_ms.clamp(10, 60_000));
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let linger = Duration::from_millis(self.hub.config.finished_linger_ms);
        let mut shutdown = self.hub.shutdown.clone();
        let mut shutting_down = *shutdown.borrow();
        loop {
            // The one clock timer: the first-action deadline or the running side's flag
            // (plus its lag grace), re-armed after every event.
            let deadline = self.timer_deadline();
            let wake =
                crate::time::instant_at(self.hub.time.as_ref(), deadline.unwrap_or(u64::MAX));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                _ = tokio::time::sleep_until(wake), if deadline.is_some() => {
                    self.on_timer().await;
                }
                changed = shutdown.changed(), if !shutting_down => {
                    // Moves are refused while the server shuts down: nobody may lose on
                    // time meanwhile (a restore resumes the clock). A dropped sender only
                    // disables this branch.
                    shutting_down = true;
                    if changed.is_ok() && *shutdown.borrow() && self.result.is_none() {
                        self.clock.pause(self.hub.time.now_ms());
                        self.commit();
                    }
                }
                _ = tick.tick() => {
                    self.upkeep().await;
                    self.flush_spectators();
                    if self.subs.is_empty()
                        && !self.finish_unsaved
                        && self.in_doubt.is_none()
                        && self.ended_at.is_some_and(|t| t.elapsed() >= linger)
                    {
                        break;
                    }
                }
            }
        }
        self.hub.games.remove(&self.id);
        tracing::info!("game actor stopped");
    }

    async fn handle(&mut self, cmd: Command) {
        if self.in_doubt.is_some() && matches!(cmd, Command::Watch { .. } | Command::Legal { .. }) {
            // Reads show what the log says happened, when the store can tell.
            let _ = self.settle().await;
        }
        match cmd {
            Command::Watch {
                conn,
                rid,
                since,
                code,
                reply,
            } => {
                let r = self.watch(conn, rid, since, code);
                if let Some(reply) = reply {
                    let _ = reply.send(r);
                }
            }
            Command::Unwatch { conn_id } => {
                if let Some(conn) = self.subs.remove(&conn_id) {
                    conn.remove_sub(&self.id);
                }
            }
            Command::Legal { reply } => {
                let moves = if self.result.is_some() {
                    Vec::new()
                } else {
                    self.game.legal_notations()
                };
                let _ = reply.send(Ok(Answer::Legal {
                    seq: self.seq,
                    moves,
                }));
            }
            Command::Act {
                player_id,
                act,
                reply,
            } => {
                let r = self.act(&player_id, act).await;
                let _ = reply.send(r);
            }
            Command::Presence { player_id, online } => self.presence(&player_id, online),
            Command::Rtt { player_id, rtt_ms } => self.clock.record_rtt(&player_id, rtt_ms),
            Command::Snapshot { code, reply } => {
                let visible = self.visibility == Visibility::Public || self.code_matches(&code);
                let _ = reply.send(visible.then(|| (self.seq, self.doc.clone())));
            }
        }
    }

    /// Player ids by current side index.
    fn player_ids(&self) -> [&str; 2] {
        [self.players[0].id.as_str(), self.players[1].id.as_str()]
    }

    /// When the clock timer must fire (server ms), while the game is on.
    fn timer_deadline(&self) -> Option<u64> {
        if self.result.is_some() {
            return None;
        }
        self.clock.timer_deadline(self.player_ids())
    }

    /// The clock timer fired: end the game if a deadline passed (even with nobody
    /// connected); otherwise the loop re-arms it.
    async fn on_timer(&mut self) {
        if self.result.is_some() {
            return;
        }
        let now = self.hub.time.now_ms();
        let ids = [self.players[0].id.as_str(), self.players[1].id.as_str()];
        if let Some(expiry) = self.clock.check_deadlines(now, ids) {
            self.expire(expiry).await;
        }
    }

    /// Ends the game for an expired deadline.
    async fn expire(&mut self, expiry: Expiry) {
        match expiry {
            Expiry::FirstAction(side) => {
                tracing::info!(side = self.game.side_name(side), "no first action in time");
                self.rated = false;
                self.end(None, Reason::Aborted).await;
            }
            Expiry::Flag(flag) => {
                tracing::info!(side = self.game.side_name(flag.side), "flag fell");
                self.end(Some(flag.side.other()), Reason::Timeout).await;
            }
        }
    }

    fn code_matches(&self, code: &Option<String>) -> bool {
        match (&self.code, code) {
            (Some(mine), Some(given)) => *mine == ids::normalize_code(given),
            _ => false,
        }
    }

    fn side_of(&self, player_id: &str) -> Option<Side> {
        self.players
            .iter()
            .position(|p| p.id == player_id)
            .map(Side::from_index)
    }

    fn is_player(&self, player_id: Option<&str>) -> bool {
        player_id.is_some_and(|p| self.side_of(p).is_some())
    }

    fn build_doc(&self) -> Value {
        let online = [
            self.online
                .get(&self.players[0].id)
                .copied()
                .unwrap_or(false),
            self.online
                .get(&self.players[1].id)
                .copied()
                .unwrap_or(false),
        ];
        let rematch = if self.rematch_requested.is_empty() && self.rematch_game.is_none() {
            Value::Null
        } else {
            let sides: Vec<&str> = self
                .rematch_requested
                .iter()
                .filter_map(|p| self.side_of(p))
                .map(|s| self.game.side_name(s))
                .collect();
            json!({"requested": sides, "game_id": self.rematch_game})
        };
        document::build(&DocInput {
            id: &self.id,
            kind: &self.kind,
            options: &self.options,
            clock: self.clock.to_json(self.game.side_names()),
            rated: self.rated,
            visibility: self.visibility,
            game: self.game.as_ref(),
            players: &self.players,
            moves: &self.moves,
            result: self.result,
            draw_offer: self.draw_offer,
            spectators: self.spectators,
            online,
            rematch,
        })
    }

    /// Rebuilds the document; when it changed, advances `seq`, encodes the diff once,
    /// buffers it and sends the same bytes to every subscriber.
    fn commit(&mut self) {
        if self.source == (Source::Log { restoring: true }) {
            // Rebuilding: the document is built once when the actor starts.
            return;
        }
        if self.seq >= self.seq_ceiling {
            // Out of reserved seqs (only unlogged changes get here): the change stays in
            // the state and goes out with the next commit after `upkeep` reserves more.
            return;
        }
        let new = self.build_doc();
        let patch = json_patch::diff(&self.doc, &new);
        if patch.0.is_empty() {
            return;
        }
        self.seq += 1;
        self.doc = new;
        self.update_summary();
        let msg = ServerMessage::GameDiff {
            game_id: self.id.clone(),
            seq: self.seq,
            patch: serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new())),
        };
        let bytes = Utf8Bytes::from(msg.to_json());
        self.replay.push(self.seq, bytes.clone());
        let mut gone = Vec::new();
        for (id, conn) in &self.subs {
            if conn.send(bytes.clone()) != SendOutcome::Sent {
                gone.push(*id);
            }
        }
        for id in gone {
            if let Some(conn) = self.subs.remove(&id) {
                conn.remove_sub(&self.id);
            }
        }
    }

    /// Publishes the lobby summary: public games while they are on, nothing otherwise.
    fn update_summary(&self) {
        let summary = (self.visibility == Visibility::Public && self.result.is_none()).then(|| {
            json!({
                "kind": self.kind,
                "players": self.doc["players"],
                "clock": self.doc["clock"]["kind"],
                "rated": self.rated,
                "spectators": self.spectators,
            })
        });
        *self.summary.lock().unwrap_or_else(|e| e.into_inner()) = summary;
    }

    fn watch(
        &mut self,
        conn: Arc<ConnHandle>,
        rid: Option<Rid>,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<Answer, ApiError> {
        let seated = self.is_player(conn.player_id());
        let by_code = self.code_matches(&code);
        let granted = conn
            .player_id()
            .is_some_and(|p| self.code_viewers.contains(p));
        if !(self.visibility == Visibility::Public || seated || by_code || granted) {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "this game is private: watch it with its room code",
            ));
        }
        if let (true, Some(p)) = (by_code, conn.player_id()) {
            // A spectator let in by the code may send `game.watch` again (a gap, a
            // reconnect) without it.
            self.code_viewers.insert(p.to_string());
        }
        self.subs.insert(conn.id, conn.clone());
        conn.add_sub(&self.id);
        if let Some(since) = since {
            if let Some(diffs) = self.replay.since(since, self.seq) {
                for d in diffs {
                    if conn.send(d) != SendOutcome::Sent {
                        self.subs.remove(&conn.id);
                        return Ok(Answer::Sent);
                    }
                }
                return Ok(Answer::Ok { seq: self.seq });
            }
        }
        let snap = ServerMessage::GameSnapshot {
            rid,
            game_id: self.id.clone(),
            seq: self.seq,
            doc: self.doc.clone(),
        };
        if conn.send_msg(&snap) != SendOutcome::Sent {
            self.subs.remove(&conn.id);
        }
        Ok(Answer::Sent)
    }

    fn flush_spectators(&mut self) {
        if self.result.is_some() {
            return;
        }
        let count = self
            .subs
            .values()
            .filter(|c| !self.is_player(c.player_id()))
            .count() as u64;
        if count != self.spectators {
            self.spectators = count;
            self.commit();
        }
    }

    fn presence(&mut self, player_id: &str, online: bool) {
        if self.side_of(player_id).is_none() || self.result.is_some() {
            return;
        }
        if self.online.get(player_id) == Some(&online) {
            return;
        }
        self.online.insert(player_id.to_string(), online);
        if online {
            self.offline_since.remove(player_id);
        } else {
            self.offline_since
                .insert(player_id.to_string(), self.hub.time.now_ms());
        }
        self.commit();
    }

    /// Logs an action; it is acknowledged only once the store accepted it. An action from
    /// the log is not logged again.
    async fn persist(&mut self, player_id: &str, action: ActionKind) -> Result<(), ApiError> {
        if self.source != Source::Player {
            return Ok(());
        }
        let position = match &action {
            ActionKind::Move { notation } => {
                let mut next = self.game.clone_box();
                next.play(notation)
                    .map_err(|e| ApiError::new(ErrorCode::IllegalMove, e.to_string()))?;
                next.position()
            }
            _ => self.game.position(),
        };
        let record = ActionRecord {
            seq: self.seq + 1,
            at_ms: self.now_ms(),
            player_id: player_id.to_string(),
            action,
            position: Some(position),
        };
        match self
            .hub
            .store_call(self.hub.store.append_action(&self.id, &record))
            .await
        {
            Ok(()) => {
                self.seq_ceiling = self.seq_ceiling.max(record.seq + SEQ_RESERVE);
                Ok(())
            }
            Err(e) => {
                // The write may have landed with only its answer lost: settle it from the
                // log before this game does anything else.
                self.in_doubt = Some(record);
                Err(e)
            }
        }
    }

    /// Settles a write whose answer was lost: if the log holds it, it happened (it is
    /// applied and broadcast now); otherwise it never did.
    async fn settle(&mut self) -> Result<(), ApiError> {
        let Some(record) = self.in_doubt.clone() else {
            return Ok(());
        };
        let last = self
            .hub
            .store_call(self.hub.store.last_action(&self.id))
            .await?;
        self.in_doubt = None;
        if last.as_ref() == Some(&record) {
            tracing::info!(
                seq = record.seq,
                "a write whose answer was lost is logged: applying it"
            );
            if let Err(e) = self.apply_logged(&record, false).await {
                tracing::error!(error = %e, "a logged action does not apply");
            }
        }
        Ok(())
    }

    /// Applies an action from the log.
    async fn apply_logged(
        &mut self,
        record: &ActionRecord,
        restoring: bool,
    ) -> Result<(), ApiError> {
        let act = match &record.action {
            ActionKind::Move { notation } => Act::Move {
                mv: notation.clone(),
                seq: None,
            },
            ActionKind::Resign => Act::Resign,
            ActionKind::DrawOffer => Act::Draw(DrawAction::Offer),
            ActionKind::DrawAccept => Act::Draw(DrawAction::Accept),
            ActionKind::DrawDecline => Act::Draw(DrawAction::Decline),
            ActionKind::Abort => Act::Abort,
            ActionKind::Claim => Act::Claim,
            ActionKind::Rematch => Act::Rematch,
        };
        self.source = Source::Log { restoring };
        self.action_at = Some(record.at_ms);
        let r = self.act_now(&record.player_id, act).await;
        self.source = Source::Player;
        self.action_at = None;
        r.map(|_| ())
    }

    /// Periodic duties: pause the clock while the store is unreachable, settle a lost
    /// write, reserve seqs ahead, store a final document that could not be stored.
    async fn upkeep(&mut self) {
        let available = self.hub.store.available();
        if !available && !self.store_paused && self.result.is_none() {
            tracing::warn!("store unreachable: moves are refused and the clock is paused");
            self.store_paused = true;
            self.clock.pause(self.hub.time.now_ms());
            self.commit();
        } else if available && self.store_paused {
            tracing::info!("store reachable again: the clock resumes");
            self.store_paused = false;
            self.clock.resume(self.hub.time.now_ms());
            self.commit();
        }
        if self.in_doubt.is_some() && self.settle().await.is_err() {
            return;
        }
        if self.seq_ceiling.saturating_sub(self.seq) <= SEQ_RESERVE / 2 {
            let upto = self.seq + SEQ_RESERVE;
            if self
                .hub
                .store_call(self.hub.store.reserve_seq(&self.id, upto))
                .await
                .is_ok()
            {
                self.seq_ceiling = self.seq_ceiling.max(upto);
                self.commit();
            }
        }
        if self.finish_unsaved {
            self.save_finished().await;
        }
    }

    async fn act(&mut self, player_id: &str, act: Act) -> Result<Answer, ApiError> {
        self.settle().await?;
        self.action_at = Some(self.hub.time.now_ms());
        let r = self.act_now(player_id, act).await;
        self.action_at = None;
        r
    }

    async fn act_now(&mut self, player_id: &str, act: Act) -> Result<Answer, ApiError> {
        let Some(side) = self.side_of(player_id) else {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the seated players act in this game",
            ));
        };
        if act == Act::Rematch {
            return self.rematch(player_id).await;
        }
        if self.result.is_some() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        // A deadline that passed before this request arrived ends the game first, so the
        // result never depends on whether the timer or the request was handled first.
        let now = self.now_ms();
        let ids = [self.players[0].id.as_str(), self.players[1].id.as_str()];
        if let Some(expiry) = self.clock.check_deadlines(now, ids) {
            self.expire(expiry).await;
            return Err(ApiError::new(
                ErrorCode::GameOver,
                match expiry {
                    Expiry::FirstAction(_) => "the game was aborted: no first action in time",
                    Expiry::Flag(_) => "the game is over: time ran out",
                },
            ));
        }
        match act {
            Act::Move { mv, seq } => self.play(player_id, side, &mv, seq).await,
            Act::Resign => {
                self.persist(player_id, ActionKind::Resign).await?;
                self.end(Some(side.other()), Reason::Resign).await;
                Ok(Answer::Ok { seq: self.seq })
            }
            Act::Draw(action) => self.draw(player_id, side, action).await,
            Act::Abort => {
                let both_acted = self.players.iter().all(|p| self.acted.contains(&p.id));
                if both_acted {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        "both sides have acted: the game can no longer be aborted",
                    ));
                }
                self.persist(player_id, ActionKind::Abort).await?;
                self.rated = false;
                self.end(None, Reason::Aborted).await;
                Ok(Answer::Ok { seq: self.seq })
            }
            Act::Claim if self.source != Source::Player => {
                self.end(Some(side), Reason::Abandoned).await;
                Ok(Answer::Ok { seq: self.seq })
            }
            Act::Claim => {
                let opponent = self.players[side.other().index()].id.clone();
                if self.online.get(&opponent).copied().unwrap_or(false) {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        "your opponent is connected",
                    ));
                }
                let now = self.hub.time.now_ms();
                let timeout_ms = self.clock.abandonment_timeout_ms(
                    side.other(),
                    now,
                    self.hub.config.abandon_timeout_ms,
                );
                let gone_ms = self
                    .offline_since
                    .get(&opponent)
                    .map_or(0, |t| now.saturating_sub(*t));
                // "Longer than" the timeout (PROTOCOL.md).
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
                self.persist(player_id, ActionKind::Claim).await?;
                self.end(Some(side), Reason::Abandoned).await;
                Ok(Answer::Ok { seq: self.seq })
            }
            Act::Rematch => unreachable_rematch(),
        }
    }

    async fn play(
        &mut self,
        player_id: &str,
        side: Side,
        mv: &str,
        seq: Option<u64>,
    ) -> Result<Answer, ApiError> {
        if let Some(seq) = seq {
            if seq != self.seq {
                return Err(ApiError::new(
                    ErrorCode::StaleSeq,
                    format!("seq {seq} is not the current one ({})", self.seq),
                ));
            }
        }
        if self.game.to_act() != Some(side) {
            return Err(ApiError::new(
                ErrorCode::NotYourTurn,
                format!("it is {}'s turn", self.to_act_name()),
            ));
        }
        // Played on copies of the game and the clock: the clock needs the move's effect
        // (does it end this person's turn?), and a move refused for time or not stored
        // must change nothing.
        let mut next_game = self.game.clone_box();
        let played = next_game
            .play(mv)
            .map_err(|e| ApiError::new(ErrorCode::IllegalMove, e.to_string()))?;
        let next_side = if next_game.outcome().is_some() {
            None
        } else {
            next_game.to_act()
        };
        // Who acts next, as a person (a swap exchanges the seats, not the colour to act).
        let next_player = next_side.map(|s| {
            let seat = if played.swap { s.other() } else { s };
            self.players[seat.index()].id.as_str()
        });
        let ends_turn = next_player != Some(player_id);
        let now = self.now_ms();
        let mut next_clock = self.clock.clone();
        if let Err(flag) =
            next_clock.on_action(side, player_id, ends_turn, played.swap, next_side, now)
        {
            self.clock = next_clock;
            self.expire(Expiry::Flag(flag)).await;
            return Err(ApiError::new(
                ErrorCode::GameOver,
                "the game is over: time ran out",
            ));
        }
        self.persist(
            player_id,
            ActionKind::Move {
                notation: played.notation.clone(),
            },
        )
        .await?;
        self.game = next_game;
        self.clock = next_clock;
        self.hub.metrics.moves.fetch_add(1, Ordering::Relaxed);
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
            self.end(outcome.winner, outcome.reason).await;
        } else {
            self.commit();
        }
        Ok(Answer::Ok { seq: self.seq })
    }

    fn to_act_name(&self) -> &'static str {
        self.game
            .to_act()
            .map(|s| self.game.side_name(s))
            .unwrap_or("nobody")
    }

    async fn draw(
        &mut self,
        player_id: &str,
        side: Side,
        action: DrawAction,
    ) -> Result<Answer, ApiError> {
        let opponent_offered = self.draw_offer == Some(side.other());
        match action {
            DrawAction::Offer if self.draw_offer == Some(side) => Err(ApiError::new(
                ErrorCode::Conflict,
                "you already offered a draw",
            )),
            DrawAction::Offer if !opponent_offered => {
                self.persist(player_id, ActionKind::DrawOffer).await?;
                self.draw_offer = Some(side);
                self.commit();
                Ok(Answer::Ok { seq: self.seq })
            }
            // Offering while the opponent's offer stands accepts it.
            DrawAction::Offer | DrawAction::Accept if opponent_offered => {
                self.persist(player_id, ActionKind::DrawAccept).await?;
                self.end(None, Reason::Agreement).await;
                Ok(Answer::Ok { seq: self.seq })
            }
            DrawAction::Decline if opponent_offered => {
                self.persist(player_id, ActionKind::DrawDecline).await?;
                self.draw_offer = None;
                self.commit();
                Ok(Answer::Ok { seq: self.seq })
            }
            _ => Err(ApiError::new(
                ErrorCode::Conflict,
                "there is no draw offer from your opponent",
            )),
        }
    }

    async fn end(&mut self, winner: Option<Side>, reason: Reason) {
        // Ratings first, so the end diff and the `ok` come after the new ratings are stored.
        // A rebuilt game's ratings were recorded when it ended live.
        if self.rated
            && reason != Reason::Aborted
            && self.source != (Source::Log { restoring: true })
        {
            self.rate(winner).await;
        }
        // A no-op when the turn already ended (by rule) or a flag fell; otherwise the
        // running side is charged what it used (resignation, agreement, abort, claim).
        self.clock.stop(self.now_ms());
        self.result = Some((winner, reason));
        self.draw_offer = None;
        self.commit();
        self.ended_at = Some(Instant::now());
        self.hub.games.ended(&self.id);
        self.hub.metrics.games_live[kind_index(&self.kind)].fetch_sub(1, Ordering::Relaxed);
        tracing::info!(reason = reason.as_str(), "game ended");
        self.save_finished().await;
    }

    /// Updates both players' ratings for a rated result (a failure is logged: the game's
    /// result stands either way).
    async fn rate(&self, winner: Option<Side>) {
        let players = [self.players[0].id.as_str(), self.players[1].id.as_str()];
        let r = self
            .hub
            .ratings
            .record_result(&self.hub, &self.kind, players, winner)
            .await;
        if let Err(e) = r {
            tracing::error!(error = %e, "could not update the ratings");
        }
    }

    async fn save_finished(&mut self) {
        if self.source == (Source::Log { restoring: true }) {
            // Stored once the rebuilt actor starts (its document and seq are final then).
            self.finish_unsaved = true;
            return;
        }
        let finished = FinishedGame {
            seq: self.seq,
            doc: self.doc.clone(),
        };
        match self
            .hub
            .store_call(self.hub.store.finish_game(&self.id, &finished))
            .await
        {
            Ok(()) => self.finish_unsaved = false,
            Err(e) => {
                tracing::error!(error = %e, "could not store the finished game: retrying");
                self.finish_unsaved = true;
            }
        }
    }

    async fn rematch(&mut self, player_id: &str) -> Result<Answer, ApiError> {
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
            return Ok(Answer::Ok { seq: self.seq });
        }
        self.persist(player_id, ActionKind::Rematch).await?;
        self.rematch_requested.push(player_id.to_string());
        if self.rematch_requested.len() == 2 && self.source == (Source::Log { restoring: true }) {
            // The rematch game, if it was created, has its own record and log.
        } else if self.rematch_requested.len() == 2 {
            let new = NewGame {
                id: ids::game_id(),
                kind: self.kind.clone(),
                options: self.options.clone(),
                clock: self.clock.request_json(),
                rated: self.rated_setting,
                visibility: self.visibility,
                code: self.code.clone(),
                players: [self.players[1].clone(), self.players[0].clone()],
                rematch_of: Some(self.id.clone()),
            };
            let handle = self.hub.start_game(new).await?;
            self.hub
                .matchmaker
                .record_sides([handle.players[0].as_str(), handle.players[1].as_str()]);
            self.rematch_game = Some(handle.id.clone());
            self.commit();
            self.save_finished().await;
        } else {
            self.commit();
            self.save_finished().await;
        }
        Ok(Answer::Ok { seq: self.seq })
    }
}

fn unreachable_rematch() -> Result<Answer, ApiError> {
    Err(ApiError::new(ErrorCode::Conflict, "rematch handled above"))
}

/// The game's clock with the first side to act started at `now`. `Hub::create_game`
/// validated the clock request; one that no longer validates (a stored game after the
/// bounds changed) falls back to no clock rather than losing the game.
fn start_clock(hub: &Hub, new: &NewGame, to_act: Option<Side>, now: u64) -> ClockDriver {
    let players = [new.players[0].id.as_str(), new.players[1].id.as_str()];
    let first_action_ms = hub.config.first_action_ms;
    let tc = crate::clock_request::time_control(&new.clock).unwrap_or_else(|e| {
        tracing::error!(error = %e, "invalid stored clock: playing without one");
        TimeControl::None
    });
    let mut clock = ClockDriver::new(tc, players, first_action_ms)
        .unwrap_or_else(|_| ClockDriver::untimed(players, first_action_ms));
    clock.start(to_act, now);
    clock
}
