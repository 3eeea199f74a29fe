//! The lobby document: public waiting rooms, live public games, matchmaking queue counts and
//! the number of players online, sent whole on `lobby.watch` and then pushed to watchers as
//! JSON Patch diffs (`lobby.diff`) like game documents.
//!
//! Why pull-based on a timer: the lobby changes with every connection, spectator and queue
//! join, so it is rebuilt from the registries at most once per batch period
//! (`--lobby-batch-ms`, 300 ms by default) and only while someone watches; a real change
//! costs one diff, encoded once, the same bytes for every watcher. The document is a pure
//! function of the registries, so a watcher's document with every diff applied equals a
//! fresh snapshot of the same `seq`. Private rooms and games never appear here.
//!
//! The document (documented in protocol/docs/PROTOCOL.md, "Lobby"):
//! ```text
//! {"rooms":  {<code>: {room as in the `room` answer, without `code`: kind, options, clock,
//!                      rated, visibility, host {id,name,rating}, seats, status}},
//!  "games":  {<id>: {"kind","players":{<side>:{id,name,rating}},"clock":<clock kind>,
//!                    "time_control":<clock request object>,"options","rated","spectators"}},
//!  "queues": {<label>: {"kind","options","clock","rated","waiting":N}},
//!  "arenas": {<id>: {"name","kind","options","clock","rated","starts_at","ends_at",
//!                    "status","players":N}},
//!  "online": N}
//! ```
//! Games are summarised by their actors (`GameHandle::summary`), since only an actor knows
//! its players, ratings and spectators. A queue's label is `kind options clock rated|casual`
//! (its settings as canonical JSON); only non-empty queues appear. `online` counts players
//! with at least one connection.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use stoa_protocol::wire::Rid;

use crate::game::games::Games;
use crate::game::players::Players;
use crate::game::published::{Kind, Published};
use crate::game::queues::{self, Matchmaker};
use crate::net::outbound::ConnHandle;
use crate::services::arenas::Arenas;
use crate::services::bots::Bots;
use crate::services::rooms::Rooms;
use crate::services::topology::Topology;

/// The messages the lobby document goes out in (it is one: they name none).
static LOBBY: Kind = Kind {
    snapshot: "lobby",
    snapshot_id: None,
    diff: "lobby.diff",
    diff_id: None,
};

/// What the lobby document is built from: the registries of this node, and the other
/// nodes' parts through the topology.
pub struct Sources {
    /// Arena tournaments (the public ones scheduled or running are listed).
    pub arenas: Arc<Arenas>,
    /// Waiting rooms.
    pub rooms: Arc<Rooms>,
    /// Live games (their summaries).
    pub games: Arc<Games>,
    /// The matchmaking queues (their sizes).
    pub queues: Arc<Matchmaker>,
    /// Players online.
    pub players: Arc<Players>,
    /// The bots serving here (listed for the other nodes with the lobby part).
    pub bots: Arc<Bots>,
    /// The other nodes.
    pub topology: Arc<dyn Topology>,
    /// How often the document is rebuilt while watched (`--lobby-batch-ms`).
    pub batch: Duration,
    /// Flips to `true` when the server shuts down.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

/// Lobby watchers and the current lobby document.
pub struct Lobby {
    /// The document as last built (`null` until first watched), its seq and watchers.
    published: Mutex<Published<Value>>,
    /// The other nodes' parts of the lobby, as last read.
    remote: Mutex<Vec<Value>>,
    sources: Sources,
}

impl std::fmt::Debug for Lobby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lobby").finish_non_exhaustive()
    }
}

