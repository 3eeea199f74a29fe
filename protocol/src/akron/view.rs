//! The client view (`state` of the game document).

use serde_json::{json, Value};

use crate::game::Side;

use super::connection::{Analysis, EMPTY};
use super::Akron;

/// The sides' names by index (vert, horz), as the view's per-side members spell them.
const SIDES: [&str; 2] = ["vert", "horz"];

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
    json!({
        "piles": {"vert": game.piles[0], "horz": game.piles[1]},
        "swap_available": swap_available(game),
        "connected": {"vert": an.connected[0], "horz": an.connected[1]},
        "levels": levels,
        "balls": balls(game, an),
        "links": links(game, an),
    })
}

/// Whether horz may answer vert's first add with `swap` (the view's `swap_available`).
fn swap_available(game: &Akron) -> bool {
    game.outcome.is_none() && game.ply == 1 && game.to_move == Side::Second
}

/// The points holding a ball, in the order of the view's `balls`.
fn ball_points(game: &Akron) -> impl Iterator<Item = usize> + '_ {
    (0..game.geo.points).filter(|&p| game.cells[p] != EMPTY)
}

/// The links the view lists (both ends hold balls of one colour), in its order.
fn shown_links(game: &Akron) -> impl Iterator<Item = usize> + '_ {
    game.geo
        .link_ends
        .iter()
        .enumerate()
        .filter(|&(_, &(a, b))| {
            game.cells[a as usize] != EMPTY && game.cells[a as usize] == game.cells[b as usize]
        })
        .map(|(e, _)| e)
}

fn balls(game: &Akron, an: &Analysis) -> Value {
    ball_points(game).map(|p| ball(game, an, p)).collect()
}

fn links(game: &Akron, an: &Analysis) -> Value {
    shown_links(game).map(|e| link(game, an, e)).collect()
}

/// The view's entry for the ball on `p`.
fn ball(game: &Akron, an: &Analysis, p: usize) -> Value {
    let geo = game.geo;
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
}

/// The view's entry for link `e` (one it lists).
fn link(game: &Akron, an: &Analysis, e: usize) -> Value {
    let geo = game.geo;
    let (a, b) = geo.link_ends[e];
    json!({
        "a": geo.names[a as usize],
        "b": geo.names[b as usize],
        "level": geo.level(a as usize),
        "side": side_name(game.cells[a as usize]),
        "cut": !an.linked[e],
    })
}

/// Adds the changes of a list of the view whose length stayed `len`: its changed entries
/// (`changed` of them, `entries` the members), or the whole list (`whole`) when more than
/// half of them changed, which is one member instead of many for about the same JSON.
fn list_changes(
    out: &mut Vec<(String, Value)>,
    entries: Vec<(String, Value)>,
    changed: usize,
    len: usize,
    whole: impl FnOnce() -> (String, Value),
) {
    if changed * 2 > len {
        out.push(whole());
    } else {
        out.extend(entries);
    }
}

/// What the view shows of a board's analysis: who is connected, and the balls (point, cut)
/// and links (link, cut) in the view's order.
struct Shown {
    connected: [bool; 2],
    balls: Vec<(usize, bool)>,
    links: Vec<(usize, bool)>,
}

impl Shown {
    fn of(game: &Akron, an: &Analysis) -> Shown {
        Shown {
            connected: an.connected,
            balls: ball_points(game).map(|p| (p, an.cut[p])).collect(),
            links: shown_links(game).map(|e| (e, !an.linked[e])).collect(),
        }
    }
}

