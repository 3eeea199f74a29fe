//! What nodes of a cluster say to each other over Redis pub/sub.
//!
//! Why events rather than encoded diffs: every node that serves a game's subscribers keeps a
//! follower of the game (its core, replay ring and local subscribers) and folds the owner's
//! logged events through the same pure `Core::apply` the owner and recovery use. The patch
//! each node encodes is then byte for byte the owner's, a gap in `seq` is healed from the
//! stored log (the authority), and the follower is ready to take the game over when its
//! owner dies.

use serde::{Deserialize, Serialize};
use stoa_protocol::wire::ErrorCode;

use stoa_protocol::wire::SeatPlayer;

use crate::domain::pairing::QueueKey;
use crate::error::ApiError;
use crate::game::act::{Act, Answer};
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::store::ActionRecord;

/// One message on the bus.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "m", rename_all = "snake_case")]
pub enum BusMessage {
    /// A game's owner logged this event (on the game's channel).
    Event {
        /// The game.
        game: GameId,
        /// The logged event.
        event: ActionRecord,
    },
    /// A game's crowd changed: the `game.crowd` frame to pass on (on the game's channel).
    Crowd {
        /// The game.
        game: GameId,
        /// The encoded frame.
        frame: String,
    },
    /// A node took a game over (on the game's channel): followers send it their presence
    /// and spectator counts again.
    Owner {
        /// The game.
        game: GameId,
        /// The new owner.
        node: String,
    },
    /// A game's owner found that the store lost part of the game's log it could not log
    /// again (a Redis failover at `--redis-min-replicas 0`) and went back to what the log
    /// holds, at `seq` (on the game's channel): followers rebuild from the log too, since
    /// their documents may hold events the log no longer has.
    Rewound {
        /// The game.
        game: GameId,
        /// The seq the game went back to.
        seq: u64,
    },
    /// A draining node gave back its leases (on the push channel): the others claim them at
    /// once instead of at their next lease round.
    Released {
        /// The node that left.
        node: String,
    },
    /// A request to a game's owner (on the owner's node channel).
    Request {
        /// The game.
        game: GameId,
        /// The asking node (where the reply goes).
        from: String,
        /// Request number, unique on the asking node.
        req: u64,
        /// What is asked.
        op: RemoteOp,
    },
    /// The owner's answer to a [`BusMessage::Request`] (on the asking node's channel).
    Reply {
        /// The game.
        game: GameId,
        /// The request number.
        req: u64,
        /// The answer.
        result: RemoteResult,
    },
    /// A game started (on the push channel): nodes where its players are connected tell
    /// them and subscribe them, and a room that started it leaves the waiting state.
    Started {
        /// The game.
        game: GameId,
        /// Its kind.
        kind: String,
        /// Player ids by side index.
        players: [PlayerId; 2],
        /// The side names by index.
        side_names: [String; 2],
        /// The room it came from.
        room: Option<RoomCode>,
        /// The node that created it (it told its own connections already).
        origin: String,
    },
    /// A player queues for pairing (to the matchmaker node's channel).
    QueueJoin {
        /// The asking node (where [`BusMessage::Queued`] goes).
        from: String,
        /// Request number on the asking node.
        req: u64,
        /// The queue.
        key: QueueKey,
        /// The player as seated.
        seat: SeatPlayer,
        /// The player's rating in the queue's kind.
        rating: f64,
    },
    /// A player leaves its queue (to the matchmaker node's channel).
    QueueLeave {
        /// The player.
        player: PlayerId,
    },
    /// The matchmaker's answer to a [`BusMessage::QueueJoin`].
    Queued {
        /// The request number.
        req: u64,
        /// The player's place in its queue.
        position: u64,
    },
    /// A game's chat changed (on the game's channel): followers fold the change into their
    /// copy and pass it on to their subscribers.
    Chat {
        /// The game.
        game: GameId,
        /// The change.
        change: crate::domain::chat::Change,
    },
    /// A frame for every connection of a player, on whatever node (the push channel).
    ToPlayer {
        /// The player.
        player: PlayerId,
        /// The encoded frame.
        frame: String,
    },
    /// A player's device was revoked (the push channel): every node ends the connections
    /// of that device it holds.
    DeviceRevoked {
        /// The player.
        player: PlayerId,
        /// The revoked device's id.
        device: String,
    },
    /// A line said in a waiting room's chat (the push channel): the other nodes keep it
    /// and pass it to their watchers of the room.
    RoomLine {
        /// The room's code.
        code: RoomCode,
        /// The line.
        line: stoa_protocol::wire::RoomChatLine,
        /// The node it was said on (which has it already).
        origin: String,
    },
}

