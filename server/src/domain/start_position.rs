//! A position a game starts from instead of its kind's start position (`bot.play` with a
//! `position`: "play on from here against the computer").
//!
//! Why a type of its own: the string is checked by the kind's engine once, where it comes
//! in, and then travels typed with the game's settings ([`crate::domain::setup::GameSetup`])
//! into the room, the game's record, its document and its rebuild after a restart, so every
//! place that makes the game's engine state makes it from the same start.

use serde_json::Value;
use stoa_protocol::wire::ErrorCode;
use stoa_protocol::{AnyGame, GameKind};

use crate::error::ApiError;

/// A checked start position (the engine's canonical string), never the kind's own start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartPosition(String);

/// What [`StartPosition::check`] found for a requested position.
#[derive(Debug)]
pub struct Fitted {
    /// The options of the board the position describes (the requested ones, with the
    /// members the position fixes — a board's size — taken from it).
    pub options: Value,
    /// The start position, `None` when it is the kind's own start for those options.
    pub start: Option<StartPosition>,
}

fn bad(message: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message.to_string())
}

impl StartPosition {
    /// Checks a requested `position` of `kind` with the (validated) `options`: loaded by
    /// the engine, the game not over there; `bad_request` with the engine's message
    /// otherwise.
    ///
    /// A position string may describe a board other than the options' (the engines take
    /// the size from the string when the options are the defaults): the game's options are
    /// then the ones of that board, found from the engine's geometry (whose members name the
    /// options that fix the board), so the document's options draw the board that is played.
    pub fn check(
        kind: &'static GameKind,
        options: &Value,
        position: &str,
    ) -> Result<Fitted, ApiError> {
        let game = kind.from_position(options, position.trim()).map_err(bad)?;
        let options = fitted_options(kind, options, game.as_ref())?;
        let game = kind.from_position(&options, position.trim()).map_err(bad)?;
        if game.outcome().is_some() || game.to_act().is_none() || game.legal_notations().is_empty()
        {
            return Err(bad("the game is already over in this position"));
        }
        let canonical = game.position();
        let own_start = kind.start(&options).map_err(bad)?.position();
        Ok(Fitted {
            options,
            start: (canonical != own_start).then_some(StartPosition(canonical)),
        })
    }

    /// A start position as the server stored it (a room's or a game's record): it was
    /// checked when written, and is checked again when a game is made from it
    /// ([`StartPosition::game`]).
    pub fn stored(position: String) -> Self {
        StartPosition(position)
    }

    /// The position string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The game at this position.
    pub fn game(
        &self,
        kind: &'static GameKind,
        options: &Value,
    ) -> Result<Box<dyn AnyGame>, stoa_protocol::RulesError> {
        kind.from_position(options, &self.0)
    }
}

/// `options` with each member the position's geometry also names taken from the geometry,
/// checked by the kind; `bad_request` when the board the position describes cannot be
/// described by options (its geometry is still not the one those options make).
fn fitted_options(
    kind: &'static GameKind,
    options: &Value,
    game: &dyn AnyGame,
) -> Result<Value, ApiError> {
    let geometry = game.geometry();
    let mut fitted = options.clone();
    if let (Value::Object(o), Value::Object(g)) = (&mut fitted, &geometry) {
        for (name, value) in o.iter_mut() {
            if let Some(v) = g.get(name) {
                *value = v.clone();
            }
        }
    }
    let fitted = kind.validate_options(&fitted).map_err(bad)?;
    let made = kind.start(&fitted).map_err(bad)?.geometry();
    if made != geometry {
        return Err(bad("the position's board does not fit the options"));
    }
    Ok(fitted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(kind: &str, options: Value, position: &str) -> Result<Fitted, ApiError> {
        let kind = stoa_protocol::kind(kind).unwrap();
        let options = kind.validate_options(&options).unwrap();
        StartPosition::check(kind, &options, position)
    }

    #[test]
    fn a_position_is_checked_by_the_engine_and_fits_the_options() {
        // A 4x3 Ūnane board with the default (6x6) options: the options become its own.
        let f = check("unane", Value::Null, "bbbw/w.wb/bwbw w 1").unwrap();
        assert_eq!(f.options, json!({"width": 4, "height": 3}));
        assert_eq!(f.start.unwrap().as_str(), "bbbw/w.wb/bwbw w 1");
        // The kind's own start is no start position at all.
        let kind = stoa_protocol::kind("akron").unwrap();
        let options = kind.validate_options(&Value::Null).unwrap();
        let own = kind.start(&options).unwrap().position();
        let f = check("akron", Value::Null, &own).unwrap();
        assert!(f.start.is_none());
        assert_eq!(f.options, options);
        // Unreadable: the engine's message.
        let e = check("staku", Value::Null, "nonsense").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(!e.message.is_empty());
    }

    /// The end of a played-out game, where the engine loading its position sees the game
    /// over (or no move to make), is no position to play on from.
    #[test]
    fn a_position_where_the_game_is_over_is_refused() {
        let mut refused = 0;
        for kind in stoa_protocol::KINDS {
            let options = kind.validate_options(&Value::Null).unwrap();
            let mut game = kind.start(&options).unwrap();
            for _ in 0..2_000 {
                match game.legal_notations().first() {
                    Some(mv) if game.outcome().is_none() => {
                        let mv = mv.clone();
                        game.play(&mv).unwrap();
                    }
                    _ => break,
                }
            }
            let end = game.position();
            let loaded = kind.from_position(&options, &end).unwrap();
            if loaded.outcome().is_none() && !loaded.legal_notations().is_empty() {
                continue;
            }
            let e = StartPosition::check(kind, &options, &end).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadRequest);
            assert_eq!(e.message, "the game is already over in this position");
            refused += 1;
        }
        assert!(
            refused > 0,
            "some kind's end is seen over from its position"
        );
    }
}
