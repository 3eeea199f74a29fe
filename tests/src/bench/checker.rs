//! The checker: after the run (everything healed, the workload stopped), the durable
//! truth — each game's log in Redis, read directly — and a last look at every node are
//! compared with what the clients were told and saw.
//!
//! Checks, as in issue 25:
//! (a) every acknowledged action is in the log at its seq, by its player, as sent (a move
//!     also at exactly one above the seq it was sent with);
//! (b) no action answered with an error was applied;
//! (c) one document per `(game, seq)`: every observer's, each node's final snapshot and
//!     `GET /api/games/{id}`, and the log's moves agree;
//! (d) every game ends once: after its first end, the log holds only rematch requests;
//! (e) after each heal, every game still in play acknowledges an action within lease + 2 s;
//! (f) takeover times: fault → first `ok` in each game the faulted node owned;
//! (g) in Sentinel mode, recovery times: promotion of a replica → first `ok` in each game
//!     in play then (a game that never answers again is stuck by (e));
//! (h) in Sentinel mode with `--redis-min-replicas` ≥ 1, nothing sent while the primary's
//!     replication link is cut is acknowledged before it is restored ([`check_cut`]).
//!
//! After a fault of the Sentinel topology, (e)'s window is
//! [`FAILOVER_WINDOW`](super::nemesis::FAILOVER_WINDOW) instead. With
//! `--redis-min-replicas 0` a failover may lose acknowledged writes by design: (a) counts
//! them and the run reports them, but only (e) fails it ([`Findings::loss_expected`]).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::{json, Value};

use super::client::{Conn, Reply};
use super::cluster::{http_get, Cluster, PREFIX};
use super::history::{differences, Action, Answer, History, Op, Recorded};

/// Log entry types that end a game.
const ENDINGS: &[&str] = &[
    "resign",
    "draw_accept",
    "abort",
    "claim",
    "timeout",
    "no_first_action",
];

/// What the nodes and Redis hold once the run is over.
#[derive(Default)]
pub struct Evidence {
    /// Each game's log entries, in list order.
    pub logs: BTreeMap<String, Vec<Value>>,
    /// Per game, what each node served at the end.
    pub finals: BTreeMap<String, Vec<Final>>,
    /// Nodes that did not serve at the end (what they did instead).
    pub silent_nodes: Vec<String>,
}

/// What one node served for one game at the end.
pub struct Final {
    /// The node's index.
    pub node: usize,
    /// The seq of its `game.watch` snapshot (`None`: no snapshot).
    pub seq: Option<u64>,
    /// Its `GET /api/games/{id}` document (`None`: no answer, or not 200).
    pub api: Option<Value>,
}

