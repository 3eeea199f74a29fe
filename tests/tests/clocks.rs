//! Clocks in live games, end to end: the real server binary, real websockets.
//!
//! - A Fischer 2+0-second game where one side stops moving is flagged by the server within
//!   250 ms of the deadline; both players and a spectator get the `status` diff.
//! - A game nobody moves in is aborted at the (configured) first-action deadline.
//! - The document's clock after every move is exactly what the time control says
//!   (increments, delay, byo-yomi periods; `running`/`since` switching), in a Staku game
//!   whose no-capture counter runs alongside.
//! - Invalid clocks are refused with `invalid_options`.
//!
//! Server times and the test's wall clock are compared directly: the server's time is its
//! wall clock at start advanced by a monotonic clock, on the same machine.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use stoa_tests::{side_of, Client, Server, Table, Tracked, LOOSE};

/// How late the flag (or abort) may reach a client after its deadline.
const SLACK_MS: u64 = 250;

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

/// Applies diffs until the game has ended; returns the wall time the ending diff arrived.
async fn until_ended(client: &mut Client, doc: &mut Tracked) -> u64 {
    doc.absorb_pending(client);
    while doc.doc["status"]["state"] != "ended" {
        let d = client.next_diff(&doc.game_id).await;
        doc.apply(&d);
        if doc.doc["status"]["state"] == "ended" {
            return wall_ms();
        }
    }
    wall_ms()
}

/// A spectator of the table's private game (joins with the code: answered with a snapshot).
async fn spectator(server: &Server, table: &Table) -> (Client, Tracked) {
    let mut watcher = Client::guest(server, "watcher").await;
    let snap = watcher
        .request(json!({"t":"room.join","code":table.code}))
        .await;
    let doc = Tracked::from_snapshot(&snap);
    (watcher, doc)
}

/// Waits until the three views have ended; returns the latest arrival.
async fn all_see_the_end(table: &mut Table, watcher: &mut Client, watched: &mut Tracked) -> u64 {
    let Table {
        host,
        guest,
        host_doc,
        guest_doc,
        ..
    } = table;
    let (a, b, c) = tokio::join!(
        until_ended(host, host_doc),
        until_ended(guest, guest_doc),
        until_ended(watcher, watched),
    );
    assert_eq!(host_doc.doc, guest_doc.doc);
    assert_eq!(host_doc.doc, watched.doc);
    a.max(b).max(c)
}

#[tokio::test]
async fn fischer_two_seconds_flag_reaches_players_and_spectator_on_time() {
    flag_on_time(&Server::start()).await;
}

/// Threads of a process whose name starts with `prefix` (Linux names them in `comm`).
fn threads_named(pid: u32, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the server's threads")
        .filter_map(Result::ok)
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with(prefix))
        })
        .count()
}

/// A server on one thread (`--threads 1`, and what a process that may use one core picks):
/// its timers, sockets and game actors share that thread, and the flag still falls on time.
#[tokio::test]
async fn one_thread_runs_everything_and_flags_on_time() {
    let mut args = LOOSE.to_vec();
    args.extend(["--threads", "1"]);
    let server = Server::start_with(&args);
    assert_eq!(threads_named(server.pid(), "tokio-rt-worker"), 0);
    flag_on_time(&server).await;

    // Given one core (`taskset`), it sizes itself the same way; given two, it runs two
    // workers.
    let pinned = Server::start_under(&["taskset", "-c", "0"], LOOSE);
    assert_eq!(threads_named(pinned.pid(), "tokio-rt-worker"), 0);
    let mut args = LOOSE.to_vec();
    args.extend(["--threads", "2"]);
    let two = Server::start_with(&args);
    // A new thread names itself once it first runs: on a busy machine the second worker
    // may still carry the process's name when the server already listens.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut workers = threads_named(two.pid(), "tokio-rt-worker");
    while workers < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        workers = threads_named(two.pid(), "tokio-rt-worker");
    }
    assert_eq!(workers, 2);
}

