//! The server's Prometheus metrics, kept in a `prometheus-client` registry and served at
//! `GET /metrics` in Prometheus's text format, or OpenMetrics to a scraper that asks for it
//! ([`exposition`]).
//!
//! Why this crate: it is the Prometheus project's own Rust client; its counters and gauges
//! are atomics (the hot paths, every frame in and out, stay lock-free), and it renders the
//! exposition format (escaping, histograms, `# EOF`) so nothing here writes it by hand.
//! Labelled series are looked up once and their handles kept (`per_kind`), so a move does
//! not take the family's lock either.
//!
//! Labels are bounded on purpose: kinds come from [`KINDS`] (anything else is `other`), end
//! reasons from the fixed [`Reason`] set; nothing a client types becomes a label.

use std::fmt;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};
use stoa_protocol::{Reason, KINDS};

pub mod exposition;
pub mod moderation;
pub mod queues;
mod series;

use queues::QueueMetrics;
use series::Series;

/// Store call latency buckets, seconds: memory answers in microseconds, Redis in well under
/// a millisecond on loopback, an fsync'ing Redis in milliseconds.
const STORE_BUCKETS_S: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];
/// Cluster bus lag buckets, seconds (publish on one node to receipt on another).
const BUS_BUCKETS_S: [f64; 10] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// A series labelled by game kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    /// A kind id of [`KINDS`], or `other`.
    pub kind: String,
}

/// A game's end, by kind and reason.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndLabels {
    kind: String,
    reason: String,
}

/// A cluster node's own series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabel {
    node: String,
}

/// One handle per known kind (in [`KINDS`] order) and a last one for `other`, taken from a
/// labelled family once so the hot paths skip the family's map.
#[derive(Debug)]
struct PerKind<M> {
    handles: Vec<M>,
}

impl<M: Clone + Default> PerKind<M> {
    fn new(family: &Family<KindLabel, M>) -> Self {
        let handles = KINDS
            .iter()
            .map(|k| k.id)
            .chain(std::iter::once("other"))
            .map(|kind| {
                family
                    .get_or_create(&KindLabel { kind: kind.into() })
                    .clone()
            })
            .collect();
        PerKind { handles }
    }

    fn index(&self, kind: &str) -> usize {
        KINDS
            .iter()
            .position(|k| k.id == kind)
            .unwrap_or(self.handles.len() - 1)
    }

    fn of(&self, kind: &str) -> &M {
        &self.handles[self.index(kind)]
    }
}

