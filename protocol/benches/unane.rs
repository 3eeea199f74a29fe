//! Criterion benchmarks of the unane engine (perft from the start; figures in docs/performance.md).
//!
//! The headline is 8x7 perft(4) from the start with the pie rule (61,386,953 sequences);
//! the no-swap variant (start loaded at ply 2: 60,630,319, the figure the issue quotes) and a
//! large board are measured alongside.

use criterion::{criterion_group, criterion_main, Criterion};
use stoa_protocol::unane::{Options, Unane};
use stoa_protocol::Game;

fn benches(c: &mut Criterion) {
    let start = Unane::start(&Options::default());
    let no_swap = Unane::from_position(
        &Options::default(),
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw b 2",
    )
    .expect("start at ply 2");
    let big = Unane::start(&Options {
        width: 16,
        height: 15,
    });
    assert_eq!(start.perft(4), 61_386_953);
    assert_eq!(no_swap.perft(4), 60_630_319);

    let mut group = c.benchmark_group("unane");
    group.sample_size(10);
    group.bench_function("perft4_8x7_start", |b| b.iter(|| start.perft(4)));
    group.bench_function("perft4_8x7_no_swap", |b| b.iter(|| no_swap.perft(4)));
    group.bench_function("perft3_16x15_start", |b| b.iter(|| big.perft(3)));
    group.bench_function("generic_perft3_8x7_start", |b| {
        b.iter(|| stoa_protocol::perft::perft(&start, 3))
    });
    group.finish();
}

criterion_group!(unane, benches);
criterion_main!(unane);
