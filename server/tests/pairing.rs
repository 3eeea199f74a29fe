//! The pairing model on virtual time: compatibility, rating windows, leaving,
//! self-pairing and side assignment.

use serde_json::{json, Value};
use stoa_server::domain::pairing::{
    canonical_json, Match, OthersWaiting, Pairing, PairingConfig, QueueKey, Side, Widening,
};

type P = Pairing<QueueKey, String>;

fn pairing() -> P {
    Pairing::new(PairingConfig::default(), 7)
}

fn key_with(kind: &str, options: Value, clock: Value, rated: bool) -> QueueKey {
    QueueKey::new(kind, &options, &clock, rated)
}

fn blitz(rated: bool) -> QueueKey {
    key_with(
        "staku",
        json!({"size": 9}),
        json!({"kind": "fischer", "initial_ms": 180000, "increment_ms": 2000}),
        rated,
    )
}

fn id(s: &str) -> String {
    s.to_owned()
}

fn players(m: &Match<QueueKey, String>) -> [String; 2] {
    let mut v = [m.first.player.clone(), m.second.player.clone()];
    v.sort();
    v
}

#[test]
fn two_compatible_players_are_paired_at_once() {
    for rated in [false, true] {
        let mut p = pairing();
        let k = blitz(rated);
        let a = p.join(k.clone(), id("a"), 1500.0, 1_000);
        assert_eq!((a.position, a.previous.clone(), a.ready), (1, None, false));
        assert!(p.wave(1_000).is_empty());
        let b = p.join(k.clone(), id("b"), 1550.0, 1_200);
        assert_eq!(b.position, 2);
        assert!(b.ready, "a compatible pair is ready: run a wave now");
        let matches = p.wave_for(&k, 1_200);
        assert_eq!(matches.len(), 1);
        let m = &matches[0];
        assert_eq!(players(m), [id("a"), id("b")]);
        assert_eq!(m.key, k);
        assert_eq!(m.rating_gap, 50.0);
        let waited = |who: &str| {
            if m.first.player == who {
                m.first.waited_ms
            } else {
                m.second.waited_ms
            }
        };
        assert_eq!((waited("a"), waited("b")), (200, 0));
        assert!(p.is_empty() && p.len(&k) == 0);
        assert_eq!(p.queue_of(&id("a")), None);
        assert!(p.wave(5_000).is_empty(), "nobody is paired twice");
    }
}

#[test]
fn incompatible_settings_are_never_paired() {
    let base = || {
        (
            "staku",
            json!({"size": 9}),
            json!({"kind": "fischer", "initial_ms": 180000, "increment_ms": 2000}),
            true,
        )
    };
    let variants: Vec<QueueKey> = {
        let (k, o, c, r) = base();
        vec![
            key_with("akron", o.clone(), c.clone(), r),
            key_with(k, json!({"size": 11}), c.clone(), r),
            key_with(k, o.clone(), json!({"kind": "none"}), r),
            key_with(
                k,
                o.clone(),
                json!({"kind": "fischer", "initial_ms": 180000, "increment_ms": 3000}),
                r,
            ),
            key_with(k, o, c, false),
        ]
    };
    for other in variants {
        let mut p = pairing();
        let (k, o, c, r) = base();
        let mine = key_with(k, o, c, r);
        assert_ne!(mine, other);
        p.join(mine.clone(), id("a"), 1500.0, 0);
        let j = p.join(other.clone(), id("b"), 1500.0, 0);
        assert!(!j.ready);
        for t in (0..=120_000).step_by(1_000) {
            assert!(p.wave(t).is_empty(), "{mine} paired with {other}");
        }
        assert_eq!((p.len(&mine), p.len(&other)), (1, 1));
        assert_eq!(
            p.others_waiting(&id("a")),
            Some(OthersWaiting {
                same_queue: 0,
                other_queues: 1
            })
        );
    }
}

