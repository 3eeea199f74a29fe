//! What a move changes in Ūnane's view: the cells, the counts and the swap, as the
//! members of a diff.

use serde_json::Value;

use super::bits::STRIDE;
use super::groups::group_change;
use super::notation::Cell;
use super::{Unane, COLOURS, GROUPS_UNKNOWN};
use crate::game::Side;

impl Unane {
    /// A side's colour name, as the view and the messages show it.
    pub(super) fn colour(side: Side) -> &'static str {
        COLOURS[side.index()]
    }

    /// The view's changed members since `before` ([`Game::view_changes`]), and each side's
    /// group count after them where known (what [`Unane::groups_kept`] keeps).
    #[allow(clippy::type_complexity)]
    pub(super) fn changes(&self, before: &Self) -> Option<(Vec<(String, Value)>, [u8; 2])> {
        if (self.width, self.height) != (before.width, before.height) {
            return None;
        }
        // Only the cells whose stone changed (a placement and its captures), in the view's
        // order: rows from the top rank down, files left to right (each rank's bits read
        // lowest file first, so nothing is collected or sorted).
        let changed = (self.stones[0] ^ before.stones[0]) | (self.stones[1] ^ before.stones[1]);
        // The changed cells, then at most two stone counts, two group counts and the swap.
        let mut out = Vec::with_capacity(changed.count() as usize + 5);
        for rank in (0..self.height).rev() {
            let mut bits = changed.rank(rank);
            while bits != 0 {
                let file = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                let row = self.height - 1 - rank;
                let value = self
                    .stone(Cell::from_index(rank * STRIDE + file))
                    .map_or(Value::Null, |s| Value::from(Self::colour(s)));
                out.push((crate::pointer!("rows", row, file), value));
            }
        }
        for (side, name) in [(Side::First, "black"), (Side::Second, "white")] {
            let (now, was) = (self.stones[side.index()], before.stones[side.index()]);
            if now == was {
                continue;
            }
            if now.count() != was.count() {
                out.push((crate::pointer!("stones", name), Value::from(now.count())));
            }
        }
        let mut kept = [GROUPS_UNKNOWN; 2];
        for (side, name) in [(Side::First, "black"), (Side::Second, "white")] {
            let i = side.index();
            let (now, was) = (self.stones[i], before.stones[i]);
            let known = before.groups_kept[i];
            if now == was {
                kept[i] = known;
                continue;
            }
            let (shown, count) = match (group_change(now, was), known) {
                // The same count as before, whatever it was.
                (Some(0), _) => (None, u32::from(known)),
                // A known change to a known count.
                (Some(delta), known) if known != GROUPS_UNKNOWN => {
                    let count = (i32::from(known) + delta) as u32;
                    (Some(count), count)
                }
                (Some(_), _) => {
                    let count = now.groups();
                    (Some(count), count)
                }
                // Not told around the cells (a long flood): counted, and compared with the
                // count before.
                (None, known) => {
                    let count = now.groups();
                    let before = match known {
                        GROUPS_UNKNOWN => was.groups(),
                        known => u32::from(known),
                    };
                    ((count != before).then_some(count), count)
                }
            };
            if let Some(groups) = shown {
                out.push((crate::pointer!("groups", name), Value::from(groups)));
            }
            kept[i] = u8::try_from(count).unwrap_or(GROUPS_UNKNOWN);
        }
        if self.swap_available() != before.swap_available() {
            out.push(("/swap_available".into(), Value::from(self.swap_available())));
        }
        Some((out, kept))
    }
}
