//! The nemesis: a seeded schedule of fault episodes, run one after another while the
//! workload plays. Each episode: fault → hold (lease + a random part of a lease, so the
//! faulted node's leases expire) → heal → settle (the workload goes on; the checker later
//! measures takeovers and liveness against the recorded instants).

use std::collections::BTreeMap;
use std::time::Duration;

use super::cluster::{Cluster, PREFIX};
use super::history::{Episode, History};
use super::rng::Rng;
use crate::fault_proxy::Mode;

/// One kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// kill -9 a node; restarted (same id, new process) at the heal.
    Kill,
    /// SIGSTOP a node; SIGCONT at the heal.
    Pause,
    /// The node's Redis link drops every byte, without closing; passes again at the heal.
    Blackhole,
    /// The node's Redis link is closed and refused; passes again at the heal.
    Cut,
    /// The node's Redis link gets this much latency each way.
    Delay(u64),
    /// Redis is killed with SIGKILL and restarted at the heal (its AOF keeps the data).
    RedisRestart,
}

impl Fault {
    /// Short name, for the table.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Kill => "kill",
            Fault::Pause => "pause",
            Fault::Blackhole => "blackhole",
            Fault::Cut => "cut",
            Fault::Delay(_) => "delay",
            Fault::RedisRestart => "redis-restart",
        }
    }

    /// Whether it hits one node (and so moves that node's games to the others).
    fn targets_node(&self) -> bool {
        !matches!(self, Fault::RedisRestart)
    }

    /// Whether the faulted node loses its leases (the others take its games over).
    fn takes_over(&self) -> bool {
        matches!(
            self,
            Fault::Kill | Fault::Pause | Fault::Blackhole | Fault::Cut
        )
    }
}

/// One planned episode: the fault and how long it is held.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The fault.
    pub fault: Fault,
    /// How long it is held before the heal.
    pub hold: Duration,
}

/// The schedule of a seed: the same seed always plans the same faults and holds (which
/// node is hit depends on who owns games at that moment).
pub fn plan(rng: &mut Rng, episodes: usize, lease_ms: u64) -> Vec<Planned> {
    (0..episodes)
        .map(|_| {
            let fault = match rng.below(6) {
                0 => Fault::Kill,
                1 => Fault::Pause,
                2 => Fault::Blackhole,
                3 => Fault::Cut,
                4 => Fault::Delay(rng.range(100, 400)),
                _ => Fault::RedisRestart,
            };
            Planned {
                fault,
                hold: Duration::from_millis(lease_ms + rng.below(lease_ms)),
            }
        })
        .collect()
}

/// How long the workload runs on after a heal before the next fault: the liveness window
/// (lease + 2 s) plus a margin.
pub fn settle(lease_ms: u64) -> Duration {
    Duration::from_millis(lease_ms + 3_000)
}

/// Runs the schedule against the cluster, recording each episode.
pub async fn run(cluster: &mut Cluster, schedule: &[Planned], rng: &mut Rng, history: &History) {
    let lease_ms = cluster.lease_ms();
    for p in schedule {
        let leases = leases(cluster, history).await;
        let node = p
            .fault
            .targets_node()
            .then(|| pick_node(cluster, &leases, rng));
        let owned: Vec<String> = match node {
            Some(i) if p.fault.takes_over() => leases
                .iter()
                .filter(|(_, owner)| owner.as_str() == cluster.id(i))
                .map(|(g, _)| g.clone())
                .collect(),
            _ => Vec::new(),
        };
        let fault_at = history.now();
        match (p.fault, node) {
            (Fault::Kill, Some(i)) => cluster.kill(i).await,
            (Fault::Pause, Some(i)) => cluster.signal(i, "-STOP"),
            (Fault::Blackhole, Some(i)) => cluster.link(i, Mode::Blackhole),
            (Fault::Cut, Some(i)) => cluster.link(i, Mode::Cut),
            (Fault::Delay(ms), Some(i)) => cluster.link(i, Mode::Delay(Duration::from_millis(ms))),
            _ => cluster.kill_redis(),
        }
        tokio::time::sleep(p.hold).await;
        match (p.fault, node) {
            (Fault::Kill, Some(i)) => cluster.restart(i).await,
            (Fault::Pause, Some(i)) => cluster.signal(i, "-CONT"),
            (Fault::RedisRestart, _) => cluster.restart_redis(),
            (_, Some(i)) => cluster.link(i, Mode::Pass),
            _ => {}
        }
        let heal_at = history.now();
        let fault = match (p.fault, node) {
            (Fault::Delay(ms), Some(i)) => format!("delay {ms}ms on {}'s link", cluster.id(i)),
            (f, Some(i)) => format!("{} {}", f.kind(), cluster.id(i)),
            (f, None) => f.kind().to_string(),
        };
        history.episode(Episode {
            fault,
            kind: p.fault.kind(),
            node,
            fault_at,
            heal_at,
            owned,
        });
        tokio::time::sleep(settle(lease_ms)).await;
    }
}

/// The lease holder of every game still in play: game id → node id (read from Redis
/// directly, not through any node).
async fn leases(cluster: &Cluster, history: &History) -> BTreeMap<String, String> {
    let games: Vec<String> = history
        .lock()
        .games
        .values()
        .filter(|g| g.ended.is_none())
        .map(|g| g.id.clone())
        .collect();
    let mut out = BTreeMap::new();
    if games.is_empty() {
        return out;
    }
    let mut cmd = redis::cmd("MGET");
    for g in &games {
        cmd.arg(format!("{PREFIX}:game:{{{g}}}:lease"));
    }
    let owners: Vec<Option<String>> = cluster.redis_query(&cmd).await.unwrap_or_default();
    for (g, owner) in games.into_iter().zip(owners) {
        if let Some(o) = owner {
            out.insert(g, o);
        }
    }
    out
}

/// A node to fault, among those holding leases (the interesting ones), else any.
fn pick_node(cluster: &Cluster, leases: &BTreeMap<String, String>, rng: &mut Rng) -> usize {
    let owners: Vec<usize> = (0..cluster.len())
        .filter(|i| leases.values().any(|o| o == cluster.id(*i)))
        .collect();
    if owners.is_empty() {
        rng.index(cluster.len())
    } else {
        owners[rng.index(owners.len())]
    }
}
