//! Akunur's options: how many corners win.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::game::RulesError;

/// Options of Akunur.
///
/// JSON: `{"corners_to_win": 3}`; every field may be omitted (defaults below), unknown
/// fields are rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Corners a player must occupy to win: 3 (standard, the default) or 4 (extended).
    #[serde(deserialize_with = "corners_to_win")]
    pub corners_to_win: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options { corners_to_win: 3 }
    }
}

impl Options {
    /// Checks the ranges the page allows and returns the options unchanged (no field is
    /// derived from another).
    pub fn validate(self) -> Result<Options, RulesError> {
        if !(3..=4).contains(&self.corners_to_win) {
            return Err(RulesError::options(format!(
                "akunur: corners_to_win must be 3 (standard) or 4 (extended), got {}",
                self.corners_to_win
            )));
        }
        Ok(self)
    }
}

/// Deserializes `corners_to_win` so that a wrong type or an out-of-range number gives a
/// message naming the field and the allowed values (serde's own message names neither).
fn corners_to_win<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    struct V;
    const WHAT: &str = "corners_to_win must be the integer 3 (standard) or 4 (extended)";

    impl V {
        fn check<E: de::Error>(v: i128) -> Result<u8, E> {
            if (3..=4).contains(&v) {
                Ok(v as u8)
            } else {
                Err(E::custom(format!("{WHAT}, got {v}")))
            }
        }
    }

    impl<'de> Visitor<'de> for V {
        type Value = u8;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(WHAT)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u8, E> {
            V::check(v as i128)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u8, E> {
            V::check(v as i128)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u8, E> {
            Err(E::custom(format!("{WHAT}, got {v}")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u8, E> {
            Err(E::custom(format!("{WHAT}, got the string {v:?}")))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<u8, E> {
            Err(E::custom(format!("{WHAT}, got {v}")))
        }
        fn visit_unit<E: de::Error>(self) -> Result<u8, E> {
            Err(E::custom(format!("{WHAT}, got null")))
        }
    }

    d.deserialize_any(V)
}
