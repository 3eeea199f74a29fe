//! The workload: G game slots, each playing one game after another between two new
//! guests on two different nodes, watched by a spectator on a random node.
//!
//! Players behave like a careful real client, never like a test: on their turn (by their
//! own document) they ask `game.legal`, pick a move with their seeded generator and send it
//! with the `seq` they hold; now and then they resign or offer a draw, and answer the
//! opponent's offers. A closed socket or a request unanswered within the timeout makes
//! them reconnect to another node with their token and `game.watch` with `since`. Every
//! action and its answer goes to the history, and so does every document they hold.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::client::{Conn, Reply, View};
use super::cluster::Directory;
use super::history::{Action, Answer, GameInfo, History, Op};
use super::rng::Rng;

/// Workload settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Concurrent games.
    pub games: usize,
    /// How long a request may stay unanswered before the client gives up on its node.
    pub answer_timeout: Duration,
}

/// Everything a client task shares.
#[derive(Clone)]
struct Ctx {
    directory: Directory,
    history: History,
    stop: Arc<AtomicBool>,
    timeout: Duration,
}

impl Ctx {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The running workload.
pub struct Workload {
    stop: Arc<AtomicBool>,
    slots: Vec<JoinHandle<()>>,
}

impl Workload {
    /// Starts the game slots.
    pub fn start(directory: Directory, history: History, rng: &Rng, s: &Settings) -> Workload {
        let stop = Arc::new(AtomicBool::new(false));
        let ctx = Ctx {
            directory,
            history,
            stop: stop.clone(),
            timeout: s.answer_timeout,
        };
        let slots = (0..s.games)
            .map(|slot| tokio::spawn(run_slot(ctx.clone(), slot, rng.fork(1000 + slot as u64))))
            .collect();
        Workload { stop, slots }
    }

    /// Stops every client after its current step and waits for them (at most 20 s; a
    /// client still stuck after that is dropped).
    pub async fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(20);
        for slot in self.slots {
            let abort = slot.abort_handle();
            if tokio::time::timeout_at(deadline, slot).await.is_err() {
                abort.abort();
            }
        }
    }
}

/// Aborts a task when dropped (a spectator outliving its slot).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a slot plays: kind, options, clock and visibility by slot number. Boards are
/// bigger than the tests' quick ones so games last through faults; slots 5, 11, ... have
/// a 4-second clock so flags fall (also while an owner is down).
fn table_for(slot: usize) -> (&'static str, Value, Value, &'static str) {
    let (kind, options) = match slot % 4 {
        0 => ("unane", json!({"width": 8, "height": 7})),
        1 => ("staku", json!({"max_stack": 3})),
        2 => ("akron", json!({"size": 7})),
        _ => ("akunur", json!({})),
    };
    let clock = if slot % 6 == 5 {
        json!({"kind": "fischer", "initial_ms": 4_000, "increment_ms": 0})
    } else {
        json!({"kind": "fischer", "initial_ms": 300_000, "increment_ms": 2_000})
    };
    let visibility = if slot % 3 == 2 { "private" } else { "public" };
    (kind, options, clock, visibility)
}

/// One slot: games one after another until the workload stops.
async fn run_slot(ctx: Ctx, slot: usize, rng: Rng) {
    let mut n = 0u64;
    while !ctx.stopping() {
        n += 1;
        let mut rng = rng.fork(n);
        let Some((mut host, mut guest, mut spectator)) = open_game(&ctx, slot, &mut rng).await
        else {
            tokio::time::sleep(Duration::from_millis(300)).await;
            continue;
        };
        let mut spectator = AbortOnDrop(tokio::spawn(async move {
            spectator.run().await;
            spectator
        }));
        let short_clock = table_for(slot).2["initial_ms"] == 4_000;
        let game_id = host.view.game_id.clone();
        // Once one player has seen the end, the other client must see it too, soon: one
        // that does not was left behind by its node.
        let grace = Duration::from_secs(8);
        let late = {
            let (h, g) = (host.play(short_clock), guest.play(short_clock));
            tokio::pin!(h, g);
            tokio::select! {
                _ = &mut h => tokio::time::timeout(grace, g).await.is_err().then_some(true),
                _ = &mut g => tokio::time::timeout(grace, h).await.is_err().then_some(false),
            }
        };
        let watcher = tokio::time::timeout(grace, &mut spectator.0).await;
        if ctx.stopping() {
            break;
        }
        if let Some(guest_late) = late {
            let p = if guest_late { &guest } else { &host };
            ctx.history
                .left_behind(&p.view.observer, p.view.seq, &game_id);
        }
        match watcher {
            Ok(Ok(s)) if !s.view.ended() => {
                ctx.history
                    .left_behind(&s.view.observer, s.view.seq, &game_id)
            }
            Err(_) => ctx.history.left_behind("the spectator", 0, &game_id),
            _ => {}
        }
    }
}

