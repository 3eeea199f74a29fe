//! Criterion benchmarks of the akron engine (perft from the start; figures in docs/performance.md).

use criterion::{criterion_group, criterion_main, Criterion};
use stoa_protocol::akron::{Akron, Options};
use stoa_protocol::Game;

fn start(size: u32) -> Akron {
    Akron::start(&Akron::validate_options(Options::with_size(size)).expect("valid size"))
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("akron");
    group.sample_size(10);
    let g4 = start(4);
    group.bench_function("perft 4x4 depth 5", |b| b.iter(|| g4.perft(5)));
    let g3 = start(3);
    group.bench_function("perft 3x3 depth 4", |b| b.iter(|| g3.perft(4)));
    let g9 = start(9);
    group.bench_function("perft 9x9 depth 3", |b| b.iter(|| g9.perft(3)));
    // A mid-game position with raised balls: move generation with groups and drop chains.
    let mid = Akron::from_position(
        &Akron::validate_options(Options::with_size(8)).expect("valid size"),
        "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6",
    )
    .expect("valid position");
    group.bench_function("legal actions 8x8 mid-game", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            out.clear();
            mid.legal_actions(&mut out);
            out.len()
        })
    });
    group.bench_function("perft 8x8 mid-game depth 2", |b| b.iter(|| mid.perft(2)));
    group.finish();
}

criterion_group!(akron, benches);
criterion_main!(akron);
