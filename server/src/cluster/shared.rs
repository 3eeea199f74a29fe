//! State the nodes share through Redis: the matchmaker's election and its queues, players
//! reached on any node, rating locks, the per-IP quota, membership and the lobby's parts.

use super::*;
use crate::ids::{PlayerId, RoomCode};

impl Cluster {
    /// Keeps one matchmaker node: this node renews the `P:matchmaker` lease while it holds
    /// it, or takes it when it lapsed. Whenever the matchmaker changes, every node sends its
    /// waiting players to the new one (queues live in the matchmaker's memory).
    pub(super) async fn elect(&self) {
        let key = self.store.key(&["matchmaker"]);
        let mut conn = self.store.connection();
        let mut inv = self.renew.prepare_invoke();
        inv.key(&key).arg(&self.node).arg(self.lease_ms);
        let Ok(lost) = self
            .store
            .call(inv.invoke_async::<Vec<usize>>(&mut conn))
            .await
        else {
            // Redis cannot tell now: nothing changes until it can.
            return;
        };
        let holds = lost.is_empty();
        let holds = holds
            || matches!(
                self.take_key(&key, &self.node, self.lease_ms).await,
                Ok(true)
            );
        let was = self.matchmaker.swap(holds, Ordering::Relaxed);
        let leader = if holds {
            Some(self.node.clone())
        } else {
            self.store
                .call(conn.get::<_, Option<String>>(&key))
                .await
                .ok()
                .flatten()
        };
        let changed = {
            let mut last = lock(&self.leader);
            let changed = *last != leader;
            *last = leader.clone();
            changed
        };
        if was && !holds {
            tracing::warn!("no longer the matchmaker node: queues move on");
            self.registries.queues.clear();
        }
        if holds && !was {
            tracing::info!("this node runs the matchmaking now");
        }
        if changed && leader.is_some() {
            // The new matchmaker hears of this node's waiting players.
            let queued: Vec<(QueueKey, SeatPlayer, f64)> =
                lock(&self.queued_here).values().cloned().collect();
            for (key, seat, rating) in queued {
                let _ = self.route_join(key, seat, rating, false).await;
            }
        }
    }

    /// Queues a player with the matchmaker node (this one or another); the player's place
    /// (when `wait`: else 0 once sent).
    pub(super) async fn route_join(
        &self,
        key: QueueKey,
        seat: SeatPlayer,
        rating: f64,
        wait: bool,
    ) -> Result<u64, crate::error::ApiError> {
        lock(&self.queued_here).insert(
            PlayerId::from(seat.id.as_str()),
            (key.clone(), seat.clone(), rating),
        );
        if self.is_matchmaker() {
            let mm = &self.registries.queues;
            return Ok(mm.join(key, seat, rating, mm.now_ms()).position as u64);
        }
        let unavailable = || {
            crate::error::ApiError::new(
                stoa_protocol::wire::ErrorCode::Unavailable,
                "matchmaking is moving between servers: try again in a moment",
            )
        };
        let leader = lock(&self.leader).clone();
        let Some(leader) = leader else {
            return Err(unavailable());
        };
        let req = self.next_req.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        if wait {
            lock(&self.pending).insert(req, tx);
        }
        let msg = BusMessage::QueueJoin {
            from: self.node.clone(),
            req,
            key,
            seat,
            rating,
        };
        if self.publish_on(&self.node_channel(&leader), &msg).await == 0 {
            lock(&self.pending).remove(&req);
            return Err(unavailable());
        }
        if !wait {
            return Ok(0);
        }
        match tokio::time::timeout(Duration::from_secs(3), rx).await {
            Ok(Ok(position)) => Ok(position),
            _ => {
                lock(&self.pending).remove(&req);
                Err(unavailable())
            }
        }
    }

    /// Takes a player out of its queue, wherever the matchmaking runs.
    pub(super) async fn route_leave(&self, player: &PlayerId) {
        lock(&self.queued_here).remove(player);
        if self.is_matchmaker() {
            self.registries.queues.leave(player);
            return;
        }
        let leader = lock(&self.leader).clone();
        if let Some(leader) = leader {
            let msg = BusMessage::QueueLeave {
                player: player.clone(),
            };
            self.publish_on(&self.node_channel(&leader), &msg).await;
        }
    }

