//! Everything the Stoa server and its clients agree on, with no I/O: the [`Game`] trait and
//! the four rules engines, notation and position strings, the wire messages, clock maths.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod akron;
pub mod akunur;
pub mod any_game;
pub mod clock;
pub mod explore;
pub mod game;
pub mod guide;
pub mod json_text;
pub mod lessons;
pub mod perft;
pub mod pointer;
pub mod record;
pub mod registry;
pub mod staku;
#[cfg(feature = "ts")]
pub mod typescript;
pub mod unane;
pub mod wire;

pub use any_game::{AnyGame, Instance, Played, Tracked};
pub use game::{Game, Outcome, Reason, RulesError, Side};
pub use guide::guide;
pub use registry::{kind, GameKind, KINDS};
