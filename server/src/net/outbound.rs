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
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;
use stoa_protocol::clock::TimeSource;
use stoa_protocol::wire::ServerMessage;
use tokio::net::TcpStream;

use crate::metrics::Metrics;
use crate::net::frame::Frame;

/// The socket calls the sending path needs: non-blocking writes from any task, and a way
/// for the connection's task to wait until a full socket takes bytes again.
pub trait RawSocket: Send + Sync + 'static {
    /// Writes what the socket takes now (`WouldBlock` when it takes nothing).
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Writes what the socket takes now, without consulting or updating the runtime's
    /// record of the socket's readiness: for a write made when nothing is queued, whose
    /// `WouldBlock` only queues the frame for the connection's task, which then writes with
    /// [`RawSocket::try_write_vectored`] (and so learns the socket is full) before it
    /// waits.
    fn write_now(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write_vectored(&[IoSlice::new(buf)])
    }
    /// Ready when the socket may take bytes again.
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Reads what has arrived (`WouldBlock` when nothing has).
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Ready when there may be bytes to read.
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

impl RawSocket for TcpStream {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        // One slice (a broadcast's frame, nearly every write) goes by `write`: the kernel's
        // `writev` path costs a little more per call (`stoa-load send-floor`, with
        // `write_vectored` in place of `write`: 8.5–10.1 against 8.1–8.9 µs a send), and
        // fan-out is one call per recipient.
        match bufs {
            [one] => TcpStream::try_write(self, one),
            _ => TcpStream::try_write_vectored(self, bufs),
        }
    }
    fn write_now(&self, buf: &[u8]) -> io::Result<usize> {
        // Why around tokio: its `try_write` first reads the readiness it keeps for the
        // socket, a separate allocation, so a broadcast to thousands of sockets would touch
        // one more cache line per recipient for a check the kernel makes anyway (`stoa-load
        // fanout` sees it in the CPU per recipient). A stale "writable" left behind
        // by a `WouldBlock` here is cleared by the connection task's own write.
        io::Write::write(&mut &*socket2::SockRef::from(self), buf)
    }
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        TcpStream::poll_write_ready(self, cx)
    }
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // A read that does not fill the buffer has emptied the socket (epoll reports edges,
        // so the next data raises a new one): mark it not readable then, as tokio's own
        // `poll_read` does. `TcpStream::try_read` only learns that from a second call's
        // `EAGAIN` — a system call per request for nothing, since the websocket reader
        // reads until the socket says it is empty. The bytes read are kept aside while the
        // closure answers `WouldBlock` so that `try_io` clears the readiness it saw (a
        // newer event is not cleared; a closed input stays readable).
        let len = buf.len();
        let mut short = None;
        let res = self.try_io(tokio::io::Interest::READABLE, || {
            let n = io::Read::read(&mut &*socket2::SockRef::from(self), buf)?;
            if 0 < n && n < len {
                short = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        match short {
            Some(n) => Ok(n),
            None => res,
        }
    }
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        TcpStream::poll_read_ready(self, cx)
    }
}

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

/// Frames up to this many bytes in all are copied into one buffer and written by one
/// `write`; longer runs go by `writev`.
const JOIN_LIMIT: usize = 16 * 1024;

