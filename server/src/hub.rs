//! The shared server state every connection and actor holds: config, store, registries,
//! metrics, and the operations that span them (creating and announcing games, presence).
//!
//! Why a hub: data flows one way (socket → session → game actor → store + broadcast), and
//! the hub is the one place that knows where each of those lives.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::ServerMessage;
use stoa_protocol::Side;
use tokio::sync::{mpsc, watch};

use crate::config::Config;
use crate::error::ApiError;
use crate::game::capabilities::{Capabilities, Reactions, Settings};
use crate::game::{actor, Command, GameHandle, NewGame};
use crate::games::Games;
use crate::matchmaker::Matchmaker;
use crate::metrics::Metrics;
use crate::outbound::ConnHandle;
use crate::players::Players;
use crate::rate_limit::IpLimiter;
use crate::ratings::Ratings;
use crate::rooms::Rooms;
use crate::store::{GameRecord, SeatRecord, Store, StoreResult};

/// Shared server state.
pub struct Hub {
    /// Configuration.
    pub config: Config,
    /// Persistence.
    pub store: Arc<dyn Store>,
    /// Connected players.
    pub players: Players,
    /// Rooms.
    pub rooms: Rooms,
    /// Live games.
    pub games: Arc<Games>,
    /// Lobby watchers and document.
    pub lobby: crate::lobby::Lobby,
    /// Computer opponents serving on this node (`bot.serve`).
    pub bots: crate::bots::Bots,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Per-IP connection limiter.
    pub ip_limiter: IpLimiter,
    /// Flips to `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
    /// Matchmaking queues.
    pub matchmaker: Matchmaker,
    /// Rating updates.
    pub ratings: Ratings,
    /// The server's time (game clocks, `server_time`, ping round trips); see [`crate::time`].
    pub time: Arc<dyn TimeSource>,
    /// The other nodes over Redis (`--cluster`), `None` on a single node.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
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
    /// A hub over a store.
    pub fn new(config: Config, store: Arc<dyn Store>, shutdown: watch::Receiver<bool>) -> Self {
        let ip_limiter = IpLimiter::new(config.ip_conn_limit, config.ip_window());
        let matchmaker = Matchmaker::new(crate::matchmaker::widening(&config));
        Hub {
            config,
            store,
            players: Players::default(),
            rooms: Rooms::default(),
            games: Arc::new(Games::default()),
            lobby: crate::lobby::Lobby::default(),
            bots: crate::bots::Bots::default(),
            metrics: Arc::new(Metrics::default()),
            ip_limiter,
            shutdown,
            matchmaker,
            ratings: Ratings::default(),
            time: Arc::new(crate::time::TokioTime::new()),
            cluster: None,
            deployment: crate::ids::deployment_id(),
            next_conn: AtomicU64::new(1),
        }
    }