/// Reads the logs and takes a final snapshot and API document of every game on every node
/// (the snapshots are recorded in the history as observers of their own).
///
/// A game may still change while this looks (a short clock falls, an unplayed game is
/// aborted): a game whose log moved between the first read and the last is looked at
/// again, so the evidence of each game is from one version.
pub async fn collect(cluster: &Cluster, history: &History) -> Evidence {
    let games: Vec<(String, Option<String>)> = history
        .lock()
        .games
        .values()
        .map(|g| (g.id.clone(), g.code.clone()))
        .collect();
    let mut ev = Evidence::default();
    let timeout = Duration::from_secs(5);
    let mut conns = Vec::new();
    for node in 0..cluster.len() {
        // Just after the heal a node may still refuse (`unavailable`): a few tries.
        let mut outcome = format!("{} is not running", cluster.id(node));
        let mut conn = None;
        for _ in 0..5 {
            let Some(addr) = cluster.addr(node) else {
                break;
            };
            match Conn::open(addr, node, timeout).await {
                Some(mut c) => match c.request(json!({"t":"hello"}), timeout, &mut |_| {}).await {
                    Reply::Answer(w) if w["t"] == "welcome" => {
                        conn = Some((c, addr));
                        break;
                    }
                    Reply::Answer(w) => {
                        outcome = format!("{} answers hello with {}", cluster.id(node), w)
                    }
                    _ => outcome = format!("{} does not answer hello", cluster.id(node)),
                },
                None => outcome = format!("{} does not accept a websocket", cluster.id(node)),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        if conn.is_none() {
            ev.silent_nodes.push(outcome);
        }
        conns.push(conn);
    }
    for (id, code) in &games {
        for _ in 0..3 {
            let before = read_log(cluster, id).await;
            let last = before.last().and_then(|e| e["seq"].as_u64()).unwrap_or(0);
            let mut finals = Vec::new();
            for (node, conn) in conns.iter_mut().enumerate() {
                let Some((conn, addr)) = conn else { continue };
                let observer = format!("final snapshot @n{}", node + 1);
                // A node may still be catching up just after the heal: a few tries.
                let mut seq = None;
                for _ in 0..3 {
                    seq = final_snapshot(conn, id, code, &observer, history).await;
                    if seq.is_some_and(|s| s >= last) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                let path = match code {
                    Some(c) => format!("/api/games/{id}?code={c}"),
                    None => format!("/api/games/{id}"),
                };
                let api = http_get(*addr, &path, timeout)
                    .await
                    .and_then(|(status, body)| {
                        let mut doc: Value = serde_json::from_str(&body).ok()?;
                        if let Value::Object(m) = &mut doc {
                            m.remove("record"); // Added to finished games; not part of the document.
                        }
                        (status == 200).then_some(doc)
                    });
                finals.push(Final { node, seq, api });
            }
            let after = read_log(cluster, id).await;
            let settled = after.len() == before.len();
            ev.logs.insert(id.clone(), after);
            ev.finals.insert(id.clone(), finals);
            if settled {
                break;
            }
        }
    }
    for (c, _) in conns.into_iter().flatten() {
        c.close().await;
    }
    ev
}

/// A game's log entries, read from Redis directly.
async fn read_log(cluster: &Cluster, id: &str) -> Vec<Value> {
    let key = format!("{PREFIX}:game:{{{id}}}:log");
    let raw: Vec<String> = cluster
        .redis_query(redis::cmd("LRANGE").arg(&key).arg(0).arg(-1))
        .await
        .unwrap_or_default();
    raw.iter()
        .map(|e| serde_json::from_str(e).unwrap_or(Value::Null))
        .collect()
}

/// Watches a game once on a node (recording the snapshot) and unwatches it; its seq.
async fn final_snapshot(
    conn: &mut Conn,
    id: &str,
    code: &Option<String>,
    observer: &str,
    history: &History,
) -> Option<u64> {
    let timeout = Duration::from_secs(5);
    let mut watch = json!({"t":"game.watch","game_id":id});
    if let Some(c) = code {
        watch["code"] = json!(c);
    }
    let mut seq = None;
    if let Reply::Answer(s) = conn.request(watch, timeout, &mut |_| {}).await {
        if s["t"] == "game.snapshot" {
            seq = s["seq"].as_u64();
            if let Some(n) = seq {
                history.doc(id, n, observer, &s["doc"]);
            }
        }
    }
    let unwatch = json!({"t":"game.unwatch","game_id":id});
    let _ = conn.request(unwatch, timeout, &mut |_| {}).await;
    seq
}

/// One failure: a short class shared by failures of the same cause (for the summary) and
/// the details to debug this one.
#[derive(Clone, Debug)]
pub struct Finding {
    /// What kind of failure, e.g. `documents differ at seq 0 in /clock/first_action_deadline`.
    pub signature: String,
    /// Game id, seq, expected and seen.
    pub detail: String,
}

impl Finding {
    fn new(signature: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            signature: signature.into(),
            detail: detail.into(),
        }
    }
}

/// What the checker found.
#[derive(Default, Debug)]
pub struct Findings {
    /// (a) acknowledged actions missing from the log or different there.
    pub lost_acks: Vec<Finding>,
    /// (b) actions answered with an error that were applied anyway.
    pub applied_errors: Vec<Finding>,
    /// (c) two documents for one `(game, seq)`, or a document the log contradicts.
    pub divergent: Vec<Finding>,
    /// (d) games that changed after their end.
    pub ended_twice: Vec<Finding>,
    /// (e) games that acknowledged nothing within lease + 2 s of a heal, and nodes that
    /// did not answer at the end.
    pub stuck: Vec<Finding>,
    /// Clients that never saw their game's end although a player did.
    pub left_behind: Vec<Finding>,
    /// (f) takeover times.
    pub takeovers: Vec<Duration>,
    /// The same, by the kind of fault.
    pub takeovers_by_kind: BTreeMap<&'static str, Vec<Duration>>,
    /// (f) games of a faulted owner that never acknowledged anything again.
    pub never_taken_over: usize,
    /// (h) with `--redis-min-replicas` 1 or more: actions sent after the primary's link to
    /// its replica was cut and acknowledged before it was restored (no replica can have
    /// held them).
    pub acked_while_cut: Vec<Finding>,
    /// (a) how many of `lost_acks` are moves.
    pub lost_moves: usize,
    /// (g) recovery times after promotions, by the kind of fault.
    pub recoveries_by_kind: BTreeMap<&'static str, Vec<Duration>>,
    /// (g) games in play at a promotion that never acknowledged anything again.
    pub never_recovered: usize,
    /// Set for runs with `--redis-min-replicas 0` over Sentinel: asynchronous replication
    /// may lose acknowledged writes at a failover, and so everything that follows from a
    /// lost write (a document the log contradicts, a lost end, a client waiting for it):
    /// those are reported, and only stuck games fail the run.
    pub loss_expected: bool,
}

impl Findings {
    /// Number of failures of every check (with [`Findings::loss_expected`], of stuck
    /// games only).
    pub fn failures(&self) -> usize {
        if self.loss_expected {
            return self.stuck.len();
        }
        self.lost_acks.len()
            + self.acked_while_cut.len()
            + self.applied_errors.len()
            + self.divergent.len()
            + self.ended_twice.len()
            + self.stuck.len()
            + self.left_behind.len()
    }
}

/// One game's log, by seq.
struct Log<'a> {
    entries: &'a [Value],
}

impl Log<'_> {
    fn at(&self, seq: u64) -> Option<&Value> {
        let e = self
            .entries
            .get(usize::try_from(seq).ok()?.checked_sub(1)?)?;
        (e["seq"].as_u64() == Some(seq)).then_some(e)
    }

    fn last_seq(&self) -> u64 {
        self.entries
            .last()
            .and_then(|e| e["seq"].as_u64())
            .unwrap_or(0)
    }

    /// The moves' notations logged up to `seq`, in order.
    fn moves_until(&self, seq: u64) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|e| e["seq"].as_u64().is_some_and(|s| s <= seq))
            .filter(|e| e["action"]["type"] == "move")
            .filter_map(|e| e["action"]["notation"].as_str())
            .collect()
    }
}

