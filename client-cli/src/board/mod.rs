//! Text renderers of each game's board, from the document's `state` (the engine's view).
//!
//! Why styled text of our own: the same drawing serves the terminal UI (colours, last-move
//! highlight) and plain mode (the bare characters, for scripts and screen readers), so both
//! always show the same board. The drawings carry every fact in characters (letters for
//! sides, marks for palaces and corners); colour only repeats it.

mod akron;
mod akunur;
mod hex;
mod staku;
mod unane;

use serde_json::Value;

/// What a piece of text stands for; the terminal UI picks a colour per tone.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Ordinary text.
    Plain,
    /// Labels, empty cells, cell names.
    Dim,
    /// The side that acts first.
    First,
    /// The side that acts second.
    Second,
    /// Neutral pieces (Staku).
    Neutral,
    /// Special cells: palaces, corners, the Still Point.
    Special,
    /// Cut links and cut balls (Akron).
    Cut,
}

/// A run of text with one tone; `mark` highlights it as part of the last move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The characters.
    pub text: String,
    /// What they stand for.
    pub tone: Tone,
    /// Part of the last move.
    pub mark: bool,
}

/// One line of a drawing.
pub type Line = Vec<Span>;

pub(crate) fn span(text: impl Into<String>, tone: Tone) -> Span {
    Span {
        text: text.into(),
        tone,
        mark: false,
    }
}

pub(crate) fn marked(text: impl Into<String>, tone: Tone, mark: bool) -> Span {
    Span {
        text: text.into(),
        tone,
        mark,
    }
}

/// A cell's stone: the letter of its side, or `.` when empty.
pub(crate) fn stone(side: Option<&str>, sides: &Sides, mark: bool) -> Span {
    match side {
        Some(side) => marked(Sides::letter(side).to_string(), sides.tone(side), mark),
        None => marked(".", Tone::Dim, mark),
    }
}

/// The strings of a JSON array (a cell's tokens, the corner tokens left); none for
/// anything else.
pub(crate) fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Side names of the game, first-acting side first, and helpers over them.
#[derive(Clone, Debug)]
pub struct Sides(pub Vec<String>);

impl Sides {
    /// The tone of a side name (`Neutral` for `neutral`, `Plain` when unknown).
    pub fn tone(&self, side: &str) -> Tone {
        if self.0.first().map(String::as_str) == Some(side) {
            Tone::First
        } else if self.0.get(1).map(String::as_str) == Some(side) {
            Tone::Second
        } else if side == "neutral" {
            Tone::Neutral
        } else {
            Tone::Plain
        }
    }

    /// The one-letter symbol of a side: its initial, upper case (B/W, V/H, L/D, N).
    pub fn letter(side: &str) -> char {
        side.chars()
            .next()
            .map(|c| c.to_ascii_uppercase())
            .unwrap_or('?')
    }
}

/// A rendered board: the drawing, then facts about the position (counters, piles …).
#[derive(Clone, Debug, Default)]
pub struct Drawing {
    /// The board itself.
    pub board: Vec<Line>,
    /// One line per fact, e.g. `no-capture counter 18/20`.
    pub facts: Vec<String>,
    /// What the symbols mean.
    pub legend: String,
}

/// The geometry of `kind` with `options` (computed locally by the rules engine: it is not in
/// game documents) merged member by member with a document's `state`: what the renderers
/// draw from.
pub fn drawable(kind: &str, options: &Value, state: &Value) -> Value {
    let mut merged = stoa_protocol::kind(kind)
        .and_then(|k| k.start(options))
        .map(|g| g.geometry())
        .unwrap_or(Value::Null);
    merge(&mut merged, state);
    merged
}

/// A position's own geometry (from the game itself: a practice position's board size may
/// differ from its options') merged with its view, as [`drawable`] does for a document.
pub fn drawable_on(mut geometry: Value, state: &Value) -> Value {
    merge(&mut geometry, state);
    geometry
}

