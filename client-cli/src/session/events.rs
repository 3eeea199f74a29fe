//! What the connection tells the session unasked: the server's pushes (games starting, game
//! and lobby documents, the queue), drops and reconnections, and the periodic tick.

use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_protocol::wire::{ChatChannel, ClientMessage, RoomChatLine, ServerMessage};

use super::answers::Pending;
use super::followed::Followed;
use super::start::watch_request;
use super::{Note, Phase, QueueStatus, Session, Start};
use crate::connection::{ConnEvent, RequestError};
use crate::document::{Applied, Versioned};

impl Session {
    /// Handles one connection event.
    pub fn on_event(&mut self, ev: ConnEvent) {
        match ev {
            ConnEvent::Message(msg) => self.on_message(msg),
            ConnEvent::Disconnected(why) => {
                self.connected = false;
                self.watch_in_flight = false;
                self.info(disconnected_line(&why));
            }
            ConnEvent::Reconnected(me) => {
                self.connected = true;
                self.me = me;
                self.info("reconnected");
                self.resubscribe();
            }
            ConnEvent::Closed(why) => {
                self.connected = false;
                self.notes
                    .push(Note::Error(format!("error connection: {why}")));
                self.fail();
            }
        }
    }

    /// After a reconnect: subscriptions ended with the old connection, so ask again.
    fn resubscribe(&mut self) {
        if self.phase.is_lobby() {
            self.request(Pending::LobbyWatch, ClientMessage::LobbyWatch { rid: None });
        }
        if self.game_id.is_some() {
            self.watch_game();
        }
        if !self.phase.is_starting() {
            // (A cut-off start request is sent again below, and is the watch.)
            self.watch_arena();
        }
        self.open_room_chat();
        if self.phase.is_queued() || self.take_cut_off() {
            // Dropping every connection left the queue (join it again), or the start request
            // itself was cut off.
            self.begin();
        }
    }

    /// Whether the start request was cut off by a drop; it is sent again only once.
    fn take_cut_off(&mut self) -> bool {
        match &mut self.phase {
            Phase::Starting { cut_off } => std::mem::take(cut_off),
            _ => false,
        }
    }

    /// Asks for the followed game again: the missed diffs when the server still has them,
    /// else a snapshot.
    pub(super) fn watch_game(&mut self) {
        let Some(id) = self.game_id.clone() else {
            return;
        };
        if self.watch_in_flight {
            return;
        }
        self.watch_in_flight = true;
        // Wire addition: the code lets a spectator of a private game resume by it.
        let code = self.room_code.clone().filter(|_| self.spectating());
        let msg = ClientMessage::GameWatch {
            rid: None,
            game_id: id,
            since: self.game.doc.as_ref().map(|v| v.seq),
            code,
        };
        self.request(Pending::Watch, msg);
    }

    fn on_message(&mut self, msg: ServerMessage) {
        match msg {
            ServerMessage::GameStarted {
                game_id,
                side,
                arena,
                ..
            } => self.on_game_started(game_id, side, arena),
            ServerMessage::GameSnapshot {
                game_id,
                seq,
                doc,
                rid,
            } => self.on_snapshot(game_id, seq, doc, rid.is_none()),
            ServerMessage::GameCrowd { ref game_id, .. }
                if self.game_id.as_deref() == Some(game_id.as_str()) =>
            {
                // Kept as the message's JSON: the document reader takes it beside the
                // document (spectators, online flags).
                self.game.crowd = serde_json::to_value(&msg).unwrap_or(Value::Null);
                self.redraw.doc = true;
            }
            ServerMessage::GameDiff {
                game_id,
                seq,
                patch,
            } => self.on_diff(&game_id, seq, &patch),
            ServerMessage::Lobby { seq, doc, .. } => self.on_lobby_doc(seq, doc),
            ServerMessage::LobbyDiff { seq, patch } => self.on_lobby_diff(seq, &patch),
            ServerMessage::Arena { seq, doc, .. } => self.on_arena_doc(seq, doc),
            ServerMessage::ArenaDiff { id, seq, patch } => self.on_arena_diff(&id, seq, &patch),
            ServerMessage::Error { code, message, .. } => {
                let e = RequestError::Server {
                    code: code.as_str().into(),
                    message,
                };
                self.error(&e);
            }
            ServerMessage::QueueStatus {
                position,
                same_queue,
                other_queues,
                ..
            } => self.on_queue_status(QueueStatus {
                position,
                same_queue,
                other_queues,
            }),
            chat @ (ServerMessage::Chat { .. }
            | ServerMessage::ChatHistory { .. }
            | ServerMessage::ChatSpectators { .. }
            | ServerMessage::RoomChat { .. }) => self.on_chat(chat),
            ServerMessage::Moderation { message, .. } => {
                // An operator's decision about us, said as the server words it.
                let clean: String = message
                    .chars()
                    .map(|c| if c.is_control() { '?' } else { c })
                    .collect();
                self.info(format!("[moderation] {clean}"));
            }
            ServerMessage::Shutdown { message } => {
                self.info(format!("server shutting down: {message}"));
            }
            _ => {}
        }
    }

