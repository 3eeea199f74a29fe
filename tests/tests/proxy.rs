//! Behind a trusted proxy the per-IP limits count the address the proxy appended to
//! `X-Forwarded-For` (the right-most), never one the client made up.

use stoa_tests::Server;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// Opens a websocket with an `X-Forwarded-For` header; whether the upgrade was accepted.
async fn connect_as(server: &Server, forwarded: &str) -> bool {
    let mut req = server.ws_url().into_client_request().expect("request");
    req.headers_mut()
        .insert("x-forwarded-for", forwarded.parse().expect("header"));
    let tcp = TcpStream::connect(server.addr).await.expect("tcp");
    tokio_tungstenite::client_async(req, tcp).await.is_ok()
}

#[tokio::test]
async fn a_made_up_forwarded_address_does_not_escape_the_per_ip_limit() {
    // A window no run outlasts: nothing is given back between the six attempts.
    let server = Server::start_with(&[
        "--trust-proxy",
        "--ip-conn-limit",
        "3",
        "--ip-window-ms",
        "600000",
    ]);
    // The same client (10.0.0.7 as the proxy saw it) claims a new address each time.
    let mut accepted = 0;
    for i in 0..6 {
        if connect_as(&server, &format!("198.51.100.{i}, 10.0.0.7")).await {
            accepted += 1;
        }
    }
    assert_eq!(
        accepted, 3,
        "only the limit's worth of connections from 10.0.0.7"
    );
    // Another client behind the same proxy is not affected.
    assert!(connect_as(&server, "203.0.113.9, 10.0.0.8").await);
}
