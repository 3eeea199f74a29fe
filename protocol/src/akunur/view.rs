//! The client view (`state` in the game document): everything a thin client needs to draw
//! the board and the counters without knowing the rules. Shape documented on
//! `Akunur::view` (the `Game` impl).

use serde_json::{json, Value};

use super::board::{self, CORNERS, CORNER_CELLS, PLACEMENT};
use super::{Akunur, Cell, STONES};
use crate::game::{Game, Side};

fn side_name(side: Side) -> &'static str {
    Akunur::SIDE_NAMES[side.index()]
}

fn per_side<T: Into<Value>>(f: impl Fn(usize) -> T) -> Value {
    json!({ "light": f(0).into(), "dark": f(1).into() })
}

pub(super) fn view(g: &Akunur) -> Value {
    let cells: Vec<Value> = board::display_order()
        .map(|c: Cell| {
            let mut cell = json!({ "stone": g.stone_at(c).map(side_name) });
            if c.is_corner() {
                cell["token"] = json!(g.has_token(c));
            }
            cell
        })
        .collect();
    let tokens: Vec<String> = CORNER_CELLS
        .iter()
        .enumerate()
        .filter(|(k, _)| g.tokens & (1 << k) != 0)
        .map(|(_, &c)| {
            Cell::from_index(c as usize)
                .map(Cell::name)
                .unwrap_or_default()
        })
        .collect();
    json!({
        "cells": cells,
        "phase": if g.in_placement_phase() { "placement" } else { "movement" },
        "bonus_pending": g.bonus && g.outcome.is_none(),
        "tokens": tokens,
        "scores": per_side(|i| g.scores[i]),
        "placed": per_side(|i| g.placed[i]),
        "supply": per_side(|i| STONES - g.placed[i]),
        "on_board": per_side(|i| g.stones[i].count_ones()),
        "corners_held": per_side(|i| (g.stones[i] & CORNERS).count_ones()),
        "passes": g.passes,
    })
}

/// The static geometry: the hexhex board, each cell's name, coordinates, ring, kind and
/// echo (in the view's cell order), and the corners needed to win.
pub(super) fn geometry(g: &Akunur) -> Value {
    let cells: Vec<Value> = board::display_order()
        .map(|c: Cell| {
            let kind = if c.is_still_point() {
                "still_point"
            } else if c.is_corner() {
                "corner"
            } else if c.bit() & PLACEMENT != 0 {
                "placement"
            } else {
                "inner"
            };
            json!({
                "name": c.name(),
                "x": c.x(),
                "y": c.y(),
                "ring": c.ring(),
                "kind": kind,
                "echo": c.echo().name(),
            })
        })
        .collect();
    json!({
        "board": {
            "shape": "hexhex",
            "side": 5,
            "columns": 9,
            "rows": 9,
            "neighbours": "(x±1,y) (x,y±1) (x+1,y+1) (x-1,y-1)",
            "still_point": "e5",
            "corners": CORNER_CELLS.iter().filter_map(|&c| Cell::from_index(c as usize)).map(Cell::name).collect::<Vec<_>>(),
        },
        "cells": cells,
        "corners_to_win": g.corners_to_win,
    })
}
