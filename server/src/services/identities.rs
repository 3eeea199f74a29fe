//! The identities this node handed out lately, stored again when a Redis failover lost them.
//!
//! Why: with `--redis-min-replicas 0` a `hello` without a token is answered as soon as the
//! primary holds the new player, and a failover in the next moment (a primary killed before
//! its replica had the write, a switchover with the primary alive) can promote a replica
//! that never had it. The player goes on playing on the connection it has, but the token
//! it was given finds nobody at its next `hello`: the player is locked out of its own games
//! for good (fault bench, `--min-replicas 0`, seed 605: a game stuck from the moment its
//! host's client reconnected). The node that created the player still holds the record, as
//! a game's owner holds the events it logged ([`crate::game::actor`]'s repair): when the
//! store's generation moves, it stores again those the store no longer has.
//!
//! Only recent ones are kept: a failover loses what its replica had not received yet, a
//! fraction of a second of writes, or what a demoted primary took before the nodes moved
//! on (up to about a second measured); [`KEPT_FOR`] is far beyond both.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::metrics::Metrics;
use crate::store::{PlayerRecord, Store, StoreResult};

/// How long a created identity is kept to store again.
pub const KEPT_FOR: Duration = Duration::from_secs(300);

/// At most this many are kept (a burst of new players keeps the newest).
const KEPT_AT_MOST: usize = 100_000;

/// How long a failed pass waits before the next try.
const RETRY: Duration = Duration::from_millis(500);

/// The identities this node created within [`KEPT_FOR`], and the task that stores again
/// those a failover lost.
pub struct Identities {
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    /// Whether the store can lose acknowledged writes at all (Redis): the in-memory store
    /// cannot, and nothing is kept for it.
    repairs: bool,
    recent: Mutex<VecDeque<(Instant, PlayerRecord)>>,
}

impl std::fmt::Debug for Identities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identities").finish_non_exhaustive()
    }
}

impl Identities {
    /// Keeps the identities created over `store`, and (inside a runtime, over a store that
    /// can lose writes) watches its generation to store again those it lost.
    pub fn start(store: Arc<dyn Store>, metrics: Arc<Metrics>) -> Arc<Identities> {
        let availability = store.availability();
        let me = Arc::new(Identities {
            store,
            metrics,
            repairs: availability.is_some(),
            recent: Mutex::new(VecDeque::new()),
        });
        if let (Ok(rt), Some(up)) = (tokio::runtime::Handle::try_current(), availability) {
            rt.spawn(watch_generation(Arc::downgrade(&me), up));
        }
        me
    }

    /// A player this node just created (its `hello` answered).
    pub fn remember(&self, player: &PlayerRecord) {
        if !self.repairs {
            return;
        }
        let now = Instant::now();
        let mut recent = self.recent.lock();
        prune(&mut recent, now);
        if recent.len() == KEPT_AT_MOST {
            recent.pop_front();
        }
        recent.push_back((now, player.clone()));
    }

    /// Stores again every kept identity whose record the store lost; how many.
    pub async fn restore_lost(&self) -> StoreResult<u64> {
        let kept: Vec<PlayerRecord> = {
            let mut recent = self.recent.lock();
            prune(&mut recent, Instant::now());
            recent.iter().map(|(_, p)| p.clone()).collect()
        };
        let mut restored = 0;
        for player in &kept {
            if self.store.restore_player(player).await? {
                tracing::warn!(
                    player = %player.id,
                    "the store had lost this player (a failover): stored again"
                );
                restored += 1;
            }
        }
        self.metrics.identities_restored.inc_by(restored);
        Ok(restored)
    }
}

/// Drops what is older than [`KEPT_FOR`].
fn prune(recent: &mut VecDeque<(Instant, PlayerRecord)>, now: Instant) {
    while recent
        .front()
        .is_some_and(|(at, _)| now.duration_since(*at) > KEPT_FOR)
    {
        recent.pop_front();
    }
}

