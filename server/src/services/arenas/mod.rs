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

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::net::frame::Frame;
use serde_json::{Map, Value};
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::{ArenaSettings, ErrorCode, Rid, SeatPlayer, ServerMessage, Visibility};
use tokio::sync::{mpsc, watch, Notify};
use tracing::Instrument;

use crate::domain::arena::ArenaStatus;
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::game::capabilities::ArenaGameEnd;
use crate::game::players::Players;
use crate::game::NewGame;
use crate::ids;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::net::outbound::{ConnHandle, SendOutcome};
use crate::services::ratings::Ratings;
use crate::services::starter::Starter;
use crate::store::{ArenaLink, PlayerRecord, Store};
use state::ArenaState;

/// What the arenas service is built from.
pub struct ArenasParts {
    /// Where arenas are kept (every change is one conditional write).
    pub store: Arc<dyn Store>,
    /// Whether other nodes share the store (then arenas are re-read from it every wave,
    /// arenas created elsewhere are discovered, and one node pairs each arena under a
    /// lease).
    pub spans_nodes: bool,
    /// This node's id (the pairing lease names it).
    pub node: String,
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
    /// Metrics (store calls are timed).
    pub metrics: Arc<Metrics>,
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
    id: String,
    state: Mutex<ArenaState>,
    published: Mutex<Published>,
    wake: Notify,
    /// The version last written to (or read from) the store; held while writing, so this
    /// node's writes of one arena happen one at a time, in order.
    stored: tokio::sync::Mutex<u64>,
}

impl Cell {
    fn state(&self) -> parking_lot::MutexGuard<'_, ArenaState> {
        self.state.lock()
    }

    fn published(&self) -> parking_lot::MutexGuard<'_, Published> {
        self.published.lock()
    }
}

/// The arenas of this node.
pub struct Arenas {
    parts: ArenasParts,
    /// When this service started (server time): on a single node, a pairing older than
    /// this whose game is not in the store was cut by the last run's end, and is undone at
    /// once rather than after [`UNSTARTED_MS`].
    born: u64,
    arenas: Mutex<HashMap<String, Arc<Cell>>>,
    me: Weak<Arenas>,
}

impl std::fmt::Debug for Arenas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arenas").finish_non_exhaustive()
    }
}

/// A paired game not created this long after its pairing never will be (its node died in
/// between): its players are freed.
const UNSTARTED_MS: u64 = 10_000;

/// How long a node's pairing lease on an arena lasts unless renewed (it is renewed when
/// half of it is left): a dead pairing node's arena is paired again within this.
const PAIRING_LEASE_MS: u64 = 3_000;

/// How often an arena with games in progress checks the store for ends nobody reported.
const SETTLE_EVERY: Duration = Duration::from_secs(2);

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such arena (or a wrong code)")
}

impl Arenas {
    /// The service, reading arena games' ends from `ends` until the server stops.
    pub fn new(parts: ArenasParts, ends: mpsc::UnboundedReceiver<ArenaGameEnd>) -> Arc<Self> {
        let born = parts.time.now_ms();
        let arenas = Arc::new_cyclic(|me| Arenas {
            parts,
            born,
            arenas: Mutex::new(HashMap::new()),
            me: me.clone(),
        });
        let span = tracing::info_span!(parent: None, "arena ends");
        tokio::spawn(arenas.clone().read_ends(ends).instrument(span));
        if arenas.parts.spans_nodes {
            let span = tracing::info_span!(parent: None, "arena discovery");
            tokio::spawn(arenas.clone().discover_forever().instrument(span));
        }
        arenas
    }

    fn now(&self) -> u64 {
        self.parts.time.now_ms()
    }

