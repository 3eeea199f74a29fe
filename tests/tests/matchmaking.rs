//! Matchmaking against the real server: `queue.join` / `queue.leave`, pairing of compatible
//! players only, one queue entry per player (never paired with themself), leaving on
//! disconnect, rating-window widening, and Glicko-2 ratings updated by rated results only.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::lobby::{recv_within, LobbyView};
use stoa_tests::{side_of, Client, Server, Tracked, LOOSE};

/// A server with fast pairing waves (every 200 ms) and extra flags.
fn server(extra: &[&str]) -> Server {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend_from_slice(&["--queue-wave-ms", "200"]);
    args.extend_from_slice(extra);
    Server::start_with(&args)
}

fn join(kind: &str, options: Value, clock: Value, rated: bool) -> Value {
    json!({"t":"queue.join","kind":kind,"options":options,"clock":clock,"rated":rated})
}

fn staku(rated: bool) -> Value {
    join("staku", json!({}), json!({"kind":"none"}), rated)
}

/// Sends a `queue.join` and checks the `queued` answer; returns its position.
async fn queue(c: &mut Client, req: Value) -> u64 {
    let a = c.request(req).await;
    assert_eq!(a["t"], "queued", "queue.join failed: {a}");
    a["position"].as_u64().expect("position")
}

fn is_started(m: &Value) -> bool {
    m["t"] == "game.started"
}

/// Waits for `game.started` and the snapshot that follows it.
async fn started(c: &mut Client) -> (Value, Tracked) {
    let s = c.recv_where(is_started).await;
    let game_id = s["game_id"].as_str().expect("game_id").to_string();
    let snap = c
        .recv_where(move |m| m["t"] == "game.snapshot" && m["game_id"] == game_id.as_str())
        .await;
    (s, Tracked::from_snapshot(&snap))
}

/// Asserts that none of the clients gets `game.started` within `within`.
async fn none_started(clients: &mut [&mut Client], within: Duration) {
    let deadline = Instant::now() + within;
    for c in clients.iter_mut() {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = recv_within(c, left.max(Duration::from_millis(20)), is_started).await;
        assert!(m.is_none(), "unexpected pairing: {m:?}");
    }
}

/// The player's ratings from a new `welcome` (a second connection with its token).
async fn welcome_ratings(server: &Server, c: &Client) -> Value {
    let other = Client::with_token(server, &c.token).await;
    let r = other.welcome["player"]["ratings"].clone();
    other.close().await;
    r
}

#[tokio::test]
async fn compatible_players_are_paired_within_two_seconds() {
    let server = Server::start();
    let mut a = Client::guest(&server, "ann").await;
    let mut b = Client::guest(&server, "bob").await;
    // Written differently, the same queue: a omits the defaults and the clock.
    let ans = a
        .request(json!({"t":"queue.join","kind":"staku","rated":false}))
        .await;
    assert_eq!(
        ans,
        json!({"t":"queued","rid":ans["rid"],"position":1,"queue":{"kind":"staku",
            "options":{"max_stack":3},"clock":{"kind":"none"},"rated":false}})
    );
    let t0 = Instant::now();
    let pos = queue(
        &mut b,
        join(
            "staku",
            json!({"max_stack":3}),
            json!({"kind":"none"}),
            false,
        ),
    )
    .await;
    assert_eq!(pos, 2);
    let (sa, da) = started(&mut a).await;
    let (sb, db) = started(&mut b).await;
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "paired after {:?}",
        t0.elapsed()
    );
    assert_eq!(sa["game_id"], sb["game_id"]);
    assert_eq!(sa["kind"], "staku");
    assert_ne!(sa["side"], sb["side"]);
    assert_eq!(da.doc, db.doc);
    assert_eq!(
        side_of(&da.doc, &a.player_id).as_deref(),
        sa["side"].as_str()
    );
    assert_eq!(
        side_of(&da.doc, &b.player_id).as_deref(),
        sb["side"].as_str()
    );
    assert_eq!(da.doc["rated"], false);
    assert_eq!(da.doc["visibility"], "public");
    assert_eq!(da.doc["options"], json!({"max_stack":3}));
    assert_eq!(da.doc["status"]["state"], "playing");
    // Both are out of the queue: leaving is still answered ok.
    assert_eq!(a.request(json!({"t":"queue.leave"})).await["t"], "ok");

    let (status, metrics) = server.http_get("/metrics");
    assert_eq!(status, 200);
    assert!(
        metrics.contains("stoa_queue_pairings_total{kind=\"staku\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("stoa_queue_wait_seconds_count 2\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("stoa_queue_rating_gap_count 1\n"),
        "{metrics}"
    );
    assert!(metrics.contains("stoa_queue_joins_total 2\n"), "{metrics}");
}

