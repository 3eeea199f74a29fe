//! The game's document (protocol/docs/PROTOCOL.md, "Games and documents") and the patch
//! an event makes to it.
//!
//! Why cached fields: an event changes a few small fields, so the patch compares only
//! those (the costly ones only when the event may have touched them) against the fields
//! as of the previous event; the engine's view and the whole document are built only for
//! a snapshot, since a move's engine says which members of its view it changed.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::patch::{diff_into, PatchOp};
use super::Core;
use crate::game::clock_shown::ClockShown;

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
/// others — id, kind, options, visibility — never change, `moves` only grows, and the
/// engine's view is built only for a snapshot: a move's patch comes from the engine's
/// own list of what it changed).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Fields {
    pub(super) clock: Value,
    pub(super) rated: bool,
    pub(super) players: Value,
    pub(super) position: String,
    /// The side to act's name (`None`: nobody, or the game is over): a name kept, not a
    /// JSON string, so a move builds its value once, for its patch.
    pub(super) to_act: Option<&'static str>,
    pub(super) status: Value,
    pub(super) draw_offer: Value,
    pub(super) rematch: Value,
    /// `null` outside arenas.
    pub(super) arena: Value,
}

/// The `to_act` member's value: a side's name, or `null` when nobody is to act.
fn to_act_value(to_act: Option<&'static str>) -> Value {
    to_act.map_or(Value::Null, Value::from)
}

/// `pointer` under the document's member `prefix`, in place (the engines leave room for
/// it, see `stoa_protocol::pointer::CAPACITY`): no formatting and, mostly, no allocation.
fn prefixed(prefix: &str, mut pointer: String) -> String {
    pointer.insert_str(0, prefix);
    pointer
}

/// Appends the diff of the document's member `name` from `old` to `new`, and keeps `new`
/// as the member's value (`path`: a buffer for the pointers, reused).
fn diff_member(path: &mut String, name: &str, old: &mut Value, new: Value, ops: &mut Vec<PatchOp>) {
    path.clear();
    path.push('/');
    path.push_str(name);
    diff_into(path, old, &new, ops);
    *old = new;
}

impl Core {
    /// The patch from the fields as they were to the fields now, plus the moves appended
    /// since `moves_before`, in the document's member order. Parts the event cannot have
    /// changed are neither rebuilt nor compared.
    pub(super) fn patch(&mut self, moves_before: usize, touched: Touched) -> Vec<PatchOp> {
        let names = self.game.side_names();
        // Room for a move's operations (the clock, position, side to act, the move, a few
        // cells and counts) without growing; the path is built only for a member diffed
        // whole, which most events have none of.
        let mut ops = Vec::with_capacity(16);
        let mut path = String::new();
        self.patch_clock(names, &mut ops);
        if self.fields.rated != self.rated {
            self.fields.rated = self.rated;
            ops.push(PatchOp::replace("/rated", json!(self.rated)));
        }
        if touched.players {
            let players = self.players_field(names);
            diff_member(
                &mut path,
                "players",
                &mut self.fields.players,
                players,
                &mut ops,
            );
        }
        if touched.game {
            self.patch_position(&mut ops);
        }
        // Read before the status is compared below: it is the status as of the last event.
        let still_playing = self.still_playing();
        self.patch_to_act(names, &mut ops);
        for mv in &self.moves[moves_before..] {
            ops.push(PatchOp {
                op: "add",
                path: Cow::Borrowed("/moves/-"),
                value: Value::String(mv.clone()),
            });
        }
        if touched.game {
            self.patch_state(&mut ops);
        }
        if !still_playing {
            let (status, _) = self.status_fields(names);
            diff_member(
                &mut path,
                "status",
                &mut self.fields.status,
                status,
                &mut ops,
            );
        }
        let offer = self.draw_offer.map(|s| names[s.index()]);
        if self.fields.draw_offer.as_str() != offer
            || offer.is_none() != self.fields.draw_offer.is_null()
        {
            let offer = self.draw_offer_field(names);
            diff_member(
                &mut path,
                "draw_offer",
                &mut self.fields.draw_offer,
                offer,
                &mut ops,
            );
        }
        if touched.rematch {
            let rematch = self.rematch_field(names);
            diff_member(
                &mut path,
                "rematch",
                &mut self.fields.rematch,
                rematch,
                &mut ops,
            );
        }
        if self.arena.is_some() {
            let arena = self.arena_field(names);
            diff_member(&mut path, "arena", &mut self.fields.arena, arena, &mut ops);
        }
        ops
    }

