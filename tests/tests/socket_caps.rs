//! The socket caps cannot be used to lock everyone out. With 1,024 file descriptors (a global
//! cap of 960), one address holding partial requests gets at most a quarter of the sockets
//! and everyone else is served; several addresses filling every socket with partial requests
//! lose their oldest sockets to newcomers, and websockets already in are never closed for
//! room.
//!
//! Loopback clients all come from 127.0.0.1 unless bound elsewhere: the attackers' sockets
//! are bound to 127.0.0.2 and up, the real clients come from 127.0.0.1.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;
use stoa_tests::{Client, Server, LOOSE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The server's global cap at 1,024 descriptors (the limit less a reserve of 64).
const CAP: usize = 1_024 - 64;

/// A server limited to 1,024 open files (soft and hard, so it cannot raise them), whose
/// partial requests are not cut off by the header deadline during the test.
fn small_server() -> Server {
    let mut args = LOOSE.to_vec();
    args.extend(["--header-timeout-ms", "120000"]);
    Server::start_under(&["prlimit", "--nofile=1024:1024"], &args)
}

/// The loopback address 127.0.0.`n`.
fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A socket from `source` that has sent half of a request's headers.
async fn partial_request(server: SocketAddr, source: IpAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(source, 0)).expect("bind");
    let mut tcp = socket.connect(server).await.expect("connect");
    tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("write");
    tcp
}

/// What became of a held socket.
#[derive(Debug, PartialEq)]
enum Fate {
    /// Still open, nothing received.
    Held,
    /// Answered `503` and closed.
    Refused,
    /// Closed without an answer.
    Closed,
}

/// Each socket's fate, read for `within` (all at once).
async fn fates(sockets: &mut [TcpStream], within: Duration) -> Vec<Fate> {
    join_all(sockets.iter_mut().map(|tcp| async move {
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            match tokio::time::timeout(within, tcp.read(&mut buf)).await {
                Err(_) if got.is_empty() => return Fate::Held,
                Err(_) => panic!("an answer without a close: {got:?}"),
                Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
                Ok(_) if got.starts_with(b"HTTP/1.1 503") => return Fate::Refused,
                Ok(_) if got.is_empty() => return Fate::Closed,
                Ok(_) => panic!("unexpected answer: {}", String::from_utf8_lossy(&got)),
            }
        }
    }))
    .await
}

/// The fates in order, run-length encoded (`240 Held, 790 Refused`), for failure messages.
fn runs(fates: &[Fate]) -> String {
    let mut out: Vec<(usize, &Fate)> = Vec::new();
    for f in fates {
        match out.last_mut() {
            Some((n, last)) if *last == f => *n += 1,
            _ => out.push((1, f)),
        }
    }
    out.iter()
        .map(|(n, f)| format!("{n} {f:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `/health` answers 200 and a new websocket client gets its welcome, from 127.0.0.1.
async fn everyone_else_is_served(server: &Server) {
    let (status, body) = server.http_get("/health");
    assert_eq!(status, 200, "/health: {body}");
    let c = tokio::time::timeout(Duration::from_secs(10), Client::guest(server, "newcomer"))
        .await
        .expect("a new client gets in");
    assert!(!c.player_id.is_empty());
}

#[tokio::test]
async fn one_address_holding_partial_requests_cannot_lock_others_out() {
    let server = small_server();
    let attacker = loopback(2);
    let mut sockets = Vec::new();
    for _ in 0..1_030 {
        sockets.push(partial_request(server.addr, attacker).await);
    }
    let seen = fates(&mut sockets, Duration::from_secs(2)).await;
    everyone_else_is_served(&server).await;
    let held = seen.iter().filter(|f| **f == Fate::Held).count();
    let refused = seen.iter().filter(|f| **f == Fate::Refused).count();
    // The default per-IP cap (1,000) is clamped to a quarter of the global cap; past it the
    // same address is refused.
    assert_eq!(held, CAP / 4, "{}", runs(&seen));
    assert_eq!(refused, 1_030 - CAP / 4);
    assert!(seen[..CAP / 4].iter().all(|f| *f == Fate::Held));
    // The attacker still holds its quarter, and still cannot have more.
    let mut more = vec![partial_request(server.addr, attacker).await];
    assert_eq!(
        fates(&mut more, Duration::from_secs(2)).await,
        [Fate::Refused]
    );
}

#[tokio::test]
async fn partial_requests_filling_the_server_make_room_for_newcomers() {
    let server = small_server();
    // Players already in: their websockets are never closed to make room.
    let mut players = Vec::new();
    for i in 0..5 {
        players.push(Client::guest(&server, &format!("player{i}")).await);
    }
    // Five addresses, each up to its per-IP cap: 1,200 partial requests for the 955
    // sockets left.
    let mut sockets = Vec::new();
    for n in 2..7 {
        for _ in 0..CAP / 4 {
            sockets.push(partial_request(server.addr, loopback(n)).await);
        }
    }
    let seen = fates(&mut sockets, Duration::from_secs(2)).await;
    everyone_else_is_served(&server).await;
    let held = seen.iter().filter(|f| **f == Fate::Held).count();
    let closed = seen.iter().filter(|f| **f == Fate::Closed).count();
    assert_eq!(held, CAP - players.len(), "{}", runs(&seen));
    assert_eq!(closed, sockets.len() - held, "{}", runs(&seen));
    // The oldest partial requests made room for the youngest.
    assert!(seen[..closed].iter().all(|f| *f == Fate::Closed));
    assert!(seen[closed..].iter().all(|f| *f == Fate::Held));
    for p in &mut players {
        let pong = p.request(json!({"t": "ping"})).await;
        assert_eq!(pong["t"], "pong", "{pong}");
    }
}
