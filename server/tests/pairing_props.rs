//! Property test: whatever the sequence of joins, leaves and waves, matches
//! pair two distinct players of one queue, nobody is in two matches, and a
//! matched player has left the queues.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use stoa_server::domain::pairing::{Pairing, PairingConfig, PairingKey};

/// A small key: a queue number and a rated flag.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct K(u8, bool);

impl PairingKey for K {
    fn rated(&self) -> bool {
        self.1
    }
}

#[derive(Clone, Debug)]
enum Op {
    Join { player: u8, queue: u8, rating: f64 },
    Leave { player: u8 },
    Wave,
    WaveFor { queue: u8 },
    Advance { ms: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..12, 0u8..4, 800.0f64..2800.0)
            .prop_map(|(player, queue, rating)| Op::Join { player, queue, rating }),
        1 => (0u8..12).prop_map(|player| Op::Leave { player }),
        2 => Just(Op::Wave),
        1 => (0u8..4).prop_map(|queue| Op::WaveFor { queue }),
        2 => (0u64..8_000).prop_map(|ms| Op::Advance { ms }),
    ]
}

fn key(queue: u8) -> K {
    // Queues 0 and 1 are rated, 2 and 3 casual.
    K(queue, queue < 2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn matches_are_sound(ops in proptest::collection::vec(op(), 1..120), seed in any::<u64>()) {
        let mut p: Pairing<K, u8> = Pairing::new(PairingConfig::default(), seed);
        let mut now = 0u64;
        // Our own model of who waits where.
        let mut waiting: HashMap<u8, K> = HashMap::new();
        for op in ops {
            let was_wave = matches!(op, Op::Wave);
            let matches = match op {
                Op::Join { player, queue, rating } => {
                    let joined = p.join(key(queue), player, rating, now);
                    prop_assert_eq!(joined.previous, waiting.insert(player, key(queue)));
                    prop_assert_eq!(joined.ready, p.has_ready_pair(&key(queue), now));
                    vec![]
                }
                Op::Leave { player } => {
                    let left = p.leave(&player).map(|(k, _)| k);
                    prop_assert_eq!(left, waiting.remove(&player));
                    vec![]
                }
                Op::Wave => p.wave(now),
                Op::WaveFor { queue } => p.wave_for(&key(queue), now),
                Op::Advance { ms } => {
                    now += ms;
                    vec![]
                }
            };
            let mut seen = HashSet::new();
            for m in &matches {
                let (a, b) = (m.first.player, m.second.player);
                prop_assert_ne!(a, b, "paired with themself");
                prop_assert!(seen.insert(a) && seen.insert(b), "in two matches");
                prop_assert_eq!(waiting.remove(&a), Some(m.key.clone()));
                prop_assert_eq!(waiting.remove(&b), Some(m.key.clone()));
                prop_assert_eq!(p.queue_of(&a), None);
                prop_assert_eq!(p.queue_of(&b), None);
                prop_assert!((m.rating_gap - (m.first.rating - m.second.rating).abs()).abs() < 1e-9);
                if m.key.rated() {
                    // Either both windows covered the gap, or one of them had
                    // waited long enough to accept anyone.
                    let w = p.config().widening;
                    let (wa, wb) = (m.first.waited_ms, m.second.waited_ms);
                    prop_assert!(
                        (m.rating_gap <= w.gap(wa) && m.rating_gap <= w.gap(wb))
                            || w.is_unlimited(wa) || w.is_unlimited(wb)
                    );
                }
            }
            // The model and ours agree on every queue.
            prop_assert_eq!(p.total(), waiting.len());
            for (player, k) in &waiting {
                prop_assert_eq!(p.queue_of(player), Some(k));
            }
            // A wave leaves no pair behind that it could have made.
            if was_wave {
                for q in 0..4 {
                    prop_assert!(!p.has_ready_pair(&key(q), now), "queue {q} left a pair");
                }
            }
        }
        // Eventually everyone with a partner in their queue is paired.
        now += 60_000;
        p.wave(now);
        for q in 0..4 {
            prop_assert!(p.len(&key(q)) <= 1, "queue {q} still has {} waiting", p.len(&key(q)));
        }
    }
}
