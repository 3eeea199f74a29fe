//! How games end besides the rules (agreement, abort, abandonment), rematches, the pie-rule
//! swap following the people, spectator counts in batches, and graceful shutdown.

use std::time::Duration;

use serde_json::{json, Value};
use stoa_tests::{side_of, Client, Server, Table, Tracked, LOOSE};

async fn settle(t: &mut Table, seq: u64) {
    t.host_doc.catch_up(&mut t.host, seq).await;
    t.guest_doc.catch_up(&mut t.guest, seq).await;
    assert_eq!(t.host_doc.doc, t.guest_doc.doc);
}

#[tokio::test]
async fn draw_offer_decline_and_agreement() {
    let server = Server::start();
    let mut t = Table::open(&server, "staku", json!({}), "private").await;
    let g = t.game_id.clone();
    let host_side = side_of(&t.host_doc.doc, &t.host.player_id).unwrap();
    let ok = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
        .await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(t.host_doc.doc["draw_offer"], host_side.as_str());
    // Offering twice, or answering one's own offer: conflict.
    let e = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
        .await;
    assert_eq!(e["code"], "conflict");
    let e = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"accept"}))
        .await;
    assert_eq!(e["code"], "conflict");
    let ok = t
        .guest
        .request(json!({"t":"game.draw","game_id":g,"action":"decline"}))
        .await;
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(t.host_doc.doc["draw_offer"], Value::Null);
    // An offer lapses when the offering side acts again.
    let offerer_acts = t.to_act_is_host() == Some(true);
    let ok = if offerer_acts {
        t.host
            .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
            .await
    } else {
        t.guest
            .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
            .await
    };
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert!(t.host_doc.doc["draw_offer"].is_string());
    t.step(1).await;
    assert_eq!(t.host_doc.doc["draw_offer"], Value::Null);
    // Agreement.
    let ok = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
        .await;
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let ok = t
        .guest
        .request(json!({"t":"game.draw","game_id":g,"action":"accept"}))
        .await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(
        t.host_doc.doc["status"],
        json!({"state":"ended","winner":null,"reason":"agreement"})
    );
    assert_eq!(t.host_doc.doc["draw_offer"], Value::Null);
}

#[tokio::test]
async fn abort_only_before_both_sides_acted() {
    let server = Server::start();
    let mut t = Table::open(&server, "staku", json!({}), "private").await;
    let g = t.game_id.clone();
    t.step(1).await;
    t.step(1).await;
    let e = t.host.request(json!({"t":"game.abort","game_id":g})).await;
    assert_eq!(e["code"], "conflict");

    let mut t = Table::open(&server, "staku", json!({}), "private").await;
    let g = t.game_id.clone();
    t.step(1).await;
    let ok = t.guest.request(json!({"t":"game.abort","game_id":g})).await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(
        t.host_doc.doc["status"],
        json!({"state":"ended","winner":null,"reason":"aborted"})
    );
    assert_eq!(t.host_doc.doc["rated"], false);
    let e = t.guest.request(json!({"t":"game.abort","game_id":g})).await;
    assert_eq!(e["code"], "game_over");
}

