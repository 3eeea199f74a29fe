//! The frames a game sends whose bulk is already encoded: diffs and snapshots.
//!
//! Why written by hand around pre-encoded parts: a diff goes to every subscriber and a
//! snapshot's document is shared by every watcher of a seq, so each is encoded once and
//! only the envelope is written per frame; the tests hold it byte for byte to what the
//! typed [`stoa_protocol::wire::ServerMessage`] encodes.

use std::fmt::Write as _;

use serde_json::Value;
use stoa_protocol::wire::Rid;

use crate::game::core::{write_patch, write_str, PatchOp};
use crate::net::frame::Frame;

/// The `game.diff` frame, byte for byte what
/// [`stoa_protocol::wire::ServerMessage::GameDiff`] encodes.
pub(super) fn diff_frame(game_id: &str, seq: u64, patch: &[PatchOp]) -> Frame {
    let mut frame = Frame::text_room(512);
    frame.push_str("{\"t\":\"game.diff\",\"game_id\":");
    write_str(&mut frame, game_id);
    frame.push_str(",\"seq\":");
    frame.push_str(itoa::Buffer::new().format(seq));
    frame.push_str(",\"patch\":");
    write_patch(&mut frame, patch);
    frame.push('}');
    Frame::from_room(frame)
}

/// The `game.snapshot` frame around an encoded document, byte for byte what
/// [`stoa_protocol::wire::ServerMessage::GameSnapshot`] encodes.
pub(super) fn snapshot_frame(game_id: &str, seq: u64, rid: Option<&Rid>, doc: &str) -> Frame {
    let id = Value::from(game_id);
    let mut frame = Frame::text_room(doc.len() + 96);
    frame.push_str("{\"t\":\"game.snapshot\",");
    if let Some(rid) = rid {
        let rid = serde_json::to_string(rid).unwrap_or_else(|_| "null".into());
        let _ = write!(frame, "\"rid\":{rid},");
    }
    let _ = write!(frame, "\"game_id\":{id},\"seq\":{seq},\"doc\":{doc}}}");
    Frame::from_room(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use stoa_protocol::wire::ServerMessage;

    #[test]
    fn diff_envelope_matches_the_wire_type() {
        let patch = vec![PatchOp {
            op: "add",
            path: "/moves/-".into(),
            value: json!("a\"1"),
        }];
        let msg = ServerMessage::GameDiff {
            game_id: "g1".into(),
            seq: 3,
            patch: json!(patch),
        };
        assert_eq!(diff_frame("g1", 3, &patch).payload_text(), msg.to_json());
    }

    #[test]
    fn snapshot_envelope_matches_the_wire_type() {
        let doc = json!({"a": [1, 2], "b": "x"});
        let msg = ServerMessage::GameSnapshot {
            rid: Some(Rid::Str("r\"1".into())),
            game_id: "g1".into(),
            seq: 7,
            doc: doc.clone(),
        };
        let frame = snapshot_frame("g1", 7, Some(&Rid::Str("r\"1".into())), &doc.to_string());
        assert_eq!(frame.payload_text(), msg.to_json());
    }
}
