//! What a run did and saw, recorded as it happens for the checker: every operation a
//! player sent with its answer, every document a client held at each `(game, seq)`, the
//! games played, and the fault episodes.
//!
//! Documents are kept once per `(game, seq)` in canonical form (object keys sorted), so a
//! long run holds one copy per version however many clients saw it; a client holding a
//! different document at the same version is recorded beside it as a divergence at once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// An action a player sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `game.move` with this (canonical, from `game.legal`) notation.
    Move(String),
    /// `game.resign`.
    Resign,
    /// `game.draw` with `offer`, `accept` or `decline`.
    Draw(String),
}

impl Action {
    /// The log entry types this action may produce (`offer` accepts a standing offer).
    pub fn log_types(&self) -> &'static [&'static str] {
        match self {
            Action::Move(_) => &["move"],
            Action::Resign => &["resign"],
            Action::Draw(a) if a == "offer" => &["draw_offer", "draw_accept"],
            Action::Draw(a) if a == "accept" => &["draw_accept"],
            Action::Draw(_) => &["draw_decline"],
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Move(m) => write!(f, "move {m}"),
            Action::Resign => write!(f, "resign"),
            Action::Draw(a) => write!(f, "draw {a}"),
        }
    }
}

/// The answer an operation got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `{"t":"ok","seq"}`.
    Ok(u64),
    /// `{"t":"error","code"}`.
    Error(String),
    /// No answer in time, or the connection closed: it may or may not have happened.
    Unknown,
}

/// One operation: a request a player sent and what came back.
#[derive(Clone, Debug)]
pub struct Op {
    /// Game id.
    pub game: String,
    /// Acting player id.
    pub player: String,
    /// What was asked.
    pub action: Action,
    /// The `seq` of the document the player held when sending (sent with moves).
    pub client_seq: u64,
    /// The answer.
    pub answer: Answer,
    /// When it was sent and answered (or given up), from the run's start.
    pub start: Duration,
    /// See `start`.
    pub end: Duration,
    /// The node (index) the player was connected to.
    pub node: usize,
}

/// A game the workload played.
#[derive(Clone, Debug)]
pub struct GameInfo {
    /// Game id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// The room code, for private games (watching and `GET /api/games` need it).
    pub code: Option<String>,
    /// When the workload learnt it started.
    pub started: Duration,
    /// The first time any client saw it ended, and the lowest seq at which a document
    /// showed it ended.
    pub ended: Option<(Duration, u64)>,
}

/// A fault episode, as the nemesis ran it.
#[derive(Clone, Debug)]
pub struct Episode {
    /// What was done (e.g. `kill`, `delay 250ms`).
    pub fault: String,
    /// The short kind name, for the table.
    pub kind: &'static str,
    /// The faulted node's index, if the fault targets one node.
    pub node: Option<usize>,
    /// When the fault began.
    pub fault_at: Duration,
    /// When everything was healed (the node restarted, resumed, its link back...).
    pub heal_at: Duration,
    /// Games the faulted node held the lease of when the fault began: their next `ok`
    /// measures the takeover.
    pub owned: Vec<String>,
    /// When the fault promoted a replica (Sentinel mode): when the new primary first said
    /// it was one. Every game's next `ok` measures the recovery.
    pub promoted_at: Option<Duration>,
}

/// The first document seen at one `(game, seq)`, and anything different seen since.
#[derive(Debug)]
pub struct Version {
    /// Canonical JSON of the first document.
    pub canonical: String,
    /// The document.
    pub doc: Value,
    /// Who held it first.
    pub observer: String,
    /// Other observers' different documents (observer, document), the first few.
    pub divergent: Vec<(String, Value)>,
}

/// Everything recorded, behind one lock (writes are tiny and rare compared with the
/// network round trips around them).
#[derive(Default, Debug)]
pub struct Recorded {
    /// Operations in the order they ended.
    pub ops: Vec<Op>,
    /// Games by id.
    pub games: BTreeMap<String, GameInfo>,
    /// Document versions by game, then seq.
    pub docs: HashMap<String, BTreeMap<u64, Version>>,
    /// Client-side anomalies: a diff that does not apply to the document it follows.
    pub anomalies: Vec<String>,
    /// Fault episodes.
    pub episodes: Vec<Episode>,
    /// Clients that never saw the end of their game although a player did.
    pub left_behind: Vec<String>,
    /// Per game, per observer (`host p… @n2`): the last seq it held and when.
    pub views: HashMap<String, BTreeMap<String, (u64, Duration)>>,
    /// Per game, the clients' last few troubles (a refused watch, a reconnect), for
    /// reports of stuck games.
    pub notes: HashMap<String, Vec<String>>,
}

/// A shared, cloneable handle on the run's history.
#[derive(Clone)]
pub struct History {
    epoch: Instant,
    /// The wall clock at `epoch`, ms since the Unix epoch (the log's `at_ms` is the
    /// servers' wall clock, on the same machine).
    epoch_ms: u64,
    inner: Arc<Mutex<Recorded>>,
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    /// An empty history starting now.
    pub fn new() -> History {
        let epoch_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        History {
            epoch: Instant::now(),
            epoch_ms,
            inner: Arc::default(),
        }
    }

