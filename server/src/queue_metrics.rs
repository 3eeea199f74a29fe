//! Matchmaking metrics: queue lengths, waiting times and rating gaps at pairing, rendered in
//! the Prometheus text format as part of `/metrics`.
//!
//! Why per kind and rated flag only: a queue is also keyed by options and clock, which
//! clients choose freely; labelling by them would let clients create unbounded series.
//! Histograms are cumulative atomic buckets, like the rest of [`crate::metrics`].

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use stoa_protocol::KINDS;

use crate::metrics::kind_index;
use crate::pairing::QueueKey;

/// Upper bounds of the waiting-time histogram buckets, seconds.
const WAIT_BUCKETS_S: [f64; 9] = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0];
/// Upper bounds of the rating-gap histogram buckets, rating points.
const GAP_BUCKETS: [f64; 8] = [25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 500.0, 800.0];

/// A Prometheus histogram over fixed buckets, lock-free.
#[derive(Debug)]
struct Histogram<const N: usize> {
    bounds: [f64; N],
    /// Observations at most each bound (non-cumulative; summed when rendered).
    buckets: [AtomicU64; N],
    count: AtomicU64,
    /// Sum of observations, in millionths (atomics hold integers).
    sum_micro: AtomicU64,
}

impl<const N: usize> Histogram<N> {
    fn new(bounds: [f64; N]) -> Self {
        Histogram {
            bounds,
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            count: AtomicU64::new(0),
            sum_micro: AtomicU64::new(0),
        }
    }

    fn observe(&self, v: f64) {
        let v = if v.is_finite() { v.max(0.0) } else { 0.0 };
        if let Some(i) = self.bounds.iter().position(|b| v <= *b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micro
            .fetch_add((v * 1e6) as u64, Ordering::Relaxed);
    }

    fn render(&self, s: &mut String, name: &str, help: &str) {
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, b) in self.bounds.iter().enumerate() {
            cumulative += self.buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(s, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(s, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            s,
            "{name}_sum {}\n{name}_count {count}",
            self.sum_micro.load(Ordering::Relaxed) as f64 / 1e6
        );
    }
}

/// Matchmaking metrics.
#[derive(Debug)]
pub struct QueueMetrics {
    /// Waiting players by (kind, rated), as of the last wave.
    waiting: Mutex<BTreeMap<(String, bool), usize>>,
    joins: AtomicU64,
    /// Pairings by kind index.
    pairings: [AtomicU64; 8],
    wait: Histogram<9>,
    gap: Histogram<8>,
}

impl Default for QueueMetrics {
    fn default() -> Self {
        QueueMetrics {
            waiting: Mutex::new(BTreeMap::new()),
            joins: AtomicU64::new(0),
            pairings: std::array::from_fn(|_| AtomicU64::new(0)),
            wait: Histogram::new(WAIT_BUCKETS_S),
            gap: Histogram::new(GAP_BUCKETS),
        }
    }
}

impl QueueMetrics {
    /// A `queue.join` was accepted.
    pub fn joined(&self) {
        self.joins.fetch_add(1, Ordering::Relaxed);
    }

    /// A pairing started a game: both waiting times and the rating gap.
    pub fn paired(&self, kind: &str, waited_ms: [u64; 2], rating_gap: f64) {
        self.pairings[kind_index(kind)].fetch_add(1, Ordering::Relaxed);
        for w in waited_ms {
            self.wait.observe(w as f64 / 1000.0);
        }
        self.gap.observe(rating_gap);
    }

    /// The queue sizes after a wave.
    pub fn set_waiting(&self, counts: &[(QueueKey, usize)]) {
        let mut m = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        for v in m.values_mut() {
            *v = 0;
        }
        for (k, n) in counts {
            *m.entry((k.kind.clone(), k.rated)).or_default() += n;
        }
    }

    /// Appends the Prometheus text of these metrics.
    pub fn render(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "# HELP stoa_queue_waiting Players waiting in matchmaking queues, by kind and rated flag.\n# TYPE stoa_queue_waiting gauge"
        );
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for k in KINDS.iter() {
            for rated in [false, true] {
                let n = waiting
                    .get(&(k.id.to_string(), rated))
                    .copied()
                    .unwrap_or(0);
                let _ = writeln!(
                    s,
                    "stoa_queue_waiting{{kind=\"{}\",rated=\"{rated}\"}} {n}",
                    k.id
                );
            }
        }
        let _ = writeln!(
            s,
            "# HELP stoa_queue_joins_total Accepted queue.join requests.\n# TYPE stoa_queue_joins_total counter\nstoa_queue_joins_total {}",
            self.joins.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            s,
            "# HELP stoa_queue_pairings_total Games started by matchmaking, by kind.\n# TYPE stoa_queue_pairings_total counter"
        );
        for (i, k) in KINDS.iter().enumerate().take(7) {
            let _ = writeln!(
                s,
                "stoa_queue_pairings_total{{kind=\"{}\"}} {}",
                k.id,
                self.pairings[i].load(Ordering::Relaxed)
            );
        }
        self.wait.render(
            s,
            "stoa_queue_wait_seconds",
            "How long paired players waited in their queue.",
        );
        self.gap.render(
            s,
            "stoa_queue_rating_gap",
            "Rating difference between the two players of a pairing.",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_queue_lengths_waits_and_gaps() {
        let m = QueueMetrics::default();
        let k = QueueKey::new("staku", &json!({}), &json!({"kind":"none"}), true);
        m.set_waiting(&[(k.clone(), 3)]);
        m.paired("staku", [1_500, 400], 120.0);
        let mut s = String::new();
        m.render(&mut s);
        assert!(
            s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"true\"} 3\n"),
            "{s}"
        );
        assert!(s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"false\"} 0\n"));
        assert!(s.contains("stoa_queue_pairings_total{kind=\"staku\"} 1\n"));
        assert!(s.contains("stoa_queue_wait_seconds_bucket{le=\"0.5\"} 1\n"));
        assert!(s.contains("stoa_queue_wait_seconds_bucket{le=\"2\"} 2\n"));
        assert!(s.contains("stoa_queue_wait_seconds_sum 1.9\n"));
        assert!(s.contains("stoa_queue_wait_seconds_count 2\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"100\"} 0\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"150\"} 1\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"+Inf\"} 1\n"));
        // The queue emptied: the gauge drops back to 0.
        m.set_waiting(&[]);
        let mut s = String::new();
        m.render(&mut s);
        assert!(s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"true\"} 0\n"));
    }
}
