//! What the search knows about each game beyond its rules: how far a playout runs, how a
//! playout picks its actions, how a position a playout stopped short in is judged, and
//! whether all-moves-as-first statistics help.
//!
//! Why per game: uniform random playouts work where random games end soon and say who was
//! ahead (Ūnane, Staku by its no-capture limit, Akron), but random Akunur games wander for
//! hundreds of plies without anyone taking three corners, so a search that only sees their
//! noise cannot steer towards a win (level 1 drew 15 of 40 games against a random mover by
//! the tournament's ply cap). There a playout of two plies judged by an evaluation of the
//! corners (held, surrounded, approached) does far better. Akron's random playouts are
//! informative but slow (every ply generates every move of every ball), so its playouts
//! mostly add balls straight from the pile while there are any (a legal action whenever
//! the pile is not empty), and its search keeps RAVE statistics: in a connection game a
//! ball's worth depends mostly on where it stands, so what was good anywhere in a playout
//! is a good first guess now (with them level 5 beats level 1 40–0 at 300 ms a move; 32–8
//! without).

use stoa_protocol::akron::{self, Akron};
use stoa_protocol::akunur::board::{self, Cell, CORNERS, CORNER_CELLS};
use stoa_protocol::akunur::Akunur;
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::{Game, Side};

use super::search::Rng;

/// A game the bot can search: its rules engine plus the search's game knowledge.
pub trait Knowledge: Game {
    /// Whether the search keeps all-moves-as-first statistics (RAVE): an action good
    /// anywhere in a simulation is likely good now. True in connection games, where a
    /// ball's worth depends mostly on where it is, not when it was played.
    const RAVE: bool = false;

    /// Whether level 1 runs the search's guard against moves that lose within two plies
    /// too. Only in Akron: there a won position (a connection) stands on the board a ply
    /// before the win counts, random movers stumble into one, and without the guard they
    /// beat level 1 about one game in five. Elsewhere handing over a win in one is one of
    /// level 1's mistakes on purpose (with the guard, Staku's level 1 held level 5 to 14–6).
    const GUARD_AT_LEVEL_1: bool = false;

    /// Nodes a level-1 search may spend trying to prove a win or a loss outright before
    /// it searches (0: never; stronger levels spend a multiple). Worth it where endings
    /// are short and sharp (Ūnane): one wrong move late loses whatever the playouts said.
    const PROOF_NODES: u32 = 0;

    /// Plies a playout plays past the search tree before its position is judged by
    /// [`Knowledge::lead`] (a game that ends sooner is scored by its result).
    const PLAYOUT_PLIES: usize;

    /// How far the first side is ahead in a position without a result (or a drawn one):
    /// -1 (the second side is winning) to 1.
    fn lead(&self) -> f64;

    /// Whether `side` has a win pending that the side to act must undo at once (Akron: a
    /// connection, which wins unless the reply breaks it). Used by the search's guard
    /// against moves that lose in two plies.
    fn pending_win(&self, _side: Side) -> bool {
        false
    }

    /// The action a playout plays here (`None` when there is none). Uniformly random
    /// among the legal actions unless a game knows a cheaper or better choice; it must
    /// always return a legal action.
    fn playout_action(
        &self,
        rng: &mut Rng,
        scratch: &mut Vec<Self::Action>,
    ) -> Option<Self::Action> {
        scratch.clear();
        self.legal_actions(scratch);
        if scratch.is_empty() {
            None
        } else {
            Some(scratch[rng.below(scratch.len())])
        }
    }
}

/// Random playouts of these three games end by rule (Staku mostly by its no-capture limit)
/// well within this; the cap only guards against a wandering game.
const LONG_PLAYOUT: usize = 400;

impl Knowledge for Unane {
    const PROOF_NODES: u32 = 20_000;
    const PLAYOUT_PLIES: usize = LONG_PLAYOUT;

    /// Stone counts say nothing about who is closer to one group.
    fn lead(&self) -> f64 {
        0.0
    }
}

impl Knowledge for Staku {
    const PLAYOUT_PLIES: usize = LONG_PLAYOUT;

    /// Tokens on the board: a drawn Staku game (no-capture limit) is better for the side
    /// with more of them left.
    fn lead(&self) -> f64 {
        let mut count = [0.0f64; 2];
        // Every cell of the 49.
        for c in 0..49u8 {
            let stack = self.cell(c);
            if let Some(side) = stack.owner() {
                count[side.index()] += f64::from(stack.coloured());
            }
        }
        let total = count[0] + count[1];
        if total > 0.0 {
            (count[0] - count[1]) / total
        } else {
            0.0
        }
    }
}

impl Knowledge for Akron {
    const RAVE: bool = true;
    const GUARD_AT_LEVEL_1: bool = true;
    const PLAYOUT_PLIES: usize = LONG_PLAYOUT;

    /// Ball counts say nothing about a connection.
    fn lead(&self) -> f64 {
        0.0
    }

    fn pending_win(&self, side: Side) -> bool {
        self.connected(side)
    }

