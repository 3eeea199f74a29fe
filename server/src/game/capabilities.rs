//! What a game actor may use outside its own game, and nothing more.
//!
//! Why narrow capabilities instead of the whole hub: an actor's job is its game — decide,
//! log, apply, publish. Handing it the hub invites it to reach into rooms, queues and
//! sessions; handing it these few things makes the one-way data flow (socket → session →
//! game actor → store + broadcast) visible in the types, and lets tests and (later) other
//! deployments give an actor a different store, time or directory. What happens elsewhere
//! because a game ended or agreed a rematch is not the actor's business: it tells its
//! [`Reactions`] and moves on.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use stoa_protocol::clock::TimeSource;
use stoa_protocol::Side;
use tokio::sync::watch;

use super::NewGame;
use crate::config::Config;
use crate::error::ApiError;
use crate::ids::{ArenaId, GameId, PlayerId};
use crate::metrics::Metrics;
use crate::store::{Store, StoreResult};

/// The registry of live games as an actor uses it (the server's `Games`): it says when its
/// game ended and unregisters itself when it stops. A trait so the game layer does not
/// depend on the registry built over it.
pub trait Directory: Send + Sync {
    /// The game ended: it no longer counts among its players' unfinished games.
    fn ended(&self, id: &GameId);
    /// The actor whose lobby summary is `summary` stopped: its game is unregistered if
    /// that actor is still the one registered for it.
    fn remove_actor(
        &self,
        id: &GameId,
        summary: &Arc<parking_lot::Mutex<Option<serde_json::Value>>>,
    );
}

/// The rest of the server's reactions to a game's events.
#[async_trait]
pub trait Reactions: Send + Sync + 'static {
    /// A rated game ended with a result (not an abort): update both players' ratings.
    /// Awaited before the end is published, so a player who sees the end finds the new
    /// ratings stored. `players` are by side index at the end. Returns the new ratings by
    /// side index (`None` when they could not be updated).
    async fn rated_result(
        &self,
        kind: &str,
        players: [&str; 2],
        winner: Option<Side>,
    ) -> Option<[f64; 2]>;

    /// Both players asked for a rematch: start the game `setup` describes and tell them.
    async fn rematch(&self, setup: NewGame);

    /// An arena game ended (an abort included): its arena scores it and puts its players
    /// back in its pool. Called once, by the game's owner, after the ratings.
    async fn arena_game_ended(&self, end: ArenaGameEnd);
}

/// How an arena game ended, as its arena needs it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArenaGameEnd {
    /// The game.
    pub game_id: GameId,
    /// Its arena.
    pub arena: ArenaId,
    /// Player ids by side index at the end.
    pub players: [PlayerId; 2],
    /// The winner's side index (`None`: a draw or an abort).
    pub winner: Option<usize>,
    /// Aborted: not a result, scores nothing.
    pub aborted: bool,
    /// Plies (moves) played.
    pub plies: u32,
    /// Who went berserk, by side index at the end.
    pub berserk: [bool; 2],
    /// The side index of a player whose first action never came (the game was aborted
    /// for it): the arena pauses that player. (Absent from an older node's report.)
    #[serde(default)]
    pub absent: Option<usize>,
}

