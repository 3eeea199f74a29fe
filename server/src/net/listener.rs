//! The accept loop: every TCP connection is accounted for from its first byte, before any
//! HTTP request or websocket upgrade.
//!
//! Why not `axum::serve`: it reads request headers without a deadline and accepts without
//! bound, so clients that send partial headers (or nothing) hold sockets forever and a
//! thousand of them from one address exhaust the file limit (slowloris). Here each
//! connection gets a header-read deadline, open connections are capped globally and per
//! client IP (a refused one gets a plain `503`), and accept errors (such as running out
//! of file descriptors) back off instead of spinning.
//!
//! The caps must not let one party lock everyone else out: the per-IP cap is at most a
//! quarter of the global one ([`per_ip_cap`]), and a full server makes room for a newcomer
//! by closing its oldest connection that is still waiting for request headers (a partial
//! request, or an idle keep-alive) — never one serving a request or a websocket. Holding
//! sockets open without finishing a request therefore buys an attacker nothing once the
//! server is full: the next client pushes the oldest such socket out.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower_service::Service;

/// Limits of the accept loop.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A connection must send its request headers within this long.
    pub header_timeout: Duration,
    /// Open connections at most; past it a newcomer replaces the oldest connection still
    /// waiting for request headers, or is refused when there is none.
    pub max_connections: usize,
    /// Open connections at most per client IP (see [`per_ip_cap`]).
    pub max_per_ip: usize,
    /// `SO_SNDBUF` for accepted sockets (0: the system's).
    pub send_buffer: usize,
}

/// Waiting for (the rest of) request headers: the first request's or, on a keep-alive
/// connection, the next one's. The only phase in which a full server may close it.
const WAITING: u8 = 0;
/// A request's headers are in and its handler is running.
const SERVING: u8 = 1;
/// Answered `101 Switching Protocols`: a websocket, never closed to make room.
const UPGRADED: u8 = 2;
/// Chosen to be closed to make room; its task drops it.
const EVICTED: u8 = 3;

/// Where one connection is in its HTTP exchange, shared by its task, its service and the
/// accept loop's eviction queue. Small on purpose: every open socket has one.
#[derive(Default)]
struct Phase {
    /// [`WAITING`], [`SERVING`], [`UPGRADED`] or [`EVICTED`].
    state: AtomicU8,
    /// Wakes the connection's task when the connection is evicted (a stored permit if the
    /// task is not waiting yet, so the signal is never lost).
    evicted: Notify,
}

impl Phase {
    /// Moves from `from` to `to`; false when the connection was elsewhere (e.g. evicted).
    fn advance(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn is(&self, state: u8) -> bool {
        self.state.load(Ordering::Acquire) == state
    }
}

/// Open connections, in all and by client IP, and the ones a full server may evict.
#[derive(Default)]
struct Open {
    total: usize,
    by_ip: HashMap<IpAddr, usize>,
    /// Connections in accept order (oldest first), as weak references so that a connection
    /// that ends needs no lock to leave: dead and upgraded entries are dropped while
    /// evicting and, so the queue stays within twice the open connections, in a sweep
    /// whenever it grows past that (amortised constant time per accept).
    by_age: VecDeque<Weak<Phase>>,
}

impl Open {
    /// Records a new connection as the youngest.
    fn push(&mut self, phase: &Arc<Phase>) {
        if self.by_age.len() >= 2 * self.total + 64 {
            self.by_age
                .retain(|w| w.upgrade().is_some_and(|p| p.is(WAITING) || p.is(SERVING)));
        }
        self.by_age.push_back(Arc::downgrade(phase));
    }

