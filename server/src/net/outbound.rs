//! The sending half of a connection as seen by the rest of the server.
//!
//! Why frames are written by whoever sends them: a game actor frames a diff once
//! ([`Frame`]) and writes the same bytes straight into every subscriber's socket with a
//! non-blocking write. No task is woken per recipient and nothing is copied per
//! recipient; the connection's own task only steps in when a socket's buffer is full.
//! Then the frames wait in the connection's bounded queue, in order, and every later
//! frame queues behind them. A full queue means the reader fell too far behind: it is
//! kicked (disconnected) and may reconnect and resync with `game.watch`/`since`.

use parking_lot::{Mutex, MutexGuard};
use std::collections::{HashSet, VecDeque};
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use futures_util::task::AtomicWaker;
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::ServerMessage;

use crate::ids::{GameId, PlayerId};
use crate::metrics::Metrics;
use crate::net::frame::Frame;
use crate::net::socket::{write_joined, RawSocket};

/// What happened to a frame handed to [`ConnHandle::send`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    /// Written, or queued behind earlier frames.
    Sent,
    /// The queue was full: the connection has been kicked.
    Dropped,
    /// The connection is gone.
    Closed,
}

/// A queued item: a frame, or a ping stamped only as it is written (so its round trip
/// excludes our queue).
enum Item {
    Frame(Frame),
    Ping,
    /// Raw bytes of the websocket library's own replies (pongs, the close handshake).
    Raw(Vec<u8>),
}

/// The queue behind a full socket, under the handle's lock.
struct Pending {
    /// The socket, until the connection ends (handles outlive it in games' subscriber
    /// lists; the socket must not).
    socket: Option<Arc<dyn RawSocket>>,
    items: VecDeque<Item>,
    /// Bytes of the first item already written.
    head_written: usize,
    /// The first item, when a ping, as encoded once it started to go out.
    head_ping: Option<Frame>,
    /// No more frames are taken (a close frame or the end was queued, or the socket
    /// failed); what is queued still goes out unless `failed`.
    closing: bool,
    /// The socket failed: nothing will ever be written.
    failed: bool,
    /// Frames are held back (not written) while the connection's own request is being
    /// answered, so a move's diff and its `ok` leave in one write.
    corked: bool,
}

/// What the connection's task waits for after a flush step.
enum FlushStep {
    /// Nothing more to do: everything before the close went out, or the socket failed.
    Done(io::Result<()>),
    /// The socket is full: wait until it takes bytes.
    Full(Arc<dyn RawSocket>),
    /// Nothing queued (or held back by a cork): wait to be woken.
    Idle,
}

/// Holds a connection's frames back while it lives ([`ConnHandle::cork`]).
pub struct Cork<'a>(&'a ConnHandle);

impl Drop for Cork<'_> {
    fn drop(&mut self) {
        self.0.uncork();
    }
}

/// At most this many queued frames go out in one write.
const MAX_SLICES: usize = 64;

/// Shared handle of one websocket connection.
pub struct ConnHandle {
    /// Process-unique connection id.
    pub id: u64,
    pending: Mutex<Pending>,
    /// Wakes the connection's task, the one task that waits on this handle: there is
    /// something to flush, the queue drained or closed, the connection was kicked or
    /// ended. Why one waker and not a `Notify` per reason: every wait re-checks its
    /// condition in the handle's state after registering, so one slot is enough, and
    /// registering the same waker again is an atomic swap where a `Notify` took a lock and
    /// a waiter list on every pass of the task's loop (4.5 % of a move's instructions).
    reader: AtomicWaker,
    capacity: usize,
    kicked: AtomicBool,
    player: OnceLock<PlayerId>,
    /// The device id of the token this connection said `hello` with.
    device: OnceLock<String>,
    /// Why the server ends this connection, once it decided to (see [`ConnHandle::end`]).
    ending: OnceLock<(u16, &'static str)>,
    subs: Mutex<HashSet<GameId>>,
    metrics: Arc<Metrics>,
    time: Arc<dyn TimeSource>,
}

impl std::fmt::Debug for ConnHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnHandle").field("id", &self.id).finish()
    }
}

