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

mod ends;
mod pairing;
pub mod request;
pub mod state;
mod storage;
#[cfg(test)]
mod tests;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value};
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::{ArenaSettings, ErrorCode, Rid, Visibility};
use tokio::sync::{mpsc, watch, Notify};
use tracing::Instrument;

use crate::domain::arena::ArenaStatus;
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::game::capabilities::ArenaGameEnd;
use crate::game::players::Players;
use crate::game::published::{Kind, Published};
use crate::ids;
use crate::ids::{ArenaId, PlayerId};
use crate::metrics::Metrics;
use crate::net::outbound::ConnHandle;
use crate::services::ratings::Ratings;
use crate::services::starter::Starter;
use crate::services::topology::Topology;
use crate::store::{PlayerRecord, Store};
use state::ArenaState;

/// What the arenas service is built from.
pub struct ArenasParts {
    /// Where arenas are kept (every change is one conditional write).
    pub store: Arc<dyn Store>,
    /// The other nodes, as far as arenas go: whether they create arenas and change this
    /// node's (then arenas are re-read from the store every wave, those created elsewhere
    /// are looked for, and one node pairs each arena under a lease), and whether a player
    /// may be connected to one of them.
    pub topology: Arc<dyn Topology>,
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

/// The messages an arena's document goes out in: a diff names its arena, the snapshot
/// answers the request that named it.
static ARENA: Kind = Kind {
    snapshot: "arena",
    snapshot_id: None,
    diff: "arena.diff",
    diff_id: Some("id"),
};

/// One arena: its state, its published document, and the bell of its pairing task.
struct Cell {
    id: ArenaId,
    state: Mutex<ArenaState>,
    /// The document as last sent, its seq and its watchers.
    published: Mutex<Published<Value>>,
    wake: Notify,
    /// The version last written to (or read from) the store; held while writing, so this
    /// node's writes of one arena happen one at a time, in order.
    stored: tokio::sync::Mutex<u64>,
}

impl Cell {
    fn state(&self) -> parking_lot::MutexGuard<'_, ArenaState> {
        self.state.lock()
    }

    fn published(&self) -> parking_lot::MutexGuard<'_, Published<Value>> {
        self.published.lock()
    }
}

/// The arenas of this node.
pub struct Arenas {
    parts: ArenasParts,
    /// When this service started (server time): in an arena no other node changes, a
    /// pairing older than this whose game is not in the store was cut by the last run's
    /// end, and is undone at once rather than after [`UNSTARTED_MS`].
    born: u64,
    arenas: Mutex<HashMap<ArenaId, Arc<Cell>>>,
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
        if arenas.parts.topology.arenas_made_elsewhere() {
            let span = tracing::info_span!(parent: None, "arena discovery");
            tokio::spawn(arenas.clone().discover_forever().instrument(span));
        }
        arenas
    }

    fn now(&self) -> u64 {
        self.parts.time.now_ms()
    }

    fn cells(&self) -> parking_lot::MutexGuard<'_, HashMap<ArenaId, Arc<Cell>>> {
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
            // No replay: `arena.watch` has no `since`, a watcher back gets the snapshot.
            published: Mutex::new(Published::new(doc, seq, &ARENA, id.as_str(), 0)),
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
    async fn cell(&self, id: &ArenaId) -> Result<Option<Arc<Cell>>, ApiError> {
        if let Some(cell) = self.cells().get(id).cloned() {
            return Ok(Some(cell));
        }
        let stored = timed_store_call(&self.parts.metrics, self.parts.store.arena(id)).await?;
        Ok(stored.and_then(|(version, v)| {
            let seq = ArenaState::stored_seq(&v);
            ArenaState::from_stored(&v).map(|state| self.adopt(state, version, seq))
        }))
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
            (player.id.clone(), player.name.clone()),
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
        id: Option<&ArenaId>,
        code: Option<&str>,
        viewer: &PlayerId,
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
                || s.settings.creator.0 == viewer.as_str()
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
        cell.published().watch(conn, rid.as_ref());
    }

    /// `arena.watch`: answers `arena`, then the diffs follow.
    pub async fn watch(
        &self,
        conn: &Arc<ConnHandle>,
        viewer: &PlayerId,
        rid: Option<Rid>,
        id: Option<&ArenaId>,
        code: Option<&str>,
    ) -> Result<(), ApiError> {
        let cell = self.find(id, code, viewer).await?;
        // Up to date first (the status may have changed with the time).
        self.refresh(&cell);
        Self::subscribe(&cell, conn.clone(), rid);
        Ok(())
    }

    /// `arena.unwatch` (idempotent).
    pub fn unwatch(&self, conn_id: u64, id: &ArenaId) {
        if let Some(cell) = self.cells().get(id).cloned() {
            cell.published().unsubscribe(conn_id);
        }
    }

    /// A connection closed: it watches no arena any more.
    pub fn unwatch_all(&self, conn_id: u64) {
        let cells: Vec<Arc<Cell>> = self.cells().values().cloned().collect();
        for cell in cells {
            cell.published().unsubscribe(conn_id);
        }
    }

    /// `arena.join`: into the arena (scheduled or running) and its pool.
    pub async fn join(
        &self,
        player: &PlayerRecord,
        id: Option<&ArenaId>,
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
    pub async fn pause(&self, player_id: &PlayerId, id: &ArenaId) -> Result<(), ApiError> {
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
    pub async fn cancel(&self, player_id: &PlayerId, id: &ArenaId) -> Result<(), ApiError> {
        let cell = self.find(Some(id), None, player_id).await?;
        let now = self.now();
        self.mutate(&cell, |s| {
            if s.settings.creator.0 != player_id.as_str() {
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
    pub async fn exists(&self, id: &ArenaId) -> Result<bool, ApiError> {
        Ok(self.cell(id).await?.is_some())
    }

    /// The document for `GET /api/arenas/{id}` (`code` for a private arena); `None` when
    /// there is no such arena or it is private and the code is wrong.
    pub async fn document(
        &self,
        id: &ArenaId,
        code: Option<&str>,
    ) -> Result<Option<Value>, ApiError> {
        match self.find(Some(id), code, &PlayerId::default()).await {
            Ok(cell) => Ok(Some(cell.state().document(self.now()))),
            Err(e) if e.code == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The lobby's `arenas` member: public arenas scheduled or running, by id.
    pub fn lobby_listing(&self) -> Map<String, Value> {
        let now = self.now();
        let cells: Vec<(ArenaId, Arc<Cell>)> = self
            .cells()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut out = Map::new();
        for (id, cell) in cells {
            if let Some(entry) = cell.state().lobby_entry(now) {
                out.insert(id.into_string(), entry);
            }
        }
        out
    }

    /// Rebuilds an arena's document and sends the diff to its watchers when it changed.
    fn refresh(&self, cell: &Cell) {
        let new = cell.state().document(self.now());
        cell.published().update(new);
    }
}
