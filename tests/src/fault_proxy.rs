//! A TCP proxy that injects network faults between one server node and Redis: added
//! latency, a partition that drops no connection (a blackhole) and a cut link.
//!
//! Why a proxy and not `iptables`/`tc`: the fault bench runs on loopback without root or
//! containers, and one proxy per node lets each node lose *its own* link to a shared
//! Redis while the others keep theirs. The mode can change at any moment and applies to
//! connections already open as well as new ones.
//!
//! A blackhole holds the bytes rather than discarding them: a real partition loses no
//! byte of an established TCP stream, the kernel retransmits until the link heals (or the
//! connection times out). Discarding bytes would corrupt the RESP stream and make the
//! client pair late replies with the wrong commands — a failure TCP never produces, so it
//! would only find bugs in the bench. Held bytes are delivered in order after the heal,
//! which is exactly the dangerous case: a write sent before the partition reaching Redis
//! after the lease it relied on expired.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the proxy does with the traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forwards at once.
    Pass,
    /// Forwards each chunk this long after it arrived, in each direction.
    Delay(Duration),
    /// Keeps every connection open (new ones are accepted too) but forwards nothing until
    /// the mode changes; held bytes then go on in order.
    Blackhole,
    /// Closes every open connection, and every new one at once, until the mode changes.
    Cut,
}

