//! Fair side assignment: alternate by recent history, otherwise random.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use rand::Rng;
use stoa_protocol::game::Side;

/// How many recent sides are remembered per player by default.
pub const DEFAULT_SIDE_MEMORY: usize = 4;

/// A small per-player memory of the sides they recently had, used to give
/// each player the other side next time.
///
/// Memory grows with the number of distinct players remembered (a few bytes
/// each); a server that wants a bound calls [`SideHistory::forget`] for
/// players it drops.
#[derive(Clone, Debug)]
pub struct SideHistory<P> {
    memory: usize,
    sides: HashMap<P, VecDeque<Side>>,
}

impl<P: Clone + Eq + Hash> SideHistory<P> {
    /// An empty history keeping the last `memory` sides per player (at least 1).
    pub fn new(memory: usize) -> Self {
        SideHistory {
            memory: memory.max(1),
            sides: HashMap::new(),
        }
    }

    /// Notes that `player` played `side` (also for games not made by pairing,
    /// such as rooms and rematches, so alternation sees them).
    pub fn record(&mut self, player: &P, side: Side) {
        let memory = self.memory;
        let h = self.sides.entry(player.clone()).or_default();
        h.push_back(side);
        while h.len() > memory {
            h.pop_front();
        }
    }

    /// The side `player` had most recently, if remembered.
    pub fn last(&self, player: &P) -> Option<Side> {
        self.sides.get(player).and_then(|h| h.back().copied())
    }

    /// Drops what is remembered about `player`.
    pub fn forget(&mut self, player: &P) {
        self.sides.remove(player);
    }

    /// How many `First`s minus how many `Second`s `player` recently had.
    fn balance(&self, player: &P) -> i32 {
        self.sides.get(player).map_or(0, |h| {
            h.iter()
                .map(|s| match s {
                    Side::First => 1,
                    Side::Second => -1,
                })
                .sum()
        })
    }

    /// Which of `a` and `b` takes the first side: `true` for `a`.
    ///
    /// Each player wishes for the side other than the one they had last time.
    /// Compatible wishes (different, or only one player has one) are granted.
    /// When both wish for the same side, the one whose recent history is more
    /// lopsided the other way gets it; when that ties too, or neither has a
    /// history, a coin flip from `rng` decides. The history is not updated
    /// here: call [`SideHistory::record`] for both once the game is made.
    pub fn a_takes_first(&self, a: &P, b: &P, rng: &mut impl Rng) -> bool {
        let wish = |p: &P| self.last(p).map(Side::other);
        match (wish(a), wish(b)) {
            (None, None) => rng.gen(),
            (Some(w), None) => w == Side::First,
            (None, Some(w)) => w == Side::Second,
            (Some(wa), Some(wb)) if wa != wb => wa == Side::First,
            (Some(w), Some(_)) => {
                // Both want `w`. A positive balance means "had First more
                // often", a claim to Second; negate it for a wish for First.
                let claim = |p: &P| match w {
                    Side::Second => self.balance(p),
                    Side::First => -self.balance(p),
                };
                let (ca, cb) = (claim(a), claim(b));
                let a_gets_wish = match ca.cmp(&cb) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Less => false,
                    std::cmp::Ordering::Equal => rng.gen(),
                };
                // a takes First exactly when (a gets its wish) == (wish is First).
                a_gets_wish == (w == Side::First)
            }
        }
    }
}