/// Every metric the server exports, and the registry that renders them.
pub struct Metrics {
    registry: Registry,
    /// Open websocket connections.
    pub connections_open: Gauge,
    /// Websocket connections accepted since start.
    pub connections: Counter,
    /// Connections refused by the per-IP or total connection limit.
    pub connections_refused: Counter,
    /// Connections dropped because their outbound queue was full.
    pub slow_consumers_dropped: Counter,
    /// Text frames received.
    pub messages_in: Counter,
    /// Frames queued for sending.
    pub messages_out: Counter,
    /// Requests answered with `rate_limited`.
    pub rate_limited: Counter,
    moves: PerKind<Counter>,
    games_live: PerKind<Gauge>,
    games_started: PerKind<Counter>,
    games_ended: Family<EndLabels, Counter>,
    rooms_open: PerKind<Gauge>,
    store_latency: Histogram,
    /// Failed store calls.
    pub store_errors: Counter,
    /// Games this node took over from another (a dead, stopped or draining owner).
    pub lease_takeovers: Counter,
    /// Events the store had lost (a Redis failover) that their game's owner logged again.
    pub store_relogged: Counter,
    /// Players the store had lost (a Redis failover) that this node, which created them,
    /// stored again.
    pub identities_restored: Counter,
    /// Games that went back to what their log holds, the store having lost events the
    /// owner could not log again.
    pub store_rewinds: Counter,
    bus_lag: Histogram,
    cluster_nodes: Gauge,
    cluster_owned: Family<NodeLabel, Gauge>,
    cluster_matchmaker: Family<NodeLabel, Gauge>,
    /// Matchmaking: queue lengths, waiting times, rating gaps.
    pub queues: QueueMetrics,
    /// Moderation: reports, sanctions, filtered chat.
    pub moderation: moderation::ModerationMetrics,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let mut r = Registry::default();
        // A struct expression evaluates its fields in the order written: this is the order
        // of registration, which is the order of the series in the exposition.
        Metrics {
            connections_open: register(&mut r, series::CONNECTIONS_OPEN, Gauge::default()),
            connections: register(&mut r, series::CONNECTIONS, Counter::default()),
            connections_refused: register(&mut r, series::CONNECTIONS_REFUSED, Counter::default()),
            slow_consumers_dropped: register(
                &mut r,
                series::SLOW_CONSUMERS_DROPPED,
                Counter::default(),
            ),
            messages_in: register(&mut r, series::MESSAGES_IN, Counter::default()),
            messages_out: register(&mut r, series::MESSAGES_OUT, Counter::default()),
            rate_limited: register(&mut r, series::RATE_LIMITED, Counter::default()),
            moves: per_kind(&mut r, series::MOVES),
            games_live: per_kind(&mut r, series::GAMES_LIVE),
            games_started: per_kind(&mut r, series::GAMES_STARTED),
            games_ended: register(&mut r, series::GAMES_ENDED, Family::default()),
            rooms_open: per_kind(&mut r, series::ROOMS_OPEN),
            store_latency: register(
                &mut r,
                series::STORE_LATENCY,
                Histogram::new(STORE_BUCKETS_S),
            ),
            store_errors: register(&mut r, series::STORE_ERRORS, Counter::default()),
            lease_takeovers: register(&mut r, series::LEASE_TAKEOVERS, Counter::default()),
            store_relogged: register(&mut r, series::STORE_RELOGGED, Counter::default()),
            store_rewinds: register(&mut r, series::STORE_REWINDS, Counter::default()),
            identities_restored: register(&mut r, series::IDENTITIES_RESTORED, Counter::default()),
            bus_lag: register(&mut r, series::BUS_LAG, Histogram::new(BUS_BUCKETS_S)),
            cluster_nodes: register(&mut r, series::CLUSTER_NODES, Gauge::default()),
            cluster_owned: register(&mut r, series::CLUSTER_OWNED, Family::default()),
            cluster_matchmaker: register(&mut r, series::CLUSTER_MATCHMAKER, Family::default()),
            queues: QueueMetrics::new(&mut r),
            moderation: moderation::ModerationMetrics::new(&mut r),
            registry: r,
        }
    }
}

/// Registers `metric` and returns it: a metric is a shared handle, so the registry's copy
/// and the one kept here count the same series.
fn register<M: Metric + Clone>(r: &mut Registry, (name, help): Series, metric: M) -> M {
    r.register(name, help, metric.clone());
    metric
}

/// Registers a family labelled by kind and keeps a handle per kind, so the hot paths
/// never look a series up in the family's map.
fn per_kind<M>(r: &mut Registry, series: Series) -> PerKind<M>
where
    M: Metric + Clone + Default,
    Family<KindLabel, M>: Metric,
{
    PerKind::new(&register(r, series, Family::default()))
}

impl Metrics {
    /// A move was applied in a game of `kind`.
    pub fn moved(&self, kind: &str) {
        self.moves.of(kind).inc();
    }

    /// The live-games gauge of `kind` (this node owns one more or one fewer).
    pub fn games_live(&self, kind: &str) -> &Gauge {
        self.games_live.of(kind)
    }

    /// A game of `kind` started on this node (it is live from now on).
    pub fn game_started(&self, kind: &str) {
        self.games_started.of(kind).inc();
        self.games_live.of(kind).inc();
    }

    /// A game of `kind` ended for `reason`.
    pub fn game_ended(&self, kind: &str, reason: Reason) {
        let kind = if KINDS.iter().any(|k| k.id == kind) {
            kind
        } else {
            "other"
        };
        self.games_ended
            .get_or_create(&EndLabels {
                kind: kind.into(),
                reason: reason.as_str().into(),
            })
            .inc();
    }

