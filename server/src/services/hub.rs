//! The services of one node, bundled for the sessions and the HTTP edge.
//!
//! Why a bundle and not a hub in the middle: each service takes the handles it needs at
//! construction (no service names this module), so data flows one way — socket → session
//! → service → game actor → store + broadcast — and the import graph has no circle
//! (`server/tests/module_graph.rs`). The other nodes are reached through one seam,
//! [`Topology`]; [`Hub::new`] builds a single node, and the composition root
//! (`crate::node`) builds one over a cluster.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use stoa_protocol::clock::TimeSource;
use tokio::sync::watch;

use crate::config::Config;
use crate::domain::rate_limit::IpLimiter;
use crate::error::ApiError;
use crate::game::capabilities::{Peers, Settings};
use crate::game::games::Games;
use crate::game::players::Players;
use crate::game::queues::Matchmaker;
use crate::game::{GameHandle, NewGame};
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::net::outbound::ConnHandle;
use crate::services::accounts::Accounts;
use crate::services::arenas::{Arenas, ArenasParts};
use crate::services::bots::Bots;
use crate::services::hosting::Hosting;
use crate::services::identities::Identities;
use crate::services::lobby::Lobby;
use crate::services::matchmaker::Matchmaking;
use crate::services::profiles::Profiles;
use crate::services::ratings::Ratings;
use crate::services::records::Records;
use crate::services::recovery::{Recovery, RecoveryParts};
use crate::services::registries::Registries;
use crate::services::room_chat::RoomChats;
use crate::services::rooms::{HostAway, Rooms};
use crate::services::starter::{Starter, StarterParts};
use crate::services::topology::{SingleNode, Topology};
use crate::store::{Store, StoreResult};

/// The services of one node.
pub struct Hub {
    /// Configuration.
    pub config: Config,
    /// Persistence.
    pub store: Arc<dyn Store>,
    /// Connected players.
    pub players: Arc<Players>,
    /// Rooms.
    pub rooms: Arc<Rooms>,
    /// Waiting rooms' chats.
    pub room_chats: RoomChats,
    /// Live games.
    pub games: Arc<Games>,
    /// Lobby watchers and document.
    pub lobby: Arc<Lobby>,
    /// Computer opponents serving on this node (`bot.serve`).
    pub bots: Arc<Bots>,
    /// The analysis workers connected here, and the engine-review queue.
    pub analysis: Arc<crate::services::analysis::Analysis>,
    /// Moderation: the sanctions in force here, the operators, the word filter.
    pub moderation: Arc<crate::services::moderation::Moderation>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Per-IP connection limiter.
    pub ip_limiter: IpLimiter,
    /// Flips to `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
    /// Matchmaking queues.
    pub matchmaker: Arc<Matchmaker>,
    /// Matchmaking: joins, leaves, the pairing task.
    pub matchmaking: Arc<Matchmaking>,
    /// Arena tournaments.
    pub arenas: Arc<Arenas>,
    /// Ratings.
    pub ratings: Arc<Ratings>,
    /// Finished games' records and histories.
    pub records: Records,
    /// Players' pages and the leaderboards.
    pub profiles: Profiles,
    /// Claimed accounts: claims, sign-ins, passwords.
    pub accounts: Accounts,
    /// The identities this node created lately, stored again after a failover lost them.
    pub identities: Arc<Identities>,
    /// Creates games and tells their players.
    pub starter: Arc<Starter>,
    /// Rebuilds games from their logs (start-up, takeover, following).
    pub recovery: Arc<Recovery>,
    /// Joining rooms and starting their games.
    pub hosting: Hosting,
    /// The other nodes (a single node is a cluster of one).
    pub topology: Arc<dyn Topology>,
    /// The server's time (game clocks, `server_time`, ping round trips); see [`crate::time`].
    pub time: Arc<dyn TimeSource>,
    /// The deployment's id (`welcome.deployment`, the `stoa-deployment` header of the
    /// websocket upgrade, `/health`): random here, replaced by the store's when the server
    /// starts ([`crate::store::Store::deployment`]).
    pub deployment: String,
    next_conn: AtomicU64,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

impl Hub {
    /// The services of a single node over a store.
    pub fn new(config: Config, store: Arc<dyn Store>, shutdown: watch::Receiver<bool>) -> Self {
        let registries = Registries::new(&config);
        let topology = Arc::new(SingleNode::new(registries.queues.clone()));
        Hub::assemble(
            config,
            store,
            shutdown,
            registries,
            topology.clone(),
            topology,
        )
    }

