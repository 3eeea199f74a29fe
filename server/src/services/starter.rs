//! Starting games: the one path by which rooms, matchmaking and rematches create a game,
//! spawn its actor, and tell its players.
//!
//! Why one starter: a game's creation has an order that must not vary with who asked —
//! seats rated, setup validated, lease taken (so no other node takes the game over while it
//! is being created), setup stored, actor registered before presence is read — and every
//! actor gets the same narrow [`Capabilities`]. The starter also holds the reactions to
//! a game's end (ratings, rematches), which start games again through it.

use std::sync::{Arc, Weak};

use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::{ErrorCode, ServerMessage};
use stoa_protocol::Side;
use tokio::sync::{mpsc, watch};

use crate::error::ApiError;
use crate::game::capabilities::{
    timed_store_call, ArenaGameEnd, Capabilities, Peers, Reactions, Settings,
};
use crate::game::games::Games;
use crate::game::players::Players;
use crate::game::queues::Matchmaker;
use crate::game::{actor, Command, GameHandle, NewGame};
use crate::ids::{PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::net::outbound::ConnHandle;
use crate::services::ratings::Ratings;
use crate::services::topology::{StartedGame, Topology};
use crate::store::{GameRecord, SeatRecord, Store, StoreError};

/// What starting a game takes.
pub struct StarterParts {
    /// Persistence.
    pub store: Arc<dyn Store>,
    /// The server's time (every rebuild of a game starts from its creation time).
    pub time: Arc<dyn TimeSource>,
    /// Live games.
    pub games: Arc<Games>,
    /// Connected players (announcements, initial presence).
    pub players: Arc<Players>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Flips to `true` when the server shuts down (actors see it).
    pub shutdown: watch::Receiver<bool>,
    /// The actors' settings.
    pub settings: Settings,
    /// The capacity of each actor's command queue.
    pub game_queue: usize,
    /// Seats' ratings and the update at a rated end.
    pub ratings: Arc<Ratings>,
    /// The queues (a rematch's sides count for the next pairing's alternation).
    pub queues: Arc<Matchmaker>,
    /// Leases and the other nodes' announcements.
    pub topology: Arc<dyn Topology>,
    /// The other nodes as actors see them (none on a single node).
    pub peers: Arc<dyn Peers>,
    /// Where arena games' ends go (the arenas service reads them).
    pub arena_ends: mpsc::UnboundedSender<ArenaGameEnd>,
}

/// Creates games and tells their players.
pub struct Starter {
    parts: StarterParts,
    /// Itself, for the reactions its actors hold (a rematch starts a game through it)
    /// without keeping it alive.
    me: Weak<Starter>,
}

impl std::fmt::Debug for Starter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Starter").finish_non_exhaustive()
    }
}

fn invalid(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::InvalidOptions, e.to_string())
}

impl Starter {
    /// A starter over its parts.
    pub fn new(parts: StarterParts) -> Arc<Self> {
        Arc::new_cyclic(|me| Starter {
            parts,
            me: me.clone(),
        })
    }