/// A Fischer 2+0 game where the side to act stops moving: the flag reaches both players
/// and a spectator within [`SLACK_MS`] of the deadline, and the document says so.
async fn flag_on_time(server: &Server) {
    let clock = json!({"kind":"fischer","initial_ms":2000,"increment_ms":0});
    let mut table = Table::open_with_clock(server, "staku", json!({}), clock, "private").await;
    let (mut watcher, mut watched) = spectator(server, &table).await;
    let c = &table.host_doc.doc["clock"];
    assert_eq!(c["kind"], "fischer");
    assert_eq!(c["initial_ms"], 2000);
    assert_eq!(c["increment_ms"], 0);
    assert_eq!(c["remaining_ms"], json!({"white": 2000, "black": 2000}));
    assert_eq!(c["running"], Value::Null);
    assert_eq!(c["since"], Value::Null);

    // Both sides make their first action; then the first side is to act and stops moving.
    table.step(1).await.expect("white moves");
    table.step(1).await.expect("black moves");
    let doc = table.host_doc.doc.clone();
    let running = doc["clock"]["running"]
        .as_str()
        .expect("a clock runs")
        .to_string();
    assert_eq!(doc["to_act"], running.as_str());
    let since = doc["clock"]["since"].as_u64().expect("since");
    let remaining = doc["clock"]["remaining_ms"][&running].as_u64().unwrap();
    assert_eq!(remaining, 2000, "first actions are not charged");
    let deadline = since + remaining;

    let arrived = all_see_the_end(&mut table, &mut watcher, &mut watched).await;
    assert!(
        arrived >= deadline && arrived <= deadline + SLACK_MS,
        "flag reached the clients {} ms after the deadline",
        arrived as i64 - deadline as i64
    );
    let doc = &table.host_doc.doc.clone();
    let winner = if running == "white" { "black" } else { "white" };
    assert_eq!(
        doc["status"],
        json!({"state":"ended","winner":winner,"reason":"timeout"})
    );
    assert_eq!(doc["to_act"], Value::Null);
    assert_eq!(doc["clock"]["remaining_ms"][&running], 0);
    assert_eq!(doc["clock"]["remaining_ms"][winner], 2000);
    assert_eq!(doc["clock"]["running"], Value::Null);
    assert_eq!(doc["clock"]["since"], Value::Null);
    // A fresh snapshot and HTTP agree; a late move gets game_over.
    let fresh = table.snapshot().await;
    assert_eq!(fresh["doc"], *doc);
    let g = table.game_id.clone();
    let loser = if side_of(doc, &table.host.player_id).as_deref() == Some(running.as_str()) {
        &mut table.host
    } else {
        &mut table.guest
    };
    let e = loser
        .request(json!({"t":"game.move","game_id":g,"move":"a1-a2"}))
        .await;
    assert_eq!(e["code"], "game_over", "{e}");
    // `ping` answers the server's time, on the same clock as `since`.
    let before = wall_ms();
    let pong = watcher.request(json!({"t":"ping"})).await;
    assert_eq!(pong["t"], "pong");
    let server_time = pong["server_time"].as_u64().expect("server_time");
    assert!(
        server_time + 50 >= before && server_time <= wall_ms() + 50,
        "{pong}"
    );
}

#[tokio::test]
async fn a_game_nobody_moves_in_is_aborted_at_the_first_action_deadline() {
    let mut args = LOOSE.to_vec();
    args.extend(["--first-action-ms", "1000"]);
    let server = Server::start_with(&args);
    let clock = json!({"kind":"fischer","initial_ms":300000,"increment_ms":3000});
    let mut table =
        Table::open_with_clock(&server, "akron", json!({"size":4}), clock, "private").await;
    let (mut watcher, mut watched) = spectator(&server, &table).await;
    let deadline = table.host_doc.doc["clock"]["first_action_deadline"]
        .as_u64()
        .expect("first_action_deadline");
    let arrived = all_see_the_end(&mut table, &mut watcher, &mut watched).await;
    assert!(
        arrived >= deadline && arrived <= deadline + SLACK_MS,
        "abort reached the clients {} ms after the deadline",
        arrived as i64 - deadline as i64
    );
    let doc = &table.host_doc.doc;
    assert_eq!(
        doc["status"],
        json!({"state":"ended","winner":null,"reason":"aborted"})
    );
    assert_eq!(doc["rated"], false);
    assert_eq!(doc["moves"], json!([]));
    assert_eq!(
        doc["clock"]["remaining_ms"],
        json!({"vert": 300000, "horz": 300000})
    );
}

/// The most lag credit a turn may get in these tests: a loopback round trip on a busy
/// machine.
const LAG_SLACK_MS: u64 = 10;

