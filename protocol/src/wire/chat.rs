//! Chat lines of games and waiting rooms.

use serde::{Deserialize, Serialize};

/// Longest accepted chat line, in characters after trimming.
pub const MAX_CHAT_CHARS: usize = 300;

/// Addition: a game's two chats. The players' chat is read by the two seated players only;
/// the spectators' chat by everyone else watching, and by the players too once the game
/// has ended (as on lichess: players are not distracted by the crowd while they play).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ChatChannel {
    /// The seated players' chat.
    Players,
    /// The spectators' chat.
    Spectators,
}

impl ChatChannel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChatChannel::Players => "players",
            ChatChannel::Spectators => "spectators",
        }
    }
}

/// Addition: one line of a waiting room's chat, as `room.chat.history` carries it (the
/// room has one channel: everyone who opened the room reads it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoomChatLine {
    /// The author's public id.
    pub id: String,
    /// The author's display name when they wrote it.
    pub name: String,
    /// The text (plain text: clients must never interpret it as markup).
    pub text: String,
    /// When the server took it, ms since the epoch.
    pub ts: u64,
}

/// Addition: one chat line as `chat` and `chat.history` carry it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChatEntry {
    /// Its channel.
    pub channel: ChatChannel,
    /// The author's public id.
    pub id: String,
    /// The author's display name when they wrote it.
    pub name: String,
    /// The text (plain text: clients must never interpret it as markup).
    pub text: String,
    /// When the server took it, ms since the epoch.
    pub ts: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{parse_client_message, ClientMessage, ErrorCode, Rid, ServerMessage};
    use serde_json::json;

    #[test]
    fn parses_and_encodes_chat() {
        let m =
            parse_client_message(r#"{"t":"chat.say","rid":1,"game_id":"g","text":"hi"}"#).unwrap();
        assert_eq!(
            m,
            ClientMessage::ChatSay {
                rid: Some(Rid::Int(1)),
                game_id: "g".into(),
                channel: None,
                text: "hi".into()
            }
        );
        let m = parse_client_message(
            r#"{"t":"chat.say","game_id":"g","channel":"spectators","text":"hi"}"#,
        )
        .unwrap();
        assert!(matches!(
            m,
            ClientMessage::ChatSay {
                channel: Some(ChatChannel::Spectators),
                ..
            }
        ));
        let bad = r#"{"t":"chat.say","game_id":"g","channel":"everyone","text":"hi"}"#;
        assert_eq!(
            parse_client_message(bad).unwrap_err().code,
            ErrorCode::BadRequest
        );
        let m = parse_client_message(r#"{"t":"chat.mute","game_id":"g","player_id":"p"}"#).unwrap();
        assert!(matches!(m, ClientMessage::ChatMute { muted: true, .. }));
        assert_eq!(m.type_name(), "chat.mute");
        let line = ServerMessage::Chat {
            game_id: "g".into(),
            channel: ChatChannel::Players,
            id: "p".into(),
            name: "<b>n</b>".into(),
            text: "<script>".into(),
            ts: 5,
        };
        assert_eq!(
            serde_json::to_value(&line).unwrap(),
            json!({"t":"chat","game_id":"g","channel":"players","id":"p","name":"<b>n</b>",
                "text":"<script>","ts":5})
        );
    }
}