#[test]
fn equal_settings_written_differently_share_a_queue() {
    let a = key_with(
        "staku",
        json!({"size": 9, "komi": 0.5}),
        json!({"kind": "delay", "initial_ms": 60000, "delay_ms": 5000.0}),
        false,
    );
    let b = key_with(
        "staku",
        serde_json::from_str(r#"{"komi":0.5,"size":9.0}"#).unwrap(),
        serde_json::from_str(r#"{"delay_ms":5000,"kind":"delay","initial_ms":60000}"#).unwrap(),
        false,
    );
    assert_eq!(a, b);
    let mut p = pairing();
    p.join(a, id("x"), 1500.0, 0);
    assert!(p.join(b, id("y"), 1500.0, 0).ready);
    assert_eq!(p.wave(0).len(), 1);
    assert_eq!(
        canonical_json(&json!({"b": [1.0, {"d": 2, "c": null}], "a": "s"})),
        r#"{"a":"s","b":[1,{"c":null,"d":2}]}"#
    );
}

#[test]
fn unrated_queues_pair_in_arrival_order() {
    let mut p = pairing();
    let k = blitz(false);
    for (i, r) in [1000.0, 2600.0, 1500.0, 1510.0, 1400.0]
        .into_iter()
        .enumerate()
    {
        p.join(k.clone(), format!("p{i}"), r, i as u64);
    }
    let m = p.wave(10);
    let got: Vec<_> = m.iter().map(players).collect();
    assert_eq!(got, vec![[id("p0"), id("p1")], [id("p2"), id("p3")]]);
    assert_eq!(p.entries(&k).len(), 1);
    assert_eq!(p.entries(&k)[0].player, "p4");
}

#[test]
fn rated_queues_prefer_the_closest_ratings() {
    let mut p = pairing();
    let k = blitz(true);
    p.join(k.clone(), id("a"), 1500.0, 0);
    p.join(k.clone(), id("b"), 1590.0, 0);
    p.join(k.clone(), id("c"), 1510.0, 0);
    let m = p.wave(0);
    assert_eq!(m.len(), 1);
    assert_eq!(players(&m[0]), [id("a"), id("c")]);
    assert_eq!(m[0].rating_gap, 10.0);
    assert_eq!(p.queue_of(&id("b")), Some(&k));
}

#[test]
fn a_distant_player_is_paired_once_the_windows_have_widened_and_not_before() {
    let mut p = pairing();
    let k = blitz(true);
    p.join(k.clone(), id("low"), 1500.0, 0);
    assert!(!p.join(k.clone(), id("high"), 2000.0, 0).ready);
    // 500 points: 100 + 50 × 8 steps of 2 s = 16 s.
    assert_eq!(Widening::default().wait_to_cover(500.0), 16_000);
    for t in (0..16_000).step_by(500) {
        assert!(!p.has_ready_pair(&k, t));
        assert!(p.wave(t).is_empty(), "paired too early at {t} ms");
    }
    assert!(p.has_ready_pair(&k, 16_000));
    let m = p.wave(16_000);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].rating_gap, 500.0);
}

#[test]
fn both_windows_must_accept_a_pair() {
    // The long waiter accepts 350 points after 10 s, but the newcomer asked
    // for a close game: they meet when the newcomer's window reaches 300.
    let mut p = pairing();
    let k = blitz(true);
    p.join(k.clone(), id("old"), 1500.0, 0);
    p.join(k.clone(), id("new"), 1800.0, 10_000);
    for t in (10_000..18_000).step_by(250) {
        assert!(p.wave(t).is_empty(), "paired at {t}");
    }
    assert_eq!(p.wave(18_000).len(), 1);
}

