//! The lessons: for each game kind a few short steps, each a position, a goal in words,
//! hints and the condition that completes it. The data lives in one JSON file per kind
//! (`protocol/lessons/<kind>.json`), embedded here so that the server (which serves it at
//! `GET /api/lessons/<kind>` to the web page) and the terminal client (`stoa learn`) read
//! the same text.
//!
//! Whether a try completes a step is the engines' answer, never a rule of our own: the move
//! is played by [`crate::explore::play_line`] (an illegal move is refused there), and the
//! condition compares what the engine reports — the move's canonical notation, the
//! outcome, the position string after it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::any_game::AnyGame;
use crate::explore::{play_line, ExploreError};

/// The lesson files, by kind, in [`crate::KINDS`] order.
static SOURCES: &[(&str, &str)] = &[
    ("unane", include_str!("../lessons/unane.json")),
    ("staku", include_str!("../lessons/staku.json")),
    ("akron", include_str!("../lessons/akron.json")),
    ("akunur", include_str!("../lessons/akunur.json")),
];

/// One kind's lesson.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// The game kind.
    pub kind: String,
    /// The lesson's title.
    pub title: String,
    /// A sentence or two before the first step.
    pub intro: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step of a lesson: a position to move in and the goal to reach with one move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// A short id, stable across edits (progress is kept by it).
    pub id: String,
    /// The step's title.
    pub title: String,
    /// The rule the step teaches, in a few sentences.
    pub text: String,
    /// What to do, in words ("capture the black stone in one move").
    pub goal: String,
    /// The game's options, when not the defaults.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub options: Value,
    /// The position string the step starts from.
    pub position: String,
    /// What completes the step.
    pub done: Done,
    /// Hints shown one after the other on wrong tries.
    pub hints: Vec<String>,
    /// What is said once the step is done.
    pub success: String,
}

/// The condition that completes a step, checked on the engine's answer to the move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Done {
    /// The move played is one of these (canonical notation).
    Moves(Vec<String>),
    /// The game ends with the mover winning.
    Win,
    /// The position after the move is this one (its canonical string).
    Position(String),
}

/// The result of one try at a step.
#[derive(Debug)]
pub struct Attempt {
    /// The move in canonical notation.
    pub notation: String,
    /// Whether it completes the step.
    pub done: bool,
    /// The game after the move.
    pub after: Box<dyn AnyGame>,
}

/// The kinds that have a lesson, in order.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(k, _)| *k)
}

/// The lesson file of `kind`, as written (the JSON the web page reads).
pub fn source(kind: &str) -> Option<&'static str> {
    SOURCES.iter().find(|(k, _)| *k == kind).map(|(_, s)| *s)
}

/// The lesson of `kind`, parsed; `None` for a kind without one.
pub fn lesson(kind: &str) -> Option<Lesson> {
    // The files are part of the crate and tested to parse: a failure is a build mistake.
    source(kind).map(|s| serde_json::from_str(s).expect("a lesson file parses"))
}

impl Step {
    /// The step's position as a game.
    pub fn game(&self, kind: &str) -> Result<Box<dyn AnyGame>, ExploreError> {
        play_line(kind, &self.options, Some(&self.position), &[]).map(|(g, _)| g)
    }

    /// Plays `mv` on the step's position: an illegal or unreadable move is an error, a
    /// legal one says whether it completes the step.
    pub fn attempt(&self, kind: &str, mv: &str) -> Result<Attempt, ExploreError> {
        let before = self.game(kind)?;
        let mover = before.to_act();
        let (after, played) =
            play_line(kind, &self.options, Some(&self.position), &[mv.to_string()])?;
        let notation = played.into_iter().next().unwrap_or_default();
        let done = match &self.done {
            Done::Moves(list) => list.contains(&notation),
            Done::Win => after.outcome().is_some_and(|o| o.winner == mover),
            Done::Position(p) => after.position() == *p,
        };
        Ok(Attempt {
            notation,
            done,
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind with an engine has a lesson, and the lesson is of that kind.
    #[test]
    fn every_kind_has_a_lesson_of_six_to_twelve_steps() {
        for k in crate::KINDS {
            let lesson = lesson(k.id).unwrap_or_else(|| panic!("no lesson for {}", k.id));
            assert_eq!(lesson.kind, k.id);
            let n = lesson.steps.len();
            assert!((6..=12).contains(&n), "{}: {n} steps", k.id);
            let mut ids: Vec<&str> = lesson.steps.iter().map(|s| s.id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), n, "{}: step ids repeat", k.id);
        }
        assert_eq!(kinds().count(), crate::KINDS.len());
    }

    /// Each step's position loads and is on, a legal move completes it, a legal move does
    /// not (so a wrong try and its hint exist), and its listed moves are all legal.
    #[test]
    fn every_step_is_reachable_and_can_be_missed() {
        for kind in kinds() {
            let lesson = lesson(kind).unwrap();
            for step in &lesson.steps {
                let at = format!("{kind}/{}", step.id);
                let game = step.game(kind).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert!(game.to_act().is_some(), "{at}: the position has ended");
                assert!(!step.hints.is_empty(), "{at}: no hint");
                let legal = game.legal_notations();
                if let Done::Moves(list) = &step.done {
                    for m in list {
                        assert!(
                            legal.contains(m),
                            "{at}: {m} is not legal (or not canonical)"
                        );
                    }
                }
                let (mut good, mut bad) = (0, 0);
                for m in &legal {
                    if step.attempt(kind, m).unwrap().done {
                        good += 1;
                    } else {
                        bad += 1;
                    }
                }
                assert!(good > 0, "{at}: no legal move completes the step");
                assert!(bad > 0, "{at}: every legal move completes the step");
            }
        }
    }

    #[test]
    fn an_illegal_try_is_an_error_not_a_miss() {
        let lesson = lesson("unane").unwrap();
        let step = &lesson.steps[0];
        let err = step.attempt("unane", "a1xh7").unwrap_err();
        assert_eq!(err.at, Some(0));
    }
}
