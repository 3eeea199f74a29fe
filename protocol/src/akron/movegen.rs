//! Moves: pinned balls, the drop chain, usable destinations and the group condition.

use super::connection::{Analysis, EMPTY};
use super::geometry::{MAX_POINTS, MAX_SIZE, NONE};
use super::{colour, Action, Akron};

/// The drop chain of a move: the point left, then the points of the balls that drop (each
/// into the point below it in the list). At most one point per level.
struct Chain {
    points: [u16; MAX_SIZE],
    len: usize,
}

impl Chain {
    #[inline]
    fn position(&self, p: usize) -> Option<usize> {
        self.points[..self.len]
            .iter()
            .position(|&q| q as usize == p)
    }

    #[inline]
    fn contains(&self, p: usize) -> bool {
        self.position(p).is_some()
    }

    /// The point whose ball occupies `p` after the drops (`None` when `p` is the top of the
    /// chain, which ends up empty).
    #[inline]
    fn source_after(&self, p: usize) -> Option<usize> {
        match self.position(p) {
            None => Some(p),
            Some(t) if t + 1 < self.len => Some(self.points[t + 1] as usize),
            Some(_) => None,
        }
    }
}

impl Akron {
    /// The chain of a ball at `f` that supports at most one ball (a supported ball can only
    /// support one ball itself: two would make the lower ball support two as well).
    fn chain(&self, f: usize) -> Chain {
        let mut chain = Chain {
            points: [0; MAX_SIZE],
            len: 1,
        };
        chain.points[0] = f as u16;
        let mut cur = f;
        while let Ok(Some(u)) = self.supported(cur) {
            if chain.len == MAX_SIZE {
                break;
            }
            chain.points[chain.len] = u as u16;
            chain.len += 1;
            cur = u;
        }
        chain
    }

    /// Whether `d` has all four supporters occupied and none of them in the chain (level 0
    /// always qualifies).
    #[inline]
    fn usable_after(&self, d: usize, chain: &Chain) -> bool {
        self.geo.below[d]
            .iter()
            .all(|&s| s == NONE || (self.cells[s as usize] != EMPTY && !chain.contains(s as usize)))
    }

    /// Whether `d` touches a ball of component `c` (other than the moving ball) once the
    /// chain has dropped.
    #[inline]
    fn touches_group_after(&self, an: &Analysis, d: usize, c: u16, chain: &Chain) -> bool {
        self.geo.touching(d).iter().any(|&h| {
            chain
                .source_after(h as usize)
                .is_some_and(|src| self.cells[src] != EMPTY && an.comp[src] == c)
        })
    }

    /// Calls `emit` with every legal move of the side to act until it returns false.
    pub(super) fn for_each_move(&self, an: &Analysis, emit: &mut dyn FnMut(Action) -> bool) {
        let me = colour(self.to_move);
        let geo = self.geo;
        // Destinations already considered for the current ball (bit per point; only the
        // words of this board are cleared).
        let words = geo.points.div_ceil(64);
        let mut seen = [0u64; MAX_POINTS.div_ceil(64)];
        for f in 0..geo.points {
            if self.cells[f] != me {
                continue;
            }
            let c = an.comp[f];
            if c == NONE {
                continue; // cut by the column rule: no connection, so no group
            }
            let members = an.members(c);
            if members.len() < 2 {
                continue;
            }
            if self.supported(f).is_err() {
                continue; // pinned
            }
            let chain = self.chain(f);
            let group_drops = chain.points[1..chain.len]
                .iter()
                .any(|&q| an.comp[q as usize] == c);
            seen[..words].fill(0);
            for &g in members {
                let g = g as usize;
                if g == f {
                    continue;
                }
                let g_stays = !group_drops || !chain.contains(g);
                for &d in geo.touching(g) {
                    let d = d as usize;
                    let bit = 1u64 << (d % 64);
                    if self.cells[d] != EMPTY || seen[d / 64] & bit != 0 {
                        continue;
                    }
                    // Whether d qualifies does not depend on which group ball found it.
                    seen[d / 64] |= bit;
                    if !self.usable_after(d, &chain) {
                        continue;
                    }
                    if !g_stays && !self.touches_group_after(an, d, c, &chain) {
                        continue;
                    }
                    if !emit(Action::Move {
                        from: f as u16,
                        to: d as u16,
                    }) {
                        return;
                    }
                }
            }
        }
    }

    /// Why moving the ball on `f` to `d` is illegal, checking the conditions one by one so
    /// the message names the first that fails (`Ok` when the move is legal).
    pub(super) fn move_problem(&self, an: &Analysis, f: usize, d: usize) -> Result<(), String> {
        let name = |p: usize| self.point_name(p).to_string();
        let me = colour(self.to_move);
        if self.cells[f] != me {
            return Err(format!("no ball of yours on {}", name(f)));
        }
        if let Err(count) = self.supported(f) {
            return Err(format!(
                "the ball on {} is pinned (it supports {count} balls)",
                name(f)
            ));
        }
        if d == f {
            return Err("a ball must move to another point".to_string());
        }
        if self.cells[d] != EMPTY {
            return Err(format!("{} is occupied", name(d)));
        }
        let chain = self.chain(f);
        for &s in &self.geo.below[d] {
            if s == NONE {
                continue;
            }
            let s = s as usize;
            if self.cells[s] == EMPTY {
                return Err(format!(
                    "{} cannot hold a ball: {} under it is empty",
                    name(d),
                    name(s)
                ));
            }
            if s == f {
                return Err(format!(
                    "{} would rest on {}, the point the ball leaves",
                    name(d),
                    name(s)
                ));
            }
            if chain.contains(s) {
                return Err(format!(
                    "{} would rest on {}, whose ball drops this turn",
                    name(d),
                    name(s)
                ));
            }
        }
        let c = an.comp[f];
        if c == NONE {
            return Err(format!(
                "the ball on {} is cut by a ball above it, so it has no group",
                name(f)
            ));
        }
        if an.members(c).len() < 2 {
            return Err(format!(
                "the ball on {} is not connected to any other ball of yours",
                name(f)
            ));
        }
        let touches_before = self
            .geo
            .touching(d)
            .iter()
            .any(|&h| h as usize != f && an.comp[h as usize] == c);
        if !touches_before {
            return Err(format!(
                "{} does not touch the group of the ball on {}",
                name(d),
                name(f)
            ));
        }
        if !self.touches_group_after(an, d, c, &chain) {
            return Err(format!(
                "{} no longer touches the group of the ball on {} once the balls above drop",
                name(d),
                name(f)
            ));
        }
        Ok(())
    }
}
