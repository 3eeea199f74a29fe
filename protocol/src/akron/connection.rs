//! Connections: the column rule, the crossing rule and the connection graph's components.
//!
//! One pass computes everything the rules need from a board: which balls are cut, which
//! same-level links hold, the components of the connection graph (used both for the group
//! condition of moves and for the edge-to-edge connection test).

use std::cell::RefCell;

use super::geometry::{Geometry, MAX_LINKS, MAX_POINTS, NONE};

/// Empty point.
pub const EMPTY: u8 = 0;

/// The connection structure of one board. The buffers are sized for the largest board but
/// only the first `points` / `links` entries of the current board are written and read, and
/// one analysis per thread is reused (see [`Analysis::with`]), so small boards pay for small
/// boards and nothing is allocated on the hot paths.
pub struct Analysis {
    /// Column rule: the ball is cut (a ball of the other colour is the topmost one on its
    /// plan point).
    pub cut: Vec<bool>,
    /// The link joins an uncut same-colour pair that no higher pair of the other colour
    /// crosses.
    pub linked: Vec<bool>,
    /// Component of every uncut ball, `NONE` for empty points and cut balls.
    pub comp: Vec<u16>,
    /// Balls grouped by component: component c is `order[start[c]..start[c + 1]]`.
    pub order: Vec<u16>,
    /// Start of each component in `order` (one extra entry closes the last one).
    pub start: Vec<u16>,
    /// Number of components.
    pub comps: usize,
    /// Whether vert (index 0) and horz (index 1) are connected edge to edge.
    pub connected: [bool; 2],
    /// Colour of the topmost ball on each point's plan column (scratch).
    top: Vec<u8>,
    /// Colour of the highest pair at each link's midpoint, from this level up (scratch).
    link_top: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Analysis> = RefCell::new(Analysis::blank());
}

impl Analysis {
    fn blank() -> Analysis {
        Analysis {
            cut: vec![false; MAX_POINTS],
            linked: vec![false; MAX_LINKS],
            comp: vec![NONE; MAX_POINTS],
            order: vec![0; MAX_POINTS],
            start: vec![0; MAX_POINTS + 1],
            comps: 0,
            connected: [false; 2],
            top: vec![EMPTY; MAX_POINTS],
            link_top: vec![EMPTY; MAX_LINKS],
        }
    }

    /// The balls of component `c`.
    #[inline]
    pub fn members(&self, c: u16) -> &[u16] {
        &self.order[self.start[c as usize] as usize..self.start[c as usize + 1] as usize]
    }

    /// Analyses a board (`cells[p]` is `EMPTY`, 1 for vert or 2 for horz) and passes the
    /// result to `f`, reusing this thread's buffers (fresh ones if they are in use).
    pub fn with<R>(geo: &Geometry, cells: &[u8], f: impl FnOnce(&Analysis) -> R) -> R {
        let mut f = Some(f);
        let reused = SCRATCH.with(|scratch| {
            let mut a = scratch.try_borrow_mut().ok()?;
            a.compute(geo, cells);
            f.take().map(|f| f(&a))
        });
        match (reused, f) {
            (Some(r), _) => r,
            (None, Some(f)) => {
                let mut a = Analysis::blank();
                a.compute(geo, cells);
                f(&a)
            }
            (None, None) => unreachable!("the closure runs exactly once"),
        }
    }

    fn compute(&mut self, geo: &Geometry, cells: &[u8]) {
        self.column_rule(geo, cells);
        self.crossing_rule(geo, cells);
        self.components(geo, cells);
    }