impl ConnHandle {
    /// A handle writing to `socket`, queueing at most `capacity` frames behind a full one.
    pub fn new(
        id: u64,
        socket: Arc<dyn RawSocket>,
        capacity: usize,
        metrics: Arc<Metrics>,
        time: Arc<dyn TimeSource>,
    ) -> Self {
        ConnHandle {
            id,
            pending: Mutex::new(Pending {
                socket: Some(socket),
                items: VecDeque::new(),
                head_written: 0,
                head_ping: None,
                closing: false,
                failed: false,
                corked: false,
            }),
            reader: AtomicWaker::new(),
            capacity: capacity.max(2),
            kicked: AtomicBool::new(false),
            player: OnceLock::new(),
            device: OnceLock::new(),
            ending: OnceLock::new(),
            subs: Mutex::new(HashSet::new()),
            metrics,
            time,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock()
    }

    /// Waits until the queue has room for `n` more frames. The reader waits for this before
    /// reading the next request, so a client that sends faster than it reads its answers
    /// is slowed down (backpressure) instead of being dropped as a slow consumer; only
    /// pushed broadcasts, which cannot wait, kick a connection whose queue is full.
    pub async fn room(&self, n: usize) {
        // Never more than half the queue: a small queue still lets requests in.
        let n = n.min(self.capacity / 2).max(1);
        poll_fn(|cx| {
            self.reader.register(cx.waker());
            let p = self.lock();
            match p.failed || p.closing || p.items.len() + n <= self.capacity {
                true => Poll::Ready(()),
                false => Poll::Pending,
            }
        })
        .await
    }

    /// Writes a frame, or queues it behind earlier ones; kicks the connection when its
    /// queue is full.
    pub fn send(&self, frame: Frame) -> SendOutcome {
        if self.is_kicked() {
            return SendOutcome::Dropped;
        }
        match self.push(Item::Frame(frame), false) {
            Ok(()) => {
                self.metrics.messages_out.inc();
                SendOutcome::Sent
            }
            Err(SendOutcome::Dropped) => {
                self.metrics.slow_consumers_dropped.inc();
                tracing::info!(
                    conn = self.id,
                    "outbound queue full: dropping slow consumer"
                );
                self.kick();
                SendOutcome::Dropped
            }
            Err(other) => other,
        }
    }

    /// Encodes and sends a message.
    pub fn send_msg(&self, msg: &ServerMessage) -> SendOutcome {
        self.send(Frame::msg(msg))
    }

    /// Queues a close frame after what is queued, and takes nothing more; `false` when the
    /// queue is full or gone.
    pub fn close(&self, code: u16, reason: &'static str) -> bool {
        self.push(Item::Frame(Frame::close(code, reason)), true)
            .is_ok()
    }

    /// Takes nothing more after what is queued; `false` when the socket already failed.
    pub fn stop(&self) -> bool {
        let mut p = self.lock();
        p.closing = true;
        p.corked = false;
        let ok = !p.failed;
        drop(p);
        self.reader.wake();
        ok
    }

    /// Sends a websocket ping (skipped when the queue is full).
    pub fn send_ping(&self) -> bool {
        self.push(Item::Ping, false).is_ok()
    }

    /// Bytes from the websocket library (its pongs and close replies), in order with the
    /// rest. Dropped once we queued our own close: the library does not know of it, and
    /// a second close frame would break the handshake.
    pub(crate) fn send_raw(&self, bytes: &[u8]) {
        let _ = self.push(Item::Raw(bytes.to_vec()), false);
    }

    /// Holds frames back until the returned guard is dropped: used while a request of
    /// this connection is being answered, so what the request causes (a move's diff) and
    /// its answer leave in one write.
    pub fn cork(&self) -> Cork<'_> {
        self.lock().corked = true;
        Cork(self)
    }

    /// Writes what a [`Cork`] held back, in one write when it fits.
    fn uncork(&self) {
        let mut p = self.lock();
        p.corked = false;
        if !p.items.is_empty() && !p.failed && self.write_queued(&mut p).is_err() {
            p.failed = true;
        }
        let wake = !p.items.is_empty() || p.failed;
        drop(p);
        if wake {
            self.reader.wake();
        }
    }

