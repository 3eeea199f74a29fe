//! The socket a connection's frames are written to: the non-blocking calls the sending
//! path makes from any task, and one write for several small frames.

use std::io::{self, IoSlice};
use std::task::{Context, Poll};

use tokio::net::TcpStream;

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
pub(crate) fn write_joined(socket: &dyn RawSocket, slices: &[IoSlice<'_>]) -> io::Result<usize> {
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
