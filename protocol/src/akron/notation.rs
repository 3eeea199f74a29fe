//! Point names (`D4'`) and action notation (`F6`, `A2-D3'`, `swap`).

use super::geometry::Geometry;

/// Parses a point name (case-insensitive, no surrounding whitespace) on a board: column
/// letter, the number j + k + 1 (no leading zeros), then k apostrophes. Returns the point
/// index, or a message saying what is wrong.
pub fn parse_point(geo: &Geometry, text: &str) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let Some(&letter) = bytes.first() else {
        return Err("empty point name".to_string());
    };
    if !letter.is_ascii_alphabetic() {
        return Err(format!(
            "'{text}' is not a point name (expected a column letter, a number and apostrophes, e.g. D4')"
        ));
    }
    let i = (letter.to_ascii_uppercase() - b'A') as usize;
    let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(format!(
            "'{text}' has no row number after the column letter"
        ));
    }
    let number_text = &text[1..1 + digits];
    if number_text.starts_with('0') {
        return Err(format!(
            "'{text}': row numbers start at 1 without leading zeros"
        ));
    }
    let rest = &text[1 + digits..];
    if let Some(bad) = rest.chars().find(|&c| c != '\'') {
        return Err(format!(
            "'{text}': unexpected '{}' after the row number (only apostrophes may follow)",
            bad.escape_default()
        ));
    }
    let k = rest.len();
    let number: usize = match number_text.parse() {
        Ok(v) if digits <= 4 => v,
        _ => return Err(format!("no point {text} on a {0}x{0} board", geo.n)),
    };
    let n = geo.n;
    if k >= n || number < k + 1 {
        return Err(format!("no point {text} on a {n}x{n} board"));
    }
    let j = number - k - 1;
    geo.checked_index(k, i, j)
        .ok_or_else(|| format!("no point {text} on a {n}x{n} board"))
}
