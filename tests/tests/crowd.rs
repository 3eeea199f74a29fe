//! A crowd too big for one thread to write: a game with 1,100 spectators on a server of two
//! worker threads, whose broadcasts are then shared with the fan-out thread
//! (`server/src/net/fanout.rs`). Every spectator must still get every diff, in order, and
//! end on the players' document.

use std::time::Duration;

use serde_json::json;
use stoa_tests::{measure, Client, Server, Table, Tracked, LOOSE};

const SPECTATORS: usize = 1_100;
const MOVES: u64 = 12;

/// The names of the server's threads (`/proc/<pid>/task/*/comm`).
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|s| s.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_spectator_of_a_big_crowd_gets_every_diff_in_order() {
    measure::raise_nofile();
    let mut args = LOOSE.to_vec();
    args.extend(["--threads", "2", "--max-connections-per-ip", "100000"]);
    let server = Server::start_with(&args);
    let mut table = Table::open(&server, "unane", json!({"width":8,"height":7}), "public").await;
    let game_id = table.game_id.clone();
    let mut crowd = Vec::with_capacity(SPECTATORS);
    for i in 0..SPECTATORS {
        let mut c = Client::guest(&server, &format!("s{i}")).await;
        let snap = c.request(json!({"t":"game.watch","game_id":game_id})).await;
        assert_eq!(snap["t"], "game.snapshot", "{snap}");
        crowd.push((c, Tracked::from_snapshot(&snap)));
    }
    for ply in 0..MOVES {
        table.step(ply).await.expect("the game goes on");
    }
    let last = table.host_doc.seq;
    let names = thread_names(server.pid());
    assert!(
        names.iter().any(|n| n == "stoa-fanout-0"),
        "the broadcasts were shared with a fan-out thread: {names:?}"
    );
    for (i, (c, tracked)) in crowd.iter_mut().enumerate() {
        while tracked.seq < last {
            let m = tokio::time::timeout(Duration::from_secs(10), c.recv())
                .await
                .unwrap_or_else(|_| panic!("spectator {i} stalled at seq {}", tracked.seq));
            if m["t"] != "game.diff" {
                continue;
            }
            assert_eq!(m["game_id"], game_id.as_str());
            assert_eq!(
                m["seq"].as_u64(),
                Some(tracked.seq + 1),
                "spectator {i}: diffs in order, none missing"
            );
            tracked.apply(&m);
        }
        assert_eq!(tracked.doc, table.host_doc.doc, "spectator {i}'s document");
    }
}
