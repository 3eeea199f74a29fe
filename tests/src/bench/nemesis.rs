//! The nemesis: a seeded schedule of fault episodes, run one after another while the
//! workload plays. Each episode: fault → hold (lease + a random part of a lease, so the
//! faulted node's leases expire) → heal → settle (the workload goes on; the checker later
//! measures takeovers and liveness against the recorded instants).
//!
//! In Sentinel mode the faults are a failover's: the primary killed (healed by restarting
//! it as the new primary's replica), a switchover with the primary alive (healed by making
//! the demoted primary replicate the new one), the primary's link to its replica cut;
//! and, of the node faults, kill and pause (the nodes have no proxy of their own there).

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
    /// Sentinel mode: the primary is killed with SIGKILL and Sentinel promotes the replica;
    /// at the heal the old primary is restarted as the new one's replica (it rejoins).
    PrimaryKill,
    /// Sentinel mode: `SENTINEL FAILOVER` with the primary alive; at the heal the demoted
    /// primary is made to replicate the new one if Sentinel has not done it yet.
    Switchover,
    /// Sentinel mode: the primary's replication link is cut (no replica gets a write);
    /// restored at the heal.
    ReplicaCut,
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
            Fault::PrimaryKill => "primary-kill",
            Fault::Switchover => "switchover",
            Fault::ReplicaCut => "replica-cut",
        }
    }

    /// Whether it hits one node (and so moves that node's games to the others).
    fn targets_node(&self) -> bool {
        matches!(
            self,
            Fault::Kill | Fault::Pause | Fault::Blackhole | Fault::Cut | Fault::Delay(_)
        )
    }

    /// Whether it is a fault of the Sentinel topology.
    pub fn of_sentinel(kind: &str) -> bool {
        matches!(kind, "primary-kill" | "switchover" | "replica-cut")
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

/// The fault kinds a schedule draws from: the classic ones, or in Sentinel mode the
/// failover's (each twice as likely as a node fault), restricted to `only` when it names
/// any.
pub fn kinds(sentinel: bool, only: &[String]) -> Vec<&'static str> {
    let all: &[&'static str] = if sentinel {
        &[
            "kill",
            "pause",
            "primary-kill",
            "primary-kill",
            "switchover",
            "switchover",
            "replica-cut",
            "replica-cut",
        ]
    } else {
        &[
            "kill",
            "pause",
            "blackhole",
            "cut",
            "delay",
            "redis-restart",
        ]
    };
    all.iter()
        .copied()
        .filter(|k| only.is_empty() || only.iter().any(|o| o == k))
        .collect()
}

/// The schedule of a seed: the same seed always plans the same faults and holds (which
/// node is hit depends on who owns games at that moment), drawn from `kinds`.
pub fn plan(rng: &mut Rng, episodes: usize, lease_ms: u64, kinds: &[&str]) -> Vec<Planned> {
    assert!(!kinds.is_empty(), "no fault kind to plan");
    (0..episodes)
        .map(|_| {
            let fault = match kinds[rng.index(kinds.len())] {
                "kill" => Fault::Kill,
                "pause" => Fault::Pause,
                "blackhole" => Fault::Blackhole,
                "cut" => Fault::Cut,
                "delay" => Fault::Delay(rng.range(100, 400)),
                "primary-kill" => Fault::PrimaryKill,
                "switchover" => Fault::Switchover,
                "replica-cut" => Fault::ReplicaCut,
                _ => Fault::RedisRestart,
            };
            Planned {
                fault,
                hold: Duration::from_millis(lease_ms + rng.below(lease_ms)),
            }
        })
        .collect()
}

/// How long after a heal every game still in play must have acknowledged an action: a
/// lease plus 2 s after a node fault (its games taken over), [`FAILOVER_WINDOW`] after a
/// fault of the Sentinel topology (a killed primary's full resync included).
pub fn window(kind: &str, lease_ms: u64) -> Duration {
    if Fault::of_sentinel(kind) {
        FAILOVER_WINDOW
    } else {
        Duration::from_millis(lease_ms + 2_000)
    }
}

