//! Ūnane options: board width and height.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::game::RulesError;

/// Smallest allowed width or height.
pub const MIN_SIZE: u32 = 3;
/// Largest allowed width or height.
pub const MAX_SIZE: u32 = 16;

/// Options of Ūnane (`{"width": 8, "height": 7}` by default).
///
/// Both sides are in `3..=16` and at least one of them is even. Omitted fields take their
/// defaults; unknown fields are rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Number of files (columns), `3..=16`.
    #[serde(deserialize_with = "width")]
    pub width: u32,
    /// Number of ranks (rows), `3..=16`.
    #[serde(deserialize_with = "height")]
    pub height: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            width: 8,
            height: 7,
        }
    }
}

impl Options {
    /// Checks the ranges and the parity rule, naming the offending field.
    pub fn validate(self) -> Result<Options, RulesError> {
        for (name, value) in [("width", self.width), ("height", self.height)] {
            if !(MIN_SIZE..=MAX_SIZE).contains(&value) {
                return Err(RulesError::options(format!(
                    "unane: {name} must be an integer in {MIN_SIZE}..={MAX_SIZE}, got {value}"
                )));
            }
        }
        if self.width % 2 == 1 && self.height % 2 == 1 {
            return Err(RulesError::options(format!(
                "unane: at least one of width and height must be even, got {}x{}",
                self.width, self.height
            )));
        }
        Ok(self)
    }
}

/// Deserializes a board side from any integer, so that out-of-range values reach
/// [`Options::validate`] (which names the range) and wrong types name the field.
struct SideVisitor(&'static str);

impl Visitor<'_> for SideVisitor {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: an integer in {MIN_SIZE}..={MAX_SIZE}", self.0)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
        u32::try_from(v).map_err(|_| {
            E::custom(format!(
                "{} must be an integer in {MIN_SIZE}..={MAX_SIZE}, got {v}",
                self.0
            ))
        })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
        u32::try_from(v).map_err(|_| {
            E::custom(format!(
                "{} must be an integer in {MIN_SIZE}..={MAX_SIZE}, got {v}",
                self.0
            ))
        })
    }
}

fn width<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    d.deserialize_any(SideVisitor("width"))
}

fn height<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    d.deserialize_any(SideVisitor("height"))
}
