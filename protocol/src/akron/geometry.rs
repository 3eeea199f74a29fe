//! Board geometry of Akron: every point on every level, what touches what, the plan columns
//! used by the over/under rule, and the same-level links crossed by higher ones.
//!
//! The tables depend only on the board size, so they are built once per size and shared by
//! every game of that size (`&'static`), which keeps game states small and cheap to clone.

use std::sync::OnceLock;

/// Smallest board size.
pub const MIN_SIZE: usize = 3;
/// Largest board size.
pub const MAX_SIZE: usize = 16;
/// Number of points of the largest board over all levels (sum of m² for m in 1..=16).
pub const MAX_POINTS: usize = 1496;
/// Number of same-level links of the largest board (sum of 2m(m-1) for m in 1..=16).
pub const MAX_LINKS: usize = 2720;
/// "No point" / "no link" marker in the `u16` tables.
pub const NONE: u16 = u16::MAX;

/// Geometry tables of one board size. Points are numbered by level, then row, then column,
/// which is also the order the position string lists balls in.
pub struct Geometry {
    /// Board size n (level 0 is n x n).
    pub n: usize,
    /// Number of points over all levels.
    pub points: usize,
    /// Index of the first point of each level.
    pub offset: [usize; MAX_SIZE + 1],
    /// (level, column, row) of every point.
    pub coord: Vec<(u8, u8, u8)>,
    /// The four supporters (level k-1), all `NONE` on level 0.
    pub below: Vec<[u16; 4]>,
    /// The up to four points of level k+1 this point supports, `NONE`-padded.
    pub above: Vec<[u16; 4]>,
    /// Every point that touches this one (neighbours, supporters, supported points).
    pub touch: Vec<[u16; 12]>,
    /// How many entries of `touch` are used.
    pub touch_len: Vec<u8>,
    /// The point two levels up on the same plan point, or `NONE`.
    pub up2: Vec<u16>,
    /// The two ends of every same-level link (numbered by level, lowest first).
    pub link_ends: Vec<(u16, u16)>,
    /// The link one level up with the same plan midpoint (it crosses this one), or `NONE`.
    pub link_up: Vec<u16>,
    /// The links of every point, `NONE`-padded.
    pub point_links: Vec<[u16; 4]>,
    /// Zobrist keys per point and colour (index 0 vert, 1 horz).
    pub zobrist: Vec<[u64; 2]>,
    /// Zobrist key of "horz to act".
    pub side_key: u64,
    /// Canonical names of every point (`D4'`).
    pub names: Vec<String>,
}

impl Geometry {
    /// The shared tables for a size in `MIN_SIZE..=MAX_SIZE` (panics otherwise: callers
    /// validate sizes first).
    pub fn get(n: usize) -> &'static Geometry {
        static TABLES: [OnceLock<Geometry>; MAX_SIZE - MIN_SIZE + 1] =
            [const { OnceLock::new() }; MAX_SIZE - MIN_SIZE + 1];
        TABLES[n - MIN_SIZE].get_or_init(|| Geometry::build(n))
    }

    /// Index of point (k, i, j); the caller guarantees it exists.
    #[inline]
    pub fn index(&self, k: usize, i: usize, j: usize) -> usize {
        self.offset[k] + j * (self.n - k) + i
    }

    /// Index of point (k, i, j) if it exists on this board.
    pub fn checked_index(&self, k: usize, i: usize, j: usize) -> Option<usize> {
        if k < self.n && i < self.n - k && j < self.n - k {
            Some(self.index(k, i, j))
        } else {
            None
        }
    }

    /// Level of a point.
    #[inline]
    pub fn level(&self, p: usize) -> usize {
        self.coord[p].0 as usize
    }

    /// Number of level-0 holes.
    #[inline]
    pub fn holes(&self) -> usize {
        self.n * self.n
    }

    /// The points touching `p`.
    #[inline]
    pub fn touching(&self, p: usize) -> &[u16] {
        &self.touch[p][..self.touch_len[p] as usize]
    }

    /// The tables of a board of size `n`.
    fn build(n: usize) -> Geometry {
        let mut offset = [0usize; MAX_SIZE + 1];
        for k in 0..n {
            offset[k + 1] = offset[k] + (n - k) * (n - k);
        }
        let points = offset[n];
        let mut coord = Vec::with_capacity(points);
        for k in 0..n {
            for j in 0..n - k {
                for i in 0..n - k {
                    coord.push((k as u8, i as u8, j as u8));
                }
            }
        }
        let Around {
            nbr,
            below,
            above,
            up2,
        } = Around::of(n, &offset, &coord);
        let (touch, touch_len) = touch_tables(&nbr, &below, &above);
        let (link_ends, link_up, point_links) = link_tables(n, &offset, points);
        let (zobrist, side_key) = zobrist_keys(n, points);
        let names = coord
            .iter()
            .map(|&(k, i, j)| point_name(k as usize, i as usize, j as usize))
            .collect();

        Geometry {
            n,
            points,
            offset,
            coord,
            below,
            above,
            touch,
            touch_len,
            up2,
            link_ends,
            link_up,
            point_links,
            zobrist,
            side_key,
            names,
        }
    }
}

/// The neighbours of every point: on its level, below, above, and two levels up.
struct Around {
    nbr: Vec<[u16; 4]>,
    below: Vec<[u16; 4]>,
    above: Vec<[u16; 4]>,
    up2: Vec<u16>,
}