    fn cells(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Arc<Cell>>> {
        self.arenas.lock()
    }

    /// Takes up an arena: registers it here and starts its task (unless it is over). `seq`:
    /// the seq its document was last published under (stored with it), which its watchers
    /// may hold: the document is published under it again, never under a lower one.
    fn adopt(&self, state: ArenaState, version: u64, seq: u64) -> Arc<Cell> {
        let now = self.now();
        let id = state.settings.id.clone();
        let open = state.open(now);
        let doc = state.document(now);
        let cell = Arc::new(Cell {
            id: id.clone(),
            state: Mutex::new(state),
            published: Mutex::new(Published {
                seq,
                doc,
                watchers: HashMap::new(),
            }),
            wake: Notify::new(),
            stored: tokio::sync::Mutex::new(version),
        });
        let mut cells = self.cells();
        if let Some(existing) = cells.get(&id) {
            return existing.clone();
        }
        cells.insert(id.clone(), cell.clone());
        drop(cells);
        if let (true, Some(me)) = (open, self.me.upgrade()) {
            let span = tracing::info_span!(parent: None, "arena", id = %id);
            tokio::spawn(me.run(cell.clone()).instrument(span));
        }
        cell
    }

    /// The arena `id`: held here, or read from the store (and taken up).
    async fn cell(&self, id: &str) -> Result<Option<Arc<Cell>>, ApiError> {
        if let Some(cell) = self.cells().get(id).cloned() {
            return Ok(Some(cell));
        }
        let stored = timed_store_call(&self.parts.metrics, self.parts.store.arena(&ArenaId::from(id))).await?;
        Ok(stored.and_then(|(version, v)| {
            let seq = ArenaState::stored_seq(&v);
            ArenaState::from_stored(&v).map(|state| self.adopt(state, version, seq))
        }))
    }

    /// Takes up every open arena of the store that is not held here yet (at start-up, and
    /// in a cluster every few seconds, for arenas created on other nodes).
    pub async fn discover(&self) -> Result<(), ApiError> {
        let ids = timed_store_call(&self.parts.metrics, self.parts.store.open_arenas()).await?;
        for id in ids {
            if self.cells().contains_key(&id) {
                continue;
            }
            if let Some(cell) = self.cell(&id).await? {
                self.settle(&cell).await?;
            }
        }
        Ok(())
    }

    /// Settles an arena's games in progress as the store has them (for an arena taken up
    /// after a restart, and every few seconds while it has games in progress): a game that
    /// ended is scored from its final document (its end may have been reported to a node
    /// that died before it stored it), a game paired more than [`UNSTARTED_MS`] ago but
    /// never created (its node died between storing the pairing and creating the game)
    /// ends aborted, scoring nothing, and frees its players.
    async fn settle(&self, cell: &Cell) -> Result<(), ApiError> {
        let now = self.now();
        let pending: Vec<(String, u64)> = cell
            .state()
            .games
            .iter()
            .filter(|g| g.ended.is_none())
            .map(|g| (g.id.clone(), g.started_at))
            .collect();
        let (store, metrics) = (&self.parts.store, &self.parts.metrics);
        for (game, started_at) in pending {
            let game = GameId::from(game);
            if let Some(fin) = timed_store_call(metrics, store.finished_game(&game)).await? {
                if let Some(end) = end_of(&cell.id, &game, &fin.doc) {
                    if self.mutate(cell, |s| Ok(s.game_ended(&end))).await? {
                        cell.wake.notify_one();
                    }
                }
            } else if (now.saturating_sub(started_at) > UNSTARTED_MS
                || (!self.parts.spans_nodes && started_at < self.born))
                && timed_store_call(metrics, store.game(&game))
                    .await?
                    .is_none()
            {
                // Watchers may have seen it `playing`: it stays in the document, aborted.
                self.mutate(cell, |s| Ok(s.abort_unstarted(&game))).await?;
            }
        }
        Ok(())
    }

    async fn discover_forever(self: Arc<Self>) {
        let mut shutdown = self.parts.shutdown.clone();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                _ = shutdown.changed() => break,
            }
            if let Err(e) = self.discover().await {
                tracing::warn!(error = %e, "cannot look for arenas");
            }
        }
    }

    /// Writes an arena's current state as the next version. `Ok(false)` when another node
    /// wrote first: the arena is then read again from the store (what was changed here is
    /// gone, and the caller may apply its change again).
    async fn persist(&self, cell: &Cell) -> Result<bool, ApiError> {
        let mut stored = cell.stored.lock().await;
        self.persist_locked(cell, &mut stored).await
    }

    /// [`Arenas::persist`] under the version lock the caller holds. A change is made and
    /// written under one hold of that lock: a reload in between (another node wrote) would
    /// replace the state with the store's, and the write that follows would then store it
    /// without the change and still succeed, an `ok` for a change that is gone.
    async fn persist_locked(&self, cell: &Cell, stored: &mut u64) -> Result<bool, ApiError> {
        let now = self.now();
        let (state, open) = {
            let s = cell.state();
            // Stored with the seq this state's document is published under: the refresh
            // that follows a write publishes it one above the last when it changed.
            let doc = s.document(now);
            let seq = {
                let p = cell.published();
                p.seq + u64::from(p.doc != doc)
            };
            (s.to_stored(seq), s.open(now))
        };
        let store = &self.parts.store;
        let saved = timed_store_call(
            &self.parts.metrics,
            store.save_arena(&ArenaId::from(cell.id.as_str()), *stored + 1, open, &state),
        )
        .await?;
        if saved {
            *stored += 1;
            return Ok(true);
        }
        self.reload(cell, stored).await?;
        Ok(false)
    }

    /// Reads an arena again from the store when the store has a newer version.
    async fn reload(&self, cell: &Cell, stored: &mut u64) -> Result<(), ApiError> {
        let got = timed_store_call(&self.parts.metrics, self.parts.store.arena(&ArenaId::from(cell.id.as_str()))).await?;
        if let Some((version, v)) = got {
            if version > *stored {
                if let Some(state) = ArenaState::from_stored(&v) {
                    *cell.state() = state;
                    *stored = version;
                }
            }
        }
        self.refresh(cell);
        Ok(())
    }

    /// Applies a change to an arena and stores it; applied again to a fresher copy when
    /// another node changed the arena meanwhile.
    async fn mutate<R>(
        &self,
        cell: &Cell,
        change: impl Fn(&mut ArenaState) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let mut stored = cell.stored.lock().await;
        for _ in 0..8 {
            // An error answer must mean nothing changed: the state before this try is put
            // back when the change is refused or cannot be stored. (A conditional write
            // that lost to another node reloads the state instead, and the change is tried
            // again on the fresher copy.)
            let before = cell.state().clone();
            let changed = change(&mut cell.state());
            let tried = match changed {
                Ok(r) => self
                    .persist_locked(cell, &mut stored)
                    .await
                    .map(|saved| (r, saved)),
                Err(e) => Err(e),
            };
            match tried {
                Ok((r, true)) => {
                    drop(stored);
                    self.refresh(cell);
                    return Ok(r);
                }
                Ok((_, false)) => {}
                Err(e) => {
                    *cell.state() = before;
                    return Err(e);
                }
            }
        }
        Err(ApiError::new(
            ErrorCode::Unavailable,
            "the arena is busy: try again",
        ))
    }

    /// `arena.create`: checks the settings, creates the arena, subscribes the creator and
    /// answers `arena` with the document.
    pub async fn create(
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
            (player.id.to_string(), player.name.clone()),
        )?;
        let id = settings.id.clone();
        let state = ArenaState::new(settings);
        // Stored first: an arena exists once it is kept.
        let saved = timed_store_call(
            &self.parts.metrics,
            self.parts
                .store
                .save_arena(&ArenaId::from(id.as_str()), 1, true, &state.to_stored(0)),
        )
        .await?;
        if !saved {
            return Err(ApiError::new(ErrorCode::Conflict, "this arena id is taken"));
        }
        tracing::info!(arena = %id, kind = state.settings.setup.kind_id(),
            starts_at = state.settings.starts_at, ends_at = state.settings.ends_at, "arena created");
        let cell = self.adopt(state, 1, 0);
        Self::subscribe(&cell, conn.clone(), rid);
        Ok(())
    }

    /// The arena by id or by code, if `viewer` may see it: a public arena by its id; a
    /// private one by its code, or by its id for its creator and its players.
    async fn find(
        &self,
        id: Option<&str>,
        code: Option<&str>,
        viewer: &str,
    ) -> Result<Arc<Cell>, ApiError> {
        let code = code.map(ids::normalize_code);
        let cell = match id {
            Some(id) => self.cell(id).await?,
            None => {
                let Some(code) = &code else {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        "give the arena's id or code",
                    ));
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
    pub async fn watch(
        &self,
        conn: &Arc<ConnHandle>,
        viewer: &str,
        rid: Option<Rid>,
        id: Option<&str>,
        code: Option<&str>,
    ) -> Result<(), ApiError> {
        let cell = self.find(id, code, viewer).await?;
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
        let cell = self.find(id, code, &player.id).await?;
        let kind = cell.state().settings.setup.kind_id();
        let rating = self.parts.ratings.of(&player.id, kind).await?.display();
        let now = self.now();
        self.mutate(&cell, |s| {
            let status = s.status(now);
            if !status.is_open() {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!("the arena is {}", status.as_str()),
                ));
            }
            if player.bot && !s.settings.bots {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "this arena does not take computer players",
                ));
            }
            s.join(&player.id, &player.name, rating, player.bot);
            Ok(())
        })
        .await?;
        cell.wake.notify_one();
        Ok(())
    }

    /// `arena.pause`: out of the pool; a game in progress goes on, points stay.
    pub async fn pause(&self, player_id: &str, id: &str) -> Result<(), ApiError> {
        let cell = self.find(Some(id), None, player_id).await?;
        self.mutate(&cell, |s| {
            if s.pause(player_id) {
                Ok(())
            } else {
                Err(ApiError::new(
                    ErrorCode::Conflict,
                    "you are not in this arena",
                ))
            }
        })
        .await
    }

    /// `arena.cancel`: the creator, before the start.
    pub async fn cancel(&self, player_id: &str, id: &str) -> Result<(), ApiError> {
        let cell = self.find(Some(id), None, player_id).await?;
        let now = self.now();
        self.mutate(&cell, |s| {
            if s.settings.creator.0 != player_id {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "only the arena's creator may cancel it",
                ));
            }
            let status = s.status(now);
            if status != ArenaStatus::Scheduled {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!(
                        "only a scheduled arena can be cancelled (this one is {})",
                        status.as_str()
                    ),
                ));
            }
            s.cancelled = true;
            Ok(())
        })
        .await?;
        tracing::info!(arena = %id, "arena cancelled");
        cell.wake.notify_one();
        Ok(())
    }

    /// Whether an arena `id` exists (open, over or cancelled), whoever asks: its page is
    /// served to anyone holding its id, and the page's `arena.watch` then decides who sees
    /// a private arena (its creator, its players, whoever has its code).
    pub async fn exists(&self, id: &str) -> Result<bool, ApiError> {
        Ok(self.cell(id).await?.is_some())
    }

    /// The document for `GET /api/arenas/{id}` (`code` for a private arena); `None` when
    /// there is no such arena or it is private and the code is wrong.
    pub async fn document(&self, id: &str, code: Option<&str>) -> Result<Option<Value>, ApiError> {
        match self.find(Some(id), code, "").await {
            Ok(cell) => Ok(Some(cell.state().document(self.now()))),
            Err(e) if e.code == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e),
        }
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
        let msg = ServerMessage::ArenaDiff {
            id: cell.id.clone(),
            seq: p.seq,
            patch: serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new())),
        };
        let bytes = Frame::text(msg.to_json());
        p.watchers
            .retain(|_, c| c.send(bytes.clone()) == SendOutcome::Sent);
    }

    /// An arena's life: wait for the start, pair in waves until the cut-off, wait for the
    /// end; the document is refreshed at each step. In a cluster every node holding the
    /// arena runs this, and reads the arena again from the store each wave: the
    /// conditional writes let one node's pairing round through, never two.
    async fn run(self: Arc<Self>, cell: Arc<Cell>) {
        let mut shutdown = self.parts.shutdown.clone();
        let wave = self
            .parts
            .wave
            .clamp(Duration::from_millis(10), Duration::from_secs(60));
        let mut settled = tokio::time::Instant::now();
        let mut last_status = None;
        loop {
            if settled.elapsed() >= SETTLE_EVERY {
                settled = tokio::time::Instant::now();
                if let Err(e) = self.settle(&cell).await {
                    tracing::warn!(error = %e, "cannot settle the arena's games");
                }
            }
            if self.parts.spans_nodes {
                let mut stored = cell.stored.lock().await;
                if let Err(e) = self.reload(&cell, &mut stored).await {
                    tracing::warn!(error = %e, "cannot read the arena");
                }
            }
            let now = self.now();
            let (status, starts_at, ends_at, cutoff, open) = {
                let s = cell.state();
                (
                    s.status(now),
                    s.settings.starts_at,
                    s.settings.ends_at,
                    s.cutoff_at(),
                    s.open(now),
                )
            };
            // A status changed by the time alone (started, finished) changes the document
            // with no write: it is stored, so the seq stored with the arena stays that of
            // its published document (an arena read again goes on from it).
            if last_status.is_some_and(|last| last != status) {
                if let Err(e) = self.persist(&cell).await {
                    tracing::warn!(error = %e, "cannot store the arena's status");
                }
            }
            last_status = Some(status);
            self.refresh(&cell);
            let until = |at: u64| Duration::from_millis(at.saturating_sub(now));
            let mut pause = match status {
                ArenaStatus::Cancelled => break,
                // Over, but games still run: their ends are awaited (and settled).
                ArenaStatus::Finished if open => SETTLE_EVERY,
                ArenaStatus::Finished => break,
                ArenaStatus::Scheduled => until(starts_at),
                ArenaStatus::Running if now < cutoff => {
                    if self.pairing_lease(&cell).await {
                        self.pair_round(&cell).await;
                    }
                    wave.min(until(cutoff))
                }
                ArenaStatus::Running => until(ends_at),
            };
            if self.parts.spans_nodes {
                pause = pause.min(wave);
            }
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = cell.wake.notified() => {}
                r = shutdown.changed() => {
                    if r.is_err() || *shutdown.borrow() {
                        return;
                    }
                }
            }
        }
        // Over: stored as such (no longer open once its last game ended), and no longer
        // held here: the store answers for it from now on (its document, a late end).
        match self.persist(&cell).await {
            Ok(true) => {
                self.cells().remove(&cell.id);
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "cannot store the arena's end"),
        }
        tracing::info!("arena over");
    }

    /// Whether this node pairs the arena now: always on a single node; in a cluster while
    /// it holds the arena's pairing lease, kept in the arena's own record (taken when free
    /// or expired, renewed when half of it is left, each a conditional write), so one node
    /// pairs and a dead one's arena is taken over within [`PAIRING_LEASE_MS`].
    async fn pairing_lease(&self, cell: &Cell) -> bool {
        if !self.parts.spans_nodes {
            return true;
        }
        let now = self.now();
        let me = self.parts.node.as_str();
        let fresh = cell.state().pairer.as_ref().is_some_and(|(holder, until)| {
            holder == me && until.saturating_sub(now) > PAIRING_LEASE_MS / 2
        });
        if fresh {
            return true;
        }
        let until = now + PAIRING_LEASE_MS;
        let taken = self
            .mutate(cell, |s| {
                if s.take_lease(me, now, until) {
                    Ok(())
                } else {
                    Err(ApiError::new(ErrorCode::Conflict, "another node pairs"))
                }
            })
            .await;
        taken.is_ok()
    }

    /// One pairing round: the free players' ratings brought up to date, the pairs chosen
    /// and stored (one conditional write: a round another node made first is dropped
    /// here), then their games started.
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
            if let Ok(r) = self.parts.ratings.of(&PlayerId::from(pid.as_str()), kind).await {
                ratings.push((pid.clone(), r.display()));
            }
        }
        let now = self.now();
        let players = &self.parts.players;
        // In a cluster a player may be connected to another node: presence is not known
        // here, so nobody is left out for it.
        let anywhere = self.parts.spans_nodes;
        let online = |p: &str| anywhere || players.is_online(p);
        // The round is chosen and written under one hold of the version lock (see
        // `persist_locked`): a reload in between would drop it from the state written.
        let mut stored = cell.stored.lock().await;
        let (pairings, settings, seats) = {
            let mut s = cell.state();
            for (pid, r) in ratings {
                if let Some(e) = s.players.iter_mut().find(|p| p.id == pid) {
                    e.rating = r;
                }
            }
            let pairings = s.pair_round(now, &online, &mut ids::game_id);
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
        let persisted = self.persist_locked(cell, &mut stored).await;
        drop(stored);
        match persisted {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!("another node paired this round first");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot store a pairing round: dropped");
                let mut s = cell.state();
                for p in &pairings {
                    s.unpair(&p.game_id);
                }
                return;
            }
        }
        self.refresh(cell);
        let mut failed = Vec::new();
        for (pairing, seats) in pairings.into_iter().zip(seats) {
            let new = NewGame {
                id: GameId::from(pairing.game_id.as_str()),
                setup: settings.setup.clone(),
                rated: settings.rated,
                visibility: settings.visibility,
                code: settings.code.as_deref().map(RoomCode::from),
                players: seats,
                rematch_of: None,
                arena: Some(ArenaLink {
                    id: ArenaId::from(settings.id.as_str()),
                    berserk: settings.berserk,
                }),
            };
            match self.parts.starter.start_game(new).await {
                Ok(_) => {
                    tracing::info!(game = %pairing.game_id, players = ?pairing.players, "arena pairing")
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not start an arena game");
                    failed.push(pairing.game_id);
                }
            }
        }
        if !failed.is_empty() {
            let _ = self
                .mutate(cell, |s| {
                    // Published as `playing` already: aborted, not removed.
                    for g in &failed {
                        s.abort_unstarted(g);
                    }
                    Ok(())
                })
                .await;
        }
    }

    /// Reads arena games' ends until the server stops: each is scored (and stored), and
    /// its arena pairs again at once.
    async fn read_ends(self: Arc<Self>, mut ends: mpsc::UnboundedReceiver<ArenaGameEnd>) {
        while let Some(end) = ends.recv().await {
            let cell = match self.cell(&end.arena).await {
                Ok(Some(cell)) => cell,
                Ok(None) => {
                    tracing::warn!(arena = %end.arena, game = %end.game_id, "an end for an unknown arena");
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, arena = %end.arena, game = %end.game_id,
                        "cannot read the arena to score a game");
                    continue;
                }
            };
            match self.mutate(&cell, |s| Ok(s.game_ended(&end))).await {
                Ok(true) => cell.wake.notify_one(),
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(error = %e, game = %end.game_id, "cannot score an arena game")
                }
            }
        }
    }
}

