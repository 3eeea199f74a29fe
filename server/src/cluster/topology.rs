//! The cluster as the seam between nodes ([`crate::services::topology`]): each trait answered over
//! Redis by the parts of this module that own the mechanism (leases, bus, shared state).

use std::net::IpAddr;

use async_trait::async_trait;
use serde_json::Value;
use stoa_protocol::wire::{RoomChatLine, SeatPlayer};

use super::{lock, Cluster};
use crate::domain::pairing::QueueKey;
use crate::error::ApiError;
use crate::game::capabilities::Peers;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
use crate::services::topology::{
    ArenaSharing, Delivery, GameChannels, Leases, Listings, Members, Membership, PlayerLocks,
    PlayersLock, QueueRouting, Quotas, RoomSharing, ServedBot, StartedGame,
};
use crate::store::StoreError;

#[async_trait]
impl Leases for Cluster {
    async fn acquire(&self, game: &GameId) -> Result<bool, StoreError> {
        Cluster::acquire(self, game).await
    }
}

#[async_trait]
impl GameChannels for Cluster {
    fn may_live_elsewhere(&self, _game: &GameId) -> bool {
        // Any node may hold its lease; the store tells whether it is live at all.
        true
    }

    async fn subscribe_game(&self, game: &GameId) -> Result<(), StoreError> {
        self.follow_channel(game).await
    }

    fn unsubscribe_game(&self, game: &GameId) {
        Peers::unfollow(self, game);
    }
}

impl RoomSharing for Cluster {
    fn room_may_change_elsewhere(&self, _code: &RoomCode) -> bool {
        // Every node seats joiners and starts games in the rooms the store holds.
        true
    }
}

impl ArenaSharing for Cluster {
    fn arenas_made_elsewhere(&self) -> bool {
        // Any node takes `arena.create`.
        true
    }

    fn arena_may_change_elsewhere(&self, _id: &ArenaId) -> bool {
        // Every node holding the arena joins, pauses and scores in it.
        true
    }

    fn may_be_connected_elsewhere(&self, _player: &PlayerId) -> bool {
        // Presence is known per node only.
        true
    }
}

#[async_trait]
impl QueueRouting for Cluster {
    async fn queue_join(
        &self,
        key: QueueKey,
        seat: SeatPlayer,
        rating: f64,
    ) -> Result<u64, ApiError> {
        self.route_join(key, seat, rating, true).await
    }

    async fn queue_leave(&self, player: &PlayerId) {
        self.route_leave(player).await;
    }
}

#[async_trait]
impl Delivery for Cluster {
    async fn to_player(&self, player: &PlayerId, frame: String) {
        Cluster::to_player(self, player, frame).await;
    }

    async fn device_revoked(&self, player: &PlayerId, device: &str) {
        Cluster::device_revoked(self, player, device).await;
    }

    async fn room_line(&self, code: &RoomCode, line: &RoomChatLine) {
        Cluster::room_line(self, code, line).await;
    }

    async fn started(&self, game: StartedGame) {
        self.announce_started(game).await;
    }
}

#[async_trait]
impl Listings for Cluster {
    async fn put_lobby_part(&self, part: &Value) {
        Cluster::put_lobby_part(self, part).await;
    }

    fn lists_with_others(&self) -> bool {
        true
    }

    async fn lobby_parts(&self) -> Vec<Value> {
        Cluster::lobby_parts(self).await
    }

    async fn put_bots(&self, bots: &[ServedBot]) {
        Cluster::put_bots(self, bots).await;
    }

    async fn remote_bots(&self) -> Vec<ServedBot> {
        Cluster::remote_bots(self).await
    }

    async fn claim_bot(&self, player: &PlayerId) -> bool {
        Cluster::claim_bot(self, player).await
    }

    async fn free_bot(&self, player: &PlayerId) {
        Cluster::free_bot(self, player).await;
    }
}

#[async_trait]
impl PlayerLocks for Cluster {
    async fn lock_players(&self, players: [&str; 2]) -> Result<PlayersLock, ApiError> {
        Cluster::lock_players(self, players).await
    }

    async fn unlock_players(&self, players: PlayersLock) {
        Cluster::unlock_players(self, players).await;
    }
}

#[async_trait]
impl Quotas for Cluster {
    async fn allow_ip(&self, ip: IpAddr, limit: u32, window_ms: u64) -> bool {
        Cluster::allow_ip(self, ip, limit, window_ms).await
    }

    async fn allow_attempt(&self, key: &str, limit: u32, window_ms: u64) -> bool {
        Cluster::allow_attempt(self, key, limit, window_ms).await
    }
}

#[async_trait]
impl Membership for Cluster {
    async fn members(&self) -> Option<Members> {
        // The heartbeat set orders nodes by their last beat; operators (and health checks
        // comparing lists) want a stable order.
        let mut nodes = self.nodes().await;
        nodes.sort();
        Some(Members {
            node: self.node.clone(),
            nodes,
            owned: lock(&self.owned).len(),
            matchmaker: self.is_matchmaker(),
        })
    }
}
