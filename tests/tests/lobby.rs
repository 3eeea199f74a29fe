//! The live lobby against the real server: public rooms appear and disappear, public games
//! appear at start and disappear at end, queue and online counts follow, diffs are batched,
//! `lobby.unwatch` stops them, and a watcher's document (every diff applied) always equals a
//! fresh `lobby.watch` snapshot.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::lobby::{recv_within, LobbyView};
use stoa_tests::{pick, Client, Server, LOOSE};

/// The server's default lobby batch period, ms.
const BATCH_MS: usize = 300;

/// A server with the loose test limits but the default lobby batching.
fn default_batching() -> Server {
    let mut args = Vec::new();
    let mut it = LOOSE.iter();
    while let Some(a) = it.next() {
        if *a == "--lobby-batch-ms" {
            it.next();
        } else {
            args.push(*a);
        }
    }
    // One host creates 40 rooms in a burst below.
    args.extend(["--max-rooms-per-player", "100"]);
    Server::start_with(&args)
}

fn room(visibility: &str) -> Value {
    json!({"t":"room.create","kind":"akron","options":{"size":4},"clock":{"kind":"none"},
        "rated":false,"visibility":visibility,"side":"random"})
}

async fn create(c: &mut Client, visibility: &str) -> String {
    let r = c.request(room(visibility)).await;
    assert_eq!(r["t"], "room", "{r}");
    r["room"]["code"].as_str().expect("code").to_string()
}

fn has_room(code: &str) -> impl Fn(&Value) -> bool + '_ {
    move |d| d["rooms"].get(code).is_some()
}

fn count(d: &Value, key: &str) -> usize {
    d[key].as_object().map_or(0, |m| m.len())
}

