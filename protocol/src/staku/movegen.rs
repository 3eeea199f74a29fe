//! Move generation and application: whole turns of one or two moves.

use super::action::Action;
use super::board::{BLACK_PALACES, CELLS, NEIGHBOURS, NONE, WHITE_PALACES};
use super::stack::{Landing, Stack};
use super::{Staku, COUNTER_START};
use crate::game::{Outcome, Reason, Side};

/// Calls `f(to)` for every legal landing of `k` tokens lifted from `from` (range `k`, straight
/// lines, every passed cell empty), with the resulting landing cell contents and kind.
#[inline]
fn for_each_landing(
    board: &[Stack; CELLS],
    from: u8,
    k: u8,
    max_stack: u8,
    mut f: impl FnMut(u8, Stack, Landing),
) {
    let (unit, _) = board[from as usize].lift(k);
    // `dir` indexes the neighbour table of each successive cell along the line.
    #[allow(clippy::needless_range_loop)]
    for dir in 0..6 {
        let mut t = from;
        for _ in 0..k {
            t = NEIGHBOURS[t as usize][dir];
            if t == NONE {
                break;
            }
            let target = board[t as usize];
            if let Ok((landed, kind)) = unit.land(target, max_stack) {
                f(t, landed, kind);
            }
            if !target.is_empty() {
                break;
            }
        }
    }
}

/// The second-move unit sizes allowed after a first move of `k` tokens that landed with
/// `kind`, leaving `height` tokens on the landing cell. Never lists a size twice: after a
/// stacking of 2+ tokens the cell holds 3, so "whole" (3) and "unstack" (1, 2) differ.
#[inline]
pub(crate) fn second_sizes(k: u8, kind: Landing, height: u8) -> ([u8; 3], usize) {
    let mut sizes = [0u8; 3];
    let mut n = 0;
    if kind == Landing::Stack {
        sizes[n] = height;
        n += 1;
    }
    if k >= 2 {
        sizes[n] = 1;
        n += 1;
        if height == 3 {
            sizes[n] = 2;
            n += 1;
        }
    }
    (sizes, n)
}

impl Staku {
    /// Calls `f` once for every legal turn (nothing once the game has ended).
    pub(crate) fn for_each_turn(&self, mut f: impl FnMut(Action)) {
        if self.outcome.is_some() {
            return;
        }
        let me = self.to_act;
        let max = self.max_stack;
        for from in 0..CELLS as u8 {
            let cell = self.board[from as usize];
            if cell.owner() != Some(me) {
                continue;
            }
            for k in 1..=cell.height() {
                let (_, rest) = cell.lift(k);
                for_each_landing(&self.board, from, k, max, |to, landed, kind| {
                    let first = Action::single(from, k, to);
                    f(first);
                    let (sizes, n) = second_sizes(k, kind, landed.height());
                    if n == 0 {
                        return;
                    }
                    let mut after = self.board;
                    after[from as usize] = rest;
                    after[to as usize] = landed;
                    for &k2 in &sizes[..n] {
                        for_each_landing(&after, to, k2, max, |to2, _, _| f(first.then(k2, to2)));
                    }
                });
            }
        }
    }

    /// Whether `side` has at least one legal turn. A one-cell move exists whenever any move
    /// does (a longer move passes over an empty neighbour, where a single token can land),
    /// so only distance 1 is tried.
    pub(crate) fn has_turn(&self, side: Side) -> bool {
        (0..CELLS).any(|from| {
            let cell = self.board[from];
            cell.owner() == Some(side)
                && (1..=cell.height()).any(|k| {
                    let (unit, _) = cell.lift(k);
                    NEIGHBOURS[from].iter().any(|&t| {
                        t != NONE && unit.land(self.board[t as usize], self.max_stack).is_ok()
                    })
                })
        })
    }

    /// Moves `k` tokens from `from` to `to` (assumed legal); returns whether it captured.
    #[inline]
    fn do_move(&mut self, from: u8, k: u8, to: u8) -> bool {
        let (unit, rest) = self.board[from as usize].lift(k);
        let target = self.board[to as usize];
        let (landed, kind) = unit
            .land(target, self.max_stack)
            .unwrap_or((unit, Landing::Capture));
        self.board[from as usize] = rest;
        self.board[to as usize] = landed;
        kind == Landing::Capture && !target.is_empty()
    }

    /// Plays a whole turn and runs the end-of-turn checks in the page's order.
    pub(crate) fn play_turn(&mut self, a: Action) {
        let mover = self.to_act;
        let mut captured = self.do_move(a.from, a.k, a.to);
        if a.k2 != 0 {
            captured |= self.do_move(a.to, a.k2, a.to2);
        }
        self.counter = if captured {
            COUNTER_START
        } else {
            self.counter.saturating_sub(1)
        };
        self.to_act = mover.other();
        self.outcome = self.judge();
    }

    /// The end-of-turn checks, for the turn just played by the side not to act:
    /// palace win, then the no-capture draw, then no legal turn for the side to act.
    pub(crate) fn judge(&self) -> Option<Outcome> {
        let mover = self.to_act.other();
        let palaces = match mover {
            Side::First => BLACK_PALACES,
            Side::Second => WHITE_PALACES,
        };
        if palaces
            .iter()
            .any(|&p| self.board[p as usize].owner() == Some(mover))
        {
            return Some(Outcome {
                winner: Some(mover),
                reason: Reason::Palace,
            });
        }
        if self.counter == 0 {
            return Some(Outcome {
                winner: None,
                reason: Reason::NoCaptureLimit,
            });
        }
        if !self.has_turn(self.to_act) {
            return Some(Outcome {
                winner: Some(mover),
                reason: Reason::NoMoves,
            });
        }
        None
    }
}
