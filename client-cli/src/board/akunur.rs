//! Akunur: the 61-cell hexagon, rows 9 (top) to 1, each cell with its name, a mark for its
//! kind (`*` corner with its token, `+` corner whose token is taken, `@` the Still Point)
//! and its stone.

use serde_json::Value;

use super::{marked, per_side, span, Drawing, Line, Sides, Tone};

/// Characters per half cell: a cell is drawn at column `2x - y` in half cells.
const HALF: i64 = 3;

pub(super) fn draw(state: &Value, sides: &Sides, last: &[String]) -> Option<Drawing> {
    let cells = state["cells"].as_array()?;
    let col_of = |c: &Value| 2 * c["x"].as_i64().unwrap_or(0) - c["y"].as_i64().unwrap_or(0);
    let min_col = cells.iter().map(col_of).min()?;
    let mut ys: Vec<i64> = cells.iter().filter_map(|c| c["y"].as_i64()).collect();
    ys.sort_unstable();
    ys.dedup();
    let mut board = Vec::new();
    for &y in ys.iter().rev() {
        let mut row: Vec<&Value> = cells
            .iter()
            .filter(|c| c["y"].as_i64() == Some(y))
            .collect();
        row.sort_by_key(|c| c["x"].as_i64());
        let mut line: Line = Vec::new();
        let mut col = 0i64;
        for c in row {
            let start = (col_of(c) - min_col) * HALF;
            if start > col {
                line.push(span(" ".repeat((start - col) as usize), Tone::Plain));
                col = start;
            }
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
            match c["stone"].as_str() {
                Some(side) => line.push(marked(
                    Sides::letter(side).to_string(),
                    sides.tone(side),
                    mark,
                )),
                None => line.push(marked(".", Tone::Dim, mark)),
            }
            col += (name.len() + 2) as i64;
        }
        board.push(line);
    }
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
    let tokens: Vec<&str> = state["tokens"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
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
