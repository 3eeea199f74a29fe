//! The client view (`state` of the game document).

use serde_json::{json, Value};

use crate::game::Side;

use super::connection::{Analysis, EMPTY};
use super::Akron;

fn side_name(cell: u8) -> Value {
    match cell {
        1 => json!("vert"),
        2 => json!("horz"),
        _ => Value::Null,
    }
}

/// Builds the view documented on `Game::view` for [`Akron`] (levels, balls, links).
pub fn view(game: &Akron) -> Value {
    Analysis::with(game.geo, &game.cells, |an| build(game, an))
}

fn build(game: &Akron, an: &Analysis) -> Value {
    let geo = game.geo;
    let n = geo.n;
    let levels: Vec<Value> = (0..n)
        .map(|k| {
            let m = n - k;
            let rows: Vec<Value> = (0..m)
                .map(|j| {
                    Value::Array(
                        (0..m)
                            .map(|i| side_name(game.cells[geo.index(k, i, j)]))
                            .collect(),
                    )
                })
                .collect();
            json!({ "rows": rows })
        })
        .collect();
    let balls: Vec<Value> = (0..geo.points)
        .filter(|&p| game.cells[p] != EMPTY)
        .map(|p| {
            let (k, i, j) = geo.coord[p];
            let (k, i, j) = (k as usize, i as usize, j as usize);
            json!({
                "point": geo.names[p],
                "level": k,
                "column": i,
                "row": j,
                "plan": [2 * i + k, 2 * j + k],
                "side": side_name(game.cells[p]),
                "cut": an.cut[p],
            })
        })
        .collect();
    let links: Vec<Value> = geo
        .link_ends
        .iter()
        .enumerate()
        .filter(|&(_, &(a, b))| {
            game.cells[a as usize] != EMPTY && game.cells[a as usize] == game.cells[b as usize]
        })
        .map(|(e, &(a, b))| {
            json!({
                "a": geo.names[a as usize],
                "b": geo.names[b as usize],
                "level": geo.level(a as usize),
                "side": side_name(game.cells[a as usize]),
                "cut": !an.linked[e],
            })
        })
        .collect();
    json!({
        "piles": {"vert": game.piles[0], "horz": game.piles[1]},
        "swap_available": game.outcome.is_none() && game.ply == 1 && game.to_move == Side::Second,
        "connected": {"vert": an.connected[0], "horz": an.connected[1]},
        "levels": levels,
        "balls": balls,
        "links": links,
    })
}

/// The static geometry: the board size, each level's size (in the view's level order), and
/// the options that do not change during a game.
pub fn geometry(game: &Akron) -> Value {
    let n = game.geo.n;
    let levels: Vec<Value> = (0..n).map(|k| json!({"level": k, "size": n - k})).collect();
    json!({
        "size": n,
        "pieces": game.pieces,
        "nodelay": game.nodelay,
        "levels": levels,
    })
}
