//! The run's table: what was done, what was answered, and what each check found, followed
//! by the failures in enough detail to debug them (game id, seq, expected and seen).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::checker::{quantile, Finding, Findings};
use super::history::{Answer, History};
use super::Config;

/// Failures listed per check before "... and N more" (unless [`Report::listed`] says).
const LISTED: usize = 12;

/// A finished run.
pub struct Report {
    /// The run's settings.
    pub config: Config,
    /// Episodes by fault kind.
    pub faults: BTreeMap<&'static str, usize>,
    /// Episodes as run (`kill n2`, ...), in order.
    pub schedule: Vec<String>,
    /// Games played.
    pub games: usize,
    /// Moves answered `ok`.
    pub acked_moves: usize,
    /// Other actions answered `ok`.
    pub acked_other: usize,
    /// Error answers by code.
    pub errors: BTreeMap<String, usize>,
    /// Requests without an answer.
    pub indeterminate: usize,
    /// The checker's findings.
    pub findings: Findings,
    /// Failures listed per check (`--all` lists every one).
    pub listed: usize,
    /// What the nodes alive at the end repaired after the store lost acknowledged events
    /// (their `/metrics`): events their owners logged again, and games that went back to
    /// their log.
    pub repaired: Repaired,
}

/// The nodes' own count of what a failover made them repair (see [`Report::repaired`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Events logged again (`stoa_store_relogged_total`, summed over the nodes).
    pub relogged: u64,
    /// Games that went back to their log (`stoa_store_rewinds_total`).
    pub rewinds: u64,
    /// Players stored again by the node that created them
    /// (`stoa_store_identities_restored_total`).
    pub identities: u64,
}

impl Report {
    /// Sums up a run's history and findings.
    pub fn new(config: Config, history: &History, mut findings: Findings) -> Report {
        let r = history.lock();
        let mut faults = BTreeMap::new();
        for e in &r.episodes {
            *faults.entry(e.kind).or_default() += 1;
        }
        let mut report = Report {
            config,
            faults,
            schedule: r.episodes.iter().map(|e| e.fault.clone()).collect(),
            games: r.games.len(),
            acked_moves: 0,
            acked_other: 0,
            errors: BTreeMap::new(),
            indeterminate: 0,
            findings: Findings::default(),
            listed: LISTED,
            repaired: Repaired::default(),
        };
        for op in &r.ops {
            match (&op.answer, &op.action) {
                (Answer::Ok(_), super::history::Action::Move(_)) => report.acked_moves += 1,
                (Answer::Ok(_), _) => report.acked_other += 1,
                (Answer::Error(c), _) => *report.errors.entry(c.clone()).or_default() += 1,
                (Answer::Unknown, _) => report.indeterminate += 1,
            }
        }
        findings.takeovers.sort();
        for t in findings.takeovers_by_kind.values_mut() {
            t.sort();
        }
        for t in findings.recoveries_by_kind.values_mut() {
            t.sort();
        }
        report.findings = findings;
        report
    }

    /// Acknowledged moves missing from the log (or replaced there): what a failover lost.
    pub fn lost_moves(&self) -> usize {
        self.findings.lost_moves
    }

    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.findings.failures() > 0
    }

    /// The names of the checks that failed, e.g. `divergent documents, stuck games`.
    pub fn failed_checks(&self) -> Vec<&'static str> {
        let loss_expected = self.findings.loss_expected;
        self.rows()
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .filter(|(name, _)| !loss_expected || *name == "stuck games")
            .map(|(name, _)| name)
            .collect()
    }

    fn rows(&self) -> [(&'static str, &Vec<Finding>); 7] {
        let f = &self.findings;
        [
            ("lost acknowledged actions", &f.lost_acks),
            ("acknowledged while cut", &f.acked_while_cut),
            ("applied errors", &f.applied_errors),
            ("divergent documents", &f.divergent),
            ("games ended twice", &f.ended_twice),
            ("stuck games", &f.stuck),
            ("clients left behind", &f.left_behind),
        ]
    }
}

fn secs(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.2} s", d.as_secs_f64()))
}

