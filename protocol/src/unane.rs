//! Unane rules engine (work in progress: replaced by the engine's implementation).

use serde::{Deserialize, Serialize};

use crate::game::{Game, Outcome, RulesError, Side};

/// Options of Unane.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

/// A Unane game state.
#[derive(Clone, Debug)]
pub struct Unane {}

impl Game for Unane {
    type Options = Options;
    type Action = u32;
    const KIND: &'static str = "unane";
    const SIDE_NAMES: [&'static str; 2] = ["black", "white"];

    fn validate_options(options: Options) -> Result<Options, RulesError> {
        Ok(options)
    }
    fn start(_options: &Options) -> Self {
        todo!()
    }
    fn from_position(_options: &Options, _position: &str) -> Result<Self, RulesError> {
        todo!()
    }
    fn position(&self) -> String {
        todo!()
    }
    fn to_act(&self) -> Option<Side> {
        todo!()
    }
    fn outcome(&self) -> Option<Outcome> {
        todo!()
    }
    fn legal_actions(&self, _out: &mut Vec<u32>) {
        todo!()
    }
    fn apply(&mut self, _action: u32) {
        todo!()
    }
    fn parse_action(&self, _text: &str) -> Result<u32, RulesError> {
        todo!()
    }
    fn format_action(&self, _action: u32) -> String {
        todo!()
    }
    fn view(&self) -> serde_json::Value {
        todo!()
    }
}