/// How a finished arena game ended, read from its final document.
fn end_of(arena: &str, game: &str, doc: &Value) -> Option<ArenaGameEnd> {
    let kind = stoa_protocol::kind(doc["kind"].as_str()?).ok()?;
    let names = kind.side_names;
    let players = names.map(|n| {
        doc["players"][n]["id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    let status = &doc["status"];
    let winner = status["winner"]
        .as_str()
        .and_then(|w| names.iter().position(|n| *n == w));
    Some(ArenaGameEnd {
        game_id: game.to_string(),
        arena: arena.to_string(),
        players,
        winner,
        aborted: status["reason"] == "aborted",
        plies: doc["moves"].as_array().map_or(0, |m| m.len() as u32),
        berserk: names.map(|n| doc["arena"]["berserk"][n] == true),
        // A final document does not say whose first action was missing.
        absent: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_end_reads_from_a_final_document() {
        let doc = json!({"kind":"unane",
            "players":{"white":{"id":"pw"},"black":{"id":"pb"}},
            "status":{"state":"ended","winner":"black","reason":"resign"},
            "moves":["a","b","c"],
            "arena":{"id":"a1","berserk":{"white":false,"black":true}}});
        let end = end_of("a1", "g1", &doc).expect("an end");
        // Ūnane's sides are black (first) and white.
        assert_eq!(end.players, ["pb".to_string(), "pw".to_string()]);
        assert_eq!(end.winner, Some(0));
        assert!(!end.aborted);
        assert_eq!(end.plies, 3);
        assert_eq!(end.berserk, [true, false]);
        let mut aborted = doc.clone();
        aborted["status"] = json!({"state":"ended","winner":null,"reason":"aborted"});
        let end = end_of("a1", "g1", &aborted).expect("an end");
        assert!(end.aborted && end.winner.is_none());
        assert!(end_of("a1", "g1", &json!({"kind":"chess"})).is_none());
    }

    fn now_ms() -> u64 {
        stoa_protocol::clock::SystemTimeSource.now_ms()
    }

    /// A running arena as stored: `ada` and `bob` joined, and a round paired (game
    /// `gnever`) whose game was never created, as when the node is killed between storing
    /// the pairing and creating the game.
    fn paired_but_never_created() -> ArenaState {
        let now = now_ms();
        let setup = crate::domain::setup::GameSetup::parse(
            "unane",
            &json!({}),
            Some(&json!({"kind":"fischer","initial_ms":15000,"increment_ms":0})),
        )
        .unwrap();
        let mut state = ArenaState::new(state::Settings {
            id: "akilled".into(),
            name: "killed".into(),
            setup,
            rated: false,
            visibility: Visibility::Public,
            code: None,
            creator: ("pada".into(), "ada".into()),
            starts_at: now - 5_000,
            ends_at: now + 600_000,
            bots: false,
            berserk: false,
            min_draw_plies: 0,
        });
        state.join("pada", "ada", 1500, false);
        state.join("pbob", "bob", 1500, false);
        let pairs = state.pair_round(now - 1_000, &|_| true, &mut || "gnever".into());
        assert_eq!(pairs.len(), 1);
        state
    }

    /// The kill window of a pairing round: the round is stored (and watchers saw its game
    /// `playing`), the node dies before the game exists. On recovery the game stays in the
    /// document, `aborted`, scoring nothing, and its players are free again.
    #[tokio::test]
    async fn a_paired_game_never_created_ends_aborted_on_recovery() {
        let store = Arc::new(crate::store::memory::MemoryStore::new());
        let state = paired_but_never_created();
        assert_eq!(
            state.document(now_ms())["games"]["gnever"]["status"],
            "playing"
        );
        assert!(store
            .save_arena(&"akilled".into(), 1, true, &state.to_stored(4))
            .await
            .unwrap());
        let (_tx, rx) = watch::channel(false);
        let hub = crate::services::hub::Hub::new(crate::config::Config::default(), store, rx);
        hub.arenas.discover().await.expect("recovered");
        let doc = hub
            .arenas
            .document("akilled", None)
            .await
            .unwrap()
            .expect("the arena");
        let game = &doc["games"]["gnever"];
        assert_eq!(game["status"], "aborted", "{doc}");
        assert_eq!(game["winner"], Value::Null);
        assert_eq!(game["points"], json!({}));
        for p in doc["players"].as_array().unwrap() {
            assert_eq!(p["games"], 0, "an abort scores nothing: {doc}");
            assert_ne!(p["playing"], "gnever", "free again: {doc}");
        }
    }

    /// The same game aborted twice (recovery, then a failed start) is aborted once; the
    /// players are free, each one's last opponent the other (as after any abort).
    #[test]
    fn an_unstarted_game_is_aborted_once() {
        let mut state = paired_but_never_created();
        assert!(state.abort_unstarted("gnever"));
        assert!(!state.abort_unstarted("gnever"));
        assert!(!state.abort_unstarted("gother"));
        for (p, other) in state.players.iter().zip(["pbob", "pada"]) {
            assert_eq!(
                (p.playing.as_deref(), p.last_opponent.as_deref()),
                (None, Some(other))
            );
        }
        let back = ArenaState::from_stored(&state.to_stored(9)).unwrap();
        assert_eq!(ArenaState::stored_seq(&state.to_stored(9)), 9);
        assert_eq!(back.document(1)["games"]["gnever"]["status"], "aborted");
    }
}
