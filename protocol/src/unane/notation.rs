//! Cells, actions and their notation (`b3xb4`, `-b3`, `swap`).

use std::fmt;

use super::bits::STRIDE;
use crate::game::RulesError;

/// A cell of the board, stored as `rank * 16 + file` (both from 0; `a1` is 0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// The cell at file index `file` and rank index `rank` (both from 0, each below 16).
    pub const fn new(file: u8, rank: u8) -> Option<Cell> {
        if file < STRIDE && rank < STRIDE {
            Some(Cell(rank * STRIDE + file))
        } else {
            None
        }
    }

    /// The cell with this internal index (`rank * 16 + file`).
    pub(crate) const fn from_index(index: u8) -> Cell {
        Cell(index)
    }

    /// The internal index `rank * 16 + file`.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// File index from 0 (`a` is 0).
    pub const fn file(self) -> u8 {
        self.0 % STRIDE
    }

    /// Rank index from 0 (rank `1` is 0).
    pub const fn rank(self) -> u8 {
        self.0 / STRIDE
    }

    /// Whether the cell lies on a `width` x `height` board.
    pub const fn on_board(self, width: u8, height: u8) -> bool {
        self.file() < width && self.rank() < height
    }

    /// Whether two cells are orthogonal neighbours.
    pub const fn adjacent(self, other: Cell) -> bool {
        let (f1, r1, f2, r2) = (self.file(), self.rank(), other.file(), other.rank());
        (f1 == f2 && r1.abs_diff(r2) == 1) || (r1 == r2 && f1.abs_diff(f2) == 1)
    }
}

impl Cell {
    /// Appends the cell's name (`b3`, `p16`).
    fn push_name(self, out: &mut String) {
        out.push(char::from(b'a' + self.file()));
        let rank = self.rank() + 1;
        if rank >= 10 {
            out.push(char::from(b'0' + rank / 10));
        }
        out.push(char::from(b'0' + rank % 10));
    }
}

impl Action {
    /// The canonical notation (what [`fmt::Display`] writes).
    ///
    /// Why written by hand: every move's record and diff carry it, and the formatting
    /// machinery cost more than the move's legality check.
    pub fn notation(self) -> String {
        let mut out = String::with_capacity(8);
        match self {
            Action::Capture { from, to } => {
                from.push_name(&mut out);
                out.push('x');
                to.push_name(&mut out);
            }
            Action::Remove(cell) => {
                out.push('-');
                cell.push_name(&mut out);
            }
            Action::Swap => out.push_str("swap"),
        }
        out
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

/// One Ūnane action.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Move the stone on `from` one step onto the enemy stone on `to`, which leaves the board.
    Capture {
        /// The moving stone.
        from: Cell,
        /// The captured enemy stone, orthogonally adjacent to `from`.
        to: Cell,
    },
    /// Take one's own stone off this cell (allowed when it touches no enemy stone).
    Remove(Cell),
    /// The pie rule: white's first action, the players exchange colours.
    Swap,
}

impl fmt::Display for Action {
    /// Canonical notation: `b3xb4`, `-b3`, `swap`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.notation())
    }
}

/// Parses a cell name at the start of `s` (already lower case): a letter and a rank number
/// from 1 with no leading zero. Returns the file and rank indices (unbounded by the board)
/// and the rest of the string.
fn cell_prefix(s: &str) -> Option<(u32, u32, &str)> {
    let bytes = s.as_bytes();
    let letter = *bytes.first()?;
    if !letter.is_ascii_lowercase() {
        return None;
    }
    let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 2 || bytes[1] == b'0' {
        return None;
    }
    let rank: u32 = s[1..1 + digits].parse().ok()?;
    Some((u32::from(letter - b'a'), rank - 1, &s[1 + digits..]))
}

/// Parses one cell name that must lie on the `width` x `height` board.
fn board_cell(
    text: &str,
    name: &str,
    s: &str,
    width: u8,
    height: u8,
) -> Result<(Cell, usize), RulesError> {
    let (file, rank, rest) = cell_prefix(s).ok_or_else(|| {
        RulesError::notation(
            text,
            format!("expected a cell like b3 in '{name}' (a file letter then a rank from 1)"),
        )
    })?;
    let used = s.len() - rest.len();
    if file >= u32::from(width) || rank >= u32::from(height) {
        return Err(RulesError::notation(
            text,
            format!(
                "cell {} is off the {width}x{height} board (files a-{}, ranks 1-{height})",
                &s[..used],
                (b'a' + width - 1) as char
            ),
        ));
    }
    // Both indices are below 16 here, so the cell exists.
    let cell =
        Cell::new(file as u8, rank as u8).ok_or_else(|| RulesError::notation(text, "bad cell"))?;
    Ok((cell, used))
}

/// Parses any accepted input form on a `width` x `height` board: `b3xb4` or `b3-b4`
/// (capture), `-b3` or `b3-b3` (removal), `swap`; case-insensitive, surrounding whitespace
/// ignored. Legality is not checked here, only form and that the cells are on the board.
pub fn parse(text: &str, width: u8, height: u8) -> Result<Action, RulesError> {
    let lower = text.trim().to_ascii_lowercase();
    let s = lower.as_str();
    if s.is_empty() {
        return Err(RulesError::notation(text, "empty move"));
    }
    if s == "swap" {
        return Ok(Action::Swap);
    }
    if let Some(rest) = s.strip_prefix('-') {
        let (cell, used) = board_cell(text, s, rest, width, height)?;
        if used != rest.len() {
            return Err(RulesError::notation(
                text,
                "unexpected text after the cell of a removal (expected e.g. -b3)",
            ));
        }
        return Ok(Action::Remove(cell));
    }
    let (from, used) = board_cell(text, s, s, width, height)?;
    let rest = &s[used..];
    let (sep, rest) = match rest.as_bytes().first() {
        Some(b'x') => ('x', &rest[1..]),
        Some(b'-') => ('-', &rest[1..]),
        _ => {
            return Err(RulesError::notation(
                text,
                "expected a capture like b3xb4 or b3-b4, a removal like -b3, or swap",
            ))
        }
    };
    let (to, used) = board_cell(text, s, rest, width, height)?;
    if used != rest.len() {
        return Err(RulesError::notation(
            text,
            "unexpected text after the target cell",
        ));
    }
    if from == to {
        return if sep == '-' {
            Ok(Action::Remove(from))
        } else {
            Err(RulesError::notation(
                text,
                "a capture needs two different cells (a removal is written -b3 or b3-b3)",
            ))
        };
    }
    Ok(Action::Capture { from, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_names_the_cells_for_every_action_on_the_largest_board() {
        let cells: Vec<Cell> = (0..16u8)
            .flat_map(|rank| (0..16u8).map(move |file| Cell::from_index(rank * STRIDE + file)))
            .collect();
        let mut seen = 0;
        for &from in &cells {
            let remove = Action::Remove(from);
            assert_eq!(remove.notation(), format!("-{from}"));
            assert_eq!(remove.to_string(), remove.notation());
            for &to in cells.iter().filter(|to| from.adjacent(**to)) {
                let capture = Action::Capture { from, to };
                assert_eq!(capture.notation(), format!("{from}x{to}"));
                seen += 1;
            }
        }
        // Every orthogonal step on a 16x16 board, both ways.
        assert_eq!(seen, 2 * 2 * 16 * 15);
        assert_eq!(Action::Swap.notation(), "swap");
        assert_eq!(
            Action::Capture {
                from: Cell::from_index(9 * STRIDE + 15),
                to: Cell::from_index(10 * STRIDE + 15)
            }
            .notation(),
            "p10xp11"
        );
    }
}
