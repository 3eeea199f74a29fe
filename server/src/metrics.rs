//! Prometheus metrics from atomic counters, rendered by hand in the text format.
//!
//! Why hand-written: a handful of counters and gauges do not justify a registry crate, and
//! atomics keep the hot paths (every frame in and out) lock-free.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use stoa_protocol::KINDS;

/// Every metric the server exports.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Open websocket connections.
    pub connections_open: AtomicI64,
    /// Websocket connections accepted since start.
    pub connections_total: AtomicU64,
    /// Connections refused by the per-IP limit.
    pub connections_refused: AtomicU64,
    /// Connections dropped because their outbound queue was full.
    pub slow_consumers_dropped: AtomicU64,
    /// Text frames received.
    pub messages_in: AtomicU64,
    /// Frames queued for sending.
    pub messages_out: AtomicU64,
    /// Requests answered with `rate_limited`.
    pub rate_limited: AtomicU64,
    /// Moves applied.
    pub moves: AtomicU64,
    /// Live games by kind (index into [`KINDS`]).
    pub games_live: [AtomicI64; 8],
    /// Games started by kind.
    pub games_started: [AtomicU64; 8],
    /// Store calls.
    pub store_calls: AtomicU64,
    /// Total store latency, microseconds.
    pub store_latency_us: AtomicU64,
    /// Failed store calls.
    pub store_errors: AtomicU64,
    /// Matchmaking: queue lengths, waiting times, rating gaps.
    pub queues: crate::queue_metrics::QueueMetrics,
}

/// Index of a game kind in [`KINDS`] (8 slots are reserved).
pub fn kind_index(kind: &str) -> usize {
    KINDS.iter().position(|k| k.id == kind).unwrap_or(7).min(7)
}

impl Metrics {
    /// Adds one to a counter.
    pub fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one store call's latency.
    pub fn store_call(&self, elapsed: std::time::Duration, ok: bool) {
        self.store_calls.fetch_add(1, Ordering::Relaxed);
        self.store_latency_us
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
        if !ok {
            self.store_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let g = |s: &mut String, name: &str, help: &str, kind: &str, v: String| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        };
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
        g(
            &mut s,
            "stoa_connections_open",
            "Open websocket connections.",
            "gauge",
            self.connections_open.load(Ordering::Relaxed).to_string(),
        );
        g(
            &mut s,
            "stoa_connections_total",
            "Websocket connections accepted.",
            "counter",
            ld(&self.connections_total),
        );
        g(
            &mut s,
            "stoa_connections_refused_total",
            "Connections refused by the per-IP limit.",
            "counter",
            ld(&self.connections_refused),
        );
        g(
            &mut s,
            "stoa_slow_consumers_dropped_total",
            "Connections dropped for a full outbound queue.",
            "counter",
            ld(&self.slow_consumers_dropped),
        );
        g(
            &mut s,
            "stoa_messages_in_total",
            "Text frames received.",
            "counter",
            ld(&self.messages_in),
        );
        g(
            &mut s,
            "stoa_messages_out_total",
            "Frames queued for sending.",
            "counter",
            ld(&self.messages_out),
        );
        g(
            &mut s,
            "stoa_rate_limited_total",
            "Requests answered rate_limited.",
            "counter",
            ld(&self.rate_limited),
        );
        g(
            &mut s,
            "stoa_moves_total",
            "Moves applied.",
            "counter",
            ld(&self.moves),
        );
        let _ = writeln!(
            s,
            "# HELP stoa_games_live Live games by kind.\n# TYPE stoa_games_live gauge"
        );
        for (i, k) in KINDS.iter().enumerate().take(7) {
            let _ = writeln!(
                s,
                "stoa_games_live{{kind=\"{}\"}} {}",
                k.id,
                self.games_live[i].load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(s, "# HELP stoa_games_started_total Games started by kind.\n# TYPE stoa_games_started_total counter");
        for (i, k) in KINDS.iter().enumerate().take(7) {
            let _ = writeln!(
                s,
                "stoa_games_started_total{{kind=\"{}\"}} {}",
                k.id,
                self.games_started[i].load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(s, "# HELP stoa_store_latency_seconds Store call latency.\n# TYPE stoa_store_latency_seconds summary");
        let _ = writeln!(
            s,
            "stoa_store_latency_seconds_sum {}\nstoa_store_latency_seconds_count {}",
            self.store_latency_us.load(Ordering::Relaxed) as f64 / 1e6,
            self.store_calls.load(Ordering::Relaxed)
        );
        g(
            &mut s,
            "stoa_store_errors_total",
            "Failed store calls.",
            "counter",
            ld(&self.store_errors),
        );
        self.queues.render(&mut s);
        s
    }
}
