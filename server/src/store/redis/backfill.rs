//! Building the leaderboard indexes (`P:leaderboard:<kind>`) once for ratings saved before
//! the store kept them, so an upgraded deployment's established players are on the boards
//! from its first start rather than from each one's next rated game.
//!
//! Why not a script: a script never spans two records (a Redis Cluster keeps a player's keys
//! and a board in different slots). The board entry is written from the player's rating
//! and the rating read again after: a rated game saved in between (its own `MULTI` writes
//! the board too) is seen on that second read and its rating written, so the board ends
//! with the player's current rating either way.

use redis::AsyncCommands;

use super::encoding::decode;
use super::RedisStore;
use crate::domain::rating::Rating;
use crate::ids::PlayerId;
use crate::store::StoreResult;

impl RedisStore {
    /// Fills every kind's board from `P:ratings:<kind>` (every rated player) unless done
    /// before under this prefix (`P:leaderboards:built`, set once it is done: an
    /// interrupted backfill runs again at the next start; running it twice is harmless).
    pub(super) async fn backfill_leaderboards(&self) -> StoreResult<()> {
        let done = self.key(&["leaderboards", "built"]);
        let mut conn = self.conn();
        let built: bool = self.run(conn.exists(&done)).await?;
        if built {
            return Ok(());
        }
        let mut entered = 0;
        for kind in stoa_protocol::KINDS {
            let players: Vec<PlayerId> = self
                .run(conn.zrange(self.key(&["ratings", kind.id]), 0, -1))
                .await?;
            for player in players {
                entered += usize::from(self.enter_on_board(kind.id, &player).await?);
            }
        }
        self.run(conn.set::<_, _, ()>(&done, "1")).await?;
        if entered > 0 {
            tracing::info!(entered, "leaderboards built from the stored ratings");
        }
        Ok(())
    }

    /// Puts `player` on `kind`'s board if their rating there is established (takes them
    /// off otherwise), until the rating read after the write is the one written. Whether
    /// the player ends on the board.
    async fn enter_on_board(&self, kind: &str, player: &PlayerId) -> StoreResult<bool> {
        let mut conn = self.conn();
        let key = self.player_key(player, Some("ratings"));
        let board = self.key(&["leaderboard", kind]);
        let mut text: Option<String> = self.run(conn.hget(&key, kind)).await?;
        loop {
            // A rating that does not decode is nobody's on the board (the player's next
            // rated game writes a good one).
            let rating = text.as_deref().and_then(|t| decode::<Rating>(t).ok());
            let listed = rating.filter(|r| !r.provisional());
            match listed {
                Some(r) => {
                    self.run(conn.zadd::<_, _, _, ()>(&board, player, r.rating))
                        .await?
                }
                None => self.run(conn.zrem::<_, _, ()>(&board, player)).await?,
            }
            let now: Option<String> = self.run(conn.hget(&key, kind)).await?;
            if now == text {
                return Ok(listed.is_some());
            }
            text = now;
        }
    }
}
