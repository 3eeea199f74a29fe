//! Quick-pairing queues as a pure model: who waits where, and who plays whom
//! when a pairing wave runs.
//!
//! No I/O, no clock, no hidden randomness: the caller passes the time (ms,
//! any monotonic origin) into every call and seeds the side coin flips, so
//! tests run on virtual time and are deterministic.
//!
//! The server uses it like this:
//! * `queue.join` → [`Pairing::join`] (answer `queued` with its `position`;
//!   if [`Joined::ready`], run [`Pairing::wave_for`] at once);
//! * `queue.leave`, and the last connection of a player closing →
//!   [`Pairing::leave`];
//! * a timer every second → [`Pairing::wave`], creating a game for every
//!   [`Match`] and sending `game.started` to both players;
//! * the lobby and metrics read [`Pairing::sizes`], [`Pairing::others_waiting`],
//!   and each match's [`Match::rating_gap`] and waiting times.
//!
//! One entry per player: a player is in at most one queue, and all of a
//! player's connections (devices) share that entry, so a player can never
//! be paired with themself.

mod key;
mod matching;
mod schedule;
mod sides;

pub use key::{canonical_json, QueueKey};
pub use schedule::Widening;
pub use sides::{SideHistory, DEFAULT_SIDE_MEMORY};
pub use stoa_protocol::game::Side;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::hash::Hash;

use rand::rngs::StdRng;
use rand::SeedableRng;

use matching::{select_pairs, Candidate};

/// A queue key: players are compatible exactly when their keys are equal.
/// [`QueueKey`] is the server's; tests may use anything small.
pub trait PairingKey: Clone + Ord + Debug {
    /// Whether the queue is rated: rated queues pair by rating, unrated ones
    /// in arrival order.
    fn rated(&self) -> bool;
}

/// A player identifier (the server's player id type).
pub trait PlayerId: Clone + Eq + Hash + Debug {}
impl<T: Clone + Eq + Hash + Debug> PlayerId for T {}

/// Tunables of the pairing model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairingConfig {
    /// How rated queues widen the accepted rating gap with waiting time.
    pub widening: Widening,
    /// How many recent sides are remembered per player for alternation.
    pub side_memory: usize,
}

impl Default for PairingConfig {
    fn default() -> Self {
        PairingConfig {
            widening: Widening::default(),
            side_memory: DEFAULT_SIDE_MEMORY,
        }
    }
}

/// One waiting player.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueEntry<P> {
    /// Who waits.
    pub player: P,
    /// Their rating in the queue's game kind (used by rated queues only).
    pub rating: f64,
    /// When they joined (ms, the caller's clock).
    pub joined_at: u64,
}

/// What [`Pairing::join`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Joined<K> {
    /// The player's 1-based place in the queue, in arrival order (for the
    /// `queued` answer's `position`).
    pub position: usize,
    /// The queue the player was in before, if any: a join moves a player out
    /// of any other queue. Equal to the new key when the player re-joined
    /// the same queue (their place is kept).
    pub previous: Option<K>,
    /// Whether a wave run now would pair someone in this queue: the server
    /// should then run [`Pairing::wave_for`] at once instead of waiting for
    /// the timer.
    pub ready: bool,
}

/// How many are waiting besides a given player (for "you are alone, N others
/// are waiting" messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OthersWaiting {
    /// Others in the player's own queue.
    pub same_queue: usize,
    /// Players in all other queues.
    pub other_queues: usize,
}

/// One side of a [`Match`].
#[derive(Clone, Debug, PartialEq)]
pub struct Seat<P> {
    /// The player.
    pub player: P,
    /// Their rating when paired.
    pub rating: f64,
    /// How long they waited in the queue (ms), for wait-time metrics.
    pub waited_ms: u64,
}

/// A pairing made by a wave: create the game with these sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Match<K, P> {
    /// The queue (and so the game settings).
    pub key: K,
    /// The player who takes the first side ([`Side::First`]).
    pub first: Seat<P>,
    /// The player who takes the second side ([`Side::Second`]).
    pub second: Seat<P>,
    /// The absolute rating difference at pairing, for metrics.
    pub rating_gap: f64,
}

