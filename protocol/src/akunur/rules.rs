//! The rules proper: legal actions, capture and echo, the end checks, and legality reasons.

use super::board::{self, Cell, ALL, CORNERS, GUARDED, PLACEMENT};
use super::{Action, Akunur, Key, STONES};
use crate::game::{Outcome, Reason, RulesError};

/// Whether the side to act must place (placement phase or a bonus placement owed).
#[inline]
fn placing(g: &Akunur) -> bool {
    g.bonus || g.in_placement_phase()
}

#[inline]
fn empty(g: &Akunur) -> u64 {
    ALL & !(g.stones[0] | g.stones[1])
}

/// Whether moving a stone of the side to act from `from` into `to` meets the entry
/// condition of corners and the Still Point (at least 2 of `to`'s neighbours other than
/// the origin hold the mover's stones). `own` is the mover's mask before the move.
#[inline]
fn may_enter(own: u64, from: Cell, to: Cell) -> bool {
    to.bit() & GUARDED == 0 || (to.neighbours() & own & !from.bit()).count_ones() >= 2
}

pub(super) fn legal_actions(g: &Akunur, out: &mut Vec<Action>) {
    if g.outcome.is_some() {
        return;
    }
    let empty = empty(g);
    if placing(g) {
        out.extend(board::cells(empty & PLACEMENT).map(Action::Place));
        return;
    }
    let own = g.stones[g.to_act.index()];
    let before = out.len();
    // Corner stones never move.
    for from in board::cells(own & !CORNERS) {
        // A stone on e5 may go to any empty non-corner cell; its ordinary steps (to ring 1,
        // never a corner) are among those, so they are not listed twice.
        let targets = if from.is_still_point() {
            empty & !CORNERS
        } else {
            from.neighbours() & empty
        };
        for to in board::cells(targets) {
            if may_enter(own, from, to) {
                out.push(Action::Move { from, to });
            }
        }
    }
    if out.len() == before {
        out.push(Action::Pass);
    }
}

/// Whether the side to act has any legal action other than a pass (movement phase).
fn can_move(g: &Akunur) -> bool {
    let own = g.stones[g.to_act.index()];
    let empty = empty(g);
    board::cells(own & !CORNERS).any(|from| {
        if from.is_still_point() {
            empty & !CORNERS != 0
        } else {
            board::cells(from.neighbours() & empty).any(|to| may_enter(own, from, to))
        }
    })
}

pub(super) fn check(g: &Akunur, action: Action) -> Result<(), RulesError> {
    if g.outcome.is_some() {
        return Err(RulesError::GameOver);
    }
    let checked = match action {
        Action::Place(cell) => check_place(g, cell),
        Action::Move { from, to } => check_move(g, from, to),
        Action::Pass => check_pass(g),
    };
    // The action's text is written only for a refusal: legal actions are the hot path.
    checked.map_err(|reason| RulesError::illegal(&super::notation::format(action), reason))
}

/// Why placing on `cell` is illegal, if it is.
fn check_place(g: &Akunur, cell: Cell) -> Result<(), String> {
    if !placing(g) {
        return Err(
            "the placement phase is over and no bonus placement is owed; move a stone".into(),
        );
    }
    if g.bonus && g.placed[g.to_act.index()] >= STONES {
        return Err("no stones left in your supply".into());
    }
    if cell.is_still_point() {
        return Err(format!(
            "{cell} is the Still Point; stones are never placed there"
        ));
    }
    if cell.is_corner() {
        return Err(format!("{cell} is a corner; stones are never placed there"));
    }
    if cell.bit() & PLACEMENT == 0 {
        return Err(format!(
            "{cell} is in ring {}; placements go on rings 2 to 4",
            cell.ring()
        ));
    }
    if g.stone_at(cell).is_some() {
        return Err(format!("{cell} is occupied"));
    }
    Ok(())
}

/// Why moving the stone on `from` to `to` is illegal, if it is.
fn check_move(g: &Akunur, from: Cell, to: Cell) -> Result<(), String> {
    if g.bonus {
        return Err("you owe a bonus placement: place a stone".into());
    }
    if g.in_placement_phase() {
        return Err("stones do not move during the placement phase: place a stone".into());
    }
    let own = g.stones[g.to_act.index()];
    if own & from.bit() == 0 {
        return Err(format!("no stone of yours on {from}"));
    }
    if from.is_corner() {
        return Err(format!("the stone on corner {from} never moves"));
    }
    if from == to {
        return Err("a stone must move to another cell".into());
    }
    if g.stone_at(to).is_some() {
        return Err(format!("{to} is occupied"));
    }
    if from.is_still_point() {
        if to.is_corner() {
            return Err(format!(
                "a Still Point exit goes to a non-corner cell; {to} is a corner"
            ));
        }
        return Ok(());
    }
    if from.neighbours() & to.bit() == 0 {
        return Err(format!("{to} is not adjacent to {from}"));
    }
    if !may_enter(own, from, to) {
        let what = if to.is_corner() {
            "corner"
        } else {
            "the Still Point"
        };
        let support = (to.neighbours() & own & !from.bit()).count_ones();
        return Err(format!(
            "entering {what} {to} needs at least 2 of its other neighbours holding your stones (it has {support})"
        ));
    }
    Ok(())
}

