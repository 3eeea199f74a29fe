//! The Stoa game server as a library, so that tests and benchmarks can drive its parts.
//!
//! Data flows one way: socket → session → game actor → store + broadcast. The modules are
//! in layers, lowest first, one folder each (`server/tests/module_graph.rs` checks that no
//! module names a higher layer, and that there is no import cycle):
//! - top level: [`ids`], [`config`], [`error`], [`time`] (the server's time source) beside
//!   the domain; [`node`], the composition root, at the very top.
//! - [`domain`]: pure values and rules — [`domain::setup`] (a game's settings, checked once
//!   where they come in), [`domain::clock_request`], [`domain::rating`] (Glicko-2 maths),
//!   [`domain::pairing`] (the queue model), [`domain::visibility`] (who may see a game),
//!   [`domain::rate_limit`].
//! - [`store`]: the persistence trait, the in-memory store and the Redis store; with
//!   [`metrics`] and [`net::outbound`] (a connection's send handle) the plumbing below the
//!   games.
//! - [`game`]: the actor, its clock driver, the document, the replay buffer, and the
//!   node-local registries: [`game::games`] (live actors), [`game::players`] (who is
//!   connected), [`game::queues`] (the matchmaking queues).
//! - [`services`]: the use cases — rooms and [`services::hosting`], the lobby, the
//!   matchmaker, ratings, bots, records, recovery, the game [`services::starter`], round
//!   trips ([`services::rtt`]), the [`services::registries`] they share, the
//!   [`services::topology`] seam between a single node and a cluster, and the
//!   [`services::hub`] that bundles them for the sessions.
//! - [`session`]: `hello`/`welcome`, rate limits, one file per request family.
//! - [`net`]: the accept loop, one task per connection, the HTTP router, the web client.
//! - [`cluster`]: the topology over Redis; only [`node`] names it.
//!
//! Code inside and outside the crate names the real paths (`stoa_server::services::hub`),
//! so that the layer check sees every edge.
#![forbid(unsafe_code)]

pub mod cluster;
pub mod config;
pub mod domain;
pub mod error;
pub mod game;
pub mod ids;
pub mod metrics;
pub mod net;
pub mod node;
pub mod services;
pub mod session;
pub mod store;
pub mod time;
