//! The position string:
//! `<rows> <to-act> <placed-light>,<placed-dark> <tokens> <score-light>,<score-dark> <bonus> <passes>`.

use super::board::{self, Cell, PLACEMENT};
use super::{Akunur, Options, PLACEMENT_PHASE_STONES, STONES};
use crate::game::{Outcome, Reason, RulesError, Side};

/// The canonical position string.
pub(super) fn format(g: &Akunur) -> String {
    let mut s = String::with_capacity(100);
    for y in (0..9).rev() {
        if y != 8 {
            s.push('/');
        }
        for x in 0..9 {
            if let Some(c) = Cell::from_xy(x, y) {
                s.push(match g.stone_at(c) {
                    Some(Side::First) => 'L',
                    Some(Side::Second) => 'D',
                    None => '.',
                });
            }
        }
    }
    let tokens: String = (0..6)
        .map(|k| if g.tokens & (1 << k) != 0 { '1' } else { '0' })
        .collect();
    s.push_str(&format!(
        " {} {},{} {} {},{} {} {}",
        if g.to_act == Side::First { 'l' } else { 'd' },
        g.placed[0],
        g.placed[1],
        tokens,
        g.scores[0],
        g.scores[1],
        g.bonus as u8,
        g.passes
    ));
    s
}

const FORMAT: &str = "expected '<rows> <to-act> <placed-light>,<placed-dark> <tokens> <score-light>,<score-dark> <bonus> <passes>' separated by single spaces";

fn err(reason: impl Into<String>) -> RulesError {
    RulesError::position(reason)
}

/// A small decimal number: digits only (no sign, no leading zero), at most 3 of them.
fn number(field: &str, text: &str) -> Result<u32, RulesError> {
    if text.is_empty()
        || text.len() > 3
        || !text.bytes().all(|b| b.is_ascii_digit())
        || (text.len() > 1 && text.starts_with('0'))
    {
        return Err(err(format!("{field} must be a number, got '{text}'")));
    }
    text.parse()
        .map_err(|_| err(format!("{field} must be a number, got '{text}'")))
}

fn pair(field: &str, text: &str) -> Result<[u32; 2], RulesError> {
    let (a, b) = text.split_once(',').ok_or_else(|| {
        err(format!(
            "{field} must be two numbers 'light,dark', got '{text}'"
        ))
    })?;
    Ok([number(field, a)?, number(field, b)?])
}

/// Parses and checks a position string; never panics.
pub(super) fn parse(options: &Options, text: &str) -> Result<Akunur, RulesError> {
    let fields = split_fields(text)?;
    let stones = parse_board(fields[0])?;
    let to_act = match fields[1] {
        "l" => Side::First,
        "d" => Side::Second,
        other => {
            return Err(err(format!(
                "the player to act must be 'l' or 'd', got '{other}'"
            )))
        }
    };

    let placed = parse_placed(fields[2], stones)?;
    let tokens = parse_tokens(fields[3])?;
    let scores = parse_scores(fields[4])?;

    let bonus = match fields[5] {
        "0" => false,
        "1" => true,
        other => return Err(err(format!("bonus must be '0' or '1', got '{other}'"))),
    };
    let passes = match fields[6] {
        "0" => 0u8,
        "1" => 1,
        // Two consecutive passes is how the string records a game drawn by passes.
        "2" => 2,
        other => {
            return Err(err(format!(
                "passes must be 0 or 1 (2 once the game is drawn by passes), got '{other}'"
            )))
        }
    };

    check_phase(stones, to_act, placed, bonus, passes)?;
    let outcome = (passes == 2).then_some(Outcome {
        winner: None,
        reason: Reason::Passes,
    });
    Ok(Akunur {
        stones,
        to_act,
        placed,
        tokens,
        scores,
        bonus,
        passes,
        corners_to_win: options.corners_to_win,
        outcome,
        history: Vec::new(),
    })
}

/// The placed counts ('light,dark'): at most the supply, at least the stones on the board.
fn parse_placed(field: &str, stones: [u64; 2]) -> Result<[u8; 2], RulesError> {
    let placed = pair("placed counts", field)?;
    for (side, &p) in ["light", "dark"].iter().zip(&placed) {
        if p > STONES as u32 {
            return Err(err(format!(
                "{side} has placed {p} stones, but each player has only {STONES}"
            )));
        }
    }
    let placed = [placed[0] as u8, placed[1] as u8];
    for (i, side) in ["light", "dark"].iter().enumerate() {
        let on_board = stones[i].count_ones();
        if on_board > placed[i] as u32 {
            return Err(err(format!(
                "{side} has {on_board} stones on the board but has placed only {}",
                placed[i]
            )));
        }
    }
    Ok(placed)
}

