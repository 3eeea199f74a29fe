//! Akron (Cameron Browne, 2002): vert connects bottom and top, horz left and right, with
//! balls stacked on a square board, moves that drop the balls above, an over/under rule and a
//! connection that only wins once it survives the opponent's reply. Rules: `protocol/docs/games/akron.md`.
//!
//! Layout: `geometry` (points, levels, what touches what), `connection` (column and
//! crossing rules, components), `movegen` (adds, moves with their drop chains, swap),
//! `position` (position strings), `notation` (point names), `view` (client JSON).

mod connection;
mod geometry;
mod movegen;
mod notation;
mod options;
mod position;
mod view;

use std::fmt;

use crate::game::{Game, Outcome, Reason, RulesError, Side};

use connection::{Analysis, EMPTY};
use geometry::{Geometry, MAX_POINTS, NONE};
pub use options::Options;

/// One Akron action. Points are indices into the board geometry of its size (level,
/// then row, then column), so an action belongs to the board size it was made for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Put a ball from the pile on this (level-0) hole.
    Add(u16),
    /// Move a ball from one point to another.
    Move {
        /// The point the ball leaves.
        from: u16,
        /// The point it goes to.
        to: u16,
    },
    /// The pie rule at ply 1: the players exchange colours.
    Swap,
}

/// An Akron game state: board, piles, side to act, ply, and the positions seen since the
/// last add (earlier ones had bigger piles, so they can never recur).
#[derive(Clone)]
pub struct Akron {
    geo: &'static Geometry,
    /// `EMPTY`, 1 (vert) or 2 (horz) for every point.
    cells: [u8; MAX_POINTS],
    piles: [u32; 2],
    pieces: u32,
    to_move: Side,
    ply: u32,
    nodelay: bool,
    outcome: Option<Outcome>,
    /// Zobrist hash of board and side to act (piles are constant between adds).
    hash: u64,
    /// Hashes recorded since the last add, the current position included.
    history: Vec<u64>,
}

impl fmt::Debug for Akron {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Akron")
            .field("position", &self.position())
            .field("outcome", &self.outcome)
            .finish()
    }
}

/// The cell value of a side's balls.
#[inline]
fn colour(side: Side) -> u8 {
    side.index() as u8 + 1
}

impl Akron {
    fn empty(options: &Options, n: usize) -> Akron {
        let geo = Geometry::get(n);
        let hash = 0;
        Akron {
            geo,
            cells: [EMPTY; MAX_POINTS],
            piles: [options.pieces(); 2],
            pieces: options.pieces(),
            to_move: Side::First,
            ply: 0,
            nodelay: options.nodelay,
            outcome: None,
            hash,
            history: vec![hash],
        }
    }

    /// Board size.
    pub fn size(&self) -> usize {
        self.geo.n
    }

    /// Number of balls in each pile (vert first).
    pub fn piles(&self) -> [u32; 2] {
        self.piles
    }

    /// Number of actions played so far (swap included).
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// The side whose ball is on `point`, if any.
    pub fn ball(&self, point: usize) -> Option<Side> {
        match self.cells.get(point).copied() {
            Some(1) => Some(Side::First),
            Some(2) => Some(Side::Second),
            _ => None,
        }
    }

    /// Whether a side is connected edge to edge on the current board.
    pub fn connected(&self, side: Side) -> bool {
        Analysis::with(self.geo, &self.cells, |an| an.connected[side.index()])
    }

    /// The name of a point on this board (`D4'`), or `?` for an index off the board.
    pub fn point_name(&self, point: usize) -> &str {
        self.geo.names.get(point).map(String::as_str).unwrap_or("?")
    }

    fn zobrist_all(&self) -> u64 {
        let mut h = 0;
        for p in 0..self.geo.points {
            if self.cells[p] != EMPTY {
                h ^= self.geo.zobrist[p][self.cells[p] as usize - 1];
            }
        }
        if self.to_move == Side::Second {
            h ^= self.geo.side_key;
        }
        h
    }

    /// The one ball `p` supports, if it supports exactly one; `Err(count)` when it supports
    /// two or more.
    #[inline]
    fn supported(&self, p: usize) -> Result<Option<usize>, usize> {
        let mut found = None;
        let mut count = 0;
        for &q in &self.geo.above[p] {
            if q != NONE && self.cells[q as usize] != EMPTY {
                count += 1;
                found = Some(q as usize);
            }
        }
        match count {
            0 | 1 => Ok(found),
            c => Err(c),
        }
    }

