//! `stoa-faults`: the fault bench (issue 25). Starts a cluster of `stoa-server` nodes over
//! one private Redis (each node through its own fault proxy), plays games on it while a
//! seeded nemesis kills, pauses and partitions nodes and restarts Redis, then checks that
//! no acknowledged action was lost, no refused one applied, no two documents exist for one
//! version, no game ended twice and no game got stuck. Exits 1 when any check fails.
//!
//! ```text
//! cargo run --release -p stoa-tests --bin stoa-faults -- --seed 1 --runs 10 --episodes 20
//! cargo run --release -p stoa-tests --bin stoa-faults -- --sentinel --min-replicas 1 --nodes 2
//! ```
//!
//! With `--sentinel` the nodes follow a primary and its replica through three Sentinels
//! and the nemesis fails the primary over (kill -9, switchover, replication cut).
#![forbid(unsafe_code)]

use std::time::Duration;

use clap::Parser;
use stoa_tests::bench::{self, Config};

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Stoa's fault bench: a seeded nemesis against a real cluster, then a checker")]
struct Cli {
    /// Seed of the first run (a run is reproduced by its seed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Runs, with consecutive seeds from --seed (each on a fresh cluster).
    #[arg(long, default_value_t = 1)]
    runs: u64,
    /// Fault episodes per run.
    #[arg(long, default_value_t = 10)]
    episodes: usize,
    /// Server nodes.
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Concurrent games.
    #[arg(long, default_value_t = 12)]
    games: usize,
    /// The nodes' --lease-ms.
    #[arg(long, default_value_t = 2_000)]
    lease_ms: u64,
    /// How long a client waits for an answer before moving to another node, ms.
    #[arg(long, default_value_t = 3_000)]
    answer_timeout_ms: u64,
    /// Sentinel mode: the nodes run `--redis-sentinel` over a primary, a replica and three
    /// Sentinels, and the faults are a failover's (plus kill and pause of a node).
    #[arg(long)]
    sentinel: bool,
    /// Sentinel mode: the nodes' `--redis-min-replicas` (0: lost acknowledged moves are
    /// reported, not failed).
    #[arg(long, default_value_t = 1)]
    min_replicas: u32,
    /// Only these fault kinds, comma-separated (kill, pause, blackhole, cut, delay,
    /// redis-restart; in Sentinel mode kill, pause, primary-kill, switchover, replica-cut).
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// List every failure (by default the first 12 of each check).
    #[arg(long)]
    all: bool,
    /// The stoa-server binary (default: the workspace's, built on demand).
    #[arg(long, env = "STOA_SERVER_BIN")]
    server_bin: Option<std::path::PathBuf>,
}

fn main() {
    let cli = Cli::parse();
    // The bench starts nodes through `Server`, which reads this variable.
    match &cli.server_bin {
        Some(bin) => std::env::set_var("STOA_SERVER_BIN", bin),
        None => stoa_tests::build_binaries(),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let kinds = bench::nemesis::kinds(cli.sentinel, &cli.faults);
    if kinds.is_empty() {
        eprintln!("--faults names no fault kind of this mode");
        std::process::exit(2);
    }
    let mut failed = Vec::new();
    let mut lost = Vec::new();
    for seed in cli.seed..cli.seed + cli.runs {
        let config = Config {
            seed,
            episodes: cli.episodes,
            nodes: cli.nodes,
            games: cli.games,
            lease_ms: cli.lease_ms,
            answer_timeout: Duration::from_millis(cli.answer_timeout_ms),
            min_replicas: cli.sentinel.then_some(cli.min_replicas),
            only: cli.faults.clone(),
        };
        let mut report = runtime.block_on(bench::run(&config));
        if cli.all {
            report.listed = usize::MAX;
        }
        println!("{report}");
        if cli.sentinel && cli.min_replicas == 0 {
            lost.push(format!("seed {seed}: {}", report.lost_moves()));
        }
        if report.failed() {
            failed.push(format!(
                "seed {seed}: {}",
                report.failed_checks().join(", ")
            ));
        }
    }
    if !lost.is_empty() {
        println!("acknowledged moves lost: {}", lost.join(", "));
    }
    if cli.runs > 1 {
        println!("{} of {} runs failed", failed.len(), cli.runs);
    }
    for f in &failed {
        println!("  {f}");
    }
    std::process::exit(if failed.is_empty() { 0 } else { 1 });
}