    /// One item in: straight to the socket when nothing waits before it, else queued.
    fn push(&self, item: Item, then_close: bool) -> Result<(), SendOutcome> {
        let mut p = self.lock();
        if p.failed || p.closing {
            return Err(SendOutcome::Closed);
        }
        if p.items.len() >= self.capacity {
            return Err(SendOutcome::Dropped);
        }
        p.closing = then_close;
        if !p.items.is_empty() || p.corked {
            p.items.push_back(item);
            let corked = p.corked;
            drop(p);
            if !corked {
                self.reader.wake();
            }
            return Ok(());
        }
        let frame = match item {
            Item::Ping => self.ping_frame(),
            Item::Frame(f) => f,
            Item::Raw(bytes) => Frame::from_raw(bytes),
        };
        let written = match &p.socket {
            Some(socket) => socket.write_now(frame.as_bytes()),
            None => Err(io::ErrorKind::NotConnected.into()),
        };
        match written {
            Ok(n) if n == frame.as_bytes().len() => {
                drop(p);
                if then_close {
                    // The task's flush sees the queue closed and empty: done.
                    self.reader.wake();
                }
                Ok(())
            }
            Ok(n) => {
                p.head_written = n;
                p.items.push_back(Item::Frame(frame));
                drop(p);
                self.reader.wake();
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                p.items.push_back(Item::Frame(frame));
                drop(p);
                self.reader.wake();
                Ok(())
            }
            Err(_) => {
                p.failed = true;
                drop(p);
                self.reader.wake();
                Err(SendOutcome::Closed)
            }
        }
    }

    fn ping_frame(&self) -> Frame {
        Frame::stamped_ping(self.time.now_ms())
    }

