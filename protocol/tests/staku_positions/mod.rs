//! Staku position strings written from the cells that matter, shared by the Staku tests.

/// Cells per row, `a` (the bottom row) to `g`.
const ROW_LEN: [usize; 7] = [6, 7, 8, 7, 8, 7, 6];

/// A position string from `(cell, tokens)` pairs; every other cell is empty.
pub fn pos(cells: &[(&str, &str)], side: &str, counter: u8) -> String {
    let rows: Vec<String> = (0..7)
        .rev()
        .map(|r| {
            let letter = (b'a' + r as u8) as char;
            (1..=ROW_LEN[r])
                .map(|i| {
                    let name = format!("{letter}{i}");
                    cells
                        .iter()
                        .find(|(c, _)| *c == name)
                        .map_or(".", |(_, t)| *t)
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    format!("{} {side} {counter}", rows.join("/"))
}
