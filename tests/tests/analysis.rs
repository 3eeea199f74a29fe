//! Engine review of finished games by analysis workers (`stoa analyse --serve`): a scripted
//! game that hangs a win is marked a blunder at that ply with the winning move preferred;
//! without a worker the review waits for one; a worker killed mid-job leaves the job to
//! another, and the result is stored exactly once; a worker on another node of a cluster
//! serves a request made on the first; `stoa analyse <id>` prints the table and the graph;
//! with `--analysis-keys` only a worker with a key serves; `--analysis-lease-ms` bounds how
//! long a dead node's job waits.
#![forbid(unsafe_code)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::analysis_worker::{Worker, FAST};
use stoa_tests::browser::{screenshot, until_within, Web};
use stoa_tests::redis::RedisServer;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{Server, Table, LOOSE};

/// A Ūnane 4x3 game from the start, without swaps, in which the mover at some ply has a win
/// in one, plays another move that gives the opponent a win in one, and the opponent takes
/// it. Returns the moves and the ply (from 1) of the hung win, and the mover's winning
/// moves there.
fn hung_win_script() -> (Vec<String>, usize, Vec<String>) {
    let options = json!({"width": 4, "height": 3});
    let kind = stoa_protocol::kind("unane").expect("unane");
    let options = kind.validate_options(&options).expect("options");
    let winner_after = |g: &dyn stoa_protocol::AnyGame, m: &str| {
        let mut h = g.clone_box();
        h.play(m).expect("legal");
        h.outcome().and_then(|o| o.winner)
    };
    for seed in 1..500u64 {
        let mut g = kind.start(&options).expect("start");
        let mut moves = Vec::new();
        while g.outcome().is_none() {
            let me = g.to_act().expect("to act");
            let legal: Vec<String> = g
                .legal_notations()
                .into_iter()
                .filter(|m| m != "swap")
                .collect();
            let wins: Vec<String> = legal
                .iter()
                .filter(|m| winner_after(g.as_ref(), m) == Some(me))
                .cloned()
                .collect();
            if !wins.is_empty() {
                // A move that does not win and lets the opponent win at once.
                let hang = legal.iter().find(|m| {
                    let mut h = g.clone();
                    h.play(m).expect("legal");
                    h.outcome().is_none()
                        && h.legal_notations()
                            .iter()
                            .any(|r| winner_after(h.as_ref(), r) == Some(me.other()))
                });
                let Some(hang) = hang else {
                    break;
                };
                let mut h = g.clone();
                h.play(hang).expect("legal");
                let reply = h
                    .legal_notations()
                    .into_iter()
                    .find(|r| winner_after(h.as_ref(), r) == Some(me.other()))
                    .expect("a winning reply");
                moves.push(hang.clone());
                let ply = moves.len();
                moves.push(reply);
                return (moves, ply, wins);
            }
            let m = legal[stoa_tests::pick(seed, moves.len() as u64, legal.len())].clone();
            g.play(&m).expect("legal");
            moves.push(m);
        }
    }
    panic!("no game with a hung win");
}

/// Plays `moves` through the table (each by whoever is to act) to the end of the game.
async fn play_script(t: &mut Table, moves: &[String]) {
    for mv in moves {
        let host_acts = t.to_act_is_host().expect("the game is on");
        let game_id = t.game_id.clone();
        let (mover, doc) = if host_acts {
            (&mut t.host, &mut t.host_doc)
        } else {
            (&mut t.guest, &mut t.guest_doc)
        };
        let ok = loop {
            doc.absorb_pending(mover);
            let ok = mover
                .request(json!({"t":"game.move","game_id":game_id,"move":mv,"seq":doc.seq}))
                .await;
            if ok["code"] == "stale_seq" {
                let d = mover.next_diff(&game_id).await;
                doc.apply(&d);
                continue;
            }
            break ok;
        };
        assert_eq!(ok["t"], "ok", "move {mv}: {ok}");
        let seq = ok["seq"].as_u64().expect("seq");
        t.host_doc.catch_up(&mut t.host, seq).await;
        t.guest_doc.catch_up(&mut t.guest, seq).await;
    }
    assert_eq!(t.host_doc.doc["status"]["state"], "ended");
}