/// What a follower asks of a game's owner.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RemoteOp {
    /// A seated player's action (answered with a [`BusMessage::Reply`]).
    Act {
        /// The player.
        player_id: PlayerId,
        /// The action.
        act: Act,
        /// The command's id (`node:request`), logged with the event it makes: the asking
        /// node settles a lost answer by finding exactly this command in the log.
        #[serde(default)]
        cmd: Option<String>,
        /// Sent again because no answer came (pub/sub loses a request or its answer while a
        /// bus connection is down): the owner answers a command it already played from
        /// what it played, and looks in the log for it before deciding it anew.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        retry: bool,
    },
    /// Whether a seated player has a connection on the asking node.
    Presence {
        /// The player.
        player_id: PlayerId,
        /// Connected there?
        online: bool,
    },
    /// How many spectators watch the game on the asking node.
    Spectators {
        /// The count.
        count: u64,
    },
    /// A chat request of a person connected on the asking node (answered with a
    /// [`BusMessage::Reply`]).
    Chat {
        /// The person.
        player_id: PlayerId,
        /// Their display name.
        name: String,
        /// What is asked.
        request: crate::domain::chat::ChatOp,
        /// The command's id (`node:request`): a line it made is kept with it, so the same
        /// command sent again is not posted twice.
        #[serde(default)]
        cmd: Option<String>,
    },
    /// The asking node just started following the game: the owner publishes its whole
    /// chat (when there is one) as a [`crate::domain::chat::Change::State`].
    ChatSync,
    /// A measured round trip of a seated player's connection on the asking node.
    Rtt {
        /// The player.
        player_id: PlayerId,
        /// Round trip, ms.
        rtt_ms: u64,
    },
}

/// An answer on the wire: the owner's [`Answer`] or error.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "r", rename_all = "snake_case")]
pub enum RemoteResult {
    /// Success.
    Ok {
        /// The answer.
        answer: Answer,
    },
    /// Failure: nothing changed.
    Err {
        /// Protocol code.
        code: ErrorCode,
        /// Message.
        message: String,
    },
}

impl From<Result<Answer, ApiError>> for RemoteResult {
    fn from(r: Result<Answer, ApiError>) -> Self {
        match r {
            Ok(answer) => RemoteResult::Ok { answer },
            Err(e) => RemoteResult::Err {
                code: e.code,
                message: e.message,
            },
        }
    }
}

impl From<RemoteResult> for Result<Answer, ApiError> {
    fn from(r: RemoteResult) -> Self {
        match r {
            RemoteResult::Ok { answer } => Ok(answer),
            RemoteResult::Err { code, message } => Err(ApiError::new(code, message)),
        }
    }
}

impl BusMessage {
    /// The JSON text published.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The JSON text published, stamped with the sender's wall clock as its first member
    /// (`sent_ms`), so receivers measure the bus's lag without decoding twice. A receiver
    /// that predates the stamp ignores the member (unknown fields are allowed), which keeps
    /// a rolling upgrade's mixed nodes talking.
    pub fn encode_at(&self, sent_ms: u64) -> String {
        let body = self.encode();
        match body.strip_prefix('{') {
            Some(rest) => format!("{{\"sent_ms\":{sent_ms},{rest}"),
            None => body,
        }
    }
}

/// The send time stamped by [`BusMessage::encode_at`], if the text has one.
pub fn sent_ms(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("{\"sent_ms\":")?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

/// Milliseconds since the Unix epoch on this host's wall clock (the bus stamp: nodes'
/// clocks are NTP-synchronised in any sane deployment).
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_message_decodes_as_before_and_carries_its_send_time() {
        let m = BusMessage::QueueLeave {
            player: "p1".into(),
        };
        let text = m.encode_at(1_700_000_000_123);
        assert!(
            text.starts_with("{\"sent_ms\":1700000000123,\"m\":"),
            "{text}"
        );
        assert_eq!(sent_ms(&text), Some(1_700_000_000_123));
        let back: BusMessage = serde_json::from_str(&text).expect("decodes");
        assert!(matches!(back, BusMessage::QueueLeave { player } if player == "p1"));
        // An unstamped message (an older node's) has no send time and still decodes.
        assert_eq!(sent_ms(&m.encode()), None);
        assert_eq!(sent_ms("{\"sent_ms\":12"), None);
    }
}
