//! One task per websocket: a reader loop, and a writer task fed by a bounded queue.
//!
//! Why split: the reader awaits requests one at a time (a request's answer is queued before
//! the next is read, keeping answers in order), while the writer alone touches the socket's
//! sending half. When the writer cannot keep up and the queue fills, the connection is
//! kicked rather than slowing anyone else down.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::ServerMessage;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::net::outbound::{ConnHandle, Outbound};
use crate::services::hub::Hub;
use crate::session::{Flow, Session};

/// Queue slots kept free for the answers to one request (an answer, a snapshot and its
/// crowd, a few replayed diffs fit; a long replay may still use more).
const ANSWER_ROOM: usize = 16;

/// Keeps the server's shutdown waiting until every connection task has finished.
pub type ConnGuard = mpsc::Sender<()>;

/// Serves one upgraded websocket until it closes.
pub async fn serve(hub: Arc<Hub>, socket: WebSocket, peer: SocketAddr, guard: ConnGuard) {
    let id = hub.conn_id();
    let span = tracing::info_span!(parent: None, "conn", id, %peer);
    run(hub, socket, id, guard).instrument(span).await
}

async fn run(hub: Arc<Hub>, socket: WebSocket, id: u64, _guard: ConnGuard) {
    hub.metrics.connections_open.inc();
    hub.metrics.connections.inc();
    let (sink, mut stream) = socket.split();
    let (tx, rx) = mpsc::channel::<Outbound>(hub.config.outbound_queue.max(2));
    let conn = Arc::new(ConnHandle::new(id, tx, hub.metrics.clone()));
    let mut writer = tokio::spawn(write_loop(sink, rx, hub.time.clone()).in_current_span());

    let mut session = Session::new(hub.clone(), conn.clone());
    let grace = Duration::from_millis(hub.config.shutdown_grace_ms);
    let Ending { close, wait_writer } = read_loop(&hub, &conn, &mut session, &mut stream).await;

    let queued = match close {
        Some((code, reason)) => conn.close(code, reason),
        None => conn.stop(),
    };
    tracing::debug!(?close, "reader loop ended");
    session.end().await;
    if close.is_some() && queued && wait_writer {
        let _ = tokio::time::timeout(grace, drain_until_close(&mut stream)).await;
    }
    drop(stream);
    tracing::debug!("input drained");
    if wait_writer && queued && !conn.is_kicked() {
        // Let queued frames (answers, the close frame) go out, within the grace period.
        if tokio::time::timeout(grace, &mut writer).await.is_err() {
            writer.abort();
        }
    } else {
        writer.abort();
    }
    drop(conn);
    hub.metrics.connections_open.dec();
    tracing::debug!("connection closed");
}

/// The writer task: the one owner of the socket's sending half, fed by the connection's
/// queue until a close frame, a stop or a write error.
async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Outbound>,
    time: Arc<dyn TimeSource>,
) {
    // Everything already queued is written before one flush: a burst of frames (a
    // replay, a move's diff and its `ok`) costs one write, not one per frame.
    while let Some(first) = rx.recv().await {
        let mut item = Some(first);
        while let Some(next) = item.take() {
            match next {
                Outbound::Text(bytes) => {
                    if sink.feed(Message::Text(bytes)).await.is_err() {
                        return;
                    }
                }
                Outbound::Close(code, reason) => {
                    let _ = sink
                        .send(Message::Close(Some(CloseFrame {
                            code,
                            reason: reason.into(),
                        })))
                        .await;
                    // The close frame is flushed; the reader finishes the handshake.
                    return;
                }
                Outbound::Ping => {
                    // Stamped as it leaves, so the round trip excludes our queue.
                    let payload = crate::services::rtt::ping_payload(time.now_ms());
                    if sink.feed(Message::Ping(payload)).await.is_err() {
                        return;
                    }
                }
                Outbound::Stop => {
                    let _ = sink.flush().await;
                    return;
                }
            }
            item = rx.try_recv().ok();
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
    let _ = sink.flush().await;
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

/// The reader loop: requests one at a time, pings, and the reasons to end (a kick, the
/// server's shutdown, no hello in time, the idle timeout, the peer's close).
async fn read_loop(
    hub: &Arc<Hub>,
    conn: &Arc<ConnHandle>,
    session: &mut Session,
    stream: &mut SplitStream<WebSocket>,
) -> Ending {
    let mut shutdown = hub.shutdown.clone();
    let hello_deadline = tokio::time::sleep(Duration::from_millis(hub.config.hello_timeout_ms));
    tokio::pin!(hello_deadline);
    let ping_every = Duration::from_millis(hub.config.ping_interval_ms.max(100));
    let idle = Duration::from_millis(hub.config.idle_timeout_ms);
    // The connection's own pings only keep it from the idle timeout (and proxies from
    // closing it): every half of it, so one late pong is no disconnection. Round trips
    // for lag compensation are asked by the games, of the player whose clock starts
    // running (`Actor::ping_runner`): an idle server sends almost nothing.
    let keepalive = ping_every.max(idle / 2);
    let ping = tokio::time::sleep(keepalive);
    tokio::pin!(ping);
    let mut last_seen = Instant::now();

    loop {
        tokio::select! {
            biased;
            _ = conn.kicked() => {
                return Ending { close: None, wait_writer: false };
            }
            _ = shutdown.changed() => {
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
            frame = async { conn.room(ANSWER_ROOM).await; stream.next().await } => {
                let msg = match frame {
                    None => return Ending { close: None, wait_writer: true },
                    Some(Err(e)) => {
                        if is_capacity_error(e) {
                            return Ending::close(1009, "frame too large");
                        }
                        // A broken socket: nothing queued would reach anyone.
                        return Ending { close: None, wait_writer: false };
                    }
                    Some(Ok(msg)) => msg,
                };
                last_seen = Instant::now();
                if let Some(ending) = on_message(hub, conn, session, msg).await {
                    return ending;
                }
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
        Message::Text(text) => session.on_text(text.as_str()).await,
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
        Message::Ping(_) => Flow::Continue,
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
async fn drain_until_close(stream: &mut SplitStream<WebSocket>) {
    while let Some(next) = stream.next().await {
        tracing::trace!(?next, "draining");
        match next {
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Whether a read error is tungstenite's "message/frame too large".
fn is_capacity_error(e: axum::Error) -> bool {
    let inner = e.into_inner();
    match inner.downcast::<tungstenite::Error>() {
        Ok(te) => matches!(*te, tungstenite::Error::Capacity(_)),
        Err(other) => {
            let s = other.to_string();
            s.contains("Space limit exceeded") || s.contains("too long") || s.contains("too large")
        }
    }
}