    /// Checks the end conditions after a non-swap action by `mover`, in the page's order.
    fn check_end(&mut self, mover: Side) {
        let other = mover.other();
        let repeated = || self.history.iter().filter(|&&h| h == self.hash).count() >= 3;
        // Most positions need no connection analysis at all: nobody has level-0 balls on both
        // of their edges, and the side to act can still add a ball.
        let may_connect = |side: Side| self.on_both_edges(side);
        let needs_analysis = may_connect(other) || (self.nodelay && may_connect(mover));
        if !needs_analysis && self.can_add_or_swap() {
            if repeated() {
                self.outcome = Some(Outcome {
                    winner: None,
                    reason: Reason::Repetition,
                });
            }
            return;
        }
        let outcome = Analysis::with(self.geo, &self.cells, |an| {
            if an.connected[other.index()] {
                Some(Outcome {
                    winner: Some(other),
                    reason: Reason::Connection,
                })
            } else if self.nodelay && an.connected[mover.index()] {
                Some(Outcome {
                    winner: Some(mover),
                    reason: Reason::Connection,
                })
            } else if repeated() {
                Some(Outcome {
                    winner: None,
                    reason: Reason::Repetition,
                })
            } else if !self.has_legal_action(an) {
                Some(Outcome {
                    winner: Some(mover),
                    reason: Reason::NoMoves,
                })
            } else {
                None
            }
        });
        self.outcome = outcome;
    }

    /// Whether `side` has level-0 balls on both of its edges (necessary for a connection).
    fn on_both_edges(&self, side: Side) -> bool {
        let n = self.geo.n;
        let c = colour(side);
        let at = |along: usize, across: usize| {
            // vert's edges are rows, horz's are columns.
            let (i, j) = if side == Side::First {
                (across, along)
            } else {
                (along, across)
            };
            self.cells[j * n + i] == c
        };
        (0..n).any(|x| at(0, x)) && (0..n).any(|x| at(n - 1, x))
    }

    /// Whether the side to act can add a ball or swap (so it has a legal action).
    fn can_add_or_swap(&self) -> bool {
        (self.piles[self.to_move.index()] > 0 && self.cells[..self.geo.holes()].contains(&EMPTY))
            || self.swap_available()
    }

    /// Whether the side to act has any legal action (the game assumed on).
    fn has_legal_action(&self, an: &Analysis) -> bool {
        if self.can_add_or_swap() {
            return true;
        }
        let mut any = false;
        self.for_each_move(an, &mut |_| {
            any = true;
            false
        });
        any
    }

    fn swap_available(&self) -> bool {
        self.ply == 1 && self.to_move == Side::Second
    }
}

