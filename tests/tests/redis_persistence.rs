//! What survives a restart over Redis (players by token, finished games, waiting rooms,
//! `since` after a restart), and the key prefix isolating two servers on one Redis.

use serde_json::json;
use stoa_tests::redis::{health, wait_health, RedisServer};
use stoa_tests::{quick_options, side_of, Client, Server, Table, Tracked};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_finished_games_and_rooms_survive_a_restart() {
    let redis = RedisServer::start();
    let server = redis.start_server("keep");

    let mut table = Table::open(&server, "staku", quick_options("staku"), "private").await;
    table.play_out(5, 300).await;
    let game_id = table.game_id.clone();
    let code = table.code.clone();
    let (status, finished) = server.api_game(&game_id, Some(&code));
    assert_eq!(status, 200);
    assert_eq!(finished["status"]["state"], "ended");
    let host_token = table.host.token.clone();
    let host_id = table.host.player_id.clone();
    let host_name = table.host.welcome["player"]["name"].clone();

    // A public room waiting for an opponent, and a live game that ends on a resignation
    // after the restart.
    let mut alice = Client::guest(&server, "alice").await;
    let room = alice
        .request(
            json!({"t":"room.create","kind":"akron","options":quick_options("akron"),
            "clock":{"kind":"none"},"rated":false,"visibility":"public","side":"random"}),
        )
        .await;
    let room_code = room["room"]["code"].as_str().expect("code").to_string();
    let mut live = Table::open(&server, "unane", quick_options("unane"), "public").await;
    live.step(9).await.expect("a move");
    let live_seq = live.host_doc.seq;
    let live_doc = live.host_doc.doc.clone();

    drop(server); // kill -9
    let server = redis.start_server("keep");

    // The player is the same, by token.
    let host = Client::with_token(&server, &host_token).await;
    assert_eq!(host.player_id, host_id);
    assert_eq!(host.welcome["player"]["name"], host_name);
    assert_eq!(
        host.welcome["games"],
        json!([]),
        "the finished game is not unfinished"
    );
    // The finished game reads the same, over HTTP and websocket.
    let (status, again) = server.api_game(&game_id, Some(&code));
    assert_eq!(status, 200);
    assert_eq!(again, finished);
    let mut host = host;
    let snap = host
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(snap["doc"], finished, "{snap}");
    // The crowd follows the snapshot of a finished game too: nobody watching, and the
    // player asking is connected.
    let crowd = host.crowd_where(&game_id, |_| true).await;
    assert_eq!(crowd["spectators"], 0, "{crowd}");
    let me = side_of(&finished, &host.player_id).expect("seated");
    assert_eq!(crowd["online"][&me], true, "{crowd}");
    // A private game stays private.
    assert_eq!(server.api_game(&game_id, None).0, 404);
    // The room of the finished game answers like game.watch.
    let mut watcher = Client::guest(&server, "watcher").await;
    let w = watcher.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(w["t"], "game.snapshot", "{w}");
    assert_eq!(w["doc"], finished);

    // The waiting room is still open: a new player joins and the game starts.
    let mut alice = Client::with_token(&server, &alice.token).await;
    let mut bob = Client::guest(&server, "bob").await;
    let joined = bob.request(json!({"t":"room.join","code":room_code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = alice.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["kind"], "akron");

    // The live game: its players are back with it in `games`. The seq continued where it
    // was (protocol/docs/PROTOCOL.md version 2), so `since` from before the crash stays valid: the
    // answer is the diffs after it (the clock's resume after the downtime), applied to the
    // document the client had, then the crowd.
    let mut p = Client::with_token(&server, &live.host.token).await;
    assert_eq!(p.welcome["games"], json!([live.game_id]));
    let rid = p.rid();
    p.send(json!({"t":"game.watch","rid":rid,"game_id":live.game_id,"since":live_seq}))
        .await;
    let mut tracked = Tracked {
        game_id: live.game_id.clone(),
        seq: live_seq,
        doc: live_doc.clone(),
        diffs: 0,
    };
    let mut crowd = None;
    let answer = loop {
        let m = p.recv().await;
        if m["rid"] == json!(rid) {
            break m;
        }
        match m["t"].as_str() {
            Some("game.diff") => tracked.apply(&m),
            Some("game.crowd") => crowd = Some(m),
            _ => panic!("unexpected before the answer: {m}"),
        }
    };
    assert_eq!(answer["t"], "ok", "{answer}");
    assert_eq!(answer["seq"].as_u64(), Some(tracked.seq));
    assert!(tracked.seq <= live_seq + 1, "no jump in seq");
    let (status, doc) = server.api_game(&live.game_id, None);
    assert_eq!(status, 200);
    assert_eq!(tracked.doc, doc, "the patched document is the server's");
    assert_eq!(doc["moves"], live_doc["moves"]);
    assert_eq!(doc["position"], live_doc["position"]);
    assert_eq!(doc["players"], live_doc["players"]);
    let me = side_of(&doc, &p.player_id).expect("seated");
    let crowd = crowd.expect("the crowd after the diffs");
    for (side, online) in crowd["online"].as_object().expect("online") {
        assert_eq!(
            online,
            &json!(*side == me),
            "only the reconnected player is online"
        );
    }
    let r = p
        .request(json!({"t":"game.resign","game_id":live.game_id}))
        .await;
    assert_eq!(r["t"], "ok", "{r}");
    tracked
        .catch_up(&mut p, r["seq"].as_u64().expect("seq"))
        .await;
    assert_eq!(tracked.doc["status"]["reason"], "resign");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_prefix_isolates_two_servers_on_one_redis() {
    let redis = RedisServer::start();
    let a = redis.start_server("alpha");
    let b = redis.start_server("beta");
    for s in [&a, &b] {
        assert_eq!(
            wait_health(s, 200, std::time::Duration::from_secs(5))["persistence"],
            "redis"
        );
    }
    let mut table = Table::open(&a, "akunur", quick_options("akunur"), "public").await;
    table.step(3).await.expect("a move");
    let game_id = table.game_id.clone();
    assert_eq!(a.api_game(&game_id, None).0, 200);
    assert_eq!(b.api_game(&game_id, None).0, 404);

    // A's token means nothing to B.
    let mut c = Client::connect(&b).await;
    let r = c
        .request(json!({"t":"hello","protocol":1,"token":table.host.token}))
        .await;
    assert_eq!(r["code"], "unauthorized", "{r}");
    // A's room code means nothing to B.
    let mut bob = Client::guest(&b, "bob").await;
    let r = bob
        .request(json!({"t":"room.join","code":table.code}))
        .await;
    assert_eq!(r["code"], "not_found", "{r}");

    // Restarting B recovers none of A's games; restarting A recovers its game.
    drop(b);
    let b = redis.start_server("beta");
    assert_eq!(b.api_game(&game_id, None).0, 404);
    drop(a);
    let a = redis.start_server("alpha");
    let (status, doc) = a.api_game(&game_id, None);
    assert_eq!(status, 200);
    assert_eq!(doc["moves"], table.host_doc.doc["moves"]);
    // Nothing of either is stored outside its prefix.
    let keys = redis.command("KEYS *").expect("KEYS");
    for line in keys
        .lines()
        .filter(|l| !l.starts_with('*') && !l.starts_with('$'))
    {
        assert!(
            line.starts_with("alpha:") || line.starts_with("beta:"),
            "key outside the prefixes: {line}"
        );
    }
}

#[tokio::test]
async fn memory_store_says_persistence_is_off() {
    let server = Server::start();
    let (status, body) = health(&server);
    assert_eq!(status, 200);
    assert_eq!(body["persistence"], "off");
}

/// The restore policy for clocks: time while the server was down is charged to nobody.
/// The turn in progress continues with the time its side had at the last logged action
/// (the server cannot know when it died), and the other side's time is exactly as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_resume_without_charging_the_downtime() {
    let redis = RedisServer::start();
    let server = redis.start_server("clock");
    let clock = json!({"kind":"fischer","initial_ms":600_000,"increment_ms":0});
    let mut t =
        Table::open_with_clock(&server, "staku", quick_options("staku"), clock, "public").await;
    // Both sides make their first action, then one more move: a clock runs.
    for _ in 0..3 {
        t.step(11).await.expect("a move");
    }
    let before = t.host_doc.doc["clock"].clone();
    let running = before["running"]
        .as_str()
        .expect("a clock runs")
        .to_string();
    let game_id = t.game_id.clone();

    drop(server); // kill -9
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let server = redis.start_server("clock");
    let mut p = Client::with_token(&server, &t.host.token).await;
    let snap = p.request(json!({"t":"game.watch","game_id":game_id})).await;
    let after = &snap["doc"]["clock"];
    assert_eq!(after["running"], before["running"], "{after}");
    assert_eq!(
        after["remaining_ms"], before["remaining_ms"],
        "nothing charged: {after}"
    );
    let since_before = before["since"].as_u64().expect("since");
    let since_after = after["since"].as_u64().expect("since");
    assert!(
        since_after >= since_before + 1500,
        "the running side's turn restarts at the restart ({since_before} → {since_after})"
    );
    assert!(snap["doc"]["players"][&running].is_object());
}

/// A game's creation is several writes (the indexes live in other hash slots than the
/// record): a `kill -9` between them must not leave a game nobody can see or an index entry
/// for a game that never was. Both leftovers are made by hand here (the window is a fraction
/// of a millisecond), and the restarted server repairs them: the game is listed again to the
/// player whose list missed it and plays on; the entry without a record is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_inside_a_games_creation_is_repaired_on_restart() {
    let redis = RedisServer::start();
    let server = redis.start_server("half");
    let mut live = Table::open(&server, "unane", quick_options("unane"), "public").await;
    live.step(1).await.expect("a move");
    let game = live.game_id.clone();
    let (host, guest) = (live.host.player_id.clone(), live.guest.player_id.clone());
    let tokens = (live.host.token.clone(), live.guest.token.clone());
    drop(live);
    drop(server); // kill -9
                  // What a crash after the record, before the players' lists, leaves; and a crash after
                  // the recovery index, before the record.
    let zrem = format!("ZREM half:player:{{{guest}}}:unfinished {game}");
    assert!(redis.command(&zrem).unwrap().starts_with(":1"), "{zrem}");
    let ghost = "gnevermade0001";
    let zadd = format!("ZADD half:games:unfinished 1 {ghost}");
    assert!(redis.command(&zadd).unwrap().starts_with(":1"));

    let server = redis.start_server("half");
    let listed = redis.command("ZRANGE half:games:unfinished 0 -1").unwrap();
    assert!(listed.contains(&game), "{listed}");
    assert!(
        !listed.contains(ghost),
        "the entry of a game never made stays: {listed}"
    );
    let mut host_c = Client::with_token(&server, &tokens.0).await;
    let mut guest_c = Client::with_token(&server, &tokens.1).await;
    assert_eq!(host_c.player_id, host);
    assert_eq!(host_c.welcome["games"], json!([game]));
    assert_eq!(
        guest_c.welcome["games"],
        json!([game]),
        "the player whose list missed the game sees it again"
    );
    // It plays on: whoever is to act resigns, and the game is over for both.
    let snap = guest_c
        .request(json!({"t":"game.watch","game_id":game}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    let resign = json!({"t":"game.resign","game_id":game});
    assert_eq!(guest_c.request(resign).await["t"], "ok");
    let over = host_c
        .request(json!({"t":"game.watch","game_id":game}))
        .await;
    assert_eq!(over["doc"]["status"]["state"], "ended", "{over}");
    let guest_again = Client::with_token(&server, &tokens.1).await;
    assert_eq!(guest_again.welcome["games"], json!([]));
}

/// A game from a position (`bot.play` with a `position`) survives a restart like any other:
/// rebuilt from its start and its log, the same document (its `start` included), and it plays
/// on from there. The bot here is a scripted computer player (`hello` with `"bot": true`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_from_a_position_survives_a_restart() {
    const POSITION: &str = ".....b/.w..w./.bw.../b...w. b 2";
    let redis = RedisServer::start();
    let server = redis.start_server("from");
    let mut bot = Client::connect(&server).await;
    let w = bot
        .request(json!({"t":"hello","protocol":1,"name":"bot","bot":true}))
        .await;
    assert_eq!(w["t"], "welcome", "{w}");
    let ok = bot
        .request(json!({"t":"bot.serve","kinds":["unane"],"levels":[1]}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let mut person = Client::guest(&server, "learner").await;
    let room = person
        .request(
            json!({"t":"bot.play","kind":"unane","options":{},"clock":{"kind":"none"},
            "level":1,"side":"white","position":POSITION}),
        )
        .await;
    assert_eq!(room["room"]["start"], POSITION, "{room}");
    let invite = bot.recv_where(|m| m["t"] == "bot.invite").await;
    let joined = bot
        .request(json!({"t":"room.join","code":invite["code"]}))
        .await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = person.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().unwrap().to_string();
    let code = room["room"]["code"].as_str().unwrap().to_string();
    // Black (the bot) acts first in the position.
    let mv = bot.first_legal(&game_id).await;
    let ok = bot
        .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let (status, before) = server.api_game(&game_id, Some(&code));
    assert_eq!(status, 200);
    assert_eq!(before["start"], POSITION);
    assert_eq!(before["moves"], json!([mv]));

    drop(server); // kill -9
    let server = redis.start_server("from");

    let mut person = Client::with_token(&server, &person.token).await;
    assert_eq!(person.welcome["games"], json!([game_id]));
    let snap = person
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    let doc = &snap["doc"];
    for member in [
        "start", "options", "moves", "position", "state", "players", "to_act",
    ] {
        assert_eq!(doc[member], before[member], "{member} after the restart");
    }
    // It plays on from there: the person's move is checked against the position the log
    // rebuilt from the start.
    let mv = person.first_legal(&game_id).await;
    let ok = person
        .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let kind = stoa_protocol::kind("unane").unwrap();
    let mut game = kind.from_position(&doc["options"], POSITION).unwrap();
    for m in doc["moves"].as_array().unwrap() {
        game.play(m.as_str().unwrap()).unwrap();
    }
    game.play(&mv).unwrap();
    let (_, after) = server.api_game(&game_id, Some(&code));
    assert_eq!(after["position"], game.position(), "{after}");
}
