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

/// Room left over the game's last diff when the next one is written: the next is about as
/// long (the same fields change each move), a capture's few more cells fit in this.
const DIFF_SLACK: usize = 96;

/// The `game.diff` frame, byte for byte what
/// [`stoa_protocol::wire::ServerMessage::GameDiff`] encodes. `last_len`: the length of
/// the game's previous diff frame, if any, to size this one's buffer by.
///
/// Why sized, not grown: a diff stays in the game's replay buffer (256 of them by default),
/// and a `String` that outgrows its buffer doubles it, so a fixed guess kept twice the
/// bytes of every diff over 512 (1 KiB of a 16x15 game's ~550-byte diffs, the most memory
/// a move kept: heaptrack, README "Performance") and copied each one once more.
pub(super) fn diff_frame(
    game_id: &str,
    seq: u64,
    patch: &[PatchOp],
    last_len: Option<usize>,
) -> Frame {
    let mut frame = Frame::text_room(last_len.map_or(512, |n| n + DIFF_SLACK));
    frame.push_str("{\"t\":\"game.diff\",\"game_id\":");
    write_str(&mut frame, game_id);
    frame.push_str(",\"seq\":");
    frame.push_str(itoa::Buffer::new().format(seq));
    frame.push_str(",\"patch\":");
    write_patch(&mut frame, patch);
    frame.push('}');
    Frame::from_room(fit(frame))
}

/// `text`, in a buffer of about its own length: one that outgrew its first guess (a much
/// longer diff than the last, the first of a game) is copied into one of its size.
fn fit(text: String) -> String {
    if text.capacity() - text.len() <= 2 * DIFF_SLACK {
        return text;
    }
    let mut fitted = String::with_capacity(text.len());
    fitted.push_str(&text);
    fitted
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
        for last_len in [None, Some(0), Some(40), Some(5000)] {
            let frame = diff_frame("g1", 3, &patch, last_len);
            assert_eq!(frame.payload_text(), msg.to_json());
        }
    }

    #[test]
    fn a_diff_is_kept_in_a_buffer_of_about_its_size() {
        // Grown past its guess, a text is copied into a buffer of its own length.
        let mut grown = String::with_capacity(2048);
        grown.push_str(&"x".repeat(1000));
        let fitted = fit(grown.clone());
        assert_eq!(fitted, grown);
        assert_eq!(fitted.capacity(), 1000);
        // Within the slack it is kept as it is (no copy).
        let mut close = String::with_capacity(1000 + DIFF_SLACK);
        close.push_str(&"y".repeat(1000));
        let ptr = close.as_ptr();
        let kept = fit(close);
        assert_eq!(kept.as_ptr(), ptr);
        assert_eq!(kept.capacity(), 1000 + DIFF_SLACK);
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
