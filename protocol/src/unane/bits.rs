//! A 256-bit board set: one bit per cell of the largest (16x16) Ūnane board.
//!
//! Cell index = `rank * 16 + file` whatever the board size, so the four orthogonal steps are
//! fixed shifts (±1, ±16). A fixed stride keeps every operation branch-free; the cost is that
//! a step east from file `p` would wrap into file `a` of the next rank, which the file masks
//! below cut off. Bits outside the actual board are never set, because every set an engine
//! builds is masked by the stones themselves.

use std::ops::{BitAnd, BitOr, BitXor, Not};

/// Row stride of the index space (the maximum width).
pub(crate) const STRIDE: u8 = 16;

/// Every file except `a` (file index 0), in one 128-bit half.
const NOT_FILE_A: u128 = 0xFFFE_FFFE_FFFE_FFFE_FFFE_FFFE_FFFE_FFFE;
/// Every file except `p` (file index 15), in one 128-bit half.
const NOT_FILE_P: u128 = 0x7FFF_7FFF_7FFF_7FFF_7FFF_7FFF_7FFF_7FFF;

/// A set of cells. `lo` holds ranks 1..=8, `hi` ranks 9..=16.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Bits {
    lo: u128,
    hi: u128,
}

impl Bits {
    /// The empty set.
    pub(crate) const EMPTY: Bits = Bits { lo: 0, hi: 0 };

    /// The set holding only cell `index` (0..=255).
    #[inline]
    pub(crate) const fn cell(index: u8) -> Bits {
        if index < 128 {
            Bits {
                lo: 1 << index,
                hi: 0,
            }
        } else {
            Bits {
                lo: 0,
                hi: 1 << (index - 128),
            }
        }
    }

