//! The Stoa game server as a library, so that tests and benchmarks can drive its parts.
//!
//! Module map (data flows one way: socket → session → game actor → store + broadcast):
//! - [`node`]: the composition root — builds the store, the topology (a [`topology::SingleNode`]
//!   or the [`cluster`]), the services and the HTTP edge, and runs them until shutdown.
//! - [`config`]: flags and environment.
//! - [`app`]: HTTP router, `/ws` upgrade, `/health`, `/metrics`, `/api/games/{id}`.
//! - [`web`]: the browser client's files, built in and served at `/`, `/g/<id>`, `/r/<code>`.
//! - [`listener`]: the accept loop (header deadline, connection caps, accept backoff).
//! - [`connection`]: one task per socket, reader loop + writer task with a bounded queue.
//! - [`outbound`]: the connection handle the rest of the server sends through.
//! - [`session`]: `hello`/`welcome`, rate limits, routing of requests.
//! - [`players`]: who is connected (several connections per player).
//! - [`rooms`]: rooms by code; [`hosting`]: joining a room and starting its game.
//! - [`lobby`]: the lobby document (public rooms and games) with diffs.
//! - [`games`]: registry of live game actors; [`registries`]: the node-local registries
//!   (games, players, queues, metrics) the services and the topology share.
//! - [`game`]: the actor, its clock driver, the document, the replay buffer.
//! - [`hub`]: the services of one node, bundled for the sessions and the HTTP edge.
//! - [`topology`]: the seam between a single node and a cluster (leases, queue routing,
//!   delivery, listings, player locks, per-IP quota, membership).
//! - [`starter`]: creating games, spawning their actors, announcing them; presence.
//! - [`matchmaker`]: `queue.join`/`queue.leave` and the pairing task over the [`queues`]
//!   (the pure [`pairing`] model behind a mutex); [`metrics::queues`]: its metrics.
//! - [`ratings`]: Glicko-2 ratings ([`rating`] is the pure maths) read from and written to
//!   the store, shown in `welcome`, seats and the lobby.
//! - [`clock_request`]: validation of the `clock` of `room.create` and `queue.join`.
//! - [`time`]: the server's time source (game clocks, `server_time`).
//! - [`rtt`]: websocket ping round trips, routed to the player's games for lag compensation.
//! - [`store`]: the persistence trait, the in-memory store and the Redis store.
//! - [`recovery`]: rebuilding games from their logs (start-up, takeover, following) and
//!   reloading waiting rooms.
//! - [`visibility`]: the one rule for who may see a game; [`setup`]: a game's settings,
//!   checked once where they come in.
//! - [`rate_limit`], [`metrics`], [`ids`], [`error`].
#![forbid(unsafe_code)]

pub mod app;
pub mod bots;
pub mod clock_request;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod error;
pub mod game;
pub mod games;
pub mod hosting;
pub mod hub;
pub mod ids;
pub mod listener;
pub mod lobby;
pub mod matchmaker;
pub mod metrics;
pub mod node;
pub mod outbound;
pub mod pairing;
pub mod players;
pub mod queues;
pub mod rate_limit;
pub mod rating;
pub mod ratings;
pub mod records;
pub mod recovery;
pub mod registries;
pub mod rooms;
pub mod rtt;
pub mod session;
pub mod setup;
pub mod starter;
pub mod store;
pub mod time;
pub mod topology;
pub mod visibility;
pub mod web;

pub use config::Config;
pub use node::{run, run_with_store};
