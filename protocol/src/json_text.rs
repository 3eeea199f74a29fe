//! JSON text written straight into a `String`, byte for byte what `serde_json` writes.
//!
//! Why not `serde_json::to_string`: a move's diff and its `ok` are a handful of short
//! strings (paths, the position string, cell colours, ids) and small numbers, and serde's
//! writer scanned every string byte by byte for characters to escape and formatted through
//! `io::Write`: the profile of the move path had encoding the diff at 12 % of the server's
//! instructions, and the `ok` of an internally tagged enum at 4 %.
//! Here a string that needs no escape (all of ours, in practice) is checked in one pass the
//! compiler vectorises and copied whole; anything unusual (a string to escape, a float)
//! goes to `serde_json` itself, so the text never differs from what it writes.

use serde_json::{Number, Value};

/// Appends `value` as compact JSON text.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Appends a number: integers by `itoa`, anything else as `serde_json` writes it.
pub fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        out.push_str(itoa::Buffer::new().format(u));
    } else if let Some(i) = n.as_i64() {
        out.push_str(itoa::Buffer::new().format(i));
    } else {
        out.push_str(&n.to_string());
    }
}

/// Appends a JSON string.
pub fn write_str(out: &mut String, s: &str) {
    if needs_escape(s) {
        // serde_json's escapes (`\n`, `\u001f`, ...), exactly.
        match serde_json::to_string(s) {
            Ok(text) => out.push_str(&text),
            // Never: a `str` always serialises.
            Err(_) => out.push_str("\"\""),
        }
    } else {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Whether `serde_json` would escape any character of `s`: control characters, `"` and `\`
/// (nothing else: it writes `/` and every non-ASCII character as they are).
///
/// Eight bytes at a time (SWAR): most strings here are short pointer paths, too short for
/// the compiler's vectorised loop, whose scalar tail took as long as the whole copy.
fn needs_escape(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut found = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        found |= escapes_in(u64::from_le_bytes(w));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        // The last eight bytes again when there are eight (no copy of the tail); a short
        // string padded with spaces, which need no escape.
        let mut w = [b' '; 8];
        match bytes.len().checked_sub(8) {
            Some(start) => w.copy_from_slice(&bytes[start..]),
            None => {
                for (to, from) in w.iter_mut().zip(tail) {
                    *to = *from;
                }
            }
        }
        found |= escapes_in(u64::from_le_bytes(w));
    }
    found != 0
}

/// Non-zero when one of the eight bytes of `w` is below 0x20, `"` or `\`. Each term is
/// the classic "has a byte below n" test (exact as a yes/no answer; n = 1 finds a zero byte,
/// so a byte equal to `c` is a zero byte of `w ^ c…c`).
fn escapes_in(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    ((w.wrapping_sub(ONES * 0x20) & !w)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash))
        & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        let mut out = String::new();
        write_value(&mut out, v);
        out
    }

    /// Every ASCII character at every offset of strings up to 19 bytes (two words and a
    /// tail), among plain letters and among multi-byte characters.
    #[test]
    fn the_escape_check_finds_every_character_to_escape_anywhere() {
        for filler in ["a", "ū", "☃"] {
            for len in 1..=19 {
                for at in 0..len {
                    for c in 0u8..128 {
                        let mut s: String = filler.repeat(at);
                        s.push(char::from(c));
                        s.push_str(&filler.repeat(len - at - 1));
                        let expected = c < 0x20 || c == b'"' || c == b'\\';
                        assert_eq!(needs_escape(&s), expected, "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn writes_what_serde_json_writes() {
        for v in [
            json!(null),
            json!([true, false, 0, -1, u64::MAX, i64::MIN, 1.5, -0.0, 1e300]),
            json!({"a\"b": "x\\y", "ctl": "\u{0}\u{1f}\n\t", "uni": "ūnane ☃ /", "": {}}),
            json!({"rows": [["black", null], []], "n": 12345678901234u64}),
        ] {
            assert_eq!(text(&v), serde_json::to_string(&v).unwrap(), "{v}");
        }
    }

    fn values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            any::<String>().prop_map(Value::String),
            "[ -~\\\\\"\\x00-\\x1f]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(v in values()) {
            prop_assert_eq!(text(&v), serde_json::to_string(&v).unwrap());
        }
    }
}
