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
    let stones = parse_rows(width, height, fields[0])?;
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

/// The stones of the rows field: ranks from the top down, separated by '/'.
fn parse_rows(width: u8, height: u8, field: &str) -> Result<[Bits; 2], RulesError> {
    let rows: Vec<&str> = field.split('/').collect();
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
    Ok(stones)
}

/// Four cells' characters by their black bits (low nibble) and white bits (high nibble).
const CELLS4: [[u8; 4]; 256] = {
    let mut table = [[0u8; 4]; 256];
    let mut i = 0;
    while i < 256 {
        let mut j = 0;
        while j < 4 {
            table[i][j] = if (i >> j) & 1 != 0 {
                b'b'
            } else if (i >> (4 + j)) & 1 != 0 {
                b'w'
            } else {
                b'.'
            };
            j += 1;
        }
        i += 1;
    }
    table
};

/// The canonical position string.
pub(super) fn format(game: &Unane) -> String {
    let (width, height) = (usize::from(game.width), game.height);
    let mut s = Vec::with_capacity((width + 1) * usize::from(height) + 12);
    // A rank at a time from its two 16-bit rows, four cells per table lookup: this runs
    // for every move's diff.
    for i in 0..height {
        let rank = height - 1 - i;
        if i > 0 {
            s.push(b'/');
        }
        let (black, white) = (game.stones[0].rank(rank), game.stones[1].rank(rank));
        let mut row = [0u8; 16];
        for (n, cells) in row.chunks_exact_mut(4).enumerate().take(width.div_ceil(4)) {
            let shift = 4 * n;
            let index =
                usize::from((black >> shift) & 0xf) | usize::from((white >> shift) & 0xf) << 4;
            cells.copy_from_slice(&CELLS4[index]);
        }
        s.extend_from_slice(&row[..width]);
    }
    s.push(b' ');
    s.push(if game.to_move == Side::First {
        b'b'
    } else {
        b'w'
    });
    s.push(b' ');
    s.extend_from_slice(itoa::Buffer::new().format(game.ply).as_bytes());
    // Only ASCII was written.
    String::from_utf8(s).unwrap_or_default()
}