impl Game for Akron {
    type Options = Options;
    type Action = Action;
    const KIND: &'static str = "akron";
    const SIDE_NAMES: [&'static str; 2] = ["vert", "horz"];

    fn validate_options(options: Options) -> Result<Options, RulesError> {
        options.validate()
    }

    fn start(options: &Options) -> Self {
        let n = (options.size as usize).clamp(geometry::MIN_SIZE, geometry::MAX_SIZE);
        Akron::empty(options, n)
    }

    fn from_position(options: &Options, position: &str) -> Result<Self, RulesError> {
        position::parse(options, position)
    }

    fn position(&self) -> String {
        position::format(self)
    }

    fn to_act(&self) -> Option<Side> {
        if self.outcome.is_some() {
            None
        } else {
            Some(self.to_move)
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        if self.outcome.is_some() {
            return;
        }
        let me = colour(self.to_move);
        if self.piles[self.to_move.index()] > 0 {
            for p in 0..self.geo.holes() {
                if self.cells[p] == EMPTY {
                    out.push(Action::Add(p as u16));
                }
            }
        }
        if self.swap_available() {
            out.push(Action::Swap);
        }
        // Moves need at least two balls of one's own colour on the board.
        if self.cells[..self.geo.points]
            .iter()
            .filter(|&&c| c == me)
            .nth(1)
            .is_some()
        {
            Analysis::with(self.geo, &self.cells, |an| {
                self.for_each_move(an, &mut |a| {
                    out.push(a);
                    true
                })
            });
        }
    }

    fn apply(&mut self, action: Action) {
        let mover = self.to_move;
        let me = colour(mover);
        let geo = self.geo;
        let z = &geo.zobrist;
        match action {
            Action::Swap => {
                // Colours change hands, not the board or the colour to act: only the ply
                // moves on, and no position is recorded.
                self.ply += 1;
                return;
            }
            Action::Add(p) => {
                let p = p as usize;
                self.cells[p] = me;
                self.hash ^= z[p][me as usize - 1];
                self.piles[mover.index()] -= 1;
                // Piles only shrink, so no earlier position can occur again.
                self.history.clear();
            }
            Action::Move { from, to } => {
                let (from, to) = (from as usize, to as usize);
                self.hash ^= z[from][me as usize - 1];
                // The drop cascade: each ball above falls into the point just vacated.
                let mut cur = from;
                loop {
                    match self.supported(cur) {
                        Ok(Some(u)) => {
                            let c = self.cells[u];
                            self.hash ^= z[u][c as usize - 1] ^ z[cur][c as usize - 1];
                            self.cells[cur] = c;
                            cur = u;
                        }
                        _ => {
                            self.cells[cur] = EMPTY;
                            break;
                        }
                    }
                }
                self.cells[to] = me;
                self.hash ^= z[to][me as usize - 1];
            }
        }
        self.ply += 1;
        self.to_move = mover.other();
        self.hash ^= self.geo.side_key;
        self.history.push(self.hash);
        self.check_end(mover);
    }

    fn parse_action(&self, text: &str) -> Result<Action, RulesError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("swap") {
            return Ok(Action::Swap);
        }
        if t.is_empty() {
            return Err(RulesError::notation(text, "empty move"));
        }
        let mut parts = t.split('-');
        let first = parts.next().unwrap_or("");
        let second = parts.next();
        if parts.next().is_some() {
            return Err(RulesError::notation(
                text,
                "a move has one '-' between two point names (e.g. A2-D3')",
            ));
        }
        let point = |s: &str| -> Result<u16, RulesError> {
            notation::parse_point(self.geo, s)
                .map(|p| p as u16)
                .map_err(|reason| RulesError::notation(text, reason))
        };
        match second {
            None => Ok(Action::Add(point(first)?)),
            Some(second) => Ok(Action::Move {
                from: point(first)?,
                to: point(second)?,
            }),
        }
    }

    fn format_action(&self, action: Action) -> String {
        match action {
            Action::Add(p) => self.point_name(p as usize).to_string(),
            Action::Move { from, to } => format!(
                "{}-{}",
                self.point_name(from as usize),
                self.point_name(to as usize)
            ),
            Action::Swap => "swap".to_string(),
        }
    }

    fn is_swap(&self, action: Action) -> bool {
        action == Action::Swap
    }

    /// The client view; with the geometry (`{"size", "pieces", "nodelay", "levels":
    /// [{"level", "size"}…]}`, merged member by member) a thin client can draw every level
    /// from it without the rules:
    ///
    /// ```text
    /// {
    ///   "piles": {"vert": 21, "horz": 26},
    ///   "swap_available": false,            // horz may answer vert's first add with `swap`
    ///   "connected": {"vert": false, "horz": false},
    ///   "levels": [                         // one entry per level k = 0..size-1
    ///     {"rows": [[null, "vert", ...], ...]}  // rows[j][i]: point (k, i, j), row 0 = bottom
    ///   ],
    ///   "balls": [                          // every ball: level, then row, then column
    ///     {"point": "E7'", "level": 1, "column": 4, "row": 5,
    ///      "plan": [9, 11],                 // (2i+k, 2j+k): drawing position, half-hole units
    ///      "side": "vert", "cut": false}    // cut: a ball of the other colour tops its column
    ///   ],
    ///   "links": [                          // every pair of same-colour same-level neighbours
    ///     {"a": "B6", "b": "B7", "level": 0, "side": "vert",
    ///      "cut": false}                    // cut by the column rule or a crossing pair above
    ///   ]
    /// }
    /// ```
    fn view(&self) -> serde_json::Value {
        view::view(self)
    }

    const VIEW_CHANGES: bool = true;

    /// From the two boards and their connection analyses, not from their views: the changed
    /// points, piles and flags, and the changed entries of `balls` and `links` (the whole
    /// list when its length changed).
    fn view_changes(&self, before: &Self) -> Option<Vec<(String, serde_json::Value)>> {
        view::view_changes(self, before)
    }

    fn geometry(&self) -> serde_json::Value {
        view::geometry(self)
    }

    fn check(&self, action: Action) -> Result<(), RulesError> {
        if self.outcome.is_some() {
            return Err(RulesError::GameOver);
        }
        let text = self.format_action(action);
        let me = self.to_move;
        let n = self.geo.points;
        match action {
            Action::Swap => {
                if self.swap_available() {
                    Ok(())
                } else {
                    Err(RulesError::illegal(
                        &text,
                        "swap is only allowed as horz's first action (ply 1)",
                    ))
                }
            }
            Action::Add(p) => {
                let p = p as usize;
                if p >= n {
                    Err(RulesError::illegal(&text, "no such point on this board"))
                } else if self.piles[me.index()] == 0 {
                    Err(RulesError::illegal(&text, "your pile is empty"))
                } else if p >= self.geo.holes() {
                    Err(RulesError::illegal(
                        &text,
                        "balls from the pile go on level-0 holes only",
                    ))
                } else if self.cells[p] != EMPTY {
                    Err(RulesError::illegal(
                        &text,
                        format!("{} is occupied", self.point_name(p)),
                    ))
                } else {
                    Ok(())
                }
            }
            Action::Move { from, to } => {
                let (from, to) = (from as usize, to as usize);
                if from >= n || to >= n {
                    return Err(RulesError::illegal(&text, "no such point on this board"));
                }
                Analysis::with(self.geo, &self.cells, |an| self.move_problem(an, from, to))
                    .map_err(|reason| RulesError::illegal(&text, reason))
            }
        }
    }
}