#[test]
fn an_outlier_in_a_busy_queue_is_paired_once_its_window_is_unlimited() {
    let mut p = pairing();
    let k = blitz(true);
    p.join(k.clone(), id("outlier"), 2900.0, 0);
    let mut n = 0;
    let mut t = 0;
    loop {
        // Two close newcomers every second: they pair among themselves.
        for r in [1500.0, 1505.0] {
            p.join(k.clone(), format!("n{n}"), r, t);
            n += 1;
        }
        let m = p.wave(t);
        if let Some(hit) = m
            .iter()
            .find(|m| m.first.player == "outlier" || m.second.player == "outlier")
        {
            assert_eq!(t, 30_000, "unlimited after 30 s, not before");
            assert_eq!(hit.rating_gap, 2900.0 - 1505.0, "with the closest newcomer");
            break;
        }
        assert_eq!(m.len(), 1);
        t += 1_000;
        assert!(t <= 30_000, "the outlier waited for ever");
    }
}

#[test]
fn widening_schedule() {
    let w = Widening::default();
    assert_eq!(w.gap(0), 100.0);
    assert_eq!(w.gap(1_999), 100.0);
    assert_eq!(w.gap(2_000), 150.0);
    assert_eq!(w.gap(29_999), 800.0);
    assert_eq!(w.gap(30_000), f64::INFINITY);
    assert!(!w.is_unlimited(29_999) && w.is_unlimited(30_000));
    assert_eq!(w.wait_to_cover(50.0), 0);
    assert_eq!(w.wait_to_cover(-120.0), 2_000);
    assert_eq!(w.wait_to_cover(800.0), 28_000);
    assert_eq!(w.wait_to_cover(801.0), 30_000);
}

#[test]
fn leaving_removes_the_player() {
    let mut p = pairing();
    let k = blitz(false);
    p.join(k.clone(), id("a"), 1500.0, 0);
    let (left_key, entry) = p.leave(&id("a")).expect("was queued");
    assert_eq!(
        (left_key, entry.player.as_str(), entry.joined_at),
        (k.clone(), "a", 0)
    );
    assert_eq!(p.leave(&id("a")), None);
    assert_eq!(p.len(&k), 0);
    assert_eq!(p.sizes().count(), 0, "empty queues disappear");
    assert!(!p.join(k.clone(), id("b"), 1500.0, 10).ready);
    assert!(p.wave(10).is_empty());
    // Disconnecting is the same call; the remaining player is alone again.
    p.join(k.clone(), id("c"), 1500.0, 20);
    p.leave(&id("c"));
    assert!(p.wave(20).is_empty());
    assert_eq!(p.others_waiting(&id("b")).unwrap().same_queue, 0);
    assert_eq!(p.others_waiting(&id("c")), None);
}

#[test]
fn one_player_on_two_connections_is_never_paired_with_themself() {
    for rated in [false, true] {
        let mut p = pairing();
        let k = blitz(rated);
        let first = p.join(k.clone(), id("me"), 1500.0, 0);
        let second = p.join(k.clone(), id("me"), 1500.0, 5_000);
        assert_eq!(second.previous, Some(k.clone()));
        assert_eq!((first.position, second.position), (1, 1));
        assert!(!second.ready);
        assert_eq!(p.len(&k), 1);
        assert_eq!(p.entry(&id("me")).unwrap().joined_at, 0, "place kept");
        for t in (0..=120_000).step_by(1_000) {
            assert!(p.wave(t).is_empty());
        }
        // Somebody else comes: one game, me against them.
        p.join(k.clone(), id("you"), 1500.0, 120_000);
        let m = p.wave(120_000);
        assert_eq!(m.len(), 1);
        assert_eq!(players(&m[0]), [id("me"), id("you")]);
    }
}

