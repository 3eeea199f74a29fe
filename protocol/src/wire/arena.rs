//! An arena's settings as a client asks for them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Visibility;

/// Addition: an arena's settings as `arena.create` gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArenaSettings {
    /// Game kind.
    pub kind: String,
    /// Game options (missing: defaults).
    #[serde(default)]
    pub options: Value,
    /// Clock request object (missing: no clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Value>,
    /// Rated games.
    #[serde(default)]
    pub rated: bool,
    /// Start in this many ms (or give `starts_at_ms`; neither: at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_in_ms: Option<u64>,
    /// Start at this server time, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_at_ms: Option<u64>,
    /// How long the arena runs, ms (10 s to 24 h).
    pub duration_ms: u64,
    /// `public` (default: listed in the lobby) or `private` (joined by code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// A name (1-40 printable characters; default from the kind and clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Computer players may join (casual arenas only).
    #[serde(default)]
    pub bots: bool,
    /// Players may go berserk (timed arenas only, not correspondence).
    #[serde(default)]
    pub berserk: bool,
    /// Draws with fewer plies score nothing (default 0).
    #[serde(default)]
    pub min_draw_plies: u32,
}
