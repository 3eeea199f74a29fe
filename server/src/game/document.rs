//! Building the game document exactly as PROTOCOL.md shows it.
//!
//! Why rebuild instead of mutate: the document is a pure function of the actor's state, so
//! the diff between two builds is by construction the whole change, and a fresh snapshot
//! always equals the previous document with every patch applied.

use serde_json::{json, Map, Value};
use stoa_protocol::wire::{SeatPlayer, Visibility};
use stoa_protocol::{AnyGame, Reason, Side};

/// Everything the document is built from.
pub struct DocInput<'a> {
    /// Game id.
    pub id: &'a str,
    /// Game kind.
    pub kind: &'a str,
    /// Validated options.
    pub options: &'a Value,
    /// The clock object: the time control's fields plus the live fields
    /// (see `clock_driver::ClockDriver::to_json`).
    pub clock: Value,
    /// Rated flag (an aborted game becomes unrated).
    pub rated: bool,
    /// Visibility.
    pub visibility: Visibility,
    /// The game state.
    pub game: &'a dyn AnyGame,
    /// Players by current side index.
    pub players: &'a [SeatPlayer; 2],
    /// Every action so far, canonical notation.
    pub moves: &'a [String],
    /// The result once ended: winner side (None = draw) and reason.
    pub result: Option<(Option<Side>, Reason)>,
    /// The side with a standing draw offer.
    pub draw_offer: Option<Side>,
    /// Spectator count.
    pub spectators: u64,
    /// Online flags by current side index.
    pub online: [bool; 2],
    /// Rematch state (addition): `null`, or `{"requested":[sides],"game_id":…}`.
    pub rematch: Value,
}

/// The document.
pub fn build(d: &DocInput<'_>) -> Value {
    let names = d.game.side_names();
    let mut players = Map::new();
    let mut online = Map::new();
    for (i, name) in names.iter().enumerate() {
        players.insert(
            name.to_string(),
            serde_json::to_value(&d.players[i]).unwrap_or(Value::Null),
        );
        online.insert(name.to_string(), Value::Bool(d.online[i]));
    }
    let (status, to_act) = match d.result {
        Some((winner, reason)) => (
            json!({
                "state": "ended",
                "winner": winner.map(|s| names[s.index()]),
                "reason": reason.as_str(),
            }),
            Value::Null,
        ),
        None => (
            json!({"state": "playing", "winner": null, "reason": null}),
            d.game
                .to_act()
                .map(|s| Value::String(names[s.index()].to_string()))
                .unwrap_or(Value::Null),
        ),
    };
    json!({
        "id": d.id,
        "kind": d.kind,
        "options": d.options,
        "clock": d.clock,
        "rated": d.rated,
        "visibility": d.visibility.as_str(),
        "players": players,
        "position": d.game.position(),
        "to_act": to_act,
        "moves": d.moves,
        "state": d.game.view(),
        "status": status,
        "draw_offer": d.draw_offer.map(|s| names[s.index()]),
        "spectators": d.spectators,
        "online": online,
        "rematch": d.rematch,
    })
}
