//! Why an action is illegal in a Ūnane position, in words for the player.

use super::bits::Bits;
use super::notation::{Action, Cell};
use super::Unane;

impl Unane {
    /// Why an action is illegal here, or `None` when it is legal.
    pub(super) fn illegal_reason(&self, action: Action) -> Option<String> {
        let me = self.to_move;
        let (w, h) = (self.width, self.height);
        let on_board = |c: Cell| c.on_board(w, h);
        match action {
            Action::Swap => {
                if self.swap_available() {
                    None
                } else {
                    Some(
                        "swap is only allowed as white's first action (ply 1, white to act)"
                            .to_string(),
                    )
                }
            }
            Action::Remove(cell) => {
                if !on_board(cell) {
                    return Some(format!("{cell} is not on the {w}x{h} board"));
                }
                match self.stone(cell) {
                    None => return Some(format!("no stone of yours on {cell}: it is empty")),
                    Some(s) if s != me => {
                        return Some(format!(
                            "no stone of yours on {cell}: it holds a {} stone",
                            Self::colour(s)
                        ))
                    }
                    Some(_) => {}
                }
                let foe = self.stones[me.other().index()];
                let touching = Bits::cell(cell.index()).neighbours() & foe;
                if touching.is_empty() {
                    None
                } else {
                    Some(format!(
                        "the stone on {cell} cannot be removed: it touches the enemy stone on {}",
                        Cell::from_index(touching.lowest())
                    ))
                }
            }
            Action::Capture { from, to } => {
                for c in [from, to] {
                    if !on_board(c) {
                        return Some(format!("{c} is not on the {w}x{h} board"));
                    }
                }
                match self.stone(from) {
                    None => return Some(format!("no stone of yours on {from}: it is empty")),
                    Some(s) if s != me => {
                        return Some(format!(
                            "no stone of yours on {from}: it holds a {} stone",
                            Self::colour(s)
                        ))
                    }
                    Some(_) => {}
                }
                if !from.adjacent(to) {
                    return Some(format!(
                        "{to} is not orthogonally adjacent to {from}: a stone moves one step, \
                         no diagonals or slides"
                    ));
                }
                match self.stone(to) {
                    None => Some(format!(
                        "{to} is empty: a stone only moves onto an enemy stone"
                    )),
                    Some(s) if s == me => Some(format!("{to} holds your own stone")),
                    Some(_) => None,
                }
            }
        }
    }
}
