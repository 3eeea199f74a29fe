//! The websocket connection to the server: `hello`/`welcome`, requests matched to answers by
//! `rid`, pushes forwarded as events, clock-offset measurement with `ping`, and reconnection
//! with backoff after a network drop, to any of the deployment's addresses that answers.
//!
//! Why one task owns the socket: requests come from the front-end at any time while pushes
//! (diffs, `game.started`) arrive unasked; a single owner keeps frames ordered and lets a
//! drop fail every pending request at once, then reconnect transparently. The session layer
//! only sees [`ConnEvent::Disconnected`] / [`ConnEvent::Reconnected`] and resubscribes.
//!
//! Why typed at this edge: every server frame is parsed here, once, into a
//! [`ServerMessage`], and every request is a [`ClientMessage`]; the rest of the client never
//! reads or writes a message's JSON. Files: [`handshake`](mod@handshake) (one address:
//! upgrade, hello, welcome), [`task`] (the socket's owner) and [`frames`] (encoding, rids).

mod frames;
mod handshake;
mod task;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use stoa_protocol::wire::{ClientMessage, ServerMessage};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::identity::{Identity, Keys};
use handshake::handshake;
use task::Task;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

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
    /// What the user must hear about who they are now (a server that forgot them), also
    /// shown inside the terminal UI, which covers what was printed before it.
    pub note: Option<String>,
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
    /// Sign in to an account with the first `hello` instead of offering a token (`stoa
    /// login`); reconnections then use the token it gave.
    pub login: Option<stoa_protocol::wire::Credentials>,
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
        target.login = None;
        let task = Task::new(target, current, cmd_rx, ev_tx, offset.clone());
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