    /// The services of a node over its registries and topology; `peers` are the other
    /// nodes as game actors see them (none on a single node).
    pub fn assemble(
        config: Config,
        store: Arc<dyn Store>,
        shutdown: watch::Receiver<bool>,
        registries: Registries,
        topology: Arc<dyn Topology>,
        peers: Arc<dyn Peers>,
    ) -> Self {
        let Registries {
            games,
            players,
            queues,
            metrics,
        } = registries;
        let time: Arc<dyn TimeSource> = Arc::new(crate::time::TokioTime::new());
        let ratings = Arc::new(Ratings::new(
            store.clone(),
            metrics.clone(),
            topology.clone(),
        ));
        let base = Base {
            config: &config,
            store: &store,
            games: &games,
            players: &players,
            queues: &queues,
            metrics: &metrics,
            topology: &topology,
            shutdown: &shutdown,
        };
        let (arena_ends, ends) = tokio::sync::mpsc::unbounded_channel();
        let starter = base.starter(&time, &ratings, peers, arena_ends);
        let arenas = base.arenas(&starter, &ratings, &time, ends);
        let rooms = Arc::new(Rooms::default());
        let recovery = base.recovery(&rooms, &starter);
        let hosting = base.hosting(&rooms, &recovery, &starter, &ratings);
        let bots = Arc::new(Bots::new(topology.clone()));
        let lobby = base.lobby(&rooms, &bots, &arenas);
        let matchmaking = base.matchmaking(&ratings, &starter);
        Hub {
            ip_limiter: IpLimiter::new(config.ip_conn_limit, config.ip_window()),
            records: Records::new(store.clone(), metrics.clone()),
            analysis: crate::services::analysis::Analysis::start(store.clone()),
            moderation: Arc::new(crate::services::moderation::Moderation::new(
                Default::default(),
                Default::default(),
            )),
            room_chats: RoomChats::new(topology.clone()),
            profiles: Profiles::new(store.clone(), metrics.clone(), ratings.clone()),
            accounts: Accounts::new(
                store.clone(),
                metrics.clone(),
                topology.clone(),
                config.login_per_name,
                config.login_per_ip,
            ),
            identities: Identities::start(store.clone(), metrics.clone()),
            config,
            store,
            players,
            rooms,
            games,
            lobby,
            bots,
            metrics,
            shutdown,
            matchmaker: queues,
            matchmaking,
            arenas,
            ratings,
            starter,
            recovery,
            hosting,
            topology,
            time,
            deployment: crate::ids::deployment_id(),
            next_conn: AtomicU64::new(1),
        }
    }

    /// The live game `id`: its actor here, or in a cluster a follower of the node that owns
    /// it (started on demand). `Ok(None)` when it is not live anywhere; `unavailable` when
    /// the store cannot tell now.
    pub async fn game(&self, id: &GameId) -> Result<Option<GameHandle>, ApiError> {
        self.recovery.live(id).await
    }

    /// Sends a live game the command `make` builds around a reply channel, and waits for
    /// the answer; `None` when the game is not live (anywhere) or stopped before answering.
    pub async fn call_game(
        &self,
        game_id: &GameId,
        make: impl FnOnce(crate::game::Reply) -> crate::game::Command,
    ) -> Option<Result<crate::game::Answer, ApiError>> {
        let handle = match self.game(game_id).await {
            Ok(h) => h?,
            Err(e) => return Some(Err(e)),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        // A free slot (nearly always) takes the command at once; only a full queue waits.
        match handle.tx.try_send(make(tx)) {
            Ok(()) => {}
            Err(tokio::sync::mpsc::error::TrySendError::Full(cmd)) => {
                handle.tx.send(cmd).await.ok()?
            }
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => return None,
        }
        rx.await.ok()
    }

    /// A fresh connection id.
    pub fn conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs a store call, timing it, and maps failures to `unavailable`.
    pub async fn store_call<T>(
        &self,
        fut: impl Future<Output = StoreResult<T>>,
    ) -> Result<T, ApiError> {
        crate::game::capabilities::timed_store_call(&self.metrics, fut).await
    }

    /// Creates a game ([`Starter::create_game`]).
    pub async fn create_game(&self, new: NewGame) -> Result<GameHandle, ApiError> {
        self.starter.create_game(new).await
    }

    /// Tells the players of a game a room started ([`Starter::announce_from_room`]).
    pub async fn announce_from_room(
        &self,
        handle: &GameHandle,
        side_names: [&'static str; 2],
        room: Option<RoomCode>,
    ) {
        self.starter
            .announce_from_room(handle, side_names, room)
            .await;
    }

    /// Tells one connection of a player that a game started ([`Starter::announce_to`]).
    pub async fn announce_to(&self, handle: &GameHandle, side: &str, conn: &Arc<ConnHandle>) {
        self.starter.announce_to(handle, side, conn).await;
    }

    /// Tells a player's live games that it came online or went offline.
    pub async fn presence(&self, player_id: &PlayerId, online: bool) {
        self.starter.presence(player_id, online).await;
    }

    /// A host's last connection closed: its waiting rooms close unless it is back within
    /// the grace period.
    pub fn close_rooms_when_host_stays_away(&self, host: PlayerId) {
        crate::services::rooms::close_when_host_stays_away(
            self.rooms.clone(),
            HostAway {
                grace: std::time::Duration::from_millis(self.config.room_host_grace_ms),
                players: self.players.clone(),
                store: self.store.clone(),
                metrics: self.metrics.clone(),
            },
            host,
        );
    }
}

/// The handles a node's services are built from, lent to the constructors below.
struct Base<'a> {
    config: &'a Config,
    store: &'a Arc<dyn Store>,
    games: &'a Arc<Games>,
    players: &'a Arc<Players>,
    queues: &'a Arc<Matchmaker>,
    metrics: &'a Arc<Metrics>,
    topology: &'a Arc<dyn Topology>,
    shutdown: &'a watch::Receiver<bool>,
}

impl Base<'_> {
    fn starter(
        &self,
        time: &Arc<dyn TimeSource>,
        ratings: &Arc<Ratings>,
        peers: Arc<dyn Peers>,
        arena_ends: tokio::sync::mpsc::UnboundedSender<crate::game::capabilities::ArenaGameEnd>,
    ) -> Arc<Starter> {
        Starter::new(StarterParts {
            store: self.store.clone(),
            time: time.clone(),
            games: self.games.clone(),
            players: self.players.clone(),
            metrics: self.metrics.clone(),
            shutdown: self.shutdown.clone(),
            settings: Settings::from(self.config),
            game_queue: self.config.game_queue,
            ratings: ratings.clone(),
            queues: self.queues.clone(),
            topology: self.topology.clone(),
            peers,
            arena_ends,
        })
    }

