//! The task that owns the socket: requests out and answers back by rid, pushes to the
//! event stream, pings, and reconnection after a drop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, ServerMessage};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::frames::{encode, int_rid, is_document_message, rid_of};
use super::handshake::handshake;
use super::{local_now_ms, Command, ConnEvent, ConnectError, Reply, RequestError, Target, Ws};

/// How often the client pings to measure the clock offset and to notice a dead link.
const PING_EVERY: Duration = Duration::from_secs(5);
/// A link that has delivered nothing (not even a pong) for this long is considered dropped.
const SILENCE_LIMIT: Duration = Duration::from_secs(15);
/// Backoff between reconnection attempts (after every address failed once): doubles from
/// the first to the last value.
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(8);

/// The connection task's state: the socket's owner between drops.
pub(super) struct Task {
    target: Target,
    /// The index in `target.urls` of the address serving (or that last served) us.
    current: usize,
    commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<ConnEvent>,
    offset: Arc<AtomicI64>,
    pending: HashMap<i64, Reply>,
    next_rid: i64,
    /// `STOA_TRACE` set: every frame in and out goes to stderr (debugging a server).
    trace: bool,
}

/// How one websocket session of the task ended.
enum Ended {
    /// The front-end dropped every handle: stop.
    Shutdown,
    /// The link dropped: reconnect.
    Dropped(String),
    /// The server ended this player's connections for good (a ban): no reconnection.
    Final(String),
}

/// The close code of a banned player's connections: coming back is refused, so the
/// client does not try.
const BANNED_CLOSE: u16 = 4403;

impl Task {
    /// The task of a connection that `ws` opened, serving the address `current` of the
    /// target.
    pub(super) fn new(
        target: Target,
        current: usize,
        commands: mpsc::UnboundedReceiver<Command>,
        events: mpsc::UnboundedSender<ConnEvent>,
        offset: Arc<AtomicI64>,
    ) -> Task {
        Task {
            target,
            current,
            commands,
            events,
            offset,
            pending: HashMap::new(),
            next_rid: 1,
            trace: std::env::var_os("STOA_TRACE").is_some_and(|v| !v.is_empty()),
        }
    }

    /// Serves the connection until the front-end is gone or the connection gives up.
    pub(super) async fn run(mut self, mut ws: Ws) {
        loop {
            match self.serve(&mut ws).await {
                Ended::Shutdown => {
                    let _ = ws.close(None).await;
                    return;
                }
                Ended::Final(why) => {
                    for (_, reply) in self.pending.drain() {
                        let _ = reply.send(Err(RequestError::Disconnected));
                    }
                    let _ = self.events.send(ConnEvent::Closed(why));
                    return;
                }
                Ended::Dropped(why) => {
                    for (_, reply) in self.pending.drain() {
                        let _ = reply.send(Err(RequestError::Disconnected));
                    }
                    if self.events.send(ConnEvent::Disconnected(why)).is_err() {
                        return;
                    }
                }
            }
            match self.reconnect().await {
                Some(new_ws) => ws = new_ws,
                None => return,
            }
        }
    }

