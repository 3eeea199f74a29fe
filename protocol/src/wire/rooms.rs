//! Waiting rooms: their visibility, their seats, and the room as answered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Room visibility: public rooms and games are listed and watchable by anyone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Listed in the lobby, watchable by anyone.
    Public,
    /// Reachable only by room code (or by seat).
    #[default]
    Private,
}

impl Visibility {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Private => "private",
        }
    }
}

/// A player as shown in a game document's `players` and in rooms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SeatPlayer {
    /// Public id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Rating for this game kind, `null` until ratings exist.
    pub rating: Option<Value>,
    /// Addition: a computer player (absent for people).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bot: bool,
}

/// What a room offers: the game it starts and on what terms. One type for every form of a
/// room that says it — the wire's [`RoomInfo`] and the server's stored record flatten it in
/// — so the three cannot drift apart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoomTerms {
    /// Game kind.
    pub kind: String,
    /// Validated options.
    pub options: Value,
    /// Clock request object.
    pub clock: Value,
    /// Rated flag.
    pub rated: bool,
    /// Visibility.
    pub visibility: Visibility,
    /// Addition: the position the game starts from, when not the kind's start (`bot.play`
    /// with a `position`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

/// Where a room is in its life, as the wire and the store write it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RoomState {
    /// The host waits for an opponent.
    Waiting,
    /// Both seats filled; the game started.
    Started,
    /// The host left before anyone joined.
    Closed,
}

/// A room as answered by `room.create` / `room.join`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoomInfo {
    /// The room code.
    pub code: String,
    /// The game and its terms (written as the room's own fields).
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub terms: RoomTerms,
    /// The host.
    pub host: SeatPlayer,
    /// Seats by side name; `null` when free.
    pub seats: serde_json::Map<String, Value>,
    /// `waiting`, `started` or `closed`.
    pub status: RoomState,
    /// Addition: the game id once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The terms are written as the room's own fields, in the order the protocol lists
    /// them, and read back from that form.
    #[test]
    fn a_room_is_written_with_its_terms_inline() {
        let room = RoomInfo {
            code: "ABCDE12345".into(),
            terms: RoomTerms {
                kind: "akron".into(),
                options: json!({"size": 4}),
                clock: json!({"kind": "none"}),
                rated: false,
                visibility: Visibility::Public,
                start: None,
            },
            host: SeatPlayer {
                id: "pa".into(),
                name: "ann".into(),
                rating: None,
                bot: false,
            },
            seats: serde_json::Map::from_iter([
                ("vert".to_string(), Value::Null),
                ("horz".to_string(), Value::Null),
            ]),
            status: RoomState::Started,
            game_id: Some("g1".into()),
        };
        let text = serde_json::to_string(&room).expect("serialises");
        assert_eq!(
            text,
            r#"{"code":"ABCDE12345","kind":"akron","options":{"size":4},"clock":{"kind":"none"},"rated":false,"visibility":"public","host":{"id":"pa","name":"ann","rating":null},"seats":{"vert":null,"horz":null},"status":"started","game_id":"g1"}"#
        );
        assert_eq!(
            serde_json::from_str::<RoomInfo>(&text).expect("reads"),
            room
        );
    }
}
