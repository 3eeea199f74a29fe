//! Several nodes over one Redis (`--cluster`): one owner per live game under a lease, any
//! node serving any client, and a dead node's games taken over by the others.
//!
//! Why this shape: Redis is the distributed engine, never a home-made consensus. A game's
//! owner holds `P:game:{id}:lease` (a key with a TTL it renews); the log's append script
//! accepts writes only from the lease holder, so a node that lost its lease (paused, cut
//! off) can never write the game again — it notices at its next renewal or write and turns
//! into a follower. Every other node serving the game's players or spectators runs a
//! follower of it (see `crate::game::actor`), fed by the owner's logged events over pub/sub
//! and healed from the log on any gap. Nodes find each other through heartbeats in
//! `P:nodes`; each periodically claims the leases of unfinished games nobody holds, which
//! is how a dead node's games move on.

pub mod bots;
pub mod messages;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::PubSubSink;
use redis::{AsyncCommands, Script};

use self::messages::BusMessage;
use crate::game::capabilities::Peers;
use crate::game::Command;
use crate::hub::Hub;
use crate::pairing::QueueKey;
use crate::store::redis::RedisStore;
use crate::store::StoreError;
use stoa_protocol::wire::SeatPlayer;

/// Renews the leases this node holds; returns the 1-based indexes of those it no longer
/// holds. KEYS: lease keys. ARGV: node id, TTL ms.
const RENEW: &str = r"
local lost = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
";

/// Deletes a lease only if this node holds it. KEYS: lease key. ARGV: node id.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Takes each lease nobody holds; for each: -3 when taken now, else the time left (ms) on
/// the other holder's lease (`PTTL`: -1 for no expiry, -2 if gone meanwhile), so the caller
/// wakes exactly when it lapses. KEYS: lease keys.
/// ARGV: node id, TTL ms.
const CLAIM: &str = r"
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'PX', ARGV[2]) then
    out[i] = -3
  else
    out[i] = redis.call('PTTL', key)
  end
end
return out
";

/// Two players' rating locks held in Redis.
#[derive(Debug)]
pub struct PlayersLock {
    keys: Vec<String>,
    token: String,
}

