//! Several nodes over one Redis (`--cluster`): one owner per live game under a lease, any
//! node serving any client, and a dead node's games taken over by the others.
//!
//! Why this shape: Redis is the distributed engine, never a home-made consensus. A game's
//! owner holds `P:game:{id}:lease` (a key with a TTL it renews); the log's append script
//! accepts writes only from the lease holder, so a node that lost its lease (paused, cut
//! off) can never write the game again — it notices at its next renewal or write and turns
//! into a follower. Every other node serving the game's players or spectators runs a
//! follower of it (see `crate::game::actor`), fed by the owner's logged events over pub/sub
//! and healed from the log on any gap. Nodes find each other through heartbeats in
//! `P:nodes`; each periodically claims the leases of unfinished games nobody holds, which
//! is how a dead node's games move on.

mod bots;
mod bus;
mod leases;
pub mod messages;
mod shared;
mod topology;

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::PubSubSink;
use redis::{AsyncCommands, Script};
use tokio::sync::{mpsc, oneshot, watch};

use self::messages::BusMessage;
use crate::domain::pairing::QueueKey;
use crate::game::capabilities::Peers;
use crate::game::Command;
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::services::registries::Registries;
use crate::services::topology::{PlayersLock, StartedGame};
use crate::store::connection::RedisConn;
use crate::store::redis::RedisStore;
use crate::store::{Store, StoreError};
use stoa_protocol::wire::SeatPlayer;

/// What the cluster asks of this node's services, through the composition root's router
/// (the cluster holds no handle on the services: they are built over it).
#[derive(Debug)]
pub enum ClusterEvent {
    /// A game started on another node: its room (if here) no longer waits, and its players
    /// connected here are told. `done` is answered once they are, so the bus delivers the
    /// game's next events after its follower exists.
    Started {
        /// The game.
        game: StartedGame,
        /// Answered when handled.
        done: oneshot::Sender<()>,
    },
    /// This node took a game's lease over (its owner died or lost Redis): rebuild it from
    /// the log. `done` says whether it serves the game now (if not, the lease is given back
    /// at once for another try).
    TakeOver {
        /// The game's id.
        game: GameId,
        /// Answered with the outcome.
        done: oneshot::Sender<bool>,
    },
    /// A line said in a waiting room's chat on another node: kept and passed to this
    /// node's watchers of the room.
    RoomLine {
        /// The room's code.
        code: RoomCode,
        /// The line.
        line: stoa_protocol::wire::RoomChatLine,
    },
}

/// This node's view of the cluster.
pub struct Cluster {
    node: String,
    store: RedisStore,
    /// Where the bus subscribes: `None` when the store follows the primary through
    /// Sentinel (the subscription then goes to whichever server is the primary).
    client: Option<redis::Client>,
    /// Where messages are published: the server the subscriptions use, so that `PUBLISH`
    /// counts the receivers a node channel really has.
    bus: RedisConn,
    lease_ms: u64,
    /// The subscription's command side, while connected.
    sink: Mutex<Option<PubSubSink>>,
    /// Games whose lease this node holds.
    owned: Mutex<HashSet<GameId>>,
    /// The nodes seen alive at the last heartbeat.
    live: Mutex<HashSet<String>>,
    /// Games this node follows (their channels are subscribed).
    followed: Mutex<HashSet<GameId>>,
    /// This node's registries: the bus delivers game messages and frames into them, and
    /// the matchmaker node's queues are this node's when it holds `P:matchmaker`.
    registries: Registries,
    /// Where the cluster's requests to this node's services go (see [`ClusterEvent`]);
    /// closed when the node stops, which ends the cluster's loops.
    events: mpsc::UnboundedSender<ClusterEvent>,
    /// Flips to `true` when the server shuts down.
    shutdown: watch::Receiver<bool>,
    renew: Script,
    release: Script,
    claim: Script,
    /// Whether this node runs the cluster's matchmaking (it holds `P:matchmaker`).
    matchmaker: AtomicBool,
    /// The matchmaker node last seen.
    leader: Mutex<Option<String>>,
    /// This node's players waiting in a queue, as they joined: sent again to a new
    /// matchmaker node when the old one dies.
    queued_here: Mutex<HashMap<PlayerId, (QueueKey, SeatPlayer, f64)>>,
    /// Queue joins sent to the matchmaker node, waiting for its answer.
    pending: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<u64>>>,
    next_req: AtomicU64,
    /// Wakes the lease loop early: another node released its leases while draining.
    wake: tokio::sync::Notify,
    /// The store's generation the lease round last saw, and when it saw it move (see
    /// [`Cluster::settling`]).
    generation_seen: Mutex<(u64, Option<std::time::Instant>)>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// A cluster node over `store` (whose Redis also carries the bus), delivering into this
    /// node's `registries` and asking its services through `events`.
    pub async fn new(
        node: String,
        store: RedisStore,
        url: &str,
        lease_ms: u64,
        registries: Registries,
        events: mpsc::UnboundedSender<ClusterEvent>,
        shutdown: watch::Receiver<bool>,
    ) -> Result<Self, String> {
        let generation = crate::store::Store::generation(&store);
        let (client, bus) = match store.connection() {
            // The store's own connection follows the primary through promotions; the bus
            // publishes on it and subscribes wherever it points.
            conn @ RedisConn::Sentinel(_) => (None, conn),
            _ => {
                let client = redis::Client::open(url).map_err(|e| format!("bad redis url: {e}"))?;
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_factor(50)
                    .set_exponent_base(2)
                    .set_max_delay(500);
                let bus = redis::aio::ConnectionManager::new_with_config(client.clone(), config)
                    .await
                    .map_err(|e| format!("cannot reach redis for the bus: {e}"))?;
                (Some(client), RedisConn::Single(bus))
            }
        };
        Ok(Cluster {
            node,
            store,
            client,
            bus,
            lease_ms: lease_ms.max(300),
            sink: Mutex::new(None),
            owned: Mutex::new(HashSet::new()),
            live: Mutex::new(HashSet::new()),
            followed: Mutex::new(HashSet::new()),
            registries,
            events,
            shutdown,
            renew: Script::new(leases::RENEW),
            release: Script::new(leases::RELEASE),
            claim: Script::new(leases::CLAIM),
            matchmaker: AtomicBool::new(false),
            leader: Mutex::new(None),
            queued_here: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_req: AtomicU64::new(1),
            wake: tokio::sync::Notify::new(),
            generation_seen: Mutex::new((generation, None)),
        })
    }

