//! Websocket frames encoded once, header included, and shared by every recipient.
//!
//! Why the header goes in with the payload: frames a server sends are never masked
//! (RFC 6455 §5.1), so a frame's bytes are the same for every connection. A game's diff
//! is framed once and the same [`Frame`] (a cheap reference-counted clone) is written to
//! each spectator's socket as it is: no per-connection framing, no copy into a
//! per-connection write buffer.

use std::fmt;

use bytes::{Buf, Bytes};
use stoa_protocol::wire::{Rid, ServerMessage};
use tungstenite::protocol::frame::coding::{Data, OpCode};
use tungstenite::protocol::frame::{CloseFrame, Frame as WsFrame, FrameHeader};

/// One complete websocket frame (header and payload), ready for the socket.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame(Bytes);

/// Bytes kept free at the front of a text being written (see [`Frame::text_room`]): the
/// longest header of an unmasked frame (2 bytes, and an 8-byte length).
const HEADER_ROOM: usize = 10;

/// What a text being written starts with: its header's room.
const ROOM: &str = "\0\0\0\0\0\0\0\0\0\0";

impl Frame {
    /// A final text frame carrying `text`.
    pub fn text(text: impl AsRef<str>) -> Frame {
        let payload = text.as_ref().as_bytes();
        let header = FrameHeader {
            is_final: true,
            opcode: OpCode::Data(Data::Text),
            ..FrameHeader::default()
        };
        let len = payload.len() as u64;
        let mut out = Vec::with_capacity(header.len(len) + payload.len());
        // Writing into a `Vec` cannot fail.
        let _ = header.format(len, &mut out);
        out.extend_from_slice(payload);
        Frame(out.into())
    }

    /// An empty text with room at its front for a frame header, to write a payload after
    /// and make into a frame by [`Frame::from_room`].
    ///
    /// Why: the frames of every move (its diff, its `ok`) are written once, and copying
    /// each behind a header cost an allocation and a copy of the whole text per frame.
    /// The header goes into the room instead and the frame starts where it does.
    pub fn text_room(capacity: usize) -> String {
        let mut text = String::with_capacity(HEADER_ROOM + capacity);
        text.push_str(ROOM);
        text
    }

    /// The text frame of a text begun by [`Frame::text_room`], without copying it. A text
    /// begun otherwise is framed by [`Frame::text`] (a copy), never misread.
    pub fn from_room(text: String) -> Frame {
        if !text.starts_with(ROOM) {
            return Frame::text(text);
        }
        let mut bytes = text.into_bytes();
        let len = (bytes.len() - HEADER_ROOM) as u64;
        let header = FrameHeader {
            is_final: true,
            opcode: OpCode::Data(Data::Text),
            ..FrameHeader::default()
        };
        let mut head = [0u8; HEADER_ROOM];
        let header_len = header.len(len);
        // Writing into a slice of the header's own length cannot fail.
        let _ = header.format(len, &mut &mut head[..header_len]);
        let start = HEADER_ROOM - header_len;
        bytes[start..HEADER_ROOM].copy_from_slice(&head[..header_len]);
        let mut frame = Bytes::from(bytes);
        frame.advance(start);
        Frame(frame)
    }

    /// The frame of a server message; an `ok` (every move's answer) is written straight
    /// into its frame.
    pub fn msg(msg: &ServerMessage) -> Frame {
        if let ServerMessage::Ok { rid, seq, game_id } = msg {
            return Frame::ok(rid.as_ref(), *seq, game_id.as_deref());
        }
        Frame::text(msg.to_json())
    }

    /// The frame of [`ServerMessage::Ok`] with these members, from borrowed parts.
    pub fn ok(rid: Option<&Rid>, seq: Option<u64>, game_id: Option<&str>) -> Frame {
        let mut text = Frame::text_room(64);
        stoa_protocol::wire::write_ok(&mut text, rid, seq, game_id);
        Frame::from_room(text)
    }

    /// A ping frame with `payload` (at most 125 bytes, as control frames must be).
    pub fn ping(payload: &[u8]) -> Frame {
        Frame::control(WsFrame::ping(Bytes::copy_from_slice(payload)))
    }

    /// A ping carrying the time it is sent at (8 bytes, big-endian milliseconds): the
    /// pong echoes it, so the pong alone tells the round trip
    /// ([`crate::services::rtt::rtt_of_pong`]).
    pub fn stamped_ping(now_ms: u64) -> Frame {
        Frame::ping(&now_ms.to_be_bytes())
    }

