//! Leases: one owner per live game (a Redis key with a TTL, renewed every third of the
//! lease), the round that renews them, and the claim of games whose owner's lease lapsed.

use super::*;
use crate::ids::GameId;

/// Renews the leases this node holds; returns the 1-based indexes of those it no longer
/// holds. A lease key that is gone is taken again: nobody else holds it, and the store lost
/// it (a Redis failover to a replica that lacked it) or it lapsed with nobody claiming it;
/// either way this node still holds the game's latest state, and letting another node
/// rebuild it from a log that may itself have lost events would lose them (fault bench,
/// `--min-replicas 0`, seed 601). KEYS: lease keys. ARGV: node id, TTL ms.
pub(super) const RENEW: &str = r"
local lost = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  elseif not holder then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
";

/// Deletes a lease only if this node holds it. KEYS: lease key. ARGV: node id.
pub(super) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Takes each lease nobody holds; for each: -3 when taken now, else the time left (ms) on
/// the other holder's lease (`PTTL`: -1 for no expiry, -2 if gone meanwhile), so the caller
/// wakes exactly when it lapses. KEYS: lease keys.
/// ARGV: node id, TTL ms.
pub(super) const CLAIM: &str = r"
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

impl Cluster {
    /// Takes a game's lease if nobody holds it (a new game, or one whose owner died).
    pub(super) async fn acquire(&self, game: &GameId) -> Result<bool, StoreError> {
        let got = self
            .take_key(&self.store.lease_key(game), &self.node, self.lease_ms)
            .await?;
        if got {
            lock(&self.owned).insert(game.clone());
        }
        Ok(got)
    }

    /// Gives back every lease this node holds (a graceful shutdown: the other nodes take
    /// the games over at once instead of waiting for the leases to lapse).
    pub async fn release_all(&self) {
        let games: Vec<GameId> = lock(&self.owned).drain().collect();
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

    pub(super) async fn heartbeat(&self) {
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
    pub(super) async fn lease_loop(self: Arc<Self>) {
        let period = Duration::from_millis(self.lease_ms / 3);
        let mut next = period;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(next) => {}
                _ = self.wake.notified() => {}
            }
            if self.stopped() {
                return;
            }
            if *self.shutdown.borrow() {
                continue;
            }
            self.heartbeat().await;
            let nodes = self.nodes().await;
            if !nodes.is_empty() {
                *lock(&self.live) = nodes.into_iter().collect();
            }
            self.elect().await;
            self.renew_all().await;
            next = match self.claim_lapsed().await {
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

    pub(super) async fn renew_all(&self) {
        let games: Vec<GameId> = lock(&self.owned).iter().cloned().collect();
        if games.is_empty() {
            return;
        }
        let mut conn = self.store.connection();
        // One script call for all on a single server; one per game on a Redis Cluster,
        // where a script's keys must share a slot.
        let batches: Vec<&[GameId]> = if conn.is_cluster() {
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
            if let Some(h) = self.registries.games.get(game) {
                let _ = h.tx.send(Command::Demote).await;
            }
        }
    }

    /// How long claims still wait after the store's generation moved (a failover, Redis
    /// back after an outage): a lease lapses then because its owner could not renew it
    /// while the nodes moved to the new primary, or because the promoted replica never had
    /// it; the owner, alive, takes it again at its next renewal ([`RENEW`]) and logs again
    /// the events the log lost. A node claiming it first rebuilt the game from that shorter
    /// log and played on from there (fault bench, `--min-replicas 0`, seed 602: 50
    /// acknowledged moves replaced). A dead owner's games wait a lease and a half more.
    pub(super) fn settling(&self) -> Option<Duration> {
        let generation = crate::store::Store::generation(&self.store);
        let mut seen = lock(&self.generation_seen);
        if seen.0 != generation {
            *seen = (generation, Some(std::time::Instant::now()));
        }
        let grace = Duration::from_millis(self.lease_ms * 3 / 2);
        let since = seen.1?.elapsed();
        (since < grace).then(|| grace - since)
    }

    /// Takes over unfinished games whose lease lapsed (their node died or lost Redis).
    /// Returns how long until the soonest lease held by another node lapses.
    pub(super) async fn claim_lapsed(self: &Arc<Self>) -> Option<Duration> {
        if let Some(wait) = self.settling() {
            return Some(wait);
        }
        let ids = self.store.all_unfinished_games().await.ok()?;
        let ids: Vec<GameId> = {
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
            let promoted = match self.registries.games.get(&id) {
                Some(h) => h.tx.send(Command::Promote).await.is_ok(),
                None => false,
            };
            if promoted {
                continue;
            }
            let (done, outcome) = oneshot::channel();
            let asked = self
                .events
                .send(ClusterEvent::TakeOver {
                    game: id.clone(),
                    done,
                })
                .is_ok();
            // Each rebuild is waited for on its own: awaited here, a dead node's games were
            // rebuilt one after another inside the lease round, and this node's own leases
            // went unrenewed meanwhile (a takeover of thousands of games outlasts a lease).
            // The lease stays in `owned`, renewed, while the rebuild runs.
            let me = self.clone();
            tokio::spawn(async move {
                if !(asked && outcome.await.unwrap_or(false)) {
                    // Given back at once, so this node or another tries again at the next
                    // round instead of after a whole lease.
                    lock(&me.owned).remove(&id);
                    let mut conn = me.store.connection();
                    let mut inv = me.release.prepare_invoke();
                    inv.key(me.store.lease_key(&id)).arg(&me.node);
                    let _: Result<i64, _> = me.store.call(inv.invoke_async(&mut conn)).await;
                }
            });
        }
        soonest.map(Duration::from_millis)
    }
}
