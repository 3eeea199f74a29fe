//! The name and help text of every series this module registers, in registration order
//! (the order of the exposition).
//!
//! Why a table: the names are an interface (dashboards and alerts query them), so they sit
//! together where a rename shows in review, apart from how each metric is built and kept.

/// A series' name and help text.
pub(super) type Series = (&'static str, &'static str);

/// The `connections_open` series.
pub(super) const CONNECTIONS_OPEN: Series = ("stoa_connections_open", "Open websocket connections");
/// The `connections` series.
pub(super) const CONNECTIONS: Series = ("stoa_connections", "Websocket connections accepted");
/// The `connections_refused` series.
pub(super) const CONNECTIONS_REFUSED: Series = (
    "stoa_connections_refused",
    "Connections refused by the per-IP or total connection limit",
);
/// The `slow_consumers_dropped` series.
pub(super) const SLOW_CONSUMERS_DROPPED: Series = (
    "stoa_slow_consumers_dropped",
    "Connections dropped because their outbound queue was full",
);
/// The `messages_in` series.
pub(super) const MESSAGES_IN: Series = ("stoa_messages_in", "Text frames received");
/// The `messages_out` series.
pub(super) const MESSAGES_OUT: Series = ("stoa_messages_out", "Frames queued for sending");
/// The `rate_limited` series.
pub(super) const RATE_LIMITED: Series = ("stoa_rate_limited", "Requests answered rate_limited");
/// The `moves` series.
pub(super) const MOVES: Series = ("stoa_moves", "Moves applied, by kind");
/// The `games_live` series.
pub(super) const GAMES_LIVE: Series = (
    "stoa_games_live",
    "Games in progress whose owner is this node, by kind",
);
/// The `games_started` series.
pub(super) const GAMES_STARTED: Series =
    ("stoa_games_started", "Games started on this node, by kind");
/// The `games_ended` series.
pub(super) const GAMES_ENDED: Series = (
    "stoa_games_ended",
    "Games that ended on this node, by kind and reason",
);
/// The `rooms_open` series.
pub(super) const ROOMS_OPEN: Series = (
    "stoa_rooms_open",
    "Rooms waiting for their guest on this node, by kind",
);
/// The `store_latency` series.
pub(super) const STORE_LATENCY: Series = (
    "stoa_store_latency_seconds",
    "Latency of store calls (memory or Redis)",
);
/// The `store_errors` series.
pub(super) const STORE_ERRORS: Series = ("stoa_store_errors", "Failed store calls");
/// The `lease_takeovers` series.
pub(super) const LEASE_TAKEOVERS: Series = (
    "stoa_lease_takeovers",
    "Games this node took over from another node",
);
/// The `store_relogged` series.
pub(super) const STORE_RELOGGED: Series = (
    "stoa_store_relogged",
    "Events a Redis failover lost that their game's owner logged again",
);
/// The `identities_restored` series.
pub(super) const IDENTITIES_RESTORED: Series = (
    "stoa_store_identities_restored",
    "Players a Redis failover lost that the node which created them stored again",
);
/// The `store_rewinds` series.
pub(super) const STORE_REWINDS: Series = (
    "stoa_store_rewinds",
    "Games that went back to their log after the store lost events not logged again",
);
/// The `bus_lag` series.
pub(super) const BUS_LAG: Series = (
    "stoa_bus_lag_seconds",
    "Delay of cluster bus messages from the sending node to this one",
);
/// The `cluster_nodes` series.
pub(super) const CLUSTER_NODES: Series = (
    "stoa_cluster_nodes",
    "Nodes of the cluster with a recent heartbeat",
);
/// The `cluster_owned` series.
pub(super) const CLUSTER_OWNED: Series = (
    "stoa_cluster_games_owned",
    "Live games whose lease this node holds",
);
/// The `cluster_matchmaker` series.
pub(super) const CLUSTER_MATCHMAKER: Series = (
    "stoa_cluster_matchmaker",
    "Whether this node runs the matchmaking (1) or not (0)",
);
