//! A Redis failover under live games, with a node that finds the primary through Sentinel
//! (`--redis-sentinel`) and answers a move `ok` only once a replica holds it
//! (`--redis-min-replicas 1`): a primary, one replica and three Sentinels of our own.
//!
//! 1. A switchover with the primary alive (`SENTINEL FAILOVER`) while moves go on: every
//!    move answered `ok` is in its game's log read from the new primary, and the games
//!    answer moves again within seconds of the promotion, without restarting the node.
//! 2. Then a kill -9 of the (new) primary: Sentinel promotes the old one, the node follows,
//!    the killed one comes back as a replica, and the games go on with nothing lost.
//! 3. A new identity waits for the replica as a move does: refused while it is cut off.
//!
//! And with no replica required (`--redis-min-replicas 0`): a new player whose identity a
//! switchover lost (the replica was cut off when it was created) is stored again by the
//! node that created it, so its token still works after the switch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::redis::{Duel, Step};
use stoa_tests::sentinel::Topology;
use stoa_tests::{Client, Server, LOOSE};

const GAMES: usize = 4;
const KINDS: [&str; 4] = ["unane", "staku", "akron", "akunur"];
const PREFIX: &str = "sent";

/// What one game's task did: its duel, the instants of its acknowledged moves, how many
/// moves were refused, and whether the game ended.
type Played = (Duel, Vec<Instant>, usize, bool);

/// A node finding the primary through `topo`'s Sentinels, with `extra` flags.
fn node(topo: &Topology, extra: &[&str]) -> Server {
    let list = topo.sentinel_list();
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend([
        "--redis-sentinel",
        &list,
        "--redis-prefix",
        PREFIX,
        "--redis-timeout-ms",
        "1000",
    ]);
    args.extend(extra);
    Server::start_with(&args)
}

/// The moves in a game's log, read straight from the Redis at `port`.
fn logged_moves(port: u16, game_id: &str) -> Vec<String> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("client");
    let mut conn = client.get_connection().expect("connect to the primary");
    let entries: Vec<String> = redis::cmd("LRANGE")
        .arg(format!("{PREFIX}:game:{{{game_id}}}:log"))
        .arg(0)
        .arg(-1)
        .query(&mut conn)
        .expect("LRANGE");
    entries
        .iter()
        .filter_map(|e| {
            let v: Value = serde_json::from_str(e).expect("log entry");
            (v["action"]["type"] == "move")
                .then(|| v["action"]["notation"].as_str().map(String::from))?
        })
        .collect()
}

