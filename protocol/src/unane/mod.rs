//! Ūnane (Mark Steere): capture or remove stones until one side is a single group.
//!
//! The normative rules are `protocol/docs/games/unane.md`. Layout of this module:
//! - [`bits`]: a 256-bit cell set with fixed-stride shifts (boards up to 16x16);
//! - [`options`]: width/height options and their validation;
//! - [`notation`]: cells, [`Action`] and its notation;
//! - `position`: position strings;
//! - `groups`: a side's group count after a move, told around the changed cells;
//! - `view`: what a move changes in the view (the members of a diff);
//! - `legality`: why an action is illegal, in words;
//! - this file: the state, move generation, the end test and the [`Game`] implementation.
//!
//! Stones are two bitboards, so generation is a handful of shifts per direction and the
//! last ply of perft is counted with popcounts alone.

mod bits;
mod groups;
mod legality;
pub mod notation;
pub mod options;
mod position;
mod view;

use serde_json::{json, Map, Value};

use self::bits::{Bits, STRIDE};
pub use self::notation::{Action, Cell};
pub use self::options::Options;
use crate::game::{Game, Outcome, Reason, RulesError, Side};

/// Colour names indexed by [`Side::index`].
const COLOURS: [&str; 2] = ["black", "white"];

/// A complete Ūnane game state (board, side to act, ply, result). It is `Copy`: 80 bytes.
///
/// Equal and hashed by the game alone: the kept group counts are a memo, not state.
#[derive(Copy, Clone, Debug)]
pub struct Unane {
    width: u8,
    height: u8,
    /// Stones by [`Side::index`]: black, white.
    stones: [Bits; 2],
    /// The side to act while the game is on (after the end: the side that would be next).
    to_move: Side,
    /// Actions played so far, swap included (only decides whether swap is offered).
    ply: u32,
    outcome: Option<Outcome>,
    /// Each side's group count when known ([`GROUPS_UNKNOWN`] otherwise), kept by
    /// [`Game::view_changes_kept`] so the next move's diff adds a known change to it instead
    /// of counting the groups again (the count was most of a move's diff). Any action
    /// forgets it (one byte store: perft and bots pay nothing else).
    groups_kept: [u8; 2],
}

/// A kept group count that is not known ([`Unane::groups_kept`]; a 16x16 board has at most
/// 128 groups).
const GROUPS_UNKNOWN: u8 = u8::MAX;

/// The fields that make the game (all but the kept memo), as equality and hashing see it.
type GameKey = (u8, u8, [Bits; 2], Side, u32, Option<Outcome>);

impl Unane {
    fn game_key(&self) -> GameKey {
        let Unane {
            width,
            height,
            stones,
            to_move,
            ply,
            outcome,
            groups_kept: _,
        } = *self;
        (width, height, stones, to_move, ply, outcome)
    }
}

impl PartialEq for Unane {
    fn eq(&self, other: &Self) -> bool {
        self.game_key() == other.game_key()
    }
}

impl Eq for Unane {}

impl std::hash::Hash for Unane {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.game_key().hash(state);
    }
}

impl Unane {
    fn from_parts(width: u8, height: u8, stones: [Bits; 2], to_move: Side, ply: u32) -> Unane {
        Unane {
            width,
            height,
            stones,
            to_move,
            ply,
            outcome: None,
            groups_kept: [GROUPS_UNKNOWN; 2],
        }
    }

    /// Board width (files).
    pub fn width(&self) -> u8 {
        self.width
    }

    /// Board height (ranks).
    pub fn height(&self) -> u8 {
        self.height
    }

    /// Number of actions played so far (swap included).
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// The stone on `cell`, if any (`None` also for cells off the board).
    pub fn stone(&self, cell: Cell) -> Option<Side> {
        if self.stones[0].has(cell.index()) {
            Some(Side::First)
        } else if self.stones[1].has(cell.index()) {
            Some(Side::Second)
        } else {
            None
        }
    }

    /// Number of stones of a side.
    pub fn stone_count(&self, side: Side) -> u32 {
        self.stones[side.index()].count()
    }

    /// Number of orthogonally connected groups of a side.
    pub fn group_count(&self, side: Side) -> u32 {
        self.stones[side.index()].groups()
    }

    /// Whether the pie-rule swap is available now: white to act at ply 1, game on.
    pub fn swap_available(&self) -> bool {
        self.outcome.is_none() && self.ply == 1 && self.to_move == Side::Second
    }