    /// Marks the oldest connection that is waiting for request headers as evicted and wakes
    /// its task to close it; false when there is none (every open connection is serving a
    /// request or is a websocket). Its slot is freed when its task drops it, moments later.
    fn evict_oldest_waiting(&mut self) -> bool {
        let mut i = 0;
        while i < self.by_age.len() {
            let Some(phase) = self.by_age[i].upgrade() else {
                self.by_age.remove(i);
                continue;
            };
            if phase.advance(WAITING, EVICTED) {
                self.by_age.remove(i);
                phase.evicted.notify_one();
                return true;
            }
            if phase.is(SERVING) {
                // It may wait for its next request later: it stays in line.
                i += 1;
            } else {
                // Upgraded (or already evicted): never a candidate again.
                self.by_age.remove(i);
            }
        }
        false
    }
}

/// Counts one open connection; uncounts it when dropped (when the connection ends).
struct Slot {
    open: Arc<Mutex<Open>>,
    ip: IpAddr,
    phase: Arc<Phase>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.by_ip.remove(&self.ip);
            }
        }
    }
}

/// A socket that holds its [`Slot`]: the count lasts as long as the socket, through an
/// upgrade to a websocket (which takes the socket over from the HTTP connection).
pub struct Counted {
    /// Always `Some` until dropped (taken by the lingering close).
    tcp: Option<TcpStream>,
    slot: Option<Slot>,
}

impl Counted {
    /// The socket, shared (after an upgrade the websocket's reader and writers use it).
    fn tcp(&self) -> std::io::Result<&TcpStream> {
        self.tcp
            .as_ref()
            .ok_or_else(|| std::io::ErrorKind::NotConnected.into())
    }

    /// Runs one poll on the socket (every I/O method delegates to the `TcpStream`).
    fn with_tcp<T>(
        self: std::pin::Pin<&mut Self>,
        poll: impl FnOnce(std::pin::Pin<&mut TcpStream>) -> std::task::Poll<std::io::Result<T>>,
    ) -> std::task::Poll<std::io::Result<T>> {
        match self.get_mut().tcp.as_mut() {
            Some(tcp) => poll(std::pin::Pin::new(tcp)),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }
}

impl crate::net::socket::RawSocket for Counted {
    fn try_write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        crate::net::socket::RawSocket::try_write_vectored(self.tcp()?, bufs)
    }
    fn write_now(&self, buf: &[u8]) -> std::io::Result<usize> {
        crate::net::socket::RawSocket::write_now(self.tcp()?, buf)
    }
    fn poll_write_ready(
        &self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.tcp() {
            Ok(tcp) => tcp.poll_write_ready(cx),
            Err(e) => std::task::Poll::Ready(Err(e)),
        }
    }
    fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        crate::net::socket::RawSocket::try_read(self.tcp()?, buf)
    }
    fn poll_read_ready(
        &self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.tcp() {
            Ok(tcp) => tcp.poll_read_ready(cx),
            Err(e) => std::task::Poll::Ready(Err(e)),
        }
    }
}

