//! The lobby's view of this game: a short summary of a public game while it is on.
//!
//! Why the actor writes it: the summary changes with the game (a swap, the end, the
//! spectator count), and the actor is the one place that sees those changes in order.

use serde_json::{json, Map, Value};
use stoa_protocol::wire::Visibility;

use super::{Actor, Role};

impl Actor {
    /// Publishes the lobby summary: public games while they are on, nothing otherwise.
    pub(super) fn update_summary(&self) {
        // Only the owner speaks for a game in the lobby (a follower's view may lag).
        let summary = (self.core.visibility() == Visibility::Public
            && self.core.result().is_none()
            && matches!(self.role, Role::Owner(_)))
        .then(|| {
            let doc_players = self.players_json();
            json!({
                "kind": self.core.kind(),
                "players": doc_players,
                "clock": self.core.clock().time_control().kind(),
                // Additions: the whole time control and the options, so a lobby line can
                // say `5+3` and the board size as rooms do.
                "time_control": self.core.clock().request_json(),
                "options": self.core.options(),
                "rated": self.core.rated(),
                "spectators": self.spectators,
            })
        });
        *self.summary.lock() = summary;
    }

    pub(super) fn players_json(&self) -> Value {
        let names = self.core.side_names();
        let mut players = Map::new();
        for (i, p) in self.core.players().iter().enumerate() {
            players.insert(
                names[i].to_string(),
                serde_json::to_value(p).unwrap_or(Value::Null),
            );
        }
        Value::Object(players)
    }
}
