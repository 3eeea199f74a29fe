//! Game chat over real websockets (protocol/docs/PROTOCOL.md, "Chat"): the players' and the
//! spectators' channels, the text rules, the per-person rate limit, the players' switch for
//! the spectators' chat, mutes, the history a (re)connecting client gets, and all of it
//! across the nodes of a cluster.

use std::time::Duration;

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::{Client, Server, Table};

/// A private 4x3 Ūnane game between `host` and `guest`.
async fn table(server: &Server) -> Table {
    Table::open(server, "unane", json!({"width":4,"height":3}), "private").await
}

/// A spectator watching the table's game by its room code (snapshot and crowd taken).
async fn spectator(server: &Server, t: &Table, name: &str) -> Client {
    let mut c = Client::guest(server, name).await;
    let snap = c
        .request(json!({"t":"game.watch","game_id":t.game_id,"code":t.code}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    c
}

async fn say(c: &mut Client, game_id: &str, text: &str) -> Value {
    c.request(json!({"t":"chat.say","game_id":game_id,"text":text}))
        .await
}

/// Asserts an `ok` answer.
fn ok(answer: &Value) {
    assert_eq!(answer["t"], "ok", "{answer}");
}

/// Asserts an `error` answer with this code and message.
fn refused(answer: &Value, code: &str, message: &str) {
    assert_eq!(answer["t"], "error", "{answer}");
    assert_eq!(answer["code"], code, "{answer}");
    assert_eq!(answer["message"], message, "{answer}");
}

/// The next `chat` line of a game this client receives.
async fn line(c: &mut Client, game_id: &str) -> Value {
    let g = game_id.to_string();
    c.recv_where(move |m| m["t"] == "chat" && m["game_id"] == g.as_str())
        .await
}

/// Asserts a `chat` message is exactly this line (its `ts` a plausible server time).
fn is_line(m: &Value, game_id: &str, channel: &str, author: &str, name: &str, text: &str) {
    let ts = m["ts"].as_u64().expect("ts");
    assert!(ts > 1_600_000_000_000, "{m}");
    assert_eq!(
        m,
        &json!({"t":"chat","game_id":game_id,"channel":channel,"id":author,
            "name":name,"text":text,"ts":ts})
    );
}

/// Asserts nothing of this kind is waiting for `c` (everything received so far).
fn none_pending(c: &Client, what: &str, pred: impl Fn(&Value) -> bool) {
    let found: Vec<&Value> = c.pending.iter().filter(|m| pred(m)).collect();
    assert!(found.is_empty(), "{what}: {found:?}");
}

/// The players talk in their channel, the spectators in theirs, and neither reads the
/// other's while the game is on; lines that break the text rules change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_spectators_talk_in_their_own_channels() {
    let server = Server::start();
    let mut t = table(&server).await;
    let game = t.game_id.clone();
    let mut watcher = spectator(&server, &t, "watcher").await;
    let (t_host_id, watcher_id) = (t.host.player_id.clone(), watcher.player_id.clone());

    ok(&say(&mut t.host, &game, "  good luck  ").await);
    for c in [&mut t.host, &mut t.guest] {
        let m = line(c, &game).await;
        is_line(&m, &game, "players", &t_host_id, "host", "good luck");
    }
    ok(&say(&mut watcher, &game, "go host!").await);
    let m = line(&mut watcher, &game).await;
    is_line(&m, &game, "spectators", &watcher_id, "watcher", "go host!");
    // The players' line came before the spectator's own: had it been sent, it would be here.
    none_pending(&watcher, "a players' line at a spectator", |m| {
        m["t"] == "chat"
    });
    ok(&say(&mut t.guest, &game, "thanks").await);
    for c in [&mut t.host, &mut t.guest] {
        let m = line(c, &game).await;
        assert_eq!(m["text"], "thanks", "{m}");
        none_pending(c, "a spectators' line at a player", |m| m["t"] == "chat");
    }

    let into_players = json!({"t":"chat.say","game_id":game,"channel":"players","text":"hi"});
    refused(
        &watcher.request(into_players).await,
        "forbidden",
        "only the seated players write in the players' chat",
    );
    let into_spectators = json!({"t":"chat.say","game_id":game,"channel":"spectators","text":"hi"});
    refused(
        &t.host.request(into_spectators).await,
        "forbidden",
        "players write in the players' chat",
    );
    refused(
        &say(&mut t.host, &game, "   ").await,
        "bad_request",
        "a chat line may not be empty",
    );
    refused(
        &say(&mut t.host, &game, &"x".repeat(301)).await,
        "bad_request",
        "a chat line may be at most 300 characters (this one has 301)",
    );
    refused(
        &say(&mut t.host, &game, "two\nlines").await,
        "bad_request",
        "a chat line may not contain control characters (line breaks, tabs)",
    );
    // Someone not watching the game, and a game that does not exist.
    let mut stranger = Client::guest(&server, "stranger").await;
    refused(
        &say(&mut stranger, &game, "hello?").await,
        "conflict",
        "watch this game (game.watch) before chatting in it",
    );
    let nothing = say(&mut stranger, "no-such-game", "hello?").await;
    assert_eq!(nothing["code"], "not_found", "{nothing}");
    // 300 characters pass; none of the refused lines reached anyone.
    let longest = "é".repeat(300);
    ok(&say(&mut t.host, &game, &longest).await);
    let m = line(&mut t.guest, &game).await;
    assert_eq!(m["text"], longest.as_str());
}

/// A person may say 5 lines at once, then about one a second, on all of their connections
/// together; a refused line reaches nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_is_rate_limited_per_person() {
    let server = Server::start();
    let mut t = table(&server).await;
    let game = t.game_id.clone();
    for i in 1..=5 {
        ok(&say(&mut t.host, &game, &format!("line {i}")).await);
    }
    let too_fast = "you are chatting too fast: wait a second";
    refused(
        &say(&mut t.host, &game, "line 6").await,
        "rate_limited",
        too_fast,
    );
    // The same person on a second connection shares the budget.
    let mut again = Client::with_token(&server, &t.host.token).await;
    let snap = again
        .request(json!({"t":"game.watch","game_id":game}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    refused(
        &say(&mut again, &game, "line 7").await,
        "rate_limited",
        too_fast,
    );
    // The opponent has a budget of its own.
    ok(&say(&mut t.guest, &game, "my turn to talk").await);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    ok(&say(&mut again, &game, "line 8").await);
    let mut texts = Vec::new();
    while texts.len() < 7 {
        texts.push(line(&mut t.guest, &game).await["text"].clone());
    }
    assert_eq!(
        texts,
        [
            "line 1",
            "line 2",
            "line 3",
            "line 4",
            "line 5",
            "my turn to talk",
            "line 8"
        ]
    );
}

/// A player turns the spectators' chat off: everyone watching is told, a spectator's line
/// is refused with the reason, the players still talk; on again, spectators talk again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_turn_the_spectators_chat_off_and_on() {
    let server = Server::start();
    let mut t = table(&server).await;
    let game = t.game_id.clone();
    let mut watcher = spectator(&server, &t, "watcher").await;
    let watcher_id = watcher.player_id.clone();
    refused(
        &watcher
            .request(json!({"t":"chat.spectators","game_id":game,"on":false}))
            .await,
        "forbidden",
        "only the seated players turn the spectators' chat on or off",
    );
    ok(&t
        .guest
        .request(json!({"t":"chat.spectators","game_id":game,"on":false}))
        .await);
    for c in [&mut watcher, &mut t.host] {
        let m = c.recv_where(|m| m["t"] == "chat.spectators").await;
        assert_eq!(m, json!({"t":"chat.spectators","game_id":game,"on":false}));
    }
    refused(
        &say(&mut watcher, &game, "let me talk").await,
        "forbidden",
        "the players turned the spectators' chat off for this game",
    );
    ok(&say(&mut t.host, &game, "quiet now").await);
    // A spectator watching from now on learns it with the history.
    let mut late = spectator(&server, &t, "late").await;
    let h = late.recv_where(|m| m["t"] == "chat.history").await;
    assert_eq!(
        h,
        json!({"t":"chat.history","game_id":game,"lines":[],"spectators":false,"muted":[]})
    );
    ok(&t
        .host
        .request(json!({"t":"chat.spectators","game_id":game,"on":true}))
        .await);
    let m = watcher
        .recv_where(|m| m["t"] == "chat.spectators" && m["on"] == true)
        .await;
    assert_eq!(m["game_id"], game.as_str());
    ok(&say(&mut watcher, &game, "thank you").await);
    let m = line(&mut late, &game).await;
    is_line(&m, &game, "spectators", &watcher_id, "watcher", "thank you");
}

/// A mute hides one person from the muting person only, on all of their connections, live
/// and in the history; unmuting brings the lines back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mute_hides_a_person_from_the_muter_only() {
    let server = Server::start();
    let t = table(&server).await;
    let game = t.game_id.clone();
    let mut rude = spectator(&server, &t, "rude").await;
    let mut polite = spectator(&server, &t, "polite").await;
    ok(&say(&mut rude, &game, "first").await);
    line(&mut polite, &game).await;
    refused(
        &polite
            .request(json!({"t":"chat.mute","game_id":game,"player_id":polite.player_id}))
            .await,
        "bad_request",
        "you cannot mute yourself",
    );
    let mut polite_too = Client::with_token(&server, &polite.token).await;
    let snap = polite_too
        .request(json!({"t":"game.watch","game_id":game,"code":t.code}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    polite_too.recv_where(|m| m["t"] == "chat.history").await;
    ok(&polite
        .request(json!({"t":"chat.mute","game_id":game,"player_id":rude.player_id}))
        .await);
    // Both connections of the muting person get what they read now: nothing of rude's.
    for c in [&mut polite, &mut polite_too] {
        let h = c.recv_where(|m| m["t"] == "chat.history").await;
        assert_eq!(
            h,
            json!({"t":"chat.history","game_id":game,"lines":[],"spectators":true,
                "muted":[rude.player_id]})
        );
    }
    ok(&say(&mut rude, &game, "second").await);
    ok(&say(&mut polite, &game, "hello all").await);
    for c in [&mut polite, &mut polite_too] {
        let m = line(c, &game).await;
        assert_eq!(m["text"], "hello all", "rude's line reached the muter: {m}");
    }
    // Rude itself reads everything, its own lines included.
    assert_eq!(line(&mut rude, &game).await["text"], "first");
    assert_eq!(line(&mut rude, &game).await["text"], "second");
    assert_eq!(line(&mut rude, &game).await["text"], "hello all");
    ok(&polite
        .request(json!({"t":"chat.mute","game_id":game,"player_id":rude.player_id,"muted":false}))
        .await);
    let h = polite.recv_where(|m| m["t"] == "chat.history").await;
    let texts: Vec<&str> = h["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["first", "second", "hello all"]);
    assert_eq!(h["muted"], json!([]));
}

/// A game nobody chatted in answers `game.watch` as before; once there are lines, a player
/// who reconnects gets the lines it reads as `chat.history`, and after the end the players
/// read the spectators' lines too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_client_gets_the_chat_history() {
    let server = Server::start();
    let mut t = table(&server).await;
    let game = t.game_id.clone();
    let mut watcher = spectator(&server, &t, "watcher").await;
    let pong = watcher.request(json!({"t":"ping"})).await;
    assert_eq!(pong["t"], "pong");
    none_pending(&watcher, "a history of a silent game", |m| {
        m["t"].as_str().unwrap_or_default().starts_with("chat")
    });

    ok(&say(&mut t.host, &game, "hi").await);
    ok(&say(&mut t.guest, &game, "hello <b>you</b>").await);
    ok(&say(&mut watcher, &game, "nice game").await);
    // The guest comes back on a new connection, resuming from its seq.
    let mut back = Client::with_token(&server, &t.guest.token).await;
    let seq = t.guest_doc.seq;
    let resumed = back
        .request(json!({"t":"game.watch","game_id":game,"since":seq}))
        .await;
    assert_eq!(resumed["t"], "ok", "{resumed}");
    let h = back.recv_where(|m| m["t"] == "chat.history").await;
    let lines = h["lines"].as_array().expect("lines");
    let seen: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["channel"].as_str().unwrap_or_default(),
                l["name"].as_str().unwrap_or_default(),
                l["text"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("players", "host", "hi"),
            ("players", "guest", "hello <b>you</b>")
        ]
    );
    assert_eq!(lines[0]["id"], t.host.player_id.as_str());
    assert_eq!(h["spectators"], true);
    // A spectator arriving now reads only the spectators' line.
    let late = spectator(&server, &t, "late").await;
    let mut late = late;
    let h = late.recv_where(|m| m["t"] == "chat.history").await;
    assert_eq!(h["lines"].as_array().map(Vec::len), Some(1), "{h}");
    assert_eq!(h["lines"][0]["text"], "nice game");

    // Over: the players read the crowd's lines too.
    ok(&t
        .host
        .request(json!({"t":"game.resign","game_id":game}))
        .await);
    // Both players, still watching, get the history that now includes the crowd's line.
    for c in [&mut t.host, &mut t.guest] {
        let h = c.recv_where(|m| m["t"] == "chat.history").await;
        assert_eq!(h["lines"].as_array().map(Vec::len), Some(3), "{h}");
        assert_eq!(h["lines"][2]["text"], "nice game");
    }
    let mut after = Client::with_token(&server, &t.host.token).await;
    let snap = after
        .request(json!({"t":"game.watch","game_id":game}))
        .await;
    assert_eq!(snap["doc"]["status"]["state"], "ended", "{snap}");
    let h = after.recv_where(|m| m["t"] == "chat.history").await;
    let texts: Vec<&str> = h["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["hi", "hello <b>you</b>", "nice game"]);
}

fn node(redis: &RedisServer, id: &str) -> Server {
    let mut args = redis.server_args("chat");
    args.extend(["--cluster", "--node-id", id, "--lease-ms", "1500"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

/// Chat across the nodes of a cluster: a player on a follower node talks with the
/// opponent on the owner's node, the owner's rate limit and the players' switch hold for
/// people on any node, a mute made on one node holds on another, and a node that starts
/// following the game later gets the whole chat from the owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_works_across_the_nodes_of_a_cluster() {
    let redis = RedisServer::start();
    let nodes = [node(&redis, "c1"), node(&redis, "c2"), node(&redis, "c3")];
    // The game is created on the joiner's node (c2): it owns it; c1 follows.
    let mut t = Table::open_across(
        &nodes[0],
        &nodes[1],
        "unane",
        json!({"width":4,"height":3}),
        json!({"kind":"none"}),
        "private",
    )
    .await;
    let game = t.game_id.clone();
    let mut near = spectator(&nodes[0], &t, "near").await;
    let mut far = spectator(&nodes[1], &t, "far").await;
    let (t_host_id, far_id) = (t.host.player_id.clone(), far.player_id.clone());

    ok(&say(&mut t.host, &game, "hello from c1").await);
    for c in [&mut t.guest, &mut t.host] {
        let m = line(c, &game).await;
        is_line(&m, &game, "players", &t_host_id, "host", "hello from c1");
    }
    ok(&say(&mut far, &game, "hello from c2").await);
    let m = line(&mut near, &game).await;
    is_line(&m, &game, "spectators", &far_id, "far", "hello from c2");

    // The budget is the owner's: four more lines from c1, the fifth refused.
    for i in 2..=5 {
        ok(&say(&mut t.host, &game, &format!("line {i}")).await);
    }
    refused(
        &say(&mut t.host, &game, "one too many").await,
        "rate_limited",
        "you are chatting too fast: wait a second",
    );

    // The guest on c2 silences the spectators; the one on c1 is refused by the owner.
    ok(&t
        .guest
        .request(json!({"t":"chat.spectators","game_id":game,"on":false}))
        .await);
    near.recv_where(|m| m["t"] == "chat.spectators" && m["on"] == false)
        .await;
    refused(
        &say(&mut near, &game, "may I?").await,
        "forbidden",
        "the players turned the spectators' chat off for this game",
    );
    ok(&t
        .guest
        .request(json!({"t":"chat.spectators","game_id":game,"on":true}))
        .await);
    near.recv_where(|m| m["t"] == "chat.spectators" && m["on"] == true)
        .await;

    // Near (on c1) mutes far (on c2): far's next line reaches everyone but near.
    ok(&near
        .request(json!({"t":"chat.mute","game_id":game,"player_id":far.player_id}))
        .await);
    near.recv_where(|m| m["t"] == "chat.history" && m["muted"] == json!([far.player_id]))
        .await;
    ok(&say(&mut far, &game, "can you hear me").await);
    ok(&say(&mut near, &game, "quiet here").await);
    let m = line(&mut near, &game).await;
    assert_eq!(
        m["text"], "quiet here",
        "a muted line crossed the nodes: {m}"
    );
    for text in ["hello from c2", "can you hear me", "quiet here"] {
        assert_eq!(line(&mut far, &game).await["text"], text);
    }

    // A spectator on c3, which did not follow the game until now, reads the spectators'
    // chat (with near's mute not applied to it).
    let mut third = spectator(&nodes[2], &t, "third").await;
    let want = ["hello from c2", "can you hear me", "quiet here"];
    let h = third
        .recv_where(|m| m["t"] == "chat.history" && m["lines"].as_array().map(Vec::len) == Some(3))
        .await;
    let texts: Vec<&str> = h["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, want);
    ok(&say(&mut third, &game, "hello from c3").await);
    assert_eq!(line(&mut far, &game).await["text"], "hello from c3");
}

/// The chat lives on with the game when its owner dies: the node that takes the game over
/// (it followed the game for its players) keeps the lines, a player reconnecting there
/// reads them, and the chat goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_survives_its_owners_death() {
    let redis = RedisServer::start();
    let mut nodes = [node(&redis, "d1"), node(&redis, "d2")];
    let mut t = Table::open_across(
        &nodes[0],
        &nodes[1],
        "unane",
        json!({"width":4,"height":3}),
        json!({"kind":"none"}),
        "private",
    )
    .await;
    let game = t.game_id.clone();
    ok(&say(&mut t.host, &game, "before").await);
    ok(&say(&mut t.guest, &game, "the crash").await);
    for text in ["before", "the crash"] {
        assert_eq!(line(&mut t.host, &game).await["text"], text);
    }
    // The owner (d2, where the game was created) dies; d1 takes the game over.
    nodes[1].kill9();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let answer = say(&mut t.host, &game, "after").await;
        if answer["t"] == "ok" {
            break;
        }
        assert_eq!(answer["code"], "unavailable", "{answer}");
        assert!(
            std::time::Instant::now() < deadline,
            "no takeover: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut back = Client::with_token(&nodes[0], &t.host.token).await;
    let snap = back.request(json!({"t":"game.watch","game_id":game})).await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    let h = back.recv_where(|m| m["t"] == "chat.history").await;
    let texts: Vec<&str> = h["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["before", "the crash", "after"]);
}

/// Opens a room's chat by its code; the `room.chat.history` answer.
async fn open_room(c: &mut Client, code: &str) -> Value {
    let h = c.request(json!({"t":"room.watch","code":code})).await;
    assert_eq!(h["t"], "room.chat.history", "{h}");
    h
}

async fn room_say(c: &mut Client, code: &str, text: &str) -> Value {
    c.request(json!({"t":"room.say","code":code,"text":text}))
        .await
}

/// The next `room.chat` line of a room this client receives.
async fn room_line(c: &mut Client, code: &str) -> Value {
    let code = code.to_string();
    c.recv_where(move |m| m["t"] == "room.chat" && m["code"] == code.as_str())
        .await
}

/// A private waiting room hosted by a new guest `host`: the host and the room's code.
async fn waiting_room(server: &Server) -> (Client, String) {
    let mut host = Client::guest(server, "host").await;
    let room = host
        .request(
            json!({"t":"room.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"none"},"visibility":"private","side":"black"}),
        )
        .await;
    assert_eq!(room["t"], "room", "{room}");
    let code = room["room"]["code"].as_str().unwrap().to_string();
    (host, code)
}

/// A waiting room has one chat: the host and a visitor who opened the room by its code
/// (without taking the seat) read each other's lines, with the game chat's text rules and
/// rate limit; markup is kept as text; a late visitor gets the history; once the game has
/// started the room's chat is read-only but stays readable on the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_and_visitors_chat_in_a_waiting_room() {
    let server = Server::start();
    let (mut host, code) = waiting_room(&server).await;
    let h = open_room(&mut host, &code).await;
    assert_eq!(h["status"], "waiting", "{h}");
    assert_eq!(h["open"], true, "{h}");
    assert_eq!(h["lines"], json!([]), "{h}");

    // A visitor opens the room by its code, typed loosely, before taking the seat.
    let mut visitor = Client::guest(&server, "vi").await;
    let h = open_room(&mut visitor, &code.to_lowercase()).await;
    assert_eq!(h["code"], code.as_str(), "{h}");

    // Saying before opening is refused; an unknown room is not found.
    let mut stranger = Client::guest(&server, "st").await;
    refused(
        &room_say(&mut stranger, &code, "psst").await,
        "conflict",
        "open this room's chat (room.watch) before chatting in it",
    );
    let none = stranger
        .request(json!({"t":"room.watch","code":"ZZZZZZ"}))
        .await;
    refused(&none, "not_found", "no room 'ZZZZZZ'");

    let markup = "<b>hi</b> <script>alert(1)</script>";
    ok(&room_say(&mut visitor, &code, markup).await);
    let vid = visitor.player_id.clone();
    for c in [&mut host, &mut visitor] {
        let m = room_line(c, &code).await;
        let ts = m["ts"].as_u64().expect("ts");
        assert_eq!(
            m,
            json!({"t":"room.chat","code":code,"id":vid,"name":"vi","text":markup,"ts":ts})
        );
    }
    ok(&room_say(&mut host, &code, "  welcome  ").await);
    assert_eq!(room_line(&mut visitor, &code).await["text"], "welcome");

    // The game chat's text rules.
    refused(
        &room_say(&mut host, &code, "   ").await,
        "bad_request",
        "a chat line may not be empty",
    );
    refused(
        &room_say(&mut host, &code, "two\nlines").await,
        "bad_request",
        "a chat line may not contain control characters (line breaks, tabs)",
    );
    let long = "x".repeat(501);
    let too_long = room_say(&mut host, &code, &long).await;
    assert_eq!(too_long["code"], "bad_request", "{too_long}");

    // The rate limit: a burst of 5 lines per person (the host said one already).
    for i in 2..=5 {
        ok(&room_say(&mut host, &code, &format!("line {i}")).await);
    }
    refused(
        &room_say(&mut host, &code, "line 6").await,
        "rate_limited",
        "you are chatting too fast: wait a second",
    );
    ok(&room_say(&mut visitor, &code, "my own budget").await);

    // A late visitor gets the history, oldest first.
    let mut late = Client::guest(&server, "late").await;
    let h = open_room(&mut late, &code).await;
    let texts: Vec<&str> = h["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            markup,
            "welcome",
            "line 2",
            "line 3",
            "line 4",
            "line 5",
            "my own budget"
        ]
    );

    // After room.unwatch, no more lines reach that connection.
    ok(&late.request(json!({"t":"room.unwatch","code":code})).await);
    refused(
        &room_say(&mut late, &code, "gone").await,
        "conflict",
        "open this room's chat (room.watch) before chatting in it",
    );

    // The visitor takes the seat: the game starts, the room's chat is read-only, and its
    // lines stay readable on the code.
    let joined = visitor.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    refused(
        &room_say(&mut visitor, &code, "still here?").await,
        "conflict",
        "this room's game has started: its chat is read-only now (chat in the game)",
    );
    let h = open_room(&mut late, &code).await;
    assert_eq!(h["status"], "started", "{h}");
    assert_eq!(h["open"], false, "{h}");
    assert!(h["game_id"].is_string(), "{h}");
    assert_eq!(h["lines"].as_array().unwrap().len(), 7, "{h}");
    none_pending(&late, "lines after room.unwatch", |m| m["t"] == "room.chat");
}

/// A waiting room's chat across the nodes of a cluster: the host on one node and a visitor
/// on another read each other's lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_rooms_chat_spans_the_nodes_of_a_cluster() {
    let redis = RedisServer::start();
    let (a, b) = (node(&redis, "r1"), node(&redis, "r2"));
    let (mut host, code) = waiting_room(&a).await;
    open_room(&mut host, &code).await;
    let mut visitor = Client::guest(&b, "vi").await;
    let h = open_room(&mut visitor, &code).await;
    assert_eq!(h["status"], "waiting", "{h}");
    ok(&room_say(&mut visitor, &code, "hello from b").await);
    let m = room_line(&mut host, &code).await;
    assert_eq!(m["text"], "hello from b", "{m}");
    assert_eq!(m["id"], visitor.player_id.as_str(), "{m}");
    assert_eq!(room_line(&mut visitor, &code).await["text"], "hello from b");
    ok(&room_say(&mut host, &code, "hello from a").await);
    let m = room_line(&mut visitor, &code).await;
    assert_eq!(m["text"], "hello from a", "{m}");
    assert_eq!(m["name"], "host", "{m}");
    // A visitor who opens the room on B later sees both lines.
    let mut late = Client::guest(&b, "late").await;
    let h = open_room(&mut late, &code).await;
    assert_eq!(h["lines"].as_array().unwrap().len(), 2, "{h}");
}
