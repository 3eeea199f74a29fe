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

/// A room as answered by `room.create` / `room.join`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoomInfo {
    /// The room code.
    pub code: String,
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
    /// The host.
    pub host: SeatPlayer,
    /// Seats by side name; `null` when free.
    pub seats: serde_json::Map<String, Value>,
    /// `waiting`, `started` or `closed`.
    pub status: String,
    /// Addition: the game id once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
}