/// A guest connection on a node: (connection, player id, token).
async fn new_guest(ctx: &Ctx, node: usize) -> Option<(Conn, String, String)> {
    let addr = ctx
        .directory
        .live()
        .into_iter()
        .find(|(i, _)| *i == node)?
        .1;
    let mut conn = Conn::open(addr, node, ctx.timeout).await?;
    let w = match conn
        .request(json!({"t":"hello","protocol":1}), ctx.timeout, &mut |_| {})
        .await
    {
        Reply::Answer(w) if w["t"] == "welcome" => w,
        _ => return None,
    };
    let id = w["player"]["id"].as_str()?.to_string();
    let token = w["token"].as_str()?.to_string();
    Some((conn, id, token))
}

/// Creates a room on one node and joins it from another; the seated players and a
/// spectator, or `None` if anything failed (the slot tries again with new guests).
async fn open_game(ctx: &Ctx, slot: usize, rng: &mut Rng) -> Option<(Seat, Seat, Seat)> {
    let live = ctx.directory.live();
    if live.is_empty() {
        return None;
    }
    let a = live[rng.index(live.len())].0;
    let others: Vec<usize> = live.iter().map(|(i, _)| *i).filter(|i| *i != a).collect();
    let b = if others.is_empty() {
        a
    } else {
        others[rng.index(others.len())]
    };
    let s = live[rng.index(live.len())].0;
    let (kind, options, clock, visibility) = table_for(slot);
    let (mut hc, host_id, host_token) = new_guest(ctx, a).await?;
    let (mut gc, guest_id, guest_token) = new_guest(ctx, b).await?;
    let create = json!({"t":"room.create","kind":kind,"options":options,"clock":clock,
        "rated":false,"visibility":visibility,"side":"random"});
    let room = match hc.request(create, ctx.timeout, &mut |_| {}).await {
        Reply::Answer(r) if r["t"] == "room" => r,
        _ => return None,
    };
    let code = room["room"]["code"].as_str()?.to_string();
    let join = json!({"t":"room.join","code":code});
    let joined = match gc.request(join, ctx.timeout, &mut |_| {}).await {
        Reply::Answer(r) if r["t"] == "room" && r["room"]["status"] == "started" => r,
        _ => return None,
    };
    let game_id = joined["room"]["game_id"].as_str()?.to_string();
    let code = (visibility == "private").then_some(code);
    ctx.history.game(GameInfo {
        id: game_id.clone(),
        kind: kind.to_string(),
        code: code.clone(),
        started: ctx.history.now(),
        ended: None,
    });
    let (sc, spec_id, spec_token) = match new_guest(ctx, s).await {
        Some((c, id, token)) => (Some(c), id, token),
        None => (None, String::new(), String::new()),
    };
    let seat = |role: &'static str, conn: Option<Conn>, id: String, token: String, rng: Rng| Seat {
        ctx: ctx.clone(),
        role,
        view: View::new(&game_id, String::new(), ctx.history.clone()),
        player_id: id,
        token,
        code: code.clone(),
        conn,
        rng,
        last_failed: None,
        unavailable_since: None,
    };
    let mut host = seat("host", Some(hc), host_id, host_token, rng.fork(1));
    let mut guest = seat("guest", Some(gc), guest_id, guest_token, rng.fork(2));
    let mut spectator = seat("spectator", sc, spec_id, spec_token, rng.fork(3));
    for s in [&mut host, &mut guest, &mut spectator] {
        s.relabel();
    }
    Some((host, guest, spectator))
}

