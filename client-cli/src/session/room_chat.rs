//! The chat of the room we host while it waits for an opponent: whoever opens the
//! invitation in a browser can talk with us before taking the seat. Its lines show as
//! `chat [room] <name>: <text>`, and `say <text>` writes in it until the game starts.

use stoa_protocol::wire::{ClientMessage, RoomChatLine, ServerMessage};

use super::answers::Pending;
use super::{Phase, Session, Start};
use crate::connection::RequestError;

impl Session {
    /// Opens the chat of the room we host (again after a reconnect).
    pub(super) fn open_room_chat(&mut self) {
        if !matches!(self.start, Start::Host { .. }) || !matches!(self.phase, Phase::Hosting) {
            return;
        }
        if let Some(code) = self.room_code.clone() {
            self.request(
                Pending::RoomWatch,
                ClientMessage::RoomWatch { rid: None, code },
            );
        }
    }

    /// `say <text>` while our room waits: a line in its chat. `false` when no room of ours
    /// waits (the line is for a game's chat then).
    pub(super) fn room_say(&mut self, text: &str) -> bool {
        if !matches!(self.phase, Phase::Hosting) || !matches!(self.start, Start::Host { .. }) {
            return false;
        }
        let Some(code) = self.room_code.clone() else {
            return false;
        };
        let msg = ClientMessage::RoomSay {
            rid: None,
            code,
            text: text.to_string(),
        };
        self.request(Pending::Action("say"), msg);
        true
    }

    /// The answer to `room.watch`: the lines not shown yet.
    pub(super) fn on_room_history(&mut self, answer: Result<ServerMessage, RequestError>) {
        match answer {
            Ok(ServerMessage::RoomChatHistory { lines, .. }) => {
                for l in lines {
                    self.room_chat_line(&l);
                }
            }
            Ok(_) => {}
            Err(e) => self.error(&e),
        }
    }

    /// A `room.chat` line of the room we host.
    pub(super) fn on_room_chat(&mut self, code: &str, line: RoomChatLine) {
        if self.room_code.as_deref() == Some(code) {
            self.room_chat_line(&line);
        }
    }

    /// Says one line once (a history after a reconnect repeats lines already shown);
    /// control characters, refused by the server anyway, show as `?`.
    fn room_chat_line(&mut self, l: &RoomChatLine) {
        if l.ts < self.room_chat_seen {
            return;
        }
        self.room_chat_seen = l.ts + 1;
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect()
        };
        self.info(format!(
            "chat [room] {}: {}",
            clean(&l.name),
            clean(&l.text)
        ));
    }
}