    /// The clock's member, compared as numbers: only the members that changed are
    /// replaced (in the cached member too), and no JSON is built per event.
    fn patch_clock(&mut self, names: [&'static str; 2], ops: &mut Vec<PatchOp>) {
        let shown = ClockShown::of(&self.clock);
        if shown == self.clock_shown {
            return;
        }
        for (pointer, value) in shown.changes(&self.clock_shown, names) {
            match self.fields.clock.pointer_mut(&pointer) {
                Some(slot) => *slot = value.clone(),
                // Never: the member has every key `changes` names.
                None => tracing::error!(pointer, "a clock change names no member"),
            }
            ops.push(PatchOp::replace(prefixed("/clock", pointer), value));
        }
        self.clock_shown = shown;
    }

    /// The position after a move (the engine's string, as the move left it when known).
    fn patch_position(&mut self, ops: &mut Vec<PatchOp>) {
        let position = self
            .position_known
            .take()
            .unwrap_or_else(|| self.game.position());
        if position != self.fields.position {
            ops.push(PatchOp::replace(
                "/position",
                Value::String(position.clone()),
            ));
        }
        self.fields.position = position;
    }

    /// Whether the document shows the game playing, with no result since. Status, side
    /// to act and draw offer are compared before any JSON is built: a move of a game in
    /// play changes at most the side to act, and a game that is playing always shows the
    /// same status (its three members are scanned, not hashed).
    fn still_playing(&self) -> bool {
        self.result.is_none()
            && self.fields.status.as_object().is_some_and(|m| {
                m.iter()
                    .any(|(k, v)| k == "state" && v.as_str() == Some("playing"))
            })
    }

    /// The side to act: a string or null, replaced whole, as the diff of two scalars
    /// would be.
    fn patch_to_act(&mut self, names: [&'static str; 2], ops: &mut Vec<PatchOp>) {
        let to_act = match self.result {
            Some(_) => None,
            None => self.game.to_act().map(|s| names[s.index()]),
        };
        if self.fields.to_act != to_act {
            ops.push(PatchOp::replace("/to_act", to_act_value(to_act)));
            self.fields.to_act = to_act;
        }
    }

    /// The engine's view after a move: the members it says it changed, or the whole view
    /// from an engine that cannot tell.
    fn patch_state(&mut self, ops: &mut Vec<PatchOp>) {
        match self.view_changes.take() {
            Some(changes) => ops.extend(
                changes
                    .into_iter()
                    .map(|(pointer, value)| PatchOp::replace(prefixed("/state", pointer), value)),
            ),
            None => ops.push(PatchOp::replace("/state", self.game.view())),
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

    fn status_fields(&self, names: [&'static str; 2]) -> (Value, Option<&'static str>) {
        match self.result {
            Some((winner, reason)) => (
                json!({
                    "state": "ended",
                    "winner": winner.map(|s| names[s.index()]),
                    "reason": reason.as_str(),
                }),
                None,
            ),
            None => (
                json!({"state": "playing", "winner": null, "reason": null}),
                self.game.to_act().map(|s| names[s.index()]),
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

    /// An arena game's member: the arena's id, and who went berserk (by side).
    fn arena_field(&self, names: [&str; 2]) -> Value {
        match &self.arena {
            None => Value::Null,
            Some(link) => json!({
                "id": link.id,
                "berserk": {
                    names[0]: self.berserk(stoa_protocol::Side::First),
                    names[1]: self.berserk(stoa_protocol::Side::Second),
                },
            }),
        }
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
            status,
            draw_offer: self.draw_offer_field(names),
            rematch: self.rematch_field(names),
            arena: self.arena_field(names),
        }
    }

    /// The whole document at the current seq (protocol/docs/PROTOCOL.md, "Games and documents").
    pub fn document(&self) -> Value {
        let f = &self.fields;
        // Members cloned or moved in, in the document's order: `json!` would copy each
        // value through a serializer (most of a snapshot's and a finished game's cost).
        let moves = self.moves.iter().cloned().map(Value::String).collect();
        let members: [(&str, Value); 14] = [
            ("id", Value::String(self.id.to_string())),
            ("kind", Value::from(self.kind())),
            ("options", self.options().clone()),
            ("clock", f.clock.clone()),
            ("rated", Value::Bool(f.rated)),
            ("visibility", Value::from(self.visibility.as_str())),
            ("players", f.players.clone()),
            ("position", Value::String(f.position.clone())),
            ("to_act", to_act_value(f.to_act)),
            ("moves", Value::Array(moves)),
            ("state", self.game.view()),
            ("status", f.status.clone()),
            ("draw_offer", f.draw_offer.clone()),
            ("rematch", f.rematch.clone()),
        ];
        let mut doc = Map::with_capacity(members.len() + 2);
        for (name, value) in members {
            doc.insert(name.to_string(), value);
            // Only a game from a position has the member (after its options, which go
            // with it): other documents stay as they were, byte for byte.
            if name == "options" {
                if let Some(start) = self.setup.start_str() {
                    doc.insert("start".to_string(), Value::from(start));
                }
            }
        }
        // Only arena games have the member: other documents stay as they were.
        if !f.arena.is_null() {
            doc.insert("arena".to_string(), f.arena.clone());
        }
        Value::Object(doc)
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
            ("to_act", to_act_value(f.to_act)),
            ("status", f.status),
            ("draw_offer", f.draw_offer),
            ("rematch", f.rematch),
        ] {
            doc[k] = v;
        }
        if !f.arena.is_null() {
            doc["arena"] = f.arena;
        }
        doc
    }
}
