//! Points of the wire contract (`protocol/docs/PROTOCOL.md`) the other conformance files do
//! not hold: the crowd outside the versioned document, and refusals that change nothing.

use std::time::Duration;

use serde_json::json;
use stoa_tests::{side_of, Client, Server, Table};

/// Contract, version 2 and game.crowd: a player's online flag travels in `game.crowd` at
/// once and never moves `seq`; a spectator's `since` stays valid across a player's
/// disconnect and reconnect (no diff, just the crowd and `ok`).
#[tokio::test]
async fn presence_changes_arrive_in_the_crowd_and_never_move_seq() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "public").await;
    let g = t.game_id.clone();
    t.step(1).await;
    let seq = t.host_doc.seq;
    let mut spec = Client::guest(&server, "spec").await;
    let snap = spec.request(json!({"t":"game.watch","game_id":g})).await;
    assert_eq!(snap["seq"].as_u64(), Some(seq));
    let guest_side = side_of(&snap["doc"], &t.guest.player_id).unwrap();
    let guest_token = t.guest.token.clone();
    let guest = std::mem::replace(&mut t.guest, Client::connect(&server).await);
    guest.close().await;
    let started = std::time::Instant::now();
    let c = spec
        .crowd_where(&g, |c| c["online"][&guest_side] == false)
        .await;
    assert!(c.get("seq").is_none(), "the crowd carries no seq: {c}");
    assert!(c["spectators"].is_u64(), "{c}");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "online flags go out at once"
    );
    let back = Client::with_token(&server, &guest_token).await;
    assert_eq!(back.welcome["games"], json!([g]));
    spec.crowd_where(&g, |c| c["online"][&guest_side] == true)
        .await;
    // Nothing changed in the game: a watch with `since` = seq replays nothing.
    let rid = spec.rid();
    spec.pending.clear();
    spec.send(json!({"t":"game.watch","rid":rid,"game_id":g,"since":seq}))
        .await;
    let mut seen = Vec::new();
    let answer = loop {
        let m = spec.recv().await;
        if m["rid"] == json!(rid) {
            break m;
        }
        seen.push(m);
    };
    assert_eq!(answer["t"], "ok", "{answer}");
    assert_eq!(answer["seq"].as_u64(), Some(seq));
    assert!(
        seen.iter().all(|m| m["t"] != "game.diff"),
        "no diff for presence: {seen:?}"
    );
    assert!(seen.iter().any(|m| m["t"] == "game.crowd"), "{seen:?}");
}

/// Contract, Errors: "A failed request changes nothing" — a refused `room.create`
/// (bad side, bad clock) opens no room, and a refused `queue.join` keeps the player in its
/// queue; `room.leave` by the host closes a waiting room and a later join gets `conflict`.
#[tokio::test]
async fn refused_room_and_queue_requests_change_nothing() {
    let server = Server::start();
    let mut host = Client::guest(&server, "host").await;
    for bad in [
        json!({"t":"room.create","kind":"staku","side":"purple"}),
        json!({"t":"room.create","kind":"staku","clock":{"kind":"fischer","initial_ms":0,"increment_ms":0}}),
        json!({"t":"room.create","kind":"chess"}),
    ] {
        let e = host.request(bad.clone()).await;
        assert_eq!(e["code"], "invalid_options", "{bad}: {e}");
    }
    let lobby = host.request(json!({"t":"lobby.watch"})).await;
    assert_eq!(lobby["doc"]["rooms"], json!({}), "{lobby}");
    let q = host
        .request(json!({"t":"queue.join","kind":"staku","rated":false}))
        .await;
    assert_eq!(q["t"], "queued", "{q}");
    let e = host
        .request(json!({"t":"queue.join","kind":"staku","clock":{"kind":"sundial"}}))
        .await;
    assert_eq!(e["code"], "invalid_options", "{e}");
    let mut other = Client::guest(&server, "other").await;
    let q2 = other
        .request(json!({"t":"queue.join","kind":"staku","rated":false}))
        .await;
    assert_eq!(q2["t"], "queued", "{q2}");
    // The host was still queued: the two are paired.
    let s = host.recv_where(|m| m["t"] == "game.started").await;
    let s2 = other.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(s["game_id"], s2["game_id"]);
    assert_ne!(s["side"], s2["side"]);

    let room = host
        .request(
            json!({"t":"room.create","kind":"akron","options":{"size":5},"visibility":"private"}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    assert!(code.len() >= 10);
    let ok = host.request(json!({"t":"room.leave","code":code})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let e = other.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(e["code"], "conflict", "{e}");
    let e = other
        .request(json!({"t":"room.join","code":"ZZZZZZZZZZ"}))
        .await;
    assert_eq!(e["code"], "not_found", "{e}");
}