    /// Calls `f` with every legal action, each exactly once (nothing once ended).
    #[inline]
    pub fn for_each_action(&self, mut f: impl FnMut(Action)) {
        if self.outcome.is_some() {
            return;
        }
        let me = self.stones[self.to_move.index()];
        let foe = self.stones[self.to_move.other().index()];
        // A stone on c captures north when an enemy sits on c+16, i.e. c is in foe.south().
        let steps: [(Bits, i16); 4] = [
            (me & foe.south(), STRIDE as i16),
            (me & foe.north(), -(STRIDE as i16)),
            (me & foe.west(), 1),
            (me & foe.east(), -1),
        ];
        for (froms, delta) in steps {
            for from in froms.iter() {
                let to = (i16::from(from) + delta) as u8;
                f(Action::Capture {
                    from: Cell::from_index(from),
                    to: Cell::from_index(to),
                });
            }
        }
        for cell in (me & !foe.neighbours()).iter() {
            f(Action::Remove(Cell::from_index(cell)));
        }
        if self.swap_available() {
            f(Action::Swap);
        }
    }

    /// Number of legal actions, by popcount (what perft's last ply needs).
    #[inline]
    pub fn count_actions(&self) -> u64 {
        if self.outcome.is_some() {
            return 0;
        }
        let me = self.stones[self.to_move.index()];
        let foe = self.stones[self.to_move.other().index()];
        let n = (me & foe.south()).count()
            + (me & foe.north()).count()
            + (me & foe.west()).count()
            + (me & foe.east()).count()
            + (me & !foe.neighbours()).count()
            + u32::from(self.swap_available());
        u64::from(n)
    }

    /// The end test after a stone action by `mover` (rules: "End of game").
    #[inline]
    fn end_test(&mut self, mover: Side) {
        let opponent = mover.other();
        if self.stones[mover.index()].is_one_group() {
            self.outcome = Some(Outcome {
                winner: Some(mover),
                reason: Reason::OneGroup,
            });
        } else if self.stones[opponent.index()].is_one_group() {
            self.outcome = Some(Outcome {
                winner: Some(opponent),
                reason: Reason::OneGroup,
            });
        } else if self.stones[opponent.index()].is_empty() {
            // Unreachable from the start (a side with one stone is one group, which ends the
            // game first), but a loaded position may leave the next side without stones and
            // so without any action: it loses, as protocol/docs/PROTOCOL.md's `no_moves` says.
            self.outcome = Some(Outcome {
                winner: Some(mover),
                reason: Reason::NoMoves,
            });
        }
    }
}