    fn recovery(&self, rooms: &Arc<Rooms>, starter: &Arc<Starter>) -> Arc<Recovery> {
        Arc::new(Recovery::new(RecoveryParts {
            store: self.store.clone(),
            games: self.games.clone(),
            players: self.players.clone(),
            metrics: self.metrics.clone(),
            rooms: rooms.clone(),
            starter: starter.clone(),
            topology: self.topology.clone(),
        }))
    }

    fn hosting(
        &self,
        rooms: &Arc<Rooms>,
        recovery: &Arc<Recovery>,
        starter: &Arc<Starter>,
        ratings: &Arc<Ratings>,
    ) -> Hosting {
        Hosting {
            rooms: rooms.clone(),
            recovery: recovery.clone(),
            starter: starter.clone(),
            ratings: ratings.clone(),
            queues: self.queues.clone(),
            store: self.store.clone(),
            metrics: self.metrics.clone(),
            topology: self.topology.clone(),
        }
    }

    fn arenas(
        &self,
        starter: &Arc<Starter>,
        ratings: &Arc<Ratings>,
        time: &Arc<dyn TimeSource>,
        ends: tokio::sync::mpsc::UnboundedReceiver<crate::game::capabilities::ArenaGameEnd>,
    ) -> Arc<Arenas> {
        Arenas::new(
            ArenasParts {
                store: self.store.clone(),
                topology: self.topology.clone(),
                node: self
                    .config
                    .node_id
                    .clone()
                    .unwrap_or_else(|| "single".into()),
                metrics: self.metrics.clone(),
                starter: starter.clone(),
                ratings: ratings.clone(),
                players: self.players.clone(),
                time: time.clone(),
                wave: std::time::Duration::from_millis(self.config.queue_wave_ms),
                shutdown: self.shutdown.clone(),
            },
            ends,
        )
    }

    fn lobby(&self, rooms: &Arc<Rooms>, bots: &Arc<Bots>, arenas: &Arc<Arenas>) -> Arc<Lobby> {
        Arc::new(Lobby::new(crate::services::lobby::Sources {
            arenas: arenas.clone(),
            rooms: rooms.clone(),
            games: self.games.clone(),
            queues: self.queues.clone(),
            players: self.players.clone(),
            bots: bots.clone(),
            topology: self.topology.clone(),
            batch: std::time::Duration::from_millis(self.config.lobby_batch_ms),
            shutdown: self.shutdown.clone(),
        }))
    }

    fn matchmaking(&self, ratings: &Arc<Ratings>, starter: &Arc<Starter>) -> Arc<Matchmaking> {
        Arc::new(Matchmaking {
            queues: self.queues.clone(),
            topology: self.topology.clone(),
            ratings: ratings.clone(),
            starter: starter.clone(),
            players: self.players.clone(),
            metrics: self.metrics.clone(),
            wave: std::time::Duration::from_millis(self.config.queue_wave_ms),
            shutdown: self.shutdown.clone(),
        })
    }
}