/// A running proxy; it stops (closing its connections) on drop.
pub struct FaultProxy {
    port: u16,
    mode: watch::Sender<Mode>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `127.0.0.1:upstream`. Must be called
    /// inside a tokio runtime.
    pub async fn start(upstream: u16) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let (mode, _) = watch::channel(Mode::Pass);
        let modes = mode.clone();
        let upstream = SocketAddr::from(([127, 0, 0, 1], upstream));
        let accept = tokio::spawn(async move {
            // Connection tasks are not tracked: each ends on EOF, on `Cut`, or when the
            // mode sender (this proxy) is dropped.
            while let Ok((client, _)) = listener.accept().await {
                let rx = modes.subscribe();
                if *rx.borrow() == Mode::Cut {
                    drop(client);
                    continue;
                }
                tokio::spawn(connection(client, upstream, rx));
            }
        });
        Ok(FaultProxy { port, mode, accept })
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`, for a node's `--redis`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Switches the mode; it applies at once to open connections.
    pub fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        *self.mode.borrow()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        // Open connections see the channel close and end.
        self.mode.send_replace(Mode::Cut);
    }
}

/// One proxied connection: both directions until both ends are done, or `Cut`.
async fn connection(client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return; // Redis is down: the client sees its connection close, as it would.
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let both = {
        let (up, down) = (mode.clone(), mode.clone());
        async move {
            tokio::join!(
                direction(client_read, server_write, up),
                direction(server_read, client_write, down)
            )
        }
    };
    let cut = async {
        // A dropped sender (the proxy stopped) counts as a cut.
        let _ = mode.wait_for(|m| *m == Mode::Cut).await;
    };
    // Dropping the halves closes both sockets.
    tokio::select! {
        _ = both => {}
        _ = cut => {}
    }
}

/// Copies one direction: a reader stamps each chunk with its arrival time, a writer
/// forwards it when the mode allows. Two tasks so a delay adds latency without limiting
/// throughput to one chunk per delay.
async fn direction(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mode: watch::Receiver<Mode>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping `tx` lets the writer finish what it holds, then close.
    };
    let write = async move {
        let mut mode = mode;
        while let Some((at, chunk)) = rx.recv().await {
            loop {
                let current = *mode.borrow_and_update();
                match current {
                    Mode::Pass => break,
                    Mode::Delay(d) => {
                        // Re-read the mode after the wait: it may have changed meanwhile.
                        tokio::select! {
                            _ = tokio::time::sleep_until(at + d) => {
                                if *mode.borrow() == current { break; }
                            }
                            r = mode.changed() => if r.is_err() { return; },
                        }
                    }
                    Mode::Blackhole => {
                        if mode.changed().await.is_err() {
                            return;
                        }
                    }
                    Mode::Cut => return,
                }
            }
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free port; returns its port.
    async fn echo() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        port
    }

    /// Sends `msg` and reads as many bytes back, within `within`.
    async fn round_trip(s: &mut TcpStream, msg: &[u8], within: Duration) -> Option<Vec<u8>> {
        s.write_all(msg).await.ok()?;
        let mut buf = vec![0u8; msg.len()];
        match tokio::time::timeout(within, s.read_exact(&mut buf)).await {
            Ok(Ok(_)) => Some(buf),
            _ => None,
        }
    }

    /// Whether the peer closed the socket (EOF or reset) within `within`.
    async fn closed(s: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 16];
        matches!(
            tokio::time::timeout(within, s.read(&mut buf)).await,
            Ok(Ok(0)) | Ok(Err(_))
        )
    }

    async fn connect(p: &FaultProxy) -> TcpStream {
        TcpStream::connect(("127.0.0.1", p.port()))
            .await
            .expect("connect")
    }

    const SHORT: Duration = Duration::from_millis(300);
    const LONG: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn pass_forwards_both_ways() {
        let p = FaultProxy::start(echo().await).await.expect("proxy");
        let mut s = connect(&p).await;
        for i in 0..20u8 {
            let msg = [i; 100];
            assert_eq!(
                round_trip(&mut s, &msg, LONG).await.as_deref(),
                Some(&msg[..])
            );
        }
    }

    #[tokio::test]
    async fn delay_adds_latency_each_way_without_capping_throughput() {
        let p = FaultProxy::start(echo().await).await.expect("proxy");
        let mut s = connect(&p).await;
        p.set(Mode::Delay(Duration::from_millis(150)));
        let t = Instant::now();
        assert!(round_trip(&mut s, b"ping", LONG).await.is_some());
        let rtt = t.elapsed();
        assert!(rtt >= Duration::from_millis(300), "{rtt:?}");
        // Ten messages sent back to back all arrive one round trip later, not ten.
        let t = Instant::now();
        for _ in 0..10 {
            s.write_all(b"x").await.expect("write");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut buf = [0u8; 10];
        tokio::time::timeout(LONG, s.read_exact(&mut buf))
            .await
            .expect("in time")
            .expect("read");
        assert!(
            t.elapsed() < Duration::from_millis(900),
            "{:?}",
            t.elapsed()
        );
        p.set(Mode::Pass);
        let t = Instant::now();
        assert!(round_trip(&mut s, b"fast", LONG).await.is_some());
        assert!(t.elapsed() < Duration::from_millis(150));
    }

    #[tokio::test]
    async fn blackhole_holds_bytes_on_open_connections_until_healed() {
        let p = FaultProxy::start(echo().await).await.expect("proxy");
        let mut old = connect(&p).await;
        assert!(round_trip(&mut old, b"before", LONG).await.is_some());
        p.set(Mode::Blackhole);
        assert_eq!(round_trip(&mut old, b"during", SHORT).await, None);
        assert!(!closed(&mut old, SHORT).await, "no reset, no EOF");
        // A new connection is accepted and goes silent too.
        let mut new = connect(&p).await;
        assert_eq!(round_trip(&mut new, b"new", SHORT).await, None);
        p.set(Mode::Pass);
        // What was held arrives, in order, once healed.
        let mut buf = [0u8; 6];
        tokio::time::timeout(LONG, old.read_exact(&mut buf))
            .await
            .expect("held bytes delivered")
            .expect("read");
        assert_eq!(&buf, b"during");
        let mut buf = [0u8; 3];
        tokio::time::timeout(LONG, new.read_exact(&mut buf))
            .await
            .expect("held bytes delivered")
            .expect("read");
        assert_eq!(&buf, b"new");
        assert!(round_trip(&mut old, b"after", LONG).await.is_some());
    }

    #[tokio::test]
    async fn cut_closes_open_and_new_connections_until_healed() {
        let p = FaultProxy::start(echo().await).await.expect("proxy");
        let mut old = connect(&p).await;
        assert!(round_trip(&mut old, b"hi", LONG).await.is_some());
        p.set(Mode::Cut);
        assert!(closed(&mut old, LONG).await, "open connection closed");
        let mut new = connect(&p).await;
        assert!(closed(&mut new, LONG).await, "new connection closed");
        p.set(Mode::Pass);
        let mut again = connect(&p).await;
        assert!(round_trip(&mut again, b"back", LONG).await.is_some());
    }

    #[tokio::test]
    async fn a_real_redis_answers_through_the_proxy() {
        let redis = crate::redis::RedisServer::start();
        let p = FaultProxy::start(redis.port).await.expect("proxy");
        let mut s = connect(&p).await;
        s.write_all(b"PING\r\n").await.expect("write");
        let mut pong = [0u8; 7];
        tokio::time::timeout(LONG, s.read_exact(&mut pong))
            .await
            .expect("in time")
            .expect("read");
        assert_eq!(&pong, b"+PONG\r\n");
    }
}
