//! `stoa join <code>`: take the free seat of a room and play (or watch its game when the room
//! is already full).

use clap::Args;

use crate::session::Start;

/// Arguments of `stoa join`.
#[derive(Clone, Debug, Args)]
pub struct JoinArgs {
    /// The room code the host shared.
    code: String,
}

impl JoinArgs {
    /// The join request.
    pub fn start(&self) -> Start {
        Start::Join {
            code: self.code.trim().to_string(),
        }
    }
}