/// Every game plays as fast as the server answers until `stop`; refusals (the failover)
/// are counted and the game goes on. Each task returns its duel and the instants of its
/// acknowledged moves.
fn play(
    duels: Vec<Duel>,
    stop: &Arc<AtomicBool>,
    acked: &Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<Played>> {
    duels
        .into_iter()
        .map(|mut d| {
            let (stop, acked) = (stop.clone(), acked.clone());
            tokio::spawn(async move {
                let (mut at, mut refused, mut ended) = (Vec::new(), 0, false);
                while !stop.load(Ordering::Relaxed) {
                    match d.step().await {
                        Step::Moved => {
                            at.push(Instant::now());
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Step::Ended => {
                            ended = true;
                            break;
                        }
                        Step::Closed => panic!("the node closed the connection"),
                        Step::Refused(_) => {
                            refused += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                (d, at, refused, ended)
            })
        })
        .collect()
}

/// Plays through `fault` (run once `acked` moves are in), then checks that every
/// acknowledged move is in the log on the primary at `primary()` and that every game still
/// playing answered a move within `within` of `recovered()`'s instant.
async fn through_fault(
    duels: Vec<Duel>,
    fault: impl FnOnce() -> Instant,
    primary: impl Fn() -> u16,
    within: Duration,
) -> Vec<Duel> {
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let tasks = play(duels, &stop, &acked);
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.load(Ordering::Relaxed) < GAMES * 5 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = acked.load(Ordering::Relaxed);
    let recovered = tokio::task::block_in_place(fault);
    tokio::time::sleep(within + Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let mut duels = Vec::new();
    let mut through = 0;
    let port = primary();
    for t in tasks {
        let (d, at, refused, ended) = t.await.expect("game task");
        let logged = logged_moves(port, &d.game_id);
        for (ply, mv) in &d.acked {
            assert_eq!(
                logged.get(*ply),
                Some(mv),
                "game {}: the move {mv} answered ok at ply {ply} is not in the log on the \
                 new primary {port} ({} logged, {} acknowledged)",
                d.game_id,
                logged.len(),
                d.acked.len()
            );
        }
        let first_after = at.iter().find(|t| **t > recovered).map(|t| *t - recovered);
        through += usize::from(first_after.is_some());
        eprintln!(
            "game {}: {} acknowledged, {} in the log, {refused} refused; first ok {:?} after recovery",
            d.game_id,
            d.acked.len(),
            logged.len(),
            first_after
        );
        if !(ended && first_after.is_none()) {
            assert!(
                first_after.is_some_and(|t| t <= within),
                "game {}: no move answered within {within:?} of the recovery",
                d.game_id
            );
        }
        duels.push(d);
    }
    eprintln!(
        "{before} moves acknowledged before the fault, {} in all",
        acked.load(Ordering::Relaxed)
    );
    // Games end (some kinds within 50 moves): a fault that no game played through
    // checked nothing.
    assert!(through > 0, "no game answered a move after the recovery");
    duels
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_follows_a_sentinel_failover_and_loses_no_acknowledged_move() {
    // A primary and one replica (`--redis-min-replicas 1`), three Sentinels.
    let mut topo = tokio::task::block_in_place(Topology::start);
    let server = node(
        &topo,
        &["--redis-min-replicas", "1", "--redis-wait-ms", "500"],
    );
    let mut duels = Vec::new();
    for (i, kind) in KINDS.iter().enumerate().take(GAMES) {
        duels.push(Duel::open(&server, kind, json!({}), 500 + i as u64).await);
    }

    // 1. A switchover with the primary alive: the replica is promoted.
    let promoted = std::sync::Mutex::new(0);
    let duels = through_fault(
        duels,
        || {
            let old = topo.primary().expect("a primary");
            assert!(
                topo.failover(Duration::from_secs(10)),
                "SENTINEL FAILOVER accepted"
            );
            let (p, at) = topo
                .wait_promotion(old, Duration::from_secs(15))
                .expect("a replica promoted");
            *promoted.lock().unwrap() = topo.port(p);
            eprintln!("switchover: port {} is the primary", topo.port(p));
            // Sentinel turns the old primary into a replica only at its next INFO round
            // (10 s, fixed in Sentinel; measured 11-15 s): with one replica no move can be
            // acknowledged before. Do now what it will do, as an operator would, so that
            // the games' waiting requests stay under the clients' 15 s timeout.
            assert!(topo.replicaof(old, p), "REPLICAOF the old primary");
            at
        },
        || *promoted.lock().unwrap(),
        Duration::from_secs(12),
    )
    .await;
    let in_sync = tokio::task::block_in_place(|| topo.wait_replicated(Duration::from_secs(30)));
    assert!(in_sync, "the old primary replicates the new one");
    let p = topo.primary().expect("a primary");

    // 2. kill -9 of the primary: Sentinel promotes the replica; the killed one comes back
    // as its replica (with one replica, nothing can be acknowledged before). New games:
    // those of the switchover may have ended.
    drop(duels);
    let mut duels = Vec::new();
    for (i, kind) in KINDS.iter().enumerate().take(GAMES) {
        duels.push(Duel::open(&server, kind, json!({}), 600 + i as u64).await);
    }
    let new_port = topo.port(1 - p);
    let duels = through_fault(
        duels,
        || {
            topo.kill9(p);
            let (q, at) = topo
                .wait_promotion(p, Duration::from_secs(20))
                .expect("the replica promoted");
            eprintln!("kill -9: port {} is the primary", topo.port(q));
            topo.restart(p, Some(q));
            at
        },
        || new_port,
        Duration::from_secs(12),
    )
    .await;
    let (status, body) = server.http_get("/health");
    assert_eq!(status, 200, "{body}");
    drop(duels);

    // 3. An identity is written as durably as a move: with the replica cut off, a new
    // guest gets no token a promotion could take back; once it is back, it does.
    let in_sync = tokio::task::block_in_place(|| topo.wait_replicated(Duration::from_secs(30)));
    assert!(in_sync, "the killed primary replicates the new one");
    let q = topo.primary().expect("a primary");
    assert!(topo.cut_replication(q), "replica cut");
    let mut c = Client::connect(&server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"name":"cut"}))
        .await;
    assert_eq!(refused["t"], "error", "{refused}");
    assert_eq!(refused["code"], "unavailable", "{refused}");
    assert!(topo.heal_replication(q), "replica back");
    let in_sync = tokio::task::block_in_place(|| topo.wait_replicated(Duration::from_secs(30)));
    assert!(in_sync, "the replica caught up");
    let mut c = Client::connect(&server).await;
    let welcome = c
        .request(json!({"t":"hello","protocol":1,"name":"back"}))
        .await;
    assert_eq!(welcome["t"], "welcome", "{welcome}");
    drop(server);
    drop(topo);
}

/// `--redis-min-replicas 0`: `hello` is answered once the primary holds the new player, so a
/// switchover to a replica that never got it loses the identity. The node that created it
/// stores it again when it follows the switch; before, the token was refused for good and
/// its player locked out of its games (fault bench, `--min-replicas 0`, seed 605).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_replica_required_a_player_a_switchover_lost_keeps_its_token() {
    let topo = tokio::task::block_in_place(Topology::start);
    let server = node(&topo, &["--redis-min-replicas", "0"]);

    let p = topo.primary().expect("a primary");
    assert!(topo.cut_replication(p), "replica cut");
    let mut c = Client::connect(&server).await;
    let welcome = c
        .request(json!({"t":"hello","protocol":1,"name":"fresh"}))
        .await;
    assert_eq!(welcome["t"], "welcome", "{welcome}");
    let token = welcome["token"].as_str().expect("a token").to_string();
    let id = welcome["player"]["id"].as_str().expect("an id").to_string();
    let key = format!("{PREFIX}:player:{{{id}}}");
    let on = |i: usize| -> i64 {
        stoa_tests::sentinel::query(topo.port(i), redis::cmd("EXISTS").arg(&key)).unwrap_or(-1)
    };
    assert_eq!(on(p), 1, "the primary holds the player");
    assert_eq!(on(1 - p), 0, "the cut replica does not");

    // The switchover, then the old primary made a replica of the new one at once (what
    // Sentinel does at its next INFO round): its copy of the player is gone with its data.
    let q = tokio::task::block_in_place(|| {
        assert!(
            topo.failover(Duration::from_secs(10)),
            "SENTINEL FAILOVER accepted"
        );
        let (q, _) = topo
            .wait_promotion(p, Duration::from_secs(15))
            .expect("the replica promoted");
        assert!(topo.heal_replication(p), "replication user back");
        assert!(topo.replicaof(p, q), "REPLICAOF the old primary");
        q
    });

    // The token works again once the node followed the switch and stored the player again.
    let deadline = Instant::now() + Duration::from_secs(20);
    let back = loop {
        let mut c = Client::connect(&server).await;
        let answer = c
            .request(json!({"t":"hello","protocol":1,"token":token}))
            .await;
        if answer["t"] == "welcome" || Instant::now() >= deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(back["t"], "welcome", "the token still works: {back}");
    assert_eq!(back["player"]["id"], id.as_str(), "{back}");
    assert_eq!(back["player"]["name"], "fresh", "{back}");
    assert_eq!(on(q), 1, "the new primary holds the player");
    let (_, metrics) = server.http_get("/metrics");
    assert!(
        metrics.contains("stoa_store_identities_restored_total 1"),
        "one player stored again: {metrics}"
    );
    drop(server);
    drop(topo);
}
