//! Arena tournaments in the running server: `arena.create`, `arena.watch`, `arena.join`,
//! `arena.pause`, `arena.cancel`, the arena documents pushed as diffs, each arena's pairing
//! task, and the scoring of its games' ends (protocol/docs/PROTOCOL.md, "Arenas
//! (additions)").
//!
//! Why one task per arena: an arena sleeps until its start, then pairs its free players
//! in waves (every `--queue-wave-ms`, and at once when a game ends or a player joins) until
//! the cut-off, then sleeps until its end. Pairing happens only in that task, so one
//! arena's rounds never overlap and a player is never paired twice at once. The rules
//! (scoring, standings, pairing choice, cut-off) are pure functions in
//! [`crate::domain::arena`]; [`state::ArenaState`] applies them to one arena.
//!
//! Games are made through [`Starter::start_game`] like matchmaking's, with an arena link:
//! their documents show the arena and berserk, `game.started` names the arena, and their
//! actors report the end back ([`crate::game::capabilities::Reactions::arena_game_ended`])
//! over the channel this service reads.
//!
//! The document is rebuilt on every change (a join, a pairing, an end, the start and the
//! end); a change costs one JSON Patch, encoded once for every watcher, with a `seq` as for
//! the lobby, so a watcher's document with every diff applied equals a fresh snapshot.

pub mod request;
pub mod state;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use serde_json::{Map, Value};
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::{ArenaSettings, ErrorCode, Rid, SeatPlayer, ServerMessage, Visibility};
use tokio::sync::{mpsc, watch, Notify};
use tracing::Instrument;

use crate::domain::arena::ArenaStatus;
use crate::error::ApiError;
use crate::game::capabilities::ArenaGameEnd;
use crate::game::players::Players;
use crate::game::NewGame;
use crate::ids;
use crate::net::outbound::{ConnHandle, SendOutcome};
use crate::services::ratings::Ratings;
use crate::services::starter::Starter;
use crate::store::{ArenaLink, PlayerRecord};
use state::ArenaState;

/// What the arenas service is built from.
pub struct ArenasParts {
    /// Starts the paired games.
    pub starter: Arc<Starter>,
    /// Players' ratings (shown, and the performance's opponent ratings).
    pub ratings: Arc<Ratings>,
    /// Who is online (only connected players are paired).
    pub players: Arc<Players>,
    /// The server's time.
    pub time: Arc<dyn TimeSource>,
    /// The period of pairing waves while an arena runs (`--queue-wave-ms`).
    pub wave: Duration,
    /// Flips to `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
}

/// The watchers of one arena's document and the document as last sent.
#[derive(Default)]
struct Published {
    seq: u64,
    doc: Value,
    watchers: HashMap<u64, Arc<ConnHandle>>,
}

/// One arena: its state, its published document, and the bell of its pairing task.
struct Cell {
    state: Mutex<ArenaState>,
    published: Mutex<Published>,
    wake: Notify,
}

impl Cell {
    fn state(&self) -> std::sync::MutexGuard<'_, ArenaState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn published(&self) -> std::sync::MutexGuard<'_, Published> {
        self.published.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The arenas of this node.
pub struct Arenas {
    parts: ArenasParts,
    arenas: Mutex<HashMap<String, Arc<Cell>>>,
    me: Weak<Arenas>,
}

impl std::fmt::Debug for Arenas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arenas").finish_non_exhaustive()
    }
}

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such arena (or a wrong code)")
}

impl Arenas {
    /// The service, reading arena games' ends from `ends` until the server stops.
    pub fn new(parts: ArenasParts, ends: mpsc::UnboundedReceiver<ArenaGameEnd>) -> Arc<Self> {
        let arenas = Arc::new_cyclic(|me| Arenas {
            parts,
            arenas: Mutex::new(HashMap::new()),
            me: me.clone(),
        });
        let span = tracing::info_span!(parent: None, "arena ends");
        tokio::spawn(arenas.clone().read_ends(ends).instrument(span));
        arenas
    }

