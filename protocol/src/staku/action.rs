//! Actions (one whole turn of one or two moves) and their notation.
//!
//! `<from><op><to>[<op><to>]` where the operator gives the unit size (`-` 1, `+` 2, `*` 3);
//! the second move starts where the first landed. Input is case-insensitive, may be
//! surrounded by whitespace, and may carry one `!` (capture mark) after each destination.

use super::board::{cell_name, parse_cell};
use crate::game::RulesError;

/// One turn: a mandatory first move and an optional second move from its landing cell.
///
/// Five bytes, `Copy`: cells are board indices (always on the board, since the only ways to
/// build an action are parsing and move generation), unit sizes are 1..=3 and `k2 == 0`
/// means "no second move".
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Action {
    pub(crate) from: u8,
    pub(crate) k: u8,
    pub(crate) to: u8,
    pub(crate) k2: u8,
    pub(crate) to2: u8,
}

impl Action {
    /// A one-move turn.
    pub(crate) const fn single(from: u8, k: u8, to: u8) -> Action {
        Action {
            from,
            k,
            to,
            k2: 0,
            to2: 0,
        }
    }

    /// This turn with a second move of `k2` tokens from the first landing cell to `to2`.
    pub(crate) const fn then(self, k2: u8, to2: u8) -> Action {
        Action { k2, to2, ..self }
    }

    /// The cell index the first move starts from (0 = a1 … 48 = g6).
    pub fn from_cell(self) -> u8 {
        self.from
    }

    /// Number of tokens lifted by the first move.
    pub fn unit(self) -> u8 {
        self.k
    }

    /// The landing cell of the first move.
    pub fn to_cell(self) -> u8 {
        self.to
    }

    /// The second move as (tokens lifted, landing cell), if any.
    pub fn second(self) -> Option<(u8, u8)> {
        (self.k2 != 0).then_some((self.k2, self.to2))
    }
}

fn op_char(k: u8) -> char {
    match k {
        1 => '-',
        2 => '+',
        _ => '*',
    }
}

fn op_size(c: u8) -> Option<u8> {
    match c {
        b'-' => Some(1),
        b'+' => Some(2),
        b'*' => Some(3),
        _ => None,
    }
}

/// Canonical notation: lower case, no capture marks.
pub fn format(a: Action) -> String {
    let mut s = format!("{}{}{}", cell_name(a.from), op_char(a.k), cell_name(a.to));
    if let Some((k2, to2)) = a.second() {
        s.push(op_char(k2));
        s.push_str(&cell_name(to2));
    }
    s
}

/// Parses any accepted input form of a turn.
pub fn parse(text: &str) -> Result<Action, RulesError> {
    let err = |reason: String| RulesError::notation(text, reason);
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(err("empty move (expected e.g. b2-c3 or b1-c1+d1)".into()));
    }
    // Split into cells and operators: cell (op cell [!])+ with one or two moves.
    let bytes = lower.as_bytes();
    let mut cells: Vec<u8> = Vec::with_capacity(3);
    let mut ops: Vec<u8> = Vec::with_capacity(2);
    let mut i = 0;
    loop {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &lower[start..i];
        if word.is_empty() {
            return Err(err(match bytes.get(i) {
                None => "missing destination cell at the end".into(),
                Some(_) => format!("expected a cell at position {}", start + 1),
            }));
        }
        let cell = parse_cell(word).ok_or_else(|| err(format!("no cell '{word}' on the board")))?;
        cells.push(cell);
        if cells.len() > 1 && bytes.get(i) == Some(&b'!') {
            i += 1;
        }
        match bytes.get(i) {
            None => break,
            Some(&c) => match op_size(c) {
                Some(k) if cells.len() < 3 => {
                    ops.push(k);
                    i += 1;
                }
                Some(_) => return Err(err("a turn has at most two moves".into())),
                None if c == b'!' => {
                    return Err(err(if cells.len() == 1 {
                        "'!' may only follow a destination".into()
                    } else {
                        "at most one '!' after a destination".into()
                    }))
                }
                None => {
                    return Err(err(format!(
                        "unexpected '{}' (operators are - + *)",
                        lower[i..].chars().next().unwrap_or('?')
                    )))
                }
            },
        }
    }
    if cells.len() < 2 {
        return Err(err("missing operator and destination (e.g. b2-c3)".into()));
    }
    let first = Action::single(cells[0], ops[0], cells[1]);
    Ok(match (ops.get(1), cells.get(2)) {
        (Some(&k2), Some(&to2)) => first.then(k2, to2),
        _ => first,
    })
}
