//! Akron options: `size`, `pieces`, `nodelay`, with messages that name the field and range.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::game::RulesError;

use super::geometry::{MAX_SIZE, MIN_SIZE};

/// Largest allowed pile.
pub const MAX_PIECES: u32 = 1000;

/// Options of Akron (see `protocol/docs/games/akron.md`). Every field may be omitted; `null` also means
/// "use the default".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Board size n (n x n holes), 3..=16, default 9.
    #[serde(deserialize_with = "de_size")]
    pub size: u32,
    /// Balls in each player's pile, size..=1000; `None` before validation means
    /// floor(size²/2). [`validate_options`](crate::Game::validate_options) fills it in.
    #[serde(
        deserialize_with = "de_pieces",
        skip_serializing_if = "Option::is_none"
    )]
    pub pieces: Option<u32>,
    /// When true, a connection wins at once instead of having to survive the reply.
    #[serde(deserialize_with = "de_nodelay")]
    pub nodelay: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size: 9,
            pieces: None,
            nodelay: false,
        }
    }
}

impl Options {
    /// Options for a board size with everything else at its default.
    pub fn with_size(size: u32) -> Options {
        Options {
            size,
            ..Options::default()
        }
    }

    /// Checks ranges and fills in the derived default of `pieces`.
    pub fn validate(self) -> Result<Options, RulesError> {
        if !(MIN_SIZE as u32..=MAX_SIZE as u32).contains(&self.size) {
            return Err(RulesError::options(format!(
                "akron: size must be an integer in {MIN_SIZE}..=16, got {}",
                self.size
            )));
        }
        let pieces = self.pieces.unwrap_or(self.size * self.size / 2);
        if !(self.size..=MAX_PIECES).contains(&pieces) {
            return Err(RulesError::options(format!(
                "akron: pieces must be an integer in {}..=1000 for size {}, got {pieces}",
                self.size, self.size
            )));
        }
        Ok(Options {
            pieces: Some(pieces),
            ..self
        })
    }

    /// The pile size (derived default when not set).
    pub fn pieces(&self) -> u32 {
        self.pieces.unwrap_or(self.size * self.size / 2)
    }
}

/// Reads an unsigned integer field, naming the field and its range on a type error. Values
/// too large for `u32` are clamped to `u32::MAX` so the range check reports them.
fn de_integer<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
    range: &str,
) -> Result<Option<u32>, D::Error> {
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => Ok(None),
        Value::Number(num) => {
            if let Some(u) = num.as_u64() {
                Ok(Some(u.min(u32::MAX as u64) as u32))
            } else if num.as_i64().is_some() {
                Err(serde::de::Error::custom(format!(
                    "{field} must be an integer in {range}, got {v}"
                )))
            } else {
                Err(serde::de::Error::custom(format!(
                    "{field} must be an integer in {range}, got the non-integer {v}"
                )))
            }
        }
        other => Err(serde::de::Error::custom(format!(
            "{field} must be an integer in {range}, got {other}"
        ))),
    }
}

fn de_size<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(de_integer(d, "size", "3..=16")?.unwrap_or(9))
}

fn de_pieces<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    de_integer(d, "pieces", "size..=1000")
}

fn de_nodelay<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(b),
        other => Err(serde::de::Error::custom(format!(
            "nodelay must be true or false, got {other}"
        ))),
    }
}
