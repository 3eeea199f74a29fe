//! The common shape of a `game.move` frame, read by one strict scan of its bytes.
//!
//! Why by hand: a move is the frame a server reads most, and serde's decoding of even the
//! one-variant `MoveFrame` (field names matched through a visitor, each string scanned for
//! escapes, then copied) costs 2,200 instructions a frame, 5 % of a move (callgrind,
//! docs/performance.md). This scan takes what clients send — members `t`, `rid`,
//! `game_id`, `move`, `seq` in any order, strings without escapes, plain integers — in a
//! few hundred. It refuses everything else (an escape, an unknown or repeated member, a
//! `null`, a sign, a fraction, trailing bytes), and a refused frame is decoded by serde
//! as any other frame is, so the answer to every frame is serde's (a property test holds the
//! two to each other over generated frames).

use super::{ClientMessage, Rid, MAX_RID_LEN};

/// A cursor over the frame's bytes.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    /// Skips JSON's four whitespace bytes.
    fn blank(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// A string, as the slice between its quotes (the frame is UTF-8, and the quotes are
    /// ASCII, so the slice is too).
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        // The frame has no escape and no control character (`scan_move` checked it first),
        // so the next quote closes the string.
        let len = memchr::memchr(b'"', &self.text.as_bytes()[start..])?;
        self.at = start + len + 1;
        self.text.get(start..start + len)
    }

    /// A non-negative integer as JSON writes one (no leading zero), not followed by a
    /// fraction or an exponent, that fits a `u64`.
    fn integer(&mut self) -> Option<u64> {
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(b @ b'0'..=b'9') = self.peek() {
            value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - start;
        let leading_zero = digits > 1 && self.text.as_bytes()[start] == b'0';
        if digits == 0 || leading_zero || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(value)
    }
}

/// The `game.move` a frame of the common shape is, or `None` for any other frame.
pub(super) fn scan_move(text: &str) -> Option<ClientMessage> {
    // No escape and no control character anywhere (inside a string they need serde, and
    // outside one only tabs and line breaks are JSON, which clients do not send): one pass
    // without an early exit, so it is vectorised.
    if text
        .bytes()
        .fold(false, |any, b| any | (b == b'\\') | (b < 0x20))
    {
        return None;
    }
    let mut s = Scan { text, at: 0 };
    let (mut rid, mut game_id, mut mv, mut seq) = (None, None, None, None);
    let mut seen = 0u8;
    s.blank();
    s.eat(b'{')?;
    loop {
        s.blank();
        let key = s.string()?;
        s.blank();
        s.eat(b':')?;
        s.blank();
        let bit = match key {
            "t" => 1,
            "rid" => 2,
            "game_id" => 4,
            "move" => 8,
            "seq" => 16,
            _ => return None,
        };
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        match bit {
            1 => (s.string()? == "game.move").then_some(())?,
            2 => {
                rid = Some(match s.peek()? {
                    b'"' => {
                        let r = s.string()?;
                        if r.chars().count() > MAX_RID_LEN {
                            return None;
                        }
                        Rid::Str(r.to_owned())
                    }
                    _ => Rid::Int(i64::try_from(s.integer()?).ok()?),
                })
            }
            4 => game_id = Some(s.string()?),
            8 => mv = Some(s.string()?),
            _ => seq = Some(s.integer()?),
        }
        s.blank();
        match s.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    s.blank();
    if s.at != text.len() || seen & 1 == 0 {
        return None;
    }
    Some(ClientMessage::GameMove {
        rid,
        game_id: game_id?.to_owned(),
        mv: mv?.to_owned(),
        seq,
    })
}
