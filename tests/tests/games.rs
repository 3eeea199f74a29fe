//! Full games of every kind between two real clients in a private room, with a third client
//! watching from the start: every diff reaches everyone, each patch turns the previous
//! document into the next, and every view ends equal to a fresh snapshot.

use serde_json::json;
use stoa_tests::{quick_options, Client, Server, Table, Tracked};

async fn full_game(kind: &str, seed: u64) {
    let server = Server::start();
    let mut table = Table::open(&server, kind, quick_options(kind), "private").await;
    // Random Akunur games rarely end; stepping back and forth ends them by repetition.
    table.repeat_back = kind == "akunur";
    // A spectator joins with the room code: the room is full, so it answers like
    // game.watch (a snapshot).
    let mut watcher = Client::guest(&server, "watcher").await;
    let snap = watcher
        .request(json!({"t":"room.join","code":table.code}))
        .await;
    let mut watched = Tracked::from_snapshot(&snap);
    assert_eq!(
        watched.doc, table.host_doc.doc,
        "the watcher starts from the same document"
    );

    let started = std::time::Instant::now();
    let moves = table.play_out(seed, 600).await;
    eprintln!("{kind}: {moves} moves in {:?}", started.elapsed());
    assert!(moves > 0);
    let final_seq = table.host_doc.seq;
    watched.catch_up(&mut watcher, final_seq).await;

    let doc = &table.host_doc.doc;
    assert_eq!(doc["status"]["state"], "ended", "{doc}");
    assert!(
        doc["status"]["reason"].is_string() && doc["status"]["reason"] != "resign",
        "the game ends by rule: {}",
        doc["status"]
    );
    eprintln!("{kind}: {}", doc["status"]);
    assert_eq!(doc["to_act"], serde_json::Value::Null);
    assert_eq!(doc["moves"].as_array().map(Vec::len), Some(moves));

    // Every view equals a fresh snapshot, over websocket and HTTP (with the code).
    let fresh = table.snapshot().await;
    assert_eq!(fresh["seq"].as_u64(), Some(final_seq));
    assert_eq!(table.host_doc.doc, fresh["doc"]);
    assert_eq!(table.guest_doc.doc, fresh["doc"]);
    assert_eq!(watched.doc, fresh["doc"]);
    assert_eq!(table.host_doc.diffs, table.guest_doc.diffs);
    let (status, http_doc) = server.api_game(&table.game_id, Some(&table.code));
    assert_eq!(status, 200);
    assert_eq!(http_doc, fresh["doc"]);

    // A move after the end gets game_over.
    let game_id = table.game_id.clone();
    let err = table
        .host
        .request(json!({"t":"game.move","game_id":game_id,"move":"a1"}))
        .await;
    assert_eq!(err["code"], "game_over", "{err}");
}

#[tokio::test]
async fn unane_full_game() {
    full_game("unane", 1).await;
}

#[tokio::test]
async fn staku_full_game() {
    full_game("staku", 2).await;
}

#[tokio::test]
async fn akron_full_game() {
    full_game("akron", 3).await;
}

#[tokio::test]
async fn akunur_full_game() {
    full_game("akunur", 4).await;
}