    fn now(&self) -> u64 {
        self.parts.time.now_ms()
    }

    fn cells(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Cell>>> {
        self.arenas.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `arena.create`: checks the settings, creates the arena, subscribes the creator and
    /// answers `arena` with the document.
    pub fn create(
        &self,
        conn: &Arc<ConnHandle>,
        player: &PlayerRecord,
        rid: Option<Rid>,
        req: &ArenaSettings,
    ) -> Result<(), ApiError> {
        let now = self.now();
        let settings = request::settings(
            req,
            now,
            ids::arena_id(),
            ids::room_code(),
            (player.id.clone(), player.name.clone()),
        )?;
        let id = settings.id.clone();
        tracing::info!(arena = %id, kind = settings.setup.kind_id(), starts_at = settings.starts_at,
            ends_at = settings.ends_at, "arena created");
        let state = ArenaState::new(settings);
        let doc = state.document(now);
        let cell = Arc::new(Cell {
            state: Mutex::new(state),
            published: Mutex::new(Published {
                seq: 0,
                doc,
                watchers: HashMap::new(),
            }),
            wake: Notify::new(),
        });
        self.cells().insert(id.clone(), cell.clone());
        Self::subscribe(&cell, conn.clone(), rid);
        if let Some(me) = self.me.upgrade() {
            let span = tracing::info_span!(parent: None, "arena", id = %id);
            tokio::spawn(me.run(cell).instrument(span));
        }
        Ok(())
    }

    /// The arena by id or by code, if `viewer` may see it: a public arena by its id; a
    /// private one by its code, or by its id for its creator and its players.
    fn find(&self, id: Option<&str>, code: Option<&str>, viewer: &str) -> Result<Arc<Cell>, ApiError> {
        let code = code.map(ids::normalize_code);
        let cell = match id {
            Some(id) => self.cells().get(id).cloned(),
            None => {
                let Some(code) = &code else {
                    return Err(ApiError::new(ErrorCode::BadRequest, "give the arena's id or code"));
                };
                self.cells()
                    .values()
                    .find(|c| c.state().settings.code.as_deref() == Some(code.as_str()))
                    .cloned()
            }
        };
        let cell = cell.ok_or_else(not_found)?;
        let visible = {
            let s = cell.state();
            s.settings.visibility == Visibility::Public
                || s.settings.code.is_some() && s.settings.code == code
                || s.settings.creator.0 == viewer
                || s.entrant(viewer).is_some()
        };
        if visible {
            Ok(cell)
        } else {
            Err(not_found())
        }
    }

    /// Subscribes a connection and queues the whole document on it (under the lock the
    /// diffs are sent under, so none is missed or repeated).
    fn subscribe(cell: &Cell, conn: Arc<ConnHandle>, rid: Option<Rid>) {
        let mut p = cell.published();
        let msg = ServerMessage::Arena {
            rid,
            seq: p.seq,
            doc: p.doc.clone(),
        };
        if conn.send_msg(&msg) == SendOutcome::Sent {
            p.watchers.insert(conn.id, conn);
        }
    }

    /// `arena.watch`: answers `arena`, then the diffs follow.
    pub fn watch(
        &self,
        conn: &Arc<ConnHandle>,
        viewer: &str,
        rid: Option<Rid>,
        id: Option<&str>,
        code: Option<&str>,
    ) -> Result<(), ApiError> {
        let cell = self.find(id, code, viewer)?;
        // Up to date first (the status may have changed with the time).
        self.refresh(&cell);
        Self::subscribe(&cell, conn.clone(), rid);
        Ok(())
    }

    /// `arena.unwatch` (idempotent).
    pub fn unwatch(&self, conn_id: u64, id: &str) {
        if let Some(cell) = self.cells().get(id).cloned() {
            cell.published().watchers.remove(&conn_id);
        }
    }

    /// A connection closed: it watches no arena any more.
    pub fn unwatch_all(&self, conn_id: u64) {
        let cells: Vec<Arc<Cell>> = self.cells().values().cloned().collect();
        for cell in cells {
            cell.published().watchers.remove(&conn_id);
        }
    }

    /// `arena.join`: into the arena (scheduled or running) and its pool.
    pub async fn join(
        &self,
        player: &PlayerRecord,
        id: Option<&str>,
        code: Option<&str>,
    ) -> Result<(), ApiError> {
        let cell = self.find(id, code, &player.id)?;
        let (kind, status, bots) = {
            let s = cell.state();
            (s.settings.setup.kind_id(), s.status(self.now()), s.settings.bots)
        };
        if !status.is_open() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("the arena is {}", status.as_str()),
            ));
        }
        if player.bot && !bots {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "this arena does not take computer players",
            ));
        }
        let rating = self.parts.ratings.of(&player.id, kind).await?.display();
        cell.state().join(&player.id, &player.name, rating, player.bot);
        self.refresh(&cell);
        cell.wake.notify_one();
        Ok(())
    }

    /// `arena.pause`: out of the pool; a game in progress goes on, points stay.
    pub fn pause(&self, player_id: &str, id: &str) -> Result<(), ApiError> {
        let cell = self.find(Some(id), None, player_id)?;
        if !cell.state().pause(player_id) {
            return Err(ApiError::new(ErrorCode::Conflict, "you are not in this arena"));
        }
        self.refresh(&cell);
        Ok(())
    }

    /// `arena.cancel`: the creator, before the start.
    pub fn cancel(&self, player_id: &str, id: &str) -> Result<(), ApiError> {
        let cell = self.find(Some(id), None, player_id)?;
        {
            let mut s = cell.state();
            if s.settings.creator.0 != player_id {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "only the arena's creator may cancel it",
                ));
            }
            let status = s.status(self.now());
            if status != ArenaStatus::Scheduled {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!("only a scheduled arena can be cancelled (this one is {})", status.as_str()),
                ));
            }
            s.cancelled = true;
        }
        tracing::info!(arena = %id, "arena cancelled");
        self.refresh(&cell);
        cell.wake.notify_one();
        Ok(())
    }

    /// The document for `GET /api/arenas/{id}` (`code` for a private arena); `None` when
    /// there is no such arena or it is private and the code is wrong.
    pub fn document(&self, id: &str, code: Option<&str>) -> Option<Value> {
        let cell = self.find(Some(id), code, "").ok()?;
        let doc = cell.state().document(self.now());
        Some(doc)
    }

    /// The lobby's `arenas` member: public arenas scheduled or running, by id.
    pub fn lobby_listing(&self) -> Map<String, Value> {
        let now = self.now();
        let cells: Vec<(String, Arc<Cell>)> = self
            .cells()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut out = Map::new();
        for (id, cell) in cells {
            if let Some(entry) = cell.state().lobby_entry(now) {
                out.insert(id, entry);
            }
        }
        out
    }

    /// Rebuilds an arena's document and sends the diff to its watchers when it changed.
    fn refresh(&self, cell: &Cell) {
        let new = cell.state().document(self.now());
        let mut p = cell.published();
        let patch = json_patch::diff(&p.doc, &new);
        if patch.0.is_empty() {
            return;
        }
        p.seq += 1;
        p.doc = new;
        if p.watchers.is_empty() {
            return;
        }
        let id = p.doc["id"].as_str().unwrap_or_default().to_string();
        let msg = ServerMessage::ArenaDiff {
            id,
            seq: p.seq,
            patch: serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new())),
        };
        let bytes = Utf8Bytes::from(msg.to_json());
        p.watchers
            .retain(|_, c| c.send(bytes.clone()) == SendOutcome::Sent);
    }

    /// An arena's life: wait for the start, pair in waves until the cut-off, wait for the
    /// end; the document is refreshed at each step.
    async fn run(self: Arc<Self>, cell: Arc<Cell>) {
        let mut shutdown = self.parts.shutdown.clone();
        let wave = self
            .parts
            .wave
            .clamp(Duration::from_millis(10), Duration::from_secs(60));
        loop {
            let now = self.now();
            let (status, starts_at, ends_at, cutoff) = {
                let s = cell.state();
                (s.status(now), s.settings.starts_at, s.settings.ends_at, s.cutoff_at())
            };
            self.refresh(&cell);
            let until = |at: u64| Duration::from_millis(at.saturating_sub(now));
            let pause = match status {
                ArenaStatus::Cancelled | ArenaStatus::Finished => break,
                ArenaStatus::Scheduled => until(starts_at),
                ArenaStatus::Running if now < cutoff => {
                    self.pair_round(&cell).await;
                    wave.min(until(cutoff))
                }
                ArenaStatus::Running => until(ends_at),
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = cell.wake.notified() => {}
                r = shutdown.changed() => {
                    if r.is_err() || *shutdown.borrow() {
                        break;
                    }
                }
            }
        }
        tracing::info!("arena over");
    }

    /// One pairing round: the free players' ratings brought up to date, the pairs chosen,
    /// their games started.
    async fn pair_round(&self, cell: &Cell) {
        let (kind, free) = {
            let s = cell.state();
            let free: Vec<String> = s
                .players
                .iter()
                .filter(|p| !p.paused && p.playing.is_none())
                .map(|p| p.id.clone())
                .collect();
            (s.settings.setup.kind_id(), free)
        };
        if free.len() < 2 {
            return;
        }
        let mut ratings = Vec::new();
        for pid in &free {
            if let Ok(r) = self.parts.ratings.of(pid, kind).await {
                ratings.push((pid.clone(), r.display()));
            }
        }
        let now = self.now();
        let players = &self.parts.players;
        let (pairings, settings, seats) = {
            let mut s = cell.state();
            for (pid, r) in ratings {
                if let Some(e) = s.players.iter_mut().find(|p| p.id == pid) {
                    e.rating = r;
                }
            }
            let pairings = s.pair_round(now, &|p| players.is_online(p), &mut ids::game_id);
            let seats: Vec<[SeatPlayer; 2]> = pairings
                .iter()
                .map(|pairing| {
                    pairing.players.clone().map(|pid| {
                        let e = s.entrant(&pid);
                        SeatPlayer {
                            name: e.map_or_else(|| pid.clone(), |e| e.name.clone()),
                            bot: e.is_some_and(|e| e.bot),
                            id: pid,
                            rating: None,
                        }
                    })
                })
                .collect();
            (pairings, s.settings.clone(), seats)
        };
        if pairings.is_empty() {
            return;
        }
        self.refresh(cell);
        for (pairing, seats) in pairings.into_iter().zip(seats) {
            let new = NewGame {
                id: pairing.game_id.clone(),
                setup: settings.setup.clone(),
                rated: settings.rated,
                visibility: settings.visibility,
                code: settings.code.clone(),
                players: seats,
                rematch_of: None,
                arena: Some(ArenaLink {
                    id: settings.id.clone(),
                    berserk: settings.berserk,
                }),
            };
            match self.parts.starter.start_game(new).await {
                Ok(_) => tracing::info!(game = %pairing.game_id, players = ?pairing.players, "arena pairing"),
                Err(e) => {
                    tracing::warn!(error = %e, "could not start an arena game");
                    cell.state().unpair(&pairing.game_id);
                }
            }
        }
        self.refresh(cell);
    }

    /// Reads arena games' ends until the server stops: each is scored, and its arena pairs
    /// again at once.
    async fn read_ends(self: Arc<Self>, mut ends: mpsc::UnboundedReceiver<ArenaGameEnd>) {
        while let Some(end) = ends.recv().await {
            let cell = self.cells().get(&end.arena).cloned();
            let Some(cell) = cell else {
                tracing::warn!(arena = %end.arena, game = %end.game_id, "an end for an unknown arena");
                continue;
            };
            if cell.state().game_ended(&end) {
                self.refresh(&cell);
                cell.wake.notify_one();
            }
        }
    }
}
