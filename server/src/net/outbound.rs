//! The sending half of a connection as seen by the rest of the server.
//!
//! Why a bounded queue of pre-encoded frames: a game actor encodes a diff once and hands the
//! same bytes to every subscriber with `try_send`, so a slow reader can never block the
//! actor or other subscribers. A full queue means the reader fell too far behind: it is
//! kicked (disconnected) and may reconnect and resync with `game.watch`/`since`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::ws::Utf8Bytes;
use stoa_protocol::wire::ServerMessage;
use tokio::sync::{mpsc, Notify};

use crate::metrics::Metrics;

/// One item for a connection's writer task.
#[derive(Debug)]
pub enum Outbound {
    /// A text frame, already encoded (shared bytes).
    Text(Utf8Bytes),
    /// Send a close frame with this code and reason, then stop.
    Close(u16, &'static str),
    /// Send a websocket ping.
    Ping,
    /// Flush, finish the close handshake and stop.
    Stop,
}

/// What happened to a frame handed to [`ConnHandle::send`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    /// Queued.
    Sent,
    /// The queue was full: the connection has been kicked.
    Dropped,
    /// The connection is gone.
    Closed,
}

/// Shared handle of one websocket connection.
#[derive(Debug)]
pub struct ConnHandle {
    /// Process-unique connection id.
    pub id: u64,
    tx: mpsc::Sender<Outbound>,
    kicked: AtomicBool,
    kick: Notify,
    player: OnceLock<String>,
    subs: Mutex<HashSet<String>>,
    metrics: Arc<Metrics>,
}

impl ConnHandle {
    /// A handle around the writer's queue.
    pub fn new(id: u64, tx: mpsc::Sender<Outbound>, metrics: Arc<Metrics>) -> Self {
        ConnHandle {
            id,
            tx,
            kicked: AtomicBool::new(false),
            kick: Notify::new(),
            player: OnceLock::new(),
            subs: Mutex::new(HashSet::new()),
            metrics,
        }
    }

    /// Waits until the queue has room for `n` more frames. The reader waits for this before
    /// reading the next request, so a client that sends faster than it reads its answers
    /// is slowed down (backpressure) instead of being dropped as a slow consumer; only
    /// pushed broadcasts, which cannot wait, kick a connection whose queue is full.
    pub async fn room(&self, n: usize) {
        // Never more than half the queue: a small queue still lets requests in.
        let n = n.min(self.tx.max_capacity() / 2).max(1);
        if let Ok(permits) = self.tx.reserve_many(n).await {
            drop(permits);
        }
    }

    /// Queues pre-encoded bytes without waiting; kicks the connection when its queue is full.
    pub fn send(&self, bytes: Utf8Bytes) -> SendOutcome {
        if self.is_kicked() {
            return SendOutcome::Dropped;
        }
        match self.tx.try_send(Outbound::Text(bytes)) {
            Ok(()) => {
                self.metrics.messages_out.inc();
                SendOutcome::Sent
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.metrics.slow_consumers_dropped.inc();
                tracing::info!(
                    conn = self.id,
                    "outbound queue full: dropping slow consumer"
                );
                self.kick();
                SendOutcome::Dropped
            }
            Err(mpsc::error::TrySendError::Closed(_)) => SendOutcome::Closed,
        }
    }

    /// Encodes and queues a message.
    pub fn send_msg(&self, msg: &ServerMessage) -> SendOutcome {
        self.send(Utf8Bytes::from(msg.to_json()))
    }

    /// Queues a close frame; `false` when the queue is full or gone.
    pub fn close(&self, code: u16, reason: &'static str) -> bool {
        self.tx.try_send(Outbound::Close(code, reason)).is_ok()
    }

    /// Queues the end of the writer (after what is queued); `false` when it cannot.
    pub fn stop(&self) -> bool {
        self.tx.try_send(Outbound::Stop).is_ok()
    }

    /// Queues a websocket ping (skipped when the queue is full).
    pub fn send_ping(&self) -> bool {
        self.tx.try_send(Outbound::Ping).is_ok()
    }

    /// Marks the connection for disconnection; its task closes the socket.
    pub fn kick(&self) {
        self.kicked.store(true, Ordering::SeqCst);
        self.kick.notify_one();
    }

    /// Whether the connection was kicked.
    pub fn is_kicked(&self) -> bool {
        self.kicked.load(Ordering::SeqCst)
    }

    /// Resolves when the connection is kicked.
    pub async fn kicked(&self) {
        if self.is_kicked() {
            return;
        }
        self.kick.notified().await;
    }

    /// Whether the connection's writer is gone (the socket closed).
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// The player of this connection, once `hello` succeeded.
    pub fn player_id(&self) -> Option<&str> {
        self.player.get().map(String::as_str)
    }

    /// Records the player after `hello`.
    pub fn set_player(&self, id: String) -> bool {
        self.player.set(id).is_ok()
    }

    /// Records a game subscription (so disconnecting can end it).
    pub fn add_sub(&self, game_id: &str) {
        self.subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(game_id.to_string());
    }

    /// Forgets a game subscription.
    pub fn remove_sub(&self, game_id: &str) {
        self.subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(game_id);
    }

    /// The games this connection watches.
    pub fn subs(&self) -> Vec<String> {
        self.subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}