#[tokio::test]
async fn lobby_follows_rooms_games_queues_and_presence() {
    let server = Server::start();
    let mut w = Client::guest(&server, "watcher").await;
    let mut view = LobbyView::watch(&mut w).await;
    assert_eq!(
        view.doc,
        json!({"rooms":{},"games":{},"queues":{},"arenas":{},"online":1})
    );

    // A public room appears with its host; a private one never does.
    let mut host = Client::guest(&server, "host").await;
    let code = create(&mut host, "public").await;
    let private = create(&mut host, "private").await;
    view.until(&mut w, has_room(&code)).await;
    let entry = &view.doc["rooms"][code.as_str()];
    assert_eq!(entry["kind"], "akron");
    assert_eq!(entry["options"]["size"], 4);
    assert_eq!(entry["rated"], false);
    assert_eq!(entry["host"]["id"], host.player_id.as_str());
    assert_eq!(entry["host"]["name"], "host");
    assert_eq!(entry["host"]["rating"], 1500);
    assert_eq!(view.doc["online"], 2);
    view.assert_equals_fresh(&mut w, &server).await;
    assert!(view.doc["rooms"].get(&private).is_none());

    // The host leaving closes the room: it disappears.
    let ok = host.request(json!({"t":"room.leave","code":code})).await;
    assert_eq!(ok["t"], "ok");
    view.until(&mut w, |d| count(d, "rooms") == 0).await;

    // A room that starts leaves the lobby and its game appears.
    let code = create(&mut host, "public").await;
    view.until(&mut w, has_room(&code)).await;
    let mut guest = Client::guest(&server, "guest").await;
    let joined = guest.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = host.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().expect("game_id").to_string();
    view.until(&mut w, |d| {
        d["games"].get(&game_id).is_some() && count(d, "rooms") == 0
    })
    .await;
    let g = &view.doc["games"][game_id.as_str()];
    assert_eq!(g["kind"], "akron");
    assert_eq!(g["clock"], "none");
    assert_eq!(g["rated"], false);
    assert_eq!(g["spectators"], 0);
    let players = g["players"].as_object().expect("players");
    let mut names: Vec<&str> = players
        .values()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    names.sort();
    assert_eq!(names, ["guest", "host"]);
    assert!(players.values().all(|p| p["rating"] == 1500));

    // A spectator shows in the game's entry.
    let mut spectator = Client::guest(&server, "spectator").await;
    let snap = spectator
        .request(json!({"t":"game.watch","game_id":game_id}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    view.until(&mut w, |d| d["games"][game_id.as_str()]["spectators"] == 1)
        .await;
    view.assert_equals_fresh(&mut w, &server).await;

    // The game ends: it leaves the lobby.
    let ok = host
        .request(json!({"t":"game.resign","game_id":game_id}))
        .await;
    assert_eq!(ok["t"], "ok");
    view.until(&mut w, |d| count(d, "games") == 0).await;

    // Queue counts follow joins and leaves.
    let ok = guest
        .request(json!({"t":"queue.join","kind":"unane","rated":true}))
        .await;
    assert_eq!(ok["t"], "queued");
    view.until(&mut w, |d| count(d, "queues") == 1).await;
    let q = view.doc["queues"]
        .as_object()
        .expect("queues")
        .values()
        .next()
        .expect("queue")
        .clone();
    assert_eq!(q["kind"], "unane");
    assert_eq!(q["rated"], true);
    assert_eq!(q["waiting"], 1);
    assert_eq!(q["clock"], json!({"kind":"none"}));
    let ok = guest.request(json!({"t":"queue.leave"})).await;
    assert_eq!(ok["t"], "ok");
    view.until(&mut w, |d| count(d, "queues") == 0).await;

    // The online count follows connections: players, not sockets (a second connection of
    // the host does not count; the spectator leaving does).
    let host2 = Client::with_token(&server, &host.token).await;
    spectator.close().await;
    view.until(&mut w, |d| d["online"] == 3).await;
    host2.close().await;
    view.assert_equals_fresh(&mut w, &server).await;
}

#[tokio::test]
async fn lobby_diffs_are_batched_and_unwatch_stops_them() {
    let server = default_batching();
    let mut w = Client::guest(&server, "watcher").await;
    let mut view = LobbyView::watch(&mut w).await;
    let mut host = Client::guest(&server, "host").await;

    // 40 rooms created in one burst reach the watcher in a few batched diffs.
    let t0 = Instant::now();
    for i in 0..40 {
        let mut req = room("public");
        req["rid"] = json!(1000 + i);
        host.send(req).await;
    }
    for i in 0..40 {
        let r = host.recv_where(move |m| m["rid"] == json!(1000 + i)).await;
        assert_eq!(r["t"], "room", "{r}");
    }
    view.until(&mut w, |d| count(d, "rooms") == 40).await;
    let elapsed = t0.elapsed().as_millis() as usize;
    // At most one diff per batch (plus one for the host's arrival and two for the batches
    // cut at both ends).
    assert!(
        view.diffs <= elapsed / BATCH_MS + 3,
        "{} diffs in {elapsed} ms",
        view.diffs
    );
    assert!(view.diffs < 40);
    view.assert_equals_fresh(&mut w, &server).await;

    // After lobby.unwatch, no more diffs.
    let ok = w.request(json!({"t":"lobby.unwatch"})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    w.pending.retain(|m| m["t"] != "lobby.diff");
    create(&mut host, "public").await;
    let d = recv_within(&mut w, Duration::from_millis(1000), |m| {
        m["t"] == "lobby.diff"
    })
    .await;
    assert!(d.is_none(), "diff after unwatch: {d:?}");
    let again = LobbyView::watch(&mut w).await;
    assert_eq!(count(&again.doc, "rooms"), 41);
}

/// Random activity by several players (rooms created, left, joined; games resigned; queue
/// joins and leaves; reconnections); the watcher's document must equal a fresh snapshot at
/// every checkpoint.
#[tokio::test]
async fn lobby_document_equals_fresh_snapshots_after_random_activity() {
    let server = Server::start();
    let mut w = Client::guest(&server, "watcher").await;
    let mut view = LobbyView::watch(&mut w).await;
    let mut players = Vec::new();
    for i in 0..4 {
        players.push(Client::guest(&server, &format!("p{i}")).await);
    }
    let mut rooms: Vec<(usize, String)> = Vec::new();
    let mut games: Vec<(usize, String)> = Vec::new();
    let seed = 11;
    for step in 0..40u64 {
        let who = pick(seed, step * 2, players.len());
        match pick(seed, step * 2 + 1, 6) {
            0 | 1 => {
                let vis = if step % 3 == 0 { "private" } else { "public" };
                let code = create(&mut players[who], vis).await;
                rooms.push((who, code));
            }
            2 if !rooms.is_empty() => {
                let (host, code) = rooms.remove(0);
                if host == who {
                    let ok = players[who]
                        .request(json!({"t":"room.leave","code":code}))
                        .await;
                    assert_eq!(ok["t"], "ok");
                } else {
                    let r = players[who]
                        .request(json!({"t":"room.join","code":code}))
                        .await;
                    assert_eq!(r["t"], "room", "{r}");
                    let game_id = r["room"]["game_id"].as_str().expect("game_id").to_string();
                    games.push((who, game_id));
                }
            }
            3 if !games.is_empty() => {
                let (p, game_id) = games.remove(0);
                let ok = players[p]
                    .request(json!({"t":"game.resign","game_id":game_id}))
                    .await;
                assert_eq!(ok["t"], "ok", "{ok}");
            }
            4 => {
                let kind = ["unane", "staku"][pick(seed, step, 2)];
                let ok = players[who]
                    .request(json!({"t":"queue.join","kind":kind,"rated":step % 2 == 0}))
                    .await;
                assert_eq!(ok["t"], "queued", "{ok}");
            }
            _ => {
                // Reconnect with the token, then close the old connection: the player stays
                // online (and queued, if it was).
                let token = players[who].token.clone();
                let old =
                    std::mem::replace(&mut players[who], Client::with_token(&server, &token).await);
                old.close().await;
            }
        }
        // Drop the other messages (game.started, snapshots, queue.status) as they come.
        for p in players.iter_mut() {
            p.clear();
        }
        if step % 8 == 7 {
            view.assert_equals_fresh(&mut w, &server).await;
        }
        // Spread the activity over several batches, so diffs cut through it.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the last batch go out, then compare once more.
    tokio::time::sleep(Duration::from_millis(400)).await;
    view.assert_equals_fresh(&mut w, &server).await;
    assert!(view.diffs >= 3, "only {} diffs", view.diffs);
}
