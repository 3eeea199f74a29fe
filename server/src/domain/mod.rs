//! The domain layer: pure values and rules, no I/O and no tasks.
//!
//! Why a layer of its own: these are the server's vocabulary (a game's setup, ratings,
//! pairing, who may see a game, request quotas), and everything above builds on them; they
//! name nothing above them, so they can be tested and reasoned about alone.

pub mod account;
pub mod arena;
pub mod chat;
pub mod clock_request;
pub mod moderation;
pub mod pairing;
pub mod rate_limit;
pub mod rating;
pub mod setup;
pub mod start_position;
pub mod visibility;