    /// Retries with exponential backoff until a server of our deployment welcomes us again,
    /// failing every request made meanwhile: each round tries the address that served us,
    /// then the others in order. `None` when the front-end is gone or the token was refused.
    async fn reconnect(&mut self) -> Option<Ws> {
        let mut backoff = BACKOFF_FIRST;
        loop {
            let sleep = tokio::time::sleep(backoff);
            tokio::pin!(sleep);
            // Keep answering requests while waiting, so the front-end never hangs.
            loop {
                tokio::select! {
                    _ = &mut sleep => break,
                    cmd = self.commands.recv() => match cmd {
                        None => return None,
                        Some(Command::Request(_, reply)) => {
                            let _ = reply.send(Err(RequestError::Disconnected));
                        }
                        Some(Command::Send(_)) => {}
                    },
                }
            }
            let n = self.target.urls.len();
            for i in (0..n).map(|k| (self.current + k) % n) {
                let url = self.target.urls[i].clone();
                match handshake(&self.target, &url, true).await {
                    Ok((ws, welcome, server_time)) => {
                        self.offset
                            .store(server_time - local_now_ms(), Ordering::Relaxed);
                        if i != self.current {
                            // Another address of the deployment: known from now on.
                            if let Some(identity) = &self.target.identity {
                                let _ = identity.remember(
                                    &url,
                                    &welcome.deployment,
                                    &welcome.token,
                                    &welcome.id,
                                    &welcome.name,
                                );
                            }
                            self.current = i;
                        }
                        if self.events.send(ConnEvent::Reconnected(welcome)).is_err() {
                            return None;
                        }
                        return Some(ws);
                    }
                    // A node cut off from its store says so; another may not be.
                    Err(ConnectError::Refused { code, .. }) if code == "unavailable" => {}
                    Err(ConnectError::Refused { code, message, .. }) => {
                        let _ = self.events.send(ConnEvent::Closed(format!(
                            "the server refused to resume this session ({code}): {message}"
                        )));
                        return None;
                    }
                    Err(ConnectError::Network(_)) => {}
                }
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    async fn serve(&mut self, ws: &mut Ws) -> Ended {
        let mut ticker = tokio::time::interval(PING_EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_heard = Instant::now();
        let mut ping_sent: Option<i64> = None;
        loop {
            tokio::select! {
                cmd = self.commands.recv() => {
                    let Some(cmd) = cmd else { return Ended::Shutdown };
                    let frame = match cmd {
                        Command::Request(msg, reply) => {
                            let rid = self.next_rid;
                            self.next_rid += 1;
                            self.pending.insert(rid, reply);
                            encode(&msg, Some(rid))
                        }
                        Command::Send(msg) => encode(&msg, None),
                    };
                    if self.trace {
                        eprintln!(">> {frame}");
                    }
                    if let Err(e) = ws.send(Message::text(frame)).await {
                        return Ended::Dropped(in_words(&e));
                    }
                }
                frame = ws.next() => {
                    let frame = match frame {
                        None => return Ended::Dropped("the server closed the connection".into()),
                        Some(Err(e)) => return Ended::Dropped(in_words(&e)),
                        Some(Ok(f)) => f,
                    };
                    last_heard = Instant::now();
                    match frame {
                        Message::Text(text) => {
                            if self.trace {
                                eprintln!("<< {}", text.as_str());
                            }
                            // The one place a server frame is parsed: the rest of the client
                            // sees typed messages only.
                            match serde_json::from_str::<ServerMessage>(text.as_str()) {
                                Ok(msg) => {
                                    if let ServerMessage::Pong { server_time, .. } = &msg {
                                        if let (Some(sent), Ok(server)) = (ping_sent.take(), i64::try_from(*server_time)) {
                                            let now = local_now_ms();
                                            self.offset.store(server - (sent + now) / 2, Ordering::Relaxed);
                                        }
                                    }
                                    if self.dispatch(msg).is_err() {
                                        return Ended::Shutdown;
                                    }
                                }
                                Err(e) => self.unreadable(text.as_str(), e),
                            }
                        }
                        Message::Close(Some(f)) if u16::from(f.code) == BANNED_CLOSE => {
                            return Ended::Final(format!(
                                "banned: the server closed the connection ({BANNED_CLOSE} {})",
                                f.reason
                            ));
                        }
                        Message::Close(frame) => {
                            let why = frame
                                .map(|f| format!("closed by the server ({}): {}", u16::from(f.code), f.reason))
                                .unwrap_or_else(|| "closed by the server".into());
                            return Ended::Dropped(why);
                        }
                        _ => {}
                    }
                }
                _ = ticker.tick() => {
                    if last_heard.elapsed() > SILENCE_LIMIT {
                        return Ended::Dropped(format!("no answer from the server for {} s", SILENCE_LIMIT.as_secs()));
                    }
                    ping_sent = Some(local_now_ms());
                    let ping = encode(&ClientMessage::Ping { rid: None }, None);
                    if let Err(e) = ws.send(Message::text(ping)).await {
                        return Ended::Dropped(in_words(&e));
                    }
                }
            }
        }
    }

    /// Routes one server message: answers to their requester, documents and pushes to the
    /// event stream. `Err` when the front-end is gone.
    fn dispatch(&mut self, msg: ServerMessage) -> Result<(), ()> {
        let rid = int_rid(rid_of(&msg));
        let mut to_events = is_document_message(&msg);
        match rid.and_then(|r| self.pending.remove(&r)) {
            Some(reply) => {
                let answer = match &msg {
                    ServerMessage::Error { code, message, .. } => Err(RequestError::Server {
                        code: code.as_str().to_string(),
                        message: message.clone(),
                    }),
                    _ => Ok(msg.clone()),
                };
                let _ = reply.send(answer);
            }
            None => {
                // A push, or an answer nobody waits for (e.g. our own liveness pong).
                if !matches!(msg, ServerMessage::Pong { .. }) {
                    to_events = true;
                }
            }
        }
        if to_events {
            self.events.send(ConnEvent::Message(msg)).map_err(|_| ())?;
        }
        Ok(())
    }

    /// A frame that is no message of the protocol: it says nothing to the session, but a
    /// request it answers fails rather than waits for ever.
    fn unreadable(&mut self, text: &str, e: serde_json::Error) {
        let value = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
        let rid = stoa_protocol::wire::extract_rid(&value);
        let Some(reply) = int_rid(rid.as_ref()).and_then(|r| self.pending.remove(&r)) else {
            return;
        };
        let answer = match (&value["t"], &value["code"], &value["message"]) {
            // An error whose code this client does not know yet (a newer server) still
            // says why, in the server's words.
            (Value::String(t), Value::String(code), Value::String(message)) if t == "error" => {
                RequestError::Server {
                    code: code.clone(),
                    message: message.clone(),
                }
            }
            _ => RequestError::Unreadable(format!(
                "the server's answer is not a protocol message: {e}"
            )),
        };
        let _ = reply.send(Err(answer));
    }
}

/// Why a connection broke, in words for a person: the websocket library's own texts
/// ("WebSocket protocol error: Connection reset without closing handshake") say how, not
/// what happened to the player.
fn in_words(e: &tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    use tokio_tungstenite::tungstenite::Error;
    match e {
        Error::ConnectionClosed | Error::AlreadyClosed => "the server closed the connection",
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            "the server went away without closing the connection"
        }
        Error::Io(_) => "the network connection broke",
        Error::Tls(_) => "the secure connection failed",
        _ => "the connection broke",
    }
    .to_string()
}
