//! Joining a room by its code, and starting the room's game when the joiner fills it.
//!
//! Why a service and not the session: a join is a small transaction across the room
//! registry, the store and the game starter — find the room (in memory, or in the store
//! after a restart or on another node), take the seat, claim the room in the store so only
//! one joiner on any node starts its game, create the game, and give the seat back if any
//! step fails. The session only turns the outcome into answers.

use std::sync::Arc;

use stoa_protocol::wire::{ErrorCode, SeatPlayer};

use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::game::queues::Matchmaker;
use crate::game::{GameHandle, NewGame};
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::services::ratings::Ratings;
use crate::services::recovery::Recovery;
use crate::services::rooms::{JoinOutcome, Room, RoomStatus, Rooms};
use crate::services::starter::Starter;
use crate::services::topology::Topology;
use crate::store::Store;

/// What a join came to.
pub enum Joined {
    /// The joiner sits in a room that still waits for its second player.
    Waiting(Room),
    /// The room's game had started already: the joiner may watch it (with the code).
    Started(GameId),
    /// The joiner filled the room and its game started now: tell the players.
    Start {
        /// The room, now started.
        room: Room,
        /// The new game.
        game: GameHandle,
    },
}

/// Joining rooms and starting their games.
pub struct Hosting {
    /// The rooms this node knows.
    pub rooms: Arc<Rooms>,
    /// Rooms from the store (after a restart, or held by another node).
    pub recovery: Arc<Recovery>,
    /// Creates the room's game.
    pub starter: Arc<Starter>,
    /// Seats show the joiner's rating.
    pub ratings: Arc<Ratings>,
    /// A room game's sides count for the next pairing's alternation.
    pub queues: Arc<Matchmaker>,
    /// Where rooms are claimed and saved.
    pub store: Arc<dyn Store>,
    /// Metrics (store call timings).
    pub metrics: Arc<Metrics>,
    /// Whether another node may change a room.
    pub topology: Arc<dyn Topology>,
}

impl std::fmt::Debug for Hosting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosting").finish_non_exhaustive()
    }
}

fn closed() -> ApiError {
    ApiError::new(ErrorCode::Conflict, "this room is closed")
}

