//! Ratings in the running server: reading each player's Glicko-2 rating per game kind from
//! the store, showing it (`welcome`, seats in rooms and game documents, the lobby), and
//! updating both players when a rated game ends with a result.
//!
//! [`crate::domain::rating`] is the pure maths; this module is where it meets the store.
//!
//! Why locks around updates: an update is read–compute–write over two players, and one
//! player may finish two rated games of the same kind at nearly the same moment (two
//! boards at once). Without serialising, both updates would start from the same old
//! rating and one would be lost. Updates lock the players, not the server: each player id
//! hashes to one of [`STRIPES`] locks and an update holds its two players' stripes (taken
//! in index order, so two updates never wait on each other in a cycle). Games between
//! other players end in parallel. The store writes both players in one atomic call
//! ([`crate::store::Store::save_ratings`]). The deployment's player locks
//! ([`crate::services::topology::PlayerLocks`]: a short lock per player in Redis in a cluster) are
//! taken around the same read–compute–write too, since the two games may end on two nodes.
//!
//! Wire forms (documented in protocol/docs/PROTOCOL.md):
//! - `welcome.player.ratings`: every game kind, played or not,
//!   `{"staku":{"rating":1500,"deviation":350,"provisional":true,"games":0},…}` with rating
//!   and deviation rounded to integers;
//! - seats (`players.<side>.rating` in documents, room hosts and seats, the lobby): the
//!   rounded rating as a number. A seat's rating is the one the player had when the game
//!   was created; the new rating shows in the next `welcome` and the next game.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use stoa_protocol::wire::SeatPlayer;
use stoa_protocol::{Side, KINDS};
use tokio::sync::Mutex;

use crate::domain::rating::{Glicko2, Outcome, Rating};
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::ids::PlayerId;
use crate::metrics::Metrics;
use crate::services::topology::PlayerLocks;
use crate::store::Store;

/// How many locks the players' ids are spread over.
pub const STRIPES: usize = 64;

/// The ratings service: the players' update locks, the Glicko-2 parameters, and the store
/// the ratings live in.
pub struct Ratings {
    stripes: Vec<Mutex<()>>,
    system: Glicko2,
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    locks: Arc<dyn PlayerLocks>,
}

impl std::fmt::Debug for Ratings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ratings").finish_non_exhaustive()
    }
}

fn stripe(player_id: &str) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    player_id.hash(&mut h);
    (h.finish() % STRIPES as u64) as usize
}

/// A rating as `welcome` shows it: `{"rating","deviation","provisional","games"}`.
pub fn wire(r: &Rating) -> Value {
    json!({
        "rating": r.display(),
        "deviation": r.deviation.round() as i64,
        "provisional": r.provisional(),
        "games": r.games,
    })
}

/// A rating as a seat shows it: the rounded rating, a number.
pub fn seat_value(r: &Rating) -> Value {
    json!(r.display())
}

impl Ratings {
    /// Ratings kept in `store`, updates serialised by `locks` across the deployment.
    pub fn new(store: Arc<dyn Store>, metrics: Arc<Metrics>, locks: Arc<dyn PlayerLocks>) -> Self {
        Ratings {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            system: Glicko2::default(),
            store,
            metrics,
            locks,
        }
    }

    /// `welcome.player.ratings`: every kind, the default rating where the player has none.
    pub async fn welcome_map(&self, player_id: &PlayerId) -> Result<Map<String, Value>, ApiError> {
        let stored = timed_store_call(&self.metrics, self.store.ratings(player_id)).await?;
        Ok(KINDS
            .iter()
            .map(|k| {
                let r = stored.get(k.id).copied().unwrap_or_default();
                (k.id.to_string(), wire(&r))
            })
            .collect())
    }

    /// A player's rating in one kind (the default when never rated in it).
    pub async fn of(&self, player_id: &PlayerId, kind: &str) -> Result<Rating, ApiError> {
        let stored = timed_store_call(&self.metrics, self.store.ratings(player_id)).await?;
        Ok(stored.get(kind).copied().unwrap_or_default())
    }

