//! A waiting room's chat from a session: `room.watch` opens it by the room's code (the host,
//! or anyone the code was given to, seated or not), `room.say` says a line while the room
//! waits, `room.unwatch` closes it (as does the end of the connection).

use stoa_protocol::wire::RoomChatLine;

use super::*;
use crate::services::room_chat::{Speaker, MAX_WATCHED};

impl Session {
    /// The room `typed` (matched as normalised), or `not_found` echoing the code as typed.
    async fn chat_room(&self, typed: &str) -> Result<Room, ApiError> {
        let code = RoomCode::typed(typed);
        self.hub
            .hosting
            .room(&code)
            .await?
            .ok_or_else(|| ApiError::no_room(typed))
    }

    /// `room.watch`: the room's recent lines; the new ones follow as `room.chat`.
    pub(super) async fn room_watch(
        &mut self,
        rid: Option<Rid>,
        code: &str,
    ) -> Result<(), ApiError> {
        self.me()?;
        let room = self.chat_room(code).await?;
        if !self.rooms_open.contains(&room.code) && self.rooms_open.len() >= MAX_WATCHED {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("at most {MAX_WATCHED} rooms open at once: room.unwatch one first"),
            ));
        }
        let lines: Vec<RoomChatLine> = self.hub.room_chats.watch(&room.code, self.conn.clone());
        if !self.rooms_open.contains(&room.code) {
            self.rooms_open.push(room.code.clone());
        }
        let info = room.info();
        self.send(&ServerMessage::RoomChatHistory {
            rid,
            code: room.code.to_string(),
            open: room.status == RoomStatus::Waiting,
            status: info.status,
            game_id: info.game_id,
            lines,
        });
        Ok(())
    }

    /// `room.unwatch`: no more lines of that room on this connection.
    pub(super) fn room_unwatch(&mut self, rid: Option<Rid>, code: &str) {
        let code = RoomCode::typed(code);
        self.hub.room_chats.unwatch(&code, self.conn.id);
        self.rooms_open.retain(|c| *c != code);
        self.ok(rid, None, None);
    }

    /// `room.say`: a line in a waiting room's chat.
    pub(super) async fn room_say(
        &mut self,
        rid: Option<Rid>,
        code: &str,
        text: &str,
    ) -> Result<(), ApiError> {
        let me = self.me()?.clone();
        self.may_say(text)?;
        let room = self.chat_room(code).await?;
        match room.status {
            RoomStatus::Waiting => {}
            RoomStatus::Started(_) => {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    "this room's game has started: its chat is read-only now (chat in the game)",
                ))
            }
            RoomStatus::Closed => {
                return Err(ApiError::new(ErrorCode::Conflict, "this room is closed"))
            }
        }
        let author = Speaker {
            id: me.id.as_str(),
            name: &me.name,
        };
        let now = self.hub.time.now_ms();
        self.hub
            .room_chats
            .say(&room.code, self.conn.id, author, text, now)
            .await?;
        self.ok(rid, None, None);
        Ok(())
    }
}
