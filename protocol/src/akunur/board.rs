//! Board geometry: the 61 cells, their names, neighbours, rings, corners and echoes.
//!
//! Cells are indexed row by row from row 1 (y = 0) upwards and left to right within a row.
//! That order is symmetric under the point reflection through e5, so the echo of cell `i`
//! is simply `60 - i`, and e5 is cell 30. Every table is computed at compile time so the
//! hot paths only do bit operations on `u64` masks.

/// Number of cells on the board.
pub const CELLS: usize = 61;

/// Index of the Still Point, e5.
pub const STILL_POINT: u8 = 30;

/// A cell of the board, by index (see the module documentation for the order).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// The cell with this index, if it is one (0..61).
    pub const fn from_index(index: usize) -> Option<Cell> {
        if index < CELLS {
            Some(Cell(index as u8))
        } else {
            None
        }
    }

    /// The cell at column `x` and row `y` (both 0..9), if it exists (|x - y| <= 4).
    pub const fn from_xy(x: i32, y: i32) -> Option<Cell> {
        if x < 0 || y < 0 || x > 8 || y > 8 {
            return None;
        }
        let i = INDEX[y as usize][x as usize];
        if i == NONE {
            None
        } else {
            Some(Cell(i))
        }
    }

    /// The cell's index (0..61).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Column (0..9, `a`..`i`).
    #[inline]
    pub const fn x(self) -> u8 {
        XY[self.0 as usize].0
    }

    /// Row (0..9, `1`..`9`).
    #[inline]
    pub const fn y(self) -> u8 {
        XY[self.0 as usize].1
    }

    /// The single-bit mask of this cell.
    #[inline]
    pub const fn bit(self) -> u64 {
        1u64 << self.0
    }

    /// Distance to the Still Point (0..=4).
    #[inline]
    pub const fn ring(self) -> u8 {
        RING[self.0 as usize]
    }

    /// The point reflection of this cell through e5.
    #[inline]
    pub const fn echo(self) -> Cell {
        Cell(60 - self.0)
    }

    /// Whether the cell is one of the six corners.
    #[inline]
    pub const fn is_corner(self) -> bool {
        CORNERS & self.bit() != 0
    }

    /// Whether the cell is the Still Point, e5.
    #[inline]
    pub const fn is_still_point(self) -> bool {
        self.0 == STILL_POINT
    }

    /// Mask of the neighbouring cells.
    #[inline]
    pub const fn neighbours(self) -> u64 {
        NEIGHBOURS[self.0 as usize]
    }

    /// The corner's position in the token order a1, e1, i5, i9, e9, a5, if it is a corner.
    pub fn corner_slot(self) -> Option<usize> {
        CORNER_CELLS.iter().position(|&c| c == self.0)
    }

    /// The lower-case name, e.g. `c3`.
    pub fn name(self) -> String {
        let mut s = String::with_capacity(2);
        s.push((b'a' + self.x()) as char);
        s.push((b'1' + self.y()) as char);
        s
    }

    /// Parses a cell name (already lower case, no whitespace), e.g. `c3`.
    pub fn parse(text: &str) -> Option<Cell> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        let (c, r) = (bytes[0], bytes[1]);
        if !(b'a'..=b'i').contains(&c) || !(b'1'..=b'9').contains(&r) {
            return None;
        }
        Cell::from_xy((c - b'a') as i32, (r - b'1') as i32)
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name())
    }
}

const NONE: u8 = u8::MAX;

/// Mask of every cell.
pub const ALL: u64 = (1u64 << CELLS) - 1;

/// Corner cell indices in the token order of the position string: a1, e1, i5, i9, e9, a5.
pub const CORNER_CELLS: [u8; 6] = [
    INDEX[0][0],
    INDEX[0][4],
    INDEX[4][8],
    INDEX[8][8],
    INDEX[8][4],
    INDEX[4][0],
];

/// Mask of the six corners.
pub const CORNERS: u64 = {
    let mut m = 0u64;
    let mut i = 0;
    while i < 6 {
        m |= 1u64 << CORNER_CELLS[i];
        i += 1;
    }
    m
};