    /// A close frame with its status `code` and `reason`.
    pub fn close(code: u16, reason: &str) -> Frame {
        Frame::control(WsFrame::close(Some(CloseFrame {
            code: code.into(),
            reason: reason.to_string().into(),
        })))
    }

    fn control(frame: WsFrame) -> Frame {
        let mut out = Vec::with_capacity(frame.len());
        let _ = frame.format(&mut out);
        Frame(out.into())
    }

    /// Bytes that already are one or more whole frames (the websocket library's own).
    pub(crate) fn from_raw(bytes: Vec<u8>) -> Frame {
        Frame(bytes.into())
    }

    /// The frame's bytes on the wire.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text a text frame carries (empty for other frames).
    pub fn payload_text(&self) -> &str {
        let bytes = &self.0[..];
        let header = 2 + match bytes.get(1).map(|b| b & 0x7f) {
            Some(126) => 2,
            Some(127) => 8,
            _ => 0,
        };
        if bytes.first().map(|b| b & 0x0f) != Some(0x1) || bytes.len() < header {
            return "";
        }
        std::str::from_utf8(&bytes[header..]).unwrap_or("")
    }
}

impl From<String> for Frame {
    fn from(text: String) -> Frame {
        Frame::text(text)
    }
}

impl From<&str> for Frame {
    fn from(text: &str) -> Frame {
        Frame::text(text)
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frame({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_text_frame_is_a_two_byte_header_and_the_text() {
        let f = Frame::text("{\"t\":\"ok\"}");
        assert_eq!(&f.as_bytes()[..2], &[0x81, 10]);
        assert_eq!(&f.as_bytes()[2..], b"{\"t\":\"ok\"}");
        assert_eq!(f.payload_text(), "{\"t\":\"ok\"}");
    }

    #[test]
    fn longer_text_frames_carry_16_and_64_bit_lengths() {
        let mid = "x".repeat(300);
        let f = Frame::text(&mid);
        assert_eq!(&f.as_bytes()[..4], &[0x81, 126, 1, 44]);
        assert_eq!(f.payload_text(), mid);
        let big = "y".repeat(70_000);
        let f = Frame::text(&big);
        assert_eq!(
            &f.as_bytes()[..10],
            &[0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]
        );
        assert_eq!(f.payload_text(), big);
    }

    #[test]
    fn frames_written_in_their_room_are_the_same_bytes() {
        for len in [0, 1, 125, 126, 300, 65_535, 65_536, 70_000] {
            let payload = "é".repeat(len / 2) + &"z".repeat(len % 2);
            let mut text = Frame::text_room(payload.len());
            text.push_str(&payload);
            let framed = Frame::from_room(text);
            assert_eq!(framed, Frame::text(&payload), "payload of {len} bytes");
            assert_eq!(framed.payload_text(), payload);
        }
        // A text not begun in a room is framed whole, never cut.
        let plain = String::from("\0\0{}");
        assert_eq!(Frame::from_room(plain.clone()), Frame::text(&plain));
    }

    #[test]
    fn message_frames_are_their_json() {
        let msgs = [
            ServerMessage::Ok {
                rid: Some(Rid::Int(7)),
                seq: Some(12),
                game_id: Some("g\"1".into()),
            },
            ServerMessage::Ok {
                rid: None,
                seq: None,
                game_id: None,
            },
            ServerMessage::Pong {
                rid: Some(Rid::Str("p".into())),
                server_time: 5,
            },
        ];
        for msg in msgs {
            assert_eq!(Frame::msg(&msg), Frame::text(msg.to_json()), "{msg:?}");
        }
    }

    #[test]
    fn control_frames() {
        assert_eq!(Frame::ping(&[1, 2]).as_bytes(), &[0x89, 2, 1, 2]);
        assert_eq!(
            Frame::close(1001, "bye").as_bytes(),
            &[0x88, 5, 0x03, 0xe9, b'b', b'y', b'e']
        );
        assert_eq!(Frame::close(1001, "bye").payload_text(), "");
    }

    #[test]
    fn frames_parse_back_with_tungstenite() {
        use std::io::Cursor;
        let f = Frame::text("héllo");
        let mut cursor = Cursor::new(f.as_bytes());
        let (header, len) = FrameHeader::parse(&mut cursor).unwrap().unwrap();
        assert!(header.is_final);
        assert_eq!(header.opcode, OpCode::Data(Data::Text));
        assert!(header.mask.is_none());
        assert_eq!(len as usize, "héllo".len());
    }
}
