//! Arena tournaments as pure rules: scoring, standings, performance, pairing and the
//! schedule (protocol/docs/PROTOCOL.md, "Arenas (additions)").
//!
//! Why a pure module: an arena's standings must be recomputable from its games' results
//! alone (the end-to-end test does exactly that, and a node taking an arena over rebuilds
//! them the same way), so every rule is a function of plain values here, and the service
//! (`crate::services::arenas`) only feeds it results and times.

pub mod pairing;
pub mod schedule;
pub mod scoring;
pub mod standings;

pub use pairing::{pair, Candidate};
pub use schedule::{cutoff_at, ArenaStatus};
pub use scoring::{Outcome, PlayerResult, Sheet};
pub use standings::{order, Ranked};
