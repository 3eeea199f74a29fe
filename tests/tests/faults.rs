//! The fault bench's short run (issue 25): two seeds of four fault episodes each against a
//! three-node cluster, and the checker must find nothing. The long soak is
//! `stoa-faults` (see docs/cluster.md).

use stoa_tests::bench::{self, Config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checker_finds_nothing_under_faults() {
    let mut failed = Vec::new();
    for seed in [1, 2] {
        let config = Config {
            seed,
            episodes: 4,
            ..Config::default()
        };
        let report = bench::run(&config).await;
        println!("{report}");
        if report.failed() {
            failed.push(format!(
                "seed {seed}: {}",
                report.failed_checks().join(", ")
            ));
        }
    }
    assert!(failed.is_empty(), "the fault bench found: {failed:?}");
}
