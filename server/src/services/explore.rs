//! Practice positions (`position.explore`): the rules engines' answer for any position and
//! line of moves, for the lessons and any board that is not a game.
//!
//! Why a service of its own: it is pure computation on the protocol's engines
//! ([`stoa_protocol::explore`]) — no actor, no store, nothing listed or rated — and the one
//! place where its failures get their protocol codes, so every caller answers alike.

use serde_json::Value;
use stoa_protocol::explore::ExploreError;
use stoa_protocol::wire::{ErrorCode, Explored};
use stoa_protocol::RulesError;

use crate::error::ApiError;

/// The most moves one request may play: a line to study, not a game to replay (the frame
/// limit bounds it anyway; this keeps one request's work small and its refusal clear).
pub const MAX_MOVES: usize = 512;

/// `kind` with `options` at `position` (its start when `None`) after `moves`, described.
/// Nothing is kept: the same request always gets the same answer.
pub fn explore(
    kind: &str,
    options: &Value,
    position: Option<&str>,
    moves: &[String],
) -> Result<Explored, ApiError> {
    if moves.len() > MAX_MOVES {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("at most {MAX_MOVES} moves in a line"),
        ));
    }
    stoa_protocol::explore::explore(kind, options, position, moves).map_err(refusal)
}

/// The protocol's code for each way a practice position can fail.
fn refusal(e: ExploreError) -> ApiError {
    let code = match e.error {
        RulesError::UnknownKind(_) | RulesError::InvalidOptions(_) => ErrorCode::InvalidOptions,
        RulesError::InvalidPosition(_) => ErrorCode::BadRequest,
        RulesError::BadNotation { .. } | RulesError::IllegalMove { .. } => ErrorCode::IllegalMove,
        RulesError::GameOver => ErrorCode::GameOver,
    };
    ApiError::new(code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_has_its_code() {
        let none = Value::Null;
        let code = |kind: &str, pos: Option<&str>, moves: &[&str]| {
            let moves: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
            explore(kind, &none, pos, &moves).unwrap_err().code
        };
        assert_eq!(code("chess", None, &[]), ErrorCode::InvalidOptions);
        assert_eq!(code("akron", Some("nine"), &[]), ErrorCode::BadRequest);
        assert_eq!(code("unane", None, &["d4xf4"]), ErrorCode::IllegalMove);
        assert_eq!(code("unane", None, &["zz"]), ErrorCode::IllegalMove);
        let long = vec!["E5"; MAX_MOVES + 1];
        assert_eq!(code("akron", None, &long), ErrorCode::BadRequest);
        let ok = explore("akunur", &none, None, &["g7".to_string()]).unwrap();
        assert_eq!(ok.to_act.as_deref(), Some("dark"));
    }
}