#[tokio::test]
async fn incompatible_players_are_not_paired() {
    let server = server(&[]);
    let mut base = Client::guest(&server, "base").await;
    let mut other_kind = Client::guest(&server, "kind").await;
    let mut other_options = Client::guest(&server, "options").await;
    let mut other_clock = Client::guest(&server, "clock").await;
    let mut other_rated = Client::guest(&server, "rated").await;
    assert_eq!(queue(&mut base, staku(false)).await, 1);
    let fischer = json!({"kind":"fischer","initial_ms":60000,"increment_ms":0});
    for (c, req) in [
        (
            &mut other_kind,
            join("akron", json!({}), json!({"kind":"none"}), false),
        ),
        (
            &mut other_options,
            join(
                "staku",
                json!({"max_stack":2}),
                json!({"kind":"none"}),
                false,
            ),
        ),
        (&mut other_clock, join("staku", json!({}), fischer, false)),
        (&mut other_rated, staku(true)),
    ] {
        assert_eq!(queue(c, req).await, 1, "each is alone in its queue");
    }
    none_started(
        &mut [
            &mut base,
            &mut other_kind,
            &mut other_options,
            &mut other_clock,
            &mut other_rated,
        ],
        Duration::from_millis(1200),
    )
    .await;
    // Alone in its queue, the base player is told how many wait elsewhere.
    let status = recv_within(&mut base, Duration::from_secs(5), |m| {
        m["t"] == "queue.status" && m["other_queues"] == 4
    })
    .await
    .expect("queue.status with 4 others waiting");
    assert_eq!(status["same_queue"], 0);
    assert_eq!(status["position"], 1);
    assert_eq!(status["queue"]["kind"], "staku");

    // A compatible newcomer pairs with the base player only.
    let mut partner = Client::guest(&server, "partner").await;
    assert_eq!(queue(&mut partner, staku(false)).await, 2);
    let (sa, _) = started(&mut base).await;
    let (sb, _) = started(&mut partner).await;
    assert_eq!(sa["game_id"], sb["game_id"]);
    none_started(
        &mut [
            &mut other_kind,
            &mut other_options,
            &mut other_clock,
            &mut other_rated,
        ],
        Duration::from_millis(600),
    )
    .await;
}

