//! The live lobby: one JSON document of what is happening (public waiting rooms, live public
//! games, queue sizes, players online), sent whole on `lobby.watch` and then as batched
//! JSON Patch diffs (`lobby.diff`), like a game document.
//!
//! Why batched: a busy server changes the lobby many times a second (every room, every
//! spectator, every queue join). The publisher rebuilds the document at most once per
//! `--lobby-batch-ms` (300 ms by default) and only while someone watches; when it changed,
//! `seq` advances and one patch is encoded once and the same bytes go to every watcher.
//! Like the game document, the lobby document is a pure function of the server's state, so
//! a watcher's document with every diff applied equals a fresh snapshot of the same `seq`.
//!
//! Where the parts come from: rooms ([`crate::rooms::Rooms::public_waiting`]), queues
//! ([`crate::matchmaker::Matchmaker::counts`]) and the online count are read when the
//! document is built; games are pushed by their actors ([`Lobby::set_game`], an entry
//! derived from the game's own document by [`game_entry`]), since only an actor knows its
//! players, ratings and spectator count.
//!
//! The document (documented in the README):
//! ```text
//! {"rooms":  {<code>: {"code","kind","options","clock","rated","host":{id,name,rating},
//!                      "seats":{<side>:{id,name,rating}|null}}},
//!  "games":  {<id>: {"kind","options","rated","clock":<clock kind>,
//!                    "players":{<side>:{id,name,rating}},"spectators":N}},
//!  "queues": {<label>: {"kind","options","clock","rated","waiting":N}},
//!  "online": N}
//! ```
//! A queue's label is `kind options clock rated|casual` (its settings in canonical JSON);
//! only non-empty queues appear. `online` counts players with at least one connection.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use serde_json::{json, Map, Value};
use stoa_protocol::wire::{Rid, ServerMessage};
use tracing::Instrument;

use crate::hub::Hub;
use crate::matchmaker;
use crate::outbound::{ConnHandle, SendOutcome};
use crate::rooms::Room;

#[derive(Debug, Default)]
struct State {
    /// Live public games by id, as their actors last published them.
    games: BTreeMap<String, Value>,
    watchers: HashMap<u64, Arc<ConnHandle>>,
    /// The last published document and its seq.
    seq: u64,
    doc: Value,
}

/// The lobby held by the hub.
#[derive(Debug, Default)]
pub struct Lobby {
    state: Mutex<State>,
}

/// What the document is built from, besides the games.
struct Inputs {
    rooms: Map<String, Value>,
    queues: Map<String, Value>,
    online: usize,
}

impl Lobby {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets (or, with `None`, removes) a game's entry. Called by the game's actor whenever
    /// its document changes; cheap when the entry did not change. The change is published
    /// with the next batch.
    pub fn set_game(&self, game_id: &str, entry: Option<Value>) {
        let mut s = self.lock();
        match entry {
            Some(e) => {
                if s.games.get(game_id) != Some(&e) {
                    s.games.insert(game_id.to_string(), e);
                }
            }
            None => {
                s.games.remove(game_id);
            }
        }
    }

    /// Number of connections watching the lobby.
    pub fn watchers(&self) -> usize {
        self.lock().watchers.len()
    }

    /// Subscribes a connection and queues the `lobby` answer: the last published document,
    /// so the diffs that follow apply to it. With nobody watching before, the document is
    /// brought up to date first (it is not maintained while unwatched).
    pub fn watch(&self, hub: &Hub, conn: &Arc<ConnHandle>, rid: Option<Rid>) {
        if self.watchers() == 0 {
            self.publish(hub);
        }
        let mut s = self.lock();
        let snap = ServerMessage::Lobby {
            rid,
            seq: s.seq,
            doc: s.doc.clone(),
        };
        // Queued under the lock, so no diff can slip between the snapshot and the
        // subscription.
        if conn.send_msg(&snap) == SendOutcome::Sent {
            s.watchers.insert(conn.id, conn.clone());
        }
    }

    /// Ends a connection's subscription (`lobby.unwatch`, disconnect).
    pub fn unwatch(&self, conn_id: u64) {
        self.lock().watchers.remove(&conn_id);
    }

    /// Rebuilds the document; when it changed, advances `seq` and sends one encoded diff to
    /// every watcher (a watcher whose queue is full is dropped from the lobby).
    pub fn publish(&self, hub: &Hub) {
        // Read the other registries before taking the lobby lock: no lock is held across
        // another registry's lock.
        let inputs = inputs(hub);
        let mut s = self.lock();
        let new = build(&s.games, inputs);
        if s.doc == new {
            return;
        }
        let patch = json_patch::diff(&s.doc, &new);
        s.doc = new;
        // The seq advances even with nobody watching, so one seq always means one document.
        s.seq += 1;
        if s.watchers.is_empty() {
            return;
        }
        let msg = ServerMessage::LobbyDiff {
            seq: s.seq,
            patch: serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new())),
        };
        let bytes = Utf8Bytes::from(msg.to_json());
        s.watchers
            .retain(|_, conn| conn.send(bytes.clone()) == SendOutcome::Sent);
    }
}