impl Game for Unane {
    type Options = Options;
    type Action = Action;
    const KIND: &'static str = "unane";
    const SIDE_NAMES: [&'static str; 2] = COLOURS;

    fn validate_options(options: Options) -> Result<Options, RulesError> {
        options.validate()
    }

    fn start(options: &Options) -> Self {
        // Options are validated (3..=16); clamp anyway so no input can index out of range.
        let width = options.width.clamp(options::MIN_SIZE, options::MAX_SIZE) as u8;
        let height = options.height.clamp(options::MIN_SIZE, options::MAX_SIZE) as u8;
        let mut stones = [Bits::EMPTY; 2];
        for rank in 0..height {
            for file in 0..width {
                // Black iff (file + (height-1-rank)) is even: the top-left cell is black.
                let side = usize::from((file + (height - 1 - rank)) % 2 == 1);
                stones[side] = stones[side] | Bits::cell(rank * STRIDE + file);
            }
        }
        Unane::from_parts(width, height, stones, Side::First, 0)
    }

    /// With default options the board size comes from the string (its rows fully determine
    /// the board, as Akron's size field does), so a position loads without repeating its size
    /// in the options; explicit options must match the string.
    fn from_position(options: &Options, position: &str) -> Result<Self, RulesError> {
        let options = options.clone().validate()?;
        let position = position.trim();
        let (width, height) = match position::dimensions(position) {
            Some((width, height)) if options == Options::default() => {
                Options { width, height }
                    .validate()
                    .map_err(|e| RulesError::position(format!("the board it describes: {e}")))?;
                (width, height)
            }
            _ => (options.width, options.height),
        };
        position::parse(width as u8, height as u8, position)
    }

    fn position(&self) -> String {
        position::format(self)
    }

    fn to_act(&self) -> Option<Side> {
        match self.outcome {
            None => Some(self.to_move),
            Some(_) => None,
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        self.for_each_action(|a| out.push(a));
    }

    #[inline]
    fn apply(&mut self, action: Action) {
        self.groups_kept = [GROUPS_UNKNOWN; 2];
        let mover = self.to_move;
        let (me, foe) = (mover.index(), mover.other().index());
        match action {
            Action::Capture { from, to } => {
                let (f, t) = (Bits::cell(from.index()), Bits::cell(to.index()));
                self.stones[me] = self.stones[me] ^ f ^ t;
                self.stones[foe] = self.stones[foe] ^ t;
            }
            Action::Remove(cell) => {
                self.stones[me] = self.stones[me] ^ Bits::cell(cell.index());
            }
            Action::Swap => {
                // The players exchange colours; board and colour to act stay. No end test.
                self.ply = self.ply.saturating_add(1);
                return;
            }
        }
        self.ply = self.ply.saturating_add(1);
        self.to_move = mover.other();
        self.end_test(mover);
    }

    fn parse_action(&self, text: &str) -> Result<Action, RulesError> {
        notation::parse(text, self.width, self.height)
    }

    fn format_action(&self, action: Action) -> String {
        action.notation()
    }

    fn is_swap(&self, action: Action) -> bool {
        action == Action::Swap
    }

    /// The client view:
    ///
    /// ```json
    /// {
    ///   "width": 5, "height": 4,
    ///   "rows": [["black","white",null,…], …],      // ranks from the top (rank height) down,
    ///                                               // files a.. left to right
    ///   "cells": {"a1": "white", "a2": null, …},     // every cell by name
    ///   "stones": {"black": 10, "white": 10},        // stones on the board
    ///   "groups": {"black": 10, "white": 10},        // orthogonally connected groups
    ///   "ply": 0,                                    // actions so far, swap included
    ///   "to_act": "black",                           // null once ended
    ///   "swap_available": false                      // white may play `swap` now
    /// }
    /// ```
    fn view(&self) -> Value {
        let mut rows = Vec::with_capacity(usize::from(self.height));
        for rank in (0..self.height).rev() {
            let row: Vec<Value> = (0..self.width)
                .map(
                    |file| match self.stone(Cell::from_index(rank * STRIDE + file)) {
                        Some(s) => Value::from(Self::colour(s)),
                        None => Value::Null,
                    },
                )
                .collect();
            rows.push(Value::Array(row));
        }
        // Built member by member: `json!` would copy the rows through a serializer.
        let per_side = |count: &dyn Fn(Side) -> u32| {
            let mut m = Map::with_capacity(2);
            for side in [Side::First, Side::Second] {
                m.insert(Self::colour(side).to_string(), Value::from(count(side)));
            }
            Value::Object(m)
        };
        let mut view = Map::with_capacity(4);
        view.insert("rows".to_string(), Value::Array(rows));
        view.insert("stones".to_string(), per_side(&|s| self.stone_count(s)));
        view.insert(
            "groups".to_string(),
            per_side(&|s| match self.groups_kept[s.index()] {
                GROUPS_UNKNOWN => self.group_count(s),
                kept => u32::from(kept),
            }),
        );
        view.insert(
            "swap_available".to_string(),
            Value::Bool(self.swap_available()),
        );
        Value::Object(view)
    }

    const VIEW_CHANGES: bool = true;

    fn view_changes(&self, before: &Self) -> Option<Vec<(String, Value)>> {
        self.changes(before).map(|(changes, _)| changes)
    }

    fn view_changes_kept(&mut self, before: &Self) -> Option<Vec<(String, Value)>> {
        let (changes, groups) = self.changes(before)?;
        self.groups_kept = groups;
        Some(changes)
    }

    fn geometry(&self) -> Value {
        let names: Vec<Vec<String>> = (0..self.height)
            .rev()
            .map(|rank| {
                (0..self.width)
                    .map(|file| Cell::from_index(rank * STRIDE + file).to_string())
                    .collect()
            })
            .collect();
        json!({"width": self.width, "height": self.height, "names": names})
    }

    fn check(&self, action: Action) -> Result<(), RulesError> {
        if self.outcome.is_some() {
            return Err(RulesError::GameOver);
        }
        match self.illegal_reason(action) {
            None => Ok(()),
            Some(reason) => Err(RulesError::illegal(&action.to_string(), reason)),
        }
    }

    fn perft(&self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => self.count_actions(),
            _ => {
                let mut total = 0;
                self.for_each_action(|a| {
                    let mut next = *self;
                    next.apply(a);
                    total += next.perft(depth - 1);
                });
                total
            }
        }
    }
}