/// Runs a pass of [`Identities::restore_lost`] each time the store's generation moves (the
/// availability watch is woken then), once the store answers; ends with the service.
async fn watch_generation(identities: Weak<Identities>, mut up: watch::Receiver<bool>) {
    let mut seen = match identities.upgrade() {
        Some(me) => me.store.generation(),
        None => return,
    };
    while up.changed().await.is_ok() {
        loop {
            let Some(me) = identities.upgrade() else {
                return;
            };
            let generation = me.store.generation();
            if generation == seen || !*up.borrow() {
                // Nothing moved, or the store is down: its return wakes the watch again.
                break;
            }
            match me.restore_lost().await {
                // Round again: the generation may have moved during the pass.
                Ok(_) => seen = generation,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot check the recent players yet");
                    drop(me);
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    fn player(id: &str) -> PlayerRecord {
        PlayerRecord {
            id: id.into(),
            name: format!("guest-{id}"),
            token_hash: format!("hash-{id}"),
            created_ms: 1,
            bot: false,
            account: None,
        }
    }

    /// A store that can lose writes, as Redis can, over the memory store.
    fn identities(store: &Arc<MemoryStore>) -> Identities {
        Identities {
            store: store.clone(),
            metrics: Arc::new(Metrics::default()),
            repairs: true,
            recent: Mutex::new(VecDeque::new()),
        }
    }

    #[tokio::test]
    async fn a_lost_player_is_stored_again_with_its_token_and_a_kept_one_is_left_alone() {
        let store = Arc::new(MemoryStore::new());
        let ids = identities(&store);
        for id in ["pa", "pb"] {
            store.create_player(&player(id)).await.unwrap();
            ids.remember(&player(id));
        }
        // Renamed since: a pass must not put the old name back.
        store.rename_player(&"pb".into(), "bee").await.unwrap();
        // Its token revoked since: a pass must not bring it back.
        let device = crate::store::DeviceRecord {
            id: "d-pc".into(),
            token_hash: "hash-pc".into(),
            label: "terminal".into(),
            created_ms: 1,
            last_seen_ms: 1,
        };
        store.create_player(&player("pc")).await.unwrap();
        ids.remember(&player("pc"));
        store.seen_device(&"pc".into(), &device).await.unwrap();
        assert!(store.revoke_device(&"pc".into(), "d-pc").await.unwrap());
        store.lose_player(&"pa".into());
        assert_eq!(store.player_by_token_hash("hash-pa").await.unwrap(), None);

        assert_eq!(ids.restore_lost().await.unwrap(), 1);
        let back = store.player_by_token_hash("hash-pa").await.unwrap();
        assert_eq!(back, Some(player("pa")));
        let kept = store.player(&"pb".into()).await.unwrap().unwrap();
        assert_eq!(kept.name, "bee");
        assert_eq!(store.player_by_token_hash("hash-pc").await.unwrap(), None);
        assert_eq!(ids.metrics.identities_restored.get(), 1);
        // Nothing more to do.
        assert_eq!(ids.restore_lost().await.unwrap(), 0);
        assert_eq!(ids.metrics.identities_restored.get(), 1);
    }

    #[tokio::test]
    async fn nothing_is_kept_over_a_store_that_loses_nothing() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let ids = Identities::start(store, Arc::new(Metrics::default()));
        ids.remember(&player("pa"));
        assert!(ids.recent.lock().is_empty());
    }

    #[test]
    fn identities_older_than_the_window_are_dropped() {
        let now = Instant::now();
        let Some(old) = now.checked_sub(KEPT_FOR + Duration::from_secs(1)) else {
            return; // A clock too close to its start to hold an old instant.
        };
        let mut recent = VecDeque::from([(old, player("pa")), (now, player("pb"))]);
        prune(&mut recent, now);
        let left: Vec<&str> = recent.iter().map(|(_, p)| p.id.as_str()).collect();
        assert_eq!(left, ["pb"]);
    }
}