/// A log entry in a few words.
fn describe(e: &Value) -> String {
    let a = &e["action"];
    let what = match a["type"].as_str() {
        Some("move") => format!("move {}", a["notation"].as_str().unwrap_or("?")),
        Some(t) => t.to_string(),
        None => "?".into(),
    };
    format!("{what} by {}", e["player_id"].as_str().unwrap_or("?"))
}

/// Where an instant falls in the schedule: during which fault, or how long after which
/// heal.
fn phase(r: &Recorded, t: Duration) -> String {
    let mut last = "before any fault".to_string();
    for (k, ep) in r.episodes.iter().enumerate() {
        if t < ep.fault_at {
            break;
        }
        last = if t < ep.heal_at {
            format!("during episode {} ({})", k + 1, ep.fault)
        } else {
            format!(
                "{:.1} s after episode {} ({}) healed",
                (t - ep.heal_at).as_secs_f64(),
                k + 1,
                ep.fault
            )
        };
    }
    last
}

fn describe_op(r: &Recorded, op: &Op) -> String {
    format!(
        "{} by {} (sent at seq {} to n{}, {:.1}-{:.1} s, {})",
        op.action,
        op.player,
        op.client_seq,
        op.node + 1,
        op.start.as_secs_f64(),
        op.end.as_secs_f64(),
        phase(r, op.start)
    )
}