/// A finished public game that hangs a win: (table, hung ply, winning moves there).
async fn hung_game(host: &Server, guest: &Server) -> (Table, usize, Vec<String>) {
    let (moves, ply, wins) = hung_win_script();
    let mut t = Table::open_across(
        host,
        guest,
        "unane",
        json!({"width": 4, "height": 3}),
        json!({"kind":"none"}),
        "public",
    )
    .await;
    play_script(&mut t, &moves).await;
    // The record is stored once the game has ended; wait until it is served.
    let deadline = Instant::now() + Duration::from_secs(10);
    while host.http_get(&format!("/api/games/{}/record", t.game_id)).0 != 200 {
        assert!(Instant::now() < deadline, "no record");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (t, ply, wins)
}

/// Polls `GET /api/games/{id}/analysis` until its state is `state`.
async fn analysis_state(server: &Server, game_id: &str, state: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (code, body) = server.http_get(&format!("/api/games/{game_id}/analysis"));
        assert_eq!(code, 200, "{body}");
        let body: Value = serde_json::from_str(&body).expect("json");
        if body["state"] == state {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "the analysis is not {state} within {within:?}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn assert_blunder_at(result: &Value, ply: usize, wins: &[String], moves: usize) {
    let plies = result["plies"].as_array().expect("plies");
    assert_eq!(plies.len(), moves, "{result}");
    let p = &plies[ply - 1];
    assert_eq!(p["mark"], "blunder", "ply {ply}: {p}");
    let best = p["best"].as_str().expect("best");
    assert!(
        wins.iter().any(|w| w == best),
        "best {best} is not one of {wins:?}"
    );
    assert!(p["eval"].as_f64().unwrap() >= 0.9, "{p}");
    assert!(p["after"].as_f64().unwrap() <= 0.1, "{p}");
    // The last ply ends the game: the first side's value is 1 or 0 there.
    let last = plies.last().unwrap()["first"].as_f64().unwrap();
    assert!(last == 0.0 || last == 1.0, "{result}");
}

#[tokio::test]
async fn a_hung_win_is_a_blunder_reviewed_once_and_printed() {
    let server = Server::start();
    let worker = Worker::start(&server, "analysis-worker", FAST);
    worker.line_starting("analysis worker", Duration::from_secs(20));
    let (mut t, ply, wins) = hung_game(&server, &server).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let game_id = t.game_id.clone();

    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":game_id}))
        .await;
    assert_eq!(asked["t"], "analysis", "{asked}");
    let done = analysis_state(&server, &game_id, "done", Duration::from_secs(60)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    worker.line_starting("job ", Duration::from_secs(5));

    // Asked again (by the other player too): the stored review, never a second job.
    for c in [&mut t.guest, &mut t.host] {
        let again = c
            .request(json!({"t":"analysis.request","game_id":game_id}))
            .await;
        assert_eq!(again["state"], "done", "{again}");
        assert_eq!(again["result"], done["result"]);
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        !worker.printed().iter().any(|l| l.contains("game ")),
        "a second job was handed out"
    );

    // The terminal: the table with the mark and the preferred move, and the graph.
    let home = TempDir::new("analysis-cli");
    let out = Command::new(stoa_tests::binary("stoa"))
        .args(["--server", &server.ws_url(), "analyse", &game_id])
        .env("STOA_CONFIG_DIR", &home.0)
        .env_remove("STOA_SERVER")
        .stdin(Stdio::null())
        .output()
        .expect("stoa analyse");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{ply} ")))
        .expect("the hung ply's line");
    assert!(line.contains("blunder"), "{text}");
    assert!(
        wins.iter().any(|w| line.trim_end().ends_with(w.as_str())),
        "{line}"
    );
    let graph = text
        .lines()
        .find(|l| l.starts_with("graph ("))
        .expect("graph line");
    assert_eq!(
        graph.rsplit(": ").next().unwrap().chars().count(),
        moves + 1,
        "{graph}"
    );

    // Unknown games are not found; a live game cannot be reviewed.
    assert_eq!(server.http_get("/api/games/gnone/analysis").0, 404);
}

#[tokio::test]
async fn without_a_worker_the_review_waits_and_one_request_at_a_time() {
    let server = Server::start();
    let (mut t, ply, wins) = hung_game(&server, &server).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let first = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":first}))
        .await;
    assert_eq!(asked["state"], "waiting_for_worker", "{asked}");
    let body = analysis_state(
        &server,
        &first,
        "waiting_for_worker",
        Duration::from_secs(1),
    )
    .await;
    assert!(body.get("result").is_none(), "{body}");

    // The same player's second request is refused while the first is pending; another
    // player may ask, and asking for a queued game answers its state (no second job).
    let (mut t2, _, _) = hung_game(&server, &server).await;
    let second = t2.game_id.clone();
    let limited = t
        .host
        .request(json!({"t":"analysis.request","game_id":second}))
        .await;
    assert_eq!(limited["t"], "error", "{limited}");
    assert_eq!(limited["code"], "rate_limited", "{limited}");
    let other = t2
        .host
        .request(json!({"t":"analysis.request","game_id":second}))
        .await;
    assert_eq!(other["state"], "waiting_for_worker", "{other}");
    let queued = t2
        .host
        .request(json!({"t":"analysis.request","game_id":first}))
        .await;
    assert_eq!(queued["state"], "waiting_for_worker", "{queued}");

    // A game not finished cannot be reviewed.
    let mut live = Table::open(&server, "unane", json!({"width":4,"height":3}), "public").await;
    let live_id = live.game_id.clone();
    let refused = live
        .host
        .request(json!({"t":"analysis.request","game_id":live_id}))
        .await;
    assert_eq!(refused["code"], "not_found", "{refused}");

    // A worker arrives: both games are reviewed.
    let worker = Worker::start(&server, "late-worker", FAST);
    let done = analysis_state(&server, &first, "done", Duration::from_secs(60)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    analysis_state(&server, &second, "done", Duration::from_secs(60)).await;
    // The first review done, its player may ask for another.
    let (t3, _, _) = hung_game(&server, &server).await;
    let next = t
        .host
        .request(json!({"t":"analysis.request","game_id":t3.game_id}))
        .await;
    assert_eq!(next["t"], "analysis", "{next}");
    drop(worker);
}

#[tokio::test]
async fn a_worker_killed_mid_job_leaves_it_to_another_and_one_result_is_stored() {
    let log = TempDir::new("analysis-log");
    let log_file = log.0.join("server.log");
    let server = Server::start_logging(LOOSE, &log_file);
    // The first worker searches for seconds per position: it is killed mid-job.
    let mut slow = Worker::start(
        &server,
        "slow-worker",
        &["--playouts", "100000000", "--position-ms", "3000"],
    );
    slow.line_starting("analysis worker", Duration::from_secs(20));
    let (mut t, ply, wins) = hung_game(&server, &server).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let game_id = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":game_id}))
        .await;
    assert_eq!(asked["t"], "analysis", "{asked}");
    let job = slow.line_starting("job ", Duration::from_secs(10));
    analysis_state(&server, &game_id, "running", Duration::from_secs(2)).await;
    slow.kill9();

    let fast = Worker::start(&server, "fast-worker", FAST);
    let done = analysis_state(&server, &game_id, "done", Duration::from_secs(60)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    let taken = fast.line_starting("job ", Duration::from_secs(5));
    assert_ne!(
        job.split(' ').nth(1),
        taken.split(' ').nth(1),
        "a new lease"
    );
    fast.line_starting("job ", Duration::from_secs(5));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let logged = std::fs::read_to_string(&log_file).unwrap_or_default();
    assert_eq!(
        logged.matches("analysis stored").count(),
        1,
        "exactly one result stored"
    );
}

#[tokio::test]
async fn a_worker_on_another_node_serves_the_cluster() {
    let redis = RedisServer::start();
    let node = |id: &str| {
        let mut args = redis.server_args("an");
        args.extend(["--cluster", "--node-id", id, "--lease-ms", "1500"].map(String::from));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start_with(&refs)
    };
    let (a, b) = (node("na"), node("nb"));
    let worker = Worker::start(&b, "cluster-worker", FAST);
    worker.line_starting("analysis worker", Duration::from_secs(20));
    let (mut t, ply, wins) = hung_game(&a, &a).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let game_id = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":game_id}))
        .await;
    assert_eq!(asked["t"], "analysis", "{asked}");
    assert_ne!(asked["state"], "waiting_for_worker", "{asked}");
    let done = analysis_state(&a, &game_id, "done", Duration::from_secs(60)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    // The other node serves the same stored review.
    let there = analysis_state(&b, &game_id, "done", Duration::from_secs(1)).await;
    assert_eq!(there["result"], done["result"]);
}

/// The web page of a finished game: "Analyse" asks for the review, which waits for a worker
/// while there is none; once a worker has done it, the evaluation graph and the blunder
/// with the engine's move are shown, in the review and on the move list.
#[tokio::test]
async fn the_game_page_shows_the_graph_and_the_marked_blunder() {
    let Some(web) = Web::start("analysis-browser") else {
        return;
    };
    let server = Server::start();
    let (t, ply, wins) = hung_game(&server, &server).await;
    let c = &web.page("reviewer").await;
    let until = |what: &'static str, script: String| async move {
        until_within(c, what, &script, Duration::from_secs(60)).await
    };
    c.goto(&format!("http://{}/g/{}", server.addr, t.game_id))
        .await
        .expect("open the game page");
    until(
        "the Analyse button",
        "return !!document.querySelector('#analyse')".into(),
    )
    .await;
    c.execute("document.querySelector('#analyse').click()", vec![])
        .await
        .expect("click");
    let waiting = until(
        "the waiting state",
        "const s = document.querySelector('#analysis-state'); \
         return s && s.dataset.state === 'waiting_for_worker' && s.textContent"
            .into(),
    )
    .await;
    assert!(
        waiting
            .as_str()
            .unwrap()
            .contains("waiting for an analysis worker"),
        "{waiting}"
    );
    let _worker = Worker::start(&server, "browser-worker", FAST);
    until(
        "the graph",
        "const p = document.querySelector('#analysis-graph polyline'); \
         return p && p.getAttribute('points').split(' ').length > 2"
            .into(),
    )
    .await;
    let marked = until(
        "the marked blunder",
        format!(
            "const li = document.querySelector('#analysis-marks li[data-ply=\"{ply}\"]'); \
                 const mv = document.querySelector('#moves li[data-ply=\"{ply}\"]'); \
                 return li && mv && li.dataset.mark === 'blunder' && mv.dataset.mark === 'blunder' \
                   && [li.textContent, mv.title]"
        ),
    )
    .await;
    let [review, title] = [&marked[0], &marked[1]].map(|v| v.as_str().unwrap().to_string());
    assert!(review.contains("blunder"), "{review}");
    assert!(
        wins.iter()
            .any(|w| review.contains(&format!("(best: {w})")) && title.contains(w.as_str())),
        "{review} / {title} / {wins:?}"
    );
    let points = c
        .execute(
            "return document.querySelector('#analysis-graph polyline').getAttribute('points')",
            vec![],
        )
        .await
        .expect("points");
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    assert_eq!(points.as_str().unwrap().split(' ').count(), moves + 1);
    // "show" puts the board where the blunder was played.
    c.execute(
        &format!("document.querySelector('#analysis-marks button[data-show=\"{ply}\"]').click()"),
        vec![],
    )
    .await
    .expect("click show");
    until(
            "the board before the blunder",
            format!(
                "return document.querySelector('#replay-ply').textContent === 'Position after {} of {moves} moves'",
                ply - 1
            ),
        )
    .await;
    screenshot(c, "analysis").await;
}

/// The workers' keys of a test server (`--analysis-keys`), in a file kept with the test.
const GOOD_KEY: &str = "k-good-0123456789abcdef";
const WRONG_KEY: &str = "k-wrong-0123456789abcdef";

/// A computer player's connection (as `stoa analyse --serve` makes one).
async fn bot(server: &Server) -> stoa_tests::Client {
    let mut bot = stoa_tests::Client::connect(server).await;
    let w = bot
        .request(json!({"t":"hello","protocol":1,"name":"keyless","bot":true}))
        .await;
    assert_eq!(w["t"], "welcome", "{w}");
    bot
}

/// With `--analysis-keys`, `analysis.serve` without a key or with one not in the file is
/// `forbidden` and no job is handed out (nor by `stoa analyse --serve`, key from the
/// environment); a worker with a key of the file reviews the game; no key is ever logged.
#[tokio::test]
async fn only_a_worker_with_a_key_serves_where_the_server_has_keys() {
    let dir = TempDir::new("analysis-keys");
    let keys = dir.0.join("keys");
    std::fs::write(&keys, format!("# the deployment's workers\n{GOOD_KEY}\n")).unwrap();
    let log = dir.0.join("server.log");
    let mut args = LOOSE.to_vec();
    args.extend(["--analysis-keys", keys.to_str().unwrap()]);
    let server = Server::start_logging_at(&args, &log, "debug");
    let (mut t, ply, wins) = hung_game(&server, &server).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let game_id = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":game_id}))
        .await;
    assert_eq!(asked["state"], "waiting_for_worker", "{asked}");

    let mut b = bot(&server).await;
    for serve in [
        json!({"t":"analysis.serve"}),
        json!({"t":"analysis.serve","key":WRONG_KEY}),
        json!({"t":"analysis.serve","key":""}),
    ] {
        let refused = b.request(serve).await;
        assert_eq!(refused["t"], "error", "{refused}");
        assert_eq!(refused["code"], "forbidden", "{refused}");
        assert_eq!(
            refused["message"], "not an analysis worker key",
            "{refused}"
        );
    }
    let job = tokio::time::timeout(
        Duration::from_millis(1500),
        b.recv_where(|m| m["t"] == "analysis.job"),
    )
    .await;
    assert!(job.is_err(), "a job for a refused worker: {job:?}");
    analysis_state(
        &server,
        &game_id,
        "waiting_for_worker",
        Duration::from_secs(1),
    )
    .await;

    // The client says the refusal and stops (its key from STOA_ANALYSIS_KEY).
    let home = TempDir::new("analysis-wrong-key");
    let out = Command::new(stoa_tests::binary("stoa"))
        .args(["--server", &server.ws_url(), "analyse", "--serve"])
        .env("STOA_CONFIG_DIR", &home.0)
        .env("STOA_ANALYSIS_KEY", WRONG_KEY)
        .env_remove("STOA_SERVER")
        .stdin(Stdio::null())
        .output()
        .expect("stoa analyse --serve");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("error forbidden: not an analysis worker key"),
        "{said}"
    );

    let worker = Worker::start(
        &server,
        "keyed-worker",
        &[FAST, &["--key", GOOD_KEY]].concat(),
    );
    let done = analysis_state(&server, &game_id, "done", Duration::from_secs(60)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    drop(worker);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("analysis stored"), "{logged}");
    for key in [GOOD_KEY, WRONG_KEY] {
        assert!(!logged.contains(key), "a key in the log");
    }
}

/// `--analysis-lease-ms`: a job leased by a worker on a node that dies goes to a worker on
/// another node once the short lease has run out (seconds, not the default minute), and its
/// result is stored once.
#[tokio::test]
async fn a_short_lease_returns_a_dead_nodes_job_to_another_worker() {
    let redis = RedisServer::start();
    let dir = TempDir::new("analysis-lease");
    let node = |id: &str| {
        let mut args = redis.server_args("al");
        args.extend(
            ["--cluster", "--node-id", id, "--lease-ms", "1500"]
                .into_iter()
                .chain(["--analysis-lease-ms", "1500"])
                .map(String::from),
        );
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start_logging(&refs, &dir.0.join(format!("{id}.log")))
    };
    let (mut a, b) = (node("la"), node("lb"));
    // A worker on `a` that searches for seconds per position: it holds the job when `a`
    // dies, and `a` cannot give it back.
    let slow = Worker::start(
        &a,
        "lease-slow-worker",
        &["--playouts", "100000000", "--position-ms", "3000"],
    );
    slow.line_starting("analysis worker", Duration::from_secs(20));
    let (mut t, ply, wins) = hung_game(&b, &b).await;
    let moves = t.host_doc.doc["moves"].as_array().unwrap().len();
    let game_id = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":game_id}))
        .await;
    assert_eq!(asked["t"], "analysis", "{asked}");
    slow.line_starting("job ", Duration::from_secs(10));
    analysis_state(&b, &game_id, "running", Duration::from_secs(2)).await;
    a.kill9();

    // Within the default lease (a minute) only if the short one is used.
    let fast = Worker::start(&b, "lease-fast-worker", FAST);
    fast.line_starting("analysis worker", Duration::from_secs(20));
    let done = analysis_state(&b, &game_id, "done", Duration::from_secs(40)).await;
    assert_blunder_at(&done["result"], ply, &wins, moves);
    fast.line_starting("job ", Duration::from_secs(5));
    let logged = std::fs::read_to_string(dir.0.join("lb.log")).unwrap_or_default();
    assert_eq!(logged.matches("analysis stored").count(), 1, "{logged}");
}
