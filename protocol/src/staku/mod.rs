//! Staku rules engine (`staku`), exactly as `protocol/docs/games/staku.md` specifies.
//!
//! One action is one whole turn (one or two moves). The state is a small `Copy` value:
//! 49 one-byte cells, the side to act, the no-capture counter, the stacking limit and the
//! outcome, so search and perft clone it for free and `apply` never allocates.
//!
//! Files: [`board`] geometry, [`stack`] cell contents and landing rules, [`action`] turns and
//! notation, `movegen` generation and application, `check` legality with reasons,
//! `position` the position string, `view` the client JSON, [`options`].

pub mod action;
pub mod board;
mod check;
mod movegen;
pub mod options;
mod position;
pub mod stack;
mod view;

pub use action::Action;
pub use options::Options;
pub use stack::{Stack, Token};

use board::CELLS;

use crate::game::{Game, Outcome, RulesError, Side};

/// The value the no-capture counter starts at and resets to after a capture.
pub const COUNTER_START: u8 = 20;

/// A Staku game state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Staku {
    board: [Stack; CELLS],
    /// The side whose turn it is; after the end, the side that would be next (the position
    /// string still records it).
    to_act: Side,
    /// No-capture counter: 20 after a capture, minus 1 per capture-free turn; 0 = drawn.
    counter: u8,
    max_stack: u8,
    outcome: Option<Outcome>,
}

/// Neutral tokens at the start: c1, c3, c6, c8, d4, e1, e3, e6, e8.
const START_NEUTRALS: [u8; 9] = [13, 15, 18, 20, 24, 28, 30, 33, 35];

impl Staku {
    /// The tokens on a cell (0 = a1 … 48 = g6; see [`board`]).
    pub fn cell(&self, cell: u8) -> Stack {
        self.board
            .get(cell as usize)
            .copied()
            .unwrap_or(Stack::EMPTY)
    }

    /// The no-capture counter (20 down to 0).
    pub fn counter(&self) -> u8 {
        self.counter
    }

    /// The stacking limit the game runs with.
    pub fn max_stack(&self) -> u8 {
        self.max_stack
    }
}

impl Game for Staku {
    type Options = Options;
    type Action = Action;
    const KIND: &'static str = "staku";
    const SIDE_NAMES: [&'static str; 2] = ["white", "black"];

    fn validate_options(options: Options) -> Result<Options, RulesError> {
        options::validate(options)
    }

    fn start(options: &Options) -> Self {
        let mut board = [Stack::EMPTY; CELLS];
        // Rows a and b (cells 0..13) white, rows f and g (36..49) black.
        for (c, cell) in board.iter_mut().enumerate() {
            if c < 13 {
                *cell = Stack::of(Side::First, 1);
            } else if c >= 36 {
                *cell = Stack::of(Side::Second, 1);
            }
        }
        for c in START_NEUTRALS {
            board[c as usize] = Stack::NEUTRAL;
        }
        Staku {
            board,
            to_act: Side::First,
            counter: COUNTER_START,
            max_stack: options.max_stack.clamp(2, 3),
            outcome: None,
        }
    }

    /// Parses a position string. The outcome is derived from it exactly as after the turn
    /// that produced it: a palace topped by the side that just moved (the side not to act)
    /// is a win, counter 0 a draw, and a side to act without any legal turn loses. So every
    /// position string, ended games included, round-trips to the same state.
    fn from_position(options: &Options, position: &str) -> Result<Self, RulesError> {
        let options = options::validate(options.clone())?;
        let p = position::parse(position, options.max_stack)?;
        let mut game = Staku {
            board: p.board,
            to_act: p.to_act,
            counter: p.counter,
            max_stack: options.max_stack,
            outcome: None,
        };
        game.outcome = game.judge();
        Ok(game)
    }

    fn position(&self) -> String {
        position::format(&self.board, self.to_act, self.counter)
    }

    fn to_act(&self) -> Option<Side> {
        self.outcome.is_none().then_some(self.to_act)
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        self.for_each_turn(|a| out.push(a));
    }

    fn apply(&mut self, action: Action) {
        self.play_turn(action);
    }

    fn parse_action(&self, text: &str) -> Result<Action, RulesError> {
        action::parse(text)
    }

    fn format_action(&self, action: Action) -> String {
        action::format(action)
    }

    /// The client view (`state` of the game document):
    ///
    /// ```text
    /// {
    ///   "board": {"shape": "hex", "rows": 7, "row_lengths": [6,7,8,7,8,7,6],
    ///             "layout": [["g1",…,"g6"], …, ["a1",…,"a6"]]},   // top row first
    ///   "cells": [ {"name": "a1", "row": "a", "number": 1,
    ///               "u": -1, "v": -3,          // axial coordinates, d4 = (0,0)
    ///               "x": -5, "y": -3,          // drawing grid: x = 2u+v (half cells), y = v (up)
    ///               "tokens": ["neutral", "white"],   // bottom to top, [] when empty
    ///               "top": "white" | "black" | "neutral" | null,
    ///               "palace": "white" | "black" | null }, … 49 cells, a1..a6, b1.., g6 ],
    ///   "max_stack": 3,
    ///   "no_capture_counter": 20,     // the game is drawn when it reaches 0
    ///   "no_capture_limit": 20,
    ///   "palaces": {"white": ["a1","a6"], "black": ["g1","g6"]},
    ///   "tokens_on_board": {"white": 13, "black": 13, "neutral": 9},
    ///   "to_act": "white" | "black" | null
    /// }
    /// ```
    fn view(&self) -> serde_json::Value {
        self.build_view()
    }

    const VIEW_CHANGES: bool = true;

    /// From the cells and counters of the two states, not from their views: the changed
    /// cells' `tokens`, the counter and the changed token counts.
    fn view_changes(&self, before: &Self) -> Option<Vec<(String, serde_json::Value)>> {
        self.build_view_changes(before)
    }

    fn geometry(&self) -> serde_json::Value {
        self.build_geometry()
    }

    /// Same counts as the generic perft; the last level is counted without materialising
    /// the ~400 turns of each position.
    fn perft(&self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => {
                let mut n = 0;
                self.for_each_turn(|_| n += 1);
                n
            }
            _ => {
                let mut actions = Vec::with_capacity(512);
                self.legal_actions(&mut actions);
                actions
                    .iter()
                    .map(|&a| {
                        let mut next = *self;
                        next.play_turn(a);
                        next.perft(depth - 1)
                    })
                    .sum()
            }
        }
    }

    fn check(&self, action: Action) -> Result<(), RulesError> {
        if self.outcome.is_some() {
            return Err(RulesError::GameOver);
        }
        self.explain(action)
            .map_err(|reason| RulesError::illegal(&action::format(action), reason))
    }
}