/// The members that differ, coarsely (`/clock/remaining_ms`, `/state/cells`): failures
/// with the same cause share them whatever the side or cell.
fn paths_of(diffs: &[String]) -> String {
    let mut paths: Vec<String> = diffs
        .iter()
        .map(|d| {
            let path = d.split(": ").next().unwrap_or("");
            path.split('/').take(3).collect::<Vec<_>>().join("/")
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths.join(" ")
}

/// Runs every check.
pub fn check(history: &History, ev: &Evidence, lease_ms: u64) -> Findings {
    let r = history.lock();
    let mut f = Findings::default();
    let empty = Vec::new();
    let log = |g: &str| Log {
        entries: ev.logs.get(g).unwrap_or(&empty),
    };
    check_acks(&r, &log, &mut f);
    check_documents(&r, ev, &log, &mut f);
    let ends = check_ends(&r, &log, history, &mut f);
    check_liveness(&r, &ends, &log, history, lease_ms, &mut f);
    for n in &ev.silent_nodes {
        f.stuck.push(Finding::new(
            "a node does not serve at the end",
            format!("after everything healed, {n}"),
        ));
    }
    for l in &r.left_behind {
        f.left_behind
            .push(Finding::new("a client never saw its game end", l.clone()));
    }
    f
}

/// (h): with `--redis-min-replicas` 1 or more, nothing sent while the primary's link to
/// its replica is cut may be acknowledged before the link is back.
pub fn check_cut(history: &History, f: &mut Findings) {
    let r = history.lock();
    for (k, ep) in r.episodes.iter().enumerate() {
        if ep.kind != "replica-cut" {
            continue;
        }
        for op in &r.ops {
            if matches!(op.answer, Answer::Ok(_)) && op.start > ep.fault_at && op.end < ep.heal_at {
                f.acked_while_cut.push(Finding::new(
                    "acknowledged while no replica could hold it",
                    format!(
                        "game {}: {} was acknowledged during episode {} ({}, {:.1}-{:.1} s)",
                        op.game,
                        describe_op(&r, op),
                        k + 1,
                        ep.fault,
                        ep.fault_at.as_secs_f64(),
                        ep.heal_at.as_secs_f64()
                    ),
                ));
            }
        }
    }
}

/// (a) and (b).
fn check_acks<'a>(r: &Recorded, log: &dyn Fn(&str) -> Log<'a>, f: &mut Findings) {
    let matches = |e: &Value, op: &Op| {
        e["player_id"] == op.player.as_str()
            && op
                .action
                .log_types()
                .iter()
                .any(|t| e["action"]["type"] == *t)
            && match &op.action {
                Action::Move(m) => e["action"]["notation"] == m.as_str(),
                _ => true,
            }
    };
    for op in &r.ops {
        let l = log(&op.game);
        let lost_before = f.lost_acks.len();
        check_ack(r, op, &l, &matches, f);
        if f.lost_acks.len() > lost_before && matches!(op.action, Action::Move(_)) {
            f.lost_moves += 1;
        }
    }
    check_refused_without_seq(r, log, f);
}

/// (a) and (b) for one operation.
fn check_ack(
    r: &Recorded,
    op: &Op,
    l: &Log<'_>,
    matches: &dyn Fn(&Value, &Op) -> bool,
    f: &mut Findings,
) {
    match &op.answer {
        Answer::Ok(s) => match l.at(*s) {
            None => f.lost_acks.push(Finding::new(
                "an acknowledged action is not in the log",
                format!(
                    "game {}: {} was acknowledged at seq {s}, but the log ends at seq {}",
                    op.game,
                    describe_op(r, op),
                    l.last_seq()
                ),
            )),
            Some(e) if !matches(e, op) => f.lost_acks.push(Finding::new(
                "the log has another action at an acknowledged seq",
                format!(
                    "game {}: {} was acknowledged at seq {s}, but the log has {} there",
                    op.game,
                    describe_op(r, op),
                    describe(e)
                ),
            )),
            Some(_) if matches!(op.action, Action::Move(_)) && *s != op.client_seq + 1 => {
                f.lost_acks.push(Finding::new(
                    "a move was acknowledged at another seq than the one above its own",
                    format!(
                        "game {}: {} was acknowledged at seq {s}",
                        op.game,
                        describe_op(r, op)
                    ),
                ))
            }
            Some(_) => {}
        },
        Answer::Error(code) => {
            if let Action::Move(_) = &op.action {
                let Some(e) = l.at(op.client_seq + 1) else {
                    return;
                };
                // Another request for the same move at the same seq may have landed
                // it (an ok, or an unanswered one).
                let explained = r.ops.iter().any(|o| {
                    o.game == op.game
                        && o.player == op.player
                        && o.client_seq == op.client_seq
                        && o.action == op.action
                        && !matches!(o.answer, Answer::Error(_))
                });
                if matches(e, op) && !explained {
                    f.applied_errors.push(Finding::new(
                        format!("a move answered {code} was applied"),
                        format!(
                            "game {}: {} was answered {code}, but the log has it at seq {}",
                            op.game,
                            describe_op(r, op),
                            op.client_seq + 1
                        ),
                    ));
                }
            }
        }
        Answer::Unknown => {}
    }
}

/// (b) for actions without a seq.
fn check_refused_without_seq<'a>(r: &Recorded, log: &dyn Fn(&str) -> Log<'a>, f: &mut Findings) {
    // (b) for actions without a seq: a player's log entries of a type cannot outnumber
    // its requests of that type that were not refused.
    let mut logged: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for (g, entries) in r.games.keys().map(|g| (g, log(g).entries)) {
        for e in entries {
            if let (Some(p), Some(t)) = (e["player_id"].as_str(), e["action"]["type"].as_str()) {
                if t != "move" {
                    *logged.entry((g.as_str(), p, t)).or_default() += 1;
                }
            }
        }
    }
    for ((g, p, t), n) in logged {
        let of_type = |o: &&Op| o.game == g && o.player == p && o.action.log_types().contains(&t);
        let allowed = r
            .ops
            .iter()
            .filter(of_type)
            .filter(|o| !matches!(o.answer, Answer::Error(_)))
            .count();
        if n <= allowed {
            continue;
        }
        let refused = r
            .ops
            .iter()
            .filter(of_type)
            .find(|o| matches!(o.answer, Answer::Error(_)));
        if let Some(op) = refused {
            f.applied_errors.push(Finding::new(
                format!("a refused {t} was applied"),
                format!(
                    "game {g}: the log has {n} {t} by {p} for {allowed} request(s) not refused; {} was refused ({:?})",
                    describe_op(r, op),
                    op.answer
                ),
            ));
        }
    }
}

