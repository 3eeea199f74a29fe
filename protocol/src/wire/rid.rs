//! The request id (`rid`) a client chooses and every answer echoes.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// Longest accepted string `rid`, in characters.
pub const MAX_RID_LEN: usize = 64;

/// A request id chosen by the client: an integer or a string of at most 64 characters.
///
/// Why its own type: the answer must echo it exactly (an integer stays an integer), and an
/// over-long string must be rejected as `bad_request` at parse time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
// On the wire a rid is a JSON number or string (see the serde impls below).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "number | string"))]
pub enum Rid {
    /// An integer rid.
    Int(i64),
    /// A string rid (at most [`MAX_RID_LEN`] characters).
    Str(String),
}

impl fmt::Display for Rid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rid::Int(i) => write!(f, "{i}"),
            Rid::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for Rid {
    fn from(v: i64) -> Self {
        Rid::Int(v)
    }
}

impl From<&str> for Rid {
    fn from(v: &str) -> Self {
        Rid::Str(v.to_string())
    }
}

impl Serialize for Rid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rid::Int(i) => s.serialize_i64(*i),
            Rid::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Rid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RidVisitor;
        impl Visitor<'_> for RidVisitor {
            type Value = Rid;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "an integer or a string of at most {MAX_RID_LEN} characters"
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rid, E> {
                Ok(Rid::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rid, E> {
                i64::try_from(v)
                    .map(Rid::Int)
                    .map_err(|_| E::custom("rid integer out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Rid, E> {
                if v.chars().count() > MAX_RID_LEN {
                    Err(E::custom(format!(
                        "rid string longer than {MAX_RID_LEN} characters"
                    )))
                } else {
                    Ok(Rid::Str(v.to_string()))
                }
            }
        }
        d.deserialize_any(RidVisitor)
    }
}

/// Extracts a valid `rid` from a raw JSON object, if it has one, so that even a
/// `bad_request` answer can echo it.
pub fn extract_rid(value: &Value) -> Option<Rid> {
    value
        .get("rid")
        .and_then(|r| Rid::deserialize(r.clone()).ok())
}