/// A client in one game: a player or a spectator.
struct Seat {
    ctx: Ctx,
    role: &'static str,
    player_id: String,
    /// Empty for a spectator whose first hello failed: it says hello as a new guest.
    token: String,
    /// The room code of a private game (spectators need it).
    code: Option<String>,
    conn: Option<Conn>,
    view: View,
    rng: Rng,
    /// The node that last failed this client, avoided at the next reconnect.
    last_failed: Option<usize>,
    /// Since when the current node answers only `unavailable` (a node cut off from Redis
    /// answers so for as long as its link is down): after [`UNAVAILABLE_FOR`] the client
    /// tries another node, as a player behind a balancer would by reconnecting.
    unavailable_since: Option<Instant>,
}

/// How long a client takes `unavailable` answers from one node before trying another.
const UNAVAILABLE_FOR: Duration = Duration::from_secs(1);

impl Seat {
    fn relabel(&mut self) {
        let node = self.conn.as_ref().map_or(0, |c| c.node);
        self.view.observer = format!("{} {} @n{}", self.role, self.player_id, node + 1);
    }

    /// Counts an `unavailable` answer: after [`UNAVAILABLE_FOR`] of nothing else from this
    /// node, the connection is dropped and the next step connects elsewhere.
    fn unavailable_for_long(&mut self) {
        let since = *self.unavailable_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= UNAVAILABLE_FOR {
            self.lose_connection();
        }
    }

    /// Drops the connection (after a timeout or a close): the next step reconnects.
    fn lose_connection(&mut self) {
        if let Some(c) = self.conn.take() {
            self.last_failed = Some(c.node);
            self.unavailable_since = None;
            tokio::spawn(c.close());
        }
    }

    /// Sends a request on the current connection; a timeout or a close drops it.
    async fn call(&mut self, msg: Value) -> Reply {
        let Some(conn) = self.conn.as_mut() else {
            return Reply::Closed;
        };
        let view = &mut self.view;
        let reply = conn
            .request(msg, self.ctx.timeout, &mut |m| view.take(m))
            .await;
        if !matches!(reply, Reply::Answer(_)) {
            self.lose_connection();
        }
        reply
    }

    /// Reads pushed messages for `d` (or sleeps, without a connection).
    async fn pump(&mut self, d: Duration) {
        let Some(conn) = self.conn.as_mut() else {
            tokio::time::sleep(d).await;
            return;
        };
        let view = &mut self.view;
        if !conn.pump_for(d, &mut |m| view.take(m)).await {
            self.lose_connection();
        }
    }