/// This node's view of the cluster.
pub struct Cluster {
    node: String,
    store: RedisStore,
    client: redis::Client,
    /// Where messages are published.
    bus: redis::aio::ConnectionManager,
    lease_ms: u64,
    /// The subscription's command side, while connected.
    sink: Mutex<Option<PubSubSink>>,
    /// Games whose lease this node holds.
    owned: Mutex<HashSet<String>>,
    /// The nodes seen alive at the last heartbeat.
    live: Mutex<HashSet<String>>,
    /// Games this node follows (their channels are subscribed).
    followed: Mutex<HashSet<String>>,
    /// One attach at a time: two requests for the same game must not start two followers.
    attaching: tokio::sync::Mutex<()>,
    hub: OnceLock<Weak<Hub>>,
    renew: Script,
    release: Script,
    claim: Script,
    /// Whether this node runs the cluster's matchmaking (it holds `P:matchmaker`).
    matchmaker: AtomicBool,
    /// The matchmaker node last seen.
    leader: Mutex<Option<String>>,
    /// This node's players waiting in a queue, as they joined: sent again to a new
    /// matchmaker node when the old one dies.
    queued_here: Mutex<HashMap<String, (QueueKey, SeatPlayer, f64)>>,
    /// Queue joins sent to the matchmaker node, waiting for its answer.
    pending: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<u64>>>,
    next_req: AtomicU64,
    /// Wakes the lease loop early: another node released its leases while draining.
    wake: tokio::sync::Notify,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// A cluster node over `store` (whose Redis also carries the bus).
    pub async fn new(
        node: String,
        store: RedisStore,
        url: &str,
        lease_ms: u64,
    ) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| format!("bad redis url: {e}"))?;
        // Published on the same server the subscriptions use: PUBLISH then counts the
        // receivers a node channel really has.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_factor(50)
            .set_exponent_base(2)
            .set_max_delay(500);
        let bus = redis::aio::ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(|e| format!("cannot reach redis for the bus: {e}"))?;
        Ok(Cluster {
            node,
            store,
            client,
            bus,
            lease_ms: lease_ms.max(300),
            sink: Mutex::new(None),
            owned: Mutex::new(HashSet::new()),
            live: Mutex::new(HashSet::new()),
            followed: Mutex::new(HashSet::new()),
            attaching: tokio::sync::Mutex::new(()),
            hub: OnceLock::new(),
            renew: Script::new(RENEW),
            release: Script::new(RELEASE),
            claim: Script::new(CLAIM),
            matchmaker: AtomicBool::new(false),
            leader: Mutex::new(None),
            queued_here: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_req: AtomicU64::new(1),
            wake: tokio::sync::Notify::new(),
        })
    }

    /// Connects the bus and starts the heartbeat, lease renewal and takeover loops. Returns
    /// once this node's channels are subscribed.
    pub async fn start(self: &Arc<Self>, hub: &Arc<Hub>) -> Result<(), String> {
        let _ = self.hub.set(Arc::downgrade(hub));
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(self.clone().bus_loop(Some(ready_tx)));
        ready_rx
            .await
            .map_err(|_| "the cluster bus did not start".to_string())?;
        self.heartbeat().await;
        self.elect(hub).await;
        tokio::spawn(self.clone().lease_loop());
        tracing::info!(node = %self.node, lease_ms = self.lease_ms, "cluster node up");
        Ok(())
    }

    fn channel(&self, parts: &[&str]) -> String {
        let mut p = vec!["bus"];
        p.extend_from_slice(parts);
        self.store.key(&p)
    }

    fn game_channel(&self, game: &str) -> String {
        self.channel(&["game", game])
    }

    fn node_channel(&self, node: &str) -> String {
        self.channel(&["node", node])
    }

    fn hub(&self) -> Option<Arc<Hub>> {
        self.hub.get()?.upgrade()
    }

    /// Whether this node runs the cluster's matchmaking now.
    pub fn is_matchmaker(&self) -> bool {
        self.matchmaker.load(Ordering::Relaxed)
    }

    /// Keeps one matchmaker node: this node renews the `P:matchmaker` lease while it holds
    /// it, or takes it when it lapsed. Whenever the matchmaker changes, every node sends its
    /// waiting players to the new one (queues live in the matchmaker's memory).
    async fn elect(&self, hub: &Arc<Hub>) {
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
        let holds = holds || {
            let set: Result<Option<String>, _> = self
                .store
                .call(
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(&self.node)
                        .arg("NX")
                        .arg("PX")
                        .arg(self.lease_ms)
                        .query_async(&mut conn),
                )
                .await;
            matches!(set, Ok(Some(_)))
        };
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
            hub.matchmaker.clear();
        }
        if holds && !was {
            tracing::info!("this node runs the matchmaking now");
        }
        if changed && leader.is_some() {
            // The new matchmaker hears of this node's waiting players.
            let queued: Vec<(QueueKey, SeatPlayer, f64)> =
                lock(&self.queued_here).values().cloned().collect();
            for (key, seat, rating) in queued {
                let _ = self.queue_join(hub, key, seat, rating, false).await;
            }
        }
    }

    /// Queues a player with the matchmaker node (this one or another); the player's place.
    pub async fn queue_join(
        &self,
        hub: &Arc<Hub>,
        key: QueueKey,
        seat: SeatPlayer,
        rating: f64,
        wait: bool,
    ) -> Result<u64, crate::error::ApiError> {
        lock(&self.queued_here).insert(seat.id.clone(), (key.clone(), seat.clone(), rating));
        if self.is_matchmaker() {
            let mm = &hub.matchmaker;
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
    pub async fn queue_leave(&self, hub: &Arc<Hub>, player: &str) {
        lock(&self.queued_here).remove(player);
        if self.is_matchmaker() {
            hub.matchmaker.leave(player);
            return;
        }
        let leader = lock(&self.leader).clone();
        if let Some(leader) = leader {
            let msg = BusMessage::QueueLeave {
                player: player.to_string(),
            };
            self.publish_on(&self.node_channel(&leader), &msg).await;
        }
    }

    /// Sends a frame to a player connected to another node.
    pub async fn to_player(&self, player: &str, frame: String) {
        let msg = BusMessage::ToPlayer {
            player: player.to_string(),
            frame,
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    /// Locks two players' ratings across the cluster (keys taken in order, so two updates
    /// never wait on each other in a cycle); the lock lapses by itself if this node dies.
    pub async fn lock_players(
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
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            loop {
                let mut conn = self.store.connection();
                let set: Option<String> = self
                    .store
                    .call(
                        redis::cmd("SET")
                            .arg(&key)
                            .arg(&token)
                            .arg("NX")
                            .arg("PX")
                            .arg(5_000)
                            .query_async(&mut conn),
                    )
                    .await
                    .map_err(crate::error::ApiError::store)?;
                if set.is_some() {
                    keys.push(key);
                    break;
                }
                if tokio::time::Instant::now() >= deadline {
                    self.unlock_players(PlayersLock {
                        keys,
                        token: token.clone(),
                    })
                    .await;
                    return Err(crate::error::ApiError::new(
                        stoa_protocol::wire::ErrorCode::Unavailable,
                        "ratings are busy: try again",
                    ));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        Ok(PlayersLock { keys, token })
    }

    /// Releases a [`Cluster::lock_players`] lock.
    pub async fn unlock_players(&self, lock: PlayersLock) {
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
    pub async fn allow_ip(&self, ip: std::net::IpAddr, limit: u32, window_ms: u64) -> bool {
        let window_ms = window_ms.max(1);
        let slot = crate::ids::now_ms() / window_ms;
        let key = self
            .store
            .key(&["ipwin", &ip.to_string(), &slot.to_string()]);
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

    /// Games this node owns now.
    pub fn owned_count(&self) -> usize {
        lock(&self.owned).len()
    }

    /// Takes a game's lease if nobody holds it (a new game, or one whose owner died).
    pub async fn acquire(&self, game: &str) -> Result<bool, StoreError> {
        let mut conn = self.store.connection();
        let set: Option<String> = self
            .store
            .call(
                redis::cmd("SET")
                    .arg(self.store.lease_key(game))
                    .arg(&self.node)
                    .arg("NX")
                    .arg("PX")
                    .arg(self.lease_ms)
                    .query_async(&mut conn),
            )
            .await?;
        let got = set.is_some();
        if got {
            lock(&self.owned).insert(game.to_string());
        }
        Ok(got)
    }

    /// Gives back every lease this node holds (a graceful shutdown: the other nodes take
    /// the games over at once instead of waiting for the leases to lapse).
    pub async fn release_all(&self) {
        let games: Vec<String> = lock(&self.owned).drain().collect();
        let mut conn = self.store.connection();
        for game in &games {
            let mut inv = self.release.prepare_invoke();
            inv.key(self.store.lease_key(game)).arg(&self.node);
            let _: Result<i64, _> = self.store.call(inv.invoke_async(&mut conn)).await;
        }
        if !games.is_empty() {
            tracing::info!(games = games.len(), "leases released for the other nodes");
            let msg = BusMessage::Released {
                node: self.node.clone(),
            };
            self.publish_on(&self.channel(&["push"]), &msg).await;
        }
    }

    /// The nodes that sent a heartbeat recently, by id.
    pub async fn nodes(&self) -> Vec<String> {
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
    pub async fn put_lobby_part(&self, part: &serde_json::Value) {
        let mut conn = self.store.connection();
        let key = self.store.key(&["lobby", &self.node]);
        let _: Result<(), _> = self
            .store
            .call(conn.pset_ex(&key, part.to_string(), 3 * self.lease_ms))
            .await;
    }

    /// The other live nodes' parts of the lobby.
    pub async fn lobby_parts(&self) -> Vec<serde_json::Value> {
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

    async fn heartbeat(&self) {
        let mut conn = self.store.connection();
        let key = self.store.key(&["nodes"]);
        let now = crate::ids::now_ms();
        let mut pipe = redis::pipe();
        pipe.zadd(&key, &self.node, now)
            .ignore()
            .zrembyscore(&key, "-inf", now.saturating_sub(10 * self.lease_ms))
            .ignore();
        let _: Result<(), _> = self.store.call(pipe.query_async(&mut conn)).await;
    }

    /// Heartbeat, lease renewal, takeover of lapsed leases: every third of the lease, and
    /// also just after the next lease held elsewhere lapses (a dead owner's games move on
    /// within milliseconds of its lease's end, not at the next round).
    async fn lease_loop(self: Arc<Self>) {
        let period = Duration::from_millis(self.lease_ms / 3);
        let mut next = period;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(next) => {}
                _ = self.wake.notified() => {}
            }
            let Some(hub) = self.hub() else {
                return;
            };
            if *hub.shutdown.borrow() {
                continue;
            }
            self.heartbeat().await;
            let nodes = self.nodes().await;
            if !nodes.is_empty() {
                *lock(&self.live) = nodes.into_iter().collect();
            }
            self.elect(&hub).await;
            self.renew_all(&hub).await;
            next = match self.claim_lapsed(&hub).await {
                // A few ms past the end: Redis expires the key by its own clock.
                Some(left) => period.min(left + Duration::from_millis(5)),
                None => period,
            };
            if !self.store.is_up() {
                // Every lease lapses in an outage: round again soon after Redis is back
                // rather than a whole period later.
                next = next.min(Duration::from_millis(250));
            }
        }
    }

    async fn renew_all(&self, hub: &Arc<Hub>) {
        let games: Vec<String> = lock(&self.owned).iter().cloned().collect();
        if games.is_empty() {
            return;
        }
        let mut conn = self.store.connection();
        // One script call for all on a single server; one per game on a Redis Cluster,
        // where a script's keys must share a slot.
        let batches: Vec<&[String]> = if conn.is_cluster() {
            games.chunks(1).collect()
        } else {
            vec![&games[..]]
        };
        let mut lost = Vec::new();
        let mut offset = 0;
        for batch in batches {
            let mut inv = self.renew.prepare_invoke();
            for g in batch {
                inv.key(self.store.lease_key(g));
            }
            inv.arg(&self.node).arg(self.lease_ms);
            match self
                .store
                .call(inv.invoke_async::<Vec<usize>>(&mut conn))
                .await
            {
                Ok(l) => lost.extend(l.into_iter().map(|i| i + offset)),
                Err(e) => {
                    tracing::warn!(error = %e, "could not renew the leases");
                    return;
                }
            }
            offset += batch.len();
        }
        for i in lost {
            let Some(game) = games.get(i.wrapping_sub(1)) else {
                continue;
            };
            lock(&self.owned).remove(game);
            tracing::warn!(game = %game, "lease lost: another node owns the game now");
            if let Some(h) = hub.games.get(game) {
                let _ = h.tx.send(Command::Demote).await;
            }
        }
    }

    /// Takes over unfinished games whose lease lapsed (their node died or lost Redis).
    /// Returns how long until the soonest lease held by another node lapses.
    async fn claim_lapsed(&self, hub: &Arc<Hub>) -> Option<Duration> {
        let ids = hub.store.all_unfinished_games().await.ok()?;
        let ids: Vec<String> = {
            let owned = lock(&self.owned);
            ids.into_iter().filter(|id| !owned.contains(id)).collect()
        };
        let mut conn = self.store.connection();
        // One script call for all on a single server; one per game on a Redis Cluster.
        let batch = if conn.is_cluster() {
            1
        } else {
            ids.len().max(1)
        };
        let mut taken = Vec::new();
        let mut soonest: Option<u64> = None;
        for chunk in ids.chunks(batch) {
            let mut inv = self.claim.prepare_invoke();
            for id in chunk {
                inv.key(self.store.lease_key(id));
            }
            inv.arg(&self.node).arg(self.lease_ms);
            let Ok(out) = self
                .store
                .call(inv.invoke_async::<Vec<i64>>(&mut conn))
                .await
            else {
                break;
            };
            for (id, left) in chunk.iter().zip(out) {
                if left == -3 {
                    taken.push(id.clone());
                } else if left >= 0 {
                    soonest = Some(soonest.map_or(left as u64, |s| s.min(left as u64)));
                }
            }
        }
        for id in taken {
            lock(&self.owned).insert(id.clone());
            tracing::info!(game = %id, "lease lapsed: taking the game over");
            // A follower that stopped between the lookup and the send no longer takes
            // commands: the game is rebuilt from the log instead, never left with a lease
            // and no actor (every node would be told "changing servers" for good).
            let promoted = match hub.games.get(&id) {
                Some(h) => h.tx.send(Command::Promote).await.is_ok(),
                None => false,
            };
            if promoted {
                continue;
            }
            if let Err(e) = crate::recovery::take_over(hub, &id).await {
                // Given back at once, so this node or another tries again at the next round
                // instead of after a whole lease.
                tracing::error!(game = %id, error = %e, "takeover failed");
                lock(&self.owned).remove(&id);
                let mut inv = self.release.prepare_invoke();
                inv.key(self.store.lease_key(&id)).arg(&self.node);
                let _: Result<i64, _> = self.store.call(inv.invoke_async(&mut conn)).await;
            }
        }
        soonest.map(Duration::from_millis)
    }

    /// The live game `id` as this node can serve it: a follower of the owner, started from
    /// the log. `Ok(None)` when the game is not live anywhere (unknown or finished); an
    /// error when Redis cannot tell now (a live game is never reported missing because a
    /// read timed out).
    pub async fn attach(
        &self,
        hub: &Arc<Hub>,
        id: &str,
    ) -> Result<Option<crate::game::GameHandle>, StoreError> {
        let _one = self.attaching.lock().await;
        if let Some(h) = hub.games.get(id) {
            return Ok(Some(h));
        }
        if hub.store.finished_game(id).await?.is_some() || hub.store.game(id).await?.is_none() {
            return Ok(None);
        }
        // Subscribed before the log is read: an event logged after the read arrives on the
        // channel; one logged before is in the log (the follower heals at its start).
        self.subscribe(&self.game_channel(id))
            .await
            .map_err(StoreError::Unavailable)?;
        lock(&self.followed).insert(id.to_string());
        match crate::recovery::follow(hub, id).await {
            Ok(h) => Ok(Some(h)),
            Err(e) => {
                tracing::warn!(game = %id, error = %e, "cannot follow the game");
                self.unfollow(id);
                match e {
                    crate::recovery::RecoveryError::Store(e) => Err(e),
                    _ => Ok(None),
                }
            }
        }
    }

    async fn subscribe(&self, channel: &str) -> Result<(), String> {
        let sink = lock(&self.sink).clone();
        match sink {
            Some(mut sink) => sink.subscribe(channel).await.map_err(|e| e.to_string()),
            None => Err("the cluster bus is disconnected".into()),
        }
    }

    /// Announces a game started on this node to the others (they tell its players).
    pub async fn started(
        &self,
        handle: &crate::game::GameHandle,
        side_names: [&str; 2],
        room: Option<String>,
    ) {
        let msg = BusMessage::Started {
            game: handle.id.clone(),
            kind: handle.kind.clone(),
            players: handle.players.clone(),
            side_names: side_names.map(str::to_string),
            room,
            origin: self.node.clone(),
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    async fn publish_on(&self, channel: &str, msg: &BusMessage) -> i64 {
        self.publish_counted(channel, msg).await.unwrap_or(0)
    }

    /// Publishes and counts the receivers; `None` when the publish was sent but its answer
    /// lost (it may still reach them: a slow or partitioned link delivers late), `Some(0)`
    /// when it certainly reached nobody.
    async fn publish_counted(&self, channel: &str, msg: &BusMessage) -> Option<i64> {
        let mut conn = self.bus.clone();
        match self
            .store
            .call(conn.publish::<_, _, i64>(channel, msg.encode_at(messages::wall_ms())))
            .await
        {
            Ok(n) => Some(n),
            Err(e @ StoreError::InDoubt(_)) => {
                tracing::warn!(error = %e, "bus publish in doubt");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "bus publish failed");
                Some(0)
            }
        }
    }

    /// Keeps this node's subscription: its own channel, the push channel and every
    /// followed game's; after a reconnect, every follower heals from the log.
    async fn bus_loop(self: Arc<Self>, mut ready: Option<tokio::sync::oneshot::Sender<()>>) {
        let mut first = true;
        loop {
            match self.client.get_async_pubsub().await {
                Ok(pubsub) => {
                    let (mut sink, mut stream) = pubsub.split();
                    let mut channels = vec![self.node_channel(&self.node), self.channel(&["push"])];
                    let followed: Vec<String> = lock(&self.followed).iter().cloned().collect();
                    channels.extend(followed.iter().map(|g| self.game_channel(g)));
                    if let Err(e) = sink.subscribe(&channels).await {
                        tracing::warn!(error = %e, "bus subscription failed");
                    } else {
                        *lock(&self.sink) = Some(sink);
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                        if !first {
                            tracing::info!("cluster bus reconnected: followers catch up");
                            self.heal_followers(&followed).await;
                        }
                        first = false;
                        while let Some(msg) = stream.next().await {
                            let Ok(text) = msg.get_payload::<String>() else {
                                continue;
                            };
                            if let (Some(sent), Some(hub)) = (messages::sent_ms(&text), self.hub())
                            {
                                hub.metrics.bus_message(sent, messages::wall_ms());
                            }
                            match serde_json::from_str::<BusMessage>(&text) {
                                Ok(m) => self.dispatch(m).await,
                                Err(e) => tracing::warn!(error = %e, "bad bus message"),
                            }
                        }
                        *lock(&self.sink) = None;
                        tracing::warn!("cluster bus disconnected: reconnecting");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot connect the cluster bus"),
            }
            if self.hub().is_none() && !first {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    async fn heal_followers(&self, games: &[String]) {
        let Some(hub) = self.hub() else {
            return;
        };
        for g in games {
            if let Some(h) = hub.games.get(g) {
                // Messages may have been lost while disconnected: the log tells.
                let _ = h.tx.send(Command::Heal).await;
            }
        }
    }

    async fn dispatch(&self, msg: BusMessage) {
        let Some(hub) = self.hub() else {
            return;
        };
        match &msg {
            BusMessage::Started {
                game,
                players,
                side_names,
                room,
                origin,
                ..
            } => {
                {
                    let mut queued = lock(&self.queued_here);
                    for p in players {
                        queued.remove(p);
                    }
                }
                if *origin == self.node {
                    return;
                }
                if let Some(code) = room {
                    hub.rooms.started(code, game);
                }
                let here: Vec<usize> = (0..2)
                    .filter(|&i| !hub.players.connections(&players[i]).is_empty())
                    .collect();
                if here.is_empty() {
                    return;
                }
                let Ok(Some(handle)) = self.attach(&hub, game).await else {
                    return;
                };
                for i in here {
                    for conn in hub.players.connections(&players[i]) {
                        hub.announce_to(&handle, &side_names[i], &conn).await;
                    }
                }
            }
            BusMessage::QueueJoin {
                from,
                req,
                key,
                seat,
                rating,
            } => {
                if !self.is_matchmaker() {
                    return;
                }
                let mm = &hub.matchmaker;
                let joined = mm.join(key.clone(), seat.clone(), *rating, mm.now_ms());
                let reply = BusMessage::Queued {
                    req: *req,
                    position: joined.position as u64,
                };
                self.publish_on(&self.node_channel(from), &reply).await;
            }
            BusMessage::Released { node } => {
                if *node != self.node {
                    self.wake.notify_one();
                }
            }
            BusMessage::QueueLeave { player } => {
                if self.is_matchmaker() {
                    hub.matchmaker.leave(player);
                }
            }
            BusMessage::Queued { req, position } => {
                if let Some(tx) = lock(&self.pending).remove(req) {
                    let _ = tx.send(*position);
                }
            }
            BusMessage::ToPlayer { player, frame } => {
                for conn in hub.players.connections(player) {
                    conn.send(axum::extract::ws::Utf8Bytes::from(frame.clone()));
                }
            }
            BusMessage::Event { game, .. }
            | BusMessage::Crowd { game, .. }
            | BusMessage::Owner { game, .. }
            | BusMessage::Reply { game, .. } => {
                if let Some(h) = hub.games.get(game) {
                    let _ = h.tx.send(Command::Bus(msg)).await;
                }
            }
            BusMessage::Request {
                game, from, req, ..
            } => match hub.games.get(game) {
                Some(h) => {
                    let _ = h.tx.send(Command::Bus(msg)).await;
                }
                None => {
                    let reply = BusMessage::Reply {
                        game: game.clone(),
                        req: *req,
                        result: Err::<crate::game::Answer, _>(crate::error::ApiError::new(
                            stoa_protocol::wire::ErrorCode::Unavailable,
                            "this game is changing servers: try again in a moment",
                        ))
                        .into(),
                    };
                    self.publish_on(&self.node_channel(from), &reply).await;
                }
            },
        }
    }
}

#[async_trait::async_trait]
impl Peers for Cluster {
    fn node(&self) -> &str {
        &self.node
    }

    async fn publish(&self, message: &BusMessage) {
        let game = match message {
            BusMessage::Event { game, .. }
            | BusMessage::Crowd { game, .. }
            | BusMessage::Owner { game, .. } => game.clone(),
            _ => return,
        };
        self.publish_on(&self.game_channel(&game), message).await;
    }

    async fn send_to(&self, node: &str, message: &BusMessage) -> Option<bool> {
        self.publish_counted(&self.node_channel(node), message)
            .await
            .map(|n| n > 0)
    }

    async fn owner_of(&self, game: &str) -> Option<String> {
        let mut conn = self.store.connection();
        self.store
            .call(conn.get::<_, Option<String>>(self.store.lease_key(game)))
            .await
            .ok()
            .flatten()
    }

    fn set_owned(&self, game: &str, owned: bool) {
        let mut set = lock(&self.owned);
        if owned {
            set.insert(game.to_string());
        } else {
            set.remove(game);
        }
    }

    async fn follow(&self, game: &str) {
        if lock(&self.followed).insert(game.to_string()) {
            if let Err(e) = self.subscribe(&self.game_channel(game)).await {
                tracing::warn!(game = %game, error = %e, "cannot follow the game's channel");
            }
        }
    }

    fn is_live(&self, node: &str) -> bool {
        let live = lock(&self.live);
        // Before the first reading every node counts as alive.
        live.is_empty() || live.contains(node)
    }

    fn unfollow(&self, game: &str) {
        if !lock(&self.followed).remove(game) {
            return;
        }
        let channel = self.game_channel(game);
        if let Some(mut sink) = lock(&self.sink).clone() {
            tokio::spawn(async move {
                let _ = sink.unsubscribe(channel).await;
            });
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