#[test]
fn joining_another_queue_moves_the_player() {
    let mut p = pairing();
    let (casual, rated) = (blitz(false), blitz(true));
    p.join(casual.clone(), id("a"), 1500.0, 0);
    p.join(casual.clone(), id("x"), 1500.0, 0);
    p.join(rated.clone(), id("b"), 1500.0, 0);
    let moved = p.join(rated.clone(), id("a"), 1500.0, 100);
    assert_eq!(moved.previous, Some(casual.clone()));
    assert_eq!(moved.position, 2);
    assert!(moved.ready);
    assert_eq!((p.len(&casual), p.len(&rated), p.total()), (1, 2, 3));
    let sizes: Vec<_> = p.sizes().map(|(k, n)| (k.clone(), n)).collect();
    assert_eq!(sizes.len(), 2);
    assert!(sizes.contains(&(casual, 1)) && sizes.contains(&(rated, 2)));
    assert_eq!(
        p.others_waiting(&id("a")),
        Some(OthersWaiting {
            same_queue: 1,
            other_queues: 1
        })
    );
}

#[test]
fn sides_alternate_for_a_pair_that_keeps_meeting() {
    let mut p = pairing();
    let k = blitz(false);
    let mut last_first: Option<String> = None;
    for round in 0..6u64 {
        p.join(k.clone(), id("a"), 1500.0, round * 100);
        p.join(k.clone(), id("b"), 1500.0, round * 100);
        let m = p.wave(round * 100);
        let first = m[0].first.player.clone();
        if let Some(prev) = &last_first {
            assert_ne!(
                &first, prev,
                "round {round}: the same player went first twice"
            );
        }
        last_first = Some(first);
    }
}

#[test]
fn the_player_who_went_first_last_time_goes_second() {
    for seed in 0..20 {
        let mut p: P = Pairing::new(PairingConfig::default(), seed);
        let k = blitz(false);
        p.record_side(&id("a"), Side::First);
        p.join(k.clone(), id("a"), 1500.0, 0);
        p.join(k.clone(), id("newcomer"), 1500.0, 0);
        let m = p.wave(0);
        assert_eq!(m[0].second.player, "a");
        assert_eq!(p.last_side(&id("a")), Some(Side::Second));
        assert_eq!(p.last_side(&id("newcomer")), Some(Side::First));
        // Both had Second last: both wish for First, a coin decides...
        p.record_side(&id("c"), Side::Second);
        p.record_side(&id("d"), Side::Second);
        // ...unless one has been Second more often lately.
        p.record_side(&id("e"), Side::First);
        p.record_side(&id("e"), Side::Second);
        p.record_side(&id("f"), Side::Second);
        p.record_side(&id("f"), Side::Second);
        p.join(k.clone(), id("e"), 1500.0, 1);
        p.join(k.clone(), id("f"), 1500.0, 1);
        let m = p.wave(1);
        assert_eq!(m[0].first.player, "f", "seed {seed}");
    }
}

#[test]
fn coin_flips_are_seeded() {
    let run = |seed| {
        let mut p: P = Pairing::new(PairingConfig::default(), seed);
        let k = blitz(false);
        (0..32)
            .map(|i| {
                p.join(k.clone(), format!("x{i}"), 1500.0, 0);
                p.join(k.clone(), format!("y{i}"), 1500.0, 0);
                p.wave(0)[0].first.player.starts_with('x')
            })
            .collect::<Vec<bool>>()
    };
    assert_eq!(run(42), run(42));
    let flips = run(42);
    assert!(flips.iter().any(|&f| f) && flips.iter().any(|&f| !f));
}

#[test]
fn waves_cover_every_queue_and_leave_odd_ones_waiting() {
    let mut p = pairing();
    let (casual, rated) = (blitz(false), blitz(true));
    for i in 0..5 {
        p.join(casual.clone(), format!("c{i}"), 1500.0, 0);
        p.join(rated.clone(), format!("r{i}"), 1500.0 + 10.0 * i as f64, 0);
    }
    let m = p.wave(0);
    assert_eq!(m.len(), 4);
    assert_eq!((p.len(&casual), p.len(&rated)), (1, 1));
    let alone = p.entries(&rated)[0].player.clone();
    assert_eq!(
        p.others_waiting(&alone),
        Some(OthersWaiting {
            same_queue: 0,
            other_queues: 1
        })
    );
}