/// (c).
fn check_documents<'a>(
    r: &Recorded,
    ev: &Evidence,
    log: &dyn Fn(&str) -> Log<'a>,
    f: &mut Findings,
) {
    for a in &r.anomalies {
        f.divergent
            .push(Finding::new("a diff does not apply", a.clone()));
    }
    for (game, entries) in &ev.logs {
        for (i, e) in entries.iter().enumerate() {
            if e["seq"].as_u64() != Some(i as u64 + 1) {
                f.divergent.push(Finding::new(
                    "the log skips or repeats a seq",
                    format!("game {game}: log entry {i} has seq {}", e["seq"]),
                ));
            }
        }
    }
    for (game, versions) in &r.docs {
        let l = log(game);
        // Divergences of one game are grouped by what differs: a bug usually shows at
        // every seq from some point on.
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (seq, v) in versions {
            for (who, doc) in &v.divergent {
                let diffs = differences(&v.doc, doc);
                let at = if *seq == 0 { "seq 0" } else { "seq > 0" };
                groups
                    .entry(format!("documents differ at {at} in {}", paths_of(&diffs)))
                    .or_default()
                    .push(format!(
                        "seq {seq}: {who} vs {}: {}",
                        v.observer,
                        diffs.join("; ")
                    ));
            }
            if *seq > l.last_seq() {
                groups
                    .entry("a document at a seq the log never reached".into())
                    .or_default()
                    .push(format!(
                        "seq {seq}: {} (the log ends at seq {})",
                        v.observer,
                        l.last_seq()
                    ));
                continue;
            }
            let moves: Vec<&str> = v.doc["moves"]
                .as_array()
                .map(|m| m.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let logged = l.moves_until(*seq);
            if moves != logged {
                groups
                    .entry("a document's moves differ from the log's".into())
                    .or_default()
                    .push(format!(
                        "seq {seq}: {} has {} moves, the log up to seq {seq} has {} (same up to ply {})",
                        v.observer,
                        moves.len(),
                        logged.len(),
                        moves.iter().zip(&logged).take_while(|(a, b)| a == b).count()
                    ));
            }
        }
        for (signature, items) in groups {
            let more = if items.len() > 1 {
                format!(" (and {} more like it)", items.len() - 1)
            } else {
                String::new()
            };
            f.divergent.push(Finding::new(
                signature,
                format!("game {game}: {}{more}", items[0]),
            ));
        }
    }
    for (game, finals) in &ev.finals {
        let last = log(game).last_seq();
        let expected = r.docs.get(game).and_then(|v| v.get(&last));
        for Final { node, seq, api } in finals {
            let n = node + 1;
            if *seq != Some(last) {
                // What the node is missing (or, beyond the log, inventing).
                let mut beyond: BTreeMap<&str, usize> = BTreeMap::new();
                for e in log(game).entries.iter().skip(seq.unwrap_or(0) as usize) {
                    *beyond
                        .entry(e["action"]["type"].as_str().unwrap_or("?"))
                        .or_default() += 1;
                }
                let beyond: Vec<String> = beyond.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
                f.divergent.push(Finding::new(
                    "a node's final snapshot is not at the log's last seq",
                    format!(
                        "game {game}: n{n}'s snapshot is at seq {}, the log at seq {last} (the log after it: {})",
                        seq.map_or("none".into(), |s| s.to_string()),
                        beyond.join(", ")
                    ),
                ));
            }
            match (api, expected) {
                (None, _) => f.divergent.push(Finding::new(
                    "GET /api/games fails",
                    format!("game {game}: GET /api/games/{game} on n{n} failed"),
                )),
                (Some(doc), Some(v)) if *doc != v.doc => {
                    let diffs = differences(&v.doc, doc);
                    f.divergent.push(Finding::new(
                        format!(
                            "GET /api/games differs from the document at the log's last seq in {}",
                            paths_of(&diffs)
                        ),
                        format!(
                            "game {game}: n{n} vs {} at seq {last}: {}",
                            v.observer,
                            diffs.join("; ")
                        ),
                    ))
                }
                (Some(_), None) => f.divergent.push(Finding::new(
                    "no document at the log's last seq",
                    format!("game {game}: no client or node showed seq {last}"),
                )),
                _ => {}
            }
        }
    }
}

/// (d); returns each game's end as time since the run started (from the log's clock, or
/// when a client first saw it).
fn check_ends<'a>(
    r: &Recorded,
    log: &dyn Fn(&str) -> Log<'a>,
    history: &History,
    f: &mut Findings,
) -> HashMap<String, Duration> {
    let mut ends = HashMap::new();
    for (game, info) in &r.games {
        let l = log(game);
        // A move that ends the game shows only in the documents: the lowest seq at which
        // any document (a client's or a final snapshot) says ended.
        let by_doc = r.docs.get(game).and_then(|v| {
            v.iter()
                .find(|(_, v)| v.doc["status"]["state"] == "ended")
                .map(|(s, _)| *s)
        });
        let by_log = l
            .entries
            .iter()
            .find(|e| ENDINGS.iter().any(|t| e["action"]["type"] == *t))
            .and_then(|e| e["seq"].as_u64());
        let end = match (by_doc, by_log) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some(end) = end else { continue };
        if let Some(e) = l.at(end) {
            ends.insert(
                game.clone(),
                history.since_start(e["at_ms"].as_u64().unwrap_or(0)),
            );
        } else if let Some((at, _)) = info.ended {
            ends.insert(game.clone(), at);
        }
        let reason = l.at(end).map(describe).unwrap_or_default();
        for e in l
            .entries
            .iter()
            .filter(|e| e["seq"].as_u64().is_some_and(|s| s > end))
        {
            if e["action"]["type"] != "rematch" {
                f.ended_twice.push(Finding::new(
                    format!(
                        "the log has {} after the end",
                        e["action"]["type"].as_str().unwrap_or("?")
                    ),
                    format!(
                        "game {game} ended at seq {end} ({reason}), then the log has {} at seq {}",
                        describe(e),
                        e["seq"]
                    ),
                ));
            }
        }
        if let Some(versions) = r.docs.get(game) {
            for (seq, v) in versions.range(end + 1..) {
                if v.doc["status"]["state"] != "ended" {
                    f.ended_twice.push(Finding::new(
                        "a document shows the game in play after its end",
                        format!(
                            "game {game} ended at seq {end}, but {} holds it {} at seq {seq}",
                            v.observer, v.doc["status"]["state"]
                        ),
                    ));
                }
            }
        }
    }
    ends
}

