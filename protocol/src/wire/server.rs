//! Every message the server sends, and the direct encoding of the most frequent one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// Every message the server sends, tagged by `t`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Addition: a game's engine review: the answer to `analysis.request`.
    #[serde(rename = "analysis")]
    Analysis {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The game.
        game_id: String,
        /// Where its review stands.
        state: AnalysisState,
        /// The review, once `done`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<AnalysisResult>,
    },
    /// Addition: to an analysis worker: review this game and answer `analysis.result` with
    /// this `job`.
    #[serde(rename = "analysis.job")]
    AnalysisJob {
        /// The job (one lease of the game's review to this worker).
        job: String,
        /// The game.
        game_id: String,
        /// Its kind.
        kind: String,
        /// Its validated options.
        options: Value,
        /// Its moves from the start, canonical notation.
        moves: Vec<String>,
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
        status: RoomState,
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
    /// Addition: answer to `position.explore`: a practice position as the engines see it.
    #[serde(rename = "position")]
    Position {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The position and what the engine says of it.
        #[serde(flatten)]
        explored: Box<Explored>,
    },
    /// Addition: answer to `lessons.progress`: the lesson steps this player has done.
    #[serde(rename = "lessons.progress")]
    LessonsProgress {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// Every kind with a lesson, each with its steps done in the lesson's order.
        done: LessonsDone,
    },
    /// Addition: answer to `report`: the report is open for the operators.
    #[serde(rename = "reported")]
    Reported {
        /// Echoed rid.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rid: Option<Rid>,
        /// The report's id.
        report_id: String,
    },
    /// Addition: what an operator decided about this player (a warning, a mute, a rename,
    /// a ban), said once to each of their connections (a warning given while they were
    /// away is said at their next `hello`).
    #[serde(rename = "moderation")]
    Moderation {
        /// What was decided.
        action: ModerationAction,
        /// The operator's reason, as written.
        reason: String,
        /// Until when (mutes and bans for a time; ms since the epoch).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until_ms: Option<u64>,
        /// A sentence for a person, saying all of it.
        message: String,
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