    /// Time since the run started.
    pub fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// A server wall-clock time (`at_ms`) as time since the run started.
    pub fn since_start(&self, at_ms: u64) -> Duration {
        Duration::from_millis(at_ms.saturating_sub(self.epoch_ms))
    }

    /// The recorded data.
    pub fn lock(&self) -> MutexGuard<'_, Recorded> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an operation.
    pub fn op(&self, op: Op) {
        self.lock().ops.push(op);
    }

    /// Records a game the workload started.
    pub fn game(&self, info: GameInfo) {
        self.lock().games.insert(info.id.clone(), info);
    }

    /// Records a fault episode.
    pub fn episode(&self, e: Episode) {
        self.lock().episodes.push(e);
    }

    /// Records a client-side anomaly.
    pub fn anomaly(&self, what: String) {
        self.lock().anomalies.push(what);
    }

    /// Records a client that did not see its game end within the grace time although a
    /// player of the game did: its node stopped relaying the game.
    pub fn left_behind(&self, observer: &str, seq: u64, game: &str) {
        let ended = self
            .lock()
            .games
            .get(game)
            .and_then(|g| g.ended)
            .map(|(_, s)| s);
        self.lock().left_behind.push(format!(
            "game {game}: {observer} still holds seq {seq}, the game ended at seq {}",
            ended.map_or("?".into(), |s| s.to_string())
        ));
    }

    /// Notes a client's trouble with a game (only the last few per game are kept).
    pub fn note(&self, game: &str, what: String) {
        let at = self.now();
        let mut r = self.lock();
        let notes = r.notes.entry(game.to_string()).or_default();
        if notes.len() >= 6 {
            notes.remove(0);
        }
        notes.push(format!("{:.1} s {what}", at.as_secs_f64()));
    }

    /// Records the document `observer` holds at `(game, seq)`.
    pub fn doc(&self, game: &str, seq: u64, observer: &str, doc: &Value) {
        let canonical = canonical(doc);
        let now = self.now();
        let mut r = self.lock();
        r.views
            .entry(game.to_string())
            .or_default()
            .insert(observer.to_string(), (seq, now));
        if doc["status"]["state"] == "ended" {
            if let Some(g) = r.games.get_mut(game) {
                let (at, s) = g.ended.get_or_insert((now, seq));
                *at = (*at).min(now);
                *s = (*s).min(seq);
            }
        }
        let versions = r.docs.entry(game.to_string()).or_default();
        match versions.get_mut(&seq) {
            None => {
                versions.insert(
                    seq,
                    Version {
                        canonical,
                        doc: doc.clone(),
                        observer: observer.to_string(),
                        divergent: Vec::new(),
                    },
                );
            }
            Some(v) if v.canonical != canonical && v.divergent.len() < 4 => {
                v.divergent.push((observer.to_string(), doc.clone()));
            }
            Some(_) => {}
        }
    }
}

/// JSON with every object's keys sorted, so equal values have equal text whatever order
/// their members arrived in (a patch's `add` appends a member a snapshot may list first).
pub fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// The members in which two documents differ, as `path: a != b` lines (for reports).
pub fn differences(a: &Value, b: &Value) -> Vec<String> {
    fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                for k in keys {
                    let (va, vb) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    walk(&format!("{path}/{k}"), va, vb, out);
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}/{i}"), va, vb, out);
                }
            }
            _ if a != b => {
                let short = |v: &Value| {
                    let s = v.to_string();
                    if s.len() > 120 {
                        format!(
                            "{}…",
                            &s[..s.char_indices().nth(120).map_or(s.len(), |(i, _)| i)]
                        )
                    } else {
                        s
                    }
                };
                out.push(format!(
                    "{}: {} != {}",
                    if path.is_empty() { "/" } else { path },
                    short(a),
                    short(b)
                ));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_ignores_member_order_and_differences_name_the_paths() {
        let a = json!({"a":1,"b":{"x":[1,2],"y":null}});
        let b: Value = serde_json::from_str(r#"{"b":{"y":null,"x":[1,2]},"a":1}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        let c = json!({"a":1,"b":{"x":[1,3],"y":null}});
        assert_eq!(differences(&a, &c), vec!["/b/x/1: 2 != 3".to_string()]);
    }

    #[test]
    fn a_second_different_document_at_a_seq_is_kept_as_divergent() {
        let h = History::new();
        h.doc("g", 0, "a", &json!({"x":1}));
        h.doc("g", 0, "b", &json!({"x":1}));
        h.doc("g", 0, "c", &json!({"x":2}));
        let r = h.lock();
        let v = &r.docs["g"][&0];
        assert_eq!(v.observer, "a");
        assert_eq!(v.divergent.len(), 1);
        assert_eq!(v.divergent[0].0, "c");
    }
}