#[tokio::test]
async fn leaving_and_disconnecting_remove_the_player() {
    let server = server(&[]);
    let mut watcher = Client::guest(&server, "watcher").await;
    let mut lobby = LobbyView::watch(&mut watcher).await;
    let queued = |n: u64| {
        move |d: &Value| {
            d["queues"].as_object().is_some_and(|q| {
                q.values()
                    .map(|e| e["waiting"].as_u64().unwrap_or(0))
                    .sum::<u64>()
                    == n
            })
        }
    };

    let mut a = Client::guest(&server, "a").await;
    assert_eq!(queue(&mut a, staku(false)).await, 1);
    assert_eq!(a.request(json!({"t":"queue.leave"})).await["t"], "ok");
    let mut b = Client::guest(&server, "b").await;
    assert_eq!(queue(&mut b, staku(false)).await, 1, "a has left");
    none_started(&mut [&mut a, &mut b], Duration::from_millis(600)).await;
    lobby.until(&mut watcher, queued(1)).await;

    // Closing b's only connection takes b out of the queue.
    b.close().await;
    lobby.until(&mut watcher, queued(0)).await;
    let mut c = Client::guest(&server, "c").await;
    assert_eq!(queue(&mut c, staku(false)).await, 1, "b has left");

    // Closing one of c's two connections keeps c queued.
    let c2 = Client::with_token(&server, &c.token).await;
    c2.close().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut d = Client::guest(&server, "d").await;
    assert_eq!(queue(&mut d, staku(false)).await, 2);
    let (sc, _) = started(&mut c).await;
    let (sd, _) = started(&mut d).await;
    assert_eq!(sc["game_id"], sd["game_id"]);
    none_started(&mut [&mut a], Duration::from_millis(300)).await;
}

