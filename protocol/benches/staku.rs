//! Criterion benchmarks of the staku engine (perft from the start; figures in docs/performance.md).

use criterion::{criterion_group, criterion_main, Criterion};
use stoa_protocol::staku::{Options, Staku};
use stoa_protocol::Game;

fn benches(c: &mut Criterion) {
    let three = Staku::start(&Options { max_stack: 3 });
    let two = Staku::start(&Options { max_stack: 2 });
    let mut group = c.benchmark_group("staku");
    group.sample_size(10);
    group.bench_function("perft2_start", |b| {
        b.iter(|| assert_eq!(three.perft(2), 145_780))
    });
    group.bench_function("perft3_start", |b| {
        b.iter(|| assert_eq!(three.perft(3), 60_337_080))
    });
    group.bench_function("perft3_start_max_stack_2", |b| {
        b.iter(|| assert_eq!(two.perft(3), 8_103_420))
    });
    group.bench_function("legal_actions_start", |b| {
        let mut out = Vec::with_capacity(512);
        b.iter(|| {
            out.clear();
            three.legal_actions(&mut out);
            out.len()
        })
    });
    group.finish();
}

criterion_group!(staku, benches);
criterion_main!(staku);