/// The quick-pairing queues.
#[derive(Debug)]
pub struct Pairing<K, P> {
    config: PairingConfig,
    /// Entries per queue, each in arrival order. Empty queues are removed.
    queues: BTreeMap<K, Vec<QueueEntry<P>>>,
    /// Which queue each waiting player is in.
    index: HashMap<P, K>,
    sides: SideHistory<P>,
    rng: StdRng,
}

impl<K: PairingKey, P: PlayerId> Pairing<K, P> {
    /// Empty queues with this configuration; `seed` drives the side coin flips
    /// (the server passes a random seed, tests a fixed one).
    pub fn new(config: PairingConfig, seed: u64) -> Self {
        Pairing {
            config,
            queues: BTreeMap::new(),
            index: HashMap::new(),
            sides: SideHistory::new(config.side_memory),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &PairingConfig {
        &self.config
    }

    /// Puts `player` (rated `rating` in the key's game kind) in the queue
    /// `key` at time `now`.
    ///
    /// A player is in at most one queue: joining another queue moves them.
    /// Re-joining the *same* queue (say, from a second device) keeps their
    /// place and join time, so it cannot be used to skip ahead nor costs
    /// them their wait; only the rating is refreshed. A non-finite rating is
    /// taken as 1500.
    pub fn join(&mut self, key: K, player: P, rating: f64, now: u64) -> Joined<K> {
        let rating = if rating.is_finite() { rating } else { 1500.0 };
        let previous = self.index.get(&player).cloned();
        let position = match &previous {
            Some(old) if *old == key => {
                let queue = self.queues.get_mut(&key).expect("indexed queue exists");
                let pos = queue
                    .iter()
                    .position(|e| e.player == player)
                    .expect("indexed player is queued");
                queue[pos].rating = rating;
                pos + 1
            }
            _ => {
                if previous.is_some() {
                    self.leave(&player);
                }
                let queue = self.queues.entry(key.clone()).or_default();
                queue.push(QueueEntry {
                    player: player.clone(),
                    rating,
                    joined_at: now,
                });
                self.index.insert(player, key.clone());
                queue.len()
            }
        };
        let ready = self.has_ready_pair(&key, now);
        Joined {
            position,
            previous,
            ready,
        }
    }

    /// Takes `player` out of whatever queue they are in (on `queue.leave`,
    /// and when their last connection closes). Returns the queue and the
    /// entry, e.g. to record an abandoned wait; `None` if not queued.
    pub fn leave(&mut self, player: &P) -> Option<(K, QueueEntry<P>)> {
        let key = self.index.remove(player)?;
        let queue = self.queues.get_mut(&key)?;
        let pos = queue.iter().position(|e| &e.player == player)?;
        let entry = queue.remove(pos);
        if queue.is_empty() {
            self.queues.remove(&key);
        }
        Some((key, entry))
    }

    /// The queue `player` waits in, if any.
    pub fn queue_of(&self, player: &P) -> Option<&K> {
        self.index.get(player)
    }

    /// `player`'s entry, if queued.
    pub fn entry(&self, player: &P) -> Option<&QueueEntry<P>> {
        let key = self.index.get(player)?;
        self.queues.get(key)?.iter().find(|e| &e.player == player)
    }

    /// How many wait in queue `key`.
    pub fn len(&self, key: &K) -> usize {
        self.queues.get(key).map_or(0, Vec::len)
    }

    /// How many wait in all queues together.
    pub fn total(&self) -> usize {
        self.index.len()
    }

    /// Whether nobody waits anywhere.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Every non-empty queue with its size, in key order (for the lobby's
    /// `queues` counts and the queue-length metric).
    pub fn sizes(&self) -> impl Iterator<Item = (&K, usize)> + '_ {
        self.queues.iter().map(|(k, q)| (k, q.len()))
    }

    /// The entries of queue `key` in arrival order.
    pub fn entries(&self, key: &K) -> &[QueueEntry<P>] {
        self.queues.get(key).map_or(&[], Vec::as_slice)
    }

    /// How many others wait, in `player`'s queue and elsewhere; `None` if the
    /// player is not queued.
    pub fn others_waiting(&self, player: &P) -> Option<OthersWaiting> {
        let key = self.index.get(player)?;
        let same = self.len(key).saturating_sub(1);
        Some(OthersWaiting {
            same_queue: same,
            other_queues: self.total() - same - 1,
        })
    }

    /// Whether a wave at `now` would pair at least two players in queue `key`.
    pub fn has_ready_pair(&self, key: &K, now: u64) -> bool {
        self.queues
            .get(key)
            .is_some_and(|q| !self.select(key, q, now).is_empty())
    }

    fn select(&self, key: &K, queue: &[QueueEntry<P>], now: u64) -> Vec<(usize, usize)> {
        let candidates: Vec<Candidate<'_, P>> = queue
            .iter()
            .map(|e| Candidate {
                player: &e.player,
                rating: e.rating,
                waited_ms: now.saturating_sub(e.joined_at),
            })
            .collect();
        select_pairs(&candidates, key.rated(), &self.config.widening)
    }

    /// Runs one pairing wave over every queue at time `now`: the matches
    /// made, their players removed from the queues and their sides
    /// recorded. Matches come in key order, then in the order made.
    pub fn wave(&mut self, now: u64) -> Vec<Match<K, P>> {
        let keys: Vec<K> = self.queues.keys().cloned().collect();
        let mut matches = Vec::new();
        for key in keys {
            matches.extend(self.wave_for(&key, now));
        }
        matches
    }

    /// Runs a pairing wave over queue `key` alone (right after a join that
    /// reported [`Joined::ready`]).
    pub fn wave_for(&mut self, key: &K, now: u64) -> Vec<Match<K, P>> {
        let Some(queue) = self.queues.get(key) else {
            return Vec::new();
        };
        let pairs = self.select(key, queue, now);
        if pairs.is_empty() {
            return Vec::new();
        }
        let queue = self.queues.remove(key).expect("queue exists");
        let mut slots: Vec<Option<QueueEntry<P>>> = queue.into_iter().map(Some).collect();
        let mut matches = Vec::with_capacity(pairs.len());
        for (i, j) in pairs {
            let a = slots[i].take().expect("each entry in one pair");
            let b = slots[j].take().expect("each entry in one pair");
            self.index.remove(&a.player);
            self.index.remove(&b.player);
            let (first, second) = if self
                .sides
                .a_takes_first(&a.player, &b.player, &mut self.rng)
            {
                (a, b)
            } else {
                (b, a)
            };
            self.sides.record(&first.player, Side::First);
            self.sides.record(&second.player, Side::Second);
            let seat = |e: QueueEntry<P>| Seat {
                waited_ms: now.saturating_sub(e.joined_at),
                rating: e.rating,
                player: e.player,
            };
            let rating_gap = (first.rating - second.rating).abs();
            matches.push(Match {
                key: key.clone(),
                first: seat(first),
                second: seat(second),
                rating_gap,
            });
        }
        let rest: Vec<QueueEntry<P>> = slots.into_iter().flatten().collect();
        if !rest.is_empty() {
            self.queues.insert(key.clone(), rest);
        }
        matches
    }

    /// Notes that `player` played `side` in a game not made here (a room, a
    /// rematch), so side alternation takes it into account.
    pub fn record_side(&mut self, player: &P, side: Side) {
        self.sides.record(player, side);
    }

    /// The side `player` had last, as far as this model remembers.
    pub fn last_side(&self, player: &P) -> Option<Side> {
        self.sides.last(player)
    }

    /// Forgets `player`'s side history (to bound memory for players gone for good).
    pub fn forget_sides(&mut self, player: &P) {
        self.sides.forget(player);
    }
}
