//! What a seated player asks of a game and what the game answers: the vocabulary shared by
//! the actor, the sessions and the nodes of a cluster (which forward both over the bus).
//!
//! Why a file of its own: the cluster's messages carry these values, and naming them here
//! rather than in the game module keeps the cluster from depending on the actor itself.

use stoa_protocol::wire::DrawAction;

/// A game action by a seated player.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "a", rename_all = "snake_case")]
pub enum Act {
    /// A move in notation, with the seq the client last saw.
    Move {
        /// Notation as sent.
        mv: String,
        /// Optional seq check.
        seq: Option<u64>,
    },
    /// Resign.
    Resign,
    /// Draw offer / accept / decline.
    Draw {
        /// Which.
        action: DrawAction,
    },
    /// Abort.
    Abort,
    /// Claim the win for abandonment.
    Claim,
    /// Ask for a rematch.
    Rematch,
    /// Berserk (an arena game): halve one's own time before one's first action.
    Berserk,
    /// An operator banned this seated player: they lose (never sent by a player: the
    /// sessions build only the acts above).
    Banned,
    /// An operator aborts the game (in this seated player's name), moves played or not.
    OperatorAbort,
}

/// A successful answer from the actor; the connection turns it into a frame with the rid.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "a", rename_all = "snake_case")]
pub enum Answer {
    /// `ok`, with the seq it concerns.
    Ok {
        /// The seq after the action (or the current one).
        seq: u64,
    },
    /// `legal`.
    Legal {
        /// Current seq.
        seq: u64,
        /// Canonical notations.
        moves: Vec<String>,
    },
    /// The actor already queued the answer (a snapshot) on the connection.
    Sent,
}
