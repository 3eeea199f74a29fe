//! Move notation: `c3` (placement), `c3-d4` (step or Still Point exit), `pass`.
//! Input is case-insensitive and may carry surrounding whitespace; output is lower case.

use super::{Action, Cell};
use crate::game::RulesError;

/// Parses any accepted input form. Well-formed text parses even when the action is illegal.
pub(super) fn parse(text: &str) -> Result<Action, RulesError> {
    let t = text.trim().to_ascii_lowercase();
    if t.is_empty() {
        return Err(RulesError::notation(text, "empty move"));
    }
    if t == "pass" {
        return Ok(Action::Pass);
    }
    let cell = |part: &str| -> Result<Cell, RulesError> {
        Cell::parse(part).ok_or_else(|| {
            RulesError::notation(
                text,
                format!("'{part}' is not a cell of the board (cells are a1..i9 with |column - row| <= 4, e.g. c3)"),
            )
        })
    };
    match t.split_once('-') {
        Some((from, to)) => {
            if to.contains('-') {
                return Err(RulesError::notation(
                    text,
                    "a move names two cells, as in c3-d4",
                ));
            }
            Ok(Action::Move {
                from: cell(from)?,
                to: cell(to)?,
            })
        }
        None => {
            if t.len() != 2 {
                return Err(RulesError::notation(
                    text,
                    "expected a placement (c3), a move (c3-d4) or pass",
                ));
            }
            Ok(Action::Place(cell(&t)?))
        }
    }
}

/// The canonical (lower-case) notation.
pub(super) fn format(action: Action) -> String {
    match action {
        Action::Place(c) => c.name(),
        Action::Move { from, to } => format!("{from}-{to}"),
        Action::Pass => "pass".to_string(),
    }
}