/// The liveness window after a heal of the Sentinel topology: the old primary replicating
/// again (a full resync after a restart), the nodes' waiting writes settled, the clients
/// back from the nodes they left while everything answered `unavailable`.
pub const FAILOVER_WINDOW: Duration = Duration::from_secs(8);

/// How long the workload runs on after a heal before the next fault: the liveness window
/// plus a margin.
pub fn settle(kind: &str, lease_ms: u64) -> Duration {
    window(kind, lease_ms) + Duration::from_secs(1)
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
        if Fault::of_sentinel(p.fault.kind()) {
            // Each failover fault starts from a whole store: the replica caught up, the
            // Sentinels agreeing on the primary (and so able to fail over again).
            cluster.heal_store();
        }
        let mut fault_at = history.now();
        let started = tokio::time::Instant::now();
        let mut promotion = None;
        let mut cut = None;
        match (p.fault, node) {
            (Fault::Kill, Some(i)) => cluster.kill(i).await,
            (Fault::Pause, Some(i)) => cluster.signal(i, "-STOP"),
            (Fault::Blackhole, Some(i)) => cluster.link(i, Mode::Blackhole),
            (Fault::Cut, Some(i)) => cluster.link(i, Mode::Cut),
            (Fault::Delay(ms), Some(i)) => cluster.link(i, Mode::Delay(Duration::from_millis(ms))),
            (Fault::PrimaryKill, _) => promotion = cluster.kill_primary(),
            (Fault::Switchover, _) => promotion = cluster.switchover(),
            (Fault::ReplicaCut, _) => {
                cut = cluster.cut_replication();
                // From here on no write can reach the replica: the checker holds every
                // move sent after this instant and acknowledged before the heal as a lie.
                fault_at = history.now();
            }
            _ => cluster.kill_redis(),
        }
        // The hold counts from the fault; a promotion may take longer (the heal of a
        // failover needs its new primary).
        tokio::time::sleep_until(started + p.hold).await;
        let mut healed = "";
        match (p.fault, node) {
            (Fault::Kill, Some(i)) => cluster.restart(i).await,
            (Fault::Pause, Some(i)) => cluster.signal(i, "-CONT"),
            (Fault::RedisRestart, _) => cluster.restart_redis(),
            (Fault::PrimaryKill | Fault::Switchover, _) => match promotion {
                Some(pr) => healed = cluster.rejoin(pr),
                None => cluster.heal_store(),
            },
            (Fault::ReplicaCut, _) => {
                if let Some(p) = cut {
                    cluster.restore_replication(p);
                }
            }
            (_, Some(i)) => cluster.link(i, Mode::Pass),
            _ => {}
        }
        let heal_at = history.now();
        let port = |i: usize| cluster.topology().map_or(0, |t| t.port(i));
        let fault = match (p.fault, node) {
            (Fault::Delay(ms), Some(i)) => format!("delay {ms}ms on {}'s link", cluster.id(i)),
            (f, Some(i)) => format!("{} {}", f.kind(), cluster.id(i)),
            (Fault::PrimaryKill | Fault::Switchover, _) => match promotion {
                Some(pr) => format!(
                    "{} :{} -> :{} in {:.1} s, old primary {healed}",
                    p.fault.kind(),
                    port(pr.old),
                    port(pr.new),
                    pr.at
                        .saturating_duration_since(started.into_std())
                        .as_secs_f64()
                ),
                None => format!("{} (no promotion within 30 s)", p.fault.kind()),
            },
            (Fault::ReplicaCut, _) => match cut {
                Some(i) => format!("replica-cut of :{}", port(i)),
                None => "replica-cut (no primary to cut)".into(),
            },
            (f, None) => f.kind().to_string(),
        };
        let promoted_at =
            promotion.map(|pr| fault_at + pr.at.saturating_duration_since(started.into_std()));
        history.episode(Episode {
            fault,
            kind: p.fault.kind(),
            node,
            fault_at,
            heal_at,
            owned,
            promoted_at,
        });
        tokio::time::sleep(settle(p.fault.kind(), lease_ms)).await;
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