    /// Sends a frame to a player connected to another node.
    pub(super) async fn to_player(&self, player: &PlayerId, frame: String) {
        let msg = BusMessage::ToPlayer {
            player: player.clone(),
            frame,
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    /// Tells every node (this one too: ending twice is harmless) to end the connections of
    /// a revoked device.
    pub(super) async fn device_revoked(&self, player: &PlayerId, device: &str) {
        let msg = BusMessage::DeviceRevoked {
            player: player.clone(),
            device: device.to_string(),
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    /// Relays a waiting room's chat line said here to the other nodes.
    pub(super) async fn room_line(
        &self,
        code: &RoomCode,
        line: &stoa_protocol::wire::RoomChatLine,
    ) {
        let msg = BusMessage::RoomLine {
            code: code.clone(),
            line: line.clone(),
            origin: self.node.clone(),
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    /// Locks two players' ratings across the cluster (keys taken in order, so two updates
    /// never wait on each other in a cycle); the lock lapses by itself if this node dies.
    pub(super) async fn lock_players(
        &self,
        players: [&str; 2],
    ) -> Result<PlayersLock, crate::error::ApiError> {
        let mut ids = players.map(str::to_string).to_vec();
        ids.sort();
        ids.dedup();
        let token = format!(
            "{}:{}",
            self.node,
            self.next_req.fetch_add(1, Ordering::Relaxed)
        );
        let mut keys = Vec::new();
        for id in &ids {
            let key = self.store.key(&["ratinglock", id]);
            let deadline =
                tokio::time::Instant::now() + crate::services::topology::PLAYER_LOCK_WAIT;
            loop {
                let taken = self
                    .take_key(&key, &token, 5_000)
                    .await
                    .map_err(crate::error::ApiError::store)?;
                if taken {
                    keys.push(key);
                    break;
                }
                if tokio::time::Instant::now() >= deadline {
                    self.unlock_players(PlayersLock {
                        keys,
                        token: token.clone(),
                    })
                    .await;
                    return Err(crate::services::topology::ratings_busy());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        Ok(PlayersLock { keys, token })
    }

    /// Releases a [`Cluster::lock_players`] lock.
    pub(super) async fn unlock_players(&self, lock: PlayersLock) {
        let mut conn = self.store.connection();
        for key in lock.keys {
            let mut inv = self.release.prepare_invoke();
            inv.key(key).arg(&lock.token);
            let _: Result<i64, _> = self.store.call(inv.invoke_async(&mut conn)).await;
        }
    }

    /// Counts a new connection from `ip` in the cluster-wide window (fixed windows of
    /// `window_ms`); `false` past `limit`. When Redis cannot tell, the node's own limit alone
    /// applies.
    pub(super) async fn allow_ip(&self, ip: std::net::IpAddr, limit: u32, window_ms: u64) -> bool {
        self.count_in_window("ipwin", &ip.to_string(), limit, window_ms)
            .await
    }

    /// Counts an attempt under `key` in the deployment's window (the key is hashed: it may
    /// hold an account name in any script). When Redis cannot tell, the attempt is let
    /// through: the sign-in it guards cannot read the account either.
    pub(super) async fn allow_attempt(&self, key: &str, limit: u32, window_ms: u64) -> bool {
        let hashed = crate::ids::token_hash(key);
        self.count_in_window("attempts", &hashed, limit, window_ms)
            .await
    }

    /// One more under `P:<kind>:<what>:<window>` (fixed windows of `window_ms`, each key
    /// expiring after two of them); `false` past `limit`, `true` when Redis cannot tell.
    async fn count_in_window(&self, kind: &str, what: &str, limit: u32, window_ms: u64) -> bool {
        let window_ms = window_ms.max(1);
        let slot = crate::ids::now_ms() / window_ms;
        let key = self.store.key(&[kind, what, &slot.to_string()]);
        let mut conn = self.store.connection();
        let mut pipe = redis::pipe();
        pipe.incr(&key, 1u32)
            .pexpire(&key, (2 * window_ms) as i64)
            .ignore();
        match self.store.call(pipe.query_async::<(u64,)>(&mut conn)).await {
            Ok((n,)) => n <= u64::from(limit),
            Err(_) => true,
        }
    }

    /// The nodes that sent a heartbeat recently, by id.
    pub(super) async fn nodes(&self) -> Vec<String> {
        let mut conn = self.store.connection();
        let key = self.store.key(&["nodes"]);
        let since = crate::ids::now_ms().saturating_sub(3 * self.lease_ms);
        self.store
            .call(conn.zrangebyscore(&key, since, "+inf"))
            .await
            .unwrap_or_default()
    }

    /// Shares this node's part of the lobby (its rooms, games, queues, players online) for
    /// the other nodes' lobbies; it lapses with the node.
    pub(super) async fn put_lobby_part(&self, part: &serde_json::Value) {
        let mut conn = self.store.connection();
        let key = self.store.key(&["lobby", &self.node]);
        let _: Result<(), _> = self
            .store
            .call(conn.pset_ex(&key, part.to_string(), 3 * self.lease_ms))
            .await;
    }

    /// The other live nodes' parts of the lobby.
    pub(super) async fn lobby_parts(&self) -> Vec<serde_json::Value> {
        let others: Vec<String> = self
            .nodes()
            .await
            .into_iter()
            .filter(|n| *n != self.node)
            .collect();
        if others.is_empty() {
            return Vec::new();
        }
        let keys: Vec<String> = others
            .iter()
            .map(|n| self.store.key(&["lobby", n]))
            .collect();
        let mut conn = self.store.connection();
        let mut texts: Vec<Option<String>> = Vec::with_capacity(keys.len());
        for key in &keys {
            // One GET each: the keys may live in different slots of a Redis Cluster.
            texts.push(self.store.call(conn.get(key)).await.unwrap_or(None));
        }
        texts
            .into_iter()
            .flatten()
            .filter_map(|t| serde_json::from_str(&t).ok())
            .collect()
    }
}
