//! Legality of one given turn, with a human reason when it is not legal.
//!
//! This walks the turn directly instead of generating all ~400 turns, so checking a move
//! from the network is cheap and the error says exactly what is wrong.

use super::action::Action;
use super::board::{cell_name, line_between, CELLS, NEIGHBOURS};
use super::movegen::second_sizes;
use super::stack::{Landing, LandingError, Stack};
use super::Staku;
use crate::game::{Game, Side};

fn side_name(side: Side) -> &'static str {
    Staku::SIDE_NAMES[side.index()]
}

fn op(k: u8) -> &'static str {
    match k {
        1 => "- (1 token)",
        2 => "+ (2 tokens)",
        _ => "* (3 tokens)",
    }
}

impl Staku {
    /// `Ok` when the turn is legal for the side to act (the game being on), else why not.
    pub(crate) fn explain(&self, a: Action) -> Result<(), String> {
        let me = self.to_act;
        let (landed, kind) = self.explain_move(&self.board, me, a.from, a.k, a.to)?;
        let Some((k2, to2)) = a.second() else {
            return Ok(());
        };
        let (sizes, n) = second_sizes(a.k, kind, landed.height());
        let d = cell_name(a.to);
        if n == 0 {
            return Err(format!(
                "no second move after a single token moves onto an empty cell or captures (first move ended on {d})"
            ));
        }
        let allowed = &sizes[..n];
        if !allowed.contains(&k2) {
            let list: Vec<&str> = allowed.iter().map(|&k| op(k)).collect();
            return Err(format!(
                "the second move from {d} may only lift {}",
                list.join(" or ")
            ));
        }
        let mut after = self.board;
        let (_, rest) = after[a.from as usize].lift(a.k);
        after[a.from as usize] = rest;
        after[a.to as usize] = landed;
        self.explain_move(&after, me, a.to, k2, to2).map(|_| ())
    }

    /// One move of `k` tokens from `from` to `to` on `board` by `me`.
    fn explain_move(
        &self,
        board: &[Stack; CELLS],
        me: Side,
        from: u8,
        k: u8,
        to: u8,
    ) -> Result<(Stack, Landing), String> {
        let (f, t) = (cell_name(from), cell_name(to));
        let cell = board[from as usize];
        match cell.owner() {
            _ if cell.is_empty() => return Err(format!("no token on {f}")),
            None => {
                return Err(format!(
                    "{f} holds only neutral tokens; you move units topped by {}",
                    side_name(me)
                ))
            }
            Some(o) if o != me => {
                return Err(format!(
                    "the top token on {f} is {}, not yours ({})",
                    side_name(o),
                    side_name(me)
                ))
            }
            Some(_) => {}
        }
        if k > cell.height() {
            return Err(format!(
                "{f} holds {} token{}: cannot lift {k}",
                cell.height(),
                if cell.height() == 1 { "" } else { "s" }
            ));
        }
        let Some((dir, dist)) = line_between(from, to) else {
            return Err(if from == to {
                format!("a move must leave {f}")
            } else {
                format!("{t} is not in a straight line from {f}")
            });
        };
        if dist > k {
            return Err(if k == 1 {
                format!("a unit of 1 moves exactly 1 cell; {t} is {dist} cells from {f}")
            } else {
                format!("a unit of {k} moves at most {k} cells; {t} is {dist} cells from {f}")
            });
        }
        let mut c = from;
        for _ in 1..dist {
            c = NEIGHBOURS[c as usize][dir];
            if !board[c as usize].is_empty() {
                return Err(format!("path blocked at {}", cell_name(c)));
            }
        }
        let (unit, _) = cell.lift(k);
        let target = board[to as usize];
        unit.land(target, self.max_stack).map_err(|e| match e {
            LandingError::TooTall => format!(
                "stacking on {t} would make {} tokens (max_stack {})",
                target.height() + k,
                self.max_stack
            ),
            LandingError::NeutralAbove => format!(
                "cannot stack onto {t}: a neutral token would stand above a {} token",
                side_name(me)
            ),
        })
    }
}
