//! Criterion benchmarks of the akunur engine (perft from the start; figures in docs/performance.md).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use stoa_protocol::akunur::{Akunur, Options};
use stoa_protocol::Game;

/// A movement-phase position from a random game (12 stones each, every token in place).
const MIDGAME: &str =
    "LLL../L.L..D/..L..../...D..D./.....L.../..L...D./..L..../.....D/.L.D. l 12,12 111111 0,0 0 0";

fn benches(c: &mut Criterion) {
    let start = Akunur::start(&Options::default());
    assert_eq!(start.perft(2), 2256);
    c.bench_function("akunur perft(2) from start", |b| {
        b.iter(|| black_box(&start).perft(2))
    });
    c.bench_function("akunur perft(3) from start", |b| {
        b.iter(|| black_box(&start).perft(3))
    });
    let mid = Akunur::from_position(&Options::default(), MIDGAME).unwrap();
    c.bench_function("akunur perft(3) midgame", |b| {
        b.iter(|| black_box(&mid).perft(3))
    });
}

criterion_group!(akunur, benches);
criterion_main!(akunur);
