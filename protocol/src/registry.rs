//! The registry: game ids on the wire mapped to rules engines.

use serde_json::Value;

use crate::any_game::{AnyGame, Instance};
use crate::game::{Game, RulesError};
use crate::{akron, akunur, staku, unane};

/// A type-erased result: a boxed game or why it could not be built.
type GameResult = Result<Box<dyn AnyGame>, RulesError>;

/// One registered game kind: its id, side names and constructors behind erased types.
pub struct GameKind {
    /// The id used on the wire.
    pub id: &'static str,
    /// Side names, first-acting side first.
    pub side_names: [&'static str; 2],
    validate: fn(&Value) -> Result<Value, RulesError>,
    start: fn(&Value) -> GameResult,
    from_position: fn(&Value, &str) -> GameResult,
}

impl GameKind {
    /// The registry entry for an engine type.
    pub const fn of<G: Game>() -> GameKind {
        GameKind {
            id: G::KIND,
            side_names: G::SIDE_NAMES,
            validate: validate::<G>,
            start: start::<G>,
            from_position: from_position::<G>,
        }
    }

    /// Validates options JSON (missing fields take defaults; `null` means all defaults) and
    /// returns the normalised options with every field filled in.
    pub fn validate_options(&self, options: &Value) -> Result<Value, RulesError> {
        (self.validate)(options)
    }

    /// A new game at the start position.
    pub fn start(&self, options: &Value) -> Result<Box<dyn AnyGame>, RulesError> {
        (self.start)(options)
    }

    /// A game loaded from a position string.
    pub fn from_position(
        &self,
        options: &Value,
        position: &str,
    ) -> Result<Box<dyn AnyGame>, RulesError> {
        (self.from_position)(options, position)
    }
}

impl std::fmt::Debug for GameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameKind").field("id", &self.id).finish()
    }
}

/// Every game the server offers. A new game is one line here.
pub static KINDS: &[GameKind] = &[
    GameKind::of::<unane::Unane>(),
    GameKind::of::<staku::Staku>(),
    GameKind::of::<akron::Akron>(),
    GameKind::of::<akunur::Akunur>(),
];

/// Looks a kind up by its wire id.
pub fn kind(id: &str) -> Result<&'static GameKind, RulesError> {
    KINDS
        .iter()
        .find(|k| k.id == id)
        .ok_or_else(|| RulesError::UnknownKind(id.to_string()))
}

fn parse_options<G: Game>(options: &Value) -> Result<G::Options, RulesError> {
    let raw = match options {
        Value::Null => G::Options::default(),
        Value::Object(_) => serde_json::from_value(options.clone())
            .map_err(|e| RulesError::options(format!("{}: {e}", G::KIND)))?,
        other => {
            return Err(RulesError::options(format!(
                "{}: options must be a JSON object, got {other}",
                G::KIND
            )))
        }
    };
    G::validate_options(raw)
}

fn validate<G: Game>(options: &Value) -> Result<Value, RulesError> {
    let options = parse_options::<G>(options)?;
    serde_json::to_value(&options).map_err(|e| RulesError::options(e.to_string()))
}

fn start<G: Game>(options: &Value) -> Result<Box<dyn AnyGame>, RulesError> {
    let options = parse_options::<G>(options)?;
    let state = G::start(&options);
    Ok(Box::new(Instance::new(options, state)))
}

fn from_position<G: Game>(options: &Value, position: &str) -> Result<Box<dyn AnyGame>, RulesError> {
    let options = parse_options::<G>(options)?;
    let state = G::from_position(&options, position)?;
    Ok(Box::new(Instance::new(options, state)))
}
