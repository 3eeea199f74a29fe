//! Akunur: the 61-cell hexagon, rows 9 (top) to 1, each cell with its name, a mark for its
//! kind (`*` corner with its token, `+` corner whose token is taken, `@` the Still Point)
//! and its stone.

use serde_json::Value;

use super::hex::hex_rows;
use super::{marked, per_side, stone, strings, Drawing, Sides, Tone};

/// Characters per half cell: a cell is drawn at column `2x - y` in half cells.
const HALF: i64 = 3;

/// Draws an Akunur position.
pub(super) fn draw(state: &Value, sides: &Sides, last: &[String]) -> Option<Drawing> {
    let cells = state["cells"].as_array()?;
    let col_of = |c: &Value| 2 * c["x"].as_i64().unwrap_or(0) - c["y"].as_i64().unwrap_or(0);
    let min_col = cells.iter().map(col_of).min()?;
    let board = hex_rows(
        cells,
        |c| (col_of(c) - min_col) * HALF,
        |c, line| {
            let name = c["name"].as_str().unwrap_or("?");
            let mark = last.iter().any(|l| l == name);
            let (sep, special) = match c["kind"].as_str() {
                Some("corner") if c["token"].as_bool() == Some(true) => ("*", true),
                Some("corner") => ("+", true),
                Some("still_point") => ("@", true),
                _ => (":", false),
            };
            let tone = if special { Tone::Special } else { Tone::Dim };
            line.push(marked(name, tone, mark));
            line.push(marked(sep, tone, mark));
            line.push(stone(c["stone"].as_str(), sides, mark));
            (name.len() + 2) as i64
        },
    );
    let mut facts = vec![
        format!(
            "phase: {}; corners held: {} (to win: {})",
            state["phase"].as_str().unwrap_or("?"),
            per_side(&state["corners_held"], sides),
            state["corners_to_win"].as_i64().unwrap_or(3)
        ),
        format!("scores: {}", per_side(&state["scores"], sides)),
        format!(
            "stones placed: {}; supply: {}",
            per_side(&state["placed"], sides),
            per_side(&state["supply"], sides)
        ),
    ];
    let tokens = strings(&state["tokens"]);
    facts.push(format!(
        "corner tokens left: {}",
        if tokens.is_empty() {
            "none".to_string()
        } else {
            tokens.join(" ")
        }
    ));
    if state["bonus_pending"].as_bool() == Some(true) {
        facts.push("bonus placement pending".into());
    }
    if state["passes"].as_i64().unwrap_or(0) > 0 {
        facts.push("the last action was a pass".into());
    }
    Some(Drawing {
        board,
        facts,
        legend: "L light, D dark; * corner with token, + corner, @ Still Point".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::draw;
    use super::super::testutil::{text, view};
    use serde_json::json;

    #[test]
    fn draws_the_hexagon_with_corners_tokens_and_still_point() {
        let (state, sides) = view("akunur", json!({}), &["c3", "g7"]);
        let d = draw("akunur", &state, &sides, &["g7".into()]);
        let t = text(&d);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].trim_start().starts_with("e9*."), "{t}");
        assert!(lines[4].trim_start().starts_with("a5*."), "{t}");
        assert!(lines[8].trim_start().starts_with("a1*."), "{t}");
        assert!(t.contains("e5@."), "{t}");
        assert!(t.contains("c3:L"), "{t}");
        assert!(t.contains("g7:D"), "{t}");
        assert!(t.contains("i5*."), "{t}");
        // The hexagon: row 5 is the widest and starts 4 half cells left of row 9.
        assert_eq!(
            lines[0].find("e9").unwrap() - lines[4].find("a5").unwrap(),
            12,
            "{t}"
        );
        assert!(t.contains("corner tokens left: a1 e1 i5 i9 e9 a5"), "{t}");
    }
}
