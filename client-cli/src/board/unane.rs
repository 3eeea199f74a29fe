//! Ūnane: a square grid, files `a..` left to right, ranks from the top down.

use serde_json::Value;

use super::{per_side, span, stone, Drawing, Line, Sides, Tone};

/// Draws an Ūnane position.
pub(super) fn draw(state: &Value, sides: &Sides, last: &[String]) -> Option<Drawing> {
    let width = state["width"].as_u64()? as usize;
    let height = state["height"].as_u64()? as usize;
    let rows = state["rows"].as_array()?;
    let files: Vec<char> = (0..width).map(|f| (b'a' + f as u8) as char).collect();
    let file_line = || -> Line {
        let mut l = vec![span("    ", Tone::Dim)];
        for f in &files {
            l.push(span(format!("{f} "), Tone::Dim));
        }
        l
    };
    let mut board = vec![file_line()];
    for (r, row) in rows.iter().enumerate() {
        let rank = height - r;
        let mut line = vec![span(format!("{rank:>3} "), Tone::Dim)];
        for (f, file) in files.iter().enumerate() {
            let name = format!("{file}{rank}");
            let mark = last.contains(&name);
            line.push(stone(row.get(f).and_then(Value::as_str), sides, mark));
            line.push(span(" ", Tone::Plain));
        }
        line.push(span(format!("{rank}"), Tone::Dim));
        board.push(line);
    }
    board.push(file_line());
    let mut facts = vec![
        format!("stones: {}", per_side(&state["stones"], sides)),
        format!("groups: {}", per_side(&state["groups"], sides)),
    ];
    if state["swap_available"].as_bool() == Some(true) {
        facts.push("swap available (type: swap)".into());
    }
    let letters = sides
        .0
        .iter()
        .map(|s| format!("{} {s}", Sides::letter(s)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Drawing {
        board,
        facts,
        legend: format!("{letters}; one group wins"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::draw;
    use super::super::testutil::{text, view};
    use serde_json::json;

    #[test]
    fn draws_the_start_and_a_capture() {
        let (state, sides) = view("unane", json!({"width":5,"height":4}), &["a4xb4"]);
        let d = draw("unane", &state, &sides, &["a4".into(), "b4".into()]);
        let t = text(&d);
        assert!(t.contains("  4 . B B W B 4"), "{t}");
        assert!(t.contains("  1 W B W B W 1"), "{t}");
        assert!(t.contains("    a b c d e"), "{t}");
        assert!(d.board[1].iter().any(|s| s.mark && s.text == "B"));
        assert!(t.contains("swap available"));
    }
}
