//! The JSON view clients draw from (the `state` field of the game document).

use serde_json::{json, Value};

use super::board::{
    cell_name, coords, row_of, BLACK_PALACES, CELLS, ROWS, ROW_LEN, ROW_START, WHITE_PALACES,
};
use super::stack::Token;
use super::{Staku, COUNTER_START};

impl Staku {
    /// The dynamic view: each cell's stack (bottom to top), the counter and the tokens on
    /// the board. Cells are in the geometry's order.
    pub(crate) fn build_view(&self) -> Value {
        let mut counts = [0u32; 3];
        let cells: Vec<Value> = (0..CELLS as u8)
            .map(|c| {
                let tokens: Vec<&str> = self.board[c as usize]
                    .tokens()
                    .map(|t| {
                        counts[t as usize] += 1;
                        t.name()
                    })
                    .collect();
                json!({ "tokens": tokens })
            })
            .collect();
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
