//! A side's group count after a move, told around the changed cells instead of counted.

use super::bits::Bits;

/// A side's group count when it differs between `was` and `now`, else `None` (what the
/// diff shows, counted without a kept count).
#[cfg(test)]
pub(crate) fn changed_groups(now: Bits, was: Bits) -> Option<u32> {
    match group_change(now, was) {
        Some(delta) => (delta != 0).then(|| now.groups()),
        None => {
            let groups = now.groups();
            (groups != was.groups()).then_some(groups)
        }
    }
}

/// How much a side's group count moved between `was` and `now` (its stones before and
/// after a move), found around the changed cells; `None` when that would take a long
/// flood (see [`distinct_groups`]): only a full count tells then.
///
/// Why: a move changes a side's stones by a cell or two (a capture moves a stone one step
/// and takes the stone there, a removal takes one off), and each such change is decided
/// by the groups around it. A stone added next to none of its colour makes a group, next
/// to stones of k groups joins them (k − 1 fewer); a stone taken with no neighbour of its
/// colour ends its group, with neighbours in k groups once it is gone leaves k (k − 1
/// more). With the count before kept ([`Unane::groups_kept`]) most moves' counts are found
/// without counting, which on a 16x15 board costs 6,400 instructions a move.
pub(crate) fn group_change(now: Bits, was: Bits) -> Option<i32> {
    let (added, taken) = (now & !was, was & !now);
    let mut set = was;
    let mut delta = 0i32;
    // Additions first: a captured cell next to the stone that took it is then added
    // while that stone still stands, so the step stays a join of one group.
    for (cells, adding) in [(added, true), (taken, false)] {
        for cell in cells.iter() {
            let c = Bits::cell(cell);
            let rest = if adding { set } else { set & !c };
            // A stone added joins the groups around it into one (with itself); a stone
            // taken leaves the groups around it apart (or ends its own, alone).
            let around = distinct_groups(rest, c.neighbours() & rest)?;
            delta += if adding { 1 - around } else { around - 1 };
            set = if adding { set | c } else { rest };
        }
    }
    Some(delta)
}

/// How far a flood from one neighbour goes before the change is left to a full count.
const FLOOD_STEPS: u32 = 16;

/// How many groups of `set` the cells `cells` (a stone's neighbours in `set`) belong to;
/// `None` when telling would take a flood longer than [`FLOOD_STEPS`] steps. Neighbours
/// joined by a short path (a stone closing a square) are found at once; separate small
/// groups stop growing soon.
fn distinct_groups(set: Bits, mut cells: Bits) -> Option<i32> {
    let mut groups = 0;
    if cells.count() < 2 {
        return Some(cells.count() as i32);
    }
    while !cells.is_empty() {
        let mut fill = Bits::cell(cells.lowest());
        let mut steps = 0;
        loop {
            if (cells & !fill).is_empty() {
                cells = Bits::EMPTY;
                break;
            }
            let next = (fill | fill.neighbours()) & set;
            if next == fill {
                cells = cells & !fill;
                break;
            }
            fill = next;
            steps += 1;
            if steps > FLOOD_STEPS {
                return None;
            }
        }
        groups += 1;
    }
    Some(groups)
}
