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
use super::{frames, Actor, Role};
use crate::domain::visibility::Access;
use crate::error::ApiError;
use crate::ids::RoomCode;
use crate::game::core::PatchOp;
use crate::game::Answer;
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
    pub(super) fn may_see(&self, player_id: Option<&str>, code: Option<&str>) -> bool {
        self.access().may_see(player_id, code)
            || player_id.is_some_and(|p| self.code_viewers.contains(p))
    }

    /// Whether the player holds a seat here (seated players are never counted as
    /// spectators and get diffs first).
    pub(super) fn is_player(&self, player_id: Option<&str>) -> bool {
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
            self.code_viewers.insert(p.to_string());
        }
        if self.subs.insert(conn.id, conn.clone()).is_none() {
            match seated {
                true => self.player_subs.push(conn.id),
                false => self.watchers += 1,
            }
        }
        if let Role::Follower(f) = &mut self.role {
            f.idle_since = None;
        }
        conn.add_sub(self.core.id());
        if seated {
            // A player back on the board: measure the link it came back on.
            self.pinged_at = [None; 2];
        }
        let seq = self.core.seq();
        let replayed = since.and_then(|since| self.replay.since(since, seq));
        let answer = match replayed {
            Some(diffs) => {
                for d in diffs {
                    if conn.send(d) != SendOutcome::Sent {
                        self.unsubscribe(conn.id);
                        return Ok(Answer::Sent);
                    }
                }
                Answer::Ok { seq }
            }
            None => {
                let frame = self.snapshot_frame(rid.as_ref());
                if conn.send(frame) != SendOutcome::Sent {
                    self.unsubscribe(conn.id);
                    return Ok(Answer::Sent);
                }
                Answer::Sent
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
        let player = self.core.player_ids()[side.index()];
        if self.core.clock().lag(player).is_none() {
            return;
        }
        let now = tokio::time::Instant::now();
        let every = std::time::Duration::from_millis(self.caps.settings.ping_interval_ms);
        if self.pinged_at[side.index()].is_some_and(|t| now.duration_since(t) < every) {
            return;
        }
        self.pinged_at[side.index()] = Some(now);
        for conn in self.subs.values() {
            if conn.player_id() == Some(player) {
                conn.send_ping();
            }
        }
    }

    /// The `game.snapshot` frame: the document is encoded once per seq and shared by
    /// every watcher who asks for that seq; only the envelope (the rid) differs.
    pub(super) fn snapshot_frame(&mut self, rid: Option<&Rid>) -> Frame {
        let seq = self.core.seq();
        let doc = match &self.snapshot {
            Some((s, doc)) if *s == seq => doc.clone(),
            _ => {
                let doc: Arc<str> = self.core.document().to_string().into();
                self.snapshot = Some((seq, doc.clone()));
                doc
            }
        };
        frames::snapshot_frame(self.core.id(), seq, rid, &doc)
    }

    /// Encodes the diff once (the `game.diff` message, written around the typed patch),
    /// buffers it for `since` and queues the same bytes for every subscriber.
    pub(super) fn publish(&mut self, patch: Vec<PatchOp>) {
        let last_len = self.replay.last_len();
        let bytes = frames::diff_frame(self.core.id(), self.core.seq(), &patch, last_len);
        // The encoded document of an older seq is never sent again: not kept for the life
        // of an idle game (a few KiB each).
        if matches!(&self.snapshot, Some((seq, _)) if *seq != self.core.seq()) {
            self.snapshot = None;
        }
        self.replay.push(self.core.seq(), bytes.clone());
        self.broadcast(bytes);
    }

    /// Queues the same bytes for every subscriber, dropping those whose queue is full
    /// (a slow subscriber is kicked, never waited for).
    pub(super) fn broadcast(&mut self, bytes: Frame) {
        let mut gone = Vec::new();
        // The players first: their writers wake before thousands of spectators' do, so a
        // crowd never delays the opponent's diff.
        for id in &self.player_subs {
            if let Some(conn) = self.subs.get(id) {
                if conn.send(bytes.clone()) != SendOutcome::Sent {
                    gone.push(*id);
                }
            }
        }
        for (id, conn) in &self.subs {
            if self.player_subs.contains(id) {
                continue;
            }
            if conn.send(bytes.clone()) != SendOutcome::Sent {
                gone.push(*id);
            }
        }
        for id in gone {
            self.unsubscribe(id);
        }
    }

    /// Ends a connection's subscription; a follower left without subscribers starts
    /// counting down to stopping.
    pub(super) fn unsubscribe(&mut self, conn_id: u64) {
        // `swap_remove`: the last comes to the gap (order matters for speed only, and
        // shifting the rest costs a crowd's size per departure).
        if let Some(conn) = self.subs.swap_remove(&conn_id) {
            conn.remove_sub(self.core.id());
            match self.player_subs.iter().position(|id| *id == conn_id) {
                Some(i) => {
                    self.player_subs.swap_remove(i);
                }
                None => self.watchers -= 1,
            }
        }
        if let (true, Role::Follower(f)) = (self.subs.is_empty(), &mut self.role) {
            f.idle_since.get_or_insert_with(Instant::now);
        }
    }
}
