//! The practice-position request: a line of moves from a position, for the engines alone.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Rid;

/// `position.explore`: the position (or the kind's start) after a line of moves. Its
/// fields are the message's own (`{"t":"position.explore","kind":...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExploreRequest {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// Game kind.
    pub kind: String,
    /// Game options (validated by the game; missing means defaults).
    #[serde(default)]
    pub options: Value,
    /// A position string of the kind's notation; missing means the start position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Moves to play from there, in order (any accepted input form).
    #[serde(default)]
    pub moves: Vec<String>,
}
