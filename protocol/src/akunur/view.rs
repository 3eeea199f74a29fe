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
            let mut cell = json!({ "stone": stone(g, c) });
            if c.is_corner() {
                cell["token"] = json!(g.has_token(c));
            }
            cell
        })
        .collect();
    json!({
        "cells": cells,
        "phase": phase(g),
        "bonus_pending": bonus_pending(g),
        "tokens": tokens(g),
        "scores": per_side(|i| score(g, i)),
        "placed": per_side(|i| placed(g, i)),
        "supply": per_side(|i| supply(g, i)),
        "on_board": per_side(|i| on_board(g, i)),
        "corners_held": per_side(|i| corners_held(g, i)),
        "passes": g.passes,
    })
}

/// One side's value of a per-side counter (the side by `Side::index`).
type Counter = fn(&Akunur, usize) -> u32;

/// The per-side counters of the view (each `{"light": …, "dark": …}`) by key.
const COUNTERS: [(&str, Counter); 5] = [
    ("scores", score),
    ("placed", placed),
    ("supply", supply),
    ("on_board", on_board),
    ("corners_held", corners_held),
];

fn score(g: &Akunur, i: usize) -> u32 {
    u32::from(g.scores[i])
}

fn placed(g: &Akunur, i: usize) -> u32 {
    u32::from(g.placed[i])
}

fn supply(g: &Akunur, i: usize) -> u32 {
    u32::from(STONES.saturating_sub(g.placed[i]))
}

fn on_board(g: &Akunur, i: usize) -> u32 {
    g.stones[i].count_ones()
}

fn corners_held(g: &Akunur, i: usize) -> u32 {
    (g.stones[i] & CORNERS).count_ones()
}

fn stone(g: &Akunur, c: Cell) -> Value {
    g.stone_at(c).map(side_name).into()
}

fn phase(g: &Akunur) -> &'static str {
    if g.in_placement_phase() {
        "placement"
    } else {
        "movement"
    }
}

fn bonus_pending(g: &Akunur) -> bool {
    g.bonus && g.outcome.is_none()
}

/// The corners whose token is still there, in token order.
fn tokens(g: &Akunur) -> Vec<String> {
    CORNER_CELLS
        .iter()
        .enumerate()
        .filter(|(k, _)| g.tokens & (1 << k) != 0)
        .map(|(_, &c)| {
            Cell::from_index(c as usize)
                .map(Cell::name)
                .unwrap_or_default()
        })
        .collect()
}

/// The members of [`view`] that differ from `before`'s view (`Game::view_changes`), found
/// from the two bitboards and the counters: each changed cell's `stone` or `token`, the whole
/// `tokens` list when a token was taken (it is shorter), and each changed counter. `None`
/// for other options (`corners_to_win` is not in the view, but the states belong to
/// different games).
pub(super) fn view_changes(g: &Akunur, before: &Akunur) -> Option<Vec<(String, Value)>> {
    if g.corners_to_win != before.corners_to_win {
        return None;
    }
    let mut out = Vec::new();
    let moved = (g.stones[0] ^ before.stones[0]) | (g.stones[1] ^ before.stones[1]);
    let taken = g.tokens ^ before.tokens;
    if moved != 0 || taken != 0 {
        for (at, c) in board::display_order().enumerate() {
            if moved & c.bit() != 0 {
                out.push((crate::pointer!("cells", at, "stone"), stone(g, c)));
            }
            if c.is_corner() && g.has_token(c) != before.has_token(c) {
                out.push((
                    crate::pointer!("cells", at, "token"),
                    Value::from(g.has_token(c)),
                ));
            }
        }
    }
    if phase(g) != phase(before) {
        out.push(("/phase".into(), Value::from(phase(g))));
    }
    if bonus_pending(g) != bonus_pending(before) {
        out.push(("/bonus_pending".into(), Value::from(bonus_pending(g))));
    }
    if taken != 0 {
        out.push(("/tokens".into(), Value::from(tokens(g))));
    }
    for (key, count) in COUNTERS {
        for (i, side) in Akunur::SIDE_NAMES.iter().enumerate() {
            if count(g, i) != count(before, i) {
                out.push((crate::pointer!(key, side), Value::from(count(g, i))));
            }
        }
    }
    if g.passes != before.passes {
        out.push(("/passes".into(), Value::from(g.passes)));
    }
    Some(out)
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