    /// A chat line, a chat's history or its spectators' switch, of the game followed; a
    /// waiting room's chat line.
    fn on_chat(&mut self, msg: ServerMessage) {
        match msg {
            ServerMessage::Chat {
                game_id,
                channel,
                id,
                name,
                text,
                ts,
            } if self.game_id.as_deref() == Some(game_id.as_str()) => {
                self.chat_line(channel, &id, &name, &text, ts);
            }
            ServerMessage::ChatHistory {
                game_id,
                lines,
                spectators,
                ..
            } if self.game_id.as_deref() == Some(game_id.as_str()) => {
                // Said once: a history after a reconnect repeats lines already shown.
                let seen = self.game.chat_seen;
                for l in lines.iter().filter(|l| l.ts > seen) {
                    self.chat_line(l.channel, &l.id, &l.name, &l.text, l.ts);
                }
                if !spectators {
                    self.info("the players turned the spectators' chat off");
                }
            }
            ServerMessage::RoomChat {
                code,
                id,
                name,
                text,
                ts,
            } => self.on_room_chat(&code, RoomChatLine { id, name, text, ts }),
            ServerMessage::ChatSpectators { game_id, on }
                if self.game_id.as_deref() == Some(game_id.as_str()) =>
            {
                let state = if on { "on" } else { "off" };
                self.info(format!("the players turned the spectators' chat {state}"));
            }
            _ => {}
        }
    }

    /// Where we stand in the queue.
    fn on_queue_status(&mut self, now: QueueStatus) {
        if let Phase::Queued { status, .. } = &mut self.phase {
            *status = Some(now);
            self.info(now.line());
        }
    }

    fn on_game_started(&mut self, id: String, side: String, arena: Option<String>) {
        self.rematch_before_start(&id);
        if self.game_id.as_deref() != Some(id.as_str()) {
            if let Some(old) = &self.game_id {
                // A rematch: the finished game is of no more interest.
                self.conn.send(ClientMessage::GameUnwatch {
                    rid: None,
                    game_id: old.clone(),
                });
            }
            self.game = Followed::default();
        }
        if self.phase.is_starting() {
            // The game can start before the answer to our join arrives: say we joined
            // first, in the order it happened (the late answer says nothing).
            if let Start::Join { code } = &self.start {
                let line = format!("joined room {code}");
                self.info(line);
            }
        }
        self.game_id = Some(id.clone());
        self.started_side = Some(side.clone());
        self.phase = Phase::Game;
        self.started_at = Some(Instant::now());
        self.info(format!("game started {id} side {side}"));
        if arena.is_some() && self.arena().is_some_and(|d| d["berserk"] == true) {
            self.info("arena game: type berserk before your first move to halve your time for one more point on a win");
        }
    }

