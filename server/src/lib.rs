//! The Stoa game server as a library, so that tests and benchmarks can drive its parts.
//!
//! Module map (data flows one way: socket → session → game actor → store + broadcast):
//! - [`config`]: flags and environment.
//! - [`app`]: HTTP router, `/ws` upgrade, `/health`, `/metrics`, `/api/games/{id}`,
//!   listener and graceful shutdown.
//! - [`connection`]: one task per socket, reader loop + writer task with a bounded queue.
//! - [`outbound`]: the connection handle the rest of the server sends through.
//! - [`session`]: `hello`/`welcome`, rate limits, routing of requests.
//! - [`players`]: who is connected (several connections per player).
//! - [`rooms`]: hosting with codes.
//! - [`lobby`]: the lobby document (public rooms and games) with diffs.
//! - [`games`]: registry of live game actors.
//! - [`game`]: the actor, the document, the replay buffer.
//! - [`hub`]: shared state and cross-cutting operations (create/announce games, presence).
//! - [`store`]: the persistence trait and the in-memory store.
//! - [`rate_limit`], [`metrics`], [`ids`], [`error`].
#![forbid(unsafe_code)]

pub mod app;
pub mod config;
pub mod connection;
pub mod error;
pub mod game;
pub mod games;
pub mod hub;
pub mod ids;
pub mod lobby;
pub mod metrics;
pub mod outbound;
pub mod pairing;
pub mod players;
pub mod rate_limit;
pub mod rating;
pub mod rooms;
pub mod session;
pub mod store;

pub use app::{run, run_with_store};
pub use config::Config;