impl Drop for Counted {
    /// A lingering close: the write side is shut (our last frames, such as a 1009 close,
    /// are followed by a FIN) and unread input is drained for a moment before the socket
    /// closes — closing with unread input would send a reset that can destroy those frames
    /// before the peer reads them.
    fn drop(&mut self) {
        let (Some(mut tcp), slot) = (self.tcp.take(), self.slot.take()) else {
            return;
        };
        if slot.as_ref().is_some_and(|s| s.phase.is(EVICTED)) {
            // Evicted to make room: nothing of ours to flush, and lingering would hold the
            // descriptor the newcomer needs.
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            use tokio::io::AsyncReadExt;
            let _ = tcp.shutdown().await;
            let mut sink = [0u8; 4096];
            let drain = async {
                while let Ok(n) = tcp.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
            drop(slot);
        });
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.with_tcp(|tcp| tcp.poll_read(cx, buf))
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.with_tcp(|tcp| tcp.poll_write(cx, buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.with_tcp(|tcp| tcp.poll_flush(cx))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.with_tcp(|tcp| tcp.poll_shutdown(cx))
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.with_tcp(|tcp| tcp.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.as_ref().is_some_and(TcpStream::is_write_vectored)
    }
}

/// The per-IP cap to use: the configured one, but at most a quarter of the global cap
/// `max_connections` (and at least 1), so that one address can never fill the server.
pub fn per_ip_cap(configured: usize, max_connections: usize) -> usize {
    configured.min(max_connections / 4).max(1)
}

/// The connection cap to use: the configured one, or the process's open-file limit less a
/// reserve for the store, logs and listeners.
pub fn connection_cap(configured: usize) -> usize {
    if configured > 0 {
        return configured;
    }
    let (soft, _) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap_or((1024, 1024));
    (soft as usize).saturating_sub(64).max(16)
}

/// Raises the open-file soft limit to the hard limit (sockets are files).
pub fn raise_file_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap_or(0)
}

/// Serves `app` on `listener` until `stop` flips to `true`, then lets open connections
/// finish within `grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) {
    let open = Arc::new(Mutex::new(Open::default()));
    let mut backoff = Duration::from_millis(5);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.changed() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(conn) => {
                backoff = Duration::from_millis(5);
                conn
            }
            Err(e) => {
                // Out of file descriptors, or a connection reset before accept: wait a
                // little instead of spinning on the error.
                tracing::warn!(error = %e, ?backoff, "accept failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        if limits.send_buffer > 0 {
            let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(limits.send_buffer);
        }
        match admit(&open, peer.ip(), &limits) {
            Some(slot) => spawn_connection(tcp, peer, slot, &app, &limits, &stop),
            None => {
                tokio::spawn(refuse(tcp));
            }
        }
    }
    drop(listener);
    // Wait for the open connections to finish, within the grace period.
    let deadline = tokio::time::Instant::now() + grace;
    while open.lock().total > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A place for a newcomer from `ip` among the open connections, or `None` when it must be
/// refused (its address is at its cap, or the server is full of connections that may not
/// be closed).
fn admit(open: &Arc<Mutex<Open>>, ip: IpAddr, limits: &Limits) -> Option<Slot> {
    let mut o = open.lock();
    let from_ip = o.by_ip.get(&ip).copied().unwrap_or(0);
    // Full: the newcomer takes the place of the oldest connection that has not sent
    // its request headers yet. The evicted one is still counted until its task drops
    // it, so `total` may pass the cap by the evictions in flight; each newcomer
    // evicts at most one, so the count settles back at the cap.
    let room = from_ip < limits.max_per_ip
        && (o.total < limits.max_connections || o.evict_oldest_waiting());
    if !room {
        return None;
    }
    o.total += 1;
    *o.by_ip.entry(ip).or_default() += 1;
    let phase = Arc::new(Phase::default());
    o.push(&phase);
    Some(Slot {
        open: open.clone(),
        ip,
        phase,
    })
}

/// Serves one admitted connection on its own task: HTTP/1 with a header-read deadline
/// and upgrades, closed early when it is evicted, and gracefully when the server stops.
fn spawn_connection(
    tcp: TcpStream,
    peer: SocketAddr,
    slot: Slot,
    app: &Router,
    limits: &Limits,
    stop: &watch::Receiver<bool>,
) {
    let phase = slot.phase.clone();
    let io = Counted {
        tcp: Some(tcp),
        slot: Some(slot),
    };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(TokioIo::new(io), service(app.clone(), peer, phase.clone()))
        .with_upgrades();
    let mut stopping = stop.clone();
    tokio::spawn(async move {
        let mut conn = std::pin::pin!(conn);
        let ended = tokio::select! {
            // An evicted connection closes even if its request has just come in: its
            // place is taken.
            biased;
            _ = phase.evicted.notified() => {
                tracing::debug!(%peer, "closed a connection waiting for headers to make room");
                return;
            }
            ended = conn.as_mut() => ended,
            _ = stopping.changed() => {
                // Finish the request in flight, then close (upgraded websockets have
                // left this connection and close on their own).
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = ended {
            tracing::debug!(error = %e, %peer, "connection ended with an error");
        }
    });
}

/// The router as a hyper service for one connection, with its peer address available to
/// handlers (`ConnectInfo`), as `axum::serve` provides it. It keeps the connection's
/// [`Phase`]: hyper calls it once a request's headers are in, so from then until the
/// answer the connection is serving, and after a `101` it is a websocket.
fn service(
    app: Router,
    peer: SocketAddr,
    phase: Arc<Phase>,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone {
    hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        // Fails only when the connection was just evicted: it closes in a moment anyway.
        phase.advance(WAITING, SERVING);
        let mut app = app.clone();
        let phase = phase.clone();
        async move {
            let res = app.call(req.map(axum::body::Body::new)).await;
            // A keep-alive connection goes back to waiting for its next request's headers
            // (hyper writes the answer next; only a reader too slow to take it could lose
            // its end to a newcomer on a full server); an upgraded one is a websocket.
            let next = if res
                .as_ref()
                .is_ok_and(|r| r.status() == hyper::StatusCode::SWITCHING_PROTOCOLS)
            {
                UPGRADED
            } else {
                WAITING
            };
            phase.advance(SERVING, next);
            res
        }
    })
}

/// Answers a connection over the cap with `503` and closes it.
async fn refuse(mut tcp: TcpStream) {
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        tcp.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 29\r\nconnection: close\r\n\r\ntoo many connections, retry\n",
        ),
    )
    .await;
    let _ = tcp.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(state: u8) -> Arc<Phase> {
        let p = Arc::new(Phase::default());
        p.state.store(state, Ordering::Release);
        p
    }

    #[test]
    fn the_per_ip_cap_is_at_most_a_quarter_of_the_global_cap() {
        // 1,024 descriptors: a global cap of 960, so one address holds at most 240.
        assert_eq!(per_ip_cap(1_000, 960), 240);
        assert_eq!(per_ip_cap(20, 960), 20);
        assert_eq!(per_ip_cap(1_000, 100_000), 1_000);
        // Never zero: a tiny server still takes a client.
        assert_eq!(per_ip_cap(1_000, 3), 1);
        assert_eq!(per_ip_cap(0, 960), 1);
    }

    #[tokio::test]
    async fn eviction_takes_the_oldest_connection_waiting_for_headers() {
        let mut open = Open::default();
        let serving = phase(SERVING);
        let websocket = phase(UPGRADED);
        let gone = phase(WAITING);
        let old = phase(WAITING);
        let young = phase(WAITING);
        for p in [&serving, &websocket, &gone, &old, &young] {
            open.total += 1;
            open.push(p);
        }
        drop(gone);
        assert!(open.evict_oldest_waiting());
        assert!(old.is(EVICTED));
        // Its task is woken (the permit waits for it if it is not listening yet).
        tokio::time::timeout(Duration::from_secs(1), old.evicted.notified())
            .await
            .expect("the evicted connection's task is told");
        assert!(open.evict_oldest_waiting());
        assert!(young.is(EVICTED));
        // Left: one serving a request and a websocket, neither of which is closed for room.
        assert!(!open.evict_oldest_waiting());
        assert!(serving.is(SERVING) && websocket.is(UPGRADED));
        // The dead, evicted and upgraded entries left the queue; the serving one stays in
        // line, and once it waits for its next request it can go.
        assert_eq!(open.by_age.len(), 1);
        assert!(serving.advance(SERVING, WAITING));
        assert!(open.evict_oldest_waiting());
        assert!(serving.is(EVICTED));
    }

    #[test]
    fn the_eviction_queue_stays_within_twice_the_open_connections() {
        let mut open = Open::default();
        let websocket = phase(UPGRADED);
        open.total = 1;
        open.push(&websocket);
        // Many short connections come and go past one long-lived websocket at the front.
        for _ in 0..10_000 {
            let p = phase(WAITING);
            open.total += 1;
            open.push(&p);
            assert!(
                open.by_age.len() <= 2 * open.total + 64,
                "{}",
                open.by_age.len()
            );
            drop(p);
            open.total -= 1;
        }
    }
}
