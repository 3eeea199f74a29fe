//! The websocket connection to the server: `hello`/`welcome`, requests matched to answers by
//! `rid`, pushes forwarded as events, clock-offset measurement with `ping`, and reconnection
//! with backoff after a network drop, to any of the deployment's addresses that answers.
//!
//! Why one task owns the socket: requests come from the front-end at any time while pushes
//! (diffs, `game.started`) arrive unasked; a single owner keeps frames ordered and lets a
//! drop fail every pending request at once, then reconnect transparently. The session layer
//! only sees [`ConnEvent::Disconnected`] / [`ConnEvent::Reconnected`] and resubscribes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, Rid, ServerMessage, PROTOCOL_VERSION};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::identity::{Identity, Keys};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How often the client pings to measure the clock offset and to notice a dead link.
const PING_EVERY: Duration = Duration::from_secs(5);
/// A link that has delivered nothing (not even a pong) for this long is considered dropped.
const SILENCE_LIMIT: Duration = Duration::from_secs(15);
/// How long a connection attempt (TCP, websocket handshake, hello) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The websocket upgrade's response header naming the server's deployment.
const DEPLOYMENT_HEADER: &str = "stoa-deployment";
/// Backoff between reconnection attempts (after every address failed once): doubles from
/// the first to the last value.
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(8);

/// The player this session is, as told by `welcome`.
#[derive(Clone, Debug, Default)]
pub struct Welcome {
    /// Public player id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The secret token (to be stored).
    pub token: String,
    /// Unfinished games this player sits in.
    pub games: Vec<String>,
    /// The deployment the server belongs to (`welcome.deployment`, else the upgrade's
    /// `stoa-deployment` header; empty from a server that says neither).
    pub deployment: String,
    /// The address that welcomed us.
    pub url: String,
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The server answered `error`.
    Server {
        /// The protocol/docs/PROTOCOL.md error code.
        code: String,
        /// Text for a person.
        message: String,
    },
    /// The connection dropped before the answer came (the request may or may not have
    /// been applied; the session resynchronises from the document).
    Disconnected,
    /// The answer is not a message of the protocol (a server that does not follow it): the
    /// reason serde gave.
    Unreadable(String),
}

impl RequestError {
    /// The error code (`disconnected` for a drop).
    pub fn code(&self) -> &str {
        match self {
            RequestError::Server { code, .. } => code,
            RequestError::Disconnected => "disconnected",
            RequestError::Unreadable(_) => "unreadable_answer",
        }
    }

    /// Text for a person.
    pub fn message(&self) -> &str {
        match self {
            RequestError::Server { message, .. } => message,
            RequestError::Disconnected => "the connection dropped before the server answered",
            RequestError::Unreadable(why) => why,
        }
    }
}

/// Something the connection tells the session without being asked.
#[derive(Debug)]
pub enum ConnEvent {
    /// A server message: every push, and also every `game.snapshot`, `game.diff`, `lobby`
    /// and `lobby.diff` even when it answers a request, so documents are kept in one place.
    Message(ServerMessage),
    /// The link dropped; reconnection is under way.
    Disconnected(String),
    /// The link is back, as the same player.
    Reconnected(Welcome),
    /// The connection gave up for good (e.g. the token was refused on reconnect).
    Closed(String),
}

type Reply = oneshot::Sender<Result<ServerMessage, RequestError>>;

enum Command {
    Request(ClientMessage, Reply),
    Send(ClientMessage),
}

/// A handle to the connection task; cheap to clone.
#[derive(Clone)]
pub struct Connection {
    commands: mpsc::UnboundedSender<Command>,
    offset: Arc<AtomicI64>,
}

/// Everything needed to open a session.
#[derive(Clone, Debug)]
pub struct Target {
    /// The deployment's addresses (`ws://host:port/ws`), tried in order: the first that
    /// answers serves, and the others stand in when it stops answering.
    pub urls: Vec<String>,
    /// Which stored token to offer which server.
    pub keys: Keys,
    /// Where a reconnection to another address is noted (none: not kept).
    pub identity: Option<Identity>,
    /// Name for a new guest.
    pub name: Option<String>,
    /// Extra trusted certificates (PEM file) for `wss://`.
    pub ca_file: Option<String>,
    /// A new identity is a computer player (`stoa bot`).
    pub bot: bool,
}

