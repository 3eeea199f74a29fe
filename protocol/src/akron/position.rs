//! Position strings: `<size> <to-act> <vert-pile>,<horz-pile> <ply> <vert-balls> <horz-balls>`.

use crate::game::{Outcome, Reason, RulesError, Side};

use super::connection::{Analysis, EMPTY};
use super::geometry::{MAX_SIZE, MIN_SIZE, NONE};
use super::notation::parse_point;
use super::options::{Options, MAX_PIECES};
use super::Akron;

/// The canonical position string: balls by level, then row, then column.
pub fn format(game: &Akron) -> String {
    let list = |colour: u8| {
        let names: Vec<&str> = (0..game.geo.points)
            .filter(|&p| game.cells[p] == colour)
            .map(|p| game.geo.names[p].as_str())
            .collect();
        if names.is_empty() {
            "-".to_string()
        } else {
            names.join(",")
        }
    };
    format!(
        "{} {} {},{} {} {} {}",
        game.geo.n,
        if game.to_move == Side::First {
            'v'
        } else {
            'h'
        },
        game.piles[0],
        game.piles[1],
        game.ply,
        list(1),
        list(2)
    )
}

/// A decimal number as the position string writes it: digits only, no sign, no leading
/// zero (as the other games' strings).
fn number(field: &str, text: &str) -> Result<u64, RulesError> {
    if text.is_empty()
        || text.len() > 9
        || !text.bytes().all(|b| b.is_ascii_digit())
        || (text.len() > 1 && text.starts_with('0'))
    {
        return Err(RulesError::position(format!(
            "{field} must be a non-negative integer, got '{text}'"
        )));
    }
    text.parse()
        .map_err(|_| RulesError::position(format!("{field} '{text}' is not a number")))
}

/// Parses a position string (surrounding whitespace ignored; fields separated by single
/// spaces; ball lists in any order, names case-insensitive).
///
/// The string is self-describing: its size is the board size even when it differs from
/// `options.size`. When the sizes agree, each colour's balls plus pile may not exceed
/// `options.pieces`; otherwise the limit is 1000 (the largest pile allowed): a string of
/// another size is taken as it is written, piles included.
///
/// A position whose side to act has no legal action is where play would have ended (the
/// page's fourth end check, "if Q has no legal action, Q loses"): it loads as that ended
/// game, not as one nobody can go on with. No other end is decided on loading.
pub fn parse(options: &Options, text: &str) -> Result<Akron, RulesError> {
    let fields: Vec<&str> = text.trim().split(' ').collect();
    if fields.len() != 6 || fields.iter().any(|f| f.is_empty()) {
        return Err(RulesError::position(format!(
            "expected 6 fields separated by single spaces \
             (<size> <to-act> <vert-pile>,<horz-pile> <ply> <vert-balls> <horz-balls>), got '{}'",
            text.trim()
        )));
    }
    let size = number("size", fields[0])? as usize;
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        return Err(RulesError::position(format!(
            "size must be in {MIN_SIZE}..={MAX_SIZE}, got {size}"
        )));
    }
    let to_move = match fields[1] {
        "v" => Side::First,
        "h" => Side::Second,
        other => {
            return Err(RulesError::position(format!(
                "the side to act must be 'v' or 'h', got '{other}'"
            )))
        }
    };
    let Some((vp, hp)) = fields[2].split_once(',') else {
        return Err(RulesError::position(format!(
            "piles must be '<vert-pile>,<horz-pile>', got '{}'",
            fields[2]
        )));
    };
    let piles = [number("vert pile", vp)?, number("horz pile", hp)?];
    let ply = number("ply", fields[3])?;
    if ply > u32::MAX as u64 / 2 {
        return Err(RulesError::position(format!("ply {ply} is too large")));
    }

    let mut game = Akron::empty(options, size);
    let counts = place_balls(&mut game, fields[4], fields[5])?;
    let limit = if size == options.size as usize {
        options.pieces() as u64
    } else {
        MAX_PIECES as u64
    };
    for side in 0..2 {
        let who = if side == 0 { "vert" } else { "horz" };
        if counts[side] + piles[side] > limit {
            return Err(RulesError::position(format!(
                "{who} has {} balls on the board and {} in the pile, more than the {limit} pieces",
                counts[side], piles[side]
            )));
        }
    }
    game.piles = [piles[0] as u32, piles[1] as u32];
    game.to_move = to_move;
    game.ply = ply as u32;
    game.hash = game.zobrist_all();
    game.history = vec![game.hash];
    if !game.can_add_or_swap()
        && Analysis::with(game.geo, &game.cells, |an| !game.has_legal_action(an))
    {
        game.outcome = Some(Outcome {
            winner: Some(to_move.other()),
            reason: Reason::NoMoves,
        });
    }
    Ok(game)
}

/// Puts the listed balls (`-` for none) on an empty board and checks each one is
/// supported; answers how many balls each side has on the board.
fn place_balls(game: &mut Akron, vert: &str, horz: &str) -> Result<[u64; 2], RulesError> {
    let geo = game.geo;
    let mut counts = [0u64; 2];
    for (side, list) in [(0usize, vert), (1usize, horz)] {
        if list == "-" {
            continue;
        }
        let who = if side == 0 { "vert" } else { "horz" };
        for name in list.split(',') {
            let p = parse_point(geo, name)
                .map_err(|e| RulesError::position(format!("{who} balls: {e}")))?;
            if game.cells[p] != EMPTY {
                return Err(RulesError::position(format!(
                    "{} is listed twice",
                    geo.names[p]
                )));
            }
            game.cells[p] = side as u8 + 1;
            counts[side] += 1;
        }
    }
    for p in geo.holes()..geo.points {
        if game.cells[p] == EMPTY {
            continue;
        }
        if let Some(&s) = geo.below[p]
            .iter()
            .find(|&&s| s != NONE && game.cells[s as usize] == EMPTY)
        {
            return Err(RulesError::position(format!(
                "the ball on {} is not supported: {} under it is empty",
                geo.names[p], geo.names[s as usize]
            )));
        }
    }
    Ok(counts)
}