thread_local! {
    /// The buffer [`write_joined`] copies small runs of frames into, one per thread so no
    /// connection keeps one.
    static JOINED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Writes `slices` (whole frames, the first maybe partly sent) in one system call.
///
/// Why copy them: a move's diff and its `ok` leave together, and the kernel's `writev`
/// path costs more per call than `write` (`stoa-load send-floor`, see
/// [`RawSocket::try_write_vectored`] for `TcpStream`), while copying a few hundred bytes
/// costs next to nothing.
fn write_joined(socket: &dyn RawSocket, slices: &[IoSlice<'_>]) -> io::Result<usize> {
    let total: usize = slices.iter().map(|s| s.len()).sum();
    if slices.len() < 2 || total > JOIN_LIMIT {
        return socket.try_write_vectored(slices);
    }
    JOINED.with(|joined| {
        let Ok(mut buf) = joined.try_borrow_mut() else {
            return socket.try_write_vectored(slices);
        };
        buf.clear();
        for slice in slices {
            buf.extend_from_slice(slice);
        }
        socket.try_write_vectored(&[IoSlice::new(&buf)])
    })
}

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
    player: OnceLock<String>,
    /// The device id of the token this connection said `hello` with.
    device: OnceLock<String>,
    /// Why the server ends this connection, once it decided to (see [`ConnHandle::end`]).
    ending: OnceLock<(u16, &'static str)>,
    subs: Mutex<HashSet<String>>,
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
    pub fn player_id(&self) -> Option<&str> {
        self.player.get().map(String::as_str)
    }

    /// Records the player after `hello`.
    pub fn set_player(&self, id: String) -> bool {
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
    pub fn add_sub(&self, game_id: &str) {
        self.subs.lock().insert(game_id.to_string());
    }

    /// Forgets a game subscription.
    pub fn remove_sub(&self, game_id: &str) {
        self.subs.lock().remove(game_id);
    }

    /// The games this connection watches.
    pub fn subs(&self) -> Vec<String> {
        self.subs.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Waker;

    use stoa_protocol::clock::VirtualTime;

    /// A socket that takes `room` more bytes, then blocks until given more.
    #[derive(Default)]
    struct FakeSocket {
        state: Mutex<FakeState>,
        writes: AtomicUsize,
    }

    #[derive(Default)]
    struct FakeState {
        written: Vec<u8>,
        room: usize,
        broken: bool,
        waker: Option<Waker>,
    }

    impl FakeSocket {
        fn with_room(room: usize) -> Arc<FakeSocket> {
            let s = FakeSocket::default();
            s.state.lock().room = room;
            Arc::new(s)
        }
        fn give(&self, room: usize) {
            let mut s = self.state.lock();
            s.room += room;
            if let Some(w) = s.waker.take() {
                w.wake();
            }
        }
        fn written(&self) -> Vec<u8> {
            self.state.lock().written.clone()
        }
    }

    impl RawSocket for FakeSocket {
        fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut s = self.state.lock();
            if s.broken {
                return Err(io::ErrorKind::ConnectionReset.into());
            }
            if s.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.writes.fetch_add(1, Ordering::SeqCst);
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(s.room);
                s.written.extend_from_slice(&b[..take]);
                s.room -= take;
                n += take;
                if take < b.len() {
                    break;
                }
            }
            Ok(n)
        }
        fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            let mut s = self.state.lock();
            if s.room > 0 || s.broken {
                Poll::Ready(Ok(()))
            } else {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
        fn try_read(&self, _buf: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::WouldBlock.into())
        }
        fn poll_read_ready(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Pending
        }
    }

    fn handle(socket: &Arc<FakeSocket>, capacity: usize) -> ConnHandle {
        ConnHandle::new(
            1,
            socket.clone(),
            capacity,
            Arc::new(Metrics::default()),
            Arc::new(VirtualTime::new(0x0102)),
        )
    }

    fn frames(texts: &[&str]) -> Vec<u8> {
        texts
            .iter()
            .flat_map(|t| Frame::text(*t).as_bytes().to_vec())
            .collect()
    }

    #[test]
    fn frames_go_straight_to_a_socket_with_room() {
        let socket = FakeSocket::with_room(1 << 20);
        let conn = handle(&socket, 4);
        for t in ["a", "bb", "ccc"] {
            assert_eq!(conn.send(Frame::text(t)), SendOutcome::Sent);
        }
        assert_eq!(socket.written(), frames(&["a", "bb", "ccc"]));
        assert_eq!(socket.writes.load(Ordering::SeqCst), 3);
        assert!(conn.lock().items.is_empty());
    }

    #[tokio::test]
    async fn a_full_socket_queues_in_order_and_the_flush_finishes_partial_frames() {
        // Room for one frame and a half: the rest waits, in order.
        let socket = FakeSocket::with_room(4);
        let conn = handle(&socket, 8);
        for t in ["ab", "cdef", "gh"] {
            assert_eq!(conn.send(Frame::text(t)), SendOutcome::Sent);
        }
        assert_eq!(socket.written(), frames(&["ab"]));
        assert_eq!(conn.lock().items.len(), 2);
        socket.give(3);
        conn.stop();
        let flushed = tokio::spawn({
            let socket = socket.clone();
            async move {
                // Give room bit by bit: every partial write resumes where it stopped.
                for _ in 0..20 {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    socket.give(1);
                }
            }
        });
        tokio::time::timeout(std::time::Duration::from_secs(5), conn.flush())
            .await
            .unwrap()
            .unwrap();
        flushed.await.unwrap();
        assert_eq!(socket.written(), frames(&["ab", "cdef", "gh"]));
        assert_eq!(conn.send(Frame::text("late")), SendOutcome::Closed);
    }

    #[test]
    fn a_full_queue_kicks_the_connection() {
        let socket = FakeSocket::with_room(0);
        let conn = handle(&socket, 3);
        for _ in 0..3 {
            assert_eq!(conn.send(Frame::text("x")), SendOutcome::Sent);
        }
        assert!(!conn.is_kicked());
        assert_eq!(conn.send(Frame::text("x")), SendOutcome::Dropped);
        assert!(conn.is_kicked());
        assert_eq!(conn.send(Frame::text("x")), SendOutcome::Dropped);
    }

    #[test]
    fn a_cork_sends_what_it_held_in_one_write() {
        let socket = FakeSocket::with_room(1 << 20);
        let conn = handle(&socket, 8);
        {
            let _cork = conn.cork();
            conn.send(Frame::text("diff"));
            conn.send(Frame::text("ok"));
            assert!(socket.written().is_empty());
        }
        assert_eq!(socket.written(), frames(&["diff", "ok"]));
        assert_eq!(socket.writes.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn pings_are_stamped_and_raw_bytes_stop_after_our_close() {
        let socket = FakeSocket::with_room(1 << 20);
        let conn = handle(&socket, 8);
        assert!(conn.send_ping());
        conn.send_raw(&[0x8a, 0]);
        assert!(conn.close(1000, "bye"));
        conn.send_raw(&[0x88, 0]);
        let mut expected = Frame::ping(&0x0102u64.to_be_bytes()).as_bytes().to_vec();
        expected.extend_from_slice(&[0x8a, 0]);
        expected.extend_from_slice(Frame::close(1000, "bye").as_bytes());
        assert_eq!(socket.written(), expected);
        assert!(conn.is_closed());
    }

    #[test]
    fn a_broken_socket_closes_the_handle_and_lets_the_socket_go() {
        let socket = FakeSocket::with_room(10);
        let conn = handle(&socket, 8);
        socket.state.lock().broken = true;
        assert_eq!(conn.send(Frame::text("x")), SendOutcome::Closed);
        assert!(conn.is_closed());
        conn.set_closed();
        assert_eq!(Arc::strong_count(&socket), 1);
    }
}
