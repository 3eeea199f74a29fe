//! Tests of a connection's send handle ([`super`]) over a socket that fills up, breaks and
//! records what it was given.

use super::*;
use std::sync::atomic::AtomicUsize;
use std::task::{Context, Waker};

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
