//! Moderation end to end (issue 50): players' reports over the websocket, the operators'
//! API (`/api/admin/*`, bearer tokens from `--admin-file`) and what each sanction does to
//! connected and returning players, the word filter and the metrics — on one node, and on
//! a 3-node cluster over Redis (a sanction given on one node holds on the others within a
//! second, and everything survives a restart of every node).

#[path = "moderation/support.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::{quick_options, side_of, Client, Server, Table};
use support::*;

/// Reports: the `reported` answer, the context the admin API shows, and each refusal
/// (a second open report, a line that does not exist, an unknown player, the budget).
async fn reports(server: &Server, t: &mut Table) -> String {
    let g = t.game_id.clone();
    let (p, r) = (&mut t.host, &mut t.guest);
    say(p, Some(&mut *r), &g, "hello there").await;
    say(r, None, &g, "hi").await;
    let ts = say(p, Some(&mut *r), &g, "you are bad").await;
    say(r, None, &g, "please stop").await;
    say(p, Some(&mut *r), &g, "bye").await;
    let ask = json!({"t":"report","player_id":p.player_id,"reason":"chat_abuse",
        "text":"insults","game_id":g,"ts":ts});
    let rid = r.rid();
    let mut sent = ask.clone();
    sent["rid"] = json!(rid);
    r.send(sent).await;
    let answer = r.recv_where(|m| m["rid"] == json!(rid)).await;
    let id = answer["report_id"].as_str().expect("report_id").to_string();
    assert!(id.starts_with('r') && id.len() == 13, "{answer}");
    assert_eq!(answer, json!({"t":"reported","rid":rid,"report_id":id}));

    let shown = admin(
        server,
        "GET",
        &format!("/api/admin/reports/{id}"),
        Value::Null,
    );
    assert_eq!(shown["reporter"], r.player_id.as_str());
    assert_eq!(shown["target"], p.player_id.as_str());
    assert_eq!(shown["reason"], "chat_abuse");
    assert_eq!(shown["text"], "insults");
    assert_eq!(shown["game_id"], g.as_str());
    assert!(shown.get("closed").is_none(), "{shown}");
    let lines = shown["context"].as_array().expect("context");
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        ["hello there", "hi", "you are bad", "please stop", "bye"]
    );
    for l in lines {
        let is_it = l["text"] == "you are bad";
        assert_eq!(l.get("reported") == Some(&json!(true)), is_it, "{l}");
        assert_eq!(l["channel"], "players");
    }
    assert_eq!(lines[2]["ts"], json!(ts));
    assert_eq!(lines[2]["id"], p.player_id.as_str());

    // The same pair again while the first is open: conflict.
    let again = r
        .request(json!({"t":"report","player_id":p.player_id,"reason":"other"}))
        .await;
    assert_eq!(code(&again), "conflict", "{again}");
    // A line that does not exist, an unknown player: not_found, nothing stored.
    let wrong = r
        .request(
            json!({"t":"report","player_id":p.player_id,"reason":"chat_abuse",
            "game_id":g,"ts":1}),
        )
        .await;
    assert_eq!(code(&wrong), "not_found", "{wrong}");
    let nobody = r
        .request(json!({"t":"report","player_id":"pnobodyatall","reason":"cheating"}))
        .await;
    assert_eq!(code(&nobody), "not_found", "{nobody}");
    let listed = admin(server, "GET", "/api/admin/reports?status=all", Value::Null);
    assert_eq!(listed["reports"].as_array().unwrap().len(), 1, "{listed}");

    // The budget: 5 an hour, then rate_limited (one open report per pair, so 5 players).
    let mut others = Vec::new();
    for i in 0..5 {
        others.push(Client::guest(server, &format!("other{i}")).await);
    }
    for o in &others[..4] {
        let ok = r
            .request(json!({"t":"report","player_id":o.player_id,"reason":"offensive_name"}))
            .await;
        assert_eq!(ok["t"], "reported", "{ok}");
    }
    let over = r
        .request(json!({"t":"report","player_id":others[4].player_id,"reason":"other","text":"x"}))
        .await;
    assert_eq!(code(&over), "rate_limited", "{over}");
    let open = admin(server, "GET", "/api/admin/reports", Value::Null);
    let open = open["reports"].as_array().unwrap().clone();
    assert_eq!(open.len(), 5);
    assert_eq!(open[4]["id"], id.as_str(), "newest first");
    id
}

