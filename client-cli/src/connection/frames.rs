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
            | ServerMessage::Arena { .. }
            | ServerMessage::ArenaDiff { .. }
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
        | ServerMessage::History { rid, .. }
        | ServerMessage::Player { rid, .. }
        | ServerMessage::Leaderboard { rid, .. }
        | ServerMessage::LinkCode { rid, .. }
        | ServerMessage::LinkToken { rid, .. }
        | ServerMessage::Account { rid, .. }
        | ServerMessage::AccountToken { rid, .. }
        | ServerMessage::Devices { rid, .. }
        | ServerMessage::RoomChatHistory { rid, .. }
        | ServerMessage::Arena { rid, .. }
        | ServerMessage::Analysis { rid, .. }
        | ServerMessage::Position { rid, .. }
        | ServerMessage::Reported { rid, .. }
        | ServerMessage::LessonsProgress { rid, .. } => rid.as_ref(),
        ServerMessage::GameDiff { .. }
        | ServerMessage::GameCrowd { .. }
        | ServerMessage::GameStarted { .. }
        | ServerMessage::LobbyDiff { .. }
        | ServerMessage::BotInvite { .. }
        | ServerMessage::AnalysisJob { .. }
        | ServerMessage::Shutdown { .. }
        | ServerMessage::QueueStatus { .. }
        | ServerMessage::Chat { .. }
        | ServerMessage::ChatHistory { .. }
        | ServerMessage::ChatSpectators { .. }
        | ServerMessage::RoomChat { .. }
        | ServerMessage::ArenaDiff { .. }
        | ServerMessage::Moderation { .. } => None,
    }
}

/// The integer rid of a message, the only kind this client sends.
pub(super) fn int_rid(rid: Option<&Rid>) -> Option<i64> {
    match rid {
        Some(Rid::Int(i)) => Some(*i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use stoa_protocol::wire::{parse_client_message, DrawAction, Visibility};

    /// The typed requests encode to the very objects the client built by hand before, so
    /// a server reads them the same.
    #[test]
    fn requests_encode_as_before() {
        let clock = json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000});
        let cases = [
            (
                ClientMessage::RoomCreate {
                    rid: None,
                    kind: "staku".into(),
                    options: json!({}),
                    clock: Some(clock.clone()),
                    rated: false,
                    visibility: Visibility::Public,
                    side: "random".into(),
                },
                json!({"t":"room.create","kind":"staku","options":{},"clock":clock,"rated":false,
                       "visibility":"public","side":"random","rid":4}),
            ),
            (
                ClientMessage::GameWatch {
                    rid: None,
                    game_id: "g1".into(),
                    since: Some(7),
                    code: Some("ABCD".into()),
                },
                json!({"t":"game.watch","game_id":"g1","since":7,"code":"ABCD","rid":4}),
            ),
            (
                ClientMessage::GameMove {
                    rid: None,
                    game_id: "g1".into(),
                    mv: "a1".into(),
                    seq: None,
                },
                json!({"t":"game.move","game_id":"g1","move":"a1","rid":4}),
            ),
            (
                ClientMessage::GameDraw {
                    rid: None,
                    game_id: "g1".into(),
                    action: DrawAction::Decline,
                },
                json!({"t":"game.draw","game_id":"g1","action":"decline","rid":4}),
            ),
            (
                ClientMessage::History {
                    rid: None,
                    player_id: None,
                    before: None,
                    limit: Some(1),
                },
                json!({"t":"history","limit":1,"rid":4}),
            ),
        ];
        for (msg, expected) in cases {
            let text = encode(&msg, Some(4));
            let sent: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(sent, expected);
            // And the server's parser reads back the same request, rid included.
            let parsed = parse_client_message(&text).unwrap();
            assert_eq!(parsed.rid(), Some(&Rid::Int(4)));
            assert_eq!(parsed.type_name(), msg.type_name());
        }
        let hello = ClientMessage::Hello {
            rid: None,
            protocol: 1,
            token: None,
            name: Some("ann".into()),
            bot: false,
            device: None,
            login: None,
        };
        assert_eq!(
            serde_json::from_str::<Value>(&encode(&hello, None)).unwrap(),
            json!({"t":"hello","protocol":1,"name":"ann"})
        );
    }

    #[test]
    fn answers_are_told_from_pushes() {
        let legal: ServerMessage =
            serde_json::from_str(r#"{"t":"legal","rid":3,"game_id":"g","seq":2,"moves":["a1"]}"#)
                .unwrap();
        assert_eq!(int_rid(rid_of(&legal)), Some(3));
        assert!(!is_document_message(&legal));
        let diff: ServerMessage =
            serde_json::from_str(r#"{"t":"game.diff","game_id":"g","seq":3,"patch":[]}"#).unwrap();
        assert_eq!(rid_of(&diff), None);
        assert!(is_document_message(&diff));
    }
}
