//! The bench's websocket client: nothing panics and nothing waits forever. A request
//! that gets no answer in time, or a closed socket, is an outcome the workload records
//! and recovers from (by reconnecting elsewhere), not a test failure.
//!
//! A [`View`] is one observer's copy of one game's document, kept from snapshots and diffs
//! and recorded in the history at every seq it reaches.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::history::History;

/// How a request ended.
#[derive(Debug)]
pub enum Reply {
    /// The message carrying the request's `rid`.
    Answer(Value),
    /// No answer within the timeout (a paused node answers nothing).
    Timeout,
    /// The connection closed or failed.
    Closed,
}

/// One websocket connection to one node.
pub struct Conn {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_rid: i64,
    /// The node's index in the cluster.
    pub node: usize,
    /// When the last request was sent (idle connections are checked with `ping`).
    pub last_request: Instant,
}

/// How long a request waits before asking with a `ping` whether its node still answers,
/// and how long that ping may take.
const PROBE_AFTER: Duration = Duration::from_secs(1);

impl Conn {
    /// Opens a websocket to `addr` within `within`.
    pub async fn open(addr: SocketAddr, node: usize, within: Duration) -> Option<Conn> {
        let open = async {
            let tcp = TcpStream::connect(addr).await.ok()?;
            tcp.set_nodelay(true).ok()?;
            let url = format!("ws://{addr}/ws");
            let (ws, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(tcp))
                .await
                .ok()?;
            Some(ws)
        };
        let ws = tokio::time::timeout(within, open).await.ok()??;
        Some(Conn {
            ws,
            next_rid: 0,
            node,
            last_request: Instant::now(),
        })
    }

    /// Sends `msg` with a fresh `rid` and waits up to `within` for its answer; every other
    /// message read meanwhile goes to `push`.
    pub async fn request(
        &mut self,
        mut msg: Value,
        within: Duration,
        push: &mut (dyn FnMut(&Value) + Send),
    ) -> Reply {
        self.next_rid += 1;
        let rid = self.next_rid;
        msg["rid"] = json!(rid);
        self.last_request = Instant::now();
        let deadline = Instant::now() + within;
        match tokio::time::timeout_at(
            deadline,
            self.ws.send(Message::Text(msg.to_string().into())),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Reply::Closed,
            Err(_) => return Reply::Timeout,
        }
        // A slow answer is not a silent node: after a second without one a `ping` (which no
        // game or Redis call delays) asks whether the node still answers at all, so a frozen
        // node is left after two seconds rather than at the answer timeout.
        let mut probe = Some(Instant::now() + PROBE_AFTER);
        let mut probe_rid = None;
        let mut silent_by = deadline;
        loop {
            let until = probe.map_or(silent_by, |p| p.min(silent_by));
            match self.read_until(until).await {
                Ok(Some(m)) if m["rid"] == json!(rid) => return Reply::Answer(m),
                Ok(Some(m)) if probe_rid.is_some() && m["rid"] == json!(probe_rid) => {
                    // Alive: wait for the answer itself, up to the timeout.
                    silent_by = deadline;
                }
                Ok(Some(m)) => push(&m),
                Ok(None) if probe.is_some_and(|p| Instant::now() >= p) => {
                    probe = None;
                    self.next_rid += 1;
                    probe_rid = Some(self.next_rid);
                    let ping = json!({"t":"ping","rid":self.next_rid});
                    if self
                        .ws
                        .send(Message::Text(ping.to_string().into()))
                        .await
                        .is_err()
                    {
                        return Reply::Closed;
                    }
                    silent_by = deadline.min(Instant::now() + PROBE_AFTER);
                }
                Ok(None) if Instant::now() >= silent_by => return Reply::Timeout,
                Ok(None) => {}
                Err(()) => return Reply::Closed,
            }
        }
    }

    /// Reads messages for `d`, handing each to `push`; false if the connection closed.
    pub async fn pump_for(&mut self, d: Duration, push: &mut (dyn FnMut(&Value) + Send)) -> bool {
        let deadline = Instant::now() + d;
        loop {
            match self.read_until(deadline).await {
                Ok(Some(m)) => push(&m),
                Ok(None) => return true,
                Err(()) => return false,
            }
        }
    }

    /// The next JSON message before `deadline`: `Ok(None)` at the deadline, `Err` when
    /// the connection closed.
    async fn read_until(&mut self, deadline: Instant) -> Result<Option<Value>, ()> {
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => return Ok(None),
                Ok(Some(Ok(Message::Text(t)))) => {
                    // The server only sends JSON; anything else is skipped, not fatal.
                    if let Ok(v) = serde_json::from_str(t.as_str()) {
                        return Ok(Some(v));
                    }
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(Some(Err(_))) | Ok(None) => return Err(()),
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// Closes the connection without waiting for the server (it may be paused).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(100), self.ws.close(None)).await;
    }
}

/// One observer's document of one game.
pub struct View {
    /// Game id.
    pub game_id: String,
    /// Who holds it, for reports (`host p… @n2`).
    pub observer: String,
    /// The document, once a snapshot arrived.
    pub doc: Option<Value>,
    /// Its seq.
    pub seq: u64,
    /// Set when a diff skipped a seq or did not apply: the view must be fetched again
    /// (`game.watch` with `since`).
    pub stale: bool,
    history: History,
}

impl View {
    /// An empty view of a game.
    pub fn new(game_id: &str, observer: String, history: History) -> View {
        View {
            game_id: game_id.to_string(),
            observer,
            doc: None,
            seq: 0,
            stale: false,
            history,
        }
    }

    /// Takes in a message: a snapshot or a diff of this game updates the document (and is
    /// recorded); anything else is ignored.
    pub fn take(&mut self, m: &Value) {
        if m["game_id"] != self.game_id.as_str() {
            return;
        }
        match m["t"].as_str() {
            Some("game.snapshot") => {
                let Some(seq) = m["seq"].as_u64() else { return };
                self.doc = Some(m["doc"].clone());
                self.seq = seq;
                self.stale = false;
                self.history
                    .doc(&self.game_id, seq, &self.observer, &m["doc"]);
            }
            Some("game.diff") => {
                let (Some(seq), Some(doc)) = (m["seq"].as_u64(), self.doc.as_mut()) else {
                    return;
                };
                if seq <= self.seq {
                    return; // Already held (a replay overlapping what arrived live).
                }
                if seq != self.seq + 1 || self.stale {
                    self.stale = true;
                    return;
                }
                let applied = serde_json::from_value::<json_patch::Patch>(m["patch"].clone())
                    .map_err(|e| e.to_string())
                    .and_then(|p| json_patch::patch(doc, &p).map_err(|e| e.to_string()));
                match applied {
                    Ok(()) => {
                        self.seq = seq;
                        self.history.doc(&self.game_id, seq, &self.observer, doc);
                    }
                    Err(e) => {
                        self.history.anomaly(format!(
                            "game {} seq {seq}: the diff does not apply to {}'s document at seq {}: {e}",
                            self.game_id, self.observer, self.seq
                        ));
                        self.stale = true;
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether the document shows the game ended.
    pub fn ended(&self) -> bool {
        self.doc
            .as_ref()
            .is_some_and(|d| d["status"]["state"] == "ended")
    }
}
