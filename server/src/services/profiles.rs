//! What people look up about players: a player's page (`GET /api/players/<id>`: name,
//! rating in every game kind, recent finished games) and each kind's leaderboard
//! (`GET /api/leaderboard/<kind>`).
//!
//! Why the leaderboard comes from a store index rather than from scanning ratings: the
//! index ([`Store::leaderboard`]) is kept by the very call that saves a game's new ratings,
//! so reading the top 100 costs one range read however many players there are, and it
//! never disagrees with the ratings players see in `welcome`.

use std::sync::Arc;

use serde_json::{json, Value};
use stoa_protocol::wire::ErrorCode;

use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::ids::PlayerId;
use crate::metrics::Metrics;
use crate::services::ratings::Ratings;
use crate::services::records::Records;
use crate::store::Store;

/// How many players a leaderboard lists.
pub const LEADERBOARD_SIZE: usize = 100;

/// How many finished games a player's page lists.
pub const RECENT_GAMES: u64 = 10;

/// A kind's leaderboard, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaderboard {
    /// The game kind.
    pub kind: &'static str,
    /// `{"rank","id","name","rating","deviation","games"}` each.
    pub players: Vec<Value>,
}

impl Leaderboard {
    /// The body of `GET /api/leaderboard/<kind>`: `{"kind","players"}`.
    pub fn to_json(&self) -> Value {
        json!({"kind": self.kind, "players": self.players})
    }
}

/// Players' pages and the leaderboards, read from the store.
pub struct Profiles {
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    ratings: Arc<Ratings>,
    records: Records,
}

impl std::fmt::Debug for Profiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiles").finish_non_exhaustive()
    }
}

impl Profiles {
    /// Pages over `store`, the ratings as `ratings` shows them.
    pub fn new(store: Arc<dyn Store>, metrics: Arc<Metrics>, ratings: Arc<Ratings>) -> Self {
        Profiles {
            records: Records::new(store.clone(), metrics.clone()),
            store,
            metrics,
            ratings,
        }
    }

    /// Whether a player with this id exists (the web page answers 404 otherwise).
    pub async fn exists(&self, player_id: &PlayerId) -> Result<bool, ApiError> {
        let found = timed_store_call(&self.metrics, self.store.player(player_id)).await?;
        Ok(found.is_some())
    }

    /// A player's page as `viewer` may see it: `{"id","name","bot","claimed","ratings":{<kind>:
    /// {"rating","deviation","provisional","games"}},"recent":[<history summaries>]}`, the
    /// recent games newest first (the player's own private games only to the player);
    /// `not_found` for an unknown id.
    pub async fn player(
        &self,
        player_id: &PlayerId,
        viewer: Option<&str>,
    ) -> Result<Value, ApiError> {
        let Some(player) = timed_store_call(&self.metrics, self.store.player(player_id)).await?
        else {
            return Err(no_player(player_id));
        };
        let ratings = self.ratings.welcome_map(player_id).await?;
        let (recent, _) = self
            .records
            .history(player_id, viewer, None, Some(RECENT_GAMES))
            .await?;
        Ok(json!({
            "id": player.id,
            "name": player.name,
            "bot": player.bot,
            "claimed": player.account.is_some(),
            "ratings": ratings,
            "recent": recent,
        }))
    }

