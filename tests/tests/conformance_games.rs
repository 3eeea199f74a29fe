//! Conformance with protocol/docs/PROTOCOL.md's Games, Actions and Rooms sections, black-box: watching
//! (snapshot, since, unwatch, private access), draw offers, abort and rematch settings,
//! room joins answering like `game.watch`.

use serde_json::{json, Value};
use stoa_tests::{side_of, Client, Server, Table, Tracked};

const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

async fn settle(t: &mut Table, seq: u64) {
    t.host_doc.catch_up(&mut t.host, seq).await;
    t.guest_doc.catch_up(&mut t.guest, seq).await;
    assert_eq!(t.host_doc.doc, t.guest_doc.doc);
}

/// The person (player id) behind the document's standing draw offer.
fn offerer(doc: &Value) -> Option<String> {
    let side = doc["draw_offer"].as_str()?;
    doc["players"][side]["id"].as_str().map(str::to_string)
}

/// Every message up to the pong of a rid-less ping (a barrier: answers keep request order).
async fn until_barrier(c: &mut Client) -> Vec<Value> {
    c.send(json!({"t":"ping"})).await;
    let mut seen = std::mem::take(&mut c.pending)
        .into_iter()
        .collect::<Vec<_>>();
    loop {
        let m = c.recv().await;
        if m["t"] == "pong" && m.get("rid").is_none() {
            return seen;
        }
        seen.push(m);
    }
}

/// "game.watch … a private one by room code or seat" and "A client that sees a gap in seq
/// sends game.watch again": a spectator let in with the code (here by `room.join`) may send
/// `game.watch` again, with or without `since`, also from a new connection. Regression: it
/// got `forbidden` without the code.
#[tokio::test]
async fn private_spectator_can_watch_again() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "private").await;
    let g = t.game_id.clone();
    let code = t.code.clone();
    t.step(1).await;

    let mut spec = Client::guest(&server, "spec").await;
    let snap = spec.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    assert_eq!(snap["game_id"], g.as_str());
    let mut view = Tracked::from_snapshot(&snap);

    // Again, without the code: a snapshot.
    let again = spec.request(json!({"t":"game.watch","game_id":g})).await;
    assert_eq!(again["t"], "game.snapshot", "{again}");
    assert!(again["seq"].as_u64().unwrap() >= view.seq);
    view = Tracked::from_snapshot(&again);
    let cur = view.seq;

    // With since (after a move): the missed diff(s), then ok with the current seq.
    t.step(1).await;
    let rid = spec.rid();
    spec.send(json!({"t":"game.watch","rid":rid,"game_id":g,"since":cur}))
        .await;
    let answer = spec.recv_where(|m| m["rid"] == json!(rid)).await;
    assert_eq!(answer["t"], "ok", "{answer}");
    for m in std::mem::take(&mut spec.pending) {
        // Live diffs and their replay: apply each seq once, in order.
        if m["t"] == "game.diff" && m["seq"].as_u64() == Some(view.seq + 1) {
            view.apply(&m);
        }
    }
    assert_eq!(view.seq, answer["seq"].as_u64().unwrap());

    // A new connection of the same spectator (reconnect): still allowed.
    let token = spec.token.clone();
    spec.close().await;
    let mut spec = Client::with_token(&server, &token).await;
    let rid = spec.rid();
    spec.send(json!({"t":"game.watch","rid":rid,"game_id":g,"since":cur}))
        .await;
    let mut replayed = Vec::new();
    let answer = loop {
        let m = spec.recv().await;
        if m["rid"] == json!(rid) {
            break m;
        }
        if m["t"] == "game.diff" {
            replayed.push(m);
        }
    };
    assert_eq!(answer["t"], "ok", "{answer}");
    let seqs: Vec<u64> = replayed
        .iter()
        .map(|d| d["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        ((cur + 1)..=answer["seq"].as_u64().unwrap()).collect::<Vec<_>>()
    );

    // Someone who never gave the code: forbidden, with or without since.
    let mut stranger = Client::guest(&server, "stranger").await;
    for req in [
        json!({"t":"game.watch","game_id":g}),
        json!({"t":"game.watch","game_id":g,"since":0}),
    ] {
        let e = stranger.request(req).await;
        assert_eq!(e["code"], "forbidden", "{e}");
    }
}

