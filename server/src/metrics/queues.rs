//! Matchmaking metrics: queue lengths, waiting times and rating gaps at pairing, rendered in
//! the Prometheus text format as part of `/metrics`.
//!
//! Why per kind and rated flag only: a queue is also keyed by options and clock, which
//! clients choose freely; labelling by them would let clients create unbounded series.
//! They live in the server's registry ([`crate::metrics`]).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use stoa_protocol::KINDS;

use super::KindLabel;
use crate::domain::pairing::QueueKey;

/// Upper bounds of the waiting-time histogram buckets, seconds.
const WAIT_BUCKETS_S: [f64; 9] = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0];
/// Upper bounds of the rating-gap histogram buckets, rating points.
const GAP_BUCKETS: [f64; 8] = [25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 500.0, 800.0];

/// A queue's labels: its kind and whether it is rated.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    kind: String,
    rated: String,
}

/// Matchmaking metrics.
#[derive(Debug)]
pub struct QueueMetrics {
    /// Waiting players by (kind, rated), as of the last wave.
    waiting: Family<QueueLabels, Gauge>,
    joins: Counter,
    pairings: Family<KindLabel, Counter>,
    wait: Histogram,
    gap: Histogram,
}

impl QueueMetrics {
    /// The matchmaking series, registered in `registry`.
    pub fn new(registry: &mut Registry) -> Self {
        let m = QueueMetrics {
            waiting: Family::default(),
            joins: Counter::default(),
            pairings: Family::default(),
            wait: Histogram::new(WAIT_BUCKETS_S),
            gap: Histogram::new(GAP_BUCKETS),
        };
        // Every known queue shows, at 0 when empty, so a dashboard never sees a gap.
        for k in KINDS.iter() {
            for rated in [false, true] {
                let _ = m.waiting.get_or_create(&QueueLabels {
                    kind: k.id.into(),
                    rated: rated.to_string(),
                });
            }
            let _ = m.pairings.get_or_create(&KindLabel { kind: k.id.into() });
        }
        registry.register(
            "stoa_queue_waiting",
            "Players waiting in matchmaking queues, by kind and rated flag",
            m.waiting.clone(),
        );
        registry.register(
            "stoa_queue_joins",
            "Accepted queue.join requests",
            m.joins.clone(),
        );
        registry.register(
            "stoa_queue_pairings",
            "Games started by matchmaking, by kind",
            m.pairings.clone(),
        );
        registry.register(
            "stoa_queue_wait_seconds",
            "How long paired players waited in their queue",
            m.wait.clone(),
        );
        registry.register(
            "stoa_queue_rating_gap",
            "Rating difference between the two players of a pairing",
            m.gap.clone(),
        );
        m
    }

    /// A `queue.join` was accepted.
    pub fn joined(&self) {
        self.joins.inc();
    }

    /// A pairing started a game: both waiting times and the rating gap.
    pub fn paired(&self, kind: &str, waited_ms: [u64; 2], rating_gap: f64) {
        // Only known kinds reach a queue (options are validated first).
        self.pairings
            .get_or_create(&KindLabel { kind: kind.into() })
            .inc();
        for w in waited_ms {
            self.wait.observe(w as f64 / 1000.0);
        }
        self.gap.observe(rating_gap);
    }

    /// The queue sizes after a wave.
    pub fn set_waiting(&self, counts: &[(QueueKey, usize)]) {
        let mut totals: std::collections::BTreeMap<(String, bool), i64> = KINDS
            .iter()
            .flat_map(|k| {
                [
                    ((k.id.to_string(), false), 0),
                    ((k.id.to_string(), true), 0),
                ]
            })
            .collect();
        for (k, n) in counts {
            *totals.entry((k.kind.clone(), k.rated)).or_default() += *n as i64;
        }
        for ((kind, rated), n) in totals {
            self.waiting
                .get_or_create(&QueueLabels {
                    kind,
                    rated: rated.to_string(),
                })
                .set(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_queue_lengths_waits_and_gaps() {
        let mut r = Registry::default();
        let m = QueueMetrics::new(&mut r);
        let k = QueueKey::new("staku", &json!({}), &json!({"kind":"none"}), true);
        m.set_waiting(&[(k.clone(), 3)]);
        m.paired("staku", [1_500, 400], 120.0);
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &r).unwrap();
        assert!(
            s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"true\"} 3\n"),
            "{s}"
        );
        assert!(s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"false\"} 0\n"));
        assert!(s.contains("stoa_queue_pairings_total{kind=\"staku\"} 1\n"));
        assert!(s.contains("stoa_queue_wait_seconds_bucket{le=\"0.5\"} 1\n"));
        assert!(s.contains("stoa_queue_wait_seconds_bucket{le=\"2.0\"} 2\n"));
        assert!(s.contains("stoa_queue_wait_seconds_sum 1.9\n"));
        assert!(s.contains("stoa_queue_wait_seconds_count 2\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"100.0\"} 0\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"150.0\"} 1\n"));
        assert!(s.contains("stoa_queue_rating_gap_bucket{le=\"+Inf\"} 1\n"));
        // The queue emptied: the gauge drops back to 0.
        m.set_waiting(&[]);
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &r).unwrap();
        assert!(s.contains("stoa_queue_waiting{kind=\"staku\",rated=\"true\"} 0\n"));
    }
}