impl Around {
    /// The neighbours of the points `coord` of a size-`n` board laid out by `offset`.
    fn of(n: usize, offset: &[usize; MAX_SIZE + 1], coord: &[(u8, u8, u8)]) -> Around {
        let points = coord.len();
        let idx = |k: usize, i: usize, j: usize| offset[k] + j * (n - k) + i;
        let mut nbr = vec![[NONE; 4]; points];
        let mut below = vec![[NONE; 4]; points];
        let mut above = vec![[NONE; 4]; points];
        let mut up2 = vec![NONE; points];
        for (p, &(k, i, j)) in coord.iter().enumerate() {
            let (k, i, j) = (k as isize, i as isize, j as isize);
            let m = n as isize - k;
            let inside = |m: isize, i: isize, j: isize| i >= 0 && j >= 0 && i < m && j < m;
            let mut c = 0;
            for (di, dj) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                if inside(m, i + di, j + dj) {
                    nbr[p][c] = idx(k as usize, (i + di) as usize, (j + dj) as usize) as u16;
                    c += 1;
                }
            }
            if k > 0 {
                let mut c = 0;
                for b in 0..2 {
                    for a in 0..2 {
                        below[p][c] =
                            idx(k as usize - 1, (i + a) as usize, (j + b) as usize) as u16;
                        c += 1;
                    }
                }
            }
            let mut c = 0;
            for b in 0..2 {
                for a in 0..2 {
                    if inside(m - 1, i - a, j - b) {
                        above[p][c] =
                            idx(k as usize + 1, (i - a) as usize, (j - b) as usize) as u16;
                        c += 1;
                    }
                }
            }
            if inside(m - 2, i - 1, j - 1) {
                up2[p] = idx(k as usize + 2, (i - 1) as usize, (j - 1) as usize) as u16;
            }
        }
        Around {
            nbr,
            below,
            above,
            up2,
        }
    }
}

/// The points touching each point (neighbours, supporters, supported), `NONE`-padded,
/// and how many there are.
#[allow(clippy::type_complexity)]
fn touch_tables(
    nbr: &[[u16; 4]],
    below: &[[u16; 4]],
    above: &[[u16; 4]],
) -> (Vec<[u16; 12]>, Vec<u8>) {
    let points = nbr.len();
    let mut touch = vec![[NONE; 12]; points];
    let mut touch_len = vec![0u8; points];
    for p in 0..points {
        let mut c = 0;
        for &q in nbr[p].iter().chain(&below[p]).chain(&above[p]) {
            if q != NONE {
                touch[p][c] = q;
                c += 1;
            }
        }
        touch_len[p] = c as u8;
    }
    (touch, touch_len)
}

/// The links of a size-`n` board: their ends, the link crossing each one from a level
/// up, and the links of every point.
#[allow(clippy::type_complexity)]
fn link_tables(
    n: usize,
    offset: &[usize; MAX_SIZE + 1],
    points: usize,
) -> (Vec<(u16, u16)>, Vec<u16>, Vec<[u16; 4]>) {
    let idx = |k: usize, i: usize, j: usize| offset[k] + j * (n - k) + i;
    // Links, level by level so that a link's crossing partner (one level up) has a
    // higher number: the over/under pass walks them from the top down.
    let mut link_ends = Vec::new();
    let mut link_id = std::collections::HashMap::new();
    for k in 0..n {
        let m = n - k;
        for j in 0..m {
            for i in 0..m {
                if i + 1 < m {
                    link_id.insert((k, i, j, 0u8), link_ends.len());
                    link_ends.push((idx(k, i, j) as u16, idx(k, i + 1, j) as u16));
                }
                if j + 1 < m {
                    link_id.insert((k, i, j, 1u8), link_ends.len());
                    link_ends.push((idx(k, i, j) as u16, idx(k, i, j + 1) as u16));
                }
            }
        }
    }
    let mut link_up = vec![NONE; link_ends.len()];
    let mut point_links = vec![[NONE; 4]; points];
    for (&(k, i, j, dir), &e) in &link_id {
        // A horizontal link (k,i,j)-(k,i+1,j) has plan midpoint (2i+1+k, 2j+k); the
        // vertical link (k+1,i,j-1)-(k+1,i,j) has the same one. Symmetrically for a
        // vertical link and the horizontal (k+1,i-1,j)-(k+1,i,j).
        let up = if dir == 0 {
            j.checked_sub(1)
                .and_then(|j1| link_id.get(&(k + 1, i, j1, 1u8)))
        } else {
            i.checked_sub(1)
                .and_then(|i1| link_id.get(&(k + 1, i1, j, 0u8)))
        };
        if let Some(&u) = up {
            link_up[e] = u as u16;
        }
    }
    for (e, &(a, b)) in link_ends.iter().enumerate() {
        for p in [a, b] {
            let slot = point_links[p as usize].iter().position(|&x| x == NONE);
            if let Some(s) = slot {
                point_links[p as usize][s] = e as u16;
            }
        }
    }
    (link_ends, link_up, point_links)
}

/// The Zobrist keys of every point's two colours and of the side to act.
fn zobrist_keys(n: usize, points: usize) -> (Vec<[u64; 2]>, u64) {
    // Deterministic Zobrist keys (splitmix64), distinct per size.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (n as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut next = || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let zobrist = (0..points).map(|_| [next(), next()]).collect();
    let side_key = next();
    (zobrist, side_key)
}

/// The name of point (k, i, j): column letter, j + k + 1, then k apostrophes.
pub fn point_name(k: usize, i: usize, j: usize) -> String {
    let mut s = String::with_capacity(4 + k);
    s.push((b'A' + i as u8) as char);
    s.push_str(&(j + k + 1).to_string());
    for _ in 0..k {
        s.push('\'');
    }
    s
}
