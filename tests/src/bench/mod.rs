//! The fault bench (issue 25): a cluster of real nodes over one real Redis, a workload of
//! players and spectators, and a nemesis that kills, pauses and cuts off nodes and restarts
//! Redis on a seeded schedule; at the end a checker compares everything the clients were
//! told and saw with the durable log. In the spirit of Jepsen and FoundationDB's
//! simulation tests, all on loopback: no containers, no root.
//!
//! One concept per module: [`cluster`] (nodes, proxies, Redis), [`nemesis`] (the
//! schedule), [`workload`] (the clients), [`client`] (a websocket client that never
//! panics), [`history`] (what happened), [`checker`] (what went wrong), [`report`] (the
//! table), [`rng`] (seeded randomness).
//!
//! A seed fixes the schedule (the faults, their order and holds) and every client's
//! choices; the interleaving of real processes is not deterministic, so a seed reproduces
//! a run's shape, and a bug it finds usually, not always.

pub mod checker;
pub mod client;
pub mod cluster;
pub mod history;
pub mod nemesis;
pub mod report;
pub mod rng;
pub mod workload;

use std::time::Duration;

use self::cluster::Cluster;
use self::history::History;
use self::report::Report;
use self::rng::Rng;
use self::workload::{Settings, Workload};

/// A run's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Seed of the schedule and of every client's choices.
    pub seed: u64,
    /// Fault episodes.
    pub episodes: usize,
    /// Server nodes.
    pub nodes: usize,
    /// Concurrent games.
    pub games: usize,
    /// The nodes' `--lease-ms`.
    pub lease_ms: u64,
    /// How long a request may stay unanswered before its client moves to another node.
    pub answer_timeout: Duration,
    /// Sentinel mode: the nodes follow a primary and its replica through three Sentinels,
    /// with this `--redis-min-replicas`, and the nemesis fails the primary over. `None`:
    /// one Redis, each node through its own proxy.
    pub min_replicas: Option<u32>,
    /// Fault kinds to draw from (`kill`, `primary-kill`...; see [`nemesis::kinds`]); empty:
    /// every kind of the mode.
    pub only: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            episodes: 10,
            nodes: 3,
            games: 12,
            lease_ms: 2_000,
            answer_timeout: Duration::from_secs(3),
            min_replicas: None,
            only: Vec::new(),
        }
    }
}

/// Runs one seed: start the cluster and the workload, run the schedule, heal, stop the
/// workload, collect the evidence and check it. Needs a multi-threaded tokio runtime.
pub async fn run(config: &Config) -> Report {
    let root = Rng::new(config.seed);
    let history = History::new();
    let mut cluster = Cluster::start(config.nodes, config.lease_ms, config.min_replicas).await;
    let settings = Settings {
        games: config.games,
        answer_timeout: config.answer_timeout,
    };
    let workload = Workload::start(
        cluster.directory.clone(),
        history.clone(),
        &root.fork(1),
        &settings,
    );
    // Games under way (and moves in flight) before the first fault.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let kinds = nemesis::kinds(config.min_replicas.is_some(), &config.only);
    let schedule = nemesis::plan(&mut root.fork(2), config.episodes, config.lease_ms, &kinds);
    nemesis::run(&mut cluster, &schedule, &mut root.fork(3), &history).await;
    cluster.heal_all().await;
    workload.finish().await;
    // Let the last relayed diffs and lease moves land before the final look.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let evidence = checker::collect(&cluster, &history).await;
    let mut findings = checker::check(&history, &evidence, config.lease_ms);
    findings.loss_expected = config.min_replicas == Some(0);
    if config.min_replicas.is_some_and(|n| n > 0) {
        checker::check_cut(&history, &mut findings);
    }
    let mut report = Report::new(config.clone(), &history, findings);
    report.repaired = repaired(&cluster).await;
    report
}

/// What the nodes alive now repaired after the store lost acknowledged events, from their
/// `/metrics`.
async fn repaired(cluster: &Cluster) -> report::Repaired {
    let mut repaired = report::Repaired::default();
    for i in 0..cluster.len() {
        let Some(addr) = cluster.addr(i) else {
            continue;
        };
        let Some((200, text)) = cluster::http_get(addr, "/metrics", Duration::from_secs(2)).await
        else {
            continue;
        };
        let value = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| {
                    l.strip_prefix(name)?
                        .strip_prefix(' ')?
                        .trim()
                        .parse::<f64>()
                        .ok()
                })
                .map_or(0, |v| v as u64)
        };
        repaired.relogged += value("stoa_store_relogged_total");
        repaired.rewinds += value("stoa_store_rewinds_total");
        repaired.identities += value("stoa_store_identities_restored_total");
    }
    repaired
}