    /// The rooms waiting for a guest on this node, one kind per room (read at each scrape:
    /// a room changes state in many places, counting them here cannot drift).
    pub fn set_rooms_open<'a>(&self, kinds: impl IntoIterator<Item = &'a str>) {
        let mut counts = vec![0; self.rooms_open.handles.len()];
        for kind in kinds {
            counts[self.rooms_open.index(kind)] += 1;
        }
        for (gauge, n) in self.rooms_open.handles.iter().zip(counts) {
            gauge.set(n);
        }
    }

    /// Records one store call's latency and outcome.
    pub fn store_call(&self, elapsed: Duration, ok: bool) {
        self.store_latency.observe(elapsed.as_secs_f64());
        if !ok {
            self.store_errors.inc();
        }
    }

    /// A bus message sent at `sent_ms` (the sender's clock) arrived at `now_ms`. Clocks of
    /// different hosts may disagree a little; a negative lag counts as none.
    pub fn bus_message(&self, sent_ms: u64, now_ms: u64) {
        self.bus_lag
            .observe(now_ms.saturating_sub(sent_ms) as f64 / 1000.0);
    }

    /// The cluster's state as of this scrape: live nodes, games this node owns, and
    /// whether it runs the matchmaking.
    pub fn set_cluster(&self, node: &str, nodes: usize, owned: usize, matchmaker: bool) {
        self.cluster_nodes.set(nodes as i64);
        let label = NodeLabel { node: node.into() };
        self.cluster_owned.get_or_create(&label).set(owned as i64);
        self.cluster_matchmaker
            .get_or_create(&label)
            .set(i64::from(matchmaker));
    }

    /// The OpenMetrics text exposition of every series.
    pub fn render(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail; an encoder error would be a bug in a label
        // type, and then the partial text is still the best answer.
        let _ = prometheus_client::encoding::text::encode(&mut s, &self.registry);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn renders_every_series_with_kind_and_reason_labels() {
        let m = Metrics::default();
        m.connections_open.inc();
        m.connections.inc();
        m.game_started("staku");
        m.moved("staku");
        m.moved("staku");
        m.moved("no-such-kind");
        m.game_ended("staku", Reason::Palace);
        m.game_ended("nope", Reason::Resign);
        m.games_live("staku").dec();
        m.set_rooms_open(["akron", "akron", "unane"]);
        m.set_rooms_open(["akron"]);
        m.store_call(Duration::from_micros(300), true);
        m.store_call(Duration::from_millis(30), false);
        m.bus_message(1_000, 1_004);
        m.bus_message(1_000, 900);
        m.lease_takeovers.inc();
        m.set_cluster("n1", 3, 7, true);
        let t = m.render();
        assert!(t.contains("# TYPE stoa_connections_open gauge\n"), "{t}");
        assert_eq!(value(&t, "stoa_connections_open"), Some(1.0));
        assert_eq!(value(&t, "stoa_connections_total"), Some(1.0));
        assert_eq!(value(&t, "stoa_moves_total{kind=\"staku\"}"), Some(2.0));
        assert_eq!(value(&t, "stoa_moves_total{kind=\"other\"}"), Some(1.0));
        assert_eq!(value(&t, "stoa_moves_total{kind=\"unane\"}"), Some(0.0));
        assert_eq!(
            value(&t, "stoa_games_started_total{kind=\"staku\"}"),
            Some(1.0)
        );
        assert_eq!(value(&t, "stoa_games_live{kind=\"staku\"}"), Some(0.0));
        assert_eq!(
            value(
                &t,
                "stoa_games_ended_total{kind=\"staku\",reason=\"palace\"}"
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &t,
                "stoa_games_ended_total{kind=\"other\",reason=\"resign\"}"
            ),
            Some(1.0)
        );
        assert_eq!(value(&t, "stoa_rooms_open{kind=\"akron\"}"), Some(1.0));
        assert_eq!(value(&t, "stoa_rooms_open{kind=\"unane\"}"), Some(0.0));
        assert_eq!(value(&t, "stoa_store_latency_seconds_count"), Some(2.0));
        assert_eq!(
            value(&t, "stoa_store_latency_seconds_bucket{le=\"0.0005\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "stoa_store_latency_seconds_bucket{le=\"0.025\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "stoa_store_latency_seconds_bucket{le=\"0.05\"}"),
            Some(2.0)
        );
        assert_eq!(value(&t, "stoa_store_errors_total"), Some(1.0));
        assert_eq!(value(&t, "stoa_lease_takeovers_total"), Some(1.0));
        assert_eq!(value(&t, "stoa_bus_lag_seconds_count"), Some(2.0));
        assert_eq!(
            value(&t, "stoa_bus_lag_seconds_bucket{le=\"0.0005\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "stoa_bus_lag_seconds_bucket{le=\"0.005\"}"),
            Some(2.0)
        );
        assert_eq!(value(&t, "stoa_cluster_nodes"), Some(3.0));
        assert_eq!(
            value(&t, "stoa_cluster_games_owned{node=\"n1\"}"),
            Some(7.0)
        );
        assert_eq!(value(&t, "stoa_cluster_matchmaker{node=\"n1\"}"), Some(1.0));
        assert!(t.ends_with("# EOF\n"), "{t}");
    }
}
