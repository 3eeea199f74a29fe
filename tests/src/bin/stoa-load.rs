//! `stoa-load`: a small load generator for the move path. It starts the real server twice,
//! in memory and over a private `redis-server` (AOF on, `appendfsync always`), plays the
//! same scripted games on each (many concurrent games, random legal moves chosen by a local
//! copy of the rules engine, so every request is a move), and reports moves per second and
//! the p50/p99 latency from sending `game.move` to its `ok`.
//!
//! Run it optimised: `cargo run --release -p stoa-tests --bin stoa-load -- [GAMES] [MOVES]`
//! (default 50 concurrent games, 10000 moves per backend). The release build of the tool
//! builds and starts the release server.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use stoa_tests::redis::RedisServer;
use stoa_tests::{pick, quick_options, side_of, Server, Table, LOOSE};

const KINDS: [&str; 4] = ["unane", "staku", "akron", "akunur"];

struct Figures {
    moves: usize,
    seconds: f64,
    latencies_us: Vec<u64>,
}

/// One pair of players playing games back to back until the shared budget is spent.
async fn pair(server: Arc<Server>, index: usize, budget: Arc<AtomicUsize>) -> Vec<u64> {
    let mut latencies = Vec::new();
    let mut round = 0u64;
    loop {
        let kind = KINDS[(index + round as usize) % KINDS.len()];
        let options = quick_options(kind);
        let mut t = Table::open(&server, kind, options.clone(), "private").await;
        t.host.clear();
        t.guest.clear();
        let game_kind = stoa_protocol::kind(kind).expect("kind");
        let valid = game_kind.validate_options(&options).expect("options");
        let mut game = game_kind.start(&valid).expect("start");
        let names = game.side_names();
        // Which client sits on each side index (a swap exchanges them).
        let host_side = side_of(&t.host_doc.doc, &t.host.player_id).expect("seated");
        let mut host_at = usize::from(host_side != names[0]);
        let seed = (index as u64) << 32 | round;
        let mut ply = 0u64;
        while let Some(side) = game.to_act() {
            if budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
                .is_err()
            {
                return latencies;
            }
            let legal = game.legal_notations();
            let mv = legal[pick(seed, ply, legal.len())].clone();
            let host_moves = side.index() == host_at;
            let (mover, other) = if host_moves {
                (&mut t.host, &mut t.guest)
            } else {
                (&mut t.guest, &mut t.host)
            };
            let sent = Instant::now();
            let ok = mover
                .request(json!({"t":"game.move","game_id":t.game_id,"move":mv}))
                .await;
            latencies.push(sent.elapsed().as_micros() as u64);
            assert_eq!(ok["t"], "ok", "{ok}");
            let played = game.play(&mv).expect("the server accepted it");
            if played.swap {
                host_at = 1 - host_at;
            }
            // Each player gets the move's diff; keep both sockets drained.
            other.next_diff(&t.game_id).await;
            mover.clear();
            other.clear();
            ply += 1;
        }
        round += 1;
    }
}

async fn run(server: Server, games: usize, moves: usize) -> Figures {
    let server = Arc::new(server);
    let budget = Arc::new(AtomicUsize::new(moves));
    let start = Instant::now();
    let tasks: Vec<_> = (0..games)
        .map(|i| tokio::spawn(pair(server.clone(), i, budget.clone())))
        .collect();
    let mut latencies_us = Vec::new();
    for t in tasks {
        latencies_us.extend(t.await.expect("pair"));
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies_us.sort_unstable();
    Figures {
        moves: latencies_us.len(),
        seconds,
        latencies_us,
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn report(name: &str, games: usize, f: &Figures) {
    println!(
        "| {name} | {games} | {} | {:.1} | {:.0} | {:.2} | {:.2} |",
        f.moves,
        f.seconds,
        f.moves as f64 / f.seconds.max(1e-9),
        percentile(&f.latencies_us, 0.50),
        percentile(&f.latencies_us, 0.99),
    );
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let games: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let moves: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    // The default per-IP connection limit would refuse a load test's connections.
    let memory = run(Server::start_with(LOOSE), games, moves).await;
    let redis = RedisServer::start();
    let redis_figures = run(redis.start_server("load"), games, moves).await;
    println!("| store | concurrent games | moves | seconds | moves/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|---|---|---|");
    report("memory", games, &memory);
    report("redis (AOF, fsync always)", games, &redis_figures);
    // Let the servers and Redis shut down cleanly before exiting.
    tokio::time::sleep(Duration::from_millis(50)).await;
}