/// game.watch: a snapshot; `since` with everything buffered: the missing diffs in order (then
/// `ok` carrying the rid); `since` ahead of the game: a snapshot; `game.unwatch` ends it.
#[tokio::test]
async fn watch_since_and_unwatch() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "public").await;
    let g = t.game_id.clone();
    let mut spec = Client::guest(&server, "spec").await;
    let snap = spec.request(json!({"t":"game.watch","game_id":g})).await;
    assert_eq!(snap["t"], "game.snapshot");
    let mut view = Tracked::from_snapshot(&snap);
    let from = view.seq;
    for _ in 0..3 {
        t.step(2).await;
    }
    let now = t.host_doc.seq;
    view.catch_up(&mut spec, now).await;
    // The snapshot plus diffs equals the players' document, and the spectator who joined
    // moved no seq (the crowd is not part of the document).
    assert_eq!(view.doc, t.host_doc.doc);

    // Replay after `from`.
    let rid = spec.rid();
    spec.send(json!({"t":"game.watch","rid":rid,"game_id":g,"since":from}))
        .await;
    let mut replay = Tracked {
        game_id: g.clone(),
        seq: from,
        doc: snap["doc"].clone(),
        diffs: 0,
    };
    spec.pending.clear();
    let answer = loop {
        let m = spec.recv().await;
        if m["rid"] == json!(rid) {
            break m;
        }
        if m["t"] == "game.crowd" {
            continue;
        }
        assert_eq!(m["t"], "game.diff", "{m}");
        // Live diffs may interleave before the replay: apply each seq once, in order.
        if m["seq"].as_u64() == Some(replay.seq + 1) {
            replay.apply(&m);
        }
    };
    assert_eq!(answer["t"], "ok");
    assert_eq!(answer["seq"].as_u64().unwrap(), replay.seq);
    assert!(replay.seq >= now);

    // Ahead of the game: a snapshot.
    let ahead = spec
        .request(json!({"t":"game.watch","game_id":g,"since":replay.seq + 100}))
        .await;
    assert_eq!(ahead["t"], "game.snapshot", "{ahead}");

    // Unwatch: ok, then no more diffs of this game.
    let ok = spec.request(json!({"t":"game.unwatch","game_id":g})).await;
    assert_eq!(ok["t"], "ok");
    let before = t.host_doc.seq;
    t.step(2).await;
    let after = t.host_doc.seq;
    assert!(after > before);
    let seen = until_barrier(&mut spec).await;
    assert!(
        !seen
            .iter()
            .any(|m| m["t"] == "game.diff" && m["seq"].as_u64().unwrap() >= after),
        "no diff after unwatch: {seen:?}"
    );
    // game.legal answers the side to act's moves with the current seq.
    let legal = spec.request(json!({"t":"game.legal","game_id":g})).await;
    assert_eq!(legal["t"], "legal");
    assert_eq!(legal["game_id"], g.as_str());
    assert!(legal["seq"].as_u64().unwrap() >= after);
    assert!(!legal["moves"].as_array().unwrap().is_empty());
}

