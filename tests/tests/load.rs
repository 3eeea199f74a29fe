//! 200 concurrent games played by scripted clients against one server, all four kinds,
//! each ending with consistent documents on both sides and over HTTP.

use std::time::Instant;

use stoa_tests::{quick_options, Server, Table};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_games() {
    let server = std::sync::Arc::new(Server::start());
    let kinds = ["unane", "staku", "akron", "akunur"];
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let server = server.clone();
        let kind = kinds[i as usize % 4];
        tasks.push(tokio::spawn(async move {
            let mut t = Table::open(&server, kind, quick_options(kind), "public").await;
            t.repeat_back = kind == "akunur";
            let moves = t.play_out(1000 + i, 400).await;
            assert_eq!(t.host_doc.doc, t.guest_doc.doc);
            assert_eq!(t.host_doc.doc["status"]["state"], "ended");
            let fresh = t.snapshot().await;
            assert_eq!(fresh["doc"], t.host_doc.doc);
            let (status, doc) = server.api_game(&t.game_id, None);
            assert_eq!(status, 200);
            assert_eq!(doc, t.host_doc.doc);
            moves
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("game task");
    }
    eprintln!("200 games, {total} moves in {:?}", started.elapsed());
    let (_, metrics) = server.http_get("/metrics");
    let started_line = metrics
        .lines()
        .filter(|l| l.starts_with("stoa_games_started_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum::<u64>();
    assert_eq!(started_line, 200);
}
