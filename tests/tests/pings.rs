//! Server pings: a connection watching a game is pinged every `--ping-interval-ms` (the
//! round trips feed its players' lag compensation); one that watches no game only often
//! enough to stay clear of the idle timeout, so thousands of idle sessions cost the server
//! almost nothing.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_connections_in_a_game_are_pinged_often() {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend(["--ping-interval-ms", "200", "--idle-timeout-ms", "60000"]);
    let server = Server::start_with(&args);
    let t = Table::open(&server, "unane", json!({"width":6,"height":5}), "public").await;
    let tcp = TcpStream::connect(server.addr).await.expect("connect");
    let (mut ws, _) = tokio_tungstenite::client_async(server.ws_url(), MaybeTlsStream::Plain(tcp))
        .await
        .expect("a websocket");
    ws.send(Message::Text(
        json!({"t":"hello","protocol":1}).to_string().into(),
    ))
    .await
    .expect("hello");
    // In the lobby: the next ping is due only a third of the idle timeout (20 s) away.
    let bare = pings_during(&mut ws, Duration::from_millis(1_500)).await;
    assert_eq!(
        bare, 0,
        "a connection watching no game was pinged {bare} times in 1.5 s"
    );
    // Watching a game: pinged every 200 ms from now on, without waiting out the long wait.
    ws.send(Message::Text(
        json!({"t":"game.watch","game_id":t.game_id})
            .to_string()
            .into(),
    ))
    .await
    .expect("watch");
    let watching = pings_during(&mut ws, Duration::from_millis(1_500)).await;
    assert!(
        watching >= 4,
        "a connection watching a game was pinged {watching} times in 1.5 s"
    );
}