/// What the time control does to the mover's clock over one timed turn of `elapsed_ms`
/// charged (the turn's time less any lag credit). Returns (main, periods).
fn expected_after_turn(clock: &Value, main: u64, periods: u64, elapsed: u64) -> (u64, u64) {
    match clock["kind"].as_str().unwrap() {
        "fischer" => (
            main - elapsed + clock["increment_ms"].as_u64().unwrap(),
            periods,
        ),
        "delay" => (
            main - elapsed.saturating_sub(clock["delay_ms"].as_u64().unwrap()),
            periods,
        ),
        "byoyomi" => {
            if elapsed <= main {
                (main - elapsed, periods)
            } else {
                let used = (elapsed - main) / clock["period_ms"].as_u64().unwrap();
                (0, periods - used)
            }
        }
        other => panic!("{other}"),
    }
}

/// Plays `turns` moves of Staku with `clock`, checking after each the whole clock object
/// against the time control, and the no-capture counter in `state`.
async fn clocked_staku(server: &Server, clock: Value, turns: usize, seed: u64) -> Table {
    let mut table = Table::open_with_clock(
        server,
        "staku",
        json!({"max_stack":2}),
        clock.clone(),
        "private",
    )
    .await;
    let start = table.host_doc.doc.clone();
    let c = &start["clock"];
    for (k, v) in clock.as_object().unwrap() {
        assert_eq!(&c[k], v, "the document's clock carries the control's {k}");
    }
    let initial = clock["initial_ms"].as_u64().unwrap();
    assert_eq!(
        c["remaining_ms"],
        json!({"white": initial, "black": initial})
    );
    if clock["kind"] == "byoyomi" {
        let p = clock["periods"].as_u64().unwrap();
        assert_eq!(c["periods_left"], json!({"white": p, "black": p}));
    }
    assert_eq!(start["state"]["no_capture_counter"], 20);
    let mut timed_turns = 0;
    for _ in 0..turns {
        let before = table.host_doc.doc.clone();
        let Some(mv) = table.step(seed).await else {
            break;
        };
        let after = table.host_doc.doc.clone();
        let mover = before["to_act"].as_str().unwrap();
        let other = if mover == "white" { "black" } else { "white" };
        let (cb, ca) = (&before["clock"], &after["clock"]);
        // The no-capture counter runs: down by one per turn, or back to 20 on a capture.
        let (nb, na) = (
            before["state"]["no_capture_counter"].as_u64().unwrap(),
            after["state"]["no_capture_counter"].as_u64().unwrap(),
        );
        assert!(na == nb - 1 || na == 20, "counter {nb} -> {na} after {mv}");
        // The opponent's clock is untouched by the mover's turn.
        assert_eq!(ca["remaining_ms"][other], cb["remaining_ms"][other]);
        if after["status"]["state"] == "ended" {
            assert_eq!(ca["running"], Value::Null);
            break;
        }
        if let Some(since_before) = cb["since"].as_u64() {
            // A timed turn: charged exactly the time between the two `since`s.
            timed_turns += 1;
            assert_eq!(cb["running"], mover);
            let since_after = ca["since"].as_u64().unwrap();
            let elapsed = since_after - since_before;
            let periods = |c: &Value| c["periods_left"][mover].as_u64().unwrap_or(0);
            // Less the player's lag credit: pings are far apart, but the first one of
            // each side still measures a round trip, a millisecond or two when the
            // machine is busy (the credit is capped by that round trip).
            let charged = |credit: u64| {
                expected_after_turn(
                    &clock,
                    cb["remaining_ms"][mover].as_u64().unwrap(),
                    periods(cb),
                    elapsed.saturating_sub(credit),
                )
            };
            let shown = (ca["remaining_ms"][mover].as_u64().unwrap(), periods(ca));
            assert!(
                (0..=LAG_SLACK_MS).any(|credit| charged(credit) == shown),
                "{mv}: {cb} -> {ca}: expected {:?} less at most {LAG_SLACK_MS} ms of lag credit",
                charged(0)
            );
        } else {
            // First actions are not charged.
            assert_eq!(ca["remaining_ms"], cb["remaining_ms"]);
        }
        let both_started = after["moves"].as_array().unwrap().len() >= 2;
        if both_started {
            assert_eq!(
                ca["running"], other,
                "the clock switches to the side to act"
            );
            assert!(ca["since"].as_u64().unwrap() >= cb["since"].as_u64().unwrap_or(0));
            assert_eq!(ca["first_action_deadline"], Value::Null);
        } else {
            assert_eq!(ca["running"], Value::Null);
            assert!(ca["first_action_deadline"].is_u64());
        }
    }
    assert!(timed_turns > 0);
    table
}

/// Pings far apart: the server measures no round trip, so no lag credit blurs the sums.
fn no_pings() -> Vec<&'static str> {
    let mut args = LOOSE.to_vec();
    args.extend(["--ping-interval-ms", "600000"]);
    args
}

