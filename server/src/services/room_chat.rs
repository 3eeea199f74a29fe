//! Waiting rooms' chats: one channel per room, read and written by everyone who opened the
//! room by its code (`room.watch`): the host, and whoever follows the invitation, before
//! (or without) taking the seat.
//!
//! Why apart from the game chat: a waiting room has no game actor to hold it; its chat is a
//! small list of lines per room code with the connections that opened it. The text rules
//! and the line budget are the game chat's ([`crate::domain::chat`]). In a cluster each line
//! is relayed to the other nodes ([`Delivery::room_line`]), which keep their own copy and
//! pass it to their own watchers; lines stay readable on the room code after its game
//! started, until the room's chat has been idle for [`IDLE_KEEP`] with nobody watching.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stoa_protocol::wire::{ErrorCode, RoomChatLine, ServerMessage};

use crate::domain::chat::{clean_text, HISTORY, LINES_PER_SECOND, LINE_BURST, TOO_FAST};
use crate::domain::rate_limit::TokenBucket;
use crate::error::ApiError;
use crate::ids::RoomCode;
use crate::net::outbound::ConnHandle;
use crate::services::topology::Topology;

/// How long a room's chat nobody watches is kept after its last line or watcher.
pub const IDLE_KEEP: Duration = Duration::from_secs(3600);

/// How many rooms one connection may have open at once (bounds what a connection holds).
pub const MAX_WATCHED: usize = 8;

/// One room's chat on this node.
#[derive(Default)]
struct RoomChat {
    /// The recent lines, oldest first.
    lines: VecDeque<RoomChatLine>,
    /// The connections here that opened the room.
    watchers: HashMap<u64, Arc<ConnHandle>>,
    /// Each author's line budget (lines said on this node).
    buckets: HashMap<String, TokenBucket>,
    /// The last line or watcher change.
    touched: Option<Instant>,
}

impl RoomChat {
    fn push(&mut self, line: RoomChatLine) {
        if self.lines.len() == HISTORY {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// Sends a line to every watcher here.
    fn deliver(&self, code: &RoomCode, line: &RoomChatLine) {
        let msg = ServerMessage::RoomChat {
            code: code.to_string(),
            id: line.id.clone(),
            name: line.name.clone(),
            text: line.text.clone(),
            ts: line.ts,
        };
        // Encoded per watcher: a room has a handful, and this keeps the service off the
        // socket layer's frame type.
        for conn in self.watchers.values() {
            conn.send_msg(&msg);
        }
    }
}

/// Every room chat this node holds.
pub struct RoomChats {
    topology: Arc<dyn Topology>,
    rooms: Mutex<HashMap<RoomCode, RoomChat>>,
}

impl std::fmt::Debug for RoomChats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomChats").finish_non_exhaustive()
    }
}

/// What a room's author is: id and display name.
pub struct Speaker<'a> {
    /// Public id.
    pub id: &'a str,
    /// Display name.
    pub name: &'a str,
}

impl RoomChats {
    /// No chats yet; lines are relayed to the other nodes through `topology`.
    pub fn new(topology: Arc<dyn Topology>) -> Self {
        RoomChats {
            topology,
            rooms: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<RoomCode, RoomChat>> {
        self.rooms.lock()
    }

    /// Drops the chats idle past [`IDLE_KEEP`] with nobody watching.
    fn sweep(rooms: &mut HashMap<RoomCode, RoomChat>, now: Instant) {
        rooms.retain(|_, chat| {
            !chat.watchers.is_empty()
                || chat
                    .touched
                    .is_some_and(|t| now.duration_since(t) < IDLE_KEEP)
        });
    }

    /// Opens a room's chat for a connection (a room that exists: the caller checked);
    /// its recent lines. Opening it again is harmless.
    pub fn watch(&self, code: &RoomCode, conn: Arc<ConnHandle>) -> Vec<RoomChatLine> {
        let now = Instant::now();
        let mut rooms = self.lock();
        if !rooms.contains_key(code) {
            Self::sweep(&mut rooms, now);
        }
        let chat = rooms.entry(code.clone()).or_default();
        chat.watchers.insert(conn.id, conn);
        chat.touched = Some(now);
        chat.lines.iter().cloned().collect()
    }

    /// Whether a connection has the room open.
    pub fn watching(&self, code: &RoomCode, conn_id: u64) -> bool {
        self.lock()
            .get(code)
            .is_some_and(|c| c.watchers.contains_key(&conn_id))
    }

    /// A reported line of a room's chat (`author`'s at `ts`, in a room the reporter's
    /// connection has open) with up to `around` lines before and after it, oldest first, and
    /// the reported line's index among them; `None` when there is no such line here.
    pub fn context(
        &self,
        code: &RoomCode,
        conn_id: u64,
        author: &str,
        ts: u64,
        around: usize,
    ) -> Option<(usize, Vec<RoomChatLine>)> {
        let rooms = self.lock();
        let chat = rooms.get(code)?;
        if !chat.watchers.contains_key(&conn_id) {
            return None;
        }
        let at = chat
            .lines
            .iter()
            .position(|l| l.id == author && l.ts == ts)?;
        let from = at.saturating_sub(around);
        let to = (at + around + 1).min(chat.lines.len());
        let lines = chat.lines.range(from..to).cloned().collect();
        Some((at - from, lines))
    }

    /// Closes a room's chat for a connection.
    pub fn unwatch(&self, code: &RoomCode, conn_id: u64) {
        if let Some(chat) = self.lock().get_mut(code) {
            if chat.watchers.remove(&conn_id).is_some() {
                chat.touched = Some(Instant::now());
            }
        }
    }

    /// Says a line in a room the connection has open: checked as a game chat's line and
    /// against the author's budget, kept, sent to every watcher (the author's connection
    /// too) and relayed to the other nodes. Nothing changes when it is refused.
    pub async fn say(
        &self,
        code: &RoomCode,
        conn_id: u64,
        author: Speaker<'_>,
        text: &str,
        now_ms: u64,
    ) -> Result<(), ApiError> {
        let text = clean_text(text)?;
        let line = {
            let mut rooms = self.lock();
            let chat = rooms
                .get_mut(code)
                .filter(|c| c.watchers.contains_key(&conn_id))
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::Conflict,
                        "open this room's chat (room.watch) before chatting in it",
                    )
                })?;
            let now = Instant::now();
            let bucket = chat
                .buckets
                .entry(author.id.to_string())
                .or_insert_with(|| TokenBucket::new(LINE_BURST, LINES_PER_SECOND, now));
            if !bucket.take(now) {
                return Err(ApiError::new(ErrorCode::RateLimited, TOO_FAST));
            }
            // Strictly after the room's last line here (a report names a line by its
            // author and `ts`).
            let ts = chat.lines.back().map_or(now_ms, |l| now_ms.max(l.ts + 1));
            let line = RoomChatLine {
                id: author.id.to_string(),
                name: author.name.to_string(),
                text,
                ts,
            };
            chat.push(line.clone());
            chat.touched = Some(now);
            chat.deliver(code, &line);
            line
        };
        self.topology.room_line(code, &line).await;
        Ok(())
    }

    /// A line said in a room on another node: kept here too and sent to this node's
    /// watchers.
    pub fn heard(&self, code: RoomCode, line: RoomChatLine) {
        let now = Instant::now();
        let mut rooms = self.lock();
        if !rooms.contains_key(&code) {
            Self::sweep(&mut rooms, now);
        }
        let chat = rooms.entry(code.clone()).or_default();
        chat.deliver(&code, &line);
        chat.push(line);
        chat.touched = Some(now);
    }
}
