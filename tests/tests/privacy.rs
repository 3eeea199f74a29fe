//! Private games are not watchable (or readable over HTTP) without their code, public ones
//! are; tokens never appear in any document.

use serde_json::json;
use stoa_tests::{Client, Server, Table};

#[tokio::test]
async fn private_games_need_the_code() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":4,"height":3}), "private").await;
    let game_id = t.game_id.clone();
    t.step(1).await;

    let mut stranger = Client::guest(&server, "stranger").await;
    let e = stranger
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(e["code"], "forbidden", "{e}");
    let e = stranger
        .request(json!({"t":"game.watch","game_id":game_id,"code":"AAAAAAAAAA"}))
        .await;
    assert_eq!(e["code"], "forbidden", "{e}");
    let (status, _) = server.api_game(&game_id, None);
    assert_eq!(status, 404);
    let (status, _) = server.api_game(&game_id, Some("AAAAAAAAAA"));
    assert_eq!(status, 404);
    // Nor its legal moves (nor its seq): the same rule as watching.
    let e = stranger
        .request(json!({"t":"game.legal","game_id":game_id}))
        .await;
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(e.get("seq").is_none() && e.get("moves").is_none(), "{e}");
    // The players may.
    let legal = t
        .guest
        .request(json!({"t":"game.legal","game_id":game_id}))
        .await;
    assert_eq!(legal["t"], "legal", "{legal}");

    // With the code: by game.watch, room.join (full room), and HTTP.
    let snap = stranger
        .request(json!({"t":"game.watch","game_id":game_id,"code":t.code}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    // Once admitted by the code, legal moves too.
    let legal = stranger
        .request(json!({"t":"game.legal","game_id":game_id}))
        .await;
    assert_eq!(legal["t"], "legal", "{legal}");
    let code = t.code.clone();
    let snap2 = stranger.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(snap2["t"], "game.snapshot");
    let (status, doc) = server.api_game(&game_id, Some(&t.code));
    assert_eq!(status, 200);
    assert_eq!(doc["visibility"], "private");
    // Lower-case codes work too.
    let (status, _) = server.api_game(&game_id, Some(&t.code.to_lowercase()));
    assert_eq!(status, 200);
    // Unknown ids are 404.
    assert_eq!(server.api_game("gnope", None).0, 404);

    // Finished private games stay private.
    let r = t
        .host
        .request(json!({"t":"game.resign","game_id":game_id}))
        .await;
    assert_eq!(r["t"], "ok");
    assert_eq!(server.api_game(&game_id, None).0, 404);
    assert_eq!(server.api_game(&game_id, Some(&t.code)).0, 200);
    let mut other = Client::guest(&server, "other").await;
    let e = other
        .request(json!({"t":"game.legal","game_id":game_id}))
        .await;
    assert_eq!(e["code"], "forbidden", "{e}");
}

#[tokio::test]
async fn public_games_are_watchable_and_tokens_stay_secret() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":4,"height":3}), "public").await;
    let game_id = t.game_id.clone();
    let mut stranger = Client::guest(&server, "stranger").await;
    let snap = stranger
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    let (status, doc) = server.api_game(&game_id, None);
    assert_eq!(status, 200);
    assert_eq!(doc["visibility"], "public");
    t.play_out(2, 300).await;

    // Tokens appear nowhere: not in documents, diffs, snapshots, rooms, or HTTP.
    let (_, doc) = server.api_game(&game_id, None);
    let mut everything = vec![doc.to_string(), snap.to_string()];
    for c in [&mut t.host, &mut t.guest, &mut stranger] {
        for m in c.pending.drain(..) {
            everything.push(m.to_string());
        }
    }
    let (_, metrics) = server.http_get("/metrics");
    everything.push(metrics);
    for token in [&t.host.token, &t.guest.token, &stranger.token] {
        for text in &everything {
            assert!(!text.contains(token.as_str()), "a token leaked into {text}");
        }
    }
    // Documents show public ids and names only.
    let players = t.host_doc.doc["players"].as_object().unwrap();
    for p in players.values() {
        let keys: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "name", "rating"]);
    }
}

#[tokio::test]
async fn http_endpoints() {
    let server = Server::start();
    let (status, body) = server.http_get("/health");
    assert_eq!(status, 200);
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["status"], "ok");
    let _c = Client::guest(&server, "m").await;
    let (status, body) = server.http_get("/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("# TYPE stoa_connections_open gauge"));
    assert!(body.contains("stoa_connections_open 1"));
    assert!(body.contains("stoa_games_live{kind=\"unane\"}"));
    assert!(body.contains("stoa_store_latency_seconds_count"));
    assert_eq!(server.http_get("/nope").0, 404);
}

