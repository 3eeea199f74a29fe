//! The standard queue key: (kind, options, clock, rated), with the JSON parts
//! normalised so that equal settings written differently share a queue.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PairingKey;
use crate::domain::setup::GameSetup;

/// Which queue a `queue.join` request goes to. Two players are compatible
/// exactly when their keys are equal.
///
/// `options` and `clock` hold *canonical* JSON text (object keys sorted at
/// every level, integral floats written as integers), so `{"a":1,"b":2.0}` and
/// `{"b":2,"a":1}` are the same queue. The server should first complete the
/// options with the game's defaults (so an omitted option and its default
/// value agree); this type does not know the games.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QueueKey {
    /// The game kind (`unane`, `staku`, `akron`, `akunur`).
    pub kind: String,
    /// The game options as canonical JSON text.
    pub options: String,
    /// The clock settings as canonical JSON text.
    pub clock: String,
    /// Whether games from this queue are rated.
    pub rated: bool,
}

impl QueueKey {
    /// The key of a game's checked settings.
    ///
    /// Why the key keeps the kind as text: it is the pairing model's key (compared and
    /// hashed as written, by a model that does not know the games) and it travels between
    /// nodes in the bus's JSON; the matchmaker turns it back into a setup when it starts
    /// the game of a pairing.
    pub fn of(setup: &GameSetup, rated: bool) -> Self {
        Self::new(setup.kind_id(), &setup.options, &setup.clock_json(), rated)
    }

    /// The key for these settings, normalising the JSON parts.
    pub fn new(kind: &str, options: &Value, clock: &Value, rated: bool) -> Self {
        QueueKey {
            kind: kind.to_owned(),
            options: canonical_json(options),
            clock: canonical_json(clock),
            rated,
        }
    }
}

impl PairingKey for QueueKey {
    fn rated(&self) -> bool {
        self.rated
    }
}

impl fmt::Display for QueueKey {
    /// A compact label, e.g. for logs and metric labels:
    /// `staku {"size":9} {"kind":"none"} rated`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rated = if self.rated { "rated" } else { "casual" };
        write!(f, "{} {} {} {}", self.kind, self.options, self.clock, rated)
    }
}

/// `value` as JSON text with object keys sorted at every level and floats that
/// hold an integer written as that integer: one spelling per meaning, so it
/// can be compared as a string.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            // Sort explicitly: serde_json keeps insertion order when its
            // `preserve_order` feature is on anywhere in the build.
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            // 9.0 and 9 mean the same option value; 2^53 bounds the integers
            // an f64 holds exactly.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                out.push_str(&(f as i64).to_string())
            }
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}