/// The corner tokens left: six '1'/'0' for a1, e1, i5, i9, e9, a5, as a bit set.
fn parse_tokens(tok: &str) -> Result<u8, RulesError> {
    if tok.len() != 6 || !tok.bytes().all(|b| b == b'0' || b == b'1') {
        return Err(err(format!(
            "tokens must be six '1'/'0' for the corners a1, e1, i5, i9, e9, a5, got '{tok}'"
        )));
    }
    Ok(tok
        .bytes()
        .enumerate()
        .fold(0u8, |m, (k, b)| if b == b'1' { m | 1 << k } else { m }))
}

/// The scores ('light,dark'): multiples of 10 up to 60.
fn parse_scores(field: &str) -> Result<[u8; 2], RulesError> {
    let scores = pair("scores", field)?;
    for (side, &s) in ["light", "dark"].iter().zip(&scores) {
        if s % 10 != 0 || s > 60 {
            return Err(err(format!(
                "{side}'s score must be a multiple of 10 from 0 to 60 (10 per token), got {s}"
            )));
        }
    }
    Ok([scores[0] as u8, scores[1] as u8])
}

/// The seven space-separated fields of a position string.
fn split_fields(text: &str) -> Result<Vec<&str>, RulesError> {
    let fields: Vec<&str> = text.trim().split(' ').collect();
    if fields.len() > 1 {
        if let Some(i) = fields.iter().position(|f| f.is_empty()) {
            return Err(err(format!(
                "field {} is empty (fields are separated by single spaces); {FORMAT}",
                i + 1
            )));
        }
    }
    if fields.len() != 7 {
        return Err(err(format!("{FORMAT}; found {} field(s)", fields.len())));
    }

    Ok(fields)
}

/// The stones of the board field: rows 9 down to 1, separated by '/'.
fn parse_board(field: &str) -> Result<[u64; 2], RulesError> {
    let rows: Vec<&str> = field.split('/').collect();
    if rows.len() != 9 {
        return Err(err(format!(
            "the board must have 9 rows separated by '/', found {}",
            rows.len()
        )));
    }
    let mut stones = [0u64; 2];
    for (i, row) in rows.iter().enumerate() {
        let y = 8 - i as i32;
        let cells: Vec<Cell> = (0..9).filter_map(|x| Cell::from_xy(x, y)).collect();
        if row.chars().count() != cells.len() {
            return Err(err(format!(
                "row {} must have {} cells, found {} ('{row}')",
                y + 1,
                cells.len(),
                row.chars().count()
            )));
        }
        for (c, ch) in cells.iter().zip(row.chars()) {
            match ch {
                'L' => stones[0] |= c.bit(),
                'D' => stones[1] |= c.bit(),
                '.' => {}
                other => {
                    return Err(err(format!(
                        "cell {c} holds '{other}'; cells are 'L' (light), 'D' (dark) or '.' (empty)"
                    )))
                }
            }
        }
    }
    Ok(stones)
}

/// Whether the counts, the bonus and the passes can occur together: who acts in the
/// placement phase follows from the counts, and a bonus placement needs a supply, an empty
/// placement cell and no pass.
fn check_phase(
    stones: [u64; 2],
    to_act: Side,
    placed: [u8; 2],
    bonus: bool,
    passes: u8,
) -> Result<(), RulesError> {
    let total = placed[0] + placed[1];
    let me = to_act.index();
    let empty = board::ALL & !(stones[0] | stones[1]);
    if total < PLACEMENT_PHASE_STONES {
        // Light places first and the players alternate, so the counts decide who is to act.
        let expected = if placed[0] == placed[1] {
            Some(Side::First)
        } else if placed[0] == placed[1] + 1 {
            Some(Side::Second)
        } else {
            None
        };
        match expected {
            None => {
                return Err(err(format!(
                    "in the placement phase the players alternate from light, so placed counts {},{} cannot occur",
                    placed[0], placed[1]
                )))
            }
            Some(side) if side != to_act => {
                return Err(err(format!(
                    "in the placement phase with placed counts {},{} it is {} to act",
                    placed[0],
                    placed[1],
                    if side == Side::First { "light (l)" } else { "dark (d)" }
                )))
            }
            Some(_) => {}
        }
        if bonus {
            return Err(err("no bonus placement can be owed in the placement phase"));
        }
        if passes != 0 {
            return Err(err(
                "nobody passes in the placement phase, so passes must be 0",
            ));
        }
    }
    if bonus {
        if placed[me] >= STONES {
            return Err(err(
                "a bonus placement is owed but the player to act has no supply left",
            ));
        }
        if empty & PLACEMENT == 0 {
            return Err(err(
                "a bonus placement is owed but no placement cell is empty",
            ));
        }
        if passes != 0 {
            return Err(err(
                "a bonus placement follows a capture, so passes must be 0 when bonus is 1",
            ));
        }
    }

    Ok(())
}