/// Merges `add` into `base`: objects key by key, arrays of equal length element by element,
/// anything else replaced.
fn merge(base: &mut Value, add: &Value) {
    match (base, add) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, v) in a {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() == b.len() => {
            for (slot, v) in b.iter_mut().zip(a) {
                merge(slot, v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// Draws the board of a game of `kind` from its drawable state (see [`drawable`]). `last`
/// lists the cells of the last move (lower case) to highlight.
pub fn draw(kind: &str, state: &Value, sides: &Sides, last: &[String]) -> Drawing {
    let drawing = match kind {
        "unane" => unane::draw(state, sides, last),
        "staku" => staku::draw(state, sides, last),
        "akron" => akron::draw(state, sides, last),
        "akunur" => akunur::draw(state, sides, last),
        _ => None,
    };
    drawing.unwrap_or_else(|| Drawing {
        board: vec![vec![span(
            format!("(no drawing for game kind '{kind}'; position in the status)"),
            Tone::Dim,
        )]],
        facts: Vec::new(),
        legend: String::new(),
    })
}

/// The characters of a line, without styling.
pub fn line_text(line: &Line) -> String {
    line.iter().map(|s| s.text.as_str()).collect()
}

/// The board and facts as plain text lines (trailing spaces trimmed).
pub fn plain_lines(d: &Drawing) -> Vec<String> {
    let mut out: Vec<String> = d
        .board
        .iter()
        .map(|l| line_text(l).trim_end().to_string())
        .collect();
    out.extend(d.facts.iter().cloned());
    out
}

/// Pads `text` to `width` characters (by chars, all drawings are ASCII).
pub(crate) fn pad(text: &str, width: usize) -> String {
    format!("{text:<width$}")
}

pub(crate) fn per_side(v: &Value, sides: &Sides) -> String {
    sides
        .0
        .iter()
        .map(|s| format!("{s} {}", v[s.as_str()].as_i64().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// The drawable view of a game after some moves, straight from the engine (its view
    /// merged with its geometry).
    pub fn view(kind: &str, options: Value, moves: &[&str]) -> (Value, Sides) {
        let k = stoa_protocol::kind(kind).unwrap();
        let mut g = k.start(&options).unwrap();
        for m in moves {
            g.play(m).unwrap();
        }
        (
            drawable(kind, &k.validate_options(&options).unwrap(), &g.view()),
            Sides(k.side_names.iter().map(|s| s.to_string()).collect()),
        )
    }

    pub fn text(d: &Drawing) -> String {
        plain_lines(d).join("\n")
    }
}

#[cfg(test)]
mod print {
    use super::testutil::{text, view};
    use super::*;
    use serde_json::json;

    /// `cargo test -p stoa-cli print_boards -- --ignored --nocapture` prints a sample of each
    /// drawing (for eyeballing and documentation).
    #[test]
    #[ignore]
    fn print_boards() {
        let samples: [(&str, Value, &[&str]); 4] = [
            ("unane", json!({}), &["a7xb7", "d7xc7", "b7xc7"]),
            ("staku", json!({}), &["b1-c1+d1", "f2-e2", "b3-c3"]),
            (
                "akron",
                json!({"size": 5}),
                &[
                    "A1", "E5", "B1", "E4", "A2", "D5", "B2", "D4", "C1", "C3", "C1-A2'",
                ],
            ),
            ("akunur", json!({}), &["c3", "g7", "d3", "f7", "c4"]),
        ];
        for (kind, options, moves) in samples {
            let (state, sides) = view(kind, options, moves);
            let last = moves
                .last()
                .map(|m| crate::document::cells_in_move(m))
                .unwrap_or_default();
            let d = draw(kind, &state, &sides, &last);
            println!("--- {kind} ---\n{}\n{}\n", text(&d), d.legend);
        }
    }
}
