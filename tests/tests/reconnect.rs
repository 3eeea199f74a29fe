//! Reconnects: a player drops mid-game, comes back with its token and `since`, and gets
//! exactly the missed diffs (or a snapshot when the buffer was exceeded), then continues.
//! Another device of the same player sees the same game.

use serde_json::json;
use stoa_tests::{Client, Server, Table, Tracked, LOOSE};

#[tokio::test]
async fn reconnect_gets_exactly_the_missed_diffs() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":8,"height":7}), "private").await;
    let game_id = t.game_id.clone();
    // Play until it is the guest's turn, so the guest can move while the host is away.
    while t.to_act_is_host() == Some(true) {
        t.step(11).await;
    }
    let token = t.host.token.clone();
    let host_side = stoa_tests::side_of(&t.host_doc.doc, &t.host.player_id).expect("host side");
    let last_seen = t.host_doc.seq;
    let old_host = std::mem::replace(&mut t.host, Client::connect(&server).await);
    old_host.close().await;

    // The guest sees the host go offline (in the crowd: no seq), then moves.
    t.guest
        .crowd_where(&game_id, |c| c["online"][&host_side] == false)
        .await;
    assert_eq!(t.guest_doc.seq, last_seen, "presence never moves seq");
    let mv = t.guest.first_legal(&game_id).await;
    let ok = t
        .guest
        .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
        .await;
    assert_eq!(ok["t"], "ok");
    let after_move = ok["seq"].as_u64().unwrap();
    t.guest_doc.catch_up(&mut t.guest, after_move).await;

    // The host reconnects with its token: welcome lists the game; since = last seen seq.
    let mut host = Client::with_token(&server, &token).await;
    assert_eq!(host.welcome["games"], json!([game_id]));
    let rid = host.rid();
    host.send(json!({"t":"game.watch","rid":rid,"game_id":game_id,"since":last_seen}))
        .await;
    // Exactly the missed diffs, in order, the crowd, then ok with the current seq.
    let mut replayed = Vec::new();
    let mut crowd = None;
    let answer = loop {
        let m = host.recv().await;
        if m["rid"] == json!(rid) {
            break m;
        }
        if m["t"] == "game.crowd" {
            assert!(crowd.is_none(), "one crowd after the diffs: {m}");
            crowd = Some(m);
            continue;
        }
        assert!(crowd.is_none(), "the crowd comes after the diffs: {m}");
        assert_eq!(m["t"], "game.diff", "only diffs before the answer: {m}");
        replayed.push(m);
    };
    assert_eq!(answer["t"], "ok", "{answer}");
    let current = answer["seq"].as_u64().unwrap();
    // Missed: only the move (presence is not a document change).
    assert_eq!(current, after_move);
    let crowd = crowd.expect("a crowd after the replayed diffs");
    assert_eq!(crowd["online"][&host_side], true, "{crowd}");
    let seqs: Vec<u64> = replayed
        .iter()
        .map(|d| d["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, ((last_seen + 1)..=current).collect::<Vec<_>>());
    for d in &replayed {
        t.host_doc.apply(d);
    }
    t.guest_doc.catch_up(&mut t.guest, current).await;
    assert_eq!(t.host_doc.doc, t.guest_doc.doc);

    // And continues: the host's view is live again.
    t.host = host;
    t.play_out(5, 400).await;
    let (_, doc) = server.api_game(&game_id, Some(&t.code));
    assert_eq!(doc, t.host_doc.doc);
    assert_eq!(doc, t.guest_doc.doc);
}

#[tokio::test]
async fn reconnect_after_the_buffer_is_exceeded_gets_a_snapshot() {
    let mut args = LOOSE.to_vec();
    args.extend(["--replay-buffer", "3"]);
    let server = Server::start_with(&args);
    let mut t = Table::open(&server, "unane", json!({"width":8,"height":7}), "private").await;
    let game_id = t.game_id.clone();
    let early = t.host_doc.seq;
    for _ in 0..6 {
        t.step(3).await.expect("game on");
    }
    // A second device of the host, asking since an old seq.
    let mut device = Client::with_token(&server, &t.host.token).await;
    let snap = device
        .request(json!({"t":"game.watch","game_id":game_id,"since":early}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    assert_eq!(snap["seq"].as_u64(), Some(t.host_doc.seq));
    assert_eq!(snap["doc"], t.host_doc.doc);
    // The crowd follows the snapshot.
    device.crowd_where(&game_id, |_| true).await;
    // A recent since is still served from the buffer.
    let recent = t.host_doc.seq - 2;
    let rid = device.rid();
    device
        .send(json!({"t":"game.watch","rid":rid,"game_id":game_id,"since":recent}))
        .await;
    let d1 = device.recv().await;
    let d2 = device.recv().await;
    let crowd = device.recv().await;
    assert_eq!(crowd["t"], "game.crowd", "{crowd}");
    let ok = device.recv().await;
    assert_eq!(d1["seq"].as_u64(), Some(recent + 1));
    assert_eq!(d2["seq"].as_u64(), Some(recent + 2));
    assert_eq!(ok["t"], "ok");
    assert_eq!(ok["rid"], rid);
    // since == current: nothing to replay, just ok.
    let ok = device
        .request(json!({"t":"game.watch","game_id":game_id,"since":t.host_doc.seq}))
        .await;
    assert_eq!(ok["t"], "ok");
    assert_eq!(ok["seq"].as_u64(), Some(t.host_doc.seq));
}

#[tokio::test]
async fn second_device_sees_the_same_game() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":6,"height":5}), "private").await;
    let game_id = t.game_id.clone();
    let mut phone = Client::with_token(&server, &t.host.token).await;
    assert_eq!(phone.player_id, t.host.player_id);
    assert_eq!(phone.welcome["games"], json!([game_id]));
    let snap = phone
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    let mut phone_doc = Tracked::from_snapshot(&snap);
    assert_eq!(phone_doc.doc, t.host_doc.doc);
    // The phone can act for the player too.
    if t.to_act_is_host() == Some(true) {
        let mv = phone.first_legal(&game_id).await;
        let ok = phone
            .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
        let seq = ok["seq"].as_u64().unwrap();
        t.host_doc.catch_up(&mut t.host, seq).await;
        t.guest_doc.catch_up(&mut t.guest, seq).await;
    }
    for _ in 0..4 {
        t.step(9).await;
    }
    phone_doc.catch_up(&mut phone, t.host_doc.seq).await;
    assert_eq!(phone_doc.doc, t.host_doc.doc);
    // Closing one device does not make the player offline.
    phone.close().await;
    for _ in 0..2 {
        t.step(9).await;
    }
    let side = stoa_tests::side_of(&t.host_doc.doc, &t.host.player_id).unwrap();
    let watched = t
        .guest
        .request(json!({"t":"game.watch","game_id":t.game_id,"since":t.guest_doc.seq}))
        .await;
    assert_eq!(watched["t"], "ok", "{watched}");
    // The crowd sent with the answer is the current one.
    let crowd = t.guest.last_crowd(&t.game_id).expect("a crowd");
    assert_eq!(crowd["online"][&side], true, "{crowd}");
}
