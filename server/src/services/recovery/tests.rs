//! Recovery over the memory store: logs replayed to the same seq, logs that do not replay
//! left for an operator, and a log that ended its game.

use std::time::Duration;

use serde_json::{json, Value};
use stoa_protocol::wire::Visibility;
use tokio::sync::{oneshot, watch};

use super::*;
use crate::config::Config;
use crate::game::Command;
use crate::services::hub::Hub;
use crate::store::memory::MemoryStore;
use crate::store::{ActionKind, ActionRecord, GameRecord, SeatRecord, Store};

fn hub(store: Arc<dyn Store>) -> Arc<Hub> {
    let config = Config {
        spectator_batch_ms: 10,
        ..Config::default()
    };
    let (_tx, rx) = watch::channel(false);
    Arc::new(Hub::new(config, store, rx))
}

/// An untimed staku game with its first `n` legal moves logged (each with its
/// position).
async fn logged_game(store: &MemoryStore, id: &GameId, n: usize) -> Vec<String> {
    let options = stoa_protocol::kind("staku")
        .unwrap()
        .validate_options(&json!({"max_stack": 2}))
        .unwrap();
    store
        .create_game(&GameRecord {
            id: id.clone(),
            kind: "staku".into(),
            options: options.clone(),
            clock: json!({"kind": "none"}),
            rated: false,
            visibility: Visibility::Public,
            code: None,
            players: [
                SeatRecord {
                    id: "pa".into(),
                    name: "a".into(),
                    rating: None,
                    bot: false,
                },
                SeatRecord {
                    id: "pb".into(),
                    name: "b".into(),
                    rating: None,
                    bot: false,
                },
            ],
            created_ms: 1,
            rematch_of: None,
            arena: None,
            start: None,
        })
        .await
        .unwrap();
    let mut game = stoa_protocol::kind("staku")
        .unwrap()
        .start(&options)
        .unwrap();
    let mut moves = Vec::new();
    for i in 0..n {
        let mv = game.legal_notations()[i % 3].clone();
        let side = game.to_act().unwrap().index();
        game.play(&mv).unwrap();
        store
            .append_action(
                id,
                &std::sync::Arc::new(ActionRecord {
                    seq: i as u64 + 1,
                    at_ms: 10 + i as u64,
                    player_id: ["pa", "pb"][side].into(),
                    action: ActionKind::Move {
                        notation: mv.clone(),
                        credit_ms: 0,
                    },
                    position: Some(game.position()),
                    cmd: None,
                }),
            )
            .await
            .unwrap();
        moves.push(mv);
    }
    moves
}

async fn snapshot(hub: &Arc<Hub>, id: &GameId) -> Option<(u64, Value)> {
    let handle = hub.games.get(id)?;
    let (tx, rx) = oneshot::channel();
    handle
        .tx
        .send(Command::Snapshot {
            viewer: None,
            code: None,
            reply: tx,
        })
        .await
        .ok()?;
    rx.await.ok()?
}

#[tokio::test]
async fn replays_logs_and_continues_at_the_same_seq() {
    let store = Arc::new(MemoryStore::new());
    let moves = logged_game(&store, &"ggood".into(), 6).await;
    let hub = hub(store.clone());
    let report = hub.recovery.recover().await.unwrap();
    assert_eq!(
        (report.games, report.actions, report.failed.len()),
        (1, 6, 0)
    );
    let (seq, doc) = snapshot(&hub, &"ggood".into()).await.expect("live again");
    // Six logged events, no clock running (nothing to resume): the seq it had.
    assert_eq!(seq, 6);
    assert_eq!(doc["moves"], json!(moves));
    assert_eq!(doc["status"]["state"], "playing");
    assert!(
        doc.get("online").is_none(),
        "the crowd is not in the document"
    );
    assert_eq!(store.actions(&"ggood".into()).await.unwrap().len(), 6);
}

#[tokio::test]
async fn a_log_that_does_not_replay_is_left_out() {
    let store = Arc::new(MemoryStore::new());
    logged_game(&store, &"gfine".into(), 2).await;
    // A stored position that the replay does not reach.
    logged_game(&store, &"gbent".into(), 2).await;
    let mut bent = store.actions(&"gbent".into()).await.unwrap().pop().unwrap();
    bent.seq += 1;
    bent.action = ActionKind::Resign;
    bent.position = Some("not the position".into());
    store
        .append_action(&"gbent".into(), &bent.into())
        .await
        .unwrap();
    // An illegal move.
    logged_game(&store, &"gbad".into(), 1).await;
    let mut bad = store.actions(&"gbad".into()).await.unwrap().pop().unwrap();
    bad.seq += 1;
    bad.action = ActionKind::Move {
        notation: "z9-z8".into(),
        credit_ms: 0,
    };
    bad.position = None;
    store
        .append_action(&"gbad".into(), &bad.into())
        .await
        .unwrap();
    let hub = hub(store.clone());
    let report = hub.recovery.recover().await.unwrap();
    assert_eq!(report.games, 1);
    let mut failed: Vec<&str> = report.failed.iter().map(|(id, _)| id.as_str()).collect();
    failed.sort_unstable();
    assert_eq!(failed, ["gbad", "gbent"]);
    assert!(report
        .failed
        .iter()
        .any(|(_, e)| e.contains("not the position")));
    assert!(snapshot(&hub, &"gfine".into()).await.is_some());
    assert!(hub.games.get(&"gbent".into()).is_none());
    assert!(hub.games.get(&"gbad".into()).is_none());
    // Left in the store for an operator.
    assert_eq!(store.all_unfinished_games().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_log_that_ended_the_game_stores_its_final_document() {
    let store = Arc::new(MemoryStore::new());
    logged_game(&store, &"gdone".into(), 3).await;
    let mut last = store.actions(&"gdone".into()).await.unwrap().pop().unwrap();
    last.seq += 1;
    last.action = ActionKind::Resign;
    store
        .append_action(&"gdone".into(), &last.into())
        .await
        .unwrap();
    let hub = hub(store.clone());
    let report = hub.recovery.recover().await.unwrap();
    assert_eq!((report.games, report.ended), (1, 1));
    for _ in 0..200 {
        if store
            .finished_game(&"gdone".into())
            .await
            .unwrap()
            .is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let finished = store
        .finished_game(&"gdone".into())
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(finished.doc["status"]["reason"], "resign");
    assert!(store.all_unfinished_games().await.unwrap().is_empty());
    assert!(store
        .unfinished_games(&"pa".into())
        .await
        .unwrap()
        .is_empty());
}
