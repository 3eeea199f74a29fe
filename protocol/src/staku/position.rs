//! The position string: `<rows g..a> <to-act> <counter>`.

use super::board::{CELLS, ROWS, ROW_LEN, ROW_START};
use super::stack::{Stack, Token};
use crate::game::{RulesError, Side};

/// A parsed position string, before the game state derives its outcome.
pub(crate) struct Parsed {
    pub board: [Stack; CELLS],
    pub to_act: Side,
    pub counter: u8,
}

/// Formats the three fields canonically.
pub(crate) fn format(board: &[Stack; CELLS], to_act: Side, counter: u8) -> String {
    let mut s = String::with_capacity(120);
    for r in (0..ROWS).rev() {
        if r != ROWS - 1 {
            s.push('/');
        }
        for i in 0..ROW_LEN[r] {
            if i != 0 {
                s.push(',');
            }
            let stack = board[(ROW_START[r] + i) as usize];
            if stack.is_empty() {
                s.push('.');
            } else {
                s.extend(stack.tokens().map(Token::letter));
            }
        }
    }
    s.push(' ');
    s.push(if to_act == Side::First { 'w' } else { 'b' });
    s.push(' ');
    s.push_str(&counter.to_string());
    s
}

/// Strict parser: every malformation is reported with the row/cell it concerns.
pub(crate) fn parse(text: &str, max_stack: u8) -> Result<Parsed, RulesError> {
    let err = |m: String| RulesError::position(m);
    let fields: Vec<&str> = text.trim().split(' ').collect();
    if fields.len() != 3 {
        return Err(err(format!(
            "expected 3 fields separated by single spaces (rows, side to act, counter), got {}",
            fields.len()
        )));
    }
    let rows: Vec<&str> = fields[0].split('/').collect();
    if rows.len() != ROWS {
        return Err(err(format!(
            "expected 7 rows g..a separated by '/', got {}",
            rows.len()
        )));
    }
    let mut board = [Stack::EMPTY; CELLS];
    for (k, row_text) in rows.iter().enumerate() {
        let r = ROWS - 1 - k;
        let letter = (b'a' + r as u8) as char;
        let cells: Vec<&str> = row_text.split(',').collect();
        if cells.len() != ROW_LEN[r] as usize {
            return Err(err(format!(
                "row {letter} must have {} cells separated by ',', got {}",
                ROW_LEN[r],
                cells.len()
            )));
        }
        for (i, cell_text) in cells.iter().enumerate() {
            let name = format!("{letter}{}", i + 1);
            if *cell_text == "." {
                continue;
            }
            board[(ROW_START[r] as usize) + i] = parse_stack(&name, cell_text, max_stack)?;
        }
    }
    let to_act = match fields[1] {
        "w" => Side::First,
        "b" => Side::Second,
        other => {
            return Err(err(format!(
                "side to act must be 'w' or 'b', got '{other}'"
            )))
        }
    };
    let c = fields[2];
    let counter = if c.is_empty()
        || !c.bytes().all(|b| b.is_ascii_digit())
        || (c.len() > 1 && c.starts_with('0'))
        || c.len() > 2
    {
        None
    } else {
        c.parse::<u8>().ok().filter(|&n| n <= 20)
    };
    let counter = counter.ok_or_else(|| {
        err(format!(
            "no-capture counter must be an integer 0..20 (1..20 while the game is on, 0 once drawn), got '{c}'"
        ))
    })?;
    Ok(Parsed {
        board,
        to_act,
        counter,
    })
}

/// One cell's stack, bottom to top (`W`, `B`, `N`), checked against `max_stack` and the
/// stacking rules.
fn parse_stack(name: &str, cell_text: &str, max_stack: u8) -> Result<Stack, RulesError> {
    let err = |m: String| RulesError::position(m);
    if cell_text.is_empty() {
        return Err(err(format!("cell {name} is empty text (use '.')")));
    }
    let mut tokens = Vec::with_capacity(3);
    for c in cell_text.chars() {
        tokens.push(match c {
            'W' => Token::White,
            'B' => Token::Black,
            'N' => Token::Neutral,
            _ => {
                return Err(err(format!(
                    "cell {name}: unexpected '{c}' (tokens are W, B, N bottom to top, or '.' for empty)"
                )))
            }
        });
    }
    if tokens.len() > max_stack as usize {
        return Err(err(format!(
            "cell {name}: stack of {} tokens exceeds max_stack {max_stack}",
            tokens.len()
        )));
    }
    let stack = Stack::from_tokens(&tokens).ok_or_else(|| {
        err(format!(
            "cell {name}: '{cell_text}' is not a legal stack (one colour with neutrals, no neutral above a coloured token)"
        ))
    })?;
    Ok(stack)
}
