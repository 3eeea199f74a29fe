//! The game's subscribers: who may watch, the snapshot or replayed diffs a new watcher
//! gets, and the one encoded diff every subscriber is sent.
//!
//! Why in one place: the rule for who may see a private game and the bookkeeping of who
//! is watching (spectator counts, a follower's idle time) change together.

use std::sync::Arc;
use std::time::Instant;

use crate::net::frame::Frame;
use stoa_protocol::wire::Rid;

use super::follower::Follower;
use super::{Actor, Role};
use crate::domain::visibility::Access;
use crate::error::ApiError;
use crate::game::core::{write_patch, Core, PatchOp};
use crate::game::published::{CaughtUp, Dropped, Kind, Published};
use crate::game::Answer;
use crate::ids::{PlayerId, RoomCode};
use crate::net::outbound::{ConnHandle, SendOutcome};

impl Actor {
    /// Who may see this game ([`crate::domain::visibility`]).
    fn access(&self) -> Access<'_> {
        let players = self.core.players();
        Access {
            visibility: self.core.visibility(),
            players: [players[0].id.as_str(), players[1].id.as_str()],
            code: self.core.code().map(RoomCode::as_str),
        }
    }

    /// Whether `code` is this private game's room code (as typed: it is normalized first).
    pub(super) fn code_matches(&self, code: Option<&str>) -> bool {
        self.access().code_matches(code)
    }

    /// Who may see this game (watch it, read its legal moves, fetch it): the one rule of
    /// [`crate::domain::visibility`], and whoever gave its room code earlier on this game.
    pub(super) fn may_see(&self, player_id: Option<&PlayerId>, code: Option<&str>) -> bool {
        self.access().may_see(player_id.map(PlayerId::as_str), code)
            || player_id.is_some_and(|p| self.code_viewers.contains(p))
    }

    /// Whether the player holds a seat here (seated players are never counted as
    /// spectators and get diffs first).
    pub(super) fn is_player(&self, player_id: Option<&PlayerId>) -> bool {
        player_id.is_some_and(|p| self.core.side_of(p).is_some())
    }

    /// Subscribes a connection: the diffs it missed since `since` when the replay buffer
    /// still holds them, a snapshot otherwise, then the crowd as this node knows it.
    pub(super) fn watch(
        &mut self,
        conn: Arc<ConnHandle>,
        rid: Option<Rid>,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<Answer, ApiError> {
        let seated = self.is_player(conn.player_id());
        let by_code = self.code_matches(code.as_deref());
        if !self.may_see(conn.player_id(), code.as_deref()) {
            return Err(ApiError::private_game());
        }
        if let (true, Some(p)) = (by_code, conn.player_id()) {
            // A spectator let in by the code may send `game.watch` again (a gap, a
            // reconnect) without it.
            self.code_viewers.insert(p.clone());
        }
        self.published.subscribe(conn.clone(), seated);
        if let Role::Follower(f) = &mut self.role {
            f.idle_since = None;
        }
        conn.add_sub(self.core.id());
        if seated {
            // A player back on the board: measure the link it came back on.
            self.pinged_at = [None; 2];
        }
        let encode = |_: &()| self.core.document().to_string();
        let answer = match self.published.catch_up(&conn, rid.as_ref(), since, encode) {
            Some(CaughtUp::Replayed) => Answer::Ok {
                seq: self.published.seq(),
            },
            Some(CaughtUp::Snapshot) => Answer::Sent,
            None => {
                self.unsubscribe(conn.id);
                return Ok(Answer::Sent);
            }
        };
        let crowd = match &self.role {
            Role::Follower(Follower {
                last_crowd: Some(frame),
                ..
            }) => frame.clone(),
            _ => self.crowd_frame(self.total_watchers()),
        };
        let chat = self.chat_history_for(&conn);
        if conn.send(crowd) != SendOutcome::Sent
            || chat.is_some_and(|frame| conn.send(frame) != SendOutcome::Sent)
        {
            self.unsubscribe(conn.id);
        } else if seated {
            self.ping_runner();
        }
        Ok(answer)
    }

    /// Pings the connections here of the player whose clock runs, at most once per ping
    /// interval per side: its round trip feeds that player's lag compensation just when a
    /// move of theirs is next (a game nobody moves in sends nothing, and a fast game
    /// measures each player about once per interval). No clock running (untimed, not yet
    /// started, paused), no ping.
    pub(super) fn ping_runner(&mut self) {
        let Some(side) = self.core.clock().clock().running() else {
            return;
        };
        let player = &PlayerId::from(self.core.player_ids()[side.index()]);
        if self.core.clock().lag(player).is_none() {
            return;
        }
        let now = tokio::time::Instant::now();
        let every = std::time::Duration::from_millis(self.caps.settings.ping_interval_ms);
        if self.pinged_at[side.index()].is_some_and(|t| now.duration_since(t) < every) {
            return;
        }
        self.pinged_at[side.index()] = Some(now);
        for (_, conn) in self.published.watchers() {
            if conn.player_id() == Some(player) {
                conn.send_ping();
            }
        }
    }

    /// Encodes the diff once (the `game.diff` message, written around the typed patch),
    /// buffers it for `since` and queues the same bytes for every subscriber.
    pub(super) fn publish(&mut self, patch: Vec<PatchOp>) {
        let dropped = self.published.publish(|out| write_patch(out, &patch));
        debug_assert_eq!(self.published.seq(), self.core.seq());
        self.forget(dropped);
    }

    /// Queues the same bytes for every subscriber, dropping those whose queue is full
    /// (a slow subscriber is kicked, never waited for).
    pub(super) fn broadcast(&mut self, bytes: Frame) {
        let dropped = self.published.broadcast(bytes);
        self.forget(dropped);
    }

    /// Ends a connection's subscription; a follower left without subscribers starts
    /// counting down to stopping.
    pub(super) fn unsubscribe(&mut self, conn_id: u64) {
        let gone = self.published.unsubscribe(conn_id);
        self.forget(gone.into_iter().collect());
    }

    /// Forgets subscribers already removed from the published document (they left, or
    /// their queue was full).
    pub(super) fn forget(&mut self, gone: Dropped) {
        for conn in &gone {
            conn.remove_sub(self.core.id());
        }
        if let (true, Role::Follower(f)) = (self.published.is_empty(), &mut self.role) {
            f.idle_since.get_or_insert_with(Instant::now);
        }
    }
}

/// The messages a game's document goes out in.
static GAME: Kind = Kind {
    snapshot: "game.snapshot",
    snapshot_id: Some("game_id"),
    diff: "game.diff",
    diff_id: Some("game_id"),
};

/// The published document of a game whose core is `core` (at its seq), keeping the last
/// `replay` diffs for `game.watch` with `since`.
pub(super) fn published(core: &Core, replay: usize) -> Published<()> {
    Published::new((), core.seq(), &GAME, core.id().as_str(), replay)
}
