//! The lobby document: public waiting rooms, live public games, queue counts and the number
//! of players online, pushed to watchers as JSON Patch diffs like game documents.
//!
//! Why pull-based on a timer: the lobby changes with every connection and spectator, so it is
//! rebuilt from the registries at most once per batch period and only a real change costs a
//! diff. Private rooms and games never appear here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use serde_json::{json, Map, Value};
use stoa_protocol::wire::{Rid, ServerMessage};

use crate::hub::Hub;
use crate::outbound::{ConnHandle, SendOutcome};

#[derive(Default)]
struct Inner {
    seq: u64,
    doc: Value,
    watchers: HashMap<u64, Arc<ConnHandle>>,
}

/// Lobby watchers and the current lobby document.
#[derive(Default)]
pub struct Lobby {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Lobby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lobby").finish_non_exhaustive()
    }
}

impl Lobby {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Subscribes a connection and queues the `lobby` snapshot on it (under the same lock as
    /// broadcasts, so no diff is missed or duplicated).
    pub fn watch(&self, hub: &Hub, conn: Arc<ConnHandle>, rid: Option<Rid>) {
        let mut inner = self.lock();
        if inner.doc.is_null() {
            inner.doc = build(hub);
        }
        let msg = ServerMessage::Lobby {
            rid,
            seq: inner.seq,
            doc: inner.doc.clone(),
        };
        if conn.send_msg(&msg) == SendOutcome::Sent {
            inner.watchers.insert(conn.id, conn);
        }
    }

    /// Ends a connection's subscription.
    pub fn unwatch(&self, conn_id: u64) {
        self.lock().watchers.remove(&conn_id);
    }

    /// Rebuilds the document and broadcasts the diff when it changed.
    pub fn refresh(&self, hub: &Hub) {
        let new = build(hub);
        let mut inner = self.lock();
        if inner.doc.is_null() {
            inner.doc = new;
            return;
        }
        let patch = json_patch::diff(&inner.doc, &new);
        if patch.0.is_empty() {
            return;
        }
        inner.seq += 1;
        inner.doc = new;
        let msg = ServerMessage::LobbyDiff {
            seq: inner.seq,
            patch: serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new())),
        };
        let bytes = Utf8Bytes::from(msg.to_json());
        inner
            .watchers
            .retain(|_, c| c.send(bytes.clone()) == SendOutcome::Sent);
    }
}

/// Runs the lobby refresher until the server stops.
pub async fn run(hub: Arc<Hub>) {
    let period = Duration::from_millis(hub.config.lobby_batch_ms.max(10));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = hub.shutdown.clone();
    loop {
        tokio::select! {
            _ = tick.tick() => hub.lobby.refresh(&hub),
            _ = shutdown.changed() => break,
        }
    }
}

fn build(hub: &Hub) -> Value {
    let mut rooms = Map::new();
    for room in hub.rooms.public_waiting() {
        let mut info = serde_json::to_value(room.info()).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut info {
            m.remove("code");
        }
        rooms.insert(room.code.clone(), info);
    }
    let mut games = Map::new();
    for (id, summary) in hub.games.public_summaries() {
        games.insert(id, summary);
    }
    json!({
        "rooms": rooms,
        "games": games,
        "queues": {},
        "online": hub.players.online_count(),
    })
}