    /// Connects to a live node (another one than the one that failed, when possible) with
    /// `hello` and the token, and watches the game from the seq it holds. Retries, with
    /// pauses, until it succeeds or the workload stops.
    async fn reconnect(&mut self) -> bool {
        while !self.ctx.stopping() {
            let mut live = self.ctx.directory.live();
            // A random order, the node that failed last.
            for i in (1..live.len()).rev() {
                live.swap(i, self.rng.index(i + 1));
            }
            live.sort_by_key(|(i, _)| Some(*i) == self.last_failed);
            for (node, addr) in live {
                if self.ctx.stopping() {
                    return false;
                }
                let Some(mut conn) = Conn::open(addr, node, self.ctx.timeout).await else {
                    continue;
                };
                let hello = if self.token.is_empty() {
                    json!({"t":"hello","protocol":1})
                } else {
                    json!({"t":"hello","protocol":1,"token":self.token})
                };
                match conn.request(hello, self.ctx.timeout, &mut |_| {}).await {
                    Reply::Answer(w) if w["t"] == "welcome" => {
                        if self.token.is_empty() {
                            self.token = w["token"].as_str().unwrap_or_default().to_string();
                            self.player_id =
                                w["player"]["id"].as_str().unwrap_or_default().to_string();
                        }
                        self.conn = Some(conn);
                        let was = std::mem::take(&mut self.view.observer);
                        self.relabel();
                        self.ctx.history.note(
                            &self.view.game_id,
                            format!("{was} reconnected to n{}", node + 1),
                        );
                        if self.watch().await {
                            return true;
                        }
                    }
                    reply => {
                        // A refused token locks the player out of its game: say so for the
                        // report of a stuck game (fault bench, seed 605). An outage's
                        // `unavailable` is left out: it passes.
                        match &reply {
                            Reply::Answer(a) if a["code"] != "unavailable" => {
                                self.ctx.history.note(
                                    &self.view.game_id,
                                    format!(
                                        "{}: hello at n{} answered {}",
                                        self.view.observer,
                                        node + 1,
                                        a["message"]
                                    ),
                                );
                            }
                            _ => {}
                        }
                        tokio::spawn(conn.close());
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        false
    }

    /// `game.watch` with `since` (the seq held), and the code for a private game: the view
    /// is current afterwards, or false.
    async fn watch(&mut self) -> bool {
        let mut msg = json!({"t":"game.watch","game_id":self.view.game_id});
        if self.view.doc.is_some() {
            msg["since"] = json!(self.view.seq);
        }
        if let Some(code) = &self.code {
            msg["code"] = json!(code);
        }
        match self.call(msg).await {
            Reply::Answer(a) if a["t"] == "game.snapshot" => {
                self.view.take(&a);
                true
            }
            Reply::Answer(a) if a["t"] == "ok" => {
                // The replayed diffs came before the ok, which names the current seq: the
                // view is current when it holds that seq (a refused action marked it stale
                // only to make sure). Otherwise the next watch asks for a snapshot.
                if self.view.doc.is_some() && a["seq"].as_u64() == Some(self.view.seq) {
                    self.view.stale = false;
                    true
                } else {
                    self.view.doc = None;
                    false
                }
            }
            Reply::Answer(a) => {
                self.ctx.history.note(
                    &self.view.game_id,
                    format!("{}: game.watch answered {}", self.view.observer, a["code"]),
                );
                if a["code"] == "unavailable" {
                    self.unavailable_for_long();
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                false
            }
            _ => false,
        }
    }

    /// Makes sure the client is connected and its document current; false while not.
    async fn ready(&mut self) -> bool {
        if self.conn.is_none() {
            return self.reconnect().await;
        }
        if self.view.doc.is_none() {
            // The snapshot pushed after `game.started` may still be on its way.
            self.pump(Duration::from_millis(500)).await;
            if self.view.doc.is_some() {
                return true;
            }
        }
        if self.view.doc.is_none() || self.view.stale {
            return self.watch().await;
        }
        true
    }

    /// A ping when nothing was asked for a second, so a paused node is noticed (it
    /// answers nothing) even by a client that is only waiting.
    async fn keep_alive(&mut self) {
        if self
            .conn
            .as_ref()
            .is_some_and(|c| c.last_request.elapsed() > Duration::from_secs(1))
        {
            let _ = self.call(json!({"t":"ping"})).await;
        }
    }

    /// A spectator's life: watch until the game ends (or the workload stops).
    async fn run(&mut self) {
        while !self.ctx.stopping() && !self.view.ended() {
            if !self.ready().await {
                continue;
            }
            self.pump(Duration::from_millis(500)).await;
            self.keep_alive().await;
        }
    }

    /// A player's life: act on its turns until the game ends or the workload stops.
    async fn play(&mut self, short_clock: bool) {
        // Moves every 50-300 ms keep requests in flight at every fault; the short-clock
        // games think longer so that their flags fall.
        let (lo, hi) = if short_clock { (200, 600) } else { (50, 300) };
        while !self.ctx.stopping() && !self.view.ended() {
            if !self.ready().await {
                continue;
            }
            let pace = Duration::from_millis(self.rng.range(lo, hi));
            self.pump(pace).await;
            let Some(doc) = self.view.doc.clone() else {
                continue;
            };
            if self.view.ended() || self.view.stale || self.conn.is_none() {
                continue;
            }
            let Some(me) = side_of(&doc, &self.player_id) else {
                continue;
            };
            let offer = doc["draw_offer"].as_str();
            if offer.is_some_and(|side| side != me) {
                let answer = if self.rng.chance(500) {
                    "accept"
                } else {
                    "decline"
                };
                self.act(Action::Draw(answer.into())).await;
            } else if doc["to_act"] == me.as_str() {
                self.turn(&doc).await;
            } else {
                self.keep_alive().await;
            }
        }
    }

    /// One turn: resign, offer a draw, or ask for the legal moves and play one.
    async fn turn(&mut self, doc: &Value) {
        let plies = doc["moves"].as_array().map_or(0, Vec::len);
        if plies >= 200 || (plies >= 10 && self.rng.chance(8)) {
            self.act(Action::Resign).await;
            return;
        }
        if plies >= 10 && doc["draw_offer"].is_null() && self.rng.chance(12) {
            self.act(Action::Draw("offer".into())).await;
            return;
        }
        let seq = self.view.seq;
        let legal = match self
            .call(json!({"t":"game.legal","game_id":self.view.game_id}))
            .await
        {
            Reply::Answer(l) if l["t"] == "legal" => l,
            Reply::Answer(_) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                return;
            }
            _ => return,
        };
        let legal_seq = legal["seq"].as_u64().unwrap_or(0);
        if legal_seq > self.view.seq {
            // The node knows a newer seq than our document: fetch what we missed.
            self.view.stale = true;
            return;
        }
        if legal_seq != seq || self.view.seq != seq {
            return; // The game moved meanwhile: decide again on the new document.
        }
        let moves: Vec<&str> = legal["moves"]
            .as_array()
            .map(|m| m.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if moves.is_empty() {
            return;
        }
        let mv = moves[self.rng.index(moves.len())].to_string();
        self.act(Action::Move(mv)).await;
    }

    /// Sends an action, records it with its answer, and reacts to the answer.
    async fn act(&mut self, action: Action) {
        let game_id = self.view.game_id.clone();
        let client_seq = self.view.seq;
        let msg = match &action {
            Action::Move(m) => {
                json!({"t":"game.move","game_id":game_id,"move":m,"seq":client_seq})
            }
            Action::Resign => json!({"t":"game.resign","game_id":game_id}),
            Action::Draw(a) => json!({"t":"game.draw","game_id":game_id,"action":a}),
        };
        let node = self.conn.as_ref().map_or(0, |c| c.node);
        let start = self.ctx.history.now();
        let reply = self.call(msg).await;
        let answer = match &reply {
            Reply::Answer(a) if a["t"] == "ok" => Answer::Ok(a["seq"].as_u64().unwrap_or(0)),
            Reply::Answer(a) => {
                // The message says why (which pause, which handover) for stuck games.
                self.ctx.history.note(
                    &game_id,
                    format!("{}: {action} answered {}", self.view.observer, a["message"]),
                );
                Answer::Error(a["code"].as_str().unwrap_or("?").to_string())
            }
            _ => Answer::Unknown,
        };
        self.ctx.history.op(Op {
            game: game_id,
            player: self.player_id.clone(),
            action,
            client_seq,
            answer: answer.clone(),
            start,
            end: self.ctx.history.now(),
            node,
        });
        if !matches!(&answer, Answer::Error(c) if c == "unavailable") {
            self.unavailable_since = None;
        }
        match answer {
            // The mover's diff comes before its ok; if it did not, fetch the document.
            Answer::Ok(seq) if self.view.seq < seq => self.view.stale = true,
            Answer::Ok(_) | Answer::Unknown => {}
            Answer::Error(code) if code == "unavailable" => {
                self.unavailable_for_long();
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Answer::Error(code) if code == "rate_limited" => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            // stale_seq, not_your_turn, game_over, conflict...: our document is behind.
            Answer::Error(_) => self.view.stale = true,
        }
    }
}

/// The side a player sits on in a document.
fn side_of(doc: &Value, player_id: &str) -> Option<String> {
    doc["players"]
        .as_object()?
        .iter()
        .find(|(_, p)| p["id"] == player_id)
        .map(|(side, _)| side.clone())
}