/// Why the first connection failed.
#[derive(Debug)]
pub enum ConnectError {
    /// Network or handshake failure.
    Network(String),
    /// The server refused the hello.
    Refused {
        /// The error code.
        code: String,
        /// Text for a person.
        message: String,
        /// The token the hello carried, if any.
        offered: Option<String>,
    },
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Network(m) => write!(f, "cannot connect: {m}"),
            ConnectError::Refused { code, message, .. } => {
                write!(f, "server refused hello ({code}): {message}")
            }
        }
    }
}

/// Milliseconds since the Unix epoch on this machine.
pub fn local_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Connection {
    /// Connects, says hello and starts the connection task. Returns the handle, the
    /// welcome and the event stream.
    /// The addresses are tried in order; the first that answers serves (a refused `hello`
    /// is final).
    pub async fn open(
        target: Target,
    ) -> Result<(Connection, Welcome, mpsc::UnboundedReceiver<ConnEvent>), ConnectError> {
        let offset = Arc::new(AtomicI64::new(0));
        let mut failures = Vec::new();
        let mut opened = None;
        for (i, url) in target.urls.iter().enumerate() {
            match handshake(&target, url, false).await {
                Ok(x) => {
                    opened = Some((i, x));
                    break;
                }
                Err(ConnectError::Network(e)) => failures.push(e),
                Err(refused) => return Err(refused),
            }
        }
        let Some((current, (ws, welcome, server_time))) = opened else {
            return Err(ConnectError::Network(failures.join("; ")));
        };
        offset.store(server_time - local_now_ms(), Ordering::Relaxed);
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let mut target = target;
        // From now on this session is this player, on this deployment only.
        target.keys = Keys::session(&welcome.url, &welcome.deployment, &welcome.token);
        let task = Task {
            target,
            current,
            commands: cmd_rx,
            events: ev_tx,
            offset: offset.clone(),
            pending: HashMap::new(),
            next_rid: 1,
            trace: std::env::var_os("STOA_TRACE").is_some_and(|v| !v.is_empty()),
        };
        tokio::spawn(task.run(ws));
        Ok((
            Connection {
                commands: cmd_tx,
                offset,
            },
            welcome,
            ev_rx,
        ))
    }

    /// Sends a request (a `rid` is added) and waits for its one direct answer.
    pub async fn request(&self, msg: ClientMessage) -> Result<ServerMessage, RequestError> {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Request(msg, tx)).is_err() {
            return Err(RequestError::Disconnected);
        }
        rx.await.unwrap_or(Err(RequestError::Disconnected))
    }

    /// Sends a message without waiting for anything.
    pub fn send(&self, msg: ClientMessage) {
        let _ = self.commands.send(Command::Send(msg));
    }

    /// Server time minus local time, in ms (from `welcome`, refined by every `pong`).
    pub fn offset_ms(&self) -> i64 {
        self.offset.load(Ordering::Relaxed)
    }

    /// The server's clock now, in ms since the epoch.
    pub fn server_now_ms(&self) -> i64 {
        local_now_ms() + self.offset_ms()
    }
}

