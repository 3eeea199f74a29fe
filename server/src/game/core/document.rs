//! The game's document (protocol/docs/PROTOCOL.md, "Games and documents") and the patch
//! an event makes to it.
//!
//! Why cached fields: an event changes a few small fields, so the patch compares only
//! those (the costly ones only when the event may have touched them) against the fields
//! as of the previous event; the whole document is built only for a snapshot.

use serde_json::{json, Map, Value};

use super::patch::{diff_into, PatchOp};
use super::Core;

/// Which of the costlier parts of the document an event may have changed (the small ones —
/// clock, rated, status, side to act, draw offer — are always compared).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Touched {
    /// The position: `position` and `state` (a move).
    pub(super) game: bool,
    /// The seats (a swap).
    pub(super) players: bool,
    /// The rematch requests.
    pub(super) rematch: bool,
}

/// The parts of the document an event can change, as of the last applied event (the
/// others — id, kind, options, visibility — never change, and `moves` only grows).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Fields {
    pub(super) clock: Value,
    pub(super) rated: bool,
    pub(super) players: Value,
    pub(super) position: String,
    pub(super) to_act: Value,
    pub(super) state: Value,
    pub(super) status: Value,
    pub(super) draw_offer: Value,
    pub(super) rematch: Value,
}

impl Core {
    /// The patch from the fields as they were to the fields now, plus the moves appended
    /// since `moves_before`. Parts the event cannot have changed are not rebuilt.
    pub(super) fn patch(&mut self, moves_before: usize, touched: Touched) -> Vec<PatchOp> {
        // A move whose engine said what it changed: those members are replaced in the
        // cached view below, and the view is neither rebuilt nor compared.
        let changes = if touched.game {
            self.view_changes.take()
        } else {
            None
        };
        let mut new = self.update_fields(touched, changes.is_none());
        let mut ops = Vec::new();
        let mut path = String::with_capacity(64);
        let old = &self.fields;
        let mut field = |name: &str, old: &Value, new: &Value, ops: &mut Vec<PatchOp>| {
            path.clear();
            path.push('/');
            path.push_str(name);
            diff_into(&mut path, old, new, ops);
        };
        field("clock", &old.clock, &new.clock, &mut ops);
        if old.rated != new.rated {
            ops.push(PatchOp::replace("/rated".into(), json!(new.rated)));
        }
        field("players", &old.players, &new.players, &mut ops);
        if old.position != new.position {
            ops.push(PatchOp::replace("/position".into(), json!(new.position)));
        }
        field("to_act", &old.to_act, &new.to_act, &mut ops);
        for mv in &self.moves[moves_before..] {
            ops.push(PatchOp {
                op: "add",
                path: "/moves/-".into(),
                value: json!(mv),
            });
        }
        match changes {
            Some(changes) => {
                new.state = std::mem::take(&mut self.fields.state);
                for (pointer, value) in changes {
                    let path = format!("/state{pointer}");
                    match new.state.pointer_mut(&pointer) {
                        Some(slot) => *slot = value.clone(),
                        // Never for a correct engine; the client gets a bad patch,
                        // so say so.
                        None => tracing::error!(path, "a view change names no member"),
                    }
                    ops.push(PatchOp::replace(path, value));
                }
            }
            None => field("state", &old.state, &new.state, &mut ops),
        }
        let old = &self.fields;
        field("status", &old.status, &new.status, &mut ops);
        field("draw_offer", &old.draw_offer, &new.draw_offer, &mut ops);
        field("rematch", &old.rematch, &new.rematch, &mut ops);
        self.fields = new;
        ops
    }

    /// The fields after an event: the small ones rebuilt, the costly ones only when
    /// `touched` says the event may have changed them; the view (`state`) is left `Null`
    /// when `!rebuild_view` and the event moved (the caller updates it in place).
    fn update_fields(&self, touched: Touched, rebuild_view: bool) -> Fields {
        let names = self.game.side_names();
        let (status, to_act) = self.status_fields(names);
        let old = &self.fields;
        Fields {
            clock: self.clock.to_json(names),
            rated: self.rated,
            players: if touched.players {
                self.players_field(names)
            } else {
                old.players.clone()
            },
            position: if touched.game {
                self.game.position()
            } else {
                old.position.clone()
            },
            to_act,
            state: match (touched.game, rebuild_view) {
                (true, true) => self.game.view(),
                (true, false) => Value::Null,
                (false, _) => old.state.clone(),
            },
            status,
            draw_offer: self.draw_offer_field(names),
            rematch: if touched.rematch {
                self.rematch_field(names)
            } else {
                old.rematch.clone()
            },
        }
    }

    fn players_field(&self, names: [&str; 2]) -> Value {
        let mut players = Map::new();
        for (i, name) in names.iter().enumerate() {
            players.insert(
                name.to_string(),
                serde_json::to_value(&self.players[i]).unwrap_or(Value::Null),
            );
        }
        Value::Object(players)
    }

    fn status_fields(&self, names: [&str; 2]) -> (Value, Value) {
        match self.result {
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
                self.game
                    .to_act()
                    .map(|s| Value::String(names[s.index()].to_string()))
                    .unwrap_or(Value::Null),
            ),
        }
    }

    fn draw_offer_field(&self, names: [&str; 2]) -> Value {
        self.draw_offer
            .map_or(Value::Null, |s| Value::from(names[s.index()]))
    }

    fn rematch_field(&self, names: [&str; 2]) -> Value {
        if self.rematch_requested.is_empty() && self.rematch_game.is_none() {
            return Value::Null;
        }
        let sides: Vec<&str> = self
            .rematch_requested
            .iter()
            .filter_map(|p| self.side_of(p))
            .map(|s| names[s.index()])
            .collect();
        json!({"requested": sides, "game_id": self.rematch_game})
    }

    /// Every field built from the game state.
    pub(super) fn build_fields(&self) -> Fields {
        let names = self.game.side_names();
        let (status, to_act) = self.status_fields(names);
        Fields {
            clock: self.clock.to_json(names),
            rated: self.rated,
            players: self.players_field(names),
            position: self.game.position(),
            to_act,
            state: self.game.view(),
            status,
            draw_offer: self.draw_offer_field(names),
            rematch: self.rematch_field(names),
        }
    }

    /// The whole document at the current seq (protocol/docs/PROTOCOL.md, "Games and documents").
    pub fn document(&self) -> Value {
        let f = &self.fields;
        json!({
            "id": self.id,
            "kind": self.kind(),
            "options": self.options(),
            "clock": f.clock,
            "rated": f.rated,
            "visibility": self.visibility.as_str(),
            "players": f.players,
            "position": f.position,
            "to_act": f.to_act,
            "moves": self.moves,
            "state": f.state,
            "status": f.status,
            "draw_offer": f.draw_offer,
            "rematch": f.rematch,
        })
    }

    /// The document as freshly built from the game state (not from the cached fields the
    /// patches are computed against): tests compare it with the patched document.
    pub fn fresh_document(&self) -> Value {
        let mut doc = self.document();
        let f = self.build_fields();
        for (k, v) in [
            ("clock", f.clock),
            ("rated", json!(f.rated)),
            ("players", f.players),
            ("position", json!(f.position)),
            ("to_act", f.to_act),
            ("state", f.state),
            ("status", f.status),
            ("draw_offer", f.draw_offer),
            ("rematch", f.rematch),
        ] {
            doc[k] = v;
        }
        doc
    }
}
