//! Where the session is: starting, queued, waiting in a room, in a game or in the lobby.
//! Each phase holds the state that only it has, so leaving a phase forgets that state.

use std::time::Instant;

use crate::document::Versioned;

/// Where the session is.
#[derive(Clone, Debug)]
pub enum Phase {
    /// The start request is on its way.
    Starting {
        /// The request was cut off by a drop: send it again after reconnecting.
        cut_off: bool,
    },
    /// Waiting in the matchmaking queue.
    Queued {
        /// When the server queued us.
        since: Instant,
        /// The last `queue.status`: our place and how many others wait.
        status: Option<QueueStatus>,
    },
    /// Waiting for an opponent in our room.
    Hosting,
    /// Seated in a room, waiting for the game to start.
    Joined,
    /// Following a game (playing or watching).
    Game,
    /// In an arena (`stoa arena`), between its games: its standings are shown.
    Arena,
    /// Browsing the lobby.
    Lobby {
        /// The lobby document, once the server sent it.
        doc: Option<Versioned>,
    },
}

impl Phase {
    /// Whether the start request is on its way.
    pub fn is_starting(&self) -> bool {
        matches!(self, Phase::Starting { .. })
    }

    /// Whether we wait in the matchmaking queue.
    pub fn is_queued(&self) -> bool {
        matches!(self, Phase::Queued { .. })
    }

    /// Whether we are in an arena's view, between its games.
    pub fn is_arena(&self) -> bool {
        matches!(self, Phase::Arena)
    }

    /// Whether we browse the lobby.
    pub fn is_lobby(&self) -> bool {
        matches!(self, Phase::Lobby { .. })
    }
}

/// Where we stand in the matchmaking queue, from the last `queue.status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueStatus {
    /// Place in the queue, 1-based.
    pub position: u64,
    /// How many others wait in the same queue.
    pub same_queue: u64,
    /// How many players wait in all other queues.
    pub other_queues: u64,
}

impl QueueStatus {
    /// The status in words: our place and how many others wait.
    pub fn line(&self) -> String {
        let same = match self.same_queue {
            0 => "nobody else waits for the same settings".to_string(),
            1 => "1 other player waits for the same settings".to_string(),
            k => format!("{k} other players wait for the same settings"),
        };
        format!(
            "in the queue: position {}; {same}; {} in other queues",
            self.position, self.other_queues
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_status_in_words() {
        let alone = QueueStatus {
            position: 1,
            same_queue: 0,
            other_queues: 3,
        };
        assert_eq!(
            alone.line(),
            "in the queue: position 1; nobody else waits for the same settings; 3 in other queues"
        );
        let two = QueueStatus {
            position: 2,
            same_queue: 2,
            other_queues: 0,
        };
        assert_eq!(
            two.line(),
            "in the queue: position 2; 2 other players wait for the same settings; 0 in other queues"
        );
    }
}