    /// Whether cell `index` is in the set.
    #[inline]
    pub(crate) const fn has(self, index: u8) -> bool {
        if index < 128 {
            self.lo >> index & 1 == 1
        } else {
            self.hi >> (index - 128) & 1 == 1
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub(crate) const fn is_empty(self) -> bool {
        self.lo == 0 && self.hi == 0
    }

    /// Number of cells in the set.
    #[inline]
    pub(crate) const fn count(self) -> u32 {
        self.lo.count_ones() + self.hi.count_ones()
    }

    /// The lowest cell index of a non-empty set.
    #[inline]
    pub(crate) const fn lowest(self) -> u8 {
        if self.lo != 0 {
            self.lo.trailing_zeros() as u8
        } else {
            128 + self.hi.trailing_zeros() as u8
        }
    }

    /// The cells of one rank (0-based) as 16 bits, file `a` lowest.
    #[inline]
    pub(crate) const fn rank(self, rank: u8) -> u16 {
        if rank < 8 {
            (self.lo >> (rank as u32 * 16)) as u16
        } else {
            (self.hi >> ((rank - 8) as u32 * 16)) as u16
        }
    }

    /// Every cell one rank up (towards higher ranks); the top rank falls off.
    #[inline]
    pub(crate) const fn north(self) -> Bits {
        Bits {
            lo: self.lo << 16,
            hi: (self.hi << 16) | (self.lo >> 112),
        }
    }

    /// Every cell one rank down; rank 1 falls off.
    #[inline]
    pub(crate) const fn south(self) -> Bits {
        Bits {
            lo: (self.lo >> 16) | (self.hi << 112),
            hi: self.hi >> 16,
        }
    }

    /// Every cell one file right; file `p` does not wrap into the next rank.
    #[inline]
    pub(crate) const fn east(self) -> Bits {
        Bits {
            lo: (self.lo << 1) & NOT_FILE_A,
            hi: ((self.hi << 1) | (self.lo >> 127)) & NOT_FILE_A,
        }
    }

    /// Every cell one file left; file `a` does not wrap into the previous rank.
    #[inline]
    pub(crate) const fn west(self) -> Bits {
        Bits {
            lo: ((self.lo >> 1) | (self.hi << 127)) & NOT_FILE_P,
            hi: (self.hi >> 1) & NOT_FILE_P,
        }
    }

    /// Every cell orthogonally adjacent to some cell of the set (the set itself excluded
    /// only where no member is adjacent to it).
    #[inline]
    pub(crate) const fn neighbours(self) -> Bits {
        let n = self.north();
        let s = self.south();
        let e = self.east();
        let w = self.west();
        Bits {
            lo: n.lo | s.lo | e.lo | w.lo,
            hi: n.hi | s.hi | e.hi | w.hi,
        }
    }

    /// The orthogonally connected component of `self` that contains `seed` (a subset of
    /// `self`), by flood fill.
    #[inline]
    pub(crate) fn flood(self, seed: Bits) -> Bits {
        let mut fill = seed;
        loop {
            let next = (fill | fill.neighbours()) & self;
            if next == fill {
                return fill;
            }
            fill = next;
        }
    }

    /// Whether the set is exactly one orthogonally connected group (false when empty).
    #[inline]
    pub(crate) fn is_one_group(self) -> bool {
        !self.is_empty() && self.flood(Bits::cell(self.lowest())) == self
    }

    /// Number of orthogonally connected groups.
    ///
    /// Why not a flood fill per group: this runs for every move's diff (the view shows each
    /// side's group count), and on a big board the floods were a quarter of the move. Here
    /// each rank's runs of stones are joined to the overlapping runs of the rank below
    /// (union–find), in one pass over the ranks.
    pub(crate) fn groups(self) -> u32 {
        // At most 8 runs in a rank of 16 cells, 16 ranks: run ids fit in a byte.
        let mut parent = [0u8; 128];
        fn root(parent: &mut [u8; 128], mut i: u8) -> u8 {
            while parent[i as usize] != i {
                parent[i as usize] = parent[parent[i as usize] as usize];
                i = parent[i as usize];
            }
            i
        }
        let (mut runs, mut joins) = (0u32, 0u32);
        let mut below = [(0u16, 0u8); 8];
        let mut below_len = 0;
        // Only the ranks up to the highest stone (on 8x7 at most 7 of the 16).
        let top = if self.hi != 0 {
            16 - (self.hi.leading_zeros() / 16) as u8
        } else {
            8 - (self.lo.leading_zeros() / 16) as u8
        };
        for rank in 0..top {
            let mut row = self.rank(rank);
            let mut here = [(0u16, 0u8); 8];
            let mut here_len = 0;
            while row != 0 {
                let start = row.trailing_zeros();
                let len = (row >> start).trailing_ones();
                let run = if len >= 16 {
                    u16::MAX
                } else {
                    ((1u16 << len) - 1) << start
                };
                row &= !run;
                let id = runs as u8;
                parent[id as usize] = id;
                runs += 1;
                for &(other, other_id) in &below[..below_len] {
                    if other & run != 0 {
                        let (a, b) = (root(&mut parent, id), root(&mut parent, other_id));
                        if a != b {
                            parent[a as usize] = b;
                            joins += 1;
                        }
                    }
                }
                here[here_len] = (run, id);
                here_len += 1;
            }
            below = here;
            below_len = here_len;
        }
        runs - joins
    }

    /// The cells of the set, lowest index first.
    #[inline]
    pub(crate) fn iter(self) -> BitsIter {
        BitsIter(self)
    }
}

/// Iterator over the cell indices of a [`Bits`], lowest first.
pub(crate) struct BitsIter(Bits);

impl Iterator for BitsIter {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let b = &mut self.0;
        if b.lo != 0 {
            let i = b.lo.trailing_zeros() as u8;
            b.lo &= b.lo - 1;
            Some(i)
        } else if b.hi != 0 {
            let i = b.hi.trailing_zeros() as u8;
            b.hi &= b.hi - 1;
            Some(128 + i)
        } else {
            None
        }
    }
}

impl BitAnd for Bits {
    type Output = Bits;
    #[inline]
    fn bitand(self, o: Bits) -> Bits {
        Bits {
            lo: self.lo & o.lo,
            hi: self.hi & o.hi,
        }
    }
}

impl BitOr for Bits {
    type Output = Bits;
    #[inline]
    fn bitor(self, o: Bits) -> Bits {
        Bits {
            lo: self.lo | o.lo,
            hi: self.hi | o.hi,
        }
    }
}

impl BitXor for Bits {
    type Output = Bits;
    #[inline]
    fn bitxor(self, o: Bits) -> Bits {
        Bits {
            lo: self.lo ^ o.lo,
            hi: self.hi ^ o.hi,
        }
    }
}

impl Not for Bits {
    type Output = Bits;
    #[inline]
    fn not(self) -> Bits {
        Bits {
            lo: !self.lo,
            hi: !self.hi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(width: u8, height: u8) -> Bits {
        let mut b = Bits::EMPTY;
        for r in 0..height {
            for f in 0..width {
                b = b | Bits::cell(r * STRIDE + f);
            }
        }
        b
    }

    #[test]
    fn steps_do_not_wrap_between_ranks() {
        // p1 (index 15) east would be a2 (16) without the mask.
        assert!(Bits::cell(15).east().is_empty());
        // a2 (16) west would be p1 (15).
        assert!(Bits::cell(16).west().is_empty());
        // Across the 128-bit halves: rank 8 -> rank 9 and back.
        assert_eq!(Bits::cell(7 * 16 + 3).north(), Bits::cell(8 * 16 + 3));
        assert_eq!(Bits::cell(8 * 16 + 3).south(), Bits::cell(7 * 16 + 3));
        assert_eq!(Bits::cell(127).west(), Bits::cell(126));
        assert!(Bits::cell(127).east().is_empty());
        assert_eq!(Bits::cell(128).east(), Bits::cell(129));
        assert!(Bits::cell(128).west().is_empty());
        assert!(Bits::cell(255).north().is_empty());
        assert!(Bits::cell(3).south().is_empty());
    }

    /// The groups counted the slow, obvious way: a flood fill per group.
    fn groups_by_flood(b: Bits) -> u32 {
        let mut rest = b;
        let mut n = 0;
        while !rest.is_empty() {
            rest = rest & !rest.flood(Bits::cell(rest.lowest()));
            n += 1;
        }
        n
    }

    /// A small seeded generator (xorshift64) for the random sets below.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn a_changed_group_count_is_found_from_the_changed_cells() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            // A random side's stones on an 8x7 board, then one or two cells flipped (a
            // removal, a stone taken, a capture's step, or any other pair).
            let mut was = Bits::EMPTY;
            let density = next() % 4;
            for r in 0..7u8 {
                for f in 0..8u8 {
                    if next() % 4 <= density {
                        was = was | Bits::cell(r * STRIDE + f);
                    }
                }
            }
            let mut now = was;
            for _ in 0..1 + next() % 2 {
                let cell = Bits::cell((next() % 7) as u8 * STRIDE + (next() % 8) as u8);
                now = if (now & cell).is_empty() {
                    now | cell
                } else {
                    now & !cell
                };
            }
            let expected = (now.groups() != was.groups()).then(|| now.groups());
            assert_eq!(
                crate::unane::groups::changed_groups(now, was),
                expected,
                "{was:?} -> {now:?}"
            );
            if let Some(delta) = crate::unane::groups::group_change(now, was) {
                assert_eq!(
                    i64::from(delta),
                    i64::from(now.groups()) - i64::from(was.groups()),
                    "{was:?} -> {now:?}"
                );
            }
        }
    }

