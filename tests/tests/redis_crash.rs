//! Kill -9 the server in the middle of 50 concurrent games over Redis, restart it on the
//! same Redis: every game resumes with exactly the moves that had been acknowledged (plus,
//! at most, the one move whose answer the kill swallowed), the players reconnect with their
//! tokens, and they finish every game.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use stoa_tests::quick_options;
use stoa_tests::redis::{moves_of, Duel, RedisServer, Step};

const GAMES: usize = 50;
const KINDS: [&str; 4] = ["unane", "staku", "akron", "akunur"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_mid_games_then_every_game_resumes_and_finishes() {
    let redis = RedisServer::start();
    let server = redis.start_server("crash");

    let mut duels = Vec::new();
    for i in 0..GAMES {
        let kind = KINDS[i % KINDS.len()];
        duels.push(Duel::open(&server, kind, quick_options(kind), 100 + i as u64).await);
    }

    // Everyone plays as fast as the server answers until it dies.
    let acked = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for mut d in duels {
        let acked = acked.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                match d.step().await {
                    Step::Moved => {
                        acked.fetch_add(1, Ordering::Relaxed);
                    }
                    Step::Ended | Step::Closed => return d,
                    Step::Refused(e) => panic!("refused before the kill: {e}"),
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while acked.load(Ordering::Relaxed) < GAMES * 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(server); // SIGKILL: no shutdown, no flush
    let mut duels = Vec::new();
    for t in tasks {
        duels.push(t.await.expect("game task"));
    }
    let before = acked.load(Ordering::Relaxed);
    assert!(before >= GAMES * 3, "only {before} moves before the kill");
    let unfinished_at_kill = duels.iter().filter(|d| d.in_flight.is_some()).count();

    // Restart on the same Redis: games come back from their logs.
    let server = redis.start_server("crash");
    let mut swallowed = 0;
    for d in duels.iter_mut() {
        d.reconnect(&server).await;
        let doc = d.resync().await.expect("snapshot after restart");
        let moves = moves_of(&doc);
        let acked: Vec<String> = d.acked.iter().map(|(_, m)| m.clone()).collect();
        if moves.len() == acked.len() + 1 {
            swallowed += 1;
            assert_eq!(&moves[..acked.len()], &acked[..], "game {}", d.game_id);
        } else {
            assert_eq!(
                moves, acked,
                "game {}: acknowledged moves after restart",
                d.game_id
            );
        }
        if doc["status"]["state"] == "playing" {
            assert!(
                d.host.welcome["games"]
                    .as_array()
                    .is_some_and(|g| g.iter().any(|id| id == d.game_id.as_str())),
                "welcome lists the unfinished game: {}",
                d.host.welcome
            );
        }
    }
    assert!(swallowed <= unfinished_at_kill);
    let live = duels.iter().filter(|d| !d.moves.is_empty()).count();
    eprintln!(
        "{before} moves acknowledged before the kill, {unfinished_at_kill} in flight, \
         {swallowed} of those durable; {live} games resumed with moves"
    );

    // Everyone finishes.
    let mut tasks = Vec::new();
    for mut d in duels {
        tasks.push(tokio::spawn(async move {
            for _ in 0..400 {
                match d.step().await {
                    Step::Moved => {}
                    Step::Ended => return d,
                    other => panic!("after restart: {other:?}"),
                }
            }
            let game_id = d.game_id.clone();
            let r = d
                .host
                .try_request(json!({"t":"game.resign","game_id":game_id}))
                .await
                .expect("resign");
            assert_eq!(r["t"], "ok", "{r}");
            d
        }));
    }
    for t in tasks {
        let mut d = t.await.expect("game task");
        let doc = d.resync().await.expect("final snapshot");
        assert_eq!(doc["status"]["state"], "ended", "{doc}");
        assert!(d.keeps_acked(&doc), "game {}", d.game_id);
        let (status, http) = server.api_game(&d.game_id, Some(&d.code));
        assert_eq!(status, 200);
        assert_eq!(http["moves"], doc["moves"]);
    }
}