/// "An offer stands until the opponent answers or the offering side acts again": the
/// opponent acting without answering leaves it standing; the offerer's next action lifts it.
#[tokio::test]
async fn draw_offer_stands_until_answered_or_the_offerer_acts() {
    let server = Server::start();
    let mut t = Table::open(&server, "staku", json!({}), "private").await;
    let g = t.game_id.clone();
    // The side not to act offers.
    let host_acts = t.to_act_is_host().unwrap();
    let offerer_id = if host_acts {
        t.guest.player_id.clone()
    } else {
        t.host.player_id.clone()
    };
    let ok = if host_acts {
        t.guest
            .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
            .await
    } else {
        t.host
            .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
            .await
    };
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(ok["seq"].as_u64().unwrap(), t.host_doc.seq + 1);
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    assert_eq!(
        offerer(&t.host_doc.doc).as_deref(),
        Some(offerer_id.as_str())
    );
    assert_eq!(
        t.host_doc.doc["draw_offer"].as_str(),
        side_of(&t.host_doc.doc, &offerer_id).as_deref()
    );
    // The opponent acts (without answering): the offer stands.
    let offerer_is_host = offerer_id == t.host.player_id;
    while t.to_act_is_host() == Some(!offerer_is_host) {
        t.step(5).await.expect("game on");
        assert_eq!(
            offerer(&t.host_doc.doc).as_deref(),
            Some(offerer_id.as_str()),
            "the offer stands while the opponent acts"
        );
    }
    // The offering side acts again: the offer lapses (in the same diff as the move).
    t.step(5).await.expect("game on");
    assert_eq!(t.host_doc.doc["draw_offer"], Value::Null);
    // It can no longer be accepted.
    let e = if offerer_is_host {
        t.guest
            .request(json!({"t":"game.draw","game_id":g,"action":"accept"}))
            .await
    } else {
        t.host
            .request(json!({"t":"game.draw","game_id":g,"action":"accept"}))
            .await
    };
    assert_eq!(e["code"], "conflict", "{e}");

    // An offer, then the opponent resigns: the game ends by resignation, no offer left.
    let ok = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
        .await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let ok = t
        .guest
        .request(json!({"t":"game.resign","game_id":g}))
        .await;
    assert_eq!(ok["t"], "ok");
    settle(&mut t, ok["seq"].as_u64().unwrap()).await;
    let host_side = side_of(&t.host_doc.doc, &t.host.player_id).unwrap();
    assert_eq!(
        t.host_doc.doc["status"],
        json!({"state":"ended","winner":host_side,"reason":"resign"})
    );
    assert_eq!(t.host_doc.doc["draw_offer"], Value::Null);
    assert_eq!(t.host_doc.doc["to_act"], Value::Null);
    // Draw actions on an ended game: game_over.
    for action in ["offer", "accept", "decline"] {
        let e = t
            .host
            .request(json!({"t":"game.draw","game_id":g,"action":action}))
            .await;
        assert_eq!(e["code"], "game_over", "{e}");
    }
}

