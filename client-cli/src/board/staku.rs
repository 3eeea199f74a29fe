//! Staku: the 49-cell hex board, rows `g` (top) to `a`, each cell with its name and its
//! stack written bottom to top (`NW` = a white token on a neutral one).

use serde_json::Value;

use super::hex::hex_rows;
use super::{marked, pad, per_side, span, strings, Drawing, Sides, Tone};

/// Characters per half cell of the drawing grid (`x` in the view counts half cells).
const HALF: i64 = 4;

/// Draws a Staku position.
pub(super) fn draw(state: &Value, sides: &Sides, last: &[String]) -> Option<Drawing> {
    let cells = state["cells"].as_array()?;
    let min_x = cells.iter().filter_map(|c| c["x"].as_i64()).min()?;
    let board = hex_rows(
        cells,
        |c| (c["x"].as_i64().unwrap_or(0) - min_x) * HALF,
        |c, line| {
            let name = c["name"].as_str().unwrap_or("?");
            let mark = last.iter().any(|l| l == name);
            let palace = c["palace"].as_str();
            let name_tone = palace.map_or(Tone::Dim, |p| sides.tone(p));
            line.push(marked(name, name_tone, mark));
            line.push(marked(
                if palace.is_some() { "#" } else { ":" },
                if palace.is_some() {
                    Tone::Special
                } else {
                    Tone::Dim
                },
                mark,
            ));
            let tokens = strings(&c["tokens"]);
            if tokens.is_empty() {
                line.push(marked(pad(".", 3), Tone::Dim, mark));
            } else {
                for t in &tokens {
                    line.push(marked(Sides::letter(t).to_string(), sides.tone(t), mark));
                }
                line.push(span(" ".repeat(3 - tokens.len().min(3)), Tone::Plain));
            }
            (name.len() + 1 + 3) as i64
        },
    );
    let counter = state["no_capture_counter"].as_i64().unwrap_or(0);
    let limit = state["no_capture_limit"].as_i64().unwrap_or(20);
    let facts = vec![
        format!("no-capture counter: {counter}/{limit} (draw at 0)"),
        format!(
            "tokens on board: {}, neutral {}",
            per_side(&state["tokens_on_board"], sides),
            state["tokens_on_board"]["neutral"].as_i64().unwrap_or(0)
        ),
        format!("max stack: {}", state["max_stack"].as_i64().unwrap_or(3)),
    ];
    Some(Drawing {
        board,
        facts,
        legend: "W white, B black, N neutral; stacks bottom to top; # palace".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::draw;
    use super::super::testutil::{text, view};
    use serde_json::json;

    #[test]
    fn draws_the_hex_board_with_names_stacks_and_palaces() {
        let (state, sides) = view("staku", json!({}), &["b1-c1"]);
        let d = draw("staku", &state, &sides, &["b1".into(), "c1".into()]);
        let t = text(&d);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].trim_start().starts_with("g1#B"), "{t}");
        assert!(lines[6].trim_start().starts_with("a1#W"), "{t}");
        assert!(t.contains("c1:NW"), "{t}");
        assert!(t.contains("b1:."), "{t}");
        assert!(t.contains("d4:N"), "{t}");
        assert!(t.contains("no-capture counter: 19/20"), "{t}");
        // Rows are offset like the hexagon: e1 sits half a cell left of d1.
        let col = |row: &str, name: &str| row.find(name).unwrap();
        assert_eq!(col(lines[3], "d1") - col(lines[2], "e1"), 4, "{t}");
        assert!(d.board[4].iter().any(|s| s.mark));
    }
}
