//! What an operator sees: one clear line per startup failure, logs without colour codes
//! when they go to a file, and JSON logs on request.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stoa_tests::{binary, build_binaries};

/// Runs the server with `args` until it exits (or `within`, then kills it); its stderr and
/// whether it exited by itself with a failure.
fn run(args: &[&str], within: Duration) -> (String, Option<bool>) {
    build_binaries();
    let mut child = Command::new(binary("stoa-server"))
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + within;
    let failed = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(!status.success());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    (err, failed)
}

#[test]
fn an_address_in_use_is_one_clear_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (err, failed) = run(&["--listen", &addr], Duration::from_secs(20));
    assert_eq!(failed, Some(true), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("stoa-server: cannot listen on {addr}")),
        "{err}"
    );
    assert!(last.contains("--listen"), "{last}");
    assert!(!err.contains("Os {"), "no debug structs: {err}");
}

#[test]
fn redis_down_at_start_says_where_and_what_to_do() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let url = format!("redis://127.0.0.1:{port}/");
    let (err, failed) = run(
        &["--listen", "127.0.0.1:0", "--redis", &url],
        Duration::from_secs(30),
    );
    assert_eq!(failed, Some(true), "{err}");
    assert!(err.contains("connecting to Redis"), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("stoa-server: cannot use Redis at {url}")),
        "{err}"
    );
}

/// A node pointed at a replica (a demoted primary after a failover, say) would read but
/// refuse every write: it does not start, and says what to give instead.
#[test]
fn a_replica_at_start_is_refused_with_what_to_do() {
    let primary = stoa_tests::redis::RedisServer::start();
    let replica = stoa_tests::redis::RedisServer::start();
    let made = replica.command(&format!("REPLICAOF 127.0.0.1 {}", primary.port));
    assert!(made.is_some_and(|r| r.starts_with("+OK")));
    let (err, failed) = run(
        &["--listen", "127.0.0.1:0", "--redis", &replica.url()],
        Duration::from_secs(30),
    );
    assert_eq!(failed, Some(true), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!(
            "is a read-only replica of 127.0.0.1:{}",
            primary.port
        )) && last.contains("--redis-sentinel"),
        "{err}"
    );
    // The primary itself is taken.
    let (err, failed) = run(
        &["--listen", "127.0.0.1:0", "--redis", &primary.url()],
        Duration::from_secs(3),
    );
    assert_eq!(failed, None, "the primary is served: {err}");
}

#[test]
fn logs_to_a_file_carry_no_colour_and_json_is_one_object_per_line() {
    let (text, _) = run(&["--listen", "127.0.0.1:0"], Duration::from_secs(3));
    assert!(text.contains("listening"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "ANSI escapes in a log file: {text:?}"
    );
    let (json, _) = run(
        &["--listen", "127.0.0.1:0", "--log-format", "json"],
        Duration::from_secs(3),
    );
    let lines: Vec<&str> = json.lines().filter(|l| !l.is_empty()).collect();
    assert!(!lines.is_empty());
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["level"].is_string() && v["fields"].is_object(), "{l}");
    }
}

