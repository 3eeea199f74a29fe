use std::io::{self, IoSlice};
use std::sync::Mutex;
use std::task::{Context, Poll};

use serde_json::json;
use stoa_protocol::wire::ServerMessage;

use super::*;
use crate::game::core::{write_patch, PatchOp};
use crate::metrics::Metrics;
use crate::net::socket::RawSocket;
use stoa_protocol::clock::VirtualTime;

static LOBBY: Kind = Kind {
    snapshot: "lobby",
    snapshot_id: None,
    diff: "lobby.diff",
    diff_id: None,
};

static GAME: Kind = Kind {
    snapshot: "game.snapshot",
    snapshot_id: Some("game_id"),
    diff: "game.diff",
    diff_id: Some("game_id"),
};

/// A socket that takes `room` bytes and keeps them (none: every write would block, and
/// frames wait in the connection's queue).
struct Socket {
    room: Mutex<usize>,
    written: Mutex<Vec<u8>>,
}

impl RawSocket for Socket {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut room = self.room.lock().unwrap();
        let mut written = self.written.lock().unwrap();
        let mut n = 0;
        for b in bufs {
            let take = b.len().min(*room);
            written.extend_from_slice(&b[..take]);
            *room -= take;
            n += take;
        }
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }
    fn poll_write_ready(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
    fn try_read(&self, _buf: &mut [u8]) -> io::Result<usize> {
        Err(io::ErrorKind::WouldBlock.into())
    }
    fn poll_read_ready(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

/// A connection `id` over a socket with `room` bytes (its queue holds two frames more).
fn conn(id: u64, room: usize) -> (Arc<ConnHandle>, Arc<Socket>) {
    let socket = Arc::new(Socket {
        room: Mutex::new(room),
        written: Mutex::new(Vec::new()),
    });
    let conn = ConnHandle::new(
        id,
        socket.clone(),
        2,
        Arc::new(Metrics::default()),
        Arc::new(VirtualTime::new(0)),
    );
    (Arc::new(conn), socket)
}

/// The bytes of these messages' frames, one after the other.
fn frames(msgs: &[ServerMessage]) -> Vec<u8> {
    msgs.iter()
        .flat_map(|m| Frame::text(m.to_json()).as_bytes().to_vec())
        .collect()
}

fn written(socket: &Socket) -> Vec<u8> {
    std::mem::take(&mut *socket.written.lock().unwrap())
}

/// A game's diff adding move `mv`.
fn add_move(mv: &str) -> Vec<PatchOp> {
    vec![PatchOp {
        op: "add",
        path: "/moves/-".into(),
        value: json!(mv),
    }]
}

fn game_diff(seq: u64, mv: &str) -> ServerMessage {
    ServerMessage::GameDiff {
        game_id: "g1".into(),
        seq,
        patch: json!(add_move(mv)),
    }
}

#[test]
fn a_change_moves_the_seq_and_goes_out_once_as_its_diff() {
    let mut lobby = Published::new(json!({"online": 1, "rooms": {}}), 4, &LOBBY, "", 0);
    let (watcher, socket) = conn(1, 1 << 20);
    assert!(lobby.watch(watcher, None));
    let new = json!({"online": 2, "rooms": {"ABC": {"kind": "unane"}}});
    assert!(lobby.update(new.clone()));
    assert_eq!(lobby.seq(), 5);
    assert_eq!(lobby.doc(), &new);
    let patch = json!(json_patch::diff(&json!({"online": 1, "rooms": {}}), &new));
    assert_eq!(
        written(&socket),
        frames(&[
            ServerMessage::Lobby {
                rid: None,
                seq: 4,
                doc: json!({"online": 1, "rooms": {}}),
            },
            ServerMessage::LobbyDiff { seq: 5, patch },
        ])
    );
}

#[test]
fn an_unchanged_document_sends_nothing_and_keeps_its_seq() {
    let doc = json!({"online": 1});
    let mut lobby = Published::new(doc.clone(), 0, &LOBBY, "", 0);
    let (watcher, socket) = conn(1, 1 << 20);
    assert!(lobby.watch(watcher, Some(&Rid::Int(7))));
    written(&socket);
    assert!(!lobby.update(doc.clone()));
    assert_eq!(lobby.seq(), 0);
    assert!(written(&socket).is_empty());
}

#[test]
fn a_watcher_giving_since_gets_the_diffs_it_missed() {
    let mut game = Published::new((), 0, &GAME, "g1", 8);
    for (i, mv) in ["a", "b", "c"].iter().enumerate() {
        assert!(game
            .publish(|out| write_patch(out, &add_move(mv)))
            .is_empty());
        assert_eq!(game.seq(), i as u64 + 1);
    }
    let (late, socket) = conn(1, 1 << 20);
    let caught = game.catch_up(&late, None, Some(1), |_| unreachable!("no snapshot"));
    assert_eq!(caught, Some(CaughtUp::Replayed));
    assert_eq!(
        written(&socket),
        frames(&[game_diff(2, "b"), game_diff(3, "c")])
    );
    // Current already: nothing to send.
    let caught = game.catch_up(&late, None, Some(3), |_| unreachable!("no snapshot"));
    assert_eq!(caught, Some(CaughtUp::Replayed));
    assert!(written(&socket).is_empty());
}

#[test]
fn a_watcher_further_behind_than_the_replay_gets_the_snapshot() {
    let mut game = Published::new((), 0, &GAME, "g1", 2);
    for mv in ["a", "b", "c", "d"] {
        game.publish(|out| write_patch(out, &add_move(mv)));
    }
    let (late, socket) = conn(1, 1 << 20);
    let mut encoded = 0;
    let doc = json!({"moves": ["a", "b", "c", "d"]});
    for since in [Some(1), None, Some(9)] {
        let caught = game.catch_up(&late, Some(&Rid::Int(1)), since, |_| {
            encoded += 1;
            doc.to_string()
        });
        assert_eq!(caught, Some(CaughtUp::Snapshot));
        let snapshot = ServerMessage::GameSnapshot {
            rid: Some(Rid::Int(1)),
            game_id: "g1".into(),
            seq: 4,
            doc: doc.clone(),
        };
        assert_eq!(written(&socket), frames(&[snapshot]));
    }
    // Encoded once for the seq, whoever asks.
    assert_eq!(encoded, 1);
    // The two newest are still replayed.
    let caught = game.catch_up(&late, None, Some(2), |_| unreachable!("no snapshot"));
    assert_eq!(caught, Some(CaughtUp::Replayed));
    assert_eq!(
        written(&socket),
        frames(&[game_diff(3, "c"), game_diff(4, "d")])
    );
}

#[test]
fn a_document_that_goes_back_is_sent_whole_and_never_replayed_above_that_seq() {
    let mut game = Published::new((), 0, &GAME, "g1", 8);
    let (watcher, socket) = conn(1, 1 << 20);
    game.subscribe(watcher, false);
    for mv in ["a", "b", "c", "d"] {
        game.publish(|out| write_patch(out, &add_move(mv)));
    }
    written(&socket);
    // The store lost "c" and "d": the game goes back to seq 2, and every watcher gets the
    // document whole, without a rid.
    let doc = json!({"moves": ["a", "b"]});
    assert!(game.rewind(2, |_| doc.to_string()).is_empty());
    assert_eq!(game.seq(), 2);
    let pushed = ServerMessage::GameSnapshot {
        rid: None,
        game_id: "g1".into(),
        seq: 2,
        doc: doc.clone(),
    };
    assert_eq!(written(&socket), frames(&[pushed]));
    // Another history from there: "x" at seq 3.
    game.publish(|out| write_patch(out, &add_move("x")));
    assert_eq!(written(&socket), frames(&[game_diff(3, "x")]));
    let (late, late_socket) = conn(2, 1 << 20);
    // A client at seq 2 (before what was lost) gets the new diff...
    let caught = game.catch_up(&late, None, Some(2), |_| unreachable!("no snapshot"));
    assert_eq!(caught, Some(CaughtUp::Replayed));
    assert_eq!(written(&late_socket), frames(&[game_diff(3, "x")]));
    // ...but one at seq 3 may hold the lost "c": the snapshot, never "nothing new".
    let now = json!({"moves": ["a", "b", "x"]});
    let caught = game.catch_up(&late, Some(&Rid::Int(5)), Some(3), |_| now.to_string());
    assert_eq!(caught, Some(CaughtUp::Snapshot));
    let answer = ServerMessage::GameSnapshot {
        rid: Some(Rid::Int(5)),
        game_id: "g1".into(),
        seq: 3,
        doc: now.clone(),
    };
    assert_eq!(written(&late_socket), frames(&[answer]));
}

#[test]
fn first_watchers_are_served_first_and_a_full_queue_is_dropped() {
    let mut game = Published::new((), 0, &GAME, "g1", 4);
    let (spectator, spectator_socket) = conn(1, 1 << 20);
    let (player, player_socket) = conn(2, 1 << 20);
    // A socket that takes nothing: its queue of two fills, the third frame drops it.
    let (stuck, _) = conn(3, 0);
    assert!(game.subscribe(spectator.clone(), false));
    assert!(game.subscribe(player, true));
    assert!(!game.subscribe(spectator, false));
    assert!(game.subscribe(stuck, false));
    assert_eq!((game.len(), game.others()), (3, 2));
    let order = game.watchers().map(|(id, _)| id).collect::<Vec<_>>();
    assert_eq!(order, [1, 2, 3]);
    for mv in ["a", "b"] {
        assert!(game
            .publish(|out| write_patch(out, &add_move(mv)))
            .is_empty());
    }
    let dropped = game.publish(|out| write_patch(out, &add_move("c")));
    assert_eq!(dropped.iter().map(|c| c.id).collect::<Vec<_>>(), [3]);
    assert!(!game.is_watching(3));
    assert_eq!((game.len(), game.others()), (2, 1));
    let all = frames(&[game_diff(1, "a"), game_diff(2, "b"), game_diff(3, "c")]);
    assert_eq!(written(&player_socket), all);
    assert_eq!(written(&spectator_socket), all);
    assert!(game.unsubscribe(2).is_some());
    assert_eq!((game.len(), game.others()), (1, 1));
    assert!(game.unsubscribe(2).is_none());
}

#[test]
fn nothing_is_encoded_for_nobody() {
    // No watcher and no replay: the seq moves on, nothing is kept.
    let mut lobby = Published::new(json!({"online": 1}), 0, &LOBBY, "", 0);
    assert!(lobby.update(json!({"online": 2})));
    assert_eq!(lobby.seq(), 1);
    assert!(lobby.replay.last_len().is_none());
    // The first snapshot afterwards shows the new document.
    let (watcher, socket) = conn(1, 1 << 20);
    assert!(lobby.watch(watcher, None));
    let snapshot = ServerMessage::Lobby {
        rid: None,
        seq: 1,
        doc: json!({"online": 2}),
    };
    assert_eq!(written(&socket), frames(&[snapshot]));
}

/// A crowd too big to write in place, on a runtime of two workers (its writes are shared
/// with a helper thread): still every watcher gets every diff in order, the seated
/// player first, and stuck watchers (in several parts) are dropped and forgotten.
#[test]
fn a_big_crowd_is_written_by_several_threads_in_order() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut game = Published::new((), 0, &GAME, "g1", 4);
        let (player, player_socket) = conn(0, 1 << 20);
        assert!(game.subscribe(player, true));
        let crowd = 3 * fanout::IN_PLACE + 7;
        let mut sockets = Vec::new();
        let mut stuck = Vec::new();
        for id in 1..=crowd as u64 {
            // Every 100th takes nothing: spread over every part.
            let room = if id % 100 == 0 { 0 } else { 1 << 16 };
            let (c, s) = conn(id, room);
            assert!(game.subscribe(c, false));
            match room {
                0 => stuck.push(id),
                _ => sockets.push(s),
            }
        }
        for mv in ["a", "b"] {
            assert!(game
                .publish(|out| write_patch(out, &add_move(mv)))
                .is_empty());
        }
        let dropped = game.publish(|out| write_patch(out, &add_move("c")));
        let mut dropped: Vec<u64> = dropped.iter().map(|c| c.id).collect();
        dropped.sort_unstable();
        assert_eq!(dropped, stuck);
        assert_eq!(game.len(), 1 + crowd - stuck.len());
        let all = frames(&[game_diff(1, "a"), game_diff(2, "b"), game_diff(3, "c")]);
        assert_eq!(written(&player_socket), all);
        for s in &sockets {
            assert_eq!(written(s), all);
        }
    });
}