/// Cells where entering needs support: the corners and the Still Point.
pub const GUARDED: u64 = CORNERS | (1u64 << STILL_POINT);

/// Placement cells: rings 2-4 minus the corners (48 cells).
pub const PLACEMENT: u64 = {
    let mut m = 0u64;
    let mut i = 0;
    while i < CELLS {
        if RING[i] >= 2 {
            m |= 1u64 << i;
        }
        i += 1;
    }
    m & !CORNERS
};

/// `INDEX[y][x]`: the index of cell (x, y), or `NONE`.
const INDEX: [[u8; 9]; 9] = {
    let mut t = [[NONE; 9]; 9];
    let mut n = 0u8;
    let mut y = 0;
    while y < 9 {
        let mut x = 0;
        while x < 9 {
            let d = x as i32 - y as i32;
            if d >= -4 && d <= 4 {
                t[y][x] = n;
                n += 1;
            }
            x += 1;
        }
        y += 1;
    }
    t
};

/// `XY[i]`: the (x, y) coordinates of cell `i`.
const XY: [(u8, u8); CELLS] = {
    let mut t = [(0u8, 0u8); CELLS];
    let mut y = 0;
    while y < 9 {
        let mut x = 0;
        while x < 9 {
            if INDEX[y][x] != NONE {
                t[INDEX[y][x] as usize] = (x as u8, y as u8);
            }
            x += 1;
        }
        y += 1;
    }
    t
};

const fn abs(v: i32) -> i32 {
    if v < 0 {
        -v
    } else {
        v
    }
}

const fn max(a: i32, b: i32) -> i32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `RING[i]`: distance of cell `i` to e5.
const RING: [u8; CELLS] = {
    let mut t = [0u8; CELLS];
    let mut i = 0;
    while i < CELLS {
        let dx = XY[i].0 as i32 - 4;
        let dy = XY[i].1 as i32 - 4;
        t[i] = max(max(abs(dx), abs(dy)), abs(dy - dx)) as u8;
        i += 1;
    }
    t
};

/// `NEIGHBOURS[i]`: mask of the neighbours of cell `i`.
const NEIGHBOURS: [u64; CELLS] = {
    const OFFSETS: [(i32, i32); 6] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)];
    let mut t = [0u64; CELLS];
    let mut i = 0;
    while i < CELLS {
        let x = XY[i].0 as i32;
        let y = XY[i].1 as i32;
        let mut k = 0;
        while k < 6 {
            let nx = x + OFFSETS[k].0;
            let ny = y + OFFSETS[k].1;
            if nx >= 0 && ny >= 0 && nx < 9 && ny < 9 && INDEX[ny as usize][nx as usize] != NONE {
                t[i] |= 1u64 << INDEX[ny as usize][nx as usize];
            }
            k += 1;
        }
        i += 1;
    }
    t
};

/// Iterates over the cells of a mask, lowest index first.
#[inline]
pub fn cells(mut mask: u64) -> impl Iterator<Item = Cell> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let i = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            Some(Cell(i))
        }
    })
}

/// The cells of the board in position-string order: row 9 down to row 1, low x first.
pub fn display_order() -> impl Iterator<Item = Cell> {
    (0..9)
        .rev()
        .flat_map(|y| (0..9).filter_map(move |x| Cell::from_xy(x, y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_the_page() {
        let mut per_ring = [0; 5];
        for c in cells(ALL) {
            per_ring[c.ring() as usize] += 1;
            assert_eq!(Cell::parse(&c.name()), Some(c));
            let e = c.echo();
            assert_eq!((e.x(), e.y()), (8 - c.x(), 8 - c.y()));
        }
        assert_eq!(per_ring, [1, 6, 12, 18, 24]);
        assert_eq!(PLACEMENT.count_ones(), 48);
        assert_eq!(Cell(STILL_POINT).name(), "e5");
        let names: Vec<String> = CORNER_CELLS.iter().map(|&c| Cell(c).name()).collect();
        assert_eq!(names, ["a1", "e1", "i5", "i9", "e9", "a5"]);
        for &c in &CORNER_CELLS {
            assert_eq!(Cell(c).neighbours().count_ones(), 3);
        }
    }
}
