//! A spectator that never reads does not delay the players: the actor never waits on a
//! subscriber, and a subscriber whose bounded queue fills is dropped.

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::json;
use stoa_tests::{Client, Server, Table, Tracked, LOOSE};
use tokio::net::TcpSocket;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn slow_spectator_does_not_delay_players() {
    let mut args = LOOSE.to_vec();
    args.extend(["--outbound-queue", "16", "--socket-send-buffer", "8192"]);
    let server = Server::start_with(&args);
    let mut t = Table::open(&server, "unane", json!({"width":16,"height":15}), "public").await;
    let game_id = t.game_id.clone();

    // The slow spectator: a tiny receive buffer, says hello, watches, never reads again.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let tcp = socket.connect(server.addr).await.unwrap();
    let (mut slow, _) = tokio_tungstenite::client_async(
        server.ws_url(),
        tokio_tungstenite::MaybeTlsStream::Plain(tcp),
    )
    .await
    .unwrap();
    slow.send(Message::Text(
        json!({"t":"hello","protocol":1,"name":"slow"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    slow.send(Message::Text(
        json!({"t":"game.watch","game_id":game_id})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();

    let dropped = |server: &Server| {
        let (_, m) = server.http_get("/metrics");
        m.lines()
            .find(|l| l.starts_with("stoa_slow_consumers_dropped_total "))
            .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };

    // Players keep changing the document (draw offers and declines, two diffs per round)
    // and every diff reaches both players promptly, while the spectator's queue fills.
    let mut worst = Duration::ZERO;
    let start = Instant::now();
    let mut actions = 0u64;
    while dropped(&server) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the slow spectator was never dropped"
        );
        for _ in 0..100 {
            let t0 = Instant::now();
            offer_and_decline(&mut t).await;
            worst = worst.max(t0.elapsed());
            actions += 2;
        }
    }
    eprintln!("dropped after {:?}", start.elapsed());
    // The game goes on normally after the drop.
    t.step(1).await.expect("game on");
    eprintln!(
        "{actions} actions, worst round trip {worst:?}, dropped {}",
        dropped(&server)
    );
    assert!(
        worst < Duration::from_millis(500),
        "players were delayed: {worst:?}"
    );
    assert_eq!(t.host_doc.doc, t.guest_doc.doc);
    drop(slow);
}

/// A client that sends thousands of requests at once before reading any answer is slowed
/// down (the server stops reading while the answers to its own requests fill its queue),
/// never dropped as a slow consumer: it gets every answer, in order.
#[tokio::test]
async fn a_fast_reader_gets_every_answer_and_is_not_dropped() {
    let server = Server::start(); // the default 512-frame queue
    let mut c = stoa_tests::Client::guest(&server, "fast").await;
    const N: usize = 3_000;
    for _ in 0..N {
        c.send_raw(r#"{"t":"ping"}"#).await;
    }
    let mut pongs = 0;
    while pongs < N {
        match c.read_frame().await {
            Ok(m) if m["t"] == "pong" => pongs += 1,
            Ok(m) => panic!("only pongs expected: {m}"),
            Err(code) => panic!("closed ({code}) after {pongs} pongs"),
        }
    }
    let (_, metrics) = server.http_get("/metrics");
    let dropped = metrics
        .lines()
        .find(|l| l.starts_with("stoa_slow_consumers_dropped_total "))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok());
    assert_eq!(dropped, Some(0), "{metrics}");
}

/// A spectator that stops reading for a while, so its socket fills and its frames queue
/// behind it, gets every diff in order once it reads again, and is not dropped. While it
/// is stalled the server waits for the socket instead of trying it over and over.
///
/// Why: a broadcast writes straight to each socket without the runtime's readiness record
/// (`write_now`), so a full socket leaves that record saying "writable"; the connection's
/// task must clear it with a write of its own before it waits, or it would spin (CPU) or,
/// clearing it wrongly, never write again (a stall).
#[tokio::test]
async fn a_spectator_that_stops_reading_gets_everything_once_it_reads_again() {
    let mut args = LOOSE.to_vec();
    args.extend(["--outbound-queue", "4096", "--socket-send-buffer", "4096"]);
    let server = Server::start_with(&args);
    let mut t = Table::open(&server, "unane", json!({"width":16,"height":15}), "public").await;
    let game_id = t.game_id.clone();
    let mut spectator = Client::guest_with_window(&server, "stalled", 4096).await;
    let snap = spectator
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    let mut seen = Tracked::from_snapshot(&snap);

    // Far more than both buffers hold (a few hundred bytes a diff, 16 KiB of buffers).
    let mut last = 0;
    for _ in 0..300 {
        last = offer_and_decline(&mut t).await;
    }

    // Stalled and nothing else happening: the server is idle, not retrying the socket.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu_seconds(server.pid());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let busy = cpu_seconds(server.pid()) - before;
    assert!(
        busy < 0.5,
        "the server used {busy:.2} s of CPU in 2 s while a spectator was stalled"
    );

    // Reading again: every diff, in order, to the players' document.
    tokio::time::timeout(Duration::from_secs(30), seen.catch_up(&mut spectator, last))
        .await
        .expect("the stalled spectator's diffs never all came");
    assert_eq!(seen.doc, t.host_doc.doc);
    assert_eq!(seen.diffs as u64, last - snap["seq"].as_u64().unwrap());
    let (_, metrics) = server.http_get("/metrics");
    let dropped = metrics
        .lines()
        .find(|l| l.starts_with("stoa_slow_consumers_dropped_total "));
    assert_eq!(
        dropped,
        Some("stoa_slow_consumers_dropped_total 0"),
        "a spectator was dropped"
    );
}

/// One round of changes to the document without ending the game: the host offers a draw,
/// the guest declines; both players catch up with the two diffs. Returns the new seq.
async fn offer_and_decline(t: &mut Table) -> u64 {
    let game_id = t.game_id.clone();
    let offer = t
        .host
        .request(json!({"t":"game.draw","game_id":game_id,"action":"offer"}))
        .await;
    assert_eq!(offer["t"], "ok", "{offer}");
    let decline = t
        .guest
        .request(json!({"t":"game.draw","game_id":game_id,"action":"decline"}))
        .await;
    assert_eq!(decline["t"], "ok", "{decline}");
    let seq = decline["seq"].as_u64().unwrap();
    t.host_doc.catch_up(&mut t.host, seq).await;
    t.guest_doc.catch_up(&mut t.guest, seq).await;
    seq
}

/// CPU seconds a process has used (`/proc/<pid>/stat`, user + system, 100 ticks a second).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's stat");
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("stat's command name")
        .1
        .split_whitespace()
        .collect();
    // After the name: state is field 0, utime 11, stime 12.
    let ticks = |i: usize| fields[i].parse::<f64>().expect("ticks");
    (ticks(11) + ticks(12)) / 100.0
}
