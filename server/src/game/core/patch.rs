//! RFC 6902 patches: the operations that turn one JSON value into another.
//!
//! Why a diff of our own: it compares the few fields an event can change member by
//! member, so a move replaces single board cells instead of the whole board, and the
//! operations are typed so a patch is encoded straight to text.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use stoa_protocol::json_text::{write_str, write_value};

/// One RFC 6902 operation, typed so that a patch is encoded straight to text (no JSON
/// object per operation); the fields serialize in the order RFC 6902 shows them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchOp {
    /// `replace` or `add`.
    pub op: &'static str,
    /// JSON Pointer (a fixed member's is static: no copy per move).
    pub path: Cow<'static, str>,
    /// The new value.
    pub value: Value,
}

impl PatchOp {
    /// A `replace` of the value at `path`.
    pub(super) fn replace(path: impl Into<Cow<'static, str>>, value: Value) -> PatchOp {
        PatchOp {
            op: "replace",
            path: path.into(),
            value,
        }
    }
}

/// Appends `ops` as the JSON text of an RFC 6902 patch, byte for byte what `serde_json`
/// writes for them (see [`stoa_protocol::json_text`]).
pub fn write_patch(out: &mut String, ops: &[PatchOp]) {
    out.push('[');
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // The two operations' names are known: written whole, not checked for escapes.
        match op.op {
            "replace" => out.push_str("{\"op\":\"replace\",\"path\":"),
            "add" => out.push_str("{\"op\":\"add\",\"path\":"),
            other => {
                out.push_str("{\"op\":");
                write_str(out, other);
                out.push_str(",\"path\":");
            }
        }
        write_str(out, &op.path);
        out.push_str(",\"value\":");
        write_value(out, &op.value);
        out.push('}');
    }
    out.push(']');
}

/// Appends to `ops` the operations that turn `old` into `new` at `path`: objects with the
/// same keys and arrays of the same length are compared member by member (so a move
/// replaces single board cells), anything else that differs is replaced whole.
pub(super) fn diff_into(path: &mut String, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    // Equal subtrees (most of a board) are skipped by one comparison that stops at the
    // first difference, before any path is built.
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b))
            if a.len() == b.len() && a.keys().zip(b.keys()).all(|(x, y)| x == y) =>
        {
            for ((key, x), y) in a.iter().zip(b.values()) {
                if x == y {
                    continue;
                }
                let len = path.len();
                path.push('/');
                push_escaped(path, key);
                diff_into(path, x, y, ops);
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x == y {
                    continue;
                }
                let len = path.len();
                path.push('/');
                let _ = write!(path, "{i}");
                diff_into(path, x, y, ops);
                path.truncate(len);
            }
        }
        _ => ops.push(PatchOp::replace(path.clone(), new.clone())),
    }
}

/// JSON Pointer escaping (RFC 6901): `~` is `~0`, `/` is `~1`.
fn push_escaped(path: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_is_written_as_serde_json_writes_it() {
        let ops = vec![
            PatchOp::replace("/clock/remaining_ms/black", json!(59_000)),
            PatchOp::replace("/position", json!("8/8/3b4/8 w 1")),
            PatchOp {
                op: "add",
                path: "/moves/-".into(),
                value: json!("d4"),
            },
            PatchOp::replace("/state/rows/6/3", json!(null)),
            PatchOp::replace("/a~1\"b", json!({"x": [1.5, "\n", false]})),
        ];
        let mut text = String::new();
        write_patch(&mut text, &ops);
        assert_eq!(text, serde_json::to_string(&ops).unwrap());
        let mut empty = String::new();
        write_patch(&mut empty, &[]);
        assert_eq!(empty, "[]");
    }

    #[test]
    fn diff_replaces_only_changed_members() {
        let old = json!({"a": [1, 2, 3], "b": {"x/y": 1, "z": "k"}, "c": [1]});
        let new = json!({"a": [1, 5, 3], "b": {"x/y": 2, "z": "k"}, "c": [1, 2]});
        let mut ops = Vec::new();
        let mut path = String::new();
        diff_into(&mut path, &old, &new, &mut ops);
        assert_eq!(
            json!(ops),
            json!([
                {"op":"replace","path":"/a/1","value":5},
                {"op":"replace","path":"/b/x~1y","value":2},
                {"op":"replace","path":"/c","value":[1,2]},
            ])
        );
        let mut patched = old.clone();
        let ops: json_patch::Patch = serde_json::from_value(json!(ops)).unwrap();
        json_patch::patch(&mut patched, &ops).unwrap();
        assert_eq!(patched, new);
    }
}