#[tokio::test]
async fn one_player_on_two_connections_is_never_paired_with_themself() {
    let server = server(&[]);
    let mut p1 = Client::guest(&server, "twice").await;
    let mut p2 = Client::with_token(&server, &p1.token).await;
    assert_eq!(p1.player_id, p2.player_id);
    assert_eq!(queue(&mut p1, staku(true)).await, 1);
    assert_eq!(
        queue(&mut p2, staku(true)).await,
        1,
        "the same entry keeps its place"
    );
    none_started(&mut [&mut p1, &mut p2], Duration::from_millis(1200)).await;

    let mut q = Client::guest(&server, "other").await;
    assert_eq!(queue(&mut q, staku(true)).await, 2);
    let (sq, dq) = started(&mut q).await;
    let (s1, _) = started(&mut p1).await;
    let (s2, _) = started(&mut p2).await;
    assert_eq!(s1["game_id"], sq["game_id"]);
    assert_eq!(s2["game_id"], sq["game_id"]);
    assert_eq!(s1["side"], s2["side"], "both devices play the same seat");
    assert_ne!(s1["side"], sq["side"]);
    let mut ids: Vec<&str> = dq.doc["players"]
        .as_object()
        .expect("players")
        .values()
        .map(|p| p["id"].as_str().expect("id"))
        .collect();
    ids.sort();
    let mut expected = vec![p1.player_id.as_str(), q.player_id.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn rated_results_update_ratings_aborts_do_not_and_far_ratings_pair_after_widening() {
    // Widening: 100 points at join, +50 every 400 ms.
    let server = server(&["--queue-gap-step-ms", "400"]);
    let mut a = Client::guest(&server, "ann").await;
    let mut b = Client::guest(&server, "bob").await;
    let fresh = json!({"rating":1500,"deviation":350,"provisional":true,"games":0});
    for kind in ["unane", "staku", "akron", "akunur"] {
        assert_eq!(a.welcome["player"]["ratings"][kind], fresh, "{}", a.welcome);
    }

    // An aborted rated game changes nothing.
    queue(&mut a, staku(true)).await;
    queue(&mut b, staku(true)).await;
    let (g1, d1) = started(&mut a).await;
    started(&mut b).await;
    assert_eq!(d1.doc["rated"], true);
    for p in d1.doc["players"].as_object().expect("players").values() {
        assert_eq!(p["rating"], 1500);
    }
    let ok = a
        .request(json!({"t":"game.abort","game_id":g1["game_id"]}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(welcome_ratings(&server, &a).await["staku"], fresh);
    assert_eq!(welcome_ratings(&server, &b).await["staku"], fresh);

    // A rated game resigned before both sides made their first action was not played:
    // it is unrated and changes nothing.
    queue(&mut a, staku(true)).await;
    queue(&mut b, staku(true)).await;
    let (g0, _) = started(&mut a).await;
    started(&mut b).await;
    let ok = a
        .request(json!({"t":"game.resign","game_id":g0["game_id"]}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(welcome_ratings(&server, &a).await["staku"], fresh);
    assert_eq!(welcome_ratings(&server, &b).await["staku"], fresh);

    // A rated game that ends with a result after both sides acted updates both players.
    queue(&mut a, staku(true)).await;
    queue(&mut b, staku(true)).await;
    let (g2, _) = started(&mut a).await;
    started(&mut b).await;
    let gid = g2["game_id"].as_str().expect("game_id").to_string();
    for _ in 0..2 {
        // Whoever is to act makes a legal move (one each).
        let mut moved = false;
        for c in [&mut a, &mut b] {
            let legal = c.request(json!({"t":"game.legal","game_id":gid})).await;
            let Some(mv) = legal["moves"][0].as_str().map(str::to_string) else {
                continue;
            };
            let r = c
                .request(json!({"t":"game.move","game_id":gid,"move":mv}))
                .await;
            if r["t"] == "ok" {
                moved = true;
                break;
            }
            assert_eq!(r["code"], "not_your_turn", "{r}");
        }
        assert!(moved, "one of them was to act");
    }
    let ok = a.request(json!({"t":"game.resign","game_id":gid})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let ra = welcome_ratings(&server, &a).await;
    let rb = welcome_ratings(&server, &b).await;
    assert_eq!(
        ra["staku"],
        json!({"rating":1338,"deviation":290,"provisional":true,"games":1})
    );
    assert_eq!(
        rb["staku"],
        json!({"rating":1662,"deviation":290,"provisional":true,"games":1})
    );
    assert_eq!(ra["akron"], fresh, "other kinds are untouched");

    // 324 points apart: the window must widen 5 steps (2 s) before they are paired, and
    // the new game's document shows the new ratings.
    queue(&mut a, staku(true)).await;
    let t0 = Instant::now();
    queue(&mut b, staku(true)).await;
    let (_, d3) = started(&mut a).await;
    let waited = t0.elapsed();
    started(&mut b).await;
    assert!(
        waited >= Duration::from_millis(1600),
        "paired too early: {waited:?}"
    );
    let side_a = side_of(&d3.doc, &a.player_id).expect("a seated");
    let side_b = side_of(&d3.doc, &b.player_id).expect("b seated");
    assert_eq!(d3.doc["players"][side_a.as_str()]["rating"], 1338);
    assert_eq!(d3.doc["players"][side_b.as_str()]["rating"], 1662);
}

#[tokio::test]
async fn queue_join_rejects_bad_settings_and_changes_nothing() {
    let server = server(&[]);
    let mut a = Client::guest(&server, "a").await;
    for (req, code) in [
        (
            join("chess", json!({}), json!({"kind":"none"}), false),
            "invalid_options",
        ),
        (
            join(
                "staku",
                json!({"max_stack":7}),
                json!({"kind":"none"}),
                false,
            ),
            "invalid_options",
        ),
        (
            join(
                "staku",
                json!({}),
                json!({"kind":"fischer","initial_ms":0,"increment_ms":0}),
                false,
            ),
            "invalid_options",
        ),
        (
            join("staku", json!({}), json!({"kind":"sundial"}), false),
            "invalid_options",
        ),
        (json!({"t":"queue.join","options":{}}), "bad_request"),
        (
            json!({"t":"queue.join","kind":"staku","rated":"yes"}),
            "bad_request",
        ),
    ] {
        let e = a.request(req.clone()).await;
        assert_eq!(e["t"], "error", "{req} -> {e}");
        assert_eq!(e["code"], code, "{req} -> {e}");
    }
    assert_eq!(a.request(json!({"t":"queue.leave"})).await["t"], "ok");
    let mut b = Client::guest(&server, "b").await;
    assert_eq!(queue(&mut b, staku(false)).await, 1, "a was never queued");
}
