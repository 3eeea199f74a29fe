//! The JSON view clients draw from (the `state` field of the game document).

use serde_json::{json, Value};

use super::board::{
    cell_name, coords, row_of, BLACK_PALACES, CELLS, ROWS, ROW_LEN, ROW_START, WHITE_PALACES,
};
use super::stack::{Stack, Token};
use super::{Staku, COUNTER_START};

impl Staku {
    /// The dynamic view: each cell's stack (bottom to top), the counter and the tokens on
    /// the board. Cells are in the geometry's order.
    pub(crate) fn build_view(&self) -> Value {
        let cells: Vec<Value> = self
            .board
            .iter()
            .map(|&stack| json!({ "tokens": tokens(stack) }))
            .collect();
        let counts = self.token_counts();
        json!({
            "cells": cells,
            "no_capture_counter": self.counter,
            "tokens_on_board": {
                "white": counts[Token::White as usize],
                "black": counts[Token::Black as usize],
                "neutral": counts[Token::Neutral as usize],
            },
        })
    }

    /// The members of [`Staku::build_view`] that differ from `before`'s view, found from the
    /// 49 cell bytes and the counter (`Game::view_changes`): a changed cell's whole `tokens`
    /// array (its length changes with the stack's height), the counter, and the token
    /// counts that moved. `None` for another stacking limit (another game's options).
    pub(crate) fn build_view_changes(&self, before: &Staku) -> Option<Vec<(String, Value)>> {
        if self.max_stack != before.max_stack {
            return None;
        }
        let mut out = Vec::new();
        for (c, (&now, &was)) in self.board.iter().zip(&before.board).enumerate() {
            // Compared token by token, not by byte: the view shows tokens.
            if now.tokens().ne(was.tokens()) {
                out.push((
                    crate::pointer!("cells", c, "tokens"),
                    Value::from(tokens(now)),
                ));
            }
        }
        if self.counter != before.counter {
            out.push(("/no_capture_counter".into(), Value::from(self.counter)));
        }
        let (now, was) = (self.token_counts(), before.token_counts());
        for token in [Token::White, Token::Black, Token::Neutral] {
            let i = token as usize;
            if now[i] != was[i] {
                out.push((
                    crate::pointer!("tokens_on_board", token.name()),
                    Value::from(now[i]),
                ));
            }
        }
        Some(out)
    }

    /// Tokens on the board by colour, indexed by `Token as usize`.
    fn token_counts(&self) -> [u32; 3] {
        let mut counts = [0u32; 3];
        for stack in &self.board {
            counts[Token::Neutral as usize] += u32::from(stack.neutrals());
            if let Some(top) = stack.owner().map(Token::of) {
                counts[top as usize] += u32::from(stack.coloured());
            }
        }
        counts
    }

    /// The static geometry: the hex layout, each cell's name and drawing coordinates and
    /// palace, the stack limit and the counter's start.
    pub(crate) fn build_geometry(&self) -> Value {
        let palace = |c: u8| {
            if WHITE_PALACES.contains(&c) {
                Value::from("white")
            } else if BLACK_PALACES.contains(&c) {
                Value::from("black")
            } else {
                Value::Null
            }
        };
        let cells: Vec<Value> = (0..CELLS as u8)
            .map(|c| {
                let (u, v) = coords(c);
                let r = row_of(c);
                json!({
                    "name": cell_name(c),
                    "row": ((b'a' + r as u8) as char).to_string(),
                    "number": c - ROW_START[r] + 1,
                    "u": u,
                    "v": v,
                    "x": 2 * u as i32 + v as i32,
                    "y": v,
                    "palace": palace(c),
                })
            })
            .collect();
        let layout: Vec<Vec<String>> = (0..ROWS)
            .rev()
            .map(|r| {
                (0..ROW_LEN[r])
                    .map(|i| cell_name(ROW_START[r] + i))
                    .collect()
            })
            .collect();
        json!({
            "board": {
                "shape": "hex",
                "rows": ROWS,
                "row_lengths": ROW_LEN,
                "layout": layout,
            },
            "cells": cells,
            "max_stack": self.max_stack,
            "no_capture_limit": COUNTER_START,
            "palaces": {
                "white": WHITE_PALACES.map(cell_name),
                "black": BLACK_PALACES.map(cell_name),
            },
        })
    }
}

/// A cell's tokens as the view lists them: names, bottom to top.
fn tokens(stack: Stack) -> Vec<&'static str> {
    stack.tokens().map(Token::name).collect()
}