/// The members of [`view`] that differ from `before`'s view (`Game::view_changes`), found
/// from the two boards and their analyses (cut balls, holding links, connections), never
/// from the views: the piles, `swap_available`, `connected`, each changed point of `levels`,
/// and the `balls` and `links` entries that changed. Those two lists are ordered by point
/// and link, so a ball added or a link made or broken shifts every later entry: when a
/// list's length changes the whole list is replaced, otherwise the entries that moved
/// (whole) or changed side or cut (that member), or the whole list when most entries
/// changed. `None` for another board or other options.
pub fn view_changes(game: &Akron, before: &Akron) -> Option<Vec<(String, Value)>> {
    let geo = game.geo;
    if !std::ptr::eq(geo, before.geo)
        || game.pieces != before.pieces
        || game.nodelay != before.nodelay
    {
        return None;
    }
    let mut out = Vec::new();
    for (i, side) in SIDES.iter().enumerate() {
        if game.piles[i] != before.piles[i] {
            out.push((crate::pointer!("piles", side), Value::from(game.piles[i])));
        }
    }
    if swap_available(game) != swap_available(before) {
        out.push(("/swap_available".into(), Value::from(swap_available(game))));
    }
    let points = geo.points;
    if game.cells[..points] == before.cells[..points] {
        // The rest of the view depends on the board alone.
        return Some(out);
    }
    let was = Analysis::with(geo, &before.cells, |an| Shown::of(before, an));
    Analysis::with(geo, &game.cells, |an| {
        for (i, side) in SIDES.iter().enumerate() {
            if an.connected[i] != was.connected[i] {
                out.push((
                    crate::pointer!("connected", side),
                    Value::from(an.connected[i]),
                ));
            }
        }
        for p in 0..points {
            if game.cells[p] != before.cells[p] {
                let (k, i, j) = geo.coord[p];
                out.push((
                    crate::pointer!("levels", k, "rows", j, i),
                    side_name(game.cells[p]),
                ));
            }
        }
        ball_changes(game, before, an, &was, &mut out);
        link_changes(game, before, an, &was, &mut out);
    });
    Some(out)
}

/// The `balls` entries that changed between `before` (shown as `was`) and `game`.
fn ball_changes(
    game: &Akron,
    before: &Akron,
    an: &Analysis,
    was: &Shown,
    out: &mut Vec<(String, Value)>,
) {
    if ball_points(game).count() != was.balls.len() {
        out.push(("/balls".into(), balls(game, an)));
        return;
    }
    let mut entries = Vec::new();
    let mut changed = 0;
    for (at, (&(p0, cut0), p)) in was.balls.iter().zip(ball_points(game)).enumerate() {
        let ops = entries.len();
        if p != p0 {
            entries.push((crate::pointer!("balls", at), ball(game, an, p)));
        } else {
            if game.cells[p] != before.cells[p] {
                entries.push((
                    crate::pointer!("balls", at, "side"),
                    side_name(game.cells[p]),
                ));
            }
            if an.cut[p] != cut0 {
                entries.push((crate::pointer!("balls", at, "cut"), Value::from(an.cut[p])));
            }
        }
        changed += usize::from(entries.len() > ops);
    }
    list_changes(out, entries, changed, was.balls.len(), || {
        ("/balls".into(), balls(game, an))
    });
}

/// The `links` entries that changed between `before` (shown as `was`) and `game`.
fn link_changes(
    game: &Akron,
    before: &Akron,
    an: &Analysis,
    was: &Shown,
    out: &mut Vec<(String, Value)>,
) {
    if shown_links(game).count() != was.links.len() {
        out.push(("/links".into(), links(game, an)));
        return;
    }
    let mut entries = Vec::new();
    let mut changed = 0;
    for (at, (&(e0, cut0), e)) in was.links.iter().zip(shown_links(game)).enumerate() {
        let ops = entries.len();
        if e != e0 {
            entries.push((crate::pointer!("links", at), link(game, an, e)));
        } else {
            let a = game.geo.link_ends[e].0 as usize;
            if game.cells[a] != before.cells[a] {
                entries.push((
                    crate::pointer!("links", at, "side"),
                    side_name(game.cells[a]),
                ));
            }
            let cut = !an.linked[e];
            if cut != cut0 {
                entries.push((crate::pointer!("links", at, "cut"), Value::from(cut)));
            }
        }
        changed += usize::from(entries.len() > ops);
    }
    list_changes(out, entries, changed, was.links.len(), || {
        ("/links".into(), links(game, an))
    });
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