    /// A game's document whole; `pushed`: sent by the server on its own (no `rid`).
    fn on_snapshot(&mut self, id: String, seq: u64, doc: Value, pushed: bool) {
        self.watch_retry_at = None;
        if self.game_id.is_none() && self.awaiting_room_game() {
            self.game_id = Some(id.clone());
        }
        if let Start::Watch { target } = &self.start {
            if self.game.doc.is_none()
                && self.game_id.as_deref() == Some(target.as_str())
                && id != *target
            {
                // `watch <room-code>`: the server resolved the code to its game; keep the
                // code to watch again (reconnects) and follow the real id.
                self.room_code = Some(target.clone());
                self.game_id = Some(id.clone());
            }
        }
        if self.game_id.as_deref() != Some(id.as_str()) {
            return;
        }
        if !Versioned::take_snapshot(&mut self.game.doc, seq, doc, pushed) {
            return;
        }
        self.watch_in_flight = false;
        self.following_rematch = None;
        self.phase = Phase::Game;
        self.after_game_change(true);
    }

    fn on_diff(&mut self, id: &str, seq: u64, patch: &Value) {
        if self.game_id.as_deref() != Some(id) {
            return;
        }
        let Some(game) = self.game.doc.as_mut() else {
            self.watch_game();
            return;
        };
        match game.apply(seq, patch) {
            Applied::Changed => self.after_game_change(false),
            Applied::Stale => {}
            Applied::Gap => {
                self.watch_in_flight = false;
                self.watch_game();
            }
        }
    }

    /// The lobby's document (the answer to a watch). Taken whatever its seq: the lobby's
    /// seq is the serving node's own, so after a reconnect a newer lobby may come with a
    /// lower one.
    fn on_lobby_doc(&mut self, seq: u64, doc: Value) {
        if let Phase::Lobby { doc: lobby } = &mut self.phase {
            *lobby = Some(Versioned::new(seq, doc));
            self.redraw.lobby = true;
        }
    }

    fn on_lobby_diff(&mut self, seq: u64, patch: &Value) {
        let Phase::Lobby { doc } = &mut self.phase else {
            return;
        };
        let gap = match doc.as_mut() {
            Some(l) => match l.apply(seq, patch) {
                Applied::Changed => {
                    self.redraw.lobby = true;
                    false
                }
                Applied::Stale => false,
                Applied::Gap => true,
            },
            None => false,
        };
        if gap {
            self.request(Pending::LobbyWatch, ClientMessage::LobbyWatch { rid: None });
        }
    }

    /// Periodic work: if a game started but no snapshot came, ask for it; watch a waiting
    /// room's game again.
    pub fn on_tick(&mut self) {
        self.resend_due();
        if self
            .watch_retry_at
            .is_some_and(|at| Instant::now() >= at && self.connected)
        {
            self.watch_retry_at = Some(Instant::now() + Duration::from_secs(60));
            if let Start::Watch { target } = &self.start {
                self.request(Pending::Start, watch_request(target.clone()));
            }
        }
        if matches!(self.phase, Phase::Game) && self.game.doc.is_none() && self.connected {
            let wait = if self.following_rematch.is_some() {
                Duration::from_millis(300)
            } else {
                Duration::from_secs(2)
            };
            if let Some(t) = self.started_at {
                if t.elapsed() > wait {
                    self.started_at = Some(Instant::now());
                    self.watch_game();
                }
            }
        }
    }
}

impl Session {
    /// Says one chat line: `chat <name>: <text>` (`chat [spectators] …` for the
    /// spectators' channel). The server refuses control characters; any that came anyway
    /// are shown as `?`, so a line can never steer the terminal.
    fn chat_line(&mut self, channel: ChatChannel, id: &str, name: &str, text: &str, ts: u64) {
        self.game.chat_seen = self.game.chat_seen.max(ts);
        self.game
            .chat_authors
            .insert(name.to_string(), id.to_string());
        let last = self.game.chat_last.entry(id.to_string()).or_default();
        *last = (*last).max(ts);
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect()
        };
        let room = match channel {
            ChatChannel::Players => "",
            ChatChannel::Spectators => "[spectators] ",
        };
        self.info(format!("chat {room}{}: {}", clean(name), clean(text)));
    }
}

/// What a dropped connection says: the same words whatever broke, then why.
pub fn disconnected_line(why: &str) -> String {
    format!("connection lost — reconnecting… ({why})")
}