fn inputs(hub: &Hub) -> Inputs {
    let mut rooms: Vec<Room> = hub.rooms.public_waiting();
    rooms.sort_by(|a, b| a.code.cmp(&b.code));
    let rooms = rooms
        .iter()
        .map(|r| (r.code.clone(), room_entry(r)))
        .collect();
    let queues = hub
        .matchmaker
        .counts()
        .into_iter()
        .map(|(key, n)| {
            let mut entry = matchmaker::describe(&key);
            entry["waiting"] = json!(n);
            (key.to_string(), entry)
        })
        .collect();
    Inputs {
        rooms,
        queues,
        online: hub.players.online_count(),
    }
}

fn build(games: &BTreeMap<String, Value>, inputs: Inputs) -> Value {
    let games: Map<String, Value> = games.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    json!({
        "rooms": inputs.rooms,
        "games": games,
        "queues": inputs.queues,
        "online": inputs.online,
    })
}

/// A public waiting room's lobby entry.
pub fn room_entry(room: &Room) -> Value {
    let info = room.info();
    json!({
        "code": info.code,
        "kind": info.kind,
        "options": info.options,
        "clock": info.clock,
        "rated": info.rated,
        "host": info.host,
        "seats": info.seats,
    })
}

/// A game's lobby entry from its document: `Some` while the game is public and playing,
/// `None` otherwise (private games never show; ended games leave the lobby). Only fields
/// that change rarely are taken (not moves or clocks), so play does not churn the lobby.
pub fn game_entry(doc: &Value) -> Option<Value> {
    if doc["visibility"] != "public" || doc["status"]["state"] != "playing" {
        return None;
    }
    let players: Map<String, Value> = doc["players"]
        .as_object()?
        .iter()
        .map(|(side, p)| {
            (
                side.clone(),
                json!({"id": p["id"], "name": p["name"], "rating": p["rating"]}),
            )
        })
        .collect();
    Some(json!({
        "kind": doc["kind"],
        "options": doc["options"],
        "rated": doc["rated"],
        "clock": doc["clock"]["kind"],
        "players": players,
        "spectators": doc["spectators"],
    }))
}

/// Starts the publisher: every `--lobby-batch-ms`, while anyone watches, publish what
/// changed; stops at shutdown.
pub fn spawn(hub: Arc<Hub>) {
    let span = tracing::info_span!("lobby");
    tokio::spawn(run(hub).instrument(span));
}

async fn run(hub: Arc<Hub>) {
    let period = Duration::from_millis(hub.config.lobby_batch_ms.clamp(10, 60_000));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = hub.shutdown.clone();
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if hub.lobby.watchers() > 0 {
                    hub.lobby.publish(&hub);
                }
            }
            r = shutdown.changed() => {
                if r.is_err() || *shutdown.borrow() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(visibility: &str, state: &str) -> Value {
        json!({
            "id": "g1", "kind": "staku", "options": {"max_stack": 3},
            "clock": {"kind": "fischer", "initial_ms": 60000, "increment_ms": 0,
                      "remaining_ms": {"white": 60000, "black": 60000}, "running": null, "since": null},
            "rated": true, "visibility": visibility,
            "players": {"white": {"id": "p1", "name": "ann", "rating": 1500},
                        "black": {"id": "p2", "name": "bob", "rating": 1620}},
            "position": "x", "to_act": "white", "moves": ["a1"], "state": {},
            "status": {"state": state, "winner": null, "reason": null},
            "draw_offer": null, "spectators": 2, "online": {"white": true, "black": true},
        })
    }

    #[test]
    fn game_entries_show_live_public_games_only() {
        assert_eq!(
            game_entry(&doc("public", "playing")),
            Some(json!({
                "kind": "staku", "options": {"max_stack": 3}, "rated": true, "clock": "fischer",
                "players": {"white": {"id": "p1", "name": "ann", "rating": 1500},
                            "black": {"id": "p2", "name": "bob", "rating": 1620}},
                "spectators": 2,
            }))
        );
        assert_eq!(game_entry(&doc("private", "playing")), None);
        assert_eq!(game_entry(&doc("public", "ended")), None);
        // Moves and clocks do not change the entry.
        let mut later = doc("public", "playing");
        later["moves"] = json!(["a1", "b2"]);
        later["clock"]["running"] = json!("black");
        assert_eq!(game_entry(&later), game_entry(&doc("public", "playing")));
    }
}
