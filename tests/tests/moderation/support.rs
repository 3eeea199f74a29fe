//! What the moderation tests share: the operators' file, raw HTTP calls to the admin API,
//! metrics, and the small waits around the players' websockets.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};
use std::time::Instant;
use stoa_tests::temp_dir::TempDir;

use stoa_tests::redis::RedisServer;
use stoa_tests::{quick_options, Client, Server, LOOSE};

/// Ann's token (operators' tokens are at least 24 characters).
pub const ANN: &str = "ann-token-0123456789abcdefghij";
/// Bob's token.
pub const BOB: &str = "bob-token-0123456789abcdefghij";

/// A directory with `admins` (ann and bob) and `words` (the word filter: `badword`).
pub fn config_dir(tag: &str) -> TempDir {
    let dir = TempDir::new(tag);
    std::fs::write(
        dir.0.join("admins"),
        format!("# operators\nann {ANN}\nbob {BOB}\n"),
    )
    .expect("write the operators' file");
    std::fs::write(dir.0.join("words"), "# words\nbadword\n").expect("write the word filter");
    dir
}

/// The server flags naming the files of [`config_dir`].
pub fn moderation_args(dir: &TempDir) -> Vec<String> {
    vec![
        "--admin-file".into(),
        dir.0.join("admins").display().to_string(),
        "--word-filter".into(),
        dir.0.join("words").display().to_string(),
    ]
}

/// One HTTP/1.1 request: (status, headers, body).
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut buf = String::new();
    s.read_to_string(&mut buf).expect("read");
    let status = buf
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (head, body) = buf.split_once("\r\n\r\n").unwrap_or((&buf, ""));
    (status, head.to_string(), body.to_string())
}

/// An admin call as `token`: (status, JSON body).
pub fn admin_as(
    server: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let body = (method == "POST").then_some(&body);
    let (status, _, text) = http(server.addr, method, path, Some(token), body);
    let v = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text }));
    (status, v)
}

/// An admin call as ann that must succeed: its JSON.
pub fn admin(server: &Server, method: &str, path: &str, body: Value) -> Value {
    let (status, v) = admin_as(server, ANN, method, path, body);
    assert_eq!(status, 200, "{method} {path}: {v}");
    v
}

/// A counter or gauge of `GET /metrics` (`series` as written, labels included).
pub fn metric(server: &Server, series: &str) -> Option<f64> {
    let (_, text) = server.http_get("/metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The status of a websocket upgrade from this machine (101 accepted, 403 refused).
pub fn upgrade_status(server: &Server) -> u16 {
    let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    write!(
        s,
        "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        server.addr
    )
    .expect("write");
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n])
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The `moderation` pushes among what `client` received within `settle` (after a `ping`
/// answered, so nothing sent before it is still on its way), taken out of its queue.
pub async fn moderation_pushes(client: &mut Client, settle: Duration) -> Vec<Value> {
    tokio::time::sleep(settle).await;
    let pong = client.request(json!({"t":"ping"})).await;
    assert_eq!(pong["t"], "pong", "{pong}");
    let (pushes, rest): (Vec<Value>, Vec<Value>) = client
        .pending
        .drain(..)
        .partition(|m| m["t"] == "moderation");
    client.pending = rest.into();
    pushes
}

/// An error answer's code, asserting it is an error.
pub fn code(answer: &Value) -> &str {
    assert_eq!(answer["t"], "error", "{answer}");
    answer["code"].as_str().unwrap_or("")
}

/// A chat line said in a game by `client`, and its `ts` as `reader` received it (the
/// speaker itself when `None`).
pub async fn say(
    client: &mut Client,
    reader: Option<&mut Client>,
    game_id: &str,
    text: &str,
) -> u64 {
    // A line is named by its author and `ts` (server ms): two lines of one author within a
    // millisecond would share it, which no person types; keep the test's lines apart.
    tokio::time::sleep(Duration::from_millis(3)).await;
    let ok = client
        .request(json!({"t":"chat.say","game_id":game_id,"text":text}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let t = text.to_string();
    let reader = match reader {
        Some(r) => r,
        None => client,
    };
    let line = reader
        .recv_where(move |m| m["t"] == "chat" && m["text"] == t.as_str())
        .await;
    line["ts"].as_u64().expect("ts")
}

pub fn room_create() -> Value {
    json!({"t":"room.create","kind":"akron","options":quick_options("akron"),
        "clock":{"kind":"none"},"rated":false,"visibility":"public","side":"random"})
}

pub fn single_node(dir: &stoa_tests::temp_dir::TempDir) -> Server {
    let mut args: Vec<String> = LOOSE.iter().map(|s| s.to_string()).collect();
    args.extend(moderation_args(dir));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

/// The game document once its status says it ended (within 5 s).
pub async fn ended(server: &Server, game: &str, code: Option<&str>) -> Value {
    for _ in 0..100 {
        let (_, doc) = server.api_game(game, code);
        if doc["status"]["state"] == "ended" {
            return doc;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("game {game} did not end");
}

pub fn cluster_node(redis: &RedisServer, dir: &stoa_tests::temp_dir::TempDir, id: &str) -> Server {
    let mut args = redis.server_args("mod");
    args.extend(["--cluster", "--node-id", id, "--lease-ms", "1500"].map(String::from));
    args.extend(moderation_args(dir));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

/// How long until `x`'s chat on its node is refused `forbidden` (polled with an empty line:
/// the mute is checked before the line, so a poll spends none of the chat budget).
pub async fn until_forbidden(x: &mut Client, game: &str, since: Instant) -> Duration {
    loop {
        let said = x
            .request(json!({"t":"chat.say","game_id":game,"text":""}))
            .await;
        match code(&said) {
            "forbidden" => return since.elapsed(),
            "bad_request" => {}
            other => panic!("unexpected answer {other}: {said}"),
        }
        assert!(since.elapsed() < Duration::from_secs(5), "never muted");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The audit log lists each step, newest first, with its operator.
pub fn audit(server: &Server, expected: &[(&str, &str, &str)]) {
    let log = admin(server, "GET", "/api/admin/audit?limit=500", Value::Null);
    let mut entries: Vec<(String, String, String)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (s("by"), s("action"), s("target"))
        })
        .collect();
    entries.reverse();
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(entries, expected);
    let two = admin(server, "GET", "/api/admin/audit?limit=2", Value::Null);
    assert_eq!(two["entries"].as_array().unwrap().len(), 2);
}
