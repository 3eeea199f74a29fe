//! Board geometry: the 49 hexagonal cells, their names, axial coordinates and neighbours.
//!
//! Cells are indexed 0..49 in reading order from the bottom: `a1` = 0 … `a6` = 5, `b1` = 6 …
//! `g6` = 48. Every table is computed at compile time so move generation is pure lookups.

/// Number of cells on the board.
pub const CELLS: usize = 49;
/// Number of rows (`a` to `g`).
pub const ROWS: usize = 7;
/// Cells per row, `a` to `g`.
pub const ROW_LEN: [u8; ROWS] = [6, 7, 8, 7, 8, 7, 6];
/// Index of the first cell of each row.
pub const ROW_START: [u8; ROWS] = [0, 6, 13, 21, 28, 36, 43];
/// Axial `u` of the first cell of each row (d4 = (0, 0)).
const U_FIRST: [i8; ROWS] = [-1, -2, -3, -3, -4, -4, -4];

/// The six directions (du, dv): E, W, NE, NW, SE, SW.
pub const DIRS: [(i8, i8); 6] = [(1, 0), (-1, 0), (0, 1), (-1, 1), (1, -1), (0, -1)];
/// Marks "no neighbour" in [`NEIGHBOURS`].
pub const NONE: u8 = u8::MAX;

/// White's palaces (a1, a6): black wins by topping one of them.
pub const WHITE_PALACES: [u8; 2] = [0, 5];
/// Black's palaces (g1, g6): white wins by topping one of them.
pub const BLACK_PALACES: [u8; 2] = [43, 48];

/// The cell at axial (u, v), if it is on the board.
pub const fn cell_at(u: i8, v: i8) -> Option<u8> {
    if v < -3 || v > 3 {
        return None;
    }
    let r = (v + 3) as usize;
    let i = u - U_FIRST[r];
    if i < 0 || i >= ROW_LEN[r] as i8 {
        None
    } else {
        Some(ROW_START[r] + i as u8)
    }
}

/// Row index (0 = `a`) of a cell.
pub const fn row_of(cell: u8) -> usize {
    let mut r = ROWS - 1;
    while ROW_START[r] > cell {
        r -= 1;
    }
    r
}

/// Axial coordinates (u, v) of a cell.
pub const fn coords(cell: u8) -> (i8, i8) {
    let r = row_of(cell);
    let i = (cell - ROW_START[r]) as i8;
    (U_FIRST[r] + i, r as i8 - 3)
}

const fn build_neighbours() -> [[u8; 6]; CELLS] {
    let mut t = [[NONE; 6]; CELLS];
    let mut c = 0;
    while c < CELLS {
        let (u, v) = coords(c as u8);
        let mut d = 0;
        while d < 6 {
            if let Some(n) = cell_at(u + DIRS[d].0, v + DIRS[d].1) {
                t[c][d] = n;
            }
            d += 1;
        }
        c += 1;
    }
    t
}

/// `NEIGHBOURS[cell][dir]`: the adjacent cell in direction `dir` of [`DIRS`], or [`NONE`].
pub static NEIGHBOURS: [[u8; 6]; CELLS] = build_neighbours();

/// The name of a cell, e.g. `d4`.
pub fn cell_name(cell: u8) -> String {
    let r = row_of(cell);
    let n = cell - ROW_START[r] + 1;
    format!("{}{}", (b'a' + r as u8) as char, n)
}

/// Parses a cell name (lower-case row letter, then 1-based number without leading zeros).
pub fn parse_cell(text: &str) -> Option<u8> {
    let bytes = text.as_bytes();
    let (&row, num) = bytes.split_first()?;
    if !(b'a'..=b'g').contains(&row) || num.is_empty() || num.len() > 1 {
        return None;
    }
    let r = (row - b'a') as usize;
    let n = num[0].checked_sub(b'1')?;
    if n >= ROW_LEN[r] {
        return None;
    }
    Some(ROW_START[r] + n)
}

/// The direction and distance from `from` to `to` when they lie on one straight line.
pub fn line_between(from: u8, to: u8) -> Option<(usize, u8)> {
    let (u0, v0) = coords(from);
    let (u1, v1) = coords(to);
    let (du, dv) = (u1 - u0, v1 - v0);
    if du == 0 && dv == 0 {
        return None;
    }
    let dist = du.abs().max(dv.abs()).max((du + dv).abs());
    DIRS.iter()
        .position(|&(a, b)| a * dist == du && b * dist == dv)
        .map(|d| (d, dist as u8))
}