impl fmt::Display for Report {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        let f = &self.findings;
        writeln!(
            out,
            "fault bench: seed {}, {} nodes, {} game slots, lease {} ms{}",
            c.seed,
            c.nodes,
            c.games,
            c.lease_ms,
            match c.min_replicas {
                Some(n) => format!(
                    ", Redis through Sentinel (primary + 1 replica), --redis-min-replicas {n}"
                ),
                None => String::new(),
            }
        )?;
        let row = |out: &mut fmt::Formatter<'_>, name: &str, value: String| {
            writeln!(out, "  {name:<28} {value}")
        };
        let kinds: Vec<String> = self
            .faults
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        row(
            out,
            "episodes run",
            format!("{} ({})", self.schedule.len(), kinds.join(", ")),
        )?;
        row(out, "schedule", self.schedule.join(" | "))?;
        row(out, "games played", self.games.to_string())?;
        row(
            out,
            "acknowledged moves",
            format!("{} (+{} other actions)", self.acked_moves, self.acked_other),
        )?;
        let codes: Vec<String> = self
            .errors
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        row(
            out,
            "errors",
            format!(
                "{} ({})",
                self.errors.values().sum::<usize>(),
                codes.join(", ")
            ),
        )?;
        row(out, "indeterminate", self.indeterminate.to_string())?;
        for (name, list) in self.rows() {
            let verdict = match (list.is_empty(), f.loss_expected && name != "stuck games") {
                (true, _) => "",
                (false, false) => "  FAIL",
                (false, true) => "  (reported: --redis-min-replicas 0 may lose writes)",
            };
            row(out, name, format!("{}{verdict}", list.len()))?;
        }
        if f.loss_expected {
            row(
                out,
                "acknowledged moves lost",
                self.lost_moves().to_string(),
            )?;
        }
        if self.config.min_replicas.is_some() {
            row(
                out,
                "logged again / went back",
                format!(
                    "{} events / {} games, {} players stored again (nodes alive at the end)",
                    self.repaired.relogged, self.repaired.rewinds, self.repaired.identities
                ),
            )?;
        }
        let t = &f.takeovers;
        row(
            out,
            "takeover p50 / p99 / max",
            format!(
                "{} ({} games{})",
                spread(t),
                t.len(),
                if f.never_taken_over > 0 {
                    format!(", {} never acknowledged again", f.never_taken_over)
                } else {
                    String::new()
                }
            ),
        )?;
        for (kind, t) in &f.takeovers_by_kind {
            row(
                out,
                &format!("  after {kind}"),
                format!("{} ({} games)", spread(t), t.len()),
            )?;
        }
        if !f.recoveries_by_kind.is_empty() || f.never_recovered > 0 {
            let all: Vec<Duration> = {
                let mut v: Vec<Duration> =
                    f.recoveries_by_kind.values().flatten().copied().collect();
                v.sort();
                v
            };
            row(
                out,
                "recovered p50 / p99 / max",
                format!(
                    "{} ({} game-promotions{})",
                    spread(&all),
                    all.len(),
                    if f.never_recovered > 0 {
                        format!(", {} never acknowledged again", f.never_recovered)
                    } else {
                        String::new()
                    }
                ),
            )?;
            for (kind, t) in &f.recoveries_by_kind {
                row(
                    out,
                    &format!("  after {kind}"),
                    format!("{} ({} games)", spread(t), t.len()),
                )?;
            }
        }
        writeln!(
            out,
            "  verdict                      {}",
            if self.failed() { "FAIL" } else { "ok" }
        )?;
        for (name, list) in self.rows() {
            if list.is_empty() {
                continue;
            }
            writeln!(out, "{name}: {}", list.len())?;
            // The kinds first (one bug, many games), then the details.
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            for item in list {
                *kinds.entry(&item.signature).or_default() += 1;
            }
            for (kind, n) in &kinds {
                writeln!(out, "  {n:>4} × {kind}")?;
            }
            // One example of each kind before the rest.
            let mut ordered: Vec<&Finding> = Vec::new();
            for kind in kinds.keys() {
                ordered.extend(list.iter().find(|i| i.signature == *kind));
            }
            let firsts = ordered.len();
            for item in list {
                if !ordered[..firsts].iter().any(|o| std::ptr::eq(*o, item)) {
                    ordered.push(item);
                }
            }
            for item in ordered.iter().take(self.listed) {
                writeln!(out, "  - {}", item.detail)?;
            }
            if list.len() > self.listed {
                writeln!(out, "  ... and {} more", list.len() - self.listed)?;
            }
        }
        Ok(())
    }
}

/// `p50 / p99 / max` of sorted durations.
fn spread(t: &[Duration]) -> String {
    format!(
        "{} / {} / {}",
        secs(quantile(t, 0.5)),
        secs(quantile(t, 0.99)),
        secs(t.last().copied())
    )
}
