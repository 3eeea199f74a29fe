//! Every message a client may send.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    AnalysisRequestBody, AnalysisResultBody, AnalysisServeBody, ArenaSettings, ChatChannel,
    Credentials, DrawAction, ExploreRequest, LessonDone, LessonsProgressRequest, Password,
    ReportRequest, Rid, Visibility, PROTOCOL_VERSION,
};

fn default_protocol() -> u32 {
    PROTOCOL_VERSION
}

fn default_true() -> bool {
    true
}

fn default_side() -> String {
    "random".to_string()
}

/// Every message a client may send, tagged by `t`.
///
/// Why `Option<Rid>` everywhere: any request may carry a rid, and the answer echoes it.
/// Unknown fields are ignored (forward compatibility); wrong types are `bad_request`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Addition: ask for the engine review of a finished game ([`AnalysisRequestBody`]).
    #[serde(rename = "analysis.request")]
    AnalysisRequest(AnalysisRequestBody),
    /// Addition: an analysis worker is free for a job ([`AnalysisServeBody`]).
    #[serde(rename = "analysis.serve")]
    AnalysisServe(AnalysisServeBody),
    /// Addition: a worker's review of its job ([`AnalysisResultBody`]).
    #[serde(rename = "analysis.result")]
    AnalysisResult(AnalysisResultBody),
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
        /// Addition: a position string to start from instead of the kind's start ("play
        /// on from here against the computer"); absent: the start position.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<String>,
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
        #[cfg_attr(feature = "ts", ts(type = "string"))]
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
        #[cfg_attr(feature = "ts", ts(type = "string"))]
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
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        current: Password,
        /// The new password (8-256 characters).
        #[cfg_attr(feature = "ts", ts(type = "string"))]
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
    /// Addition: a practice position, computed by the rules engines and nothing else: the
    /// position (or the kind's start) after a line of moves, its legal moves, its outcome
    /// and its board view. No game is made, stored, listed or rated. Answered by
    /// [`ServerMessage::Position`]; a bad kind, options, position or move is an `error`.
    #[serde(rename = "position.explore")]
    PositionExplore(ExploreRequest),
    /// Addition: a step of a lesson is done: `ok` (idempotent).
    #[serde(rename = "lesson.done")]
    LessonDone(LessonDone),
    /// Addition: the lesson steps this player has done: [`ServerMessage::LessonsProgress`].
    #[serde(rename = "lessons.progress")]
    LessonsProgress(LessonsProgressRequest),
    /// Addition: a report about a player (moderation), answered by `reported`.
    #[serde(rename = "report")]
    Report(ReportRequest),
}