    /// A random set over the whole 16x16 area, each cell in it with odds `density` in 16.
    fn random_set(next: &mut impl FnMut() -> u64, density: u64) -> Bits {
        let mut b = Bits::EMPTY;
        for index in 0..=255u8 {
            if next() % 16 < density {
                b = b | Bits::cell(index);
            }
        }
        b
    }

    #[test]
    fn a_group_change_found_around_the_changed_cells_is_exact_on_big_boards() {
        let mut next = xorshift(0xD1B5_4A32_D192_ED03);
        let (mut found, mut left) = (0, 0);
        for round in 0..20_000u64 {
            // Any density on a 16x16 board, then one to three cells flipped.
            let was = random_set(&mut next, round % 16);
            let mut now = was;
            for _ in 0..1 + next() % 3 {
                let cell = Bits::cell((next() % 256) as u8);
                now = if (now & cell).is_empty() {
                    now | cell
                } else {
                    now & !cell
                };
            }
            match crate::unane::groups::group_change(now, was) {
                Some(delta) => {
                    found += 1;
                    assert_eq!(
                        i64::from(delta),
                        i64::from(now.groups()) - i64::from(was.groups()),
                        "{was:?} -> {now:?}"
                    );
                }
                None => left += 1,
            }
        }
        // Most changes are told around the cells; some are left to a full count.
        assert!(found > left, "{found} found, {left} left to a count");
    }

    #[test]
    fn groups_agree_with_a_flood_fill_on_random_sets() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..3_000u64 {
            // Densities from sparse to nearly full, over the whole 16x16 area.
            let b = random_set(&mut next, round % 16);
            assert_eq!(b.groups(), groups_by_flood(b), "{b:?}");
        }
        // A spiral (one group winding through every rank) and a checkerboard (128 groups).
        let mut checker = Bits::EMPTY;
        for index in 0..=255u8 {
            if (index / 16 + index % 16) % 2 == 0 {
                checker = checker | Bits::cell(index);
            }
        }
        assert_eq!(checker.groups(), 128);
        let comb = board(16, 16) & !checker | board(1, 16);
        assert_eq!(comb.groups(), groups_by_flood(comb));
    }

    #[test]
    fn groups_and_iteration() {
        let s = Bits::cell(0) | Bits::cell(1) | Bits::cell(17) | Bits::cell(200) | Bits::cell(3);
        assert_eq!(s.groups(), 3);
        assert!(!s.is_one_group());
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 1, 3, 17, 200]);
        assert_eq!(s.count(), 5);
        assert!(board(16, 16).is_one_group());
        assert_eq!(board(16, 16).count(), 256);
        assert!(!Bits::EMPTY.is_one_group());
    }
}
