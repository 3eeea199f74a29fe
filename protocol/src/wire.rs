//! Wire messages of protocol/docs/PROTOCOL.md version 2, as serde types shared by the server and clients.
//!
//! Why a module of plain types: the server, the reference client, bots and the tests must
//! agree byte for byte on field names, so every message lives here once. The types follow
//! `protocol/docs/PROTOCOL.md` exactly; additions (fields or messages the page does not name) are
//! marked as such in their docs and clients ignore what they do not know.
//!
//! Parsing a client frame goes through [`parse_client_message`], which separates the three
//! failure classes the protocol distinguishes: invalid JSON / missing `t` / wrong field types
//! (`bad_request`) versus an unknown `t` (`unknown_type`).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

mod move_scan;

/// The protocol version this module implements (`hello.protocol`, `welcome.protocol`).
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest accepted string `rid`, in characters.
pub const MAX_RID_LEN: usize = 64;

/// A request id chosen by the client: an integer or a string of at most 64 characters.
///
/// Why its own type: the answer must echo it exactly (an integer stays an integer), and an
/// over-long string must be rejected as `bad_request` at parse time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rid {
    /// An integer rid.
    Int(i64),
    /// A string rid (at most [`MAX_RID_LEN`] characters).
    Str(String),
}

impl fmt::Display for Rid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rid::Int(i) => write!(f, "{i}"),
            Rid::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for Rid {
    fn from(v: i64) -> Self {
        Rid::Int(v)
    }
}

impl From<&str> for Rid {
    fn from(v: &str) -> Self {
        Rid::Str(v.to_string())
    }
}

impl Serialize for Rid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rid::Int(i) => s.serialize_i64(*i),
            Rid::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Rid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RidVisitor;
        impl Visitor<'_> for RidVisitor {
            type Value = Rid;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "an integer or a string of at most {MAX_RID_LEN} characters"
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rid, E> {
                Ok(Rid::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rid, E> {
                i64::try_from(v)
                    .map(Rid::Int)
                    .map_err(|_| E::custom("rid integer out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Rid, E> {
                if v.chars().count() > MAX_RID_LEN {
                    Err(E::custom(format!(
                        "rid string longer than {MAX_RID_LEN} characters"
                    )))
                } else {
                    Ok(Rid::Str(v.to_string()))
                }
            }
        }
        d.deserialize_any(RidVisitor)
    }
}

/// Extracts a valid `rid` from a raw JSON object, if it has one, so that even a
/// `bad_request` answer can echo it.
pub fn extract_rid(value: &Value) -> Option<Rid> {
    value
        .get("rid")
        .and_then(|r| Rid::deserialize(r.clone()).ok())
}

/// Error codes of protocol/docs/PROTOCOL.md's Errors section, serialised as the exact code strings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Invalid JSON, a missing `t`, wrong field types, a binary frame.
    BadRequest,
    /// A `t` the server does not know.
    UnknownType,
    /// A first message other than `hello`, or an unknown/revoked token.
    Unauthorized,
    /// An unknown game id or room code.
    NotFound,
    /// The player may not do this (a spectator acting, a private game without its code).
    Forbidden,
    /// A move by the side not to act.
    NotYourTurn,
    /// A move the rules reject (the reason is in `message`).
    IllegalMove,
    /// `seq` given with a move is not the current one.
    StaleSeq,
    /// An action on an ended game.
    GameOver,
    /// An action not allowed in the game's or room's current state.
    Conflict,
    /// Too many requests in the window.
    RateLimited,
    /// The server cannot serve this now (store down, shutting down).
    Unavailable,
    /// Room/queue options rejected by the game's validation.
    InvalidOptions,
}

impl ErrorCode {
    /// The wire string of the code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::IllegalMove => "illegal_move",
            ErrorCode::StaleSeq => "stale_seq",
            ErrorCode::GameOver => "game_over",
            ErrorCode::Conflict => "conflict",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::InvalidOptions => "invalid_options",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `clock` object of requests: the time control of [`crate::clock`], whose serde form
/// is exactly the Clocks section's (`kind` selects the other fields).
pub use crate::clock::TimeControl as ClockSpec;

/// Names of all clock kinds, for validating a request's `clock.kind`.
pub const CLOCK_KINDS: [&str; 5] = ["none", "fischer", "delay", "byoyomi", "correspondence"];

/// `game.draw` actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawAction {
    /// Offer a draw.
    Offer,
    /// Accept the opponent's offer.
    Accept,
    /// Decline the opponent's offer.
    Decline,
}

/// Room visibility: public rooms and games are listed and watchable by anyone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
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

fn default_protocol() -> u32 {
    PROTOCOL_VERSION
}

fn default_true() -> bool {
    true
}

fn default_side() -> String {
    "random".to_string()
}

/// Longest accepted chat line, in characters after trimming.
pub const MAX_CHAT_CHARS: usize = 300;

