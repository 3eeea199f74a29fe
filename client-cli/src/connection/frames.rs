//! The frames of the protocol as this client reads and writes them: typed messages out
//! (with the connection's own rids), and what a server message is to the connection.

use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, Rid, ServerMessage};

/// One frame for the server: the message, with our `rid` when it is a request.
///
/// Why through a `Value`: the typed message's own `rid` stays `None` everywhere in the
/// client, and the connection numbers requests itself, so the rid is set on the way out.
pub(super) fn encode(msg: &ClientMessage, rid: Option<i64>) -> String {
    // Serialising these types cannot fail: every map key is a string.
    let mut frame = serde_json::to_value(msg).unwrap_or(Value::Null);
    if let (Some(rid), Some(obj)) = (rid, frame.as_object_mut()) {
        obj.insert("rid".into(), Value::from(rid));
    }
    frame.to_string()
}

/// Messages that always go to the event stream, answer or not.
pub(super) fn is_document_message(msg: &ServerMessage) -> bool {
    matches!(
        msg,
        ServerMessage::GameSnapshot { .. }
            | ServerMessage::GameDiff { .. }
            | ServerMessage::Lobby { .. }
            | ServerMessage::LobbyDiff { .. }
    )
}

/// The rid a server message echoes, if any (pushes have none).
pub(super) fn rid_of(msg: &ServerMessage) -> Option<&Rid> {
    match msg {
        ServerMessage::Welcome { rid, .. }
        | ServerMessage::Pong { rid, .. }
        | ServerMessage::Ok { rid, .. }
        | ServerMessage::Error { rid, .. }
        | ServerMessage::GameSnapshot { rid, .. }
        | ServerMessage::Legal { rid, .. }
        | ServerMessage::Room { rid, .. }
        | ServerMessage::Queued { rid, .. }
        | ServerMessage::Lobby { rid, .. }
        | ServerMessage::Record { rid, .. }
        | ServerMessage::History { rid, .. } => rid.as_ref(),
        ServerMessage::GameDiff { .. }
        | ServerMessage::GameCrowd { .. }
        | ServerMessage::GameStarted { .. }
        | ServerMessage::LobbyDiff { .. }
        | ServerMessage::BotInvite { .. }
        | ServerMessage::Shutdown { .. }
        | ServerMessage::QueueStatus { .. } => None,
    }
}

/// The integer rid of a message, the only kind this client sends.
pub(super) fn int_rid(rid: Option<&Rid>) -> Option<i64> {
    match rid {
        Some(Rid::Int(i)) => Some(*i),
        _ => None,
    }
}
