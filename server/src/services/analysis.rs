//! Engine reviews of finished games, the fishnet way: the engine runs in worker processes
//! (`stoa analyse --serve`) that connect like bots and say `analysis.serve`; this node hands
//! each free worker connected to it the next job of the queue (`analysis.job`) and stores
//! the result it sends back (`analysis.result`). The server never searches itself.
//!
//! Why the queue is the store's ([`Store::request_analysis`] and the calls after it): a
//! worker may be connected to any node, so every node takes from one queue, and each step
//! is one atomic check-and-write there. A job is leased to one worker under a lease id of
//! its own (the `job` of the messages); when its connection closes the job goes back to the
//! front of the queue at once, and when its node dies the lease runs out
//! ([`AnalysisSettings::lease`], renewed every [`TICK`] while the worker is connected) and
//! the next take puts it back. A result is stored only under the current lease, so a job
//! finished by a second worker is never stored twice. Bounds: a game is reviewed once
//! (asking again answers its state), and a player has one pending request at a time.
//!
//! Who may serve: any computer player, unless the node was given workers' keys
//! (`--analysis-keys`, [`keys::WorkerKeys`]); then only a worker that says one of them.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use stoa_protocol::wire::{AnalysisResult, AnalysisState, ErrorCode, ServerMessage};
use tokio::sync::Notify;

use crate::error::ApiError;
use crate::ids::{self, GameId, PlayerId};
use crate::net::outbound::ConnHandle;
use crate::store::{AnalysisRequested, AnalysisStatus, FinishedGame, Store};

pub mod keys;

use keys::WorkerKeys;

/// How long a job stays leased to a worker without word from its node, by default
/// (`--analysis-lease-ms`).
pub const LEASE: Duration = Duration::from_secs(60);
/// How often a node renews its workers' leases and looks for jobs queued on other nodes.
pub const TICK: Duration = Duration::from_millis(500);
/// A queue no worker took from (or held a lease of) for this long waits for a worker.
const WORKER_GONE: Duration = Duration::from_secs(5);

struct Worker {
    conn: Arc<ConnHandle>,
    /// Kinds it reviews (empty: all).
    kinds: Vec<String>,
    /// The job it holds: the game and the lease id.
    job: Option<(GameId, String)>,
}

/// How a node runs its workers (from `--analysis-lease-ms` and `--analysis-keys`).
#[derive(Clone, Debug)]
pub struct AnalysisSettings {
    /// How long a job stays leased without word from the node of its worker (the leases
    /// of a node's workers are renewed every [`TICK`], or a third of the lease when that is
    /// shorter; a dead node's jobs wait this long).
    pub lease: Duration,
    /// The workers' keys; none: every computer player may serve.
    pub keys: WorkerKeys,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        AnalysisSettings {
            lease: LEASE,
            keys: WorkerKeys::default(),
        }
    }
}

/// The analysis workers connected to this node, and the queue's front door.
pub struct Analysis {
    store: Arc<dyn Store>,
    settings: AnalysisSettings,
    workers: Mutex<Vec<Worker>>,
    wake: Notify,
}

impl std::fmt::Debug for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analysis").finish_non_exhaustive()
    }
}

/// The body of an `analysis` answer (and of `GET /api/games/{id}/analysis`).
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    /// Where it stands.
    pub state: AnalysisState,
    /// The result, once done.
    pub result: Option<AnalysisResult>,
}

impl Review {
    /// The HTTP body: `{"game_id","state","result"?}`.
    pub fn json(&self, game_id: &GameId) -> Value {
        let mut v = json!({"game_id": game_id.as_str(), "state": self.state});
        if let Some(r) = &self.result {
            v["result"] = serde_json::to_value(r).unwrap_or(Value::Null);
        }
        v
    }

    /// The `analysis` message.
    pub fn message(self, rid: Option<stoa_protocol::wire::Rid>, game_id: &GameId) -> ServerMessage {
        ServerMessage::Analysis {
            rid,
            game_id: game_id.to_string(),
            state: self.state,
            result: self.result,
        }
    }
}

fn unavailable(e: crate::store::StoreError) -> ApiError {
    ApiError::new(ErrorCode::Unavailable, e.to_string())
}

impl Analysis {
    /// No worker yet, the default settings (a minute's lease, no keys); the dispatching
    /// task runs until the process ends.
    pub fn start(store: Arc<dyn Store>) -> Arc<Analysis> {
        Analysis::start_with(store, AnalysisSettings::default())
    }

