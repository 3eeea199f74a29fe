//! A game's settings — kind, options, time control — parsed once, where they enter the
//! server (a request, a stored room or game, a queue), and carried typed from there on.
//!
//! Why: the settings used to travel as strings and JSON values and were checked at the
//! edge, then looked up and parsed again by whoever needed them (the game's creation, the
//! actor's clock). A [`GameSetup`] can only be made by checking them, so what holds one
//! holds valid settings; it is written to the store in the same JSON as before.

use serde_json::Value;
use stoa_protocol::clock::TimeControl;
use stoa_protocol::GameKind;

use crate::domain::start_position::StartPosition;
use crate::error::ApiError;

/// A game's checked settings.
#[derive(Clone)]
pub struct GameSetup {
    /// The game kind (its engine).
    pub kind: &'static GameKind,
    /// Its options, checked by the game, every default filled in.
    pub options: Value,
    /// The time control.
    pub clock: TimeControl,
    /// The position the game starts from, when not the kind's start (`bot.play` with a
    /// `position`); the options then are the ones of its board.
    pub start: Option<StartPosition>,
}

impl std::fmt::Debug for GameSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameSetup")
            .field("kind", &self.kind.id)
            .field("options", &self.options)
            .field("clock", &self.clock)
            .field("start", &self.start)
            .finish()
    }
}

impl PartialEq for GameSetup {
    fn eq(&self, other: &Self) -> bool {
        self.kind.id == other.kind.id
            && self.options == other.options
            && self.clock == other.clock
            && self.start == other.start
    }
}

impl GameSetup {
    /// Checks a request's settings (`room.create`, `queue.join`, `bot.play`): the kind, its
    /// options (defaults filled in) and the clock (missing: no clock); `invalid_options`
    /// otherwise.
    pub fn parse(kind: &str, options: &Value, clock: Option<&Value>) -> Result<Self, ApiError> {
        let (kind, options, _) =
            crate::domain::clock_request::validate_settings(kind, options, None)?;
        let (clock, _) = crate::domain::clock_request::validate_clock(clock)?;
        Ok(GameSetup {
            kind,
            options,
            clock,
            start: None,
        })
    }

    /// These settings played from `position` (a position string of the kind) instead of the
    /// kind's start: checked by the engine, `bad_request` with its message when it does not
    /// load or the game is over there. The options become the ones of the position's board;
    /// the kind's own start position leaves the settings a normal game's.
    pub fn from_position(self, position: &str) -> Result<Self, ApiError> {
        let fitted = StartPosition::check(self.kind, &self.options, position)?;
        Ok(GameSetup {
            options: fitted.options,
            start: fitted.start,
            ..self
        })
    }

    /// The settings as stored (a room, a game's record, a queue's key), checked again as
    /// they come back in: the rules or bounds may have changed since they were written.
    pub fn stored(kind: &str, options: &Value, clock: &Value) -> Result<Self, ApiError> {
        Self::parse(kind, options, Some(clock))
    }

    /// A stored room's settings as they were written, not checked again: a room must read
    /// back (and show) exactly what was stored, and [`GameSetup::recheck`] checks them when
    /// its game is made. `None` when the clock is not a clock object at all (the server only
    /// ever writes canonical ones).
    pub fn unchecked(
        kind: &'static GameKind,
        options: Value,
        clock: &Value,
        start: Option<String>,
    ) -> Option<Self> {
        let clock = serde_json::from_value(clock.clone()).ok()?;
        Some(GameSetup {
            kind,
            options,
            clock,
            start: start.map(StartPosition::stored),
        })
    }

    /// The settings checked again, as [`GameSetup::stored`] does, for settings held since
    /// they were stored (the rules or bounds may have changed since); a start position is
    /// loaded again too.
    pub fn recheck(&self) -> Result<Self, ApiError> {
        let checked = Self::stored(self.kind.id, &self.options, &self.clock_json())?;
        match &self.start {
            None => Ok(checked),
            Some(start) => checked.from_position(start.as_str()),
        }
    }

    /// The game's engine state before any move: at the start position when there is one,
    /// else at the kind's start.
    pub fn new_game(&self) -> Result<Box<dyn stoa_protocol::AnyGame>, stoa_protocol::RulesError> {
        match &self.start {
            Some(start) => start.game(self.kind, &self.options),
            None => self.kind.start(&self.options),
        }
    }

    /// The start position's string, when the game does not start at the kind's start.
    pub fn start_str(&self) -> Option<&str> {
        self.start.as_ref().map(StartPosition::as_str)
    }

    /// The kind's side names, by side index.
    pub fn side_names(&self) -> [&'static str; 2] {
        self.kind.side_names
    }

    /// The kind's id, as on the wire and in the store.
    pub fn kind_id(&self) -> &'static str {
        self.kind.id
    }

    /// The clock as a canonical JSON object, as on the wire and in the store.
    pub fn clock_json(&self) -> Value {
        crate::domain::clock_request::clock_json(&self.clock)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use stoa_protocol::wire::ErrorCode;

    use super::*;

    #[test]
    fn settings_are_checked_once_and_written_as_before() {
        let s = GameSetup::parse(
            "unane",
            &json!({"width": 6, "height": 6}),
            Some(&json!({"increment_ms": 0, "kind": "fischer", "initial_ms": 60000})),
        )
        .unwrap();
        assert_eq!(s.kind_id(), "unane");
        assert_eq!(
            s.clock_json(),
            json!({"kind": "fischer", "initial_ms": 60000, "increment_ms": 0})
        );
        assert_eq!(
            GameSetup::stored("unane", &s.options, &s.clock_json()).unwrap(),
            s,
            "what is written reads back the same"
        );
        let untimed = GameSetup::parse("staku", &json!({}), None).unwrap();
        assert_eq!(untimed.clock, TimeControl::None);
        assert_eq!(untimed.clock_json(), json!({"kind": "none"}));
        for (kind, options, clock) in [
            ("chess", json!({}), None),
            ("unane", json!({"width": 99}), None),
            ("staku", json!({}), Some(json!({"kind": "sundial"}))),
        ] {
            let e = GameSetup::parse(kind, &options, clock.as_ref()).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{kind} {options}");
        }
    }
}