#[tokio::test]
async fn fischer_increments_and_the_no_capture_counter_run_together_to_a_draw() {
    let server = Server::start_with(&no_pings());
    let clock = json!({"kind":"fischer","initial_ms":60000,"increment_ms":1000});
    let mut table = clocked_staku(&server, clock, 400, 11).await;
    // Staku-2 played at random captures nothing: after 20 turns the counter draws the game,
    // and the clock stops with it (the last turn still got its increment).
    let doc = &table.host_doc.doc;
    assert_eq!(
        doc["status"],
        json!({"state":"ended","winner":null,"reason":"no_capture_limit"})
    );
    assert_eq!(doc["moves"].as_array().map(Vec::len), Some(20));
    assert_eq!(doc["state"]["no_capture_counter"], 0);
    assert_eq!(doc["clock"]["running"], Value::Null);
    assert_eq!(doc["clock"]["since"], Value::Null);
    // Every turn took far less than the 1 s increment: both sides gained time.
    for side in ["white", "black"] {
        assert!(
            doc["clock"]["remaining_ms"][side].as_u64().unwrap() > 60000,
            "{doc}"
        );
    }
    // Whatever happened, the final document equals a fresh snapshot.
    let fresh = table.snapshot().await;
    assert_eq!(fresh["doc"], table.host_doc.doc);
}

#[tokio::test]
async fn delay_and_byoyomi_are_visible_in_documents() {
    let server = Server::start_with(&no_pings());
    let delay = json!({"kind":"delay","initial_ms":30000,"delay_ms":2000});
    clocked_staku(&server, delay, 8, 3).await;
    let byoyomi = json!({"kind":"byoyomi","initial_ms":50,"periods":3,"period_ms":5000});
    let table = clocked_staku(&server, byoyomi, 8, 4).await;
    // A 50 ms main time is gone after the first timed turns: byo-yomi periods remain.
    let c = &table.host_doc.doc["clock"];
    assert_eq!(c["kind"], "byoyomi");
    assert!(c["periods_left"]["white"].as_u64().unwrap() <= 3);
}

#[tokio::test]
async fn invalid_clocks_are_refused_with_invalid_options() {
    let server = Server::start();
    let mut a = Client::guest(&server, "a").await;
    for (clock, says) in [
        (json!("5+3"), "must be an object"),
        (json!({"initial_ms":1000}), "clock.kind must be one of"),
        (json!({"kind":"sandglass"}), "clock.kind must be one of"),
        (json!({"kind":"fischer","initial_ms":60000}), "increment_ms"),
        (
            json!({"kind":"fischer","initial_ms":-5,"increment_ms":0}),
            "non-negative",
        ),
        (
            json!({"kind":"fischer","initial_ms":"60000","increment_ms":0}),
            "clock:",
        ),
        (
            json!({"kind":"fischer","initial_ms":0,"increment_ms":0}),
            "at least 1000 ms",
        ),
        (
            json!({"kind":"delay","initial_ms":100,"delay_ms":0}),
            "at least 1000 ms",
        ),
        (
            json!({"kind":"fischer","initial_ms":100000000,"increment_ms":0}),
            "too long",
        ),
        (
            json!({"kind":"byoyomi","initial_ms":0,"periods":5,"period_ms":10}),
            "period_ms",
        ),
        (
            json!({"kind":"byoyomi","initial_ms":0,"periods":100,"period_ms":10000}),
            "periods",
        ),
        (
            json!({"kind":"correspondence","days_per_turn":0}),
            "days_per_turn",
        ),
        (
            json!({"kind":"correspondence","days_per_turn":30}),
            "days_per_turn",
        ),
    ] {
        let e = a
            .request(json!({"t":"room.create","kind":"staku","clock":clock}))
            .await;
        assert_eq!(e["t"], "error", "{clock}: {e}");
        assert_eq!(e["code"], "invalid_options", "{clock}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(says), "{clock}: {message}");
    }
    // A valid clock is echoed in canonical form; a missing clock means none.
    let room = a
        .request(json!({"t":"room.create","kind":"staku",
            "clock":{"kind":"fischer","initial_ms":180000,"increment_ms":2000,"note":"x"}}))
        .await;
    assert_eq!(room["t"], "room", "{room}");
    assert_eq!(
        room["room"]["clock"],
        json!({"kind":"fischer","initial_ms":180000,"increment_ms":2000})
    );
    let room = a.request(json!({"t":"room.create","kind":"staku"})).await;
    assert_eq!(room["room"]["clock"], json!({"kind":"none"}));
}