    /// While the side to act has balls in its pile, nine times in ten a ball is added on a
    /// random empty hole: always legal then, and picked without generating every move of
    /// every ball on the board, which makes a playout about twice as fast.
    fn playout_action(
        &self,
        rng: &mut Rng,
        scratch: &mut Vec<akron::Action>,
    ) -> Option<akron::Action> {
        if let Some(side) = self.to_act() {
            if self.piles()[side.index()] > 0 && rng.below(10) != 0 {
                let holes = self.size() * self.size();
                let empty = (0..holes).filter(|&p| self.ball(p).is_none()).count();
                if empty > 0 {
                    let mut k = rng.below(empty);
                    for p in 0..holes {
                        if self.ball(p).is_none() {
                            if k == 0 {
                                return Some(akron::Action::Add(p as u16));
                            }
                            k -= 1;
                        }
                    }
                }
            }
        }
        scratch.clear();
        self.legal_actions(scratch);
        if scratch.is_empty() {
            None
        } else {
            Some(scratch[rng.below(scratch.len())])
        }
    }
}

/// Weight of a corner held in [`akunur_score`]: more than a corner made ready to enter
/// (three stones around it), so stepping in is always worth it.
const CORNER_HELD: f64 = 20.0;

impl Knowledge for Akunur {
    /// A couple of random plies only: longer random play mostly undoes the structures
    /// around the corners the evaluation measures, and its noise would drown the small
    /// differences between moves that a weak (few-playout) search must still tell apart.
    const PLAYOUT_PLIES: usize = 2;

    /// The score difference on a scale that does not saturate before a win: a side two
    /// corners up must still see the progress towards its third.
    fn lead(&self) -> f64 {
        let [light, dark] = akunur_masks(self);
        let diff = akunur_score(self, light, dark, Side::First)
            - akunur_score(self, dark, light, Side::Second);
        (diff / 80.0).tanh()
    }
}

/// Weight in [`akunur_score`] of a stone two steps from a corner still to be taken.
const APPROACH: f64 = 0.4;

/// The cells two steps from `corner` (the neighbours of its neighbours, without the
/// corner and its neighbours).
fn second_ring(corner: Cell) -> u64 {
    let near = corner.neighbours() | corner.bit();
    board::cells(corner.neighbours()).fold(0, |m, n| m | n.neighbours()) & !near
}

/// Both sides' stones as cell masks (light first).
fn akunur_masks(g: &Akunur) -> [u64; 2] {
    let mut masks = [0u64; 2];
    for c in (0..board::CELLS).filter_map(Cell::from_index) {
        if let Some(side) = g.stone_at(c) {
            masks[side.index()] |= c.bit();
        }
    }
    masks
}

/// How well `side` (stones `own`, opponent `theirs`) stands to take corners: corners held;
/// for every other corner the square of its neighbours holding the side's stones (a stone
/// enters a corner, or captures the stone on it, only when all three neighbours are the
/// side's, so the last stone counts most), halved while an enemy stone still stands next
/// to it, and weighted up with every corner already held (the next corner is closer to the
/// win); plus stones on the board and tokens won.
fn akunur_score(g: &Akunur, own: u64, theirs: u64, side: Side) -> f64 {
    let held = f64::from((own & CORNERS).count_ones());
    let mut progress = 0.0;
    for corner in CORNER_CELLS
        .iter()
        .filter_map(|&c| Cell::from_index(c as usize))
    {
        if own & corner.bit() != 0 {
            continue;
        }
        let mine = f64::from((corner.neighbours() & own).count_ones());
        let blocked = corner.neighbours() & theirs != 0;
        progress += if blocked {
            mine * mine / 2.0
        } else {
            mine * mine
        };
        // Stones one step further out are on their way: without this a shallow search sees
        // no reason to bring a stone towards a corner until it arrives.
        if mine < 3.0 {
            let coming = f64::from((second_ring(corner) & own).count_ones());
            progress += APPROACH * coming.min(3.0 - mine);
        }
    }
    held * CORNER_HELD
        + (1.0 + held) * progress
        + f64::from(own.count_ones())
        + f64::from(g.score(side)) / 10.0 * 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn akron_playouts_play_only_legal_actions() {
        let options = Akron::validate_options(akron::Options::with_size(5)).unwrap();
        let mut rng = Rng::new(9);
        let mut scratch = Vec::new();
        let mut legal = Vec::new();
        for _ in 0..20 {
            let mut g = Akron::start(&options);
            while g.outcome().is_none() {
                let a = g.playout_action(&mut rng, &mut scratch).expect("an action");
                legal.clear();
                g.legal_actions(&mut legal);
                assert!(
                    legal.contains(&a),
                    "{} in {}",
                    g.format_action(a),
                    g.position()
                );
                g.apply(a);
            }
        }
    }

    #[test]
    fn akunur_values_corners_and_the_stones_around_them() {
        let options = Default::default();
        let at = |rows: &str| {
            Akunur::from_position(&options, &format!("{rows} l 12,12 111111 0,0 0 0")).unwrap()
        };
        // Rows 9 down to 2 with one dark stone on f7 (far from every corner), then row 1.
        let upper = "...../....../...D.../......../........./......../......./....../";
        // Light on corner a1, on its neighbour b1, or two steps away on c1.
        let corner = at(&format!("{upper}L...."));
        let next_to = at(&format!("{upper}.L..."));
        let further = at(&format!("{upper}..L.."));
        assert!(corner.lead() > next_to.lead());
        assert!(next_to.lead() > further.lead());
        assert!(further.lead() > 0.0);
        // The other way round for dark.
        let dark = at("...../....../...L.../......../........./......../......./....../D....");
        assert!(dark.lead() < 0.0);
    }
}