    /// Sets a seat's `rating` to the player's current rating in `kind`.
    pub async fn fill_seat(&self, seat: &mut SeatPlayer, kind: &str) -> Result<(), ApiError> {
        let r = self.of(&PlayerId::from(seat.id.as_str()), kind).await?;
        seat.rating = Some(seat_value(&r));
        Ok(())
    }

    /// Updates both players of a rated game that ended with a result: `players` are the
    /// player ids by side index at the end (after any swap), `winner` the winning side
    /// (`None`: a draw). Returns the new ratings by side index. Aborted games must not be
    /// passed here: an abort is not a result.
    pub async fn record_result(
        &self,
        kind: &str,
        players: [&str; 2],
        winner: Option<Side>,
    ) -> Result<[Rating; 2], ApiError> {
        let (x, y) = (stripe(players[0]), stripe(players[1]));
        let _first = self.stripes[x.min(y)].lock().await;
        let _second = if x == y {
            None
        } else {
            Some(self.stripes[x.max(y)].lock().await)
        };
        let lock = self.locks.lock_players(players).await?;
        let updated = self.update(kind, players, winner).await;
        self.locks.unlock_players(lock).await;
        updated
    }

    async fn update(
        &self,
        kind: &str,
        players: [&str; 2],
        winner: Option<Side>,
    ) -> Result<[Rating; 2], ApiError> {
        let a = self.of(&PlayerId::from(players[0]), kind).await?;
        let b = self.of(&PlayerId::from(players[1]), kind).await?;
        let outcome = match winner {
            None => Outcome::Draw,
            Some(Side::First) => Outcome::Win,
            Some(Side::Second) => Outcome::Loss,
        };
        let (new_a, new_b) = self.system.game(&a, &b, outcome);
        timed_store_call(
            &self.metrics,
            self.store.save_ratings(
                kind,
                &[
                    (players[0].to_string(), new_a),
                    (players[1].to_string(), new_b),
                ],
            ),
        )
        .await?;
        tracing::info!(
            kind,
            first = players[0],
            second = players[1],
            before = ?(a.display(), b.display()),
            after = ?(new_a.display(), new_b.display()),
            "ratings updated"
        );
        Ok([new_a, new_b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::queues::Matchmaker;
    use crate::services::topology::SingleNode;
    use crate::store::memory::MemoryStore;

    fn ratings() -> Ratings {
        let queues = Arc::new(Matchmaker::new(Default::default()));
        Ratings::new(
            Arc::new(MemoryStore::new()),
            Arc::new(Metrics::default()),
            Arc::new(SingleNode::new(queues)),
        )
    }

    #[tokio::test]
    async fn welcome_shows_every_kind_with_defaults() {
        let ratings = ratings();
        let m = ratings.welcome_map(&"nobody".into()).await.unwrap();
        assert_eq!(m.len(), KINDS.len());
        assert_eq!(
            m["staku"],
            json!({"rating":1500,"deviation":350,"provisional":true,"games":0})
        );
    }

    #[tokio::test]
    async fn a_result_updates_both_players_in_its_kind_only() {
        let ratings = ratings();
        let [a, b] = ratings
            .record_result("akron", ["p1", "p2"], Some(Side::Second))
            .await
            .unwrap();
        // Two newcomers: the paper's maths gives ±162.3 with deviation 290.3.
        assert!((a.rating - 1337.7).abs() < 0.1, "{a:?}");
        assert!((b.rating - 1662.3).abs() < 0.1, "{b:?}");
        assert_eq!((a.games, b.games), (1, 1));
        let m = ratings.welcome_map(&"p2".into()).await.unwrap();
        assert_eq!(
            m["akron"],
            json!({"rating":1662,"deviation":290,"provisional":true,"games":1})
        );
        assert_eq!(m["staku"]["games"], 0);
        let mut seat = SeatPlayer {
            id: "p1".into(),
            name: "p1".into(),
            rating: None,
            bot: false,
        };
        ratings.fill_seat(&mut seat, "akron").await.unwrap();
        assert_eq!(seat.rating, Some(json!(1338)));
        // A draw between them now pulls them together, from the stored ratings.
        let [a2, b2] = ratings
            .record_result("akron", ["p1", "p2"], None)
            .await
            .unwrap();
        assert!(a2.rating > a.rating && b2.rating < b.rating);
        assert_eq!((a2.games, b2.games), (2, 2));
    }
}
