//! One task per websocket: it reads requests, and flushes what a full socket could not
//! take at once.
//!
//! Why one task: frames are written by whoever sends them ([`ConnHandle`]), straight into
//! the socket; the connection's task only waits for a full socket to take bytes again. It
//! reads requests one at a time (a request's answer is sent before the next is read,
//! keeping answers in order). When a socket stays full and its queue fills, the
//! connection is kicked rather than slowing anyone else down.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stoa_protocol::wire::ServerMessage;
use tokio::sync::mpsc;
use tracing::Instrument;
use tungstenite::protocol::{Role, WebSocket, WebSocketConfig};
use tungstenite::Message;

use crate::net::outbound::ConnHandle;
use crate::net::socket::RawSocket;
use crate::services::hub::Hub;
use crate::session::{Flow, Session};

/// Queue slots kept free for the answers to one request (an answer, a snapshot and its
/// crowd, a few replayed diffs fit; a long replay may still use more).
const ANSWER_ROOM: usize = 16;

/// Keeps the server's shutdown waiting until every connection task has finished.
pub type ConnGuard = mpsc::Sender<()>;

/// An upgraded connection: its socket, and the bytes already read past the HTTP request.
pub struct Upgraded {
    /// The socket, shared by the reading task and every sender.
    pub socket: Arc<dyn RawSocket>,
    /// Bytes the HTTP layer read beyond the upgrade request (the client's first frames).
    pub read_ahead: Vec<u8>,
}

/// The websocket library's view of the socket: it reads from the socket and its own
/// writes (pongs, close replies) join the connection's outgoing frames in order.
struct WsIo {
    socket: Arc<dyn RawSocket>,
    conn: Arc<ConnHandle>,
}

impl Read for WsIo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.try_read(buf)
    }
}

impl Write for WsIo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.conn.send_raw(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type Ws = WebSocket<WsIo>;

/// Serves one upgraded websocket until it closes.
pub async fn serve(
    hub: Arc<Hub>,
    upgraded: Upgraded,
    config: WebSocketConfig,
    peer: SocketAddr,
    ip: IpAddr,
    guard: ConnGuard,
) {
    let id = hub.conn_id();
    let span = tracing::info_span!(parent: None, "conn", id, %peer);
    run(hub, upgraded, config, id, ip, guard)
        .instrument(span)
        .await
}

async fn run(
    hub: Arc<Hub>,
    upgraded: Upgraded,
    config: WebSocketConfig,
    id: u64,
    ip: IpAddr,
    _guard: ConnGuard,
) {
    hub.metrics.connections_open.inc();
    hub.metrics.connections.inc();
    let conn = Arc::new(ConnHandle::new(
        id,
        upgraded.socket.clone(),
        hub.config.outbound_queue.max(2),
        hub.metrics.clone(),
        hub.time.clone(),
    ));
    let io = WsIo {
        socket: upgraded.socket,
        conn: conn.clone(),
    };
    let mut ws =
        WebSocket::from_partially_read(io, upgraded.read_ahead, Role::Server, Some(config));

    let mut session = Session::new(hub.clone(), conn.clone(), ip);
    let grace = Duration::from_millis(hub.config.shutdown_grace_ms);
    let Ending { close, wait_writer } = read_loop(&hub, &conn, &mut session, &mut ws).await;

    let queued = match close {
        Some((code, reason)) => conn.close(code, reason),
        None => conn.stop(),
    };
    tracing::debug!(?close, "reader loop ended");
    session.end().await;
    if wait_writer && queued && !conn.is_kicked() {
        // Let queued frames (answers, the close frame) go out, and the peer answer our
        // close, within the grace period.
        let _ = tokio::time::timeout(grace, async {
            let flushed = conn.flush().await;
            if close.is_some() && flushed.is_ok() {
                drain_until_close(&mut ws).await;
            }
        })
        .await;
    }
    tracing::debug!("input drained");
    conn.set_closed();
    drop(ws);
    drop(conn);
    hub.metrics.connections_open.dec();
    tracing::debug!("connection closed");
}

/// The next message from the peer, waiting for the socket as needed. Cancel-safe: a
/// partly read frame stays in the library's buffer.
async fn next_message(ws: &mut Ws) -> Result<Message, tungstenite::Error> {
    loop {
        match ws.read() {
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                let socket = ws.get_ref().socket.clone();
                poll_fn(|cx| socket.poll_read_ready(cx))
                    .await
                    .map_err(tungstenite::Error::Io)?;
            }
            other => return other,
        }
    }
}