impl Hosting {
    /// `room.join`: seats `me` in the room `code` (normalised), starting its game when the
    /// room is full.
    pub async fn join(&self, code: &RoomCode, mut me: SeatPlayer) -> Result<Joined, ApiError> {
        self.load(code).await?;
        if let Some(room) = self.rooms.get(code) {
            self.ratings
                .fill_seat(&mut me, room.setup.kind_id())
                .await?;
        }
        match self.rooms.join(code, &me) {
            JoinOutcome::NotFound => Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no room '{code}'"),
            )),
            JoinOutcome::Closed => Err(closed()),
            JoinOutcome::Waiting(room) => Ok(Joined::Waiting(room)),
            JoinOutcome::Started(game_id) => Ok(Joined::Started(game_id)),
            JoinOutcome::Start(room, game_id) => {
                let joiner = PlayerId::from(me.id.as_str());
                self.start(code, room, game_id, &joiner).await
            }
        }
    }

    /// The room `code` (normalised) as it is now, wherever it was made; `None` when there
    /// is no such room.
    pub async fn room(&self, code: &RoomCode) -> Result<Option<Room>, ApiError> {
        self.load(code).await?;
        Ok(self.rooms.get(code))
    }

    /// Brings the room `code` into memory from the store when it is not there: after a
    /// restart only waiting rooms are in memory (a started one is in the store), and in a
    /// cluster the store is the truth (the room may live on another node).
    async fn load(&self, code: &RoomCode) -> Result<(), ApiError> {
        let shared = self.topology.room_may_change_elsewhere(code);
        if !shared && self.rooms.get(code).is_some() {
            return Ok(());
        }
        let stored = timed_store_call(&self.metrics, self.recovery.stored_room(code)).await?;
        let Some(room) = stored else {
            return Ok(());
        };
        let local_waits = self
            .rooms
            .get(code)
            .is_some_and(|r| r.status == RoomStatus::Waiting);
        if shared && !(local_waits && room.status == RoomStatus::Waiting) {
            self.rooms.replace(room);
        } else {
            self.rooms.restore(room);
        }
        Ok(())
    }

    /// The joiner filled the room: claim it, create its game, or give the seat back.
    async fn start(
        &self,
        code: &RoomCode,
        room: Room,
        game_id: GameId,
        joiner: &PlayerId,
    ) -> Result<Joined, ApiError> {
        let players = match (&room.seats[0], &room.seats[1]) {
            (Some(a), Some(b)) => [a.clone(), b.clone()],
            _ => {
                self.rooms.revert_start(code, joiner);
                return Err(ApiError::new(ErrorCode::Conflict, "the room is not full"));
            }
        };
        // Checked again as the game is made: the room may have been stored under other
        // rules or bounds.
        let setup = match room.setup.recheck() {
            Ok(setup) => setup,
            Err(e) => {
                self.rooms.revert_start(code, joiner);
                return Err(e);
            }
        };
        // The seat is taken in the store first: only one joiner, on whichever node, starts
        // the room's game.
        match timed_store_call(&self.metrics, self.store.claim_room(&room.record())).await {
            Ok(true) => {}
            Ok(false) => {
                self.rooms.revert_start(code, joiner);
                return self.started_elsewhere(code).await;
            }
            Err(e) => {
                self.rooms.revert_start(code, joiner);
                return Err(e);
            }
        }
        let new = NewGame {
            id: game_id,
            setup,
            rated: room.rated,
            visibility: room.visibility,
            code: Some(room.code.clone()),
            players,
            rematch_of: None,
            arena: None,
        };
        let game = match self.starter.create_game(new).await {
            Ok(h) => h,
            Err(e) => {
                self.rooms.revert_start(code, joiner);
                if let Some(waiting) = self.rooms.get(code) {
                    let _ = self.store.save_room(&waiting.record()).await;
                }
                return Err(e);
            }
        };
        self.queues
            .record_sides([game.players[0].as_str(), game.players[1].as_str()]);
        let _ = timed_store_call(&self.metrics, self.store.save_room(&room.record())).await;
        Ok(Joined::Start { room, game })
    }

    /// Another joiner claimed the room first: its game, if it started.
    async fn started_elsewhere(&self, code: &RoomCode) -> Result<Joined, ApiError> {
        let stored = timed_store_call(&self.metrics, self.recovery.stored_room(code)).await?;
        match stored.map(|r| r.status) {
            Some(RoomStatus::Started(game_id)) => {
                self.rooms.started(code, &game_id);
                Ok(Joined::Started(game_id))
            }
            _ => Err(closed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::watch;

    use crate::config::Config;
    use crate::metrics::Metrics;
    use crate::services::hub::Hub;
    use crate::store::slowed::Slowed;

    /// The store-latency histogram's sum of seconds.
    fn store_seconds(metrics: &Metrics) -> f64 {
        metrics
            .render()
            .lines()
            .find_map(|l| l.strip_prefix("stoa_store_latency_seconds_sum "))
            .and_then(|v| v.trim().parse().ok())
            .expect("the store latency is rendered")
    }

    #[tokio::test]
    async fn a_rooms_store_read_is_timed_for_as_long_as_the_store_takes() {
        let delay = Duration::from_millis(40);
        let (_tx, rx) = watch::channel(false);
        let hub = Hub::new(
            Config::default(),
            std::sync::Arc::new(Slowed::new(delay)),
            rx,
        );
        let before = store_seconds(&hub.metrics);
        // No such room here: it is looked for in the store, which takes `delay`.
        assert!(hub
            .hosting
            .room(&crate::ids::RoomCode::from("ABCD"))
            .await
            .unwrap()
            .is_none());
        let timed = store_seconds(&hub.metrics) - before;
        assert!(
            timed >= delay.as_secs_f64(),
            "the store took {delay:?}, the metric recorded {timed} s"
        );
    }
}
