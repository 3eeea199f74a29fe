//! Sockets are accounted for from their first byte: a client that sends partial headers
//! (or nothing) is closed after the header deadline, and past the per-IP or global cap a
//! new connection gets a plain `503` while everyone else is served.

use std::time::{Duration, Instant};

use stoa_tests::{Client, Server, LOOSE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the socket; the bytes read.
async fn until_closed(tcp: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        match tokio::time::timeout(left, tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(out),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return None,
        }
    }
}

#[tokio::test]
async fn partial_headers_are_cut_off_at_the_deadline() {
    let mut args = LOOSE.to_vec();
    args.extend(["--header-timeout-ms", "300"]);
    let server = Server::start_with(&args);
    let mut slow = Vec::new();
    for i in 0..50 {
        let mut tcp = TcpStream::connect(server.addr).await.unwrap();
        if i % 2 == 0 {
            tcp.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\n")
                .await
                .unwrap();
        }
        slow.push(tcp);
    }
    for tcp in slow.iter_mut() {
        assert!(
            until_closed(tcp, Duration::from_secs(5)).await.is_some(),
            "a slow client is still held after the header deadline"
        );
    }
    // Real clients are served meanwhile and after.
    let c = Client::guest(&server, "real").await;
    assert!(!c.player_id.is_empty());
}

#[tokio::test]
async fn connections_past_the_per_ip_cap_get_503_and_others_are_served() {
    let mut args = LOOSE.to_vec();
    args.extend([
        "--max-connections-per-ip",
        "20",
        "--header-timeout-ms",
        "5000",
    ]);
    let server = Server::start_with(&args);
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // Give the server time to account for them.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    let answer = until_closed(&mut extra, Duration::from_secs(5))
        .await
        .expect("the server answers and closes");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    // Freeing sockets makes room again.
    held.clear();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let c = Client::guest(&server, "after").await;
    assert!(!c.player_id.is_empty());
}