    /// Writes queued items until the socket is full or the queue empty (`Err` when the
    /// socket failed).
    fn write_queued(&self, p: &mut Pending) -> io::Result<()> {
        while !p.items.is_empty() {
            if let Some(Item::Ping) = p.items.front() {
                if p.head_ping.is_none() {
                    p.head_ping = Some(self.ping_frame());
                }
            }
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let mut count = 0;
            for (i, item) in p.items.iter().take(MAX_SLICES).enumerate() {
                let bytes: &[u8] = match item {
                    Item::Frame(f) => f.as_bytes(),
                    Item::Raw(b) => b,
                    // Only the first ping is stamped; a later one waits to be first.
                    Item::Ping if i == 0 => p.head_ping.as_ref().map_or(&[], |f| f.as_bytes()),
                    Item::Ping => break,
                };
                let bytes = if i == 0 {
                    &bytes[p.head_written..]
                } else {
                    bytes
                };
                slices[count] = IoSlice::new(bytes);
                count += 1;
            }
            let slices = &slices[..count];
            let written = match &p.socket {
                Some(socket) => write_joined(socket.as_ref(), slices),
                None => Err(io::ErrorKind::NotConnected.into()),
            };
            let mut n = match written {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            // Pops what went out whole; remembers how far into the next one it got.
            while n > 0 {
                let Some(front) = p.items.front() else { break };
                let len = match front {
                    Item::Frame(f) => f.as_bytes().len(),
                    Item::Raw(b) => b.len(),
                    Item::Ping => p.head_ping.as_ref().map_or(0, |f| f.as_bytes().len()),
                } - p.head_written;
                if n >= len {
                    n -= len;
                    p.items.pop_front();
                    p.head_written = 0;
                    p.head_ping = None;
                } else {
                    p.head_written += n;
                    n = 0;
                }
            }
        }
        Ok(())
    }

    /// The connection task's side: writes what is queued whenever the socket takes it,
    /// until everything queued before a close or stop is out (`Ok`) or the socket fails
    /// (`Err`). Cancel-safe: all its state is in the queue.
    pub async fn flush(&self) -> io::Result<()> {
        poll_fn(|cx| loop {
            self.reader.register(cx.waker());
            match self.flush_step() {
                FlushStep::Done(result) => return Poll::Ready(result),
                FlushStep::Full(socket) => match socket.poll_write_ready(cx) {
                    Poll::Ready(Ok(())) => continue,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                },
                FlushStep::Idle => return Poll::Pending,
            }
        })
        .await
    }

    /// Writes what the socket takes now, and says what to wait for next.
    fn flush_step(&self) -> FlushStep {
        let mut p = self.lock();
        if p.failed {
            return FlushStep::Done(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if p.corked || p.items.is_empty() {
            return match p.closing && !p.corked {
                true => FlushStep::Done(Ok(())),
                false => FlushStep::Idle,
            };
        }
        let before = p.items.len();
        if let Err(e) = self.write_queued(&mut p) {
            p.failed = true;
            return FlushStep::Done(Err(e));
        }
        if p.items.len() < before {
            // The reader may be waiting for room (`ConnHandle::room`), checked before this
            // write made some: it looks again.
            self.reader.wake();
        }
        match (p.items.is_empty(), p.socket.clone()) {
            (true, _) if p.closing => FlushStep::Done(Ok(())),
            (true, _) => FlushStep::Idle,
            (false, Some(socket)) => FlushStep::Full(socket),
            (false, None) => FlushStep::Done(Err(io::ErrorKind::NotConnected.into())),
        }
    }

    /// Marks the connection for disconnection; its task closes the socket.
    pub fn kick(&self) {
        self.kicked.store(true, Ordering::SeqCst);
        self.reader.wake();
    }

    /// Whether the connection was kicked.
    pub fn is_kicked(&self) -> bool {
        self.kicked.load(Ordering::SeqCst)
    }

    /// Resolves when the connection is kicked.
    pub async fn kicked(&self) {
        poll_fn(|cx| {
            self.reader.register(cx.waker());
            match self.is_kicked() {
                true => Poll::Ready(()),
                false => Poll::Pending,
            }
        })
        .await
    }

    /// Whether the connection is gone or going (its socket failed or closed): nothing
    /// sent to it would be read.
    pub fn is_closed(&self) -> bool {
        let p = self.lock();
        p.failed || p.closing
    }

    /// Lets the socket go (the connection ended): later sends report
    /// [`SendOutcome::Closed`].
    pub fn set_closed(&self) {
        let mut p = self.lock();
        p.failed = true;
        p.closing = true;
        p.items.clear();
        let socket = p.socket.take();
        drop(p);
        drop(socket);
        self.reader.wake();
    }

    /// The player of this connection, once `hello` succeeded.
    pub fn player_id(&self) -> Option<&PlayerId> {
        self.player.get()
    }

    /// Records the player after `hello`.
    pub fn set_player(&self, id: PlayerId) -> bool {
        self.player.set(id).is_ok()
    }

    /// The device of this connection's token, once `hello` succeeded.
    pub fn device_id(&self) -> Option<&str> {
        self.device.get().map(String::as_str)
    }

    /// Records the device after `hello`.
    pub fn set_device(&self, id: String) -> bool {
        self.device.set(id).is_ok()
    }

    /// Ends the connection from anywhere in the server: its reader stops taking requests,
    /// and the connection closes with this code and reason after what is already queued.
    /// Why not [`ConnHandle::close`]: that only queues a close frame, and the reader would
    /// go on serving requests until the peer answers it; a revoked device must not.
    /// The first reason given wins.
    pub fn end(&self, code: u16, reason: &'static str) {
        if self.ending.set((code, reason)).is_ok() {
            self.reader.wake();
        }
    }

    /// Resolves with the code and reason once [`ConnHandle::end`] was called.
    pub async fn ended(&self) -> (u16, &'static str) {
        poll_fn(|cx| {
            // Registered before the check: an `end` between the two still wakes us.
            self.reader.register(cx.waker());
            match self.ending.get() {
                Some(ending) => Poll::Ready(*ending),
                None => Poll::Pending,
            }
        })
        .await
    }

    /// Records a game subscription (so disconnecting can end it).
    pub fn add_sub(&self, game_id: &GameId) {
        self.subs.lock().insert(game_id.clone());
    }

    /// Forgets a game subscription.
    pub fn remove_sub(&self, game_id: &GameId) {
        self.subs.lock().remove(game_id);
    }

    /// The games this connection watches.
    pub fn subs(&self) -> Vec<GameId> {
        self.subs.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
