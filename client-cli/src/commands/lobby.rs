//! `stoa lobby`: the live list of public rooms and games; pick one to watch or join.

use crate::session::Start;

/// The lobby request.
pub fn start() -> Start {
    Start::Lobby
}