    /// Connects the bus and starts the heartbeat, lease renewal and takeover loops. Returns
    /// once this node's channels are subscribed.
    pub async fn start(self: &Arc<Self>) -> Result<(), String> {
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(self.clone().bus_loop(Some(ready_tx)));
        ready_rx
            .await
            .map_err(|_| "the cluster bus did not start".to_string())?;
        self.heartbeat().await;
        self.elect().await;
        tokio::spawn(self.clone().lease_loop());
        tracing::info!(node = %self.node, lease_ms = self.lease_ms, "cluster node up");
        Ok(())
    }

    /// Whether the node this cluster serves has stopped (its router is gone).
    fn stopped(&self) -> bool {
        self.events.is_closed()
    }

    /// `SET key value NX PX ttl_ms`: takes a key nobody holds (a lease, a claim, a lock)
    /// for `ttl_ms`; whether this call took it.
    pub(super) async fn take_key(
        &self,
        key: &str,
        value: &str,
        ttl_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut conn = self.store.connection();
        let set: Option<String> = self
            .store
            .call(
                redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(set.is_some())
    }

    /// Whether this node runs the cluster's matchmaking now.
    pub(super) fn is_matchmaker(&self) -> bool {
        self.matchmaker.load(Ordering::Relaxed)
    }
}

#[async_trait::async_trait]
impl Peers for Cluster {
    fn node(&self) -> &str {
        &self.node
    }

    async fn publish(&self, message: &BusMessage) {
        let game = match message {
            BusMessage::Event { game, .. }
            | BusMessage::Crowd { game, .. }
            | BusMessage::Chat { game, .. }
            | BusMessage::Owner { game, .. }
            | BusMessage::Rewound { game, .. } => game.clone(),
            _ => return,
        };
        self.publish_on(&self.game_channel(&game), message).await;
    }

    async fn send_to(&self, node: &str, message: &BusMessage) -> Option<bool> {
        self.publish_counted(&self.node_channel(node), message)
            .await
            .map(|n| n > 0)
    }

    async fn owner_of(&self, game: &GameId) -> Result<Option<String>, StoreError> {
        let mut conn = self.store.connection();
        self.store
            .call(conn.get::<_, Option<String>>(self.store.lease_key(game)))
            .await
    }

    async fn hold_lease(&self, game: &GameId) -> Result<bool, StoreError> {
        let key = self.store.lease_key(game);
        if self.take_key(&key, &self.node, self.lease_ms).await? {
            return Ok(true);
        }
        Ok(self.owner_of(game).await?.as_deref() == Some(self.node.as_str()))
    }

    fn set_owned(&self, game: &GameId, owned: bool) {
        let mut set = lock(&self.owned);
        if owned {
            set.insert(game.clone());
        } else {
            set.remove(game);
        }
    }

    async fn follow(&self, game: &GameId) {
        if lock(&self.followed).insert(game.clone()) {
            if let Err(e) = self.subscribe(&self.game_channel(game)).await {
                tracing::warn!(game = %game, error = %e, "cannot follow the game's channel");
            }
        }
    }

    fn is_live(&self, node: &str) -> bool {
        let live = lock(&self.live);
        // Before the first reading every node counts as alive.
        live.is_empty() || live.contains(node)
    }

    fn unfollow(&self, game: &GameId) {
        if !lock(&self.followed).remove(game) {
            return;
        }
        let channel = self.game_channel(game);
        if let Some(mut sink) = lock(&self.sink).clone() {
            tokio::spawn(async move {
                let _ = sink.unsubscribe(channel).await;
            });
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> parking_lot::MutexGuard<'_, T> {
    m.lock()
}