impl Lobby {
    /// An empty lobby over its sources.
    pub fn new(sources: Sources) -> Self {
        Lobby {
            // No replay: `lobby.watch` has no `since`, a watcher back gets the snapshot.
            published: Mutex::new(Published::new(Value::Null, 0, &LOBBY, "", 0)),
            remote: Mutex::new(Vec::new()),
            sources,
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Published<Value>> {
        self.published.lock()
    }

    /// Number of connections watching the lobby.
    pub fn watchers(&self) -> usize {
        self.lock().len()
    }

    /// Subscribes a connection and queues the `lobby` snapshot on it (under the same lock as
    /// broadcasts, so no diff is missed or duplicated). The document is not maintained while
    /// nobody watches, so the first watcher brings it up to date first.
    pub fn watch(&self, conn: Arc<ConnHandle>, rid: Option<Rid>) {
        if self.watchers() == 0 {
            self.refresh();
        }
        self.lock().watch(conn, rid.as_ref());
    }

    /// Ends a connection's subscription.
    pub fn unwatch(&self, conn_id: u64) {
        self.lock().unsubscribe(conn_id);
    }

    /// Rebuilds the document and broadcasts the diff when it changed. The seq advances with
    /// every change, watched or not, so one seq always means one document.
    pub fn refresh(&self) {
        // Built before taking the lobby lock: no other registry's lock is taken under it.
        let new = self.build();
        let mut published = self.lock();
        if published.doc().is_null() {
            // The first build: nobody has seen a document under seq 0 yet.
            published.replace(new);
            return;
        }
        published.update(new);
    }
}

impl Lobby {
    /// Runs the lobby refresher until the server stops: every batch period, while anyone
    /// watches.
    pub async fn run(self: Arc<Self>) {
        let src = &self.sources;
        let period = src
            .batch
            .clamp(Duration::from_millis(10), Duration::from_secs(60));
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut shutdown = src.shutdown.clone();
        let mut shared: Option<(Value, std::time::Instant)> = None;
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if src.topology.lists_with_others() {
                        // This node's part goes to the others when it changed (and at least
                        // every second, to keep it alive); the others' parts are read while
                        // someone here watches.
                        let part = self.local_part();
                        let stale = shared.as_ref().is_none_or(|(last, at)| {
                            *last != part || at.elapsed() >= Duration::from_secs(1)
                        });
                        if stale {
                            src.topology.put_lobby_part(&part).await;
                            // The bots serving here, for people on other nodes (it lapses
                            // with this node, like the lobby part).
                            src.topology.put_bots(&src.bots.listing()).await;
                            shared = Some((part, std::time::Instant::now()));
                        }
                        if self.watchers() > 0 {
                            let parts = src.topology.lobby_parts().await;
                            *self.remote.lock() = parts;
                        }
                    }
                    if self.watchers() > 0 {
                        self.refresh();
                    }
                }
                _ = shutdown.changed() => break,
            }
        }
    }

    /// The whole lobby: this node's part merged with the other nodes' (cluster mode).
    fn build(&self) -> Value {
        let mut doc = self.local_part();
        let remote = self.remote.lock().clone();
        for part in remote {
            for section in ["rooms", "games", "arenas"] {
                if let Some(theirs) = part[section].as_object() {
                    for (k, v) in theirs {
                        doc[section][k.as_str()] = v.clone();
                    }
                }
            }
            if let Some(queues) = part["queues"].as_object() {
                for (label, entry) in queues {
                    let theirs = entry["waiting"].as_u64().unwrap_or(0);
                    match doc["queues"].get_mut(label) {
                        Some(mine) => {
                            let n = mine["waiting"].as_u64().unwrap_or(0) + theirs;
                            mine["waiting"] = json!(n);
                        }
                        None => doc["queues"][label] = entry.clone(),
                    }
                }
            }
            let online = doc["online"].as_u64().unwrap_or(0) + part["online"].as_u64().unwrap_or(0);
            doc["online"] = json!(online);
        }
        doc
    }

    /// What this node contributes to the lobby: its waiting public rooms, the public games it
    /// owns, its queues and its players online.
    fn local_part(&self) -> Value {
        let src = &self.sources;
        let mut rooms = Map::new();
        let mut waiting = src.rooms.public_waiting();
        waiting.sort_by(|a, b| a.code.cmp(&b.code));
        for room in waiting {
            let mut info = serde_json::to_value(room.info()).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut info {
                m.remove("code");
            }
            rooms.insert(room.code.to_string(), info);
        }
        let mut games = Map::new();
        for (id, summary) in src.games.public_summaries() {
            games.insert(id.into_string(), summary);
        }
        let mut queues = Map::new();
        for (key, n) in src.queues.counts() {
            let mut entry = queues::describe(&key);
            entry["waiting"] = json!(n);
            queues.insert(key.to_string(), entry);
        }
        json!({
            "rooms": rooms,
            "games": games,
            "queues": queues,
            "arenas": src.arenas.lobby_listing(),
            "online": src.players.online_count(),
        })
    }
}