    /// As [`Analysis::start`], with the node's settings.
    pub fn start_with(store: Arc<dyn Store>, settings: AnalysisSettings) -> Arc<Analysis> {
        let analysis = Arc::new(Analysis {
            store,
            settings,
            workers: Mutex::new(Vec::new()),
            wake: Notify::new(),
        });
        // Outside a runtime (a unit test building a hub) nothing is dispatched.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(dispatch(Arc::downgrade(&analysis)));
        }
        analysis
    }

    /// `analysis.request` of `player` for finished game `game` (access checked by the
    /// caller): queues it unless it was queued before, and answers its state.
    pub async fn request(&self, game: &GameId, player: &PlayerId) -> Result<Review, ApiError> {
        // A game from a position (its document has `start`): a job carries the moves from
        // the kind's start only, so such a game is not reviewed rather than reviewed wrong.
        let finished = self.store.finished_game(game).await.map_err(unavailable)?;
        if finished.is_some_and(|f| f.doc.get("start").is_some()) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "games from a position are not reviewed by the engine yet",
            ));
        }
        match self
            .store
            .request_analysis(game, player)
            .await
            .map_err(unavailable)?
        {
            AnalysisRequested::Queued => self.wake.notify_one(),
            AnalysisRequested::Exists(_) => {}
            AnalysisRequested::Busy(other) => {
                return Err(ApiError::new(
                    ErrorCode::RateLimited,
                    format!("your review of game {other} is still pending: one at a time"),
                ))
            }
        }
        self.review(game).await
    }

    /// Where the review of `game` stands.
    pub async fn review(&self, game: &GameId) -> Result<Review, ApiError> {
        let Some(entry) = self.store.analysis(game).await.map_err(unavailable)? else {
            return Ok(Review {
                state: AnalysisState::None,
                result: None,
            });
        };
        let state = match entry.status {
            AnalysisStatus::Done => AnalysisState::Done,
            AnalysisStatus::Running => AnalysisState::Running,
            AnalysisStatus::Queued => {
                let seen = self
                    .store
                    .analysis_workers_seen()
                    .await
                    .map_err(unavailable)?;
                if ids::now_ms().saturating_sub(seen) <= WORKER_GONE.as_millis() as u64 {
                    AnalysisState::Queued
                } else {
                    AnalysisState::WaitingForWorker
                }
            }
        };
        let result = entry
            .result
            .and_then(|r| serde_json::from_value::<AnalysisResult>(r).ok());
        Ok(Review { state, result })
    }

    /// Whether a worker saying `key` in its `analysis.serve` may serve: always without
    /// keys; with keys, only one of them (`forbidden` otherwise, the key never repeated).
    pub fn admits(&self, key: Option<&str>) -> Result<(), ApiError> {
        if self.settings.keys.is_empty() || key.is_some_and(|k| self.settings.keys.allows(k)) {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::Forbidden,
            "not an analysis worker key",
        ))
    }

    /// `analysis.serve`: the connection is a free worker (again). A job it still held is
    /// given back first: a worker that asks anew has dropped it. The caller checked
    /// [`Analysis::admits`].
    pub async fn serve(&self, conn: Arc<ConnHandle>, kinds: Vec<String>) {
        let dropped = {
            let mut workers = self.workers.lock();
            match workers.iter_mut().find(|w| w.conn.id == conn.id) {
                Some(w) => {
                    w.kinds = kinds;
                    w.job.take()
                }
                None => {
                    workers.push(Worker {
                        conn,
                        kinds,
                        job: None,
                    });
                    None
                }
            }
        };
        if let Some((game, lease)) = dropped {
            self.give_back(&game, &lease).await;
        }
        self.wake.notify_one();
    }

    /// `analysis.result` of connection `conn_id` for `job`: stored when the job is still
    /// leased to it and the result fits the game; the worker is free again either way.
    pub async fn result(
        &self,
        conn_id: u64,
        job: &str,
        result: &AnalysisResult,
    ) -> Result<(), ApiError> {
        let held = {
            let mut workers = self.workers.lock();
            workers
                .iter_mut()
                .find(|w| w.conn.id == conn_id && w.job.as_ref().is_some_and(|(_, l)| l == job))
                .and_then(|w| w.job.take())
        };
        let Some((game, lease)) = held else {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("job {job} is not leased to this worker"),
            ));
        };
        self.wake.notify_one();
        let moves = match self.moves_of(&game).await {
            Ok(Some((_, _, moves))) => moves,
            Ok(None) => Vec::new(),
            Err(e) => {
                self.give_back(&game, &lease).await;
                return Err(e);
            }
        };
        if let Some(why) = result.mismatch(&moves) {
            self.give_back(&game, &lease).await;
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("this result does not fit game {game}: {why}"),
            ));
        }
        let value = serde_json::to_value(result).unwrap_or(Value::Null);
        let stored = self
            .store
            .complete_analysis(&game, &lease, &value)
            .await
            .map_err(unavailable)?;
        if stored {
            tracing::info!(game = %game, "analysis stored");
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Conflict,
                format!("job {job} was taken back (its lease ran out): the result is not stored"),
            ))
        }
    }

    /// A connection closed: if it was a worker, its job goes back to the queue.
    pub async fn closed(&self, conn_id: u64) {
        let dropped = {
            let mut workers = self.workers.lock();
            let Some(i) = workers.iter().position(|w| w.conn.id == conn_id) else {
                return;
            };
            workers.swap_remove(i).job
        };
        if let Some((game, lease)) = dropped {
            tracing::info!(game = %game, "analysis worker gone: its job goes back to the queue");
            self.give_back(&game, &lease).await;
        }
        self.wake.notify_one();
    }

    /// How many workers are connected to this node.
    pub fn workers(&self) -> usize {
        self.workers.lock().len()
    }

    /// Gives a job back to the queue and wakes the dispatcher: another worker may take it.
    async fn give_back(&self, game: &GameId, lease: &str) {
        self.put_back(game, lease).await;
        self.wake.notify_one();
    }

    /// Gives a job back without waking the dispatcher: for a job this node could not hand
    /// out, which the next tick tries again (not at once, in a loop).
    async fn put_back(&self, game: &GameId, lease: &str) {
        if let Err(e) = self.store.release_analysis_job(game, lease).await {
            // The lease runs out by itself, and the next take puts the job back.
            tracing::warn!(game = %game, error = %e, "could not give an analysis job back");
        }
    }

    /// A finished game's kind, options and moves, from its final document.
    async fn moves_of(
        &self,
        game: &GameId,
    ) -> Result<Option<(String, Value, Vec<String>)>, ApiError> {
        let finished: Option<FinishedGame> =
            self.store.finished_game(game).await.map_err(unavailable)?;
        Ok(finished.map(|f| {
            let doc = f.doc;
            let moves = doc["moves"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let kind = doc["kind"].as_str().unwrap_or_default().to_string();
            (kind, doc["options"].clone(), moves)
        }))
    }

    /// One pass: renews the leases of the workers here, then hands each free worker the
    /// next job (while there is one).
    async fn pass(&self) {
        let (held, free): (Vec<(GameId, String)>, Vec<Arc<ConnHandle>>) = {
            let mut workers = self.workers.lock();
            workers.retain(|w| !w.conn.is_closed() || w.job.is_some());
            let held = workers.iter().filter_map(|w| w.job.clone()).collect();
            let free = workers
                .iter()
                .filter(|w| w.job.is_none() && !w.conn.is_closed())
                .map(|w| w.conn.clone())
                .collect();
            (held, free)
        };
        let now = ids::now_ms();
        let lease_ms = self.settings.lease.as_millis().max(1) as u64;
        if !held.is_empty() {
            if let Err(e) = self.store.keep_analysis_leases(&held, now, lease_ms).await {
                tracing::warn!(error = %e, "could not renew the analysis leases");
            }
        }
        for conn in free {
            let lease = format!("j{}", ids::token().chars().take(16).collect::<String>());
            let game = match self.store.take_analysis_job(&lease, now, lease_ms).await {
                Ok(Some(game)) => game,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "could not take an analysis job");
                    return;
                }
            };
            self.hand_out(conn, game, lease).await;
        }
    }

    /// Sends a leased job to its worker (or gives it back when the worker cannot take it).
    async fn hand_out(&self, conn: Arc<ConnHandle>, game: GameId, lease: String) {
        let job = match self.moves_of(&game).await {
            Ok(Some(job)) => job,
            // A game whose record is gone (its retention ran out while it waited) cannot be
            // reviewed: its job is closed with no result, which frees its player's request
            // (given back, it would be the queue's head again at every pass).
            Ok(None) => {
                tracing::info!(game = %game, "analysis job dropped: the game's record is gone");
                if let Err(e) = self
                    .store
                    .complete_analysis(&game, &lease, &Value::Null)
                    .await
                {
                    tracing::warn!(game = %game, error = %e, "could not drop an analysis job");
                }
                return;
            }
            Err(_) => {
                self.put_back(&game, &lease).await;
                return;
            }
        };
        let (kind, options, moves) = job;
        let taken = {
            let mut workers = self.workers.lock();
            match workers.iter_mut().find(|w| {
                w.conn.id == conn.id
                    && w.job.is_none()
                    && !w.conn.is_closed()
                    && (w.kinds.is_empty() || w.kinds.contains(&kind))
            }) {
                Some(w) => {
                    w.job = Some((game.clone(), lease.clone()));
                    true
                }
                None => false,
            }
        };
        if !taken {
            self.put_back(&game, &lease).await;
            return;
        }
        tracing::info!(game = %game, job = %lease, "analysis job handed out");
        conn.send_msg(&ServerMessage::AnalysisJob {
            job: lease,
            game_id: game.into_string(),
            kind,
            options,
            moves,
        });
    }
}

/// The dispatching loop: a pass whenever something changed here, and every [`TICK`] for the
/// jobs queued on other nodes and the leases to renew.
async fn dispatch(analysis: std::sync::Weak<Analysis>) {
    loop {
        let Some(a) = analysis.upgrade() else {
            return;
        };
        if a.workers() > 0 {
            a.pass().await;
        }
        // A lease shorter than a few ticks is renewed more often, so it never lapses while
        // its worker is connected.
        let tick = TICK
            .min(a.settings.lease / 3)
            .max(Duration::from_millis(10));
        let _ = tokio::time::timeout(tick, a.wake.notified()).await;
    }
}