/// Spans end with what they describe: a game's log lines carry that game's span alone, not
/// the connection that happened to start it nor the games before it (rematches used to nest
/// `conn{…}:game{a}:game{b}`).
#[tokio::test]
async fn game_log_lines_carry_only_their_own_game_span() {
    use serde_json::{json, Value};
    use stoa_tests::{Server, Table};
    let log = std::env::temp_dir().join(format!("stoa-spans-{}.log", std::process::id()));
    let mut args: Vec<&str> = stoa_tests::LOOSE.to_vec();
    args.extend(["--log-format", "json"]);
    let server = Server::start_logging(&args, &log);
    let mut t = Table::open(&server, "unane", json!({"width":4,"height":3}), "public").await;
    let mut games = vec![t.game_id.clone()];
    for _ in 0..2 {
        let g = games.last().expect("a game").clone();
        let ok = t.host.request(json!({"t":"game.resign","game_id":g})).await;
        assert_eq!(ok["t"], "ok", "{ok}");
        for c in [&mut t.host, &mut t.guest] {
            let ok = c.request(json!({"t":"game.rematch","game_id":g})).await;
            assert_eq!(ok["t"], "ok", "{ok}");
        }
        let started = t
            .host
            .recv_where(|m| m["t"] == "game.started" && m["game_id"] != g.as_str())
            .await;
        games.push(started["game_id"].as_str().expect("id").to_string());
    }
    drop(t);
    // The log is written as things happen; give the last lines a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let ended: Vec<Value> = lines
            .into_iter()
            .filter(|l| l["fields"]["message"] == "game ended")
            .collect();
        if ended.len() >= 2 || Instant::now() > deadline {
            break ended;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = std::fs::remove_file(&log);
    assert_eq!(ended.len(), 2, "two games resigned: {ended:?}");
    for (line, game) in ended.iter().zip(&games) {
        let spans = line["spans"].as_array().expect("span list");
        let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
        assert_eq!(names, ["game"], "only the game's span: {line}");
        assert_eq!(spans[0]["id"], game.as_str(), "{line}");
        assert_eq!(line["fields"]["reason"], "resign");
    }
}

/// `/metrics` in the OpenMetrics format, as Prometheus scrapes it (asking for it by
/// `Accept`): moves and endings per kind and reason, live games, and rooms waiting for a
/// guest; and the same series in Prometheus's plain text format to anyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_moves_endings_and_waiting_rooms_by_kind() {
    use serde_json::json;
    use std::io::Write as _;
    use stoa_tests::{Client, Server, Table};
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "public").await;
    t.step(1).await.expect("a move");
    t.step(2).await.expect("a move");
    let ok = t
        .host
        .request(json!({"t":"game.resign","game_id":t.game_id}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let mut host = Client::guest(&server, "host").await;
    let room = host
        .request(json!({"t":"room.create","kind":"staku","visibility":"private"}))
        .await;
    assert_eq!(room["t"], "room", "{room}");

    // The raw answer: the content type Prometheus negotiates for OpenMetrics, with the
    // `Accept` header its scraper sends.
    let get = |accept: &str| -> String {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\n{accept}Connection: close\r\n\r\n"
        )
        .expect("write");
        let mut raw = String::new();
        s.read_to_string(&mut raw).expect("read");
        raw
    };
    let raw = get(
        "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
         version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n",
    );
    let (head, text) = raw.split_once("\r\n\r\n").expect("a response");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    let value = |series: &str| -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    };
    assert_eq!(
        value("stoa_moves_total{kind=\"unane\"}"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(value("stoa_moves_total{kind=\"staku\"}"), Some(0.0));
    assert_eq!(value("stoa_games_started_total{kind=\"unane\"}"), Some(1.0));
    assert_eq!(value("stoa_games_live{kind=\"unane\"}"), Some(0.0));
    assert_eq!(
        value("stoa_games_ended_total{kind=\"unane\",reason=\"resign\"}"),
        Some(1.0)
    );
    assert_eq!(value("stoa_rooms_open{kind=\"staku\"}"), Some(1.0));
    assert_eq!(value("stoa_rooms_open{kind=\"unane\"}"), Some(0.0));
    assert_eq!(value("stoa_connections_open"), Some(3.0));
    assert!(value("stoa_store_latency_seconds_count").unwrap_or(0.0) >= 3.0);
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains("# TYPE stoa_moves counter\n"), "{text}");

    // Without an `Accept` header (curl, most tools): Prometheus's text format, the same
    // series, a counter's HELP and TYPE named as its samples, no end marker.
    let plain = get("");
    let (head, body) = plain.split_once("\r\n\r\n").expect("a response");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(!body.contains("# EOF"), "{body}");
    assert!(
        body.contains("# HELP stoa_moves_total Moves applied"),
        "{body}"
    );
    assert!(body.contains("# TYPE stoa_moves_total counter\n"), "{body}");
    assert!(
        body.contains("# TYPE stoa_connections_open gauge\n"),
        "{body}"
    );
    assert!(
        body.contains("stoa_moves_total{kind=\"unane\"} 2\n"),
        "{body}"
    );
}
