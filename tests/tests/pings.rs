//! Server pings: a connection is pinged only often enough to stay clear of the idle
//! timeout (every half of it), whether it sits in the lobby or watches a game, so thousands
//! of idle sessions cost the server almost nothing. Round trips for lag compensation are
//! measured when a player's clock starts running, at most once per `--ping-interval-ms`
//! (`server/tests/clock_actor.rs`).

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use stoa_tests::{Server, Table, LOOSE};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Reads for `d` (tungstenite answers the pings itself) and counts the server's pings.
async fn pings_during(ws: &mut Ws, d: Duration) -> usize {
    let end = Instant::now() + d;
    let mut pings = 0;
    while let Ok(Some(frame)) = tokio::time::timeout_at(end, ws.next()).await {
        match frame.expect("a frame") {
            Message::Ping(_) => pings += 1,
            Message::Close(c) => panic!("closed: {c:?}"),
            _ => {}
        }
    }
    pings
}

/// A raw websocket (so pings can be counted) that has said `hello`.
async fn connect_with_hello(server: &Server) -> Ws {
    let tcp = TcpStream::connect(server.addr).await.expect("connect");
    let (mut ws, _) = tokio_tungstenite::client_async(server.ws_url(), MaybeTlsStream::Plain(tcp))
        .await
        .expect("a websocket");
    ws.send(Message::Text(
        json!({"t":"hello","protocol":1}).to_string().into(),
    ))
    .await
    .expect("hello");
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lobby_and_spectator_connections_are_pinged_only_to_keep_them_open() {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend(["--ping-interval-ms", "200", "--idle-timeout-ms", "60000"]);
    let server = Server::start_with(&args);
    let t = Table::open(&server, "unane", json!({"width":6,"height":5}), "public").await;
    let mut ws = connect_with_hello(&server).await;
    // In the lobby: the next ping is due only half the idle timeout (30 s) away.
    let bare = pings_during(&mut ws, Duration::from_millis(1_500)).await;
    assert_eq!(
        bare, 0,
        "a connection watching no game was pinged {bare} times in 1.5 s"
    );
    // Watching a game as a spectator: still only the keep-alive (a spectator's round trip
    // feeds no clock), although the ping interval is 200 ms.
    ws.send(Message::Text(
        json!({"t":"game.watch","game_id":t.game_id})
            .to_string()
            .into(),
    ))
    .await
    .expect("watch");
    let watching = pings_during(&mut ws, Duration::from_millis(1_500)).await;
    assert_eq!(
        watching, 0,
        "a spectator was pinged {watching} times in 1.5 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keep_alive_comes_every_half_idle_timeout_and_keeps_an_answering_client() {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend(["--ping-interval-ms", "100", "--idle-timeout-ms", "1000"]);
    let server = Server::start_with(&args);
    let mut ws = connect_with_hello(&server).await;
    // Every 500 ms: 5 or 6 in 2.8 s; a client that answers them (tungstenite does) stays
    // connected well past the 1 s idle timeout.
    let pings = pings_during(&mut ws, Duration::from_millis(2_800)).await;
    assert!(
        (4..=6).contains(&pings),
        "{pings} keep-alive pings in 2.8 s at a 1 s idle timeout"
    );
}