    /// Creates a game: persists its setup, spawns its actor and registers it. The players
    /// are told with [`Starter::announce`] (separately, so a room can answer the joiner
    /// first).
    pub async fn create_game(&self, mut new: NewGame) -> Result<GameHandle, ApiError> {
        let p = &self.parts;
        // Computer players' results stay out of people's ratings: a game with a bot is
        // never rated.
        if new.players.iter().any(|p| p.bot) {
            new.rated = false;
        }
        // Seats show each player's current rating in this kind.
        for seat in new.players.iter_mut() {
            p.ratings.fill_seat(seat, new.setup.kind_id()).await?;
        }
        let game = new.setup.new_game().map_err(invalid)?;
        // The lease first: the game is listed unfinished from its creation on, and no
        // other node may take it over in between.
        if !timed_store_call(&p.metrics, p.topology.acquire(&new.id)).await? {
            return Err(ApiError::new(ErrorCode::Conflict, "this game id is taken"));
        }
        let record = Arc::new(self.record_of(&new));
        let start = std::time::Instant::now();
        let created = p.store.create_game(&record).await;
        p.metrics.store_call(start.elapsed(), created.is_ok());
        let in_doubt = match created {
            Ok(()) => false,
            // The writes may or may not have landed (an answer lost, a `WAIT` that timed
            // out): the game goes on as created, and its actor stores the record again
            // as soon as it finds it missing. Answering an error instead would leave a
            // game the players were never told of, recovered later as unfinished.
            Err(StoreError::InDoubt(e)) => {
                tracing::warn!(game = %new.id, error = %e, "a game's creation is in doubt: its actor makes sure it is stored");
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "store call failed");
                return Err(ApiError::store(e));
            }
        };
        let (tx, rx) = mpsc::channel(p.game_queue.max(1));
        let handle = GameHandle::new(crate::game::GameRoute {
            id: new.id.as_str().into(),
            kind: new.setup.kind,
            tx,
            players: [
                new.players[0].id.as_str().into(),
                new.players[1].id.as_str().into(),
            ],
            arena: new.arena.as_ref().map(|a| a.id.to_string()),
            summary: Arc::new(parking_lot::Mutex::new(None)),
        });
        // Register before reading presence, so a presence change in between still reaches
        // the actor (presence commands are idempotent).
        p.games.insert(handle.clone());
        let online = [
            p.players
                .is_online(&PlayerId::from(new.players[0].id.as_str())),
            p.players
                .is_online(&PlayerId::from(new.players[1].id.as_str())),
        ];
        p.metrics.game_started(new.setup.kind_id());
        actor::spawn(
            self.capabilities(),
            new,
            game,
            actor::Created { record, in_doubt },
            online,
            rx,
            handle.summary.clone(),
        );
        Ok(handle)
    }

    /// The stored setup of a new game.
    fn record_of(&self, new: &NewGame) -> GameRecord {
        let seat = |i: usize| SeatRecord {
            id: PlayerId::from(new.players[i].id.as_str()),
            name: new.players[i].name.clone(),
            rating: new.players[i].rating.clone(),
            bot: new.players[i].bot,
        };
        GameRecord {
            id: new.id.clone(),
            kind: new.setup.kind_id().to_string(),
            options: new.setup.options.clone(),
            clock: new.setup.clock_json(),
            rated: new.rated,
            visibility: new.visibility,
            code: new.code.clone(),
            players: [seat(0), seat(1)],
            // The server's time: the clock of this game and of every rebuild of it (a
            // follower, a new owner) starts from it, so they all hold the same document at
            // seq 0.
            created_ms: self.parts.time.now_ms(),
            rematch_of: new.rematch_of.clone(),
            arena: new.arena.clone(),
            start: new.setup.start_str().map(str::to_string),
        }
    }

    /// Creates a game for two players and tells them ([`Starter::create_game`] then
    /// [`Starter::announce`]): the entry point for matchmaking and anything else that pairs
    /// two players outside a room. `new.players` are by side index (first-acting side
    /// first).
    pub async fn start_game(&self, new: NewGame) -> Result<GameHandle, ApiError> {
        let side_names = new.setup.kind.side_names;
        let handle = self.create_game(new).await?;
        self.announce(&handle, side_names).await;
        Ok(handle)
    }

    /// Sends `game.started` to every connection of both players and subscribes each (the
    /// actor then queues a snapshot on it).
    pub async fn announce(&self, handle: &GameHandle, side_names: [&'static str; 2]) {
        self.announce_from_room(handle, side_names, None).await;
    }

    /// [`Starter::announce`] for a game a room started: the node where the room's host
    /// waits (in a cluster, maybe another) learns that the room is no longer waiting.
    pub async fn announce_from_room(
        &self,
        handle: &GameHandle,
        side_names: [&'static str; 2],
        room: Option<RoomCode>,
    ) {
        for (i, pid) in handle.players.iter().enumerate() {
            for conn in self.parts.players.connections(pid) {
                self.announce_to(handle, side_names[i], &conn).await;
            }
        }
        self.parts
            .topology
            .started(StartedGame {
                game: handle.id.clone(),
                kind: handle.kind,
                players: handle.players.clone(),
                side_names: side_names.map(str::to_string),
                room,
            })
            .await;
    }

    /// Tells one connection of a player that a game started, and subscribes it.
    pub async fn announce_to(&self, handle: &GameHandle, side: &str, conn: &Arc<ConnHandle>) {
        conn.send_msg(&ServerMessage::GameStarted {
            game_id: handle.id.to_string(),
            kind: handle.kind.id.to_string(),
            side: side.to_string(),
            arena: handle.arena.clone(),
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
    /// the shutdown signal, its settings, the reactions to its events, and the peers.
    pub fn capabilities(&self) -> Capabilities {
        let p = &self.parts;
        Capabilities {
            store: p.store.clone(),
            time: p.time.clone(),
            directory: p.games.clone(),
            metrics: p.metrics.clone(),
            shutdown: p.shutdown.clone(),
            settings: p.settings,
            reactions: Arc::new(StarterReactions {
                starter: self.me.clone(),
                ratings: p.ratings.clone(),
                store: p.store.clone(),
                queues: p.queues.clone(),
                arena_ends: p.arena_ends.clone(),
            }),
            peers: p.peers.clone(),
        }
    }

    /// The capacity of each actor's command queue.
    pub fn game_queue(&self) -> usize {
        self.parts.game_queue.max(1)
    }

    /// Tells a player's live games that it came online or went offline.
    pub async fn presence(&self, player_id: &PlayerId, online: bool) {
        for handle in self.parts.games.of_player(player_id) {
            let _ = handle
                .tx
                .send(Command::Presence {
                    player_id: player_id.clone(),
                    online,
                })
                .await;
        }
    }
}

/// The reactions to game events, held by actors without keeping the starter alive.
struct StarterReactions {
    starter: Weak<Starter>,
    ratings: Arc<Ratings>,
    store: Arc<dyn Store>,
    queues: Arc<Matchmaker>,
    arena_ends: mpsc::UnboundedSender<ArenaGameEnd>,
}

#[async_trait::async_trait]
impl Reactions for StarterReactions {
    async fn rated_result(
        &self,
        kind: &str,
        players: [&str; 2],
        winner: Option<Side>,
    ) -> Option<[f64; 2]> {
        match self.ratings.record_result(kind, players, winner).await {
            Ok([a, b]) => Some([a.rating, b.rating]),
            Err(e) => {
                tracing::error!(error = %e, "could not update the ratings");
                None
            }
        }
    }

    async fn arena_game_ended(&self, end: ArenaGameEnd) {
        // The arenas service may be gone at shutdown: nothing to score then.
        let _ = self.arena_ends.send(end);
    }

    async fn rematch(&self, mut setup: NewGame) {
        let Some(starter) = self.starter.upgrade() else {
            return;
        };
        // The seats come from the finished game; a player renamed since then plays the
        // rematch under the new name (a store failure keeps the old one: the game starts).
        for seat in &mut setup.players {
            if let Ok(Some(p)) = self.store.player(&PlayerId::from(seat.id.as_str())).await {
                seat.name = p.name;
            }
        }
        match starter.start_game(setup).await {
            Ok(handle) => self
                .queues
                .record_sides([handle.players[0].as_str(), handle.players[1].as_str()]),
            Err(e) => tracing::error!(error = %e, "could not start the rematch"),
        }
    }
}