    /// The leaderboard of `kind`: at most [`LEADERBOARD_SIZE`] players whose rating is
    /// established, highest first; `not_found` for a kind that does not exist.
    pub async fn leaderboard(&self, kind: &str) -> Result<Leaderboard, ApiError> {
        let k = stoa_protocol::kind(kind).map_err(|_| {
            ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "no game kind '{kind}' (the kinds are {})",
                    stoa_protocol::KINDS
                        .iter()
                        .map(|k| k.id)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        let rows = timed_store_call(
            &self.metrics,
            self.store.leaderboard(k.id, LEADERBOARD_SIZE),
        )
        .await?;
        // The names as the players have them now (a rename shows at once), read at once.
        let ids: Vec<PlayerId> = rows
            .iter()
            .map(|(id, _)| PlayerId::from(id.as_str()))
            .collect();
        let names = futures_util::future::try_join_all(
            ids.iter()
                .map(|id| timed_store_call(&self.metrics, self.store.player(id))),
        )
        .await?;
        let players: Vec<Value> = rows
            .iter()
            .zip(names)
            .enumerate()
            .map(|(i, ((id, r), p))| {
                json!({
                    "rank": i + 1,
                    "id": id,
                    // A player record is never deleted; the id stands in should one be.
                    "name": p.map_or_else(|| id.clone(), |p| p.name),
                    "rating": r.display(),
                    "deviation": r.deviation.round() as i64,
                    "games": r.games,
                })
            })
            .collect();
        Ok(Leaderboard {
            kind: k.id,
            players,
        })
    }
}

fn no_player(id: &PlayerId) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no player '{id}'"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rating::Rating;
    use crate::game::queues::Matchmaker;
    use crate::services::topology::SingleNode;
    use crate::store::memory::MemoryStore;
    use crate::store::PlayerRecord;

    async fn profiles() -> (Arc<dyn Store>, Profiles) {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let metrics = Arc::new(Metrics::default());
        let queues = Arc::new(Matchmaker::new(Default::default()));
        let ratings = Arc::new(Ratings::new(
            store.clone(),
            metrics.clone(),
            Arc::new(SingleNode::new(queues)),
        ));
        for (id, name) in [("pa", "ann"), ("pb", "bob"), ("pc", "cy")] {
            store
                .create_player(&PlayerRecord {
                    id: id.into(),
                    name: name.into(),
                    token_hash: format!("hash-{id}"),
                    created_ms: 1,
                    bot: false,
                    account: None,
                })
                .await
                .unwrap();
        }
        (store.clone(), Profiles::new(store, metrics, ratings))
    }

    #[tokio::test]
    async fn the_leaderboard_lists_established_players_by_rating_with_names() {
        let (store, profiles) = profiles().await;
        let r = |rating: f64, deviation: f64, games: u32| Rating {
            rating,
            deviation,
            volatility: 0.06,
            games,
        };
        store
            .save_ratings(
                "akron",
                &[
                    ("pa".into(), r(1612.4, 80.2, 20)),
                    ("pb".into(), r(1700.0, 200.0, 3)),
                ],
            )
            .await
            .unwrap();
        store
            .save_ratings("akron", &[("pc".into(), r(1650.6, 99.0, 15))])
            .await
            .unwrap();
        let board = profiles.leaderboard("akron").await.unwrap();
        assert_eq!(
            board.to_json(),
            json!({"kind": "akron", "players": [
                {"rank": 1, "id": "pc", "name": "cy", "rating": 1651, "deviation": 99, "games": 15},
                {"rank": 2, "id": "pa", "name": "ann", "rating": 1612, "deviation": 80, "games": 20},
            ]})
        );
        assert_eq!(
            profiles.leaderboard("staku").await.unwrap().to_json(),
            json!({"kind": "staku", "players": []})
        );
        let e = profiles.leaderboard("chess").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(
            e.message,
            "no game kind 'chess' (the kinds are unane, staku, akron, akunur)"
        );
    }

    #[tokio::test]
    async fn a_players_page_has_every_kind_and_an_unknown_player_is_not_found() {
        let (_, profiles) = profiles().await;
        let page = profiles.player(&"pa".into(), None).await.unwrap();
        assert_eq!(page["name"], "ann");
        assert_eq!(page["bot"], false);
        assert_eq!(
            page["ratings"]["unane"],
            json!({"rating":1500,"deviation":350,"provisional":true,"games":0})
        );
        assert_eq!(page["recent"], json!([]));
        let e = profiles.player(&"nobody".into(), None).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message, "no player 'nobody'");
        assert!(!profiles.exists(&"nobody".into()).await.unwrap());
        assert!(profiles.exists(&"pb".into()).await.unwrap());
    }
}
