//! The layout shared by the hex boards (Staku, Akunur): rows of cells, top row first, each
//! cell at its own column.

use serde_json::Value;

use super::{span, Line, Tone};

/// The rows of a hex board's `cells` (objects with `x` and `y`), top row (highest `y`)
/// first and each row left to right (by `x`): every cell starts at the column `start` gives
/// (in characters), padded with spaces up to it, and `cell` appends its spans and answers
/// how many characters they take.
pub(super) fn hex_rows(
    cells: &[Value],
    start: impl Fn(&Value) -> i64,
    mut cell: impl FnMut(&Value, &mut Line) -> i64,
) -> Vec<Line> {
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
            let at = start(c);
            if at > col {
                line.push(span(" ".repeat((at - col) as usize), Tone::Plain));
                col = at;
            }
            col += cell(c, &mut line);
        }
        board.push(line);
    }
    board
}