/// The lobby lists public waiting rooms and live public games, never private ones, and
/// follows changes with diffs.
#[tokio::test]
async fn lobby_lists_only_public_rooms_and_games() {
    let server = Server::start();
    let mut viewer = Client::guest(&server, "viewer").await;
    let lobby = viewer.request(json!({"t":"lobby.watch"})).await;
    assert_eq!(lobby["t"], "lobby", "{lobby}");
    let mut seq = lobby["seq"].as_u64().unwrap();
    let mut doc = lobby["doc"].clone();
    for key in ["rooms", "games", "queues", "online"] {
        assert!(doc.get(key).is_some(), "lobby has {key}: {doc}");
    }

    let mut host = Client::guest(&server, "host").await;
    let public = host
        .request(json!({"t":"room.create","kind":"staku","visibility":"public"}))
        .await;
    let public_code = public["room"]["code"].as_str().unwrap().to_string();
    let private = host
        .request(json!({"t":"room.create","kind":"staku","visibility":"private"}))
        .await;
    let private_code = private["room"]["code"].as_str().unwrap().to_string();

    // Follow diffs until the public room shows up.
    while doc["rooms"].get(&public_code).is_none() {
        let d = viewer.recv_where(|m| m["t"] == "lobby.diff").await;
        assert_eq!(d["seq"].as_u64().unwrap(), seq + 1);
        seq += 1;
        let patch: json_patch::Patch = serde_json::from_value(d["patch"].clone()).unwrap();
        json_patch::patch(&mut doc, &patch).unwrap();
    }
    assert!(doc["rooms"].get(&private_code).is_none());
    assert_eq!(doc["rooms"][&public_code]["kind"], "staku");

    // A guest joins the public room: the room leaves the lobby, the game enters it.
    let mut guest = Client::guest(&server, "guest").await;
    guest
        .request(json!({"t":"room.join","code":public_code}))
        .await;
    let started = guest.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().unwrap().to_string();
    // And a private game starts too; it must never be listed.
    let mut other = Client::guest(&server, "other").await;
    other
        .request(json!({"t":"room.join","code":private_code}))
        .await;
    let private_game = other.recv_where(|m| m["t"] == "game.started").await["game_id"]
        .as_str()
        .unwrap()
        .to_string();
    while doc["games"].get(&game_id).is_none() || doc["rooms"].get(&public_code).is_some() {
        let d = viewer.recv_where(|m| m["t"] == "lobby.diff").await;
        assert_eq!(d["seq"].as_u64().unwrap(), seq + 1);
        seq += 1;
        let patch: json_patch::Patch = serde_json::from_value(d["patch"].clone()).unwrap();
        json_patch::patch(&mut doc, &patch).unwrap();
    }
    assert_eq!(doc["games"][&game_id]["kind"], "staku");
    assert!(doc["games"].get(&private_game).is_none());
    assert!(doc["rooms"].get(&private_code).is_none());
    let fresh = other.request(json!({"t":"lobby.watch"})).await;
    assert!(fresh["doc"]["games"].get(&private_game).is_none());
    assert!(!fresh.to_string().contains(&private_code));
}

#[tokio::test]
async fn a_room_code_in_place_of_the_game_id_watches_the_game() {
    let server = Server::start();
    let t = Table::open(&server, "unane", json!({"width":4,"height":3}), "private").await;
    let mut stranger = Client::guest(&server, "stranger").await;
    let snap = stranger
        .request(json!({"t":"game.watch","game_id":t.code.to_lowercase()}))
        .await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    assert_eq!(snap["game_id"], t.game_id.as_str());
    assert_eq!(snap["doc"]["id"], t.game_id.as_str());
    // A code that names no room is still unknown.
    let e = stranger
        .request(json!({"t":"game.watch","game_id":"ZZZZZZZZZZ"}))
        .await;
    assert_eq!(e["code"], "not_found", "{e}");
}

/// A live private game is served over HTTP to its players by bearer token, as it is once
/// finished; strangers and other players still get 404 (issue 47, item 6).
#[tokio::test]
async fn a_live_private_game_is_served_to_its_players_by_token() {
    let server = Server::start();
    let t = Table::open(&server, "staku", json!({}), "private").await;
    let path = format!("/api/games/{}", t.game_id);
    for token in [&t.host.token, &t.guest.token] {
        let (status, body) = server.http_get_as(&path, Some(token));
        assert_eq!(status, 200, "{body}");
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["id"], t.game_id.as_str());
        assert_eq!(doc["status"]["state"], "playing");
    }
    let stranger = Client::guest(&server, "stranger").await;
    assert_eq!(server.http_get_as(&path, Some(&stranger.token)).0, 404);
    assert_eq!(server.http_get_as(&path, None).0, 404);
    assert_eq!(server.http_get_as(&path, Some("not-a-token")).0, 404);
}