    /// This hub as one node of a cluster.
    pub fn with_cluster(mut self, cluster: Arc<crate::cluster::Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The live game `id`: its actor here, or in a cluster a follower of the node that owns
    /// it (started on demand). `Ok(None)` when it is not live anywhere; `unavailable` when
    /// the store cannot tell now.
    pub async fn game(self: &Arc<Self>, id: &str) -> Result<Option<GameHandle>, ApiError> {
        if let Some(h) = self.games.get(id) {
            return Ok(Some(h));
        }
        let Some(cluster) = self.cluster.clone() else {
            return Ok(None);
        };
        cluster.attach(self, id).await.map_err(ApiError::store)
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

    /// Creates a game: persists its setup, spawns its actor and registers it. The players
    /// are told with [`Hub::announce`] (separately, so a room can answer the joiner first).
    pub async fn create_game(self: &Arc<Self>, mut new: NewGame) -> Result<GameHandle, ApiError> {
        // Computer players' results stay out of people's ratings: a game with a bot is
        // never rated.
        if new.players.iter().any(|p| p.bot) {
            new.rated = false;
        }
        // Seats show each player's current rating in this kind.
        for seat in new.players.iter_mut() {
            crate::ratings::fill_seat(self, seat, &new.kind).await?;
        }
        let kind = stoa_protocol::kind(&new.kind).map_err(|e| {
            ApiError::new(
                stoa_protocol::wire::ErrorCode::InvalidOptions,
                e.to_string(),
            )
        })?;
        let game = kind.start(&new.options).map_err(|e| {
            ApiError::new(
                stoa_protocol::wire::ErrorCode::InvalidOptions,
                e.to_string(),
            )
        })?;
        crate::clock_request::time_control(&new.clock)?;
        if let Some(cluster) = &self.cluster {
            // The lease first: the game is listed unfinished from its creation on, and no
            // other node may take it over in between.
            if !self.store_call(cluster.acquire(&new.id)).await? {
                return Err(ApiError::new(
                    stoa_protocol::wire::ErrorCode::Conflict,
                    "this game id is taken",
                ));
            }
        }
        let record = GameRecord {
            id: new.id.clone(),
            kind: new.kind.clone(),
            options: new.options.clone(),
            clock: new.clock.clone(),
            rated: new.rated,
            visibility: new.visibility,
            code: new.code.clone(),
            players: [
                SeatRecord {
                    id: new.players[0].id.clone(),
                    name: new.players[0].name.clone(),
                    rating: new.players[0].rating.clone(),
                    bot: new.players[0].bot,
                },
                SeatRecord {
                    id: new.players[1].id.clone(),
                    name: new.players[1].name.clone(),
                    rating: new.players[1].rating.clone(),
                    bot: new.players[1].bot,
                },
            ],
            // The hub's time: the clock of this game and of every rebuild of it (a follower,
            // a new owner) starts from it, so they all hold the same document at seq 0.
            created_ms: self.time.now_ms(),
            rematch_of: new.rematch_of.clone(),
        };
        self.store_call(self.store.create_game(&record)).await?;
        let (tx, rx) = mpsc::channel(self.config.game_queue.max(1));
        let handle = GameHandle {
            id: new.id.clone(),
            kind: new.kind.clone(),
            tx,
            players: [new.players[0].id.clone(), new.players[1].id.clone()],
            summary: Arc::new(std::sync::Mutex::new(None)),
        };
        // Register before reading presence, so a presence change in between still reaches
        // the actor (presence commands are idempotent).
        self.games.insert(handle.clone());
        let online = [
            self.players.is_online(&new.players[0].id),
            self.players.is_online(&new.players[1].id),
        ];
        self.metrics.game_started(&new.kind);
        actor::spawn(
            self.capabilities(),
            new,
            game,
            record.created_ms,
            online,
            rx,
            handle.summary.clone(),
        );
        Ok(handle)
    }

    /// Creates a game for two players and tells them ([`Hub::create_game`] then
    /// [`Hub::announce`]): the entry point for matchmaking and anything else that pairs two
    /// players outside a room. `new.players` are by side index (first-acting side first).
    pub async fn start_game(self: &Arc<Self>, new: NewGame) -> Result<GameHandle, ApiError> {
        let side_names = stoa_protocol::kind(&new.kind)
            .map(|k| k.side_names)
            .map_err(|e| {
                ApiError::new(
                    stoa_protocol::wire::ErrorCode::InvalidOptions,
                    e.to_string(),
                )
            })?;
        let handle = self.create_game(new).await?;
        self.announce(&handle, side_names).await;
        Ok(handle)
    }

    /// Sends `game.started` to every connection of both players and subscribes each (the
    /// actor then queues a snapshot on it).
    pub async fn announce(&self, handle: &GameHandle, side_names: [&'static str; 2]) {
        self.announce_from_room(handle, side_names, None).await;
    }

    /// [`Hub::announce`] for a game a room started: in a cluster, the node where the
    /// room's host waits learns that the room is no longer waiting.
    pub async fn announce_from_room(
        &self,
        handle: &GameHandle,
        side_names: [&'static str; 2],
        room: Option<String>,
    ) {
        for (i, pid) in handle.players.iter().enumerate() {
            for conn in self.players.connections(pid) {
                self.announce_to(handle, side_names[i], &conn).await;
            }
        }
        if let Some(cluster) = &self.cluster {
            cluster.started(handle, side_names, room).await;
        }
    }

    /// Tells one connection of a player that a game started, and subscribes it.
    pub async fn announce_to(&self, handle: &GameHandle, side: &str, conn: &Arc<ConnHandle>) {
        conn.send_msg(&ServerMessage::GameStarted {
            game_id: handle.id.clone(),
            kind: handle.kind.clone(),
            side: side.to_string(),
        });
        let _ = handle
            .tx
            .send(Command::Watch {
                conn: conn.clone(),
                rid: None,
                since: None,
                code: None,
                reply: None,
            })
            .await;
    }

    /// What a game actor may use: the store, the time, the game directory, the metrics,
    /// the shutdown signal, its settings, and this hub's reactions to its events.
    pub fn capabilities(self: &Arc<Self>) -> Capabilities {
        Capabilities {
            store: self.store.clone(),
            time: self.time.clone(),
            directory: self.games.clone(),
            metrics: self.metrics.clone(),
            shutdown: self.shutdown.clone(),
            settings: Settings::from(&self.config),
            reactions: Arc::new(HubReactions(Arc::downgrade(self))),
            peers: self
                .cluster
                .clone()
                .map(|c| c as Arc<dyn crate::game::capabilities::Peers>),
        }
    }

    /// Tells a player's live games that it came online or went offline.
    pub async fn presence(&self, player_id: &str, online: bool) {
        for handle in self.games.of_player(player_id) {
            let _ = handle
                .tx
                .send(Command::Presence {
                    player_id: player_id.to_string(),
                    online,
                })
                .await;
        }
    }
}

/// The hub's reactions to game events, held by actors without keeping the hub alive.
struct HubReactions(Weak<Hub>);

#[async_trait::async_trait]
impl Reactions for HubReactions {
    async fn rated_result(
        &self,
        kind: &str,
        players: [&str; 2],
        winner: Option<Side>,
    ) -> Option<[f64; 2]> {
        let hub = self.0.upgrade()?;
        match hub.ratings.record_result(&hub, kind, players, winner).await {
            Ok([a, b]) => Some([a.rating, b.rating]),
            Err(e) => {
                tracing::error!(error = %e, "could not update the ratings");
                None
            }
        }
    }

    async fn rematch(&self, mut setup: NewGame) {
        let Some(hub) = self.0.upgrade() else {
            return;
        };
        // The seats come from the finished game; a player renamed since then plays the
        // rematch under the new name (a store failure keeps the old one: the game starts).
        for seat in &mut setup.players {
            if let Ok(Some(p)) = hub.store.player(&seat.id).await {
                seat.name = p.name;
            }
        }
        match hub.start_game(setup).await {
            Ok(handle) => hub
                .matchmaker
                .record_sides([handle.players[0].as_str(), handle.players[1].as_str()]),
            Err(e) => tracing::error!(error = %e, "could not start the rematch"),
        }
    }
}
