//! `stoa watch <game-id|room-code>`: follow a game as a spectator (or, for a game you sit in,
//! resume playing it).

use clap::Args;

use crate::session::Start;

/// Arguments of `stoa watch`.
#[derive(Clone, Debug, Args)]
pub struct WatchArgs {
    /// A game id, or the room code of a private game.
    target: String,
}

impl WatchArgs {
    /// The watch request.
    pub fn start(&self) -> Start {
        Start::Watch {
            target: self.target.trim().to_string(),
        }
    }
}