/// Opens the websocket to `url` and performs hello/welcome, offering the token the keys
/// give for the deployment the server announces. With `resume` (a reconnection) a server
/// that is not our deployment gets no `hello` at all (it would make us a new guest): that is
/// a `Network` failure, and the next address is tried. Returns the server time of `welcome`.
async fn handshake(
    target: &Target,
    url: &str,
    resume: bool,
) -> Result<(Ws, Welcome, i64), ConnectError> {
    let attempt = async {
        let connector = if url.starts_with("wss://") {
            Some(crate::tls::connector(target.ca_file.as_deref()).map_err(ConnectError::Network)?)
        } else {
            None
        };
        let (mut ws, response) =
            tokio_tungstenite::connect_async_tls_with_config(url, None, false, connector)
                .await
                .map_err(|e| ConnectError::Network(format!("{url}: {e}")))?;
        let announced = response
            .headers()
            .get(DEPLOYMENT_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(String::from);
        let token = target.keys.token_for(url, announced.as_deref());
        if resume && token.is_none() {
            let _ = ws.close(None).await;
            return Err(ConnectError::Network(format!(
                "{url}: another deployment ({})",
                announced.as_deref().unwrap_or("unnamed")
            )));
        }
        let hello = ClientMessage::Hello {
            rid: None,
            protocol: PROTOCOL_VERSION,
            token: token.clone(),
            name: target.name.clone(),
            bot: target.bot,
        };
        ws.send(Message::text(encode(&hello, None)))
            .await
            .map_err(|e| ConnectError::Network(e.to_string()))?;
        loop {
            let Some(frame) = ws.next().await else {
                return Err(ConnectError::Network(
                    "the server closed the connection during hello".into(),
                ));
            };
            let frame = frame.map_err(|e| ConnectError::Network(e.to_string()))?;
            let Message::Text(text) = frame else {
                continue;
            };
            let Ok(msg) = serde_json::from_str::<ServerMessage>(text.as_str()) else {
                continue;
            };
            match msg {
                ServerMessage::Welcome {
                    player,
                    token,
                    games,
                    server_time,
                    deployment,
                    ..
                } => {
                    let welcome = Welcome {
                        id: player.id,
                        name: player.name,
                        token,
                        games,
                        deployment: Some(deployment)
                            .filter(|d| !d.is_empty())
                            .or(announced)
                            .unwrap_or_default(),
                        url: url.to_string(),
                    };
                    let server_time = i64::try_from(server_time).unwrap_or_else(|_| local_now_ms());
                    return Ok((ws, welcome, server_time));
                }
                ServerMessage::Error { code, message, .. } => {
                    return Err(ConnectError::Refused {
                        code: code.as_str().to_string(),
                        message,
                        offered: token,
                    })
                }
                _ => continue,
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(r) => r,
        Err(_) => Err(ConnectError::Network(format!(
            "{url}: no welcome within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// One frame for the server: the message, with our `rid` when it is a request.
///
/// Why through a `Value`: the typed message's own `rid` stays `None` everywhere in the
/// client, and the connection numbers requests itself, so the rid is set on the way out.
fn encode(msg: &ClientMessage, rid: Option<i64>) -> String {
    // Serialising these types cannot fail: every map key is a string.
    let mut frame = serde_json::to_value(msg).unwrap_or(Value::Null);
    if let (Some(rid), Some(obj)) = (rid, frame.as_object_mut()) {
        obj.insert("rid".into(), Value::from(rid));
    }
    frame.to_string()
}

/// Messages that always go to the event stream, answer or not.
fn is_document_message(msg: &ServerMessage) -> bool {
    matches!(
        msg,
        ServerMessage::GameSnapshot { .. }
            | ServerMessage::GameDiff { .. }
            | ServerMessage::Lobby { .. }
            | ServerMessage::LobbyDiff { .. }
    )
}

/// The rid a server message echoes, if any (pushes have none).
fn rid_of(msg: &ServerMessage) -> Option<&Rid> {
    match msg {
        ServerMessage::Welcome { rid, .. }
        | ServerMessage::Pong { rid, .. }
        | ServerMessage::Ok { rid, .. }
        | ServerMessage::Error { rid, .. }
        | ServerMessage::GameSnapshot { rid, .. }
        | ServerMessage::Legal { rid, .. }
        | ServerMessage::Room { rid, .. }
        | ServerMessage::Queued { rid, .. }
        | ServerMessage::Lobby { rid, .. }
        | ServerMessage::Record { rid, .. }
        | ServerMessage::History { rid, .. } => rid.as_ref(),
        ServerMessage::GameDiff { .. }
        | ServerMessage::GameCrowd { .. }
        | ServerMessage::GameStarted { .. }
        | ServerMessage::LobbyDiff { .. }
        | ServerMessage::BotInvite { .. }
        | ServerMessage::Shutdown { .. }
        | ServerMessage::QueueStatus { .. } => None,
    }
}

/// The integer rid of a message, the only kind this client sends.
fn int_rid(rid: Option<&Rid>) -> Option<i64> {
    match rid {
        Some(Rid::Int(i)) => Some(*i),
        _ => None,
    }
}

struct Task {
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
}

impl Task {
    async fn run(mut self, mut ws: Ws) {
        loop {
            match self.serve(&mut ws).await {
                Ended::Shutdown => {
                    let _ = ws.close(None).await;
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
                        return Ended::Dropped(e.to_string());
                    }
                }
                frame = ws.next() => {
                    let frame = match frame {
                        None => return Ended::Dropped("the server closed the connection".into()),
                        Some(Err(e)) => return Ended::Dropped(e.to_string()),
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
                        return Ended::Dropped(e.to_string());
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
        let rid = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| stoa_protocol::wire::extract_rid(&v));
        if let Some(reply) = int_rid(rid.as_ref()).and_then(|r| self.pending.remove(&r)) {
            let _ = reply.send(Err(RequestError::Unreadable(format!(
                "the server's answer is not a protocol message: {e}"
            ))));
        }
    }
}