/// Without a token, or with one no operator holds, the admin API answers exactly what an
/// unknown API path answers.
fn hidden_without_a_token(server: &Server, p: &str) {
    let (unknown_status, _, unknown) = http(server.addr, "GET", "/api/no-such-thing", None, None);
    assert_eq!(
        (unknown_status, unknown.as_str()),
        (404, r#"{"error":"not_found"}"#)
    );
    let wrong = "not-a-token-of-anyone-at-all-0000";
    let ban = json!({"reason":"x"});
    for (method, path, token, body) in [
        ("GET", "/api/admin/reports".to_string(), None, None),
        ("GET", "/api/admin/me".to_string(), Some(wrong), None),
        ("GET", "/api/admin/audit".to_string(), Some(""), None),
        (
            "POST",
            format!("/api/admin/players/{p}/ban"),
            None,
            Some(&ban),
        ),
        (
            "POST",
            format!("/api/admin/players/{p}/ban"),
            Some(wrong),
            Some(&ban),
        ),
    ] {
        let (status, _, body) = http(server.addr, method, &path, token, body);
        assert_eq!(
            (status, body.as_str()),
            (404, unknown.as_str()),
            "{method} {path}"
        );
    }
    let me = admin(server, "GET", "/api/admin/me", Value::Null);
    assert_eq!(me, json!({"operator":"ann"}));
}

/// Warnings: shown once to a connected player; one given while away, once at the next hello.
async fn warnings(server: &Server, p: &mut Client) {
    let given = admin(
        server,
        "POST",
        &format!("/api/admin/players/{}/warn", p.player_id),
        json!({"reason":"be nice"}),
    );
    assert_eq!(given["kind"], "warn");
    let push = p.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(
        push,
        json!({"t":"moderation","action":"warn","reason":"be nice",
        "message":"a warning from the operators: be nice"})
    );
    assert!(moderation_pushes(p, Duration::from_millis(700))
        .await
        .is_empty());

    let away = Client::guest(server, "away").await;
    let (id, token) = (away.player_id.clone(), away.token.clone());
    away.close().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, v) = admin_as(
        server,
        BOB,
        "POST",
        &format!("/api/admin/players/{id}/warn"),
        json!({"reason":"spam in the lobby"}),
    );
    assert_eq!(status, 200, "{v}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut back = Client::with_token(server, &token).await;
    let push = back.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(push["action"], "warn");
    assert_eq!(push["reason"], "spam in the lobby");
    assert!(moderation_pushes(&mut back, Duration::from_millis(600))
        .await
        .is_empty());
    back.close().await;
    let mut again = Client::with_token(server, &token).await;
    assert!(moderation_pushes(&mut again, Duration::from_millis(600))
        .await
        .is_empty());
    again.close().await;
}

/// A mute refuses the player's lines in a game's chat and a room's; undone, they chat again.
async fn mute_and_undo(server: &Server, t: &mut Table, room: &str) {
    let p = &mut t.host;
    let given = admin(
        server,
        "POST",
        &format!("/api/admin/players/{}/mute", p.player_id),
        json!({"reason":"insults","duration_ms":3_600_000}),
    );
    let sanction = given["id"].as_str().expect("id").to_string();
    let until = given["until_ms"].as_u64().expect("until");
    let push = p.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(push["action"], "mute");
    assert_eq!(push["until_ms"], json!(until));
    assert!(
        push["message"]
            .as_str()
            .unwrap()
            .starts_with("you are muted until "),
        "{push}"
    );
    let said = p
        .request(json!({"t":"chat.say","game_id":t.game_id,"text":"still here"}))
        .await;
    assert_eq!(code(&said), "forbidden");
    assert!(
        said["message"].as_str().unwrap().contains("muted until"),
        "{said}"
    );
    let w = p.request(json!({"t":"room.watch","code":room})).await;
    assert_eq!(w["t"], "room.chat.history", "{w}");
    let said = p
        .request(json!({"t":"room.say","code":room,"text":"anyone?"}))
        .await;
    assert_eq!(code(&said), "forbidden");
    assert!(
        said["message"].as_str().unwrap().contains("muted until"),
        "{said}"
    );

    let undone = admin(
        server,
        "POST",
        &format!("/api/admin/sanctions/{sanction}/undo"),
        json!({"reason":"appeal"}),
    );
    assert_eq!(undone["undone"]["by"], "ann");
    let push = p.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(push["action"], "unmute", "{push}");
    let ok = p
        .request(json!({"t":"chat.say","game_id":t.game_id,"text":"sorry"}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let ok = p
        .request(json!({"t":"room.say","code":room,"text":"sorry"}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
}

/// A rename: a new name, and the player is told.
async fn rename(server: &Server) -> String {
    let mut n = Client::guest(server, "Offensive").await;
    admin(
        server,
        "POST",
        &format!("/api/admin/players/{}/rename", n.player_id),
        json!({"reason":"offensive name"}),
    );
    let push = n.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(push["action"], "rename");
    assert_eq!(push["reason"], "offensive name");
    // The session holds the old name: the connection closes so the client says hello again.
    assert_eq!(n.closed().await, 4409);
    let page = admin(
        server,
        "GET",
        &format!("/api/admin/players/{}", n.player_id),
        Value::Null,
    );
    let name = page["name"].as_str().unwrap();
    assert!(name.starts_with("player-") && name != "Offensive", "{page}");
    assert_eq!(page["sanctions"][0]["old_name"], "Offensive");
    let again = Client::with_token(server, &n.token).await;
    assert_eq!(again.welcome["player"]["name"], name);
    // Saying the reset name back is refused, and the name stays the new one.
    let mut back = Client::connect(server).await;
    let refused = back
        .request(json!({"t":"hello","protocol":1,"token":n.token,"name":"offensive"}))
        .await;
    assert_eq!(refused["code"], "conflict", "{refused}");
    assert_eq!(
        refused["message"],
        "an operator reset the name 'offensive': choose another name"
    );
    let page = admin(
        server,
        "GET",
        &format!("/api/admin/players/{}", n.player_id),
        Value::Null,
    );
    assert_eq!(page["name"], name);
    n.player_id.clone()
}

/// An address ban refuses the websocket upgrade with 403 until it is undone.
fn address_ban(server: &Server) {
    let given = admin(
        server,
        "POST",
        "/api/admin/addresses/ban",
        json!({"network":"127.0.0.1/32","reason":"flood","duration_ms":60_000}),
    );
    assert_eq!(given["network"], "127.0.0.1/32");
    assert_eq!(upgrade_status(server), 403);
    let bad = admin_as(
        server,
        ANN,
        "POST",
        "/api/admin/addresses/ban",
        json!({"network":"example.com","reason":"x"}),
    );
    assert_eq!(bad.0, 400, "{}", bad.1);
    admin(
        server,
        "POST",
        &format!(
            "/api/admin/sanctions/{}/undo",
            given["id"].as_str().unwrap()
        ),
        json!({"reason":"lifted"}),
    );
    assert_eq!(upgrade_status(server), 101);
}

/// An operator aborts a live game and closes a waiting room.
async fn abort_and_close(server: &Server) -> (String, String) {
    let mut t = Table::open(server, "akron", quick_options("akron"), "private").await;
    let g = t.game_id.clone();
    let done = admin(
        server,
        "POST",
        &format!("/api/admin/games/{g}/abort"),
        json!({"reason":"test"}),
    );
    assert_eq!(done, json!({"aborted": g}));
    let doc = ended(server, &g, Some(&t.code)).await;
    t.host.clear();
    assert_eq!(doc["status"]["reason"], "aborted", "{doc}");
    assert_eq!(doc["status"]["winner"], Value::Null);
    let again = admin_as(
        server,
        ANN,
        "POST",
        &format!("/api/admin/games/{g}/abort"),
        json!({"reason":"test"}),
    );
    assert!(again.0 == 409 || again.0 == 404, "{}", again.1);

    let mut host = Client::guest(server, "roomhost").await;
    let room = host.request(room_create()).await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    let closed = admin(
        server,
        "POST",
        &format!("/api/admin/rooms/{code}/close"),
        json!({"reason":"spam room"}),
    );
    assert_eq!(closed, json!({"closed": code}));
    let mut other = Client::guest(server, "joiner").await;
    let w = other.request(json!({"t":"room.watch","code":code})).await;
    assert_eq!(w["status"], "closed", "{w}");
    let j = other.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(j["t"], "error", "{j}");
    (g, code)
}

/// The word filter refuses a line with a listed word (`bad_request`) and counts it.
async fn word_filter(server: &Server, t: &mut Table) {
    let said = t
        .guest
        .request(json!({"t":"chat.say","game_id":t.game_id,"text":"you badword"}))
        .await;
    assert_eq!(code(&said), "bad_request", "{said}");
    assert_eq!(metric(server, "stoa_chat_filtered_total"), Some(1.0));
}

/// A ban: the player's connections are told and closed (4403), their live game ends as a
/// loss by `banned`, their waiting room closes, and every token of theirs is refused.
async fn ban(server: &Server, t: &mut Table, room: &str) -> String {
    let p_id = t.host.player_id.clone();
    let token = t.host.token.clone();
    let mut second = Client::with_token(server, &token).await;
    let given = admin(
        server,
        "POST",
        &format!("/api/admin/players/{p_id}/ban"),
        json!({"reason":"abuse"}),
    );
    assert_eq!(given["kind"], "ban");
    assert!(given.get("until_ms").is_none(), "{given}");
    for c in [&mut t.host, &mut second] {
        assert_eq!(c.closed().await, 4403);
        let told = c.pending.iter().find(|m| m["t"] == "moderation").cloned();
        assert_eq!(
            told,
            Some(json!({"t":"moderation","action":"ban","reason":"abuse",
            "message":"this account is banned: abuse"}))
        );
    }
    let doc = ended(server, &t.game_id, Some(&t.code)).await;
    assert_eq!(doc["status"]["reason"], "banned", "{doc}");
    let guest_side = side_of(&doc, &t.guest.player_id).expect("the guest's side");
    assert_eq!(doc["status"]["winner"], guest_side.as_str(), "{doc}");
    let mut other = Client::guest(server, "looker").await;
    let w = other.request(json!({"t":"room.watch","code":room})).await;
    assert_eq!(w["status"], "closed", "{w}");
    let mut c = Client::connect(server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":token}))
        .await;
    assert_eq!(code(&refused), "unauthorized");
    assert_eq!(refused["message"], "this account is banned: abuse");
    given["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn reports_sanctions_and_the_audit_log_on_one_node() {
    let dir = config_dir("moderation");
    let server = single_node(&dir);
    let mut t = Table::open(&server, "akron", quick_options("akron"), "public").await;
    let (p, r) = (t.host.player_id.clone(), t.guest.player_id.clone());
    let room = t.host.request(room_create()).await;
    assert_eq!(room["t"], "room", "{room}");
    let room = room["room"]["code"].as_str().unwrap().to_string();

    let report = reports(&server, &mut t).await;
    hidden_without_a_token(&server, &p);
    warnings(&server, &mut t.host).await;
    let warned_away = admin(&server, "GET", "/api/admin/audit?limit=1", Value::Null);
    let away = warned_away["entries"][0]["target"]
        .as_str()
        .unwrap()
        .to_string();
    mute_and_undo(&server, &mut t, &room).await;
    let renamed = rename(&server).await;
    address_ban(&server);
    let (aborted, closed) = abort_and_close(&server).await;
    word_filter(&server, &mut t).await;
    admin(
        &server,
        "POST",
        &format!("/api/admin/reports/{report}/close"),
        json!({"action":"muted 1 h"}),
    );
    let again = admin_as(
        &server,
        ANN,
        "POST",
        &format!("/api/admin/reports/{report}/close"),
        json!({"action":"twice"}),
    );
    assert_eq!(again.0, 409, "{}", again.1);
    let ban_id = ban(&server, &mut t, &room).await;

    let ann = "ann";
    audit(
        &server,
        &[
            (ann, "warn", &p),
            ("bob", "warn", &away),
            (ann, "mute", &p),
            (ann, "undo", &p),
            (ann, "rename", &renamed),
            (ann, "address_ban", "127.0.0.1/32"),
            (ann, "undo", "127.0.0.1/32"),
            (ann, "abort_game", &aborted),
            (ann, "close_room", &closed),
            (ann, "close_report", &report),
            (ann, "ban", &p),
        ],
    );
    let page = admin(
        &server,
        "GET",
        &format!("/api/admin/players/{p}"),
        Value::Null,
    );
    assert_eq!(page["banned"]["id"], ban_id.as_str(), "{page}");
    assert_eq!(page["reports"][0]["reporter"], r.as_str());
    let standing = admin(&server, "GET", "/api/admin/sanctions", Value::Null);
    let ids: Vec<&str> = standing["sanctions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [ban_id.as_str()], "{standing}");
    for (series, n) in [
        ("stoa_reports_opened_total", 5.0),
        ("stoa_reports_closed_total", 1.0),
        ("stoa_sanctions_total{kind=\"warn\"}", 2.0),
        ("stoa_sanctions_total{kind=\"mute\"}", 1.0),
        ("stoa_sanctions_total{kind=\"ban\"}", 1.0),
        ("stoa_sanctions_total{kind=\"address_ban\"}", 1.0),
        ("stoa_sanctions_total{kind=\"rename\"}", 1.0),
        ("stoa_chat_filtered_total", 1.0),
    ] {
        assert_eq!(metric(&server, series), Some(n), "{series}");
    }
}

/// A sanction given on one node holds on the others within a second; a restart of every
/// node keeps the reports, the sanctions and the audit log (Redis).
#[tokio::test]
async fn sanctions_hold_on_every_node_of_a_cluster_and_after_a_restart() {
    let dir = config_dir("moderation-cluster");
    let redis = RedisServer::start();
    let mut nodes: Vec<Server> = ["na", "nb", "nc"]
        .iter()
        .map(|id| cluster_node(&redis, &dir, id))
        .collect();
    // x plays on node B against a player on node A.
    let mut t = Table::open_across(
        &nodes[1],
        &nodes[0],
        "akron",
        quick_options("akron"),
        json!({"kind":"none"}),
        "public",
    )
    .await;
    let g = t.game_id.clone();
    let ts = say(&mut t.host, Some(&mut t.guest), &g, "you are bad").await;
    let rep = t.guest
        .request(json!({"t":"report","player_id":t.host.player_id,"reason":"chat_abuse","game_id":g,"ts":ts}))
        .await;
    assert_eq!(rep["t"], "reported", "{rep}");
    let report = rep["report_id"].as_str().unwrap().to_string();
    let x = t.host.player_id.clone();
    let token = t.host.token.clone();

    // Muted through node A: refused on node B within a second.
    let muted = admin(
        &nodes[0],
        "POST",
        &format!("/api/admin/players/{x}/mute"),
        json!({"reason":"insults","duration_ms":600_000}),
    );
    let took = until_forbidden(&mut t.host, &g, Instant::now()).await;
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    let push = t.host.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(push["action"], "mute");

    // Banned through node C: the connection on node B ends, a hello on node A is refused,
    // the game ends as a loss by `banned`.
    let since = Instant::now();
    let banned = admin(
        &nodes[2],
        "POST",
        &format!("/api/admin/players/{x}/ban"),
        json!({"reason":"abuse"}),
    );
    assert_eq!(t.host.closed().await, 4403);
    assert!(
        since.elapsed() < Duration::from_secs(2),
        "closed after {:?}",
        since.elapsed()
    );
    let mut c = Client::connect(&nodes[0]).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":token}))
        .await;
    assert_eq!(code(&refused), "unauthorized", "{refused}");
    let doc = ended(&nodes[0], &g, None).await;
    assert_eq!(doc["status"]["reason"], "banned", "{doc}");
    let guest_side = side_of(&doc, &t.guest.player_id).unwrap();
    assert_eq!(doc["status"]["winner"], guest_side.as_str());
    drop(t);
    drop(c);

    // Every node restarted, Redis kept: the reports, sanctions and log are still there.
    for n in &mut nodes {
        n.terminate();
    }
    drop(nodes);
    let nodes: Vec<Server> = ["na", "nb", "nc"]
        .iter()
        .map(|id| cluster_node(&redis, &dir, id))
        .collect();
    let shown = admin(
        &nodes[1],
        "GET",
        &format!("/api/admin/reports/{report}"),
        Value::Null,
    );
    assert_eq!(shown["target"], x.as_str());
    assert_eq!(shown["context"][0]["reported"], true, "{shown}");
    let standing = admin(&nodes[2], "GET", "/api/admin/sanctions", Value::Null);
    let ids: Vec<&str> = standing["sanctions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            muted["id"].as_str().unwrap(),
            banned["id"].as_str().unwrap()
        ]
    );
    let log = admin(&nodes[0], "GET", "/api/admin/audit", Value::Null);
    let actions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["ban", "mute"]);
    let mut c = Client::connect(&nodes[1]).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":token}))
        .await;
    assert_eq!(code(&refused), "unauthorized", "{refused}");
}
