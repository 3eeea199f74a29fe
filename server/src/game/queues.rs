//! The matchmaking queues of the node that runs matchmaking: who waits in which queue,
//! with what seat, and what each was last told.
//!
//! The queue model itself is pure and lives in [`crate::domain::pairing`]; this module keeps one
//! [`Pairing`] behind a mutex with the waiting players' seats, and wakes the pairing task
//! ([`crate::services::matchmaker`]) when a join makes a pair possible. It is state without I/O, so
//! both the single node's and the cluster's queue routing ([`crate::services::topology::QueueRouting`])
//! can hold it.

use parking_lot::Mutex;
use std::collections::HashMap;

use serde_json::{json, Value};
use stoa_protocol::wire::{SeatPlayer, ServerMessage};
use tokio::sync::Notify;

use crate::config::Config;
use crate::domain::pairing::{Joined, Pairing, PairingConfig, QueueKey, Widening};
use crate::ids::PlayerId;

/// A pairing made by a wave, with what is needed to start its game.
#[derive(Clone, Debug, PartialEq)]
pub struct Made {
    /// The queue (and so the game settings).
    pub key: QueueKey,
    /// The players by side index (the first-acting side first).
    pub players: [SeatPlayer; 2],
    /// Their ratings in the queue's kind when paired, by side index.
    pub ratings: [f64; 2],
    /// How long each waited, ms, by side index.
    pub waited_ms: [u64; 2],
    /// The absolute rating difference at pairing.
    pub rating_gap: f64,
}

/// One waiting player's extra state (the pairing model keeps only ids and ratings).
#[derive(Clone, Debug)]
struct Waiting {
    seat: SeatPlayer,
    /// The (position, same_queue, other_queues) last sent in `queue.status`.
    told: Option<(usize, usize, usize)>,
}

#[derive(Debug)]
struct State {
    pairing: Pairing<QueueKey, String>,
    waiting: HashMap<String, Waiting>,
}

/// The matchmaking queues.
#[derive(Debug)]
pub struct Matchmaker {
    state: Mutex<State>,
    wake: Notify,
    epoch: tokio::time::Instant,
}

/// The widening schedule from the configuration.
pub fn widening(config: &Config) -> Widening {
    Widening {
        initial_gap: config.queue_gap_initial,
        step_gap: config.queue_gap_step,
        step_ms: config.queue_gap_step_ms.max(1),
        unlimited_after_ms: config.queue_gap_unlimited_ms,
    }
}

impl Matchmaker {
    /// Empty queues with this widening schedule; side coin flips are seeded randomly.
    pub fn new(widening: Widening) -> Self {
        Self::with_seed(widening, rand::random())
    }

    /// Empty queues with a fixed seed for the side coin flips (tests).
    pub fn with_seed(widening: Widening, seed: u64) -> Self {
        let config = PairingConfig {
            widening,
            ..PairingConfig::default()
        };
        Matchmaker {
            state: Mutex::new(State {
                pairing: Pairing::new(config, seed),
                waiting: HashMap::new(),
            }),
            wake: Notify::new(),
            epoch: tokio::time::Instant::now(),
        }
    }

