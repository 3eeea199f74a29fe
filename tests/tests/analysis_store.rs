//! The analysis queue's part of the `Store` contract, run against the in-memory store, Redis
//! and a Redis Cluster alike: a game is queued once, a player has one pending request, a
//! job is leased to one worker at a time, a lease given back or run out returns the job to
//! the front of the queue, and a result is stored only under the current lease (once). In
//! Redis a done review expires with its game's record.

use std::time::Duration;

use serde_json::json;
use stoa_server::ids::{GameId, PlayerId};
use stoa_server::store::memory::MemoryStore;
use stoa_server::store::redis::{RedisOptions, RedisStore};
use stoa_server::store::{AnalysisRequested, AnalysisStatus, Store};
use stoa_tests::redis::RedisServer;

async fn analysis_contract(store: &dyn Store) {
    let (g1, g2, g3) = (
        GameId::from("ga1"),
        GameId::from("ga2"),
        GameId::from("ga3"),
    );
    let (ann, bob) = (PlayerId::from("pann"), PlayerId::from("pbob"));
    assert_eq!(store.analysis(&g1).await.unwrap(), None);
    assert_eq!(store.analysis_workers_seen().await.unwrap(), 0);
    assert_eq!(
        store.take_analysis_job("l0", 1_000, 100).await.unwrap(),
        None
    );
    assert_eq!(store.analysis_workers_seen().await.unwrap(), 1_000);

    // Queued once; the same player waits for their first request; another may ask.
    assert_eq!(
        store.request_analysis(&g1, &ann).await.unwrap(),
        AnalysisRequested::Queued
    );
    assert_eq!(
        store.request_analysis(&g1, &bob).await.unwrap(),
        AnalysisRequested::Exists(AnalysisStatus::Queued)
    );
    assert_eq!(
        store.request_analysis(&g2, &ann).await.unwrap(),
        AnalysisRequested::Busy(g1.clone())
    );
    assert_eq!(
        store.request_analysis(&g2, &bob).await.unwrap(),
        AnalysisRequested::Queued
    );
    let entry = store.analysis(&g1).await.unwrap().unwrap();
    assert_eq!(entry.status, AnalysisStatus::Queued);
    assert_eq!(entry.requested_by, ann);
    assert_eq!(entry.result, None);

    // Leased first in, first out; a lease given back puts its job first again.
    assert_eq!(
        store.take_analysis_job("la", 2_000, 100).await.unwrap(),
        Some(g1.clone())
    );
    assert_eq!(
        store.analysis(&g1).await.unwrap().unwrap().status,
        AnalysisStatus::Running
    );
    assert!(!store.release_analysis_job(&g1, "lx").await.unwrap());
    assert!(store.release_analysis_job(&g1, "la").await.unwrap());
    assert!(!store.release_analysis_job(&g1, "la").await.unwrap());
    assert_eq!(
        store.take_analysis_job("lb", 2_000, 100).await.unwrap(),
        Some(g1.clone())
    );
    // The old lease cannot store a result; the current one does, once.
    let result = json!({"start": 0.5, "plies": [], "engine": "t"});
    assert!(!store.complete_analysis(&g1, "la", &result).await.unwrap());
    assert!(store.complete_analysis(&g1, "lb", &result).await.unwrap());
    assert!(!store.complete_analysis(&g1, "lb", &result).await.unwrap());
    let done = store.analysis(&g1).await.unwrap().unwrap();
    assert_eq!(done.status, AnalysisStatus::Done);
    assert_eq!(done.result, Some(result.clone()));
    assert_eq!(
        store.request_analysis(&g1, &bob).await.unwrap(),
        AnalysisRequested::Exists(AnalysisStatus::Done)
    );
    // Done, its player may ask for another.
    assert_eq!(
        store.request_analysis(&g3, &ann).await.unwrap(),
        AnalysisRequested::Queued
    );

    // A lease kept alive stays; one that runs out returns its job to the front.
    assert_eq!(
        store.take_analysis_job("lc", 3_000, 100).await.unwrap(),
        Some(g2.clone())
    );
    store
        .keep_analysis_leases(&[(g2.clone(), "lc".into())], 3_090, 100)
        .await
        .unwrap();
    assert_eq!(
        store.take_analysis_job("ld", 3_150, 100).await.unwrap(),
        Some(g3.clone()),
        "the kept lease has not run out"
    );
    assert_eq!(
        store.take_analysis_job("le", 3_180, 100).await.unwrap(),
        None
    );
    assert_eq!(
        store.take_analysis_job("lf", 3_300, 100).await.unwrap(),
        Some(g2.clone()),
        "a lease that ran out returns its job"
    );
    assert!(!store.complete_analysis(&g2, "lc", &result).await.unwrap());
    assert!(store.complete_analysis(&g2, "lf", &result).await.unwrap());
    assert_eq!(store.analysis_workers_seen().await.unwrap(), 3_300);
}