/// How the reader loop ended.
struct Ending {
    /// The close frame to send (`None`: the peer closed, the input ended or failed, or the
    /// connection was kicked).
    close: Option<(u16, &'static str)>,
    /// Whether the writer may still deliver what is queued (not after a kick or a broken
    /// socket: nobody would read it).
    wait_writer: bool,
}

impl Ending {
    /// Ends with a close frame of ours.
    fn close(code: u16, reason: &'static str) -> Ending {
        Ending {
            close: Some((code, reason)),
            wait_writer: true,
        }
    }
}

/// The connection's idle timeout, and the time between its own pings.
///
/// Why these pings: they only keep the connection from the idle timeout (and proxies from
/// closing it), so they come every half of it and one late pong is no disconnection. Round
/// trips for lag compensation are asked by the games, of the player whose clock starts
/// running (`Actor::ping_runner`): an idle server sends almost nothing.
fn keepalive(hub: &Hub) -> (Duration, Duration) {
    let ping_every = Duration::from_millis(hub.config.ping_interval_ms.max(100));
    let idle = Duration::from_millis(hub.config.idle_timeout_ms);
    (idle, ping_every.max(idle / 2))
}

/// How a failed read ends the connection.
fn read_failure(error: tungstenite::Error) -> Ending {
    match error {
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => Ending {
            close: None,
            wait_writer: true,
        },
        tungstenite::Error::Capacity(_) => Ending::close(1009, "frame too large"),
        // A broken socket or a protocol violation: nothing queued would reach anyone.
        _ => Ending {
            close: None,
            wait_writer: false,
        },
    }
}

/// The reader loop: requests one at a time, pings, and the reasons to end (a kick, the
/// server's shutdown, no hello in time, the idle timeout, the peer's close).
async fn read_loop(
    hub: &Arc<Hub>,
    conn: &Arc<ConnHandle>,
    session: &mut Session,
    ws: &mut Ws,
) -> Ending {
    let mut shutdown = hub.shutdown.clone();
    let hello_deadline = tokio::time::sleep(Duration::from_millis(hub.config.hello_timeout_ms));
    tokio::pin!(hello_deadline);
    let (idle, keepalive) = keepalive(hub);
    let ping = tokio::time::sleep(keepalive);
    tokio::pin!(ping);
    let mut last_seen = Instant::now();
    // Made once: it is ready only when the server shuts down, which ends the loop, and a
    // fresh one each pass took the channel's lock twice per request.
    let shutdown = shutdown.changed();
    tokio::pin!(shutdown);

    loop {
        tokio::select! {
            biased;
            _ = conn.kicked() => {
                return Ending { close: None, wait_writer: false };
            }
            (code, reason) = conn.ended() => {
                return Ending::close(code, reason);
            }
            _ = &mut shutdown => {
                conn.send_msg(&ServerMessage::Shutdown {
                    message: "the server is shutting down; reconnect later".into(),
                });
                return Ending::close(1001, "server shutting down");
            }
            _ = &mut hello_deadline, if !session.identified() => {
                conn.send_msg(&ServerMessage::error(
                    None,
                    stoa_protocol::wire::ErrorCode::Unauthorized,
                    "no hello in time",
                ));
                return Ending::close(1008, "hello expected");
            }
            _ = &mut ping => {
                if last_seen.elapsed() > idle {
                    return Ending::close(1001, "idle timeout");
                }
                let _ = conn.send_ping();
                ping.as_mut().reset(tokio::time::Instant::now() + keepalive);
            }
            // Answers to this connection's own requests need room in its queue: read the
            // next request only when there is some (see `ConnHandle::room`).
            frame = async { conn.room(ANSWER_ROOM).await; next_message(ws).await } => {
                let msg = match frame {
                    Ok(msg) => msg,
                    Err(error) => return read_failure(error),
                };
                last_seen = Instant::now();
                if let Some(ending) = on_message(hub, conn, session, msg).await {
                    return ending;
                }
            }
            // What a full socket could not take at once goes out as it drains.
            flushed = conn.flush() => {
                // Done only when the queue closed (then the connection ends) or the
                // socket failed (then nothing queued would reach anyone).
                return Ending { close: None, wait_writer: flushed.is_ok() };
            }
        }
    }
}

/// One message from the peer; `Some` when it ends the connection.
async fn on_message(
    hub: &Arc<Hub>,
    conn: &ConnHandle,
    session: &mut Session,
    msg: Message,
) -> Option<Ending> {
    let flow = match msg {
        // Boxed: a request's handling (the largest of all requests' futures) would
        // otherwise sit inline in every connection's task for its whole life, idle or not
        // (it would double the task to 4.4 KiB, heaptrack says: memory every idle
        // connection pays).
        Message::Text(text) => Box::pin(session.on_text(text.as_str())).await,
        Message::Binary(_) => session.on_binary(),
        Message::Pong(payload) => {
            crate::services::rtt::on_pong(
                hub.time.as_ref(),
                &hub.games,
                conn.player_id(),
                &payload,
            );
            Flow::Continue
        }
        Message::Ping(_) | Message::Frame(_) => Flow::Continue,
        Message::Close(_) => {
            return Some(Ending {
                close: None,
                wait_writer: true,
            })
        }
    };
    match flow {
        Flow::Close(code, reason) => Some(Ending::close(code, reason)),
        Flow::Continue => None,
    }
}

/// Finishes the close handshake: reads (and discards) until the peer's close, so unread
/// input never turns our close into a connection reset that loses the close frame.
async fn drain_until_close(ws: &mut Ws) {
    loop {
        let next = next_message(ws).await;
        tracing::trace!(?next, "draining");
        match next {
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
}
