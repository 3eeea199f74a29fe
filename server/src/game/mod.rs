//! Live games: the actor that owns each one, its document and how it is published.
//!
//! Why an actor: one task alone mutates a game, so validation, `seq`, the patch and the
//! broadcast happen in one order for everyone without locks; everything else talks to it
//! through [`Command`]s.
//!
//! The game layer also holds the node-local registries the actors live in and report to:
//! [`games`] (live actors by id), [`players`] (who is connected) and [`queues`] (the
//! matchmaking queues), so that the services above share them without naming each other.

pub mod act;
pub mod actor;
pub mod capabilities;
pub mod clock_driver;
pub mod clock_shown;
pub mod core;
pub mod games;
pub mod players;
pub mod published;
pub mod queues;
pub mod rebuild;

use std::sync::Arc;

use serde_json::Value;
use stoa_protocol::wire::{Rid, SeatPlayer, Visibility};
use stoa_protocol::GameKind;
use tokio::sync::{mpsc, oneshot};

pub use act::{Act, Answer};

use crate::error::ApiError;
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::net::outbound::ConnHandle;

/// What a new game is made of (from a room, a rematch or, later, matchmaking).
#[derive(Clone, Debug)]
pub struct NewGame {
    /// The id to use (pre-generated so rooms can point at it).
    pub id: GameId,
    /// The checked settings: kind, options, time control.
    pub setup: crate::domain::setup::GameSetup,
    /// Rated flag.
    pub rated: bool,
    /// Visibility.
    pub visibility: Visibility,
    /// Room code granting access to a private game.
    pub code: Option<RoomCode>,
    /// Players by side index (the first-acting side first).
    pub players: [SeatPlayer; 2],
    /// The game this one is a rematch of.
    pub rematch_of: Option<GameId>,
    /// The arena that paired this game.
    pub arena: Option<crate::store::ArenaLink>,
}

/// Reply channel for a command.
pub type Reply = oneshot::Sender<Result<Answer, ApiError>>;

/// Messages to a game actor.
#[derive(Debug)]
pub enum Command {
    /// Subscribe a connection (answer: snapshot queued by the actor, or replayed diffs then
    /// `ok`).
    Watch {
        /// The connection.
        conn: Arc<ConnHandle>,
        /// The request's rid (for the snapshot).
        rid: Option<Rid>,
        /// Replay diffs after this seq if buffered.
        since: Option<u64>,
        /// Room code for private games.
        code: Option<String>,
        /// Where to answer (none for automatic subscriptions).
        reply: Option<Reply>,
    },
    /// End a connection's subscription.
    Unwatch {
        /// Connection id.
        conn_id: u64,
    },
    /// Legal moves for the side to act (answered only to someone who may see the game).
    Legal {
        /// The asking player.
        player_id: Option<PlayerId>,
        /// Where to answer.
        reply: Reply,
    },
    /// A player's action (berserk included).
    Act {
        /// The acting player.
        player_id: PlayerId,
        /// The action.
        act: Act,
        /// Where to answer.
        reply: Reply,
    },
    /// A player's first connection / last disconnection.
    Presence {
        /// The player.
        player_id: PlayerId,
        /// Connected now?
        online: bool,
    },
    /// A measured websocket round trip of one of a seated player's connections (feeds the
    /// player's lag compensation).
    Rtt {
        /// The player.
        player_id: PlayerId,
        /// Ping sent → pong received, server ms.
        rtt_ms: u64,
    },
    /// From another node of the cluster (see [`crate::cluster`]). Boxed: the bus formats
    /// are large, and every slot of every game's queue is as big as the largest command.
    Bus(Box<crate::cluster::messages::BusMessage>),
    /// A follower catches up from the log (after the bus reconnected).
    Heal,
    /// This node now holds the game's lease: take the game over from the log.
    Promote,
    /// This node lost the game's lease: stop deciding, follow the new owner.
    Demote,
    /// A chat request from a connection here (boxed: a rare command must not grow every
    /// slot of every game's queue).
    Chat(Box<ChatRequest>),
    /// A reported chat line and the lines around it, as `reporter` reads the chat (see
    /// [`crate::domain::chat::ChatLog::context`]): answered from this node's copy.
    ChatContext {
        /// Who reports.
        reporter: PlayerId,
        /// The line's author.
        author: PlayerId,
        /// The line's `ts`.
        ts: u64,
        /// Where to answer: the reported line's index in the lines, and the lines.
        reply: oneshot::Sender<Option<(usize, Vec<stoa_protocol::wire::ChatEntry>)>>,
    },
    /// The current document for HTTP (`None`: not visible to this viewer with this code).
    Snapshot {
        /// The asking player (a bearer token's), for private games.
        viewer: Option<PlayerId>,
        /// Room code, for private games.
        code: Option<String>,
        /// Where to answer.
        reply: oneshot::Sender<Option<(u64, Value)>>,
    },
}

/// A chat request (see [`crate::domain::chat`]) from a connection of this node.
#[derive(Debug)]
pub struct ChatRequest {
    /// The asking connection (it must be watching the game).
    pub conn_id: u64,
    /// Its player.
    pub player_id: PlayerId,
    /// The player's display name.
    pub name: String,
    /// What is asked.
    pub op: crate::domain::chat::ChatOp,
    /// Where to answer.
    pub reply: Reply,
}

/// How the rest of the server reaches a live game: shared, because every request to a
/// game looks its handle up (a clone is one reference count, not three ids copied).
#[derive(Clone)]
pub struct GameHandle(Arc<GameRoute>);

impl GameHandle {
    /// The handle of a game reached by `route`.
    pub fn new(route: GameRoute) -> Self {
        Self(Arc::new(route))
    }
}

impl std::ops::Deref for GameHandle {
    type Target = GameRoute;

    fn deref(&self) -> &GameRoute {
        &self.0
    }
}

/// What a [`GameHandle`] holds: the game's identity and its actor's command queue.
pub struct GameRoute {
    /// Game id.
    pub id: GameId,
    /// Game kind (its engine; the wire and the store have its id).
    pub kind: &'static GameKind,
    /// The actor's command queue.
    pub tx: mpsc::Sender<Command>,
    /// Player ids by initial side index.
    pub players: [PlayerId; 2],
    /// The arena that paired this game (`game.started` names it).
    pub arena: Option<String>,
    /// The lobby's summary of the game while it is public and on (kept by the actor).
    pub summary: Arc<parking_lot::Mutex<Option<Value>>>,
}

impl std::fmt::Debug for GameHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameHandle")
            .field("id", &self.id)
            .field("kind", &self.kind.id)
            .field("players", &self.players)
            .finish_non_exhaustive()
    }
}
