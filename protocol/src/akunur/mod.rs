//! Akunur: a hex game of echo and support (rules: `protocol/docs/games/akunur.md`).
//!
//! The state is two `u64` bitboards (one per side) over the 61 cells plus a few counters.
//! One concept per file: [`board`] (geometry), [`options`], `rules` (move generation,
//! capture and echo, end checks), `notation`, `position` (position string) and `view`.

pub mod board;
mod notation;
pub mod options;
mod position;
mod rules;
mod view;

pub use board::Cell;
pub use options::Options;

use crate::game::{Game, Outcome, RulesError, Side};

/// Stones each player owns (supply left = `STONES - placed`).
pub const STONES: u8 = 15;

/// Stones placed in the placement phase (12 each); the movement phase starts after them.
pub const PLACEMENT_PHASE_STONES: u8 = 24;

/// One Akunur action. Compact and `Copy`: three bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Put a stone from the supply on a cell (initial or bonus placement): `c3`.
    Place(Cell),
    /// Move a stone, by a step or a Still Point exit: `c3-d4`.
    Move {
        /// The cell the stone leaves.
        from: Cell,
        /// The cell the stone goes to.
        to: Cell,
    },
    /// Pass (only when nothing else is legal): `pass`.
    Pass,
}

/// Everything that identifies a position for the repetition rule: the cells, the player
/// to act, placed counts, tokens, scores and whether a bonus placement is pending.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    stones: [u64; 2],
    meta: u64,
}

/// An Akunur game state, including the repetition history it needs.
#[derive(Clone, Debug)]
pub struct Akunur {
    /// Stones by side (`Side::index`), one bit per cell.
    stones: [u64; 2],
    /// The side to act (after the end: the side that would have been next).
    to_act: Side,
    /// Stones each side has put on the board from its supply.
    placed: [u8; 2],
    /// Tokens still on the corners, bit `k` for the corner `board::CORNER_CELLS[k]`.
    tokens: u8,
    /// Points by side (10 per token).
    scores: [u8; 2],
    /// The side to act owes a bonus placement.
    bonus: bool,
    /// Consecutive passes so far.
    passes: u8,
    /// From the options: corners that win.
    corners_to_win: u8,
    /// The result, once the game has ended.
    outcome: Option<Outcome>,
    /// Keys of the earlier positions since the last irreversible action (a placement, a
    /// stone leaving the game or a token taken): only those can ever recur, so the list
    /// stays short and is empty (no allocation on clone) throughout the placement phase.
    history: Vec<Key>,
}

impl Akunur {
    /// Whether the game is in its placement phase (fewer than 24 stones placed).
    pub fn in_placement_phase(&self) -> bool {
        self.placed[0] + self.placed[1] < PLACEMENT_PHASE_STONES
    }

    /// The stone on a cell, if any.
    pub fn stone_at(&self, cell: Cell) -> Option<Side> {
        if self.stones[0] & cell.bit() != 0 {
            Some(Side::First)
        } else if self.stones[1] & cell.bit() != 0 {
            Some(Side::Second)
        } else {
            None
        }
    }

    /// Points of a side.
    pub fn score(&self, side: Side) -> u32 {
        self.scores[side.index()] as u32
    }

    /// Stones a side has placed so far.
    pub fn placed(&self, side: Side) -> u8 {
        self.placed[side.index()]
    }

    /// Whether the token of a corner is still available (`false` for non-corners).
    pub fn has_token(&self, cell: Cell) -> bool {
        cell.corner_slot()
            .is_some_and(|k| self.tokens & (1 << k) != 0)
    }

    /// Whether the side to act owes a bonus placement.
    pub fn bonus_pending(&self) -> bool {
        self.bonus
    }

    fn key(&self) -> Key {
        let meta = (self.to_act.index() as u64)
            | (self.placed[0] as u64) << 1
            | (self.placed[1] as u64) << 9
            | (self.tokens as u64) << 17
            | (self.scores[0] as u64) << 25
            | (self.scores[1] as u64) << 33
            | (self.bonus as u64) << 41;
        Key {
            stones: self.stones,
            meta,
        }
    }
}

impl Game for Akunur {
    type Options = Options;
    type Action = Action;
    const KIND: &'static str = "akunur";
    const SIDE_NAMES: [&'static str; 2] = ["light", "dark"];

    fn validate_options(options: Options) -> Result<Options, RulesError> {
        options.validate()
    }

    fn start(options: &Options) -> Self {
        Akunur {
            stones: [0, 0],
            to_act: Side::First,
            placed: [0, 0],
            tokens: 0b11_1111,
            scores: [0, 0],
            bonus: false,
            passes: 0,
            corners_to_win: options.corners_to_win,
            outcome: None,
            history: Vec::new(),
        }
    }

    fn from_position(options: &Options, position: &str) -> Result<Self, RulesError> {
        position::parse(options, position)
    }

    fn position(&self) -> String {
        position::format(self)
    }

    fn to_act(&self) -> Option<Side> {
        match self.outcome {
            Some(_) => None,
            None => Some(self.to_act),
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        rules::legal_actions(self, out)
    }

    fn apply(&mut self, action: Action) {
        rules::apply(self, action)
    }

    fn parse_action(&self, text: &str) -> Result<Action, RulesError> {
        notation::parse(text)
    }

    fn format_action(&self, action: Action) -> String {
        notation::format(action)
    }

    /// The client view. Shape:
    ///
    /// ```json
    /// {
    ///   "board": {"shape": "hexhex", "side": 5, "columns": 9, "rows": 9,
    ///             "neighbours": "(x±1,y) (x,y±1) (x+1,y+1) (x-1,y-1)",
    ///             "still_point": "e5", "corners": ["a1", "e1", "i5", "i9", "e9", "a5"]},
    ///   // all 61 cells in position-string order (row 9 down to row 1, low column first);
    ///   // kind is "corner" | "still_point" | "placement" (rings 2-4) | "inner" (ring 1);
    ///   // "token" appears on corners only
    ///   "cells": [ {"name": "e9", "x": 4, "y": 8, "ring": 4, "kind": "corner",
    ///               "echo": "e1", "stone": "light"|"dark"|null, "token": true}, … ],
    ///   "phase": "placement"|"movement",
    ///   "to_act": "light"|"dark"|null,
    ///   "bonus_pending": false,
    ///   "tokens": ["a1", "e1", …],            // corners whose token is still there
    ///   "scores": {"light": 0, "dark": 0},
    ///   "placed": {"light": 0, "dark": 0},
    ///   "supply": {"light": 15, "dark": 15},
    ///   "on_board": {"light": 0, "dark": 0},
    ///   "corners_held": {"light": 0, "dark": 0},
    ///   "corners_to_win": 3,
    ///   "passes": 0
    /// }
    /// ```
    fn view(&self) -> serde_json::Value {
        view::view(self)
    }

    const VIEW_CHANGES: bool = true;

    /// From the bitboards and counters of the two states, not from their views: the changed
    /// cells, the token list when it shrank and the changed counters.
    fn view_changes(&self, before: &Self) -> Option<Vec<(String, serde_json::Value)>> {
        view::view_changes(self, before)
    }

    fn geometry(&self) -> serde_json::Value {
        view::geometry(self)
    }

    fn check(&self, action: Action) -> Result<(), RulesError> {
        rules::check(self, action)
    }
}