#[tokio::test]
async fn memory_store_keeps_the_analysis_contract() {
    analysis_contract(&MemoryStore::new()).await;
}

#[tokio::test]
async fn redis_store_keeps_the_analysis_contract() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(RedisOptions {
        url: redis.url(),
        prefix: "ac".into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: None,
    })
    .await
    .unwrap();
    analysis_contract(&store).await;
}

#[tokio::test]
async fn redis_cluster_store_keeps_the_analysis_contract() {
    let cluster = stoa_tests::redis::RedisCluster::start(3);
    let store = RedisStore::connect(RedisOptions {
        url: cluster.urls(),
        prefix: "acc".into(),
        timeout: Duration::from_millis(2_000),
        fence: None,
        redis_cluster: true,
        finished_retention: None,
    })
    .await
    .unwrap();
    analysis_contract(&store).await;
}

/// A reply's integer (`:N\r\n`).
fn integer(reply: Option<String>) -> i64 {
    let reply = reply.expect("a reply");
    reply
        .trim()
        .strip_prefix(':')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not an integer: {reply}"))
}

/// In Redis a done review leaves the queue's hashes for a key of its own, which lives as
/// long as the game's record: the record's remaining time, or (no record) the retention of
/// a record; nothing of it stays behind once it expired.
#[tokio::test]
async fn redis_reviews_expire_with_their_records() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(RedisOptions {
        url: redis.url(),
        prefix: "ar".into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: Some(Duration::from_millis(400)),
    })
    .await
    .unwrap();
    let (g1, g2) = (GameId::from("gr1"), GameId::from("gr2"));
    let ann = PlayerId::from("pann");
    let result = json!({"start": 0.5, "plies": [], "engine": "t"});
    // g1's record has a minute to live (as `finish_game` leaves it under a retention).
    assert!(redis
        .command("SET ar:game:{gr1}:final x PX 60000")
        .is_some_and(|r| r.starts_with("+OK")));
    for (game, lease) in [(&g1, "l1"), (&g2, "l2")] {
        assert_eq!(
            store.request_analysis(game, &ann).await.unwrap(),
            AnalysisRequested::Queued
        );
        assert_eq!(
            store.take_analysis_job(lease, 1_000, 60_000).await.unwrap(),
            Some(game.clone())
        );
        assert!(store.complete_analysis(game, lease, &result).await.unwrap());
        let done = store.analysis(game).await.unwrap().unwrap();
        assert_eq!(done.status, AnalysisStatus::Done);
        assert_eq!(done.requested_by, ann);
        assert_eq!(done.result, Some(result.clone()));
    }
    // The hashes hold only what is queued or running.
    for part in ["state", "by", "lease", "pending"] {
        let n = integer(redis.command(&format!("HLEN ar:analysis:{{analysis}}:{part}")));
        assert_eq!(n, 0, "{part}");
    }
    let ttl = integer(redis.command("PTTL ar:analysis:{analysis}:review:gr1"));
    assert!((50_000..=60_000).contains(&ttl), "the record's time: {ttl}");
    let ttl = integer(redis.command("PTTL ar:analysis:{analysis}:review:gr2"));
    assert!((1..=400).contains(&ttl), "a record's retention: {ttl}");
    // Expired with its (absent) record: nothing is left of g2's review.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(store.analysis(&g2).await.unwrap(), None);
    assert_eq!(
        integer(redis.command("EXISTS ar:analysis:{analysis}:review:gr2")),
        0
    );
    assert_eq!(
        store.analysis(&g1).await.unwrap().map(|e| e.status),
        Some(AnalysisStatus::Done)
    );
    // Without retention a review is kept for good, as its record is.
    let forever = RedisStore::connect(RedisOptions {
        url: redis.url(),
        prefix: "af".into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: None,
    })
    .await
    .unwrap();
    forever.request_analysis(&g1, &ann).await.unwrap();
    forever
        .take_analysis_job("l3", 1_000, 60_000)
        .await
        .unwrap();
    assert!(forever.complete_analysis(&g1, "l3", &result).await.unwrap());
    assert_eq!(
        integer(redis.command("PTTL af:analysis:{analysis}:review:gr1")),
        -1
    );
}