/// Why passing is illegal, if it is.
fn check_pass(g: &Akunur) -> Result<(), String> {
    if placing(g) {
        return Err("pass is legal only when you have no other legal action: place a stone".into());
    }
    if can_move(g) {
        return Err("pass is legal only when you have no other legal action".into());
    }
    Ok(())
}

/// What an action did that the end checks need to know.
#[derive(Default)]
struct Effects {
    /// The action cannot be undone (a placement, a capture on a corner or the Still Point,
    /// an echo that removed a stone): it starts a new repetition window (see
    /// `Akunur::history`).
    irreversible: bool,
    /// The mover took a corner's token.
    token_earned: bool,
}

pub(super) fn apply(g: &mut Akunur, action: Action) {
    let prev = g.key();
    let me = g.to_act.index();
    let effects = match action {
        Action::Place(cell) => {
            g.stones[me] |= cell.bit();
            g.placed[me] += 1;
            g.bonus = false;
            g.passes = 0;
            Effects {
                irreversible: true,
                token_earned: false,
            }
        }
        Action::Pass => {
            g.passes += 1;
            Effects::default()
        }
        Action::Move { from, to } => {
            g.passes = 0;
            g.stones[me] ^= from.bit() | to.bit();
            capture(g, me, to)
        }
    };
    end_checks(g, prev, effects);
}

/// Captures around `to` after the side `me` moved there, with their echoes and tokens.
#[inline]
fn capture(g: &mut Akunur, me: usize, to: Cell) -> Effects {
    let opp = 1 - me;
    let own = g.stones[me];
    let mut effects = Effects::default();
    // 1. Every enemy stone next to `to` with 3+ of the mover's stones around it (the mover
    //    plus 2 others), decided on the board right after the move.
    let mut captured = 0u64;
    for s in board::cells(to.neighbours() & g.stones[opp]) {
        if (s.neighbours() & own).count_ones() >= 3 {
            captured |= s.bit();
        }
    }
    if captured == 0 {
        return effects;
    }
    // 2. Lift them all first, so two captured stones can trade places.
    g.stones[opp] &= !captured;
    let mut landing = 0u64;
    for s in board::cells(captured) {
        if s.is_corner() {
            effects.irreversible = true;
            if let Some(k) = s.corner_slot() {
                if g.tokens & (1 << k) != 0 {
                    g.tokens &= !(1 << k);
                    g.scores[me] += 10;
                    effects.token_earned = true;
                }
            }
        } else if s.is_still_point() {
            effects.irreversible = true;
        } else {
            landing |= s.echo().bit();
        }
    }
    // Echo is a bijection, so landings never collide; whatever still stands on a landing
    // cell was not captured and leaves the game, whatever its colour.
    if landing & (g.stones[0] | g.stones[1]) != 0 {
        effects.irreversible = true;
        g.stones[0] &= !landing;
        g.stones[1] &= !landing;
    }
    g.stones[opp] |= landing;
    effects
}

/// The end checks after an action by the side to act, in the page's order; `prev` is the
/// position's key before the action.
#[inline]
fn end_checks(g: &mut Akunur, prev: Key, effects: Effects) {
    let mover = g.to_act;
    let me = mover.index();
    if (g.stones[me] & CORNERS).count_ones() >= g.corners_to_win as u32 {
        g.outcome = Some(Outcome {
            winner: Some(mover),
            reason: Reason::Corners,
        });
        g.to_act = mover.other();
        return;
    }
    if effects.token_earned && g.placed[me] < STONES && empty(g) & PLACEMENT != 0 {
        g.bonus = true;
    } else {
        g.to_act = mover.other();
    }
    if g.passes >= 2 {
        g.outcome = Some(Outcome {
            winner: None,
            reason: Reason::Passes,
        });
        return;
    }
    if effects.irreversible {
        g.history.clear();
        return;
    }
    g.history.push(prev);
    let now = g.key();
    // The current position is one occurrence; the history holds the earlier ones.
    if g.history.iter().filter(|&&k| k == now).count() >= 2 {
        g.outcome = Some(Outcome {
            winner: None,
            reason: Reason::Repetition,
        });
    }
}
