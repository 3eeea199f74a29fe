//! Redis dies (kill -9, AOF on) and comes back while games run. The chosen policy is
//! *pause*: while Redis is unreachable `/health` is 503 `degraded`, moves and new rooms are
//! refused with `unavailable` and change nothing; when Redis is back the server reconnects
//! by itself, the games go on, and no acknowledged move is lost — not in the live games and
//! not after a later server crash.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use stoa_tests::redis::{moves_of, wait_health, Duel, RedisServer, Step};
use stoa_tests::{quick_options, Client};

const GAMES: usize = 8;
const KINDS: [&str; 4] = ["unane", "staku", "akron", "akunur"];

async fn wait_for(counter: &AtomicUsize, at_least: usize) {
    for _ in 0..6000 {
        if counter.load(Ordering::Relaxed) >= at_least {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("waited too long for {at_least} moves");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restart_pauses_games_and_loses_no_acknowledged_move() {
    let mut redis = RedisServer::start();
    let server = redis.start_server("outage");
    let body = wait_health(&server, 200, Duration::from_secs(5));
    assert_eq!(body["persistence"], "redis");

    let mut duels = Vec::new();
    for i in 0..GAMES {
        let kind = KINDS[i % KINDS.len()];
        // Full-size options: the games last through the outage.
        duels.push(Duel::open(&server, kind, json!({}), 7 + i as u64).await);
    }
    let mut host = Client::guest(&server, "host").await;
    // A game nobody plays until Redis is down: it has no write in flight when Redis dies,
    // so its move must be refused at once. (A driven game may have its move's write in
    // flight at the kill: that answer waits for the log, and if every driven game is in
    // that state, none of them is refused during the outage.)
    let mut probe = Duel::open(&server, "unane", json!({}), 99).await;

    let acked = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // True from the moment the server is seen refusing moves (Redis is down and the server
    // knows it) until just before Redis restarts. A move sent and answered inside that span
    // must not be acknowledged. Why an event rather than a quiet period on the clock: a
    // move acknowledged just before the kill may reach its client late on a starved
    // machine, and must not count as acknowledged during the outage.
    let down = Arc::new(AtomicBool::new(false));
    let acked_while_down = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for mut d in duels {
        let (acked, refused, stop) = (acked.clone(), refused.clone(), stop.clone());
        let (down, acked_while_down) = (down.clone(), acked_while_down.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let sent_down = down.load(Ordering::SeqCst);
                match d.step().await {
                    Step::Moved => {
                        acked.fetch_add(1, Ordering::Relaxed);
                        if sent_down && down.load(Ordering::SeqCst) {
                            acked_while_down.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Step::Ended => break,
                    Step::Refused(e) => {
                        // `unavailable` while Redis is down; right after it, a move chosen
                        // before a lost write was settled from the log may no longer fit.
                        assert!(
                            ["unavailable", "illegal_move", "not_your_turn"]
                                .contains(&e["code"].as_str().unwrap_or("")),
                            "{e}"
                        );
                        if e["code"] == "unavailable" {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        // The refused move changed nothing, or (if its write landed and only
                        // the answer was lost) it is in the game: learn which.
                        while d.resync().await.is_err() {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                    Step::Closed => panic!("the server must survive a Redis outage"),
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            d
        }));
    }

    wait_for(&acked, 40).await;
    redis.kill9();
    let body = wait_health(&server, 503, Duration::from_secs(30));
    assert_eq!(body["status"], "degraded", "{body}");
    assert!(!body["reasons"].as_array().expect("reasons").is_empty());
    // New rooms are refused while Redis is down.
    let r = host
        .request(
            json!({"t":"room.create","kind":"staku","options":quick_options("staku"),
            "clock":{"kind":"none"},"rated":false,"visibility":"public","side":"random"}),
        )
        .await;
    assert_eq!(r["code"], "unavailable", "{r}");
    // Games are paused: a move is refused, and none sent from then on is acknowledged
    // while Redis stays down (the driven games keep trying for a second).
    match probe.step().await {
        Step::Refused(e) => assert_eq!(e["code"], "unavailable", "{e}"),
        _ => panic!("a move was not refused while Redis is down"),
    }
    down.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    down.store(false, Ordering::SeqCst);
    assert_eq!(
        acked_while_down.load(Ordering::SeqCst),
        0,
        "moves were acknowledged while Redis was down"
    );
    let during = acked.load(Ordering::Relaxed);

    redis.restart();
    wait_health(&server, 200, Duration::from_secs(20));
    wait_for(&acked, during + 40).await;
    let r = host
        .request(
            json!({"t":"room.create","kind":"staku","options":quick_options("staku"),
            "clock":{"kind":"none"},"rated":false,"visibility":"public","side":"random"}),
        )
        .await;
    assert_eq!(r["t"], "room", "{r}");
    stop.store(true, Ordering::Relaxed);
    let mut duels = Vec::new();
    for t in tasks {
        duels.push(t.await.expect("game task"));
    }

    // Live games keep every acknowledged move.
    let mut live_moves = Vec::new();
    for d in duels.iter_mut() {
        let doc = d.resync().await.expect("snapshot");
        assert!(
            d.keeps_acked(&doc),
            "game {} lost an acknowledged move",
            d.game_id
        );
        live_moves.push(moves_of(&doc));
    }

    // And so does Redis: a server restarted from it shows exactly the live moves.
    drop(server);
    let server = redis.start_server("outage");
    for (d, live) in duels.iter_mut().zip(live_moves) {
        d.reconnect(&server).await;
        let doc = d.resync().await.expect("snapshot after restart");
        assert_eq!(moves_of(&doc), live, "game {}", d.game_id);
        assert!(d.keeps_acked(&doc));
    }
    eprintln!(
        "{} moves acknowledged, {} refused during the outage",
        acked.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
}

/// Redis stalls writes past the server's timeout (`CLIENT PAUSE … WRITE`): the move's
/// append times out while the script is still queued and runs later. The answer must wait
/// for the log to settle the outcome — the move is then acknowledged exactly once, never
/// answered with an error and applied anyway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_write_is_stalled_is_answered_by_what_the_log_says() {
    let redis = RedisServer::start();
    let server = redis.start_server("stall"); // 500 ms store timeout
    let mut t = stoa_tests::Table::open(&server, "unane", quick_options("unane"), "private").await;
    let game_id = t.game_id.clone();
    t.step(3).await.expect("a first move");
    let before = t.host_doc.seq;
    let mover = if t.to_act_is_host() == Some(true) {
        &mut t.host
    } else {
        &mut t.guest
    };
    let mv = mover.first_legal(&game_id).await;
    assert!(redis
        .command("CLIENT PAUSE 1500 WRITE")
        .is_some_and(|r| r.starts_with("+OK")));
    let answer = mover
        .request(json!({"t":"game.move","game_id":game_id,"move":mv,"seq":before}))
        .await;
    // The write landed once the pause ended: the answer says so.
    assert_eq!(answer["t"], "ok", "{answer}");
    assert_eq!(answer["seq"].as_u64(), Some(before + 1));
    // A retry with the seq it was sent with cannot apply it twice.
    let retry = mover
        .request(json!({"t":"game.move","game_id":game_id,"move":mv,"seq":before}))
        .await;
    assert_eq!(retry["code"], "stale_seq", "{retry}");
    let (_, doc) = server.api_game(&game_id, Some(&t.code));
    assert_eq!(moves_of(&doc).len() as u64, 2, "{doc}");
    assert_eq!(moves_of(&doc).last().map(String::as_str), Some(mv.as_str()));
}