/// The other nodes of a cluster, as a game actor sees them (on a single node there are
/// none: what it publishes reaches nobody, and it owns every game).
///
/// Why a trait: the actor stays testable without Redis, and knows nothing of channels or
/// leases; it only publishes what it logged and asks the owner of a game it follows.
#[async_trait::async_trait]
pub trait Peers: Send + Sync {
    /// This node's id.
    fn node(&self) -> &str;
    /// Publishes an event this node (the owner) logged, for the followers on other nodes.
    /// Awaited before the request that caused it is answered, so a reply sent after it
    /// reaches a follower after the event.
    async fn publish(&self, message: &crate::cluster::messages::BusMessage);
    /// Sends a message to one node; `Some(false)` when it certainly reached nobody (no such
    /// node listens, or it was never sent), `None` when its fate is unknown (sent, answer
    /// lost: it may still arrive).
    async fn send_to(
        &self,
        node: &str,
        message: &crate::cluster::messages::BusMessage,
    ) -> Option<bool>;
    /// The node holding a game's lease now: `Ok(None)` when nobody holds it, `Err` when
    /// Redis could not tell (a caller must not take that for a free lease).
    async fn owner_of(&self, game: &GameId) -> Result<Option<String>, crate::store::StoreError>;
    /// Whether this node owns (renews the lease of) a game; called as that changes.
    fn set_owned(&self, game: &GameId, owned: bool);
    /// The owner makes sure the game's lease key names it: taken again when the store lost
    /// it (a Redis failover), before the game is listed again for the other nodes, whose
    /// claim rounds would otherwise take a listed game without a lease. `Ok(false)` when
    /// another node holds it.
    async fn hold_lease(&self, game: &GameId) -> Result<bool, crate::store::StoreError>;
    /// This node follows a game from now on (an owner that lost its lease): its channel is
    /// subscribed when this returns.
    async fn follow(&self, game: &GameId);
    /// Whether a node sent a heartbeat recently (its reports of players and spectators
    /// still count).
    fn is_live(&self, node: &str) -> bool;
    /// A follower stopped: its game's channel is no longer needed here.
    fn unfollow(&self, game: &GameId);
}

/// The actor's settings, from the server's configuration.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Diffs kept for `game.watch` with `since`.
    pub replay_buffer: usize,
    /// How often the crowd's spectator count is published at most, and upkeep runs (ms).
    pub batch_ms: u64,
    /// How long an ended game with no subscriber stays live (ms).
    pub linger_ms: u64,
    /// The abandonment timeout before a claim (ms).
    pub abandon_timeout_ms: u64,
    /// The first-action window (ms).
    pub first_action_ms: u64,
    /// A player whose clock starts running is pinged for a round trip (its lag
    /// compensation) at most this often (ms).
    pub ping_interval_ms: u64,
}

impl From<&Config> for Settings {
    fn from(c: &Config) -> Self {
        Settings {
            replay_buffer: c.replay_buffer,
            batch_ms: c.spectator_batch_ms,
            linger_ms: c.finished_linger_ms,
            abandon_timeout_ms: c.abandon_timeout_ms,
            first_action_ms: c.first_action_ms,
            ping_interval_ms: c.ping_interval_ms,
        }
    }
}

/// Everything a game actor holds besides its game.
#[derive(Clone)]
pub struct Capabilities {
    /// Where events are logged and final documents kept.
    pub store: Arc<dyn Store>,
    /// The server's time.
    pub time: Arc<dyn TimeSource>,
    /// The directory of live games (the actor unregisters its own).
    pub directory: Arc<dyn Directory>,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// Flips to `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
    /// Settings.
    pub settings: Settings,
    /// Ratings and rematches.
    pub reactions: Arc<dyn Reactions>,
    /// The cluster's other nodes (none on a single node).
    pub peers: Arc<dyn Peers>,
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capabilities")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Capabilities {
    /// Runs a store call, timing it, and maps failures to `unavailable`.
    pub async fn store_call<T>(
        &self,
        fut: impl Future<Output = StoreResult<T>>,
    ) -> Result<T, ApiError> {
        timed_store_call(&self.metrics, fut).await
    }
}

/// Runs a store call, timing it in `metrics`, and maps failures to `unavailable`.
pub async fn timed_store_call<T>(
    metrics: &Metrics,
    fut: impl Future<Output = StoreResult<T>>,
) -> Result<T, ApiError> {
    let start = Instant::now();
    let r = fut.await;
    metrics.store_call(start.elapsed(), r.is_ok());
    r.map_err(|e| {
        tracing::warn!(error = %e, "store call failed");
        ApiError::store(e)
    })
}