    /// Resolves when a join has made a pair possible (the pairing task runs a wave then).
    pub async fn pair_possible(&self) {
        self.wake.notified().await
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// The matchmaker's monotonic time, ms since it was created (tokio's clock, so paused
    /// tokio tests can advance it).
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Puts a player in queue `key` at time `now`; wakes the pairing task at once when a
    /// pair has become possible.
    pub fn join(&self, key: QueueKey, seat: SeatPlayer, rating: f64, now: u64) -> Joined<QueueKey> {
        let joined = {
            let mut s = self.lock();
            let joined = s.pairing.join(key, seat.id.clone(), rating, now);
            let told = match s.waiting.get(&seat.id) {
                // Same queue again: keep what the player was told.
                Some(w) if joined.previous.as_ref() == s.pairing.queue_of(&seat.id) => w.told,
                _ => None,
            };
            s.waiting.insert(seat.id.clone(), Waiting { seat, told });
            joined
        };
        if joined.ready {
            self.wake.notify_one();
        }
        joined
    }

    /// Notes the sides of a game made outside the queues (a room, a rematch), so the next
    /// pairing alternates sides for these players too.
    pub fn record_sides(&self, players: [&str; 2]) {
        let mut s = self.lock();
        s.pairing
            .record_side(&players[0].to_string(), stoa_protocol::Side::First);
        s.pairing
            .record_side(&players[1].to_string(), stoa_protocol::Side::Second);
    }

    /// Empties every queue (this node stopped running the cluster's matchmaking; the nodes
    /// send their waiting players to the new matchmaker).
    pub fn clear(&self) {
        let mut s = self.lock();
        let players: Vec<String> = s.waiting.keys().cloned().collect();
        for p in players {
            s.waiting.remove(&p);
            s.pairing.leave(&p);
        }
    }

    /// Takes a player out of its queue; `false` when it was not queued.
    pub fn leave(&self, player_id: &PlayerId) -> bool {
        let mut s = self.lock();
        s.waiting.remove(player_id.as_str());
        s.pairing.leave(&player_id.to_string()).is_some()
    }

    /// The queue a player waits in.
    pub fn queue_of(&self, player_id: &PlayerId) -> Option<QueueKey> {
        self.lock()
            .pairing
            .queue_of(&player_id.to_string())
            .cloned()
    }

    /// Runs one pairing wave over every queue at time `now`.
    pub fn wave(&self, now: u64) -> Vec<Made> {
        let mut s = self.lock();
        let matches = s.pairing.wave(now);
        matches
            .into_iter()
            .map(|m| {
                let mut seat = |p: &String| {
                    s.waiting
                        .remove(p)
                        .map(|w| w.seat)
                        .unwrap_or_else(|| SeatPlayer {
                            id: p.clone(),
                            name: p.clone(),
                            rating: None,
                            bot: false,
                        })
                };
                let players = [seat(&m.first.player), seat(&m.second.player)];
                Made {
                    key: m.key,
                    players,
                    ratings: [m.first.rating, m.second.rating],
                    waited_ms: [m.first.waited_ms, m.second.waited_ms],
                    rating_gap: m.rating_gap,
                }
            })
            .collect()
    }

    /// Every non-empty queue with its size, in key order (lobby, metrics).
    pub fn counts(&self) -> Vec<(QueueKey, usize)> {
        self.lock()
            .pairing
            .sizes()
            .map(|(k, n)| (k.clone(), n))
            .collect()
    }

    /// The `queue.status` messages due at `now`: for every waiting player whose position or
    /// counts changed since last told (or who was never told), by player id.
    pub fn statuses(&self, now: u64) -> Vec<(String, ServerMessage)> {
        let mut s = self.lock();
        let total = s.pairing.total();
        let mut due = Vec::new();
        let keys: Vec<QueueKey> = s.pairing.sizes().map(|(k, _)| k.clone()).collect();
        for key in keys {
            let entries: Vec<(String, u64)> = s
                .pairing
                .entries(&key)
                .iter()
                .map(|e| (e.player.clone(), now.saturating_sub(e.joined_at)))
                .collect();
            let len = entries.len();
            for (i, (player, waited_ms)) in entries.into_iter().enumerate() {
                let now_told = (i + 1, len - 1, total - len);
                let Some(w) = s.waiting.get_mut(&player) else {
                    continue;
                };
                if w.told == Some(now_told) {
                    continue;
                }
                w.told = Some(now_told);
                due.push((
                    player,
                    ServerMessage::QueueStatus {
                        queue: describe(&key),
                        position: now_told.0 as u64,
                        same_queue: now_told.1 as u64,
                        other_queues: now_told.2 as u64,
                        waited_ms,
                    },
                ));
            }
        }
        due
    }
}

/// The queue as `queued.queue` and `queue.status` show it:
/// `{"kind","options","clock","rated"}` with the normalised settings.
pub fn describe(key: &QueueKey) -> Value {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    json!({
        "kind": key.kind,
        "options": parse(&key.options),
        "clock": parse(&key.clock),
        "rated": key.rated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(id: &str) -> SeatPlayer {
        SeatPlayer {
            id: id.into(),
            name: id.into(),
            rating: None,
            bot: false,
        }
    }

    fn key(kind: &str, rated: bool) -> QueueKey {
        QueueKey::new(kind, &json!({}), &json!({"kind":"none"}), rated)
    }

    #[test]
    fn sides_of_room_games_count_for_alternation() {
        // Both had the first side in a room game, then "b" had the second in another: "a" is
        // owed the second side now, so "b" gets the first.
        let mm = Matchmaker::with_seed(Widening::default(), 3);
        mm.record_sides(["a", "c"]);
        mm.record_sides(["x", "b"]);
        mm.join(key("unane", false), seat("a"), 1500.0, 0);
        mm.join(key("unane", false), seat("b"), 1500.0, 0);
        let made = mm.wave(0);
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].players[0].id, "b");
        assert_eq!(made[0].players[1].id, "a");

        // The mirror image, with the same seed and joins: only the history differs.
        let mm = Matchmaker::with_seed(Widening::default(), 3);
        mm.record_sides(["b", "c"]);
        mm.record_sides(["x", "a"]);
        mm.join(key("unane", false), seat("a"), 1500.0, 0);
        mm.join(key("unane", false), seat("b"), 1500.0, 0);
        let made = mm.wave(0);
        assert_eq!(made[0].players[0].id, "a");
        assert_eq!(made[0].players[1].id, "b");
    }

    #[test]
    fn far_ratings_pair_once_the_window_has_widened_on_virtual_time() {
        let mm = Matchmaker::with_seed(Widening::default(), 7);
        let t0 = 1_000;
        assert!(!mm.join(key("staku", true), seat("a"), 1500.0, t0).ready);
        // 700 points apart: outside 100 + 50/2 s until 12 s of waiting, but nobody waits
        // more than the 30 s of the default schedule.
        assert!(!mm.join(key("staku", true), seat("b"), 2200.0, t0).ready);
        assert!(mm.wave(t0).is_empty());
        assert!(mm.wave(t0 + 23_999).is_empty(), "gap 650 < 700 at 23.999 s");
        let made = mm.wave(t0 + 24_000);
        assert_eq!(made.len(), 1, "gap 700 reached at 24 s");
        let m = &made[0];
        let mut ids: Vec<&str> = m.players.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(m.rating_gap, 700.0);
        assert_eq!(m.waited_ms, [24_000, 24_000]);
        assert!(mm.counts().is_empty());
        assert!(mm.queue_of(&"a".into()).is_none());
    }

    #[test]
    fn incompatible_keys_never_pair_and_leave_removes() {
        let mm = Matchmaker::with_seed(Widening::default(), 1);
        let t = 0;
        mm.join(key("staku", false), seat("a"), 1500.0, t);
        mm.join(key("akron", false), seat("b"), 1500.0, t);
        mm.join(key("staku", true), seat("c"), 1500.0, t);
        mm.join(
            QueueKey::new(
                "staku",
                &json!({"max_stack":2}),
                &json!({"kind":"none"}),
                false,
            ),
            seat("d"),
            1500.0,
            t,
        );
        assert!(mm.wave(t + 3_600_000).is_empty());
        assert_eq!(mm.counts().len(), 4);
        assert!(mm.leave(&"a".into()));
        assert!(!mm.leave(&"a".into()));
        assert_eq!(mm.counts().len(), 3);
        // A compatible newcomer for c is ready at once and pairs.
        assert!(mm.join(key("staku", true), seat("e"), 1510.0, t).ready);
        let made = mm.wave(t);
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].rating_gap, 10.0);
    }

    #[test]
    fn statuses_are_sent_once_per_change() {
        let mm = Matchmaker::with_seed(Widening::default(), 1);
        mm.join(key("staku", false), seat("a"), 1500.0, 0);
        let s = mm.statuses(500);
        assert_eq!(s.len(), 1);
        assert_eq!(
            serde_json::to_value(&s[0].1).unwrap(),
            json!({"t":"queue.status","queue":{"kind":"staku","options":{},
                "clock":{"kind":"none"},"rated":false},"position":1,"same_queue":0,
                "other_queues":0,"waited_ms":500})
        );
        assert!(mm.statuses(1_000).is_empty(), "nothing changed");
        mm.join(key("akron", false), seat("b"), 1500.0, 1_000);
        let s = mm.statuses(1_500);
        let told: Vec<(&str, u64)> = s
            .iter()
            .map(|(p, m)| match m {
                ServerMessage::QueueStatus { other_queues, .. } => (p.as_str(), *other_queues),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(told.len(), 2);
        assert!(told.contains(&("a", 1)) && told.contains(&("b", 1)));
    }
}