/// (e) and (f).
fn check_liveness<'a>(
    r: &Recorded,
    ends: &HashMap<String, Duration>,
    log: &dyn Fn(&str) -> Log<'a>,
    history: &History,
    lease_ms: u64,
    f: &mut Findings,
) {
    let mut oks: HashMap<&str, Vec<Duration>> = HashMap::new();
    for op in &r.ops {
        if let Answer::Ok(_) = op.answer {
            oks.entry(op.game.as_str()).or_default().push(op.end);
        }
    }
    for v in oks.values_mut() {
        v.sort();
    }
    let first_ok_after =
        |g: &str, t: Duration| oks.get(g).and_then(|v| v.iter().find(|e| **e > t).copied());
    // A game stuck once usually stays stuck: one finding per game, at its first episode,
    // naming the later episodes it was stuck after too.
    let mut stuck: Vec<(&str, Finding, Vec<usize>)> = Vec::new();
    for (k, ep) in r.episodes.iter().enumerate() {
        let window = super::nemesis::window(ep.kind, lease_ms);
        let deadline = ep.heal_at + window;
        if let Some(promoted) = ep.promoted_at {
            for g in r.games.values() {
                let end = ends.get(&g.id).copied();
                if g.started > promoted || end.is_some_and(|e| e <= promoted) {
                    continue;
                }
                match first_ok_after(&g.id, promoted) {
                    Some(t) => f
                        .recoveries_by_kind
                        .entry(ep.kind)
                        .or_default()
                        .push(t - promoted),
                    None if end.is_some() => {}
                    None => f.never_recovered += 1,
                }
            }
        }
        for g in r.games.values() {
            let end = ends.get(&g.id).copied();
            if g.started > ep.heal_at || end.is_some_and(|e| e <= deadline) {
                continue; // Not in play at the heal, or it ended (which is progress).
            }
            let next = first_ok_after(&g.id, ep.heal_at);
            if next.is_some_and(|t| t <= deadline) {
                continue;
            }
            if let Some((_, _, again)) = stuck.iter_mut().find(|(id, _, _)| *id == g.id) {
                again.push(k + 1);
                continue;
            }
            let views: Vec<String> = r
                .views
                .get(&g.id)
                .map(|v| {
                    v.iter()
                        .map(|(who, (seq, at))| {
                            format!("{who} seq {seq} at {:.1} s", at.as_secs_f64())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let notes = r.notes.get(&g.id).map(|n| n.join("; ")).unwrap_or_default();
            // What the log got meanwhile (server-made events such as `resume` included).
            let mut logged: BTreeMap<&str, usize> = BTreeMap::new();
            for e in log(&g.id).entries {
                let at = history.since_start(e["at_ms"].as_u64().unwrap_or(0));
                if at > ep.heal_at && at <= deadline {
                    *logged
                        .entry(e["action"]["type"].as_str().unwrap_or("?"))
                        .or_default() += 1;
                }
            }
            let logged: Vec<String> = logged.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
            let finding = Finding::new(
                format!(
                    "a game acknowledged nothing within {:.0} s after a {}",
                    window.as_secs_f64(),
                    ep.kind
                ),
                format!(
                    "episode {} ({}, healed at {:.1} s): game {} ({}, owner {} before the fault) had no ok until {:.1} s; next ok {}; answers meanwhile: {}; logged meanwhile: {}; the log ends at seq {}; views (last seq held): {}; last client notes: {}",
                    k + 1,
                    ep.fault,
                    ep.heal_at.as_secs_f64(),
                    g.id,
                    g.kind,
                    if ep.owned.contains(&g.id) { "the faulted node" } else { "another node" },
                    deadline.as_secs_f64(),
                    next.map_or("none before the workload stopped".into(), |t| format!("at {:.1} s", t.as_secs_f64())),
                    answers_between(r, &g.id, ep.heal_at, deadline),
                    if logged.is_empty() { "nothing".into() } else { logged.join(", ") },
                    log(&g.id).last_seq(),
                    views.join(", "),
                    if notes.is_empty() { "none".into() } else { notes }
                ),
            );
            stuck.push((g.id.as_str(), finding, Vec::new()));
        }
        for g in &ep.owned {
            if ends.get(g).is_some_and(|e| *e <= ep.fault_at) {
                continue;
            }
            match first_ok_after(g, ep.fault_at) {
                Some(t) => {
                    f.takeovers.push(t - ep.fault_at);
                    f.takeovers_by_kind
                        .entry(ep.kind)
                        .or_default()
                        .push(t - ep.fault_at);
                }
                None if ends.contains_key(g) => {}
                None => f.never_taken_over += 1,
            }
        }
    }
    for (_, mut finding, again) in stuck {
        if !again.is_empty() {
            let list: Vec<String> = again.iter().map(|k| k.to_string()).collect();
            finding.detail += &format!("; stuck again after episode(s) {}", list.join(", "));
        }
        f.stuck.push(finding);
    }
}

/// The answers a game's players got in a time window, as `code ×n` (for stuck games).
fn answers_between(r: &Recorded, game: &str, from: Duration, to: Duration) -> String {
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    for op in r
        .ops
        .iter()
        .filter(|o| o.game == game && o.end > from && o.start <= to)
    {
        let key = match &op.answer {
            Answer::Ok(_) => "ok".to_string(),
            Answer::Error(c) => c.clone(),
            Answer::Unknown => "no answer".to_string(),
        };
        *codes.entry(key).or_default() += 1;
    }
    if codes.is_empty() {
        return "none (no action sent)".into();
    }
    codes
        .iter()
        .map(|(c, n)| format!("{c} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `q` quantile (0..=1) of sorted durations.
pub fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    Some(sorted[i.min(sorted.len() - 1)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::history::{Episode, GameInfo};

    fn entry(seq: u64, player: &str, action: Value) -> Value {
        json!({"seq":seq,"at_ms":0,"player_id":player,"action":action})
    }

    fn op(seq: u64, action: Action, answer: Answer) -> Op {
        Op {
            game: "g".into(),
            player: "p".into(),
            action,
            client_seq: seq,
            answer,
            start: Duration::ZERO,
            end: Duration::from_secs(1),
            node: 0,
        }
    }

    fn history_with(ops: Vec<Op>) -> History {
        let h = History::new();
        h.game(GameInfo {
            id: "g".into(),
            kind: "unane".into(),
            code: None,
            started: Duration::ZERO,
            ended: None,
        });
        for o in ops {
            h.op(o);
        }
        h
    }

    fn evidence(entries: Vec<Value>) -> Evidence {
        let mut ev = Evidence::default();
        ev.logs.insert("g".into(), entries);
        ev
    }

    #[test]
    fn an_ack_missing_from_the_log_and_an_applied_error_are_found() {
        let h = history_with(vec![
            op(0, Action::Move("a1".into()), Answer::Ok(1)),
            op(1, Action::Move("b2".into()), Answer::Ok(2)),
            op(
                2,
                Action::Move("c3".into()),
                Answer::Error("unavailable".into()),
            ),
        ]);
        let ev = evidence(vec![
            entry(1, "p", json!({"type":"move","notation":"a1"})),
            entry(2, "p", json!({"type":"move","notation":"zz"})),
            entry(3, "p", json!({"type":"move","notation":"c3"})),
        ]);
        let f = check(&h, &ev, 1000);
        assert_eq!(f.lost_acks.len(), 1, "{:?}", f.lost_acks);
        assert!(f.lost_acks[0].detail.contains("move zz"));
        assert_eq!(f.applied_errors.len(), 1, "{:?}", f.applied_errors);
    }

    #[test]
    fn an_error_explained_by_an_unanswered_twin_is_not_a_failure() {
        let h = history_with(vec![
            op(0, Action::Move("a1".into()), Answer::Unknown),
            op(
                0,
                Action::Move("a1".into()),
                Answer::Error("stale_seq".into()),
            ),
        ]);
        let ev = evidence(vec![entry(1, "p", json!({"type":"move","notation":"a1"}))]);
        assert_eq!(check(&h, &ev, 1000).failures(), 0);
    }

    #[test]
    fn an_action_after_the_end_is_an_end_twice_and_a_refused_resign_must_not_land() {
        let h = history_with(vec![op(
            3,
            Action::Resign,
            Answer::Error("unavailable".into()),
        )]);
        let ev = evidence(vec![
            entry(1, "p", json!({"type":"move","notation":"a1"})),
            entry(2, "q", json!({"type":"timeout"})),
            entry(3, "p", json!({"type":"resign"})),
        ]);
        let f = check(&h, &ev, 1000);
        assert_eq!(f.ended_twice.len(), 1, "{:?}", f.ended_twice);
        assert_eq!(f.applied_errors.len(), 1, "{:?}", f.applied_errors);
    }

    #[test]
    fn an_ack_of_a_move_sent_while_the_replica_was_cut_off_is_found() {
        let mut sent_during = op(0, Action::Move("a1".into()), Answer::Ok(1));
        sent_during.start = Duration::from_secs(11);
        sent_during.end = Duration::from_secs(12);
        // Sent before the cut (its write may have reached the replica), answered during it.
        let mut sent_before = op(1, Action::Move("b2".into()), Answer::Ok(2));
        sent_before.start = Duration::from_secs(9);
        sent_before.end = Duration::from_secs(11);
        let h = history_with(vec![sent_during, sent_before]);
        h.episode(Episode {
            fault: "replica-cut of :1".into(),
            kind: "replica-cut",
            node: None,
            fault_at: Duration::from_secs(10),
            heal_at: Duration::from_secs(13),
            owned: Vec::new(),
            promoted_at: None,
        });
        let mut f = Findings::default();
        check_cut(&h, &mut f);
        assert_eq!(f.acked_while_cut.len(), 1, "{:?}", f.acked_while_cut);
        assert!(f.acked_while_cut[0].detail.contains("move a1"));
    }

    #[test]
    fn two_documents_at_one_seq_and_a_document_beyond_the_log_are_divergent() {
        let h = history_with(vec![]);
        h.doc(
            "g",
            1,
            "a",
            &json!({"moves":["a1"],"status":{"state":"playing"}}),
        );
        h.doc(
            "g",
            1,
            "b",
            &json!({"moves":["a1"],"status":{"state":"playing"},"x":1}),
        );
        h.doc(
            "g",
            2,
            "a",
            &json!({"moves":["a1","b2"],"status":{"state":"playing"}}),
        );
        let ev = evidence(vec![entry(1, "p", json!({"type":"move","notation":"a1"}))]);
        let f = check(&h, &ev, 1000);
        let kinds: Vec<&str> = f.divergent.iter().map(|d| d.signature.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "a document at a seq the log never reached",
                "documents differ at seq > 0 in /x"
            ],
            "{:?}",
            f.divergent
        );
    }
}
