//! Ratings and the leaderboards built from them.
//!
//! Keys: `P:player:{id}:ratings` (hash: kind → the player's JSON `Rating`),
//! `P:ratings:<kind>` (sorted set: every rated player by rating) and
//! `P:leaderboard:<kind>` (sorted set: the players whose rating is established). A game's
//! ratings are written in one transaction on a single server, so the leaderboard never
//! shows a rating the player no longer has.

use std::collections::HashMap;

use redis::AsyncCommands;

use super::encoding::{decode, encode};
use super::keys::key_safe;
use super::RedisStore;
use crate::domain::rating::Rating;
use crate::ids::PlayerId;
use crate::store::{RatingsByKind, StoreError, StoreResult};

impl RedisStore {
    pub(super) async fn rating_records(&self, player_id: &PlayerId) -> StoreResult<RatingsByKind> {
        if !key_safe(player_id) {
            return Ok(RatingsByKind::new());
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self
            .run(conn.hgetall(self.player_key(player_id, Some("ratings"))))
            .await?;
        fields
            .into_iter()
            .map(|(kind, r)| Ok((kind, decode::<Rating>(&r)?)))
            .collect()
    }

    pub(super) async fn save_rating_records(
        &self,
        kind: &str,
        ratings: &[(String, Rating)],
    ) -> StoreResult<()> {
        if !key_safe(kind) || ratings.iter().any(|(p, _)| !key_safe(p)) {
            return Err(StoreError::Conflict("malformed kind or player id".into()));
        }
        // One MULTI on a single server: every rating of the game is written, or none. (A
        // Redis Cluster keeps each player in its own slot: written one after the other.)
        let mut pipe = redis::pipe();
        for (player, rating) in ratings {
            pipe.hset(
                self.player_key(&PlayerId::from(player.as_str()), Some("ratings")),
                kind,
                encode(rating)?,
            )
            .ignore()
            .zadd(self.key(&["ratings", kind]), player, rating.rating)
            .ignore();
            // The leaderboard holds established ratings only: in the same transaction, so
            // it never shows a rating the player no longer has.
            let board = self.key(&["leaderboard", kind]);
            if rating.provisional() {
                pipe.zrem(board, player).ignore();
            } else {
                pipe.zadd(board, player, rating.rating).ignore();
            }
        }
        self.run_writes(pipe).await
    }

    pub(super) async fn leaderboard_rows(
        &self,
        kind: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Rating)>> {
        if !key_safe(kind) || limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let last = isize::try_from(limit - 1).unwrap_or(isize::MAX);
        let ids: Vec<String> = self
            .run(conn.zrevrange(self.key(&["leaderboard", kind]), 0, last))
            .await?;
        // Each row's full rating from the player's own hash (the index holds the number
        // only), asked all at once over the multiplexed connection.
        let reads = ids.iter().map(|id| {
            let mut conn = self.conn();
            let key = self.player_key(&PlayerId::from(id.as_str()), Some("ratings"));
            async move { self.run(conn.hget::<_, _, Option<String>>(key, kind)).await }
        });
        let texts = futures_util::future::try_join_all(reads).await?;
        let mut rows = Vec::with_capacity(ids.len());
        for (id, text) in ids.into_iter().zip(texts) {
            if let Some(text) = text {
                rows.push((id, decode::<Rating>(&text)?));
            }
        }
        Ok(rows)
    }
}