    /// Column rule. Higher levels have higher indices, so walking down fills the colour of
    /// the topmost ball above each point before the point itself is reached. An empty point
    /// has nothing above it (every raised ball is fully supported).
    #[inline]
    fn column_rule(&mut self, geo: &Geometry, cells: &[u8]) {
        for p in (0..geo.points).rev() {
            let c = cells[p];
            if c == EMPTY {
                self.top[p] = EMPTY;
                self.cut[p] = false;
                continue;
            }
            let u = geo.up2[p];
            let t = if u != NONE && self.top[u as usize] != EMPTY {
                self.top[u as usize]
            } else {
                c
            };
            self.top[p] = t;
            self.cut[p] = t != c;
        }
    }

    /// Crossing rule: the highest pair at a midpoint decides its colour; links are numbered
    /// lowest level first, so walking down sees the upper link of a midpoint first.
    #[inline]
    fn crossing_rule(&mut self, geo: &Geometry, cells: &[u8]) {
        for e in (0..geo.link_ends.len()).rev() {
            let (a, b) = geo.link_ends[e];
            let (a, b) = (a as usize, b as usize);
            let pair = if cells[a] != EMPTY && cells[a] == cells[b] && !self.cut[a] && !self.cut[b]
            {
                cells[a]
            } else {
                EMPTY
            };
            let u = geo.link_up[e];
            let t = if u != NONE && self.link_top[u as usize] != EMPTY {
                self.link_top[u as usize]
            } else {
                pair
            };
            self.link_top[e] = t;
            self.linked[e] = pair != EMPTY && t == pair;
        }
    }

    /// Components of the connection graph, each filled from its first uncut ball, and
    /// whether a component joins a colour's two edges.
    #[inline]
    fn components(&mut self, geo: &Geometry, cells: &[u8]) {
        self.comp[..geo.points].fill(NONE);
        self.connected = [false; 2];
        let mut filled = 0usize;
        let mut comps = 0usize;
        for s in 0..geo.points {
            let colour = cells[s];
            if colour == EMPTY || self.cut[s] || self.comp[s] != NONE {
                continue;
            }
            self.start[comps] = filled as u16;
            let (end, both_edges) = self.fill(geo, cells, s, comps as u16, filled);
            filled = end;
            if both_edges {
                self.connected[colour as usize - 1] = true;
            }
            comps += 1;
        }
        self.start[comps] = filled as u16;
        self.comps = comps;
    }

    /// Flood-fills component `comp` from ball `s`, writing its members straight into
    /// `order` from `first` on (the slice doubles as the work queue). Returns the end of
    /// the component in `order` and whether it touches both of its colour's edges.
    #[inline]
    fn fill(
        &mut self,
        geo: &Geometry,
        cells: &[u8],
        s: usize,
        comp: u16,
        first: usize,
    ) -> (usize, bool) {
        let n = geo.n;
        let colour = cells[s];
        self.comp[s] = comp;
        self.order[first] = s as u16;
        let mut filled = first + 1;
        let mut read = first;
        let (mut low_edge, mut high_edge) = (false, false);
        while read < filled {
            let p = self.order[read] as usize;
            read += 1;
            if p < n * n {
                // Level 0: vert joins rows 0 and n-1, horz columns 0 and n-1.
                let (i, j) = (p % n, p / n);
                let along = if colour == 1 { j } else { i };
                low_edge |= along == 0;
                high_edge |= along == n - 1;
            }
            for &e in &geo.point_links[p] {
                if e == NONE {
                    break;
                }
                if !self.linked[e as usize] {
                    continue;
                }
                let (a, b) = geo.link_ends[e as usize];
                let q = if a as usize == p { b } else { a } as usize;
                if self.comp[q] == NONE {
                    self.comp[q] = comp;
                    self.order[filled] = q as u16;
                    filled += 1;
                }
            }
            for &q in geo.below[p].iter().chain(&geo.above[p]) {
                if q == NONE {
                    continue;
                }
                let q = q as usize;
                if cells[q] == colour && !self.cut[q] && self.comp[q] == NONE {
                    self.comp[q] = comp;
                    self.order[filled] = q as u16;
                    filled += 1;
                }
            }
        }
        (filled, low_edge && high_edge)
    }
}
