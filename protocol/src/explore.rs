//! Practice positions: any position of any kind, a line of moves played on it, and what the
//! engine says of the result — the one computation behind `position.explore`, the lessons
//! (web and terminal) and, later, an analysis board.
//!
//! Why in the protocol crate: the server answers `position.explore` with it and the terminal
//! client checks a lesson's moves with it, so both ends run the very same code on the very
//! same engines. Nothing here is a game: no clock, no players, no record.

use std::fmt;

use serde_json::{json, Value};

use crate::any_game::AnyGame;
use crate::game::{Outcome, RulesError};
use crate::wire::Explored;

/// Why a practice position could not be computed: the rules' error and, for a move, which
/// one of the line (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExploreError {
    /// The index of the move that failed, `None` when the kind, options or position did.
    pub at: Option<usize>,
    /// What the engine said.
    pub error: RulesError,
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(i) => write!(f, "move {} of the line: {}", i + 1, self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

impl std::error::Error for ExploreError {}

/// The game of `kind` with `options` at `position` (the start when `None`), after `moves`.
/// Returns the game and the canonical notation of each move played.
pub fn play_line(
    kind: &str,
    options: &Value,
    position: Option<&str>,
    moves: &[String],
) -> Result<(Box<dyn AnyGame>, Vec<String>), ExploreError> {
    let whole = |error| ExploreError { at: None, error };
    let k = crate::kind(kind).map_err(whole)?;
    let options = k.validate_options(options).map_err(whole)?;
    let mut game = match position {
        Some(p) => k.from_position(&options, p.trim()),
        None => k.start(&options),
    }
    .map_err(whole)?;
    let mut played = Vec::with_capacity(moves.len());
    for (i, mv) in moves.iter().enumerate() {
        let p = game
            .play(mv)
            .map_err(|error| ExploreError { at: Some(i), error })?;
        played.push(p.notation);
    }
    Ok((game, played))
}

/// [`play_line`], described as the wire's [`Explored`]: position, side to act, legal moves,
/// status, view and geometry.
pub fn explore(
    kind: &str,
    options: &Value,
    position: Option<&str>,
    moves: &[String],
) -> Result<Explored, ExploreError> {
    let (game, played) = play_line(kind, options, position, moves)?;
    Ok(describe(game.as_ref(), played))
}

/// What a game (a practice one) looks like on the wire.
pub fn describe(game: &dyn AnyGame, moves: Vec<String>) -> Explored {
    Explored {
        kind: game.kind().to_string(),
        options: game.options_json(),
        position: game.position(),
        moves,
        to_act: game.to_act().map(|s| game.side_name(s).to_string()),
        legal: game.legal_notations(),
        status: status(game, game.outcome()),
        view: game.view(),
        geometry: game.geometry(),
    }
}

/// A game document's `status` for an outcome.
fn status(game: &dyn AnyGame, outcome: Option<Outcome>) -> Value {
    match outcome {
        Some(o) => json!({
            "state": "ended",
            "winner": o.winner.map(|s| game.side_name(s)),
            "reason": o.reason.as_str(),
        }),
        None => json!({"state": "playing", "winner": null, "reason": null}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_and_a_line_of_moves() {
        let e = explore("staku", &Value::Null, None, &[]).unwrap();
        assert_eq!(e.legal.len(), 382);
        assert_eq!(e.to_act.as_deref(), Some("white"));
        let e = explore("staku", &json!({}), None, &["B1-C1!+D1".to_string()]).unwrap();
        assert_eq!(e.moves, ["b1-c1+d1"]);
        assert_eq!(e.to_act.as_deref(), Some("black"));
        assert_eq!(e.status["state"], "playing");
    }

    #[test]
    fn errors_name_the_failing_move() {
        let line = ["d4xd5".to_string(), "a1xa2".to_string()];
        let err = explore("unane", &Value::Null, None, &line).unwrap_err();
        assert_eq!(err.at, Some(1));
        assert!(matches!(err.error, RulesError::IllegalMove { .. }), "{err}");
        let err = explore("chess", &Value::Null, None, &[]).unwrap_err();
        assert_eq!(err.at, None);
        assert!(matches!(err.error, RulesError::UnknownKind(_)));
        let err = explore("akron", &Value::Null, Some("9 v"), &[]).unwrap_err();
        assert!(matches!(err.error, RulesError::InvalidPosition(_)));
    }

    #[test]
    fn an_ended_game_has_a_status_and_no_legal_moves() {
        // White tops black's palace g1: loading ends the game (see the Staku guide).
        let p = "W,.,.,.,.,B/.,.,.,.,.,.,./.,.,.,.,.,.,.,./.,.,.,.,.,.,./\
                 .,.,.,.,.,.,.,./.,.,.,.,.,.,./B,.,.,.,.,W b 20";
        let e = explore("staku", &Value::Null, Some(p), &[]).unwrap();
        assert_eq!(e.status["state"], "ended");
        assert_eq!(e.status["winner"], "white");
        assert!(e.legal.is_empty());
        assert_eq!(e.to_act, None);
    }
}
