//! The accept loop: every TCP connection is accounted for from its first byte, before any
//! HTTP request or websocket upgrade.
//!
//! Why not `axum::serve`: it reads request headers without a deadline and accepts without
//! bound, so clients that send partial headers (or nothing) hold sockets forever and a
//! thousand of them from one address exhaust the file limit (slowloris). Here each
//! connection gets a header-read deadline, open connections are capped globally and per
//! client IP (a refused one gets a plain `503`), and accept errors (such as running out
//! of file descriptors) back off instead of spinning.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower_service::Service;

/// Limits of the accept loop.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A connection must send its request headers within this long.
    pub header_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections at most per client IP.
    pub max_per_ip: usize,
    /// `SO_SNDBUF` for accepted sockets (0: the system's).
    pub send_buffer: usize,
}

/// Open connections, in all and by client IP.
#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_ip: HashMap<IpAddr, usize>,
}

/// Counts one open connection; uncounts it when dropped (when the connection ends).
struct Slot {
    open: Arc<Mutex<Open>>,
    ip: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
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
struct Counted {
    /// Always `Some` until dropped (taken by the lingering close).
    tcp: Option<TcpStream>,
    slot: Option<Slot>,
}

impl Counted {
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

impl Drop for Counted {
    /// A lingering close: the write side is shut (our last frames, such as a 1009 close,
    /// are followed by a FIN) and unread input is drained for a moment before the socket
    /// closes — closing with unread input would send a reset that can destroy those frames
    /// before the peer reads them.
    fn drop(&mut self) {
        let (Some(mut tcp), slot) = (self.tcp.take(), self.slot.take()) else {
            return;
        };
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
        let slot = {
            let mut o = open.lock().unwrap_or_else(|e| e.into_inner());
            let from_ip = o.by_ip.get(&peer.ip()).copied().unwrap_or(0);
            if o.total >= limits.max_connections || from_ip >= limits.max_per_ip {
                None
            } else {
                o.total += 1;
                *o.by_ip.entry(peer.ip()).or_default() += 1;
                Some(Slot {
                    open: open.clone(),
                    ip: peer.ip(),
                })
            }
        };
        let Some(slot) = slot else {
            tokio::spawn(refuse(tcp));
            continue;
        };
        let io = Counted {
            tcp: Some(tcp),
            slot: Some(slot),
        };
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(io), service(app.clone(), peer))
            .with_upgrades();
        let mut stopping = stop.clone();
        tokio::spawn(async move {
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
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
    drop(listener);
    // Wait for the open connections to finish, within the grace period.
    let deadline = tokio::time::Instant::now() + grace;
    while open.lock().unwrap_or_else(|e| e.into_inner()).total > 0
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The router as a hyper service for one connection, with its peer address available to
/// handlers (`ConnectInfo`), as `axum::serve` provides it.
fn service(
    app: Router,
    peer: SocketAddr,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone {
    hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let mut app = app.clone();
        async move { app.call(req.map(axum::body::Body::new)).await }
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
