//! The frames of a published document, written around its pre-encoded parts: a snapshot
//! (`game.snapshot`, `lobby`, `arena`) and a diff (`game.diff`, `lobby.diff`,
//! `arena.diff`).
//!
//! Why written by hand around pre-encoded parts: a diff goes to every watcher and a
//! snapshot's document is shared by every watcher of a seq, so each is encoded once and
//! only the envelope is written per frame; the tests hold it byte for byte to what the
//! typed [`stoa_protocol::wire::ServerMessage`] encodes.

use stoa_protocol::json_text::write_str;
use stoa_protocol::wire::Rid;

use crate::net::frame::Frame;

/// The messages a kind of document goes out in: their `t` and the member naming which
/// document it is, if any (the lobby is one; a game's is `game_id`; an arena's diff names
/// it `id`, its snapshot answers a request and names nothing).
#[derive(Debug)]
pub struct Kind {
    /// The snapshot's `t`.
    pub snapshot: &'static str,
    /// The member of the snapshot naming the document.
    pub snapshot_id: Option<&'static str>,
    /// The diff's `t`.
    pub diff: &'static str,
    /// The member of the diff naming the document.
    pub diff_id: Option<&'static str>,
}

/// Room left over the last diff when the next one is written: the next is about as long
/// (the same fields change each move), a capture's few more cells fit in this.
const DIFF_SLACK: usize = 96;

/// `{"t":<tag>,` and the document's id member when the message has one.
fn open(frame: &mut String, tag: &str, id_key: Option<&str>, id: &str) {
    frame.push_str("{\"t\":");
    write_str(frame, tag);
    frame.push(',');
    if let Some(key) = id_key {
        write_str(frame, key);
        frame.push(':');
        write_str(frame, id);
        frame.push(',');
    }
}

/// The diff frame to `seq`, its patch written by `patch`, byte for byte what the
/// diff's [`stoa_protocol::wire::ServerMessage`] encodes. `last_len`: the length of the
/// previous diff's frame, if any, to size this one's buffer by.
///
/// Why sized, not grown: a diff stays in the replay buffer (256 of them by default for a
/// game), and a `String` that outgrows its buffer doubles it, so a fixed guess kept twice
/// the bytes of every diff over 512 (1 KiB of a 16x15 game's ~550-byte diffs, the most
/// memory a move kept: heaptrack, docs/performance.md) and copied each one once more.
pub(super) fn diff_frame(
    kind: &Kind,
    id: &str,
    seq: u64,
    last_len: Option<usize>,
    patch: impl FnOnce(&mut String),
) -> Frame {
    let mut frame = Frame::text_room(last_len.map_or(512, |n| n + DIFF_SLACK));
    open(&mut frame, kind.diff, kind.diff_id, id);
    frame.push_str("\"seq\":");
    frame.push_str(itoa::Buffer::new().format(seq));
    frame.push_str(",\"patch\":");
    patch(&mut frame);
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

/// The snapshot frame around an encoded document, byte for byte what the snapshot's
/// [`stoa_protocol::wire::ServerMessage`] encodes.
pub(super) fn snapshot_frame(
    kind: &Kind,
    id: &str,
    seq: u64,
    rid: Option<&Rid>,
    doc: &str,
) -> Frame {
    let mut frame = Frame::text_room(doc.len() + 96);
    frame.push_str("{\"t\":");
    write_str(&mut frame, kind.snapshot);
    frame.push(',');
    if let Some(rid) = rid {
        let rid = serde_json::to_string(rid).unwrap_or_else(|_| "null".into());
        frame.push_str("\"rid\":");
        frame.push_str(&rid);
        frame.push(',');
    }
    // The rid goes before the id: `open` writes the id right after the tag.
    if let Some(key) = kind.snapshot_id {
        write_str(&mut frame, key);
        frame.push(':');
        write_str(&mut frame, id);
        frame.push(',');
    }
    frame.push_str("\"seq\":");
    frame.push_str(itoa::Buffer::new().format(seq));
    frame.push_str(",\"doc\":");
    frame.push_str(doc);
    frame.push('}');
    Frame::from_room(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::core::{write_patch, PatchOp};
    use serde_json::json;
    use stoa_protocol::json_text::write_value;
    use stoa_protocol::wire::ServerMessage;

    const GAME: Kind = Kind {
        snapshot: "game.snapshot",
        snapshot_id: Some("game_id"),
        diff: "game.diff",
        diff_id: Some("game_id"),
    };
    const LOBBY: Kind = Kind {
        snapshot: "lobby",
        snapshot_id: None,
        diff: "lobby.diff",
        diff_id: None,
    };
    const ARENA: Kind = Kind {
        snapshot: "arena",
        snapshot_id: None,
        diff: "arena.diff",
        diff_id: Some("id"),
    };

    #[test]
    fn diff_envelopes_match_the_wire_types() {
        let ops = vec![PatchOp {
            op: "add",
            path: "/moves/-".into(),
            value: json!("a\"1"),
        }];
        let patch = json!(ops);
        let cases = [
            (
                &GAME,
                ServerMessage::GameDiff {
                    game_id: "g\"1".into(),
                    seq: 3,
                    patch: patch.clone(),
                },
            ),
            (
                &LOBBY,
                ServerMessage::LobbyDiff {
                    seq: 3,
                    patch: patch.clone(),
                },
            ),
            (
                &ARENA,
                ServerMessage::ArenaDiff {
                    id: "g\"1".into(),
                    seq: 3,
                    patch: patch.clone(),
                },
            ),
        ];
        for (kind, msg) in cases {
            for last_len in [None, Some(0), Some(40), Some(5000)] {
                let typed = diff_frame(kind, "g\"1", 3, last_len, |out| write_patch(out, &ops));
                assert_eq!(typed.payload_text(), msg.to_json());
                let value = diff_frame(kind, "g\"1", 3, last_len, |out| write_value(out, &patch));
                assert_eq!(value.payload_text(), msg.to_json());
            }
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
    fn snapshot_envelopes_match_the_wire_types() {
        let doc = json!({"a": [1, 2], "b": "x"});
        for rid in [Some(Rid::Str("r\"1".into())), None] {
            let cases: [(&Kind, ServerMessage); 3] = [
                (
                    &GAME,
                    ServerMessage::GameSnapshot {
                        rid: rid.clone(),
                        game_id: "g1".into(),
                        seq: 7,
                        doc: doc.clone(),
                    },
                ),
                (
                    &LOBBY,
                    ServerMessage::Lobby {
                        rid: rid.clone(),
                        seq: 7,
                        doc: doc.clone(),
                    },
                ),
                (
                    &ARENA,
                    ServerMessage::Arena {
                        rid: rid.clone(),
                        seq: 7,
                        doc: doc.clone(),
                    },
                ),
            ];
            for (kind, msg) in cases {
                let frame = snapshot_frame(kind, "g1", 7, rid.as_ref(), &doc.to_string());
                assert_eq!(frame.payload_text(), msg.to_json());
            }
        }
    }
}
