//! An arena's document (protocol/docs/PROTOCOL.md, "Arenas (additions)") and its entry
//! in the lobby, built from its state at a given time (its status moves with the clock).

use serde_json::{json, Map, Value};
use stoa_protocol::wire::Visibility;

use super::ArenaState;

impl ArenaState {
    /// The whole document at `now` (`code` shown: private arenas show it to those who may
    /// see them).
    pub fn document(&self, now: u64) -> Value {
        let s = &self.settings;
        let names = s.setup.kind.side_names;
        let players: Vec<Value> = self
            .standings()
            .into_iter()
            .map(|p| {
                json!({
                    "id": p.id,
                    "name": p.name,
                    "rating": p.rating,
                    "bot": p.bot,
                    "score": p.sheet.score,
                    "sheet": p.sheet.text(),
                    "fire": p.sheet.fire(),
                    "games": p.sheet.games(),
                    "wins": p.sheet.wins,
                    "draws": p.sheet.draws,
                    "losses": p.sheet.losses,
                    "performance": p.sheet.performance(),
                    "paused": p.paused,
                    "playing": p.playing,
                })
            })
            .collect();
        let mut games = Map::new();
        for g in &self.games {
            let mut entry = Map::new();
            entry.insert(names[0].to_string(), json!(g.players[0]));
            entry.insert(names[1].to_string(), json!(g.players[1]));
            entry.insert(
                "ratings".into(),
                json!({g.players[0].as_str(): g.ratings[0], g.players[1].as_str(): g.ratings[1]}),
            );
            entry.insert("started_at".into(), json!(g.started_at));
            match &g.ended {
                None => {
                    entry.insert("status".into(), json!("playing"));
                }
                Some(e) => {
                    entry.insert(
                        "status".into(),
                        json!(if e.aborted { "aborted" } else { "ended" }),
                    );
                    entry.insert("winner".into(), json!(e.winner));
                    entry.insert("plies".into(), json!(e.plies));
                    entry.insert("berserk".into(), json!(e.berserk));
                    entry.insert("points".into(), json!(e.points));
                }
            }
            games.insert(g.id.to_string(), Value::Object(entry));
        }
        let mut doc = json!({
            "id": s.id,
            "name": s.name,
            "kind": s.setup.kind_id(),
            "options": s.setup.options,
            "clock": s.setup.clock_json(),
            "rated": s.rated,
            "visibility": s.visibility.as_str(),
            "creator": {"id": s.creator.0, "name": s.creator.1},
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "cutoff_at": self.cutoff_at(),
            "status": self.status(now).as_str(),
            "berserk": s.berserk,
            "bots": s.bots,
            "min_draw_plies": s.min_draw_plies,
            "players": players,
            "games": games,
            "top_game": self.top_game(),
        });
        if let Some(code) = &s.code {
            doc["code"] = json!(code);
        }
        doc
    }

    /// The lobby's entry for a public arena that is scheduled or running.
    pub fn lobby_entry(&self, now: u64) -> Option<Value> {
        let s = &self.settings;
        if s.visibility != Visibility::Public || !self.status(now).is_open() {
            return None;
        }
        Some(json!({
            "name": s.name,
            "kind": s.setup.kind_id(),
            "options": s.setup.options,
            "clock": s.setup.clock_json(),
            "rated": s.rated,
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "status": self.status(now).as_str(),
            "players": self.players.len(),
        }))
    }
}