/// Addition: a game's two chats. The players' chat is read by the two seated players only;
/// the spectators' chat by everyone else watching, and by the players too once the game
/// has ended (as on lichess: players are not distracted by the crowd while they play).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Every message a client may send, tagged by `t`.
///
/// Why `Option<Rid>` everywhere: any request may carry a rid, and the answer echoes it.
/// Unknown fields are ignored (forward compatibility); wrong types are `bad_request`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t")]
pub enum ClientMessage {
    /// The first message of a session.
    #[serde(rename = "hello")]
    Hello {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Protocol version (1; missing means 1).
        #[serde(default = "default_protocol")]
        protocol: u32,
        /// A token from an earlier `welcome`, to be the same player again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// Display name for a new guest (1-24 characters).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Addition: a new guest created by this hello is a computer player (`stoa bot`);
        /// its seats carry `"bot": true` and its games are unrated.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        bot: bool,
        /// Addition: a label for the device saying hello ("browser (Chrome)", "terminal"),
        /// shown in `devices`; kept from the device's first `hello`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
        /// Addition: sign in to a claimed account instead of presenting a token: the
        /// `welcome` carries a new token for this device (no guest is made on the way).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        login: Option<Credentials>,
    },
    /// Liveness check; answered by `pong`, never rate limited.
    #[serde(rename = "ping")]
    Ping {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Subscribe to a game (snapshot, or missed diffs since `since`).
    #[serde(rename = "game.watch")]
    GameWatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The last seq the client has; the server replays later diffs when it can.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<u64>,
        /// Addition: the room code, to watch a private game directly.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// End a game subscription.
    #[serde(rename = "game.unwatch")]
    GameUnwatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Ask for the legal moves of the side to act.
    #[serde(rename = "game.legal")]
    GameLegal {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Play one action.
    #[serde(rename = "game.move")]
    GameMove {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The action in the game's notation.
        #[serde(rename = "move")]
        mv: String,
        /// The seq the client last saw; a different current seq gets `stale_seq`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Resign.
    #[serde(rename = "game.resign")]
    GameResign {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Offer, accept or decline a draw.
    #[serde(rename = "game.draw")]
    GameDraw {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// What to do.
        action: DrawAction,
    },
    /// Abort (while either side has not yet acted).
    #[serde(rename = "game.abort")]
    GameAbort {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Claim the win when the opponent is gone past the abandonment timeout.
    #[serde(rename = "game.claim")]
    GameClaim {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Ask for a rematch of an ended game.
    #[serde(rename = "game.rematch")]
    GameRematch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Host a room.
    #[serde(rename = "room.create")]
    RoomCreate {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Game kind (`unane`, `staku`, `akron`, `akunur`).
        kind: String,
        /// Game options (validated by the game; missing means defaults).
        #[serde(default)]
        options: Value,
        /// Clock request object; missing means `{"kind":"none"}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Value>,
        /// Rated game.
        #[serde(default)]
        rated: bool,
        /// Public or private (default private).
        #[serde(default)]
        visibility: Visibility,
        /// `random` or a side name: the host's side.
        #[serde(default = "default_side")]
        side: String,
    },
    /// Join a room by code (or watch its game when full).
    #[serde(rename = "room.join")]
    RoomJoin {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Room code.
        code: String,
    },
    /// Leave a room; the host leaving a waiting room closes it.
    #[serde(rename = "room.leave")]
    RoomLeave {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Room code.
        code: String,
    },
    /// Enter a matchmaking queue.
    #[serde(rename = "queue.join")]
    QueueJoin {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Game kind.
        kind: String,
        /// Game options.
        #[serde(default)]
        options: Value,
        /// Clock request object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<Value>,
        /// Rated pairing.
        #[serde(default)]
        rated: bool,
    },
    /// Leave the matchmaking queue.
    #[serde(rename = "queue.leave")]
    QueueLeave {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Subscribe to the lobby document.
    #[serde(rename = "lobby.watch")]
    LobbyWatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// End the lobby subscription.
    #[serde(rename = "lobby.unwatch")]
    LobbyUnwatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Addition: the text record of a finished game (its players, or with its room code).
    #[serde(rename = "game.record")]
    GameRecord {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The room code of a private game.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// Addition: a computer player (`stoa bot --serve`) offers to play these kinds at these
    /// levels; it gets `bot.invite` when a person asks for it, and says this again when free.
    #[serde(rename = "bot.serve")]
    BotServe {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Game kinds.
        kinds: Vec<String>,
        /// Levels (1-5).
        levels: Vec<u8>,
    },
    /// Addition: play the computer: a private room is made for the caller (answered like
    /// `room.create`) and a serving bot of that level is invited to it.
    #[serde(rename = "bot.play")]
    BotPlay {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Game kind.
        kind: String,
        /// Options.
        #[serde(default)]
        options: Value,
        /// Clock request.
        #[serde(default)]
        clock: Option<Value>,
        /// Strength, 1-5.
        level: u8,
        /// The caller's side, or `random` (default).
        #[serde(default = "default_side")]
        side: String,
    },
    /// Addition: say a line in a game's chat (see [`ChatChannel`] for who reads it).
    #[serde(rename = "chat.say")]
    ChatSay {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game (the connection must be watching it).
        game_id: String,
        /// The channel; missing means the sender's own (players for a seated player,
        /// spectators for everyone else).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel: Option<ChatChannel>,
        /// The line: at most [`MAX_CHAT_CHARS`] characters once trimmed, not empty, no
        /// control characters.
        text: String,
    },
    /// Addition: stop (or start again) receiving one person's chat lines in a game.
    #[serde(rename = "chat.mute")]
    ChatMute {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The person's public id.
        player_id: String,
        /// `true` (default) mutes, `false` unmutes.
        #[serde(default = "default_true")]
        muted: bool,
    },
    /// Addition: a seated player turns the spectators' chat of the game on or off.
    #[serde(rename = "chat.spectators")]
    ChatSpectators {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// Whether spectators may post.
        on: bool,
    },
    /// Addition: a player's finished games, newest first (default: the caller's own).
    #[serde(rename = "history")]
    History {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Whose games (another player's shows only their public games).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player_id: Option<String>,
        /// Only games that ended before this time (ms since the epoch): the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<u64>,
        /// At most this many (1-100, default 20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
    },
    /// Addition: a player's page: name, rating in every kind, recent finished games
    /// (default: the caller's own). Answered by [`ServerMessage::Player`].
    #[serde(rename = "player")]
    Player {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Whose page (another player's lists only their public games).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player_id: Option<String>,
    },
    /// Addition: a game kind's leaderboard. Answered by [`ServerMessage::Leaderboard`].
    #[serde(rename = "leaderboard")]
    Leaderboard {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game kind.
        kind: String,
    },
    /// Addition: a one-time code that links another device to this player. Answered by
    /// [`ServerMessage::LinkCode`].
    #[serde(rename = "link.code")]
    LinkCode {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Addition: redeems a code from `link.code` made on another device. Answered by
    /// [`ServerMessage::LinkToken`] (a token of the code's player, to say `hello` with).
    #[serde(rename = "link.redeem")]
    LinkRedeem {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The code as typed (case, dashes and look-alikes are forgiven).
        code: String,
        /// A label for the redeeming device.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    /// Addition: the devices holding this player's tokens. Answered by
    /// [`ServerMessage::Devices`].
    #[serde(rename = "devices")]
    Devices {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Addition: revokes one of this player's devices (its token stops working). Answered
    /// by `ok`; revoking the asking device also closes its connection.
    #[serde(rename = "device.revoke")]
    DeviceRevoke {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The device's id from `devices`.
        id: String,
    },
    /// Addition: opens a room's chat by its code (the host, or anyone invited, before or
    /// without taking the seat). Answered by [`ServerMessage::RoomChatHistory`]; the
    /// room's new lines follow as [`ServerMessage::RoomChat`] until `room.unwatch` or the
    /// connection ends.
    #[serde(rename = "room.watch")]
    RoomWatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The room's code (read forgivingly, as in `room.join`).
        code: String,
    },
    /// Addition: stops receiving a room's chat lines. Answered by `ok`.
    #[serde(rename = "room.unwatch")]
    RoomUnwatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The room's code.
        code: String,
    },
    /// Addition: says a line in a waiting room's chat (the connection must have opened it
    /// with `room.watch`). Answered by `ok`; the line comes back as `room.chat`.
    #[serde(rename = "room.say")]
    RoomSay {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The room's code.
        code: String,
        /// The line: the game chat's rules ([`MAX_CHAT_CHARS`] characters once trimmed,
        /// not empty, no control characters).
        text: String,
    },
    /// Addition: create an arena tournament (answered by `arena`; the creator watches it).
    #[serde(rename = "arena.create")]
    ArenaCreate {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena's settings.
        #[serde(flatten)]
        settings: Box<ArenaSettings>,
    },
    /// Addition: subscribe to an arena's document (answered by `arena`, then `arena.diff`s).
    #[serde(rename = "arena.watch")]
    ArenaWatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena's id (or give `code`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// A private arena's code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// Addition: end an arena subscription.
    #[serde(rename = "arena.unwatch")]
    ArenaUnwatch {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena.
        id: String,
    },
    /// Addition: enter an arena (or come back after a pause): `ok`.
    #[serde(rename = "arena.join")]
    ArenaJoin {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena's id (or give `code`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// A private arena's code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// Addition: leave an arena's pool (points stay; a game in progress goes on): `ok`.
    #[serde(rename = "arena.pause")]
    ArenaPause {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena.
        id: String,
    },
    /// Addition: the creator cancels an arena before its start: `ok`.
    #[serde(rename = "arena.cancel")]
    ArenaCancel {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The arena.
        id: String,
    },
    /// Addition: go berserk in an arena game (before one's first move): `ok`.
    #[serde(rename = "game.berserk")]
    GameBerserk {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
    },
    /// Addition: this player's account: answered by [`ServerMessage::Account`].
    #[serde(rename = "account")]
    Account {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
    /// Addition: claims an account for this player: a unique name and a password to sign in
    /// with from any device. Answered by [`ServerMessage::Account`].
    #[serde(rename = "account.claim")]
    AccountClaim {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The account's name (2-24 letters, digits, `-`, `_`; unique ignoring case).
        name: String,
        /// The password (8-256 characters).
        password: Password,
    },
    /// Addition: signs in to a claimed account from this connection: answered by
    /// [`ServerMessage::AccountToken`], a new device token of the account's player (the
    /// connection stays what it was; a `hello` with the token is the account's player).
    #[serde(rename = "account.login")]
    AccountLogin {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The account's name, as typed (case and Unicode forms are forgiven).
        name: String,
        /// The password.
        password: Password,
        /// A label for the device signing in (as in `hello`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    /// Addition: changes this account's password: `ok`. Other devices stay signed in
    /// unless `revoke_others` is set.
    #[serde(rename = "account.password")]
    AccountPassword {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The password now.
        current: Password,
        /// The new password (8-256 characters).
        new: Password,
        /// Also revoke every other device of the player.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        revoke_others: bool,
    },
    /// Addition: signs this device out: its token stops working (`ok`, then the
    /// connection closes).
    #[serde(rename = "account.logout")]
    AccountLogout {
        /// Request id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
    },
}

/// Addition: an account's name and password, to sign in with (`hello.login`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Credentials {
    /// The account's name, as typed.
    pub name: String,
    /// The password.
    pub password: Password,
}

/// A password as it travels in a request: the plain text on the wire, never in a debug
/// print (messages may be logged at debug level, and the password must leave no trace but
/// its hash).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<password>")
    }
}

/// Addition: an arena's settings as `arena.create` gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArenaSettings {
    /// Game kind.
    pub kind: String,
    /// Game options (missing: defaults).
    #[serde(default)]
    pub options: Value,
    /// Clock request object (missing: no clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Value>,
    /// Rated games.
    #[serde(default)]
    pub rated: bool,
    /// Start in this many ms (or give `starts_at_ms`; neither: at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_in_ms: Option<u64>,
    /// Start at this server time, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_at_ms: Option<u64>,
    /// How long the arena runs, ms (10 s to 24 h).
    pub duration_ms: u64,
    /// `public` (default: listed in the lobby) or `private` (joined by code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// A name (1-40 printable characters; default from the kind and clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Computer players may join (casual arenas only).
    #[serde(default)]
    pub bots: bool,
    /// Players may go berserk (timed arenas only, not correspondence).
    #[serde(default)]
    pub berserk: bool,
    /// Draws with fewer plies score nothing (default 0).
    #[serde(default)]
    pub min_draw_plies: u32,
}

/// Every `t` a client may send, in [`ClientMessage`] order.
pub const CLIENT_TYPES: &[&str] = &[
    "hello",
    "ping",
    "game.watch",
    "game.unwatch",
    "game.legal",
    "game.move",
    "game.resign",
    "game.draw",
    "game.abort",
    "game.claim",
    "game.rematch",
    "room.create",
    "room.join",
    "room.leave",
    "queue.join",
    "queue.leave",
    "lobby.watch",
    "lobby.unwatch",
    "game.record",
    "history",
    "bot.serve",
    "bot.play",
    "player",
    "leaderboard",
    "chat.say",
    "chat.mute",
    "chat.spectators",
    "link.code",
    "link.redeem",
    "devices",
    "device.revoke",
    "room.watch",
    "room.unwatch",
    "room.say",
    "arena.create",
    "arena.watch",
    "arena.unwatch",
    "arena.join",
    "arena.pause",
    "arena.cancel",
    "game.berserk",
    "account",
    "account.claim",
    "account.login",
    "account.password",
    "account.logout",
];

impl ClientMessage {
    /// The request's rid, if any.
    pub fn rid(&self) -> Option<&Rid> {
        match self {
            ClientMessage::Hello { rid, .. }
            | ClientMessage::Ping { rid }
            | ClientMessage::GameWatch { rid, .. }
            | ClientMessage::GameUnwatch { rid, .. }
            | ClientMessage::GameLegal { rid, .. }
            | ClientMessage::GameMove { rid, .. }
            | ClientMessage::GameResign { rid, .. }
            | ClientMessage::GameDraw { rid, .. }
            | ClientMessage::GameAbort { rid, .. }
            | ClientMessage::GameClaim { rid, .. }
            | ClientMessage::GameRematch { rid, .. }
            | ClientMessage::RoomCreate { rid, .. }
            | ClientMessage::RoomJoin { rid, .. }
            | ClientMessage::RoomLeave { rid, .. }
            | ClientMessage::QueueJoin { rid, .. }
            | ClientMessage::QueueLeave { rid }
            | ClientMessage::LobbyWatch { rid }
            | ClientMessage::LobbyUnwatch { rid }
            | ClientMessage::GameRecord { rid, .. }
            | ClientMessage::History { rid, .. }
            | ClientMessage::BotServe { rid, .. }
            | ClientMessage::BotPlay { rid, .. }
            | ClientMessage::Player { rid, .. }
            | ClientMessage::Leaderboard { rid, .. }
            | ClientMessage::ChatSay { rid, .. }
            | ClientMessage::ChatMute { rid, .. }
            | ClientMessage::ChatSpectators { rid, .. }
            | ClientMessage::LinkCode { rid }
            | ClientMessage::LinkRedeem { rid, .. }
            | ClientMessage::Devices { rid }
            | ClientMessage::DeviceRevoke { rid, .. }
            | ClientMessage::RoomWatch { rid, .. }
            | ClientMessage::RoomUnwatch { rid, .. }
            | ClientMessage::RoomSay { rid, .. }
            | ClientMessage::ArenaCreate { rid, .. }
            | ClientMessage::ArenaWatch { rid, .. }
            | ClientMessage::ArenaUnwatch { rid, .. }
            | ClientMessage::ArenaJoin { rid, .. }
            | ClientMessage::ArenaPause { rid, .. }
            | ClientMessage::ArenaCancel { rid, .. }
            | ClientMessage::GameBerserk { rid, .. }
            | ClientMessage::Account { rid }
            | ClientMessage::AccountClaim { rid, .. }
            | ClientMessage::AccountLogin { rid, .. }
            | ClientMessage::AccountPassword { rid, .. }
            | ClientMessage::AccountLogout { rid } => rid.as_ref(),
        }
    }

    /// The message's `t`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientMessage::Hello { .. } => "hello",
            ClientMessage::Ping { .. } => "ping",
            ClientMessage::GameWatch { .. } => "game.watch",
            ClientMessage::GameUnwatch { .. } => "game.unwatch",
            ClientMessage::GameLegal { .. } => "game.legal",
            ClientMessage::GameMove { .. } => "game.move",
            ClientMessage::GameResign { .. } => "game.resign",
            ClientMessage::GameDraw { .. } => "game.draw",
            ClientMessage::GameAbort { .. } => "game.abort",
            ClientMessage::GameClaim { .. } => "game.claim",
            ClientMessage::GameRematch { .. } => "game.rematch",
            ClientMessage::RoomCreate { .. } => "room.create",
            ClientMessage::RoomJoin { .. } => "room.join",
            ClientMessage::RoomLeave { .. } => "room.leave",
            ClientMessage::QueueJoin { .. } => "queue.join",
            ClientMessage::QueueLeave { .. } => "queue.leave",
            ClientMessage::LobbyWatch { .. } => "lobby.watch",
            ClientMessage::LobbyUnwatch { .. } => "lobby.unwatch",
            ClientMessage::GameRecord { .. } => "game.record",
            ClientMessage::History { .. } => "history",
            ClientMessage::BotServe { .. } => "bot.serve",
            ClientMessage::BotPlay { .. } => "bot.play",
            ClientMessage::Player { .. } => "player",
            ClientMessage::Leaderboard { .. } => "leaderboard",
            ClientMessage::ChatSay { .. } => "chat.say",
            ClientMessage::ChatMute { .. } => "chat.mute",
            ClientMessage::ChatSpectators { .. } => "chat.spectators",
            ClientMessage::LinkCode { .. } => "link.code",
            ClientMessage::LinkRedeem { .. } => "link.redeem",
            ClientMessage::Devices { .. } => "devices",
            ClientMessage::DeviceRevoke { .. } => "device.revoke",
            ClientMessage::RoomWatch { .. } => "room.watch",
            ClientMessage::RoomUnwatch { .. } => "room.unwatch",
            ClientMessage::RoomSay { .. } => "room.say",
            ClientMessage::ArenaCreate { .. } => "arena.create",
            ClientMessage::ArenaWatch { .. } => "arena.watch",
            ClientMessage::ArenaUnwatch { .. } => "arena.unwatch",
            ClientMessage::ArenaJoin { .. } => "arena.join",
            ClientMessage::ArenaPause { .. } => "arena.pause",
            ClientMessage::ArenaCancel { .. } => "arena.cancel",
            ClientMessage::GameBerserk { .. } => "game.berserk",
            ClientMessage::Account { .. } => "account",
            ClientMessage::AccountClaim { .. } => "account.claim",
            ClientMessage::AccountLogin { .. } => "account.login",
            ClientMessage::AccountPassword { .. } => "account.password",
            ClientMessage::AccountLogout { .. } => "account.logout",
        }
    }
}

/// Why a client frame could not be turned into a [`ClientMessage`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// `bad_request` or `unknown_type`.
    pub code: ErrorCode,
    /// A message for a person.
    pub message: String,
    /// The rid, when the frame was an object with a valid one.
    pub rid: Option<Rid>,
}

/// `game.move`'s fields, read in one pass.
#[derive(Deserialize)]
struct MoveFrame<'a> {
    #[serde(borrow)]
    t: std::borrow::Cow<'a, str>,
    #[serde(default)]
    rid: Option<Rid>,
    #[serde(default)]
    game_id: Option<String>,
    #[serde(default, rename = "move")]
    mv: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
}

/// A well-formed `game.move` frame, the most frequent of all, or `None` for any other frame
/// (which [`parse_client_message`] then decodes as it decodes every message).
///
/// Why a path of its own: `ClientMessage` is tagged by a member, so serde buffers every
/// member of the frame before it knows the variant (a profile of the move path had that
/// buffering at 5 % of the server's instructions); here the move's members are read
/// straight into their fields; the common shape of the frame not even through serde
/// ([`move_scan`]). Whatever this refuses is decoded the general way, so the answer to any
/// frame is the same as without it (tests hold the paths together).
fn parse_move(text: &str) -> Option<ClientMessage> {
    if let Some(msg) = move_scan::scan_move(text) {
        return Some(msg);
    }
    let f: MoveFrame<'_> = serde_json::from_str(text).ok()?;
    if f.t != "game.move" {
        return None;
    }
    Some(ClientMessage::GameMove {
        rid: f.rid,
        game_id: f.game_id?,
        mv: f.mv?,
        seq: f.seq,
    })
}

/// Parses one client text frame, telling `bad_request` (invalid JSON, not an object,
/// missing or non-string `t`, wrong field types) from `unknown_type` (a `t` not in
/// [`CLIENT_TYPES`]).
pub fn parse_client_message(text: &str) -> Result<ClientMessage, ParseError> {
    if let Some(msg) = parse_move(text) {
        return Ok(msg);
    }
    // Almost every frame is well formed: decode it straight into its type, without a
    // `Value` tree in between. Only a frame that fails is decoded again below, to tell
    // which error it gets and to find its rid.
    if let Ok(msg) = serde_json::from_str::<ClientMessage>(text) {
        return Ok(msg);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| ParseError {
        code: ErrorCode::BadRequest,
        message: format!("invalid JSON: {e}"),
        rid: None,
    })?;
    let rid = extract_rid(&value);
    let Some(obj) = value.as_object() else {
        return Err(ParseError {
            code: ErrorCode::BadRequest,
            message: "a message must be a JSON object".into(),
            rid,
        });
    };
    let t = match obj.get("t") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => {
            return Err(ParseError {
                code: ErrorCode::BadRequest,
                message: "field 't' must be a string".into(),
                rid,
            })
        }
        None => {
            return Err(ParseError {
                code: ErrorCode::BadRequest,
                message: "missing field 't'".into(),
                rid,
            })
        }
    };
    if !CLIENT_TYPES.contains(&t.as_str()) {
        return Err(ParseError {
            code: ErrorCode::UnknownType,
            message: format!("unknown message type '{t}'"),
            rid,
        });
    }
    ClientMessage::deserialize(value).map_err(|e| ParseError {
        code: ErrorCode::BadRequest,
        message: format!("bad '{t}' message: {e}"),
        rid,
    })
}

/// A player as shown in `welcome` (with all ratings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// Public id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Ratings by game kind (empty until ratings exist).
    #[serde(default)]
    pub ratings: serde_json::Map<String, Value>,
    /// Addition: the account this player claimed (its name), absent for a guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// One device holding a player's token, as `devices` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The device's id (for `device.revoke`).
    pub id: String,
    /// The label the device gave.
    pub label: String,
    /// When the device was linked (its token made), ms since the epoch.
    pub created_ms: u64,
    /// The device's last `hello`, ms since the epoch.
    pub last_seen_ms: u64,
    /// Whether this is the asking connection's device.
    pub current: bool,
}

/// A player as shown in a game document's `players` and in rooms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// Every message the server sends, tagged by `t`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t")]
pub enum ServerMessage {
    /// Answer to `hello`.
    #[serde(rename = "welcome")]
    Welcome {
        /// Echoed rid, if the hello had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Protocol version (1).
        protocol: u32,
        /// Who this session is.
        player: PlayerInfo,
        /// The secret token to be this player again.
        token: String,
        /// Ids of unfinished games this player sits in.
        games: Vec<String>,
        /// Server time, ms since the epoch.
        server_time: u64,
        /// Addition: the deployment this server belongs to, a stable id shared by every
        /// node of a cluster (kept in the store). Tokens are valid across a deployment, so
        /// clients keep them under this id rather than under a server address. Empty when
        /// read from a server that does not send it.
        #[serde(default)]
        deployment: String,
    },
    /// Answer to `ping`.
    #[serde(rename = "pong")]
    Pong {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Server time, ms since the epoch.
        server_time: u64,
    },
    /// A generic success answer.
    #[serde(rename = "ok")]
    Ok {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game's new seq (after an action) or current seq (after a diff replay).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
        /// Addition: the game this answer concerns, when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<String>,
    },
    /// A failed request (nothing changed).
    #[serde(rename = "error")]
    Error {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Machine-readable code.
        code: ErrorCode,
        /// Text for a person.
        message: String,
    },
    /// A full game document.
    #[serde(rename = "game.snapshot")]
    GameSnapshot {
        /// Echoed rid (absent on automatic snapshots after `game.started`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The document's seq.
        seq: u64,
        /// The document.
        doc: Value,
    },
    /// One change of a game document (RFC 6902 patch from seq-1 to seq).
    #[serde(rename = "game.diff")]
    GameDiff {
        /// The game.
        game_id: String,
        /// The new seq.
        seq: u64,
        /// The JSON Patch.
        patch: Value,
    },
    /// The crowd of a game (protocol version 2): unversioned, outside the document, so
    /// spectators coming and going never move `seq` nor evict the replay buffer.
    #[serde(rename = "game.crowd")]
    GameCrowd {
        /// The game.
        game_id: String,
        /// Connections watching that are not the seated players'.
        spectators: u64,
        /// Whether each seated player has a connection, keyed by side name.
        online: serde_json::Map<String, Value>,
    },
    /// Answer to `game.legal`.
    #[serde(rename = "legal")]
    Legal {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The seq the moves are legal at.
        seq: u64,
        /// Canonical notations.
        moves: Vec<String>,
    },
    /// Answer to `room.create` / `room.join`.
    #[serde(rename = "room")]
    Room {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The room (boxed: it is much larger than the other messages).
        room: Box<RoomInfo>,
    },
    /// A game this player sits in has started (a snapshot follows).
    #[serde(rename = "game.started")]
    GameStarted {
        /// The game.
        game_id: String,
        /// Game kind.
        kind: String,
        /// This player's side.
        side: String,
        /// Addition: the arena that paired this game (absent for other games).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arena: Option<String>,
    },
    /// Answer to `queue.join`.
    #[serde(rename = "queued")]
    Queued {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The queue's description.
        queue: Value,
        /// Position in the queue.
        position: u64,
    },
    /// Answer to `lobby.watch`.
    #[serde(rename = "lobby")]
    Lobby {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The lobby document's seq.
        seq: u64,
        /// The lobby document.
        doc: Value,
    },
    /// One change of the lobby document.
    #[serde(rename = "lobby.diff")]
    LobbyDiff {
        /// The new seq.
        seq: u64,
        /// The JSON Patch.
        patch: Value,
    },
    /// Addition: to a serving bot: join room `code` (a person asked to play `kind` at
    /// `level`).
    #[serde(rename = "bot.invite")]
    BotInvite {
        /// The room to join.
        code: String,
        /// Its game kind.
        kind: String,
        /// The level asked for.
        level: u8,
    },
    /// Addition: answer to `game.record`.
    #[serde(rename = "record")]
    Record {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// The record's text (see [`crate::record`]).
        text: String,
    },
    /// Addition: answer to `history`.
    #[serde(rename = "history")]
    History {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// One summary per game, newest first.
        games: Vec<Value>,
        /// Pass as `before` for the next page; `null` on the last page.
        next_before: Option<u64>,
    },
    /// Addition: answer to `player`.
    #[serde(rename = "player")]
    Player {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The page, as `GET /api/players/<id>` serves it: `{"id","name","bot","ratings":
        /// {<kind>:{"rating","deviation","provisional","games"}},"recent":[<summaries>]}`.
        player: Value,
    },
    /// Addition: answer to `leaderboard`.
    #[serde(rename = "leaderboard")]
    Leaderboard {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game kind.
        kind: String,
        /// Best first: `{"rank","id","name","rating","deviation","games"}` each, as `GET
        /// /api/leaderboard/<kind>` serves them.
        players: Vec<Value>,
    },
    /// Addition: answer to `link.code`.
    #[serde(rename = "link.code")]
    LinkCode {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The one-time code to type on the other device.
        code: String,
        /// When the code expires, ms since the epoch (server time).
        expires_ms: u64,
    },
    /// Addition: answer to `link.redeem`: a new token of the code's player for this device.
    #[serde(rename = "link.token")]
    LinkToken {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The new token; a `hello` with it is the linked player.
        token: String,
        /// The linked player's id.
        player_id: String,
        /// The linked player's name.
        name: String,
    },
    /// Addition: answer to `account` and `account.claim`.
    #[serde(rename = "account")]
    Account {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The claimed account's name; `null` while the player is a guest.
        name: Option<String>,
    },
    /// Addition: answer to `account.login`: a new token of the account's player for this
    /// device.
    #[serde(rename = "account.token")]
    AccountToken {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The new token; a `hello` with it is the account's player.
        token: String,
        /// The player's id.
        player_id: String,
        /// The player's name.
        name: String,
    },
    /// Addition: answer to `devices`.
    #[serde(rename = "devices")]
    Devices {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Oldest first.
        devices: Vec<DeviceInfo>,
    },
    /// Addition: the server is shutting down; a close frame follows.
    #[serde(rename = "shutdown")]
    Shutdown {
        /// Text for a person.
        message: String,
    },
    /// Addition: where a waiting player stands in its matchmaking queue and how many others
    /// wait, sent to all of the player's connections after a `queued` answer and whenever
    /// these numbers change (at most once per pairing wave), until paired or out of the
    /// queue. A player alone in its queue (`same_queue` 0) learns how many wait elsewhere.
    #[serde(rename = "queue.status")]
    QueueStatus {
        /// The queue, as in `queued`.
        queue: Value,
        /// Place in the queue, 1-based, in arrival order.
        position: u64,
        /// How many others wait in the same queue.
        same_queue: u64,
        /// How many players wait in all other queues.
        other_queues: u64,
        /// How long the player has waited so far, ms.
        waited_ms: u64,
    },

    /// Addition: a new line in a game's chat, to those who read its channel (see
    /// [`ChatChannel`]) and have not muted its author.
    #[serde(rename = "chat")]
    Chat {
        /// The game.
        game_id: String,
        /// Its channel.
        channel: ChatChannel,
        /// The author's public id.
        id: String,
        /// The author's display name.
        name: String,
        /// The text (plain text, never markup).
        text: String,
        /// When the server took it, ms since the epoch.
        ts: u64,
    },
    /// Addition: the recent chat lines this connection may read (oldest first, at most
    /// 100), sent right after a game's snapshot (or replayed diffs), and again whenever
    /// they may have changed as a whole (another server took the game over): it replaces
    /// what the client shows.
    #[serde(rename = "chat.history")]
    ChatHistory {
        /// The game.
        game_id: String,
        /// The lines.
        lines: Vec<ChatEntry>,
        /// Whether spectators may post.
        spectators: bool,
        /// The ids this player muted in this game.
        muted: Vec<String>,
    },
    /// Addition: the players turned the spectators' chat on or off (sent to everyone
    /// watching the game).
    #[serde(rename = "chat.spectators")]
    ChatSpectators {
        /// The game.
        game_id: String,
        /// Whether spectators may post now.
        on: bool,
    },
    /// Addition: a new line in a room's chat, to every connection that opened the room
    /// (`room.watch`), its author's included.
    #[serde(rename = "room.chat")]
    RoomChat {
        /// The room's code.
        code: String,
        /// The author's public id.
        id: String,
        /// The author's display name.
        name: String,
        /// The text (plain text, never markup).
        text: String,
        /// When the server took it, ms since the epoch.
        ts: u64,
    },
    /// Addition: answer to `room.watch`: the room's recent chat lines, oldest first (at
    /// most 100), and whether new ones are taken.
    #[serde(rename = "room.chat.history")]
    RoomChatHistory {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The room's code (normalised).
        code: String,
        /// The room's status: `waiting`, `started` or `closed`.
        status: String,
        /// The game the room started, once it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<String>,
        /// The lines.
        lines: Vec<RoomChatLine>,
        /// Whether `room.say` is taken (the room still waits); a started room's chat
        /// stays readable.
        open: bool,
    },
    /// Addition: an arena's whole document (answer to `arena.create` / `arena.watch`).
    #[serde(rename = "arena")]
    Arena {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The document's seq.
        seq: u64,
        /// The document.
        doc: Value,
    },
    /// Addition: one change of an arena's document (RFC 6902 patch from seq-1 to seq).
    #[serde(rename = "arena.diff")]
    ArenaDiff {
        /// The arena.
        id: String,
        /// The new seq.
        seq: u64,
        /// The JSON Patch.
        patch: Value,
    },
}

impl ServerMessage {
    /// An `error` message.
    pub fn error(rid: Option<Rid>, code: ErrorCode, message: impl Into<String>) -> Self {
        ServerMessage::Error {
            rid,
            code,
            message: message.into(),
        }
    }

    /// Encodes the message as one JSON text frame.
    pub fn to_json(&self) -> String {
        if let ServerMessage::Ok { rid, seq, game_id } = self {
            // The answer to every move: written directly (serde's path for a member of an
            // internally tagged enum buffers and escapes every key), the same bytes.
            let mut out = String::with_capacity(64);
            write_ok(&mut out, rid.as_ref(), *seq, game_id.as_deref());
            return out;
        }
        // Serialising these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{\"t\":\"error\"}"))
    }
}

/// Appends the text of [`ServerMessage::Ok`], byte for byte what `serde_json` writes for
/// it (a server writes it straight into the frame it sends).
pub fn write_ok(out: &mut String, rid: Option<&Rid>, seq: Option<u64>, game_id: Option<&str>) {
    use crate::json_text::write_str;
    out.push_str("{\"t\":\"ok\"");
    match rid {
        Some(Rid::Int(i)) => {
            out.push_str(",\"rid\":");
            out.push_str(itoa::Buffer::new().format(*i));
        }
        Some(Rid::Str(s)) => {
            out.push_str(",\"rid\":");
            write_str(out, s);
        }
        None => {}
    }
    if let Some(seq) = seq {
        out.push_str(",\"seq\":");
        out.push_str(itoa::Buffer::new().format(seq));
    }
    if let Some(id) = game_id {
        out.push_str(",\"game_id\":");
        write_str(out, id);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The general decoding alone (what `parse_client_message` did before `parse_move`).
    fn parse_generally(text: &str) -> Result<ClientMessage, ParseError> {
        match serde_json::from_str::<ClientMessage>(text) {
            Ok(msg) => Ok(msg),
            Err(_) => {
                // The frame fails the fast paths too: the same error path is taken.
                assert!(parse_move(text).is_none(), "{text}");
                parse_client_message(text)
            }
        }
    }

    #[test]
    fn the_move_path_decodes_every_frame_as_the_general_path_does() {
        let frames = [
            r#"{"t":"game.move","game_id":"g1","move":"d4"}"#,
            r#"{"t":"game.move","rid":7,"game_id":"g1","move":"d4","seq":12}"#,
            r#"{"move":"d4","seq":null,"rid":"r\"1","game_id":"g\u0031","t":"game.move","x":[1,{"t":2}]}"#,
            r#"{"t":"game\u002emove","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1"}"#,
            r#"{"t":"game.move","move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":-1}"#,
            r#"{"t":"game.move","game_id":1,"move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":1.5}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
            r#"{"t":"game.move","game_id":"g1","game_id":"g2","move":"a1"}"#,
            r#"{"t":"game.move","t":"game.resign","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.resign","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.moves","game_id":"g1","move":"a1"}"#,
            r#"{"t":5,"game_id":"g1","move":"a1"}"#,
            r#"{"game_id":"g1","move":"a1"}"#,
            r#"[1,2]"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1""#,
            r#" { "t" : "game.move" ,"rid":"r1","game_id":"g1","move":"a1","seq":0 } "#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":01}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":1.0}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":1e2}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":18446744073709551616}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":9223372036854775808}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":-3}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a\u00e9"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"é1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1"}x"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1",}"#,
            r#"{"t":"game.move",,"game_id":"g1","move":"a1"}"#,
            "{\"t\":\"game.move\",\"game_id\":\"g\u{1}\",\"move\":\"a1\"}",
            r#"{}"#,
        ];
        for text in frames {
            let fast = parse_client_message(text);
            let general = parse_generally(text);
            match (&fast, &general) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => {
                    assert_eq!(
                        (a.code, &a.message, &a.rid),
                        (b.code, &b.message, &b.rid),
                        "{text}"
                    )
                }
                _ => panic!("{text}: {fast:?} against {general:?}"),
            }
        }
        assert_eq!(
            parse_client_message(r#"{"rid":7,"t":"game.move","game_id":"g1","move":"d4","seq":3}"#)
                .unwrap(),
            ClientMessage::GameMove {
                rid: Some(Rid::Int(7)),
                game_id: "g1".into(),
                mv: "d4".into(),
                seq: Some(3),
            }
        );
    }

    /// Frames assembled from members of every kind the move path meets (the common
    /// shape, escapes, unknown and repeated members, nulls, signs, fractions, leading zeros,
    /// long rids, odd whitespace): every one is answered exactly as the general decoding
    /// answers it.
    #[test]
    fn generated_move_frames_decode_as_the_general_path_does() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let value = prop_oneof![
            Just(r#""game.move""#.to_string()),
            Just(r#""game\u002emove""#.to_string()),
            Just(r#""game.resign""#.to_string()),
            Just(r#""g7c2m9x4k0t8r""#.to_string()),
            Just(r#""b1-c1+d1""#.to_string()),
            Just(r#""a\"1""#.to_string()),
            Just(r#""é""#.to_string()),
            Just(format!("\"x{}\"", "r".repeat(70))),
            Just("null".to_string()),
            Just("true".to_string()),
            Just("[1,{\"t\":2}]".to_string()),
            (0u64..u64::MAX).prop_map(|n| n.to_string()),
            Just("18446744073709551616".to_string()),
            Just("9223372036854775807".to_string()),
            Just("-1".to_string()),
            Just("01".to_string()),
            Just("0".to_string()),
            Just("1.5".to_string()),
            Just("2e3".to_string()),
        ];
        // Mostly the common shape, each member drawn from plausible and odd values, in any
        // order, with now and then a member left out, repeated or unknown.
        let t = prop_oneof![
            8 => Just(r#""game.move""#.to_string()),
            1 => Just(r#""game\u002emove""#.to_string()),
            1 => Just(r#""game.resign""#.to_string()),
            1 => value.clone(),
        ];
        let text = prop_oneof![
            8 => Just(r#""g7c2m9x4k0t8r""#.to_string()),
            4 => Just(r#""b1-c1+d1""#.to_string()),
            1 => value.clone(),
        ];
        let number = prop_oneof![
            8 => (0u64..1_000_000).prop_map(|n| n.to_string()),
            1 => value.clone(),
        ];
        let optional = |v: BoxedStrategy<String>| prop::option::weighted(0.7, v);
        let extra = prop::option::weighted(
            0.2,
            (
                prop_oneof![
                    Just("x"),
                    Just("t"),
                    Just("rid"),
                    Just("game_id"),
                    Just("move"),
                    Just("seq")
                ],
                value.clone(),
            ),
        );
        let blank =
            prop_oneof![4 => Just(""), 2 => Just(" "), 1 => Just("\n\t"), 1 => Just("\u{a0}")];
        let frame = (
            prop::option::weighted(0.95, t),
            prop::option::weighted(0.95, text.clone()),
            prop::option::weighted(0.95, text),
            optional(prop_oneof![number.clone(), Just(r#""r-1""#.to_string())].boxed()),
            optional(number.boxed()),
            extra,
            prop::collection::vec(blank, 12),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(t, g, m, rid, seq, extra, blanks, order)| {
                let mut members: Vec<(String, String)> = Vec::new();
                for (k, v) in [
                    ("t", t),
                    ("game_id", g),
                    ("move", m),
                    ("rid", rid),
                    ("seq", seq),
                ] {
                    if let Some(v) = v {
                        members.push((k.to_string(), v));
                    }
                }
                if let Some((k, v)) = extra {
                    let at = order.index(members.len() + 1);
                    members.insert(at, (k.to_string(), v));
                }
                let n = members.len().max(1);
                members.rotate_left(order.index(n) % n);
                let body: Vec<String> = members
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        let (a, b) = (blanks[i % 12], blanks[(i + 5) % 12]);
                        format!("{a}\"{k}\"{b}:{a}{v}{b}")
                    })
                    .collect();
                format!("{}{{{}}}{}", blanks[11], body.join(","), blanks[10])
            });
        let mut runner = TestRunner::new(Config {
            cases: 4000,
            ..Config::default()
        });
        runner
            .run(&frame, |text| {
                let fast = parse_client_message(&text);
                let general = parse_generally(&text);
                match (&fast, &general) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", text),
                    (Err(a), Err(b)) => prop_assert_eq!(
                        (a.code, &a.message, &a.rid),
                        (b.code, &b.message, &b.rid),
                        "{}",
                        text
                    ),
                    _ => prop_assert!(false, "{}: {:?} against {:?}", text, fast, general),
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn classifies_bad_frames() {
        assert_eq!(
            parse_client_message("{").unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            parse_client_message("[1]").unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            parse_client_message(r#"{"rid":1}"#).unwrap_err().code,
            ErrorCode::BadRequest
        );
        let e = parse_client_message(r#"{"t":"nope","rid":"a"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownType);
        assert_eq!(e.rid, Some(Rid::Str("a".into())));
        let e = parse_client_message(r#"{"t":"game.move","rid":3,"game_id":1,"move":"x"}"#)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(e.rid, Some(Rid::Int(3)));
        let long = "x".repeat(65);
        let e = parse_client_message(&format!(r#"{{"t":"ping","rid":"{long}"}}"#)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(
            parse_client_message(r#"{"t":"ping","rid":1.5}"#)
                .unwrap_err()
                .code,
            ErrorCode::BadRequest
        );
    }

    #[test]
    fn parses_requests() {
        let m = parse_client_message(
            r#"{"t":"game.move","rid":"r1","game_id":"g","move":"a1","seq":4}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            ClientMessage::GameMove {
                rid: Some(Rid::Str("r1".into())),
                game_id: "g".into(),
                mv: "a1".into(),
                seq: Some(4)
            }
        );
        let m = parse_client_message(r#"{"t":"hello","protocol":1}"#).unwrap();
        assert_eq!(m.type_name(), "hello");
        let m = parse_client_message(r#"{"t":"room.create","kind":"unane"}"#).unwrap();
        match m {
            ClientMessage::RoomCreate {
                visibility, side, ..
            } => {
                assert_eq!(visibility, Visibility::Private);
                assert_eq!(side, "random");
            }
            _ => panic!(),
        }
        let m =
            parse_client_message(r#"{"t":"game.draw","game_id":"g","action":"offer"}"#).unwrap();
        assert_eq!(m.type_name(), "game.draw");
        assert!(parse_client_message(r#"{"t":"game.draw","game_id":"g","action":"x"}"#).is_err());
    }

    #[test]
    fn parses_arena_requests() {
        let m = parse_client_message(
            r#"{"t":"arena.create","rid":1,"kind":"unane","duration_ms":90000,"berserk":true,
                "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0}}"#,
        )
        .unwrap();
        let ClientMessage::ArenaCreate { rid, settings } = &m else {
            panic!("{m:?}");
        };
        assert_eq!(rid, &Some(Rid::Int(1)));
        assert_eq!(settings.kind, "unane");
        assert_eq!(settings.duration_ms, 90_000);
        assert!(settings.berserk && !settings.bots && !settings.rated);
        assert_eq!(settings.visibility, None);
        assert_eq!(m.type_name(), "arena.create");
        let e = parse_client_message(r#"{"t":"arena.create","rid":2,"kind":"unane"}"#).unwrap_err();
        assert_eq!((e.code, e.rid), (ErrorCode::BadRequest, Some(Rid::Int(2))));
        let m = parse_client_message(r#"{"t":"arena.join","code":"AB12"}"#).unwrap();
        assert!(matches!(
            m,
            ClientMessage::ArenaJoin {
                id: None,
                code: Some(_),
                ..
            }
        ));
        let m = parse_client_message(r#"{"t":"game.berserk","game_id":"g"}"#).unwrap();
        assert_eq!(m.type_name(), "game.berserk");
        let d = ServerMessage::ArenaDiff {
            id: "a1".into(),
            seq: 3,
            patch: json!([]),
        };
        assert_eq!(
            d.to_json(),
            r#"{"t":"arena.diff","id":"a1","seq":3,"patch":[]}"#
        );
    }

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

    #[test]
    fn encodes_answers() {
        let e = ServerMessage::error(Some(Rid::Int(7)), ErrorCode::StaleSeq, "old");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"t":"error","rid":7,"code":"stale_seq","message":"old"})
        );
        let ok = ServerMessage::Ok {
            rid: Some("x".into()),
            seq: Some(3),
            game_id: None,
        };
        assert_eq!(ok.to_json(), r#"{"t":"ok","rid":"x","seq":3}"#);
        // Every shape of `ok`, escapes included, as serde writes it.
        for rid in [
            None,
            Some(Rid::Int(i64::MIN)),
            Some(Rid::Int(7)),
            Some(Rid::Str(String::new())),
            Some(Rid::Str("a\"b\\c\n\u{1}ū".into())),
        ] {
            for seq in [None, Some(0), Some(u64::MAX)] {
                for game_id in [None, Some("g1".to_string()), Some("x\"\t".to_string())] {
                    let ok = ServerMessage::Ok {
                        rid: rid.clone(),
                        seq,
                        game_id,
                    };
                    assert_eq!(ok.to_json(), serde_json::to_string(&ok).unwrap());
                }
            }
        }
        let clock: ClockSpec =
            serde_json::from_value(json!({"kind":"fischer","initial_ms":1,"increment_ms":2}))
                .unwrap();
        assert_eq!(clock.kind(), "fischer");
        for code in [ErrorCode::InvalidOptions, ErrorCode::NotYourTurn] {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
    }
}
