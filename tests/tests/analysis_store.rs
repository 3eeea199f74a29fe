//! The analysis queue's part of the `Store` contract, run against the in-memory store, Redis
//! and a Redis Cluster alike: a game is queued once, a player has one pending request, a
//! job is leased to one worker at a time, a lease given back or run out returns the job to
//! the front of the queue, and a result is stored only under the current lease (once).

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