/// "game.abort … the game ends aborted, unrated" and "game.rematch … a new game with the same
/// settings": the rematch of an aborted rated game is rated again. Regression: it inherited
/// the abort's unrating.
#[tokio::test]
async fn rematch_after_abort_keeps_the_settings() {
    let server = Server::start();
    let mut host = Client::guest(&server, "host").await;
    let mut guest = Client::guest(&server, "guest").await;
    let room = host
        .request(
            json!({"t":"room.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"none"},"rated":true,"visibility":"private","side":"white"}),
        )
        .await;
    assert_eq!(room["t"], "room", "{room}");
    assert_eq!(room["room"]["rated"], true);
    let code = room["room"]["code"].as_str().unwrap().to_string();
    let joined = guest.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let snap = host.recv_where(|m| m["t"] == "game.snapshot").await;
    let g = snap["game_id"].as_str().unwrap().to_string();
    assert_eq!(snap["doc"]["rated"], true);
    assert_eq!(snap["doc"]["status"]["state"], "playing");
    guest.recv_where(|m| m["t"] == "game.snapshot").await;

    let ok = host.request(json!({"t":"game.abort","game_id":g})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let (_, doc) = server.api_game(&g, Some(&code));
    assert_eq!(
        doc["status"],
        json!({"state":"ended","winner":null,"reason":"aborted"})
    );
    assert_eq!(doc["rated"], false);

    for c in [&mut host, &mut guest] {
        let ok = c.request(json!({"t":"game.rematch","game_id":g})).await;
        assert_eq!(ok["t"], "ok", "{ok}");
    }
    for (c, side) in [(&mut host, "black"), (&mut guest, "white")] {
        let started = c
            .recv_where(|m| m["t"] == "game.started" && m["game_id"] != g.as_str())
            .await;
        assert_eq!(started["side"], side, "sides exchanged");
        let snap = c
            .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == started["game_id"])
            .await;
        assert_eq!(snap["seq"], 0);
        assert_eq!(snap["doc"]["rated"], true, "same settings: rated");
        assert_eq!(snap["doc"]["options"], json!({"width":4,"height":3}));
        assert_eq!(snap["doc"]["visibility"], "private");
        assert_eq!(snap["doc"]["status"]["state"], "playing");
    }
}

/// Rooms: the answer's shape, the code's format, the host re-joining its waiting room,
/// joining a started room answering like `game.watch`, leaving, closed rooms.
#[tokio::test]
async fn room_rules() {
    let server = Server::start();
    let mut host = Client::guest(&server, "host").await;
    let mut guest = Client::guest(&server, "guest").await;
    let mut third = Client::guest(&server, "third").await;
    for visibility in ["private", "public"] {
        let room = host
            .request(
                json!({"t":"room.create","kind":"akron","options":{"size":4},
                "clock":{"kind":"none"},"rated":false,"visibility":visibility,"side":"horz"}),
            )
            .await;
        assert_eq!(room["t"], "room", "{room}");
        let r = &room["room"];
        let code = r["code"].as_str().unwrap();
        assert!(code.len() >= 10, "{code}");
        assert!(code.chars().all(|c| CROCKFORD.contains(c)), "{code}");
        assert_eq!(r["kind"], "akron");
        assert_eq!(r["visibility"], visibility);
        assert_eq!(r["rated"], false);
        assert_eq!(r["status"], "waiting");
        assert_eq!(r["host"]["id"], host.player_id.as_str());
        assert_eq!(r["host"]["name"], "host");
        assert_eq!(r["seats"]["horz"]["id"], host.player_id.as_str());
        assert_eq!(r["seats"]["vert"], Value::Null);
    }

    let room = host
        .request(
            json!({"t":"room.create","kind":"akron","options":{"size":4},"visibility":"private"}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    // The host joining its own waiting room changes nothing.
    let same = host.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(same["t"], "room", "{same}");
    assert_eq!(same["room"]["status"], "waiting");
    // A typed code: lower case and dashes are fine.
    let typed = format!("{}-{}", &code[..5], &code[5..]).to_lowercase();
    let joined = guest.request(json!({"t":"room.join","code":typed})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    assert_eq!(joined["room"]["code"], code.as_str());
    let started = guest.recv_where(|m| m["t"] == "game.started").await;
    let g = started["game_id"].as_str().unwrap().to_string();
    let snap = guest.recv_where(|m| m["t"] == "game.snapshot").await;
    assert_eq!(snap["game_id"], g.as_str());
    assert!(snap.get("rid").is_none());
    let seats = joined["room"]["seats"].as_object().unwrap();
    assert!(seats.values().all(|s| s.is_object()), "both seats taken");
    host.recv_where(|m| m["t"] == "game.started" && m["game_id"] == g.as_str())
        .await;

    // Full and started: like game.watch (a snapshot carrying the rid), for a third player
    // and for a seated one.
    for c in [&mut third, &mut guest] {
        let rid = c.rid();
        c.send(json!({"t":"room.join","rid":rid,"code":code})).await;
        let seen = until_barrier(c).await;
        let answers: Vec<&Value> = seen.iter().filter(|m| m["rid"] == json!(rid)).collect();
        assert_eq!(answers.len(), 1, "{seen:?}");
        assert_eq!(answers[0]["t"], "game.snapshot", "{}", answers[0]);
        assert_eq!(answers[0]["game_id"], g.as_str());
        assert_eq!(answers[0]["doc"]["id"], g.as_str());
    }
    // Leaving a started room changes nothing for the game.
    let ok = host.request(json!({"t":"room.leave","code":code})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let (_, doc) = server.api_game(&g, Some(&code));
    assert_eq!(doc["status"]["state"], "playing");

    // The host leaving a waiting room closes it: joining it is a conflict, for anyone.
    let room = host
        .request(json!({"t":"room.create","kind":"staku","visibility":"public"}))
        .await;
    let closed = room["room"]["code"].as_str().unwrap().to_string();
    let ok = host.request(json!({"t":"room.leave","code":closed})).await;
    assert_eq!(ok["t"], "ok");
    for c in [&mut guest, &mut host] {
        let e = c.request(json!({"t":"room.join","code":closed})).await;
        assert_eq!(e["code"], "conflict", "{e}");
    }
    // Unknown codes.
    let e = third
        .request(json!({"t":"room.join","code":"0000000000"}))
        .await;
    assert_eq!(e["code"], "not_found");
    let e = third
        .request(json!({"t":"room.leave","code":"0000000000"}))
        .await;
    assert_eq!(e["code"], "not_found");
}
