//! Staku's options: only the stacking limit (Staku-2 / Staku-3).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::game::RulesError;

/// Options of Staku.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// The tallest stack allowed: 2 ("Staku-2") or 3 ("Staku-3", the default).
    #[serde(deserialize_with = "max_stack_field")]
    pub max_stack: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_stack: 3 }
    }
}

fn range_message(got: impl fmt::Display) -> String {
    format!("max_stack must be 2 or 3, got {got}")
}

/// Checks the range of the options (the only check there is).
pub fn validate(options: Options) -> Result<Options, RulesError> {
    match options.max_stack {
        2 | 3 => Ok(options),
        n => Err(RulesError::options(range_message(n))),
    }
}

/// Deserialises `max_stack` so that wrong types and out-of-range integers both produce a
/// message naming the field and the allowed values (serde's default would say "u8").
fn max_stack_field<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = u8;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("max_stack as an integer, 2 or 3")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u8, E> {
            match v {
                2 | 3 => Ok(v as u8),
                _ => Err(E::custom(range_message(v))),
            }
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u8, E> {
            match v {
                2 | 3 => Ok(v as u8),
                _ => Err(E::custom(range_message(v))),
            }
        }
    }
    d.deserialize_any(V)
}
