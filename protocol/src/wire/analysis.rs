//! Engine review of a finished game (addition): what a worker reports per ply, how a ply is
//! marked, and the state of a game's review.
//!
//! Why the marks are defined here: the worker computes them, the server checks them against
//! the same thresholds before it stores a result, and every front-end shows them; one
//! definition keeps the three in step.

use serde::{Deserialize, Serialize};

/// How bad a move was, from the drop of its player's win probability (see [`Mark::of`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// A drop of at least [`INACCURACY_DROP`].
    Inaccuracy,
    /// A drop of at least [`MISTAKE_DROP`].
    Mistake,
    /// A drop of at least [`BLUNDER_DROP`].
    Blunder,
}

/// A move that loses at least this much win probability (0 to 1) is an inaccuracy.
pub const INACCURACY_DROP: f64 = 0.1;
/// A move that loses at least this much win probability is a mistake.
pub const MISTAKE_DROP: f64 = 0.2;
/// A move that loses at least this much win probability is a blunder.
pub const BLUNDER_DROP: f64 = 0.3;

impl Mark {
    /// The mark of a move that took its player's win probability from `before` to `after`
    /// (both 0 to 1, for the player who moved), like lichess's: a drop of 0.3 or more is a
    /// blunder, 0.2 a mistake, 0.1 an inaccuracy. A move the engine preferred itself is
    /// never marked (`played_best`): the two values then come from two searches, and their
    /// noise is not a mistake of the player.
    pub fn of(before: f64, after: f64, played_best: bool) -> Option<Mark> {
        let drop = before - after;
        if played_best || !drop.is_finite() {
            None
        } else if drop >= BLUNDER_DROP - 1e-9 {
            Some(Mark::Blunder)
        } else if drop >= MISTAKE_DROP - 1e-9 {
            Some(Mark::Mistake)
        } else if drop >= INACCURACY_DROP - 1e-9 {
            Some(Mark::Inaccuracy)
        } else {
            None
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Inaccuracy => "inaccuracy",
            Mark::Mistake => "mistake",
            Mark::Blunder => "blunder",
        }
    }
}

/// Addition: the engine's view of one ply of a finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnalysisPly {
    /// The ply, from 1.
    pub ply: u32,
    /// The side that played it (its colour name).
    pub side: String,
    /// The move played, canonical notation.
    #[serde(rename = "move")]
    pub played: String,
    /// The win probability (0 to 1) of the side to act before the move: the side that
    /// played it.
    pub eval: f64,
    /// That side's win probability after the move (1 or 0 when the move ended the game
    /// with a win or a loss, 0.5 with a draw).
    pub after: f64,
    /// The first-acting side's win probability after the move: the evaluation graph.
    pub first: f64,
    /// The engine's preferred move before this ply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    /// The mark, when the move lost enough (see [`Mark::of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<Mark>,
}

/// Addition: a finished game's engine review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnalysisResult {
    /// The first-acting side's win probability at the start.
    pub start: f64,
    /// One entry per move of the game, in order.
    pub plies: Vec<AnalysisPly>,
    /// What searched (the worker's engine and its budget), for the reader.
    #[serde(default)]
    pub engine: String,
}

impl AnalysisResult {
    /// Why this result cannot be the review of a game of `moves`: a ply count, move, value
    /// or mark that does not fit; `None` when it fits. The server checks a worker's result
    /// with this before it stores it.
    pub fn mismatch(&self, moves: &[String]) -> Option<String> {
        if self.plies.len() != moves.len() {
            return Some(format!(
                "{} plies for a game of {} moves",
                self.plies.len(),
                moves.len()
            ));
        }
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        if !unit(self.start) {
            return Some("start is not a probability".into());
        }
        for (i, (p, m)) in self.plies.iter().zip(moves).enumerate() {
            if p.ply as usize != i + 1 || p.played != *m {
                return Some(format!("ply {} is not move {m}", i + 1));
            }
            if !unit(p.eval) || !unit(p.after) || !unit(p.first) {
                return Some(format!("ply {}: a value is not a probability", i + 1));
            }
            let played_best = p.best.as_deref() == Some(m.as_str());
            if p.mark != Mark::of(p.eval, p.after, played_best) {
                return Some(format!("ply {}: the mark does not fit the values", i + 1));
            }
        }
        None
    }
}

/// Addition: where a game's review stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AnalysisState {
    /// Nobody asked for it yet.
    None,
    /// In the queue, and a worker was seen lately: it will be taken.
    Queued,
    /// In the queue, and no worker was seen lately: it waits for one.
    WaitingForWorker,
    /// A worker has it.
    Running,
    /// Done: the result is stored with the game's record.
    Done,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_follow_the_thresholds() {
        assert_eq!(Mark::of(0.9, 0.55, false), Some(Mark::Blunder));
        assert_eq!(Mark::of(0.6, 0.3, false), Some(Mark::Blunder));
        assert_eq!(Mark::of(0.6, 0.35, false), Some(Mark::Mistake));
        assert_eq!(Mark::of(0.6, 0.45, false), Some(Mark::Inaccuracy));
        assert_eq!(Mark::of(0.6, 0.55, false), None);
        assert_eq!(Mark::of(1.0, 0.0, true), None);
        assert_eq!(Mark::of(0.2, 0.9, false), None);
    }

    #[test]
    fn a_result_must_fit_its_game() {
        let ply = |n: u32, m: &str, eval: f64, after: f64, mark| AnalysisPly {
            ply: n,
            side: "black".into(),
            played: m.into(),
            eval,
            after,
            first: after,
            best: Some("x".into()),
            mark,
        };
        let moves = vec!["a".to_string(), "b".to_string()];
        let mut r = AnalysisResult {
            start: 0.5,
            plies: vec![
                ply(1, "a", 0.5, 0.5, None),
                ply(2, "b", 1.0, 0.0, Some(Mark::Blunder)),
            ],
            engine: String::new(),
        };
        assert_eq!(r.mismatch(&moves), None);
        r.plies[1].mark = None;
        assert!(r.mismatch(&moves).unwrap().contains("mark"));
        r.plies.pop();
        assert!(r.mismatch(&moves).unwrap().contains("1 plies"));
    }
}
