//! A move the server could not take for a moment (`unavailable`: in a cluster, "this game
//! is changing servers" while another node takes a dead node's game over; or the store
//! briefly away) is sent again by the client itself once the game answers, so the player
//! never types it twice.
//!
//! Why only while nothing changed: the move is sent again only while it is still our turn
//! in the same position (the same number of moves), so a move that was in fact played, or
//! a position that moved on, is never played twice or out of place.

use std::time::{Duration, Instant};

use super::Session;

/// How long a move is sent again before the client gives up and says why: a takeover
/// takes a lease (seconds), and a player should not wait on a game that does not come back.
const RESEND_FOR: Duration = Duration::from_secs(60);

/// The first wait before a move is sent again; each later one is twice as long, up to
/// [`RESEND_MAX_WAIT`].
const RESEND_FIRST_WAIT: Duration = Duration::from_millis(400);

/// The longest wait between two sendings.
const RESEND_MAX_WAIT: Duration = Duration::from_secs(3);

/// A move waiting to be sent again.
#[derive(Clone, Debug)]
pub(super) struct Resend {
    /// The game it is for.
    game_id: String,
    /// The move as typed.
    mv: String,
    /// How many moves the game had when the move was refused.
    moves: usize,
    /// When the move was first refused.
    since: Instant,
    /// When to send it again.
    at: Instant,
    /// The current wait between sendings.
    wait: Duration,
}

impl Session {
    /// The answer `unavailable` to move `mv`: keeps it to send again (said once), unless it
    /// was refused for too long already. `false` when it is not sent again (the caller then
    /// shows the error).
    pub(super) fn keep_for_resend(&mut self, mv: &str) -> bool {
        let (Some(game_id), Some(moves)) =
            (self.game_id.clone(), self.doc().map(|g| g.moves().len()))
        else {
            return false;
        };
        if !self.my_turn() {
            return false;
        }
        let now = Instant::now();
        let (since, wait) = match &self.resend {
            Some(r) if r.game_id == game_id && r.mv == mv && r.moves == moves => {
                (r.since, (r.wait * 2).min(RESEND_MAX_WAIT))
            }
            _ => {
                self.info(format!(
                    "the game is changing servers: {mv} is sent again by itself as soon as it answers"
                ));
                (now, RESEND_FIRST_WAIT)
            }
        };
        if now.duration_since(since) > RESEND_FOR {
            self.resend = None;
            return false;
        }
        self.resend = Some(Resend {
            game_id,
            mv: mv.to_string(),
            moves,
            since,
            at: now + wait,
            wait,
        });
        true
    }

    /// On the tick: sends the kept move again when its time came, if it is still our turn
    /// in the same position (else it is dropped: the game moved on, or it was played).
    pub(super) fn resend_due(&mut self) {
        let Some(r) = self.resend.clone() else {
            return;
        };
        if Instant::now() < r.at || !self.connected {
            return;
        }
        let same = self.game_id.as_deref() == Some(r.game_id.as_str())
            && self.doc().map(|g| g.moves().len()) == Some(r.moves)
            && self.my_turn();
        if !same {
            self.resend = None;
            return;
        }
        // Not due again until its answer says so (`keep_for_resend` sets the next time).
        if let Some(k) = self.resend.as_mut() {
            k.at = Instant::now() + RESEND_FOR;
        }
        self.play(&r.mv);
    }

    /// The connection dropped before the kept move's answer came: it is sent again once
    /// reconnected (the tick waits for the link). `false` when no move was kept.
    pub(super) fn resend_after_drop(&mut self, mv: &str) -> bool {
        match self.resend.as_mut() {
            Some(r) if r.mv == mv => {
                r.at = Instant::now() + r.wait;
                true
            }
            _ => false,
        }
    }

    /// Any answer to a move other than `unavailable`: nothing is waiting to be sent again.
    pub(super) fn move_answered(&mut self, mv: &str) {
        if self.resend.as_ref().is_some_and(|r| r.mv == mv) {
            self.resend = None;
        }
    }
}