#[tokio::test]
async fn claim_after_the_abandonment_timeout() {
    let mut args = LOOSE.to_vec();
    args.extend(["--abandon-timeout-ms", "700"]);
    let server = Server::start_with(&args);
    let mut t = Table::open(&server, "akron", json!({"size":5}), "private").await;
    let g = t.game_id.clone();
    let host_side = side_of(&t.host_doc.doc, &t.host.player_id).unwrap();
    let guest_side = side_of(&t.host_doc.doc, &t.guest.player_id).unwrap();
    let both = json!({&host_side: true, &guest_side: true});
    t.host.crowd_where(&g, |c| c["online"] == both).await;
    // Opponent connected: conflict.
    let e = t.host.request(json!({"t":"game.claim","game_id":g})).await;
    assert_eq!(e["code"], "conflict");
    // The guest leaves: online flag drops; too early to claim.
    let guest = std::mem::replace(&mut t.guest, Client::connect(&server).await);
    guest.close().await;
    t.host
        .crowd_where(&g, |c| c["online"][&guest_side] == false)
        .await;
    let e = t.host.request(json!({"t":"game.claim","game_id":g})).await;
    assert_eq!(e["code"], "conflict", "{e}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let ok = t.host.request(json!({"t":"game.claim","game_id":g})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    t.host_doc
        .catch_up(&mut t.host, ok["seq"].as_u64().unwrap())
        .await;
    assert_eq!(
        t.host_doc.doc["status"],
        json!({"state":"ended","winner":host_side,"reason":"abandoned"})
    );
}

#[tokio::test]
async fn rematch_exchanges_sides() {
    let server = Server::start();
    let mut t = Table::open(&server, "staku", json!({"max_stack":2}), "private").await;
    let g = t.game_id.clone();
    let e = t
        .host
        .request(json!({"t":"game.rematch","game_id":g}))
        .await;
    assert_eq!(e["code"], "conflict", "rematch before the end");
    let host_side = side_of(&t.host_doc.doc, &t.host.player_id).unwrap();
    let ok = t.host.request(json!({"t":"game.resign","game_id":g})).await;
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let ok = t
        .host
        .request(json!({"t":"game.rematch","game_id":g}))
        .await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(t.host_doc.doc["rematch"]["requested"], json!([host_side]));
    let ok = t
        .guest
        .request(json!({"t":"game.rematch","game_id":g}))
        .await;
    assert_eq!(ok["t"], "ok");
    let seq = ok["seq"].as_u64().unwrap();
    let mut new_ids = Vec::new();
    for (c, me) in [(&mut t.host, true), (&mut t.guest, false)] {
        let started = c.recv_where(|m| m["t"] == "game.started").await;
        let snap = c.recv_where(|m| m["t"] == "game.snapshot").await;
        let doc = Tracked::from_snapshot(&snap);
        assert_eq!(doc.seq, 0);
        assert_eq!(started["game_id"], snap["game_id"]);
        let side = started["side"].as_str().unwrap();
        assert_eq!(side_of(&doc.doc, &c.player_id).as_deref(), Some(side));
        if me {
            assert_ne!(side, host_side, "sides are exchanged");
        }
        assert_eq!(doc.doc["options"]["max_stack"], 2);
        new_ids.push(started["game_id"].as_str().unwrap().to_string());
    }
    assert_eq!(new_ids[0], new_ids[1]);
    assert_ne!(new_ids[0], g);
    settle(&mut t, seq).await;
    assert_eq!(t.host_doc.doc["rematch"]["game_id"], new_ids[0].as_str());
    // The new game is in both players' unfinished lists.
    let again = Client::with_token(&server, &t.host.token).await;
    assert_eq!(again.welcome["games"], json!([new_ids[0]]));
}

#[tokio::test]
async fn swap_exchanges_players() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "private").await;
    let g = t.game_id.clone();
    t.step(1).await;
    let before = t.host_doc.doc["players"].clone();
    let white_is_host = t.to_act_is_host() == Some(true);
    let c = if white_is_host {
        &mut t.host
    } else {
        &mut t.guest
    };
    let legal = c.request(json!({"t":"game.legal","game_id":g})).await;
    assert!(
        legal["moves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "swap"),
        "{legal}"
    );
    let ok = c
        .request(json!({"t":"game.move","game_id":g,"move":"swap"}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let after = &t.host_doc.doc["players"];
    assert_eq!(after["black"], before["white"]);
    assert_eq!(after["white"], before["black"]);
    assert_eq!(t.host_doc.doc["to_act"], "white");
    // The person who swapped now plays black; the other person (now white) acts next.
    let to_act_is_host = t.to_act_is_host();
    assert_eq!(to_act_is_host, Some(!white_is_host));
    t.play_out(1, 300).await;
    assert_eq!(t.host_doc.doc["status"]["state"], "ended");
}

#[tokio::test]
async fn spectator_count_is_batched() {
    let server = Server::start(); // batches every 200 ms
    let mut t = Table::open(&server, "unane", json!({}), "public").await;
    let g = t.game_id.clone();
    let seq0 = t.host_doc.seq;
    let mut watchers = Vec::new();
    for i in 0..5 {
        let mut w = Client::guest(&server, &format!("w{i}")).await;
        let s = w.request(json!({"t":"game.watch","game_id":g})).await;
        assert_eq!(s["t"], "game.snapshot");
        watchers.push(w);
    }
    // Five joins produce at most a couple of crowd messages, ending at 5, and no diff:
    // the crowd is not part of the versioned document.
    let mut crowds = 0;
    t.host
        .crowd_where(&g, |c| {
            crowds += 1;
            c["spectators"] == 5
        })
        .await;
    assert!(
        crowds <= 3,
        "{crowds} crowds for 5 joins (one came with the snapshot)"
    );
    // A move with the seq from before the joins is not stale.
    let mover = if t.to_act_is_host() == Some(true) {
        &mut t.host
    } else {
        &mut t.guest
    };
    let legal = mover.request(json!({"t":"game.legal","game_id":g})).await;
    assert_eq!(legal["seq"].as_u64(), Some(seq0));
    let mv = legal["moves"][0].clone();
    let ok = mover
        .request(json!({"t":"game.move","game_id":g,"move":mv,"seq":seq0}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(ok["seq"].as_u64(), Some(seq0 + 1));
    // Players are not spectators; unwatching lowers the count.
    let ok = watchers[0]
        .request(json!({"t":"game.unwatch","game_id":g}))
        .await;
    assert_eq!(ok["t"], "ok");
    watchers.pop().unwrap().close().await;
    t.host.crowd_where(&g, |c| c["spectators"] == 3).await;
}

#[tokio::test]
async fn graceful_shutdown_tells_clients() {
    let mut server = Server::start();
    let mut c = Client::guest(&server, "bye").await;
    let mut raw = Client::connect(&server).await;
    let status = tokio::task::spawn_blocking(move || {
        let s = server.terminate();
        (s, server)
    });
    let m = c.recv_where(|m| m["t"] == "shutdown").await;
    assert!(m["message"].is_string());
    assert_eq!(c.closed().await, 1001);
    let _ = raw.closed().await;
    let (status, _server) = status.await.unwrap();
    assert!(
        status.is_some_and(|s| s.success()),
        "clean exit: {status:?}"
    );
}

#[tokio::test]
async fn finished_games_leave_memory_and_stay_readable() {
    let mut args = LOOSE.to_vec();
    args.extend(["--finished-linger-ms", "100"]);
    let server = Server::start_with(&args);
    let mut t = Table::open(&server, "akunur", json!({}), "public").await;
    let g = t.game_id.clone();
    t.step(1).await;
    let ok = t.host.request(json!({"t":"game.resign","game_id":g})).await;
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let final_doc = t.host_doc.doc.clone();
    let final_seq = t.host_doc.seq;
    // Nobody watches any more: the actor leaves memory after the linger time.
    for c in [&mut t.host, &mut t.guest] {
        let ok = c.request(json!({"t":"game.unwatch","game_id":g})).await;
        assert_eq!(ok["t"], "ok");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, health) = server.http_get("/health");
    let health: Value = serde_json::from_str(&health).unwrap();
    assert_eq!(health["games"], 0, "{health}");
    // Still readable and watchable from the store; actions get game_over.
    assert_eq!(server.api_game(&g, None), (200, final_doc.clone()));
    let snap = t.guest.request(json!({"t":"game.watch","game_id":g})).await;
    assert_eq!(snap["t"], "game.snapshot");
    assert_eq!(snap["seq"].as_u64(), Some(final_seq));
    assert_eq!(snap["doc"], final_doc);
    let e = t
        .guest
        .request(json!({"t":"game.move","game_id":g,"move":"pass"}))
        .await;
    assert_eq!(e["code"], "game_over");
    let legal = t.guest.request(json!({"t":"game.legal","game_id":g})).await;
    assert_eq!(legal["moves"], json!([]));
    let mut stranger = Client::guest(&server, "s").await;
    let e = stranger
        .request(json!({"t":"game.resign","game_id":g}))
        .await;
    assert_eq!(e["code"], "forbidden");
}

#[tokio::test]
async fn hello_timeout_closes() {
    let mut args = LOOSE.to_vec();
    args.extend(["--hello-timeout-ms", "200"]);
    let server = Server::start_with(&args);
    let mut c = Client::connect(&server).await;
    let e = c.recv().await;
    assert_eq!(e["code"], "unauthorized");
    assert_eq!(c.closed().await, 1008);
}
