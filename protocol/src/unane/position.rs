//! Position strings: `<rows> <to-act> <ply>`, e.g. `bwbwb/wbwbw/bwbwb/wbwbw b 0`.

use super::bits::{Bits, STRIDE};
use super::Unane;
use crate::game::{RulesError, Side};

/// The `(width, height)` a position string's rows describe, when all its rows have one length.
pub(super) fn dimensions(text: &str) -> Option<(u32, u32)> {
    let rows = text.split(' ').next()?;
    let mut lengths = rows.split('/').map(|row| row.chars().count());
    let width = lengths.next()?;
    let height = 1 + lengths.clone().count();
    lengths
        .all(|len| len == width)
        .then_some((width as u32, height as u32))
}

/// Parses a position string strictly for a `width` x `height` board.
pub(super) fn parse(width: u8, height: u8, text: &str) -> Result<Unane, RulesError> {
    let fields: Vec<&str> = text.split(' ').collect();
    if fields.len() != 3 {
        return Err(RulesError::position(format!(
            "expected '<rows> <to-act> <ply>' separated by single spaces, got {} field(s) in '{}'",
            fields.len(),
            text.escape_debug()
        )));
    }
    let rows: Vec<&str> = fields[0].split('/').collect();
    if rows.len() != usize::from(height) {
        return Err(RulesError::position(format!(
            "expected {height} ranks separated by '/' for a {width}x{height} board, got {}",
            rows.len()
        )));
    }
    let mut stones = [Bits::EMPTY; 2];
    for (i, row) in rows.iter().enumerate() {
        // Rows are listed from the top rank down.
        let rank = height - 1 - i as u8;
        if row.len() != usize::from(width) || row.chars().count() != usize::from(width) {
            return Err(RulesError::position(format!(
                "rank {} ('{}') must have exactly {width} cells, got {}",
                rank + 1,
                row.escape_debug(),
                row.chars().count()
            )));
        }
        for (file, c) in row.bytes().enumerate() {
            let bit = Bits::cell(rank * STRIDE + file as u8);
            match c {
                b'b' => stones[0] = stones[0] | bit,
                b'w' => stones[1] = stones[1] | bit,
                b'.' => {}
                _ => {
                    return Err(RulesError::position(format!(
                        "rank {} has '{}' at file {}; cells are 'b', 'w' or '.'",
                        rank + 1,
                        (c as char).escape_debug(),
                        (b'a' + file as u8) as char
                    )))
                }
            }
        }
    }
    let to_act = match fields[1] {
        "b" => Side::First,
        "w" => Side::Second,
        other => {
            return Err(RulesError::position(format!(
                "side to act must be 'b' or 'w', got '{}'",
                other.escape_debug()
            )))
        }
    };
    let ply_text = fields[2];
    let ply_ok = !ply_text.is_empty()
        && ply_text.bytes().all(|b| b.is_ascii_digit())
        && (ply_text == "0" || !ply_text.starts_with('0'));
    let ply: u32 = match ply_text.parse() {
        Ok(n) if ply_ok => n,
        _ => {
            return Err(RulesError::position(format!(
                "ply must be a non-negative integer without leading zeros (at most {}), got '{}'",
                u32::MAX,
                ply_text.escape_debug()
            )))
        }
    };
    if stones[to_act.index()].is_empty() {
        // Such a side would have no action at all: a state play never reaches (a game ends
        // as soon as either side is down to one group).
        return Err(RulesError::position(format!(
            "{} is to act but has no stones",
            if to_act == Side::First {
                "black"
            } else {
                "white"
            }
        )));
    }
    Ok(Unane::from_parts(width, height, stones, to_act, ply))
}

/// The canonical position string.
pub(super) fn format(game: &Unane) -> String {
    let (width, height) = (game.width, game.height);
    let mut s = String::with_capacity(usize::from(width + 1) * usize::from(height) + 12);
    // A rank at a time from its two 16-bit rows: this runs for every move's diff.
    for i in 0..height {
        let rank = height - 1 - i;
        if i > 0 {
            s.push('/');
        }
        let (black, white) = (game.stones[0].rank(rank), game.stones[1].rank(rank));
        for file in 0..width {
            let bit = 1u16 << file;
            s.push(if black & bit != 0 {
                'b'
            } else if white & bit != 0 {
                'w'
            } else {
                '.'
            });
        }
    }
    s.push(' ');
    s.push(if game.to_move == Side::First {
        'b'
    } else {
        'w'
    });
    s.push(' ');
    s.push_str(&game.ply.to_string());
    s
}
