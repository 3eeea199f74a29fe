//! The `Topology` contract — the seam between a single node and a cluster — run against the
//! single node and a one-node cluster over a real Redis alike, so that the services, which
//! only see the seam, behave the same on both: queue routing keeps places and leaves,
//! player locks exclude each other and time out as `unavailable`, a new game's lease is
//! granted, a node's own listings are never reported as another node's, and the per-IP
//! quota admits connections under its limit. The peers a game actor sees keep one contract
//! too: a game whose lease this node took is owned by this node, this node counts as alive,
//! and a message to a node nobody runs certainly reaches nobody.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use stoa_protocol::wire::{ErrorCode, SeatPlayer};
use stoa_server::cluster::messages::BusMessage;
use stoa_server::cluster::{Cluster, ClusterEvent};
use stoa_server::config::Config;
use stoa_server::domain::pairing::QueueKey;
use stoa_server::game::capabilities::Peers;
use stoa_server::game::queues::Matchmaker;
use stoa_server::services::registries::Registries;
use stoa_server::services::topology::{
    GameChannels, Leases, Listings, Membership, RoomSharing, ServedBot, SingleNode, Topology,
};
use stoa_server::store::redis::{RedisOptions, RedisStore};
use stoa_tests::redis::RedisServer;
use tokio::sync::{mpsc, watch};

fn seat(id: &str) -> SeatPlayer {
    SeatPlayer {
        id: id.into(),
        name: id.into(),
        rating: None,
        bot: false,
    }
}

fn key(kind: &str) -> QueueKey {
    QueueKey::new(kind, &json!({}), &json!({"kind": "none"}), false)
}

async fn contract(topology: Arc<dyn Topology>, queues: &Matchmaker) {
    // Queue routing: places in order, one queue per player, leaving is idempotent.
    assert_eq!(
        topology
            .queue_join(key("staku"), seat("pa"), 1500.0)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        topology
            .queue_join(key("staku"), seat("pb"), 1500.0)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        topology
            .queue_join(key("akron"), seat("pc"), 1500.0)
            .await
            .unwrap(),
        1
    );
    // Joining another queue moves the player.
    assert_eq!(
        topology
            .queue_join(key("akron"), seat("pa"), 1500.0)
            .await
            .unwrap(),
        2
    );
    let counts: Vec<(String, usize)> = queues
        .counts()
        .into_iter()
        .map(|(k, n)| (k.kind, n))
        .collect();
    assert_eq!(counts, [("akron".to_string(), 2), ("staku".to_string(), 1)]);
    topology.queue_leave(&"pa".into()).await;
    topology.queue_leave(&"pa".into()).await;
    topology.queue_leave(&"nobody".into()).await;
    assert_eq!(queues.queue_of(&"pa".into()), None);
    assert_eq!(
        queues.queue_of(&"pb".into()).map(|k| k.kind),
        Some("staku".into())
    );

    // Player locks: a second update of the same player waits for the first.
    let held = topology.lock_players(["pa", "pb"]).await.unwrap();
    let waiter = {
        let topology = topology.clone();
        tokio::spawn(async move {
            let lock = topology.lock_players(["pb", "pc"]).await.unwrap();
            topology.unlock_players(lock).await;
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiter.is_finished(),
        "pb is locked: the second update waits"
    );
    // Other players are not held up.
    let other = topology.lock_players(["pd", "pd"]).await.unwrap();
    topology.unlock_players(other).await;
    topology.unlock_players(held).await;
    tokio::time::timeout(Duration::from_secs(2), waiter)
        .await
        .expect("the waiter gets the lock once released")
        .unwrap();
    // A lock held too long: the other update is told to try again, and nothing is held.
    let held = topology.lock_players(["pe", "pf"]).await.unwrap();
    let busy = topology.lock_players(["pf", "pg"]).await.unwrap_err();
    assert_eq!(busy.code, ErrorCode::Unavailable);
    topology.unlock_players(held).await;
    let again = topology.lock_players(["pg", "pf"]).await.unwrap();
    topology.unlock_players(again).await;

    // A new game's lease is granted.
    assert!(topology.acquire(&"gnew".into()).await.unwrap());

    // A node's own listings are its own: never among the other nodes'.
    topology
        .put_lobby_part(&json!({"rooms": {}, "games": {}, "queues": {}, "online": 3}))
        .await;
    assert!(topology.lobby_parts().await.is_empty());
    topology
        .put_bots(&[ServedBot {
            player: "pbot".into(),
            kinds: vec!["staku".into()],
            levels: vec![1],
        }])
        .await;
    assert!(topology.remote_bots().await.is_empty());
    assert!(
        topology.claim_bot(&"pbot".into()).await,
        "a free bot can be taken"
    );
    topology.free_bot(&"pbot".into()).await;

    // The per-IP quota admits connections under its limit.
    let ip: IpAddr = "198.51.100.7".parse().unwrap();
    for _ in 0..5 {
        assert!(topology.allow_ip(ip, 5, 60_000).await);
    }

    // Attempts are counted per key over the window: the sixth is refused, other keys are
    // not held back by it.
    for _ in 0..5 {
        assert!(topology.allow_attempt("login-name:ann", 5, 60_000).await);
    }
    assert!(!topology.allow_attempt("login-name:ann", 5, 60_000).await);
    assert!(topology.allow_attempt("login-name:bob", 5, 60_000).await);
}

/// What a game actor relies on from its peers, once `topology` granted `gnew`'s lease.
async fn peers_contract(peers: Arc<dyn Peers>, node: &str) {
    assert_eq!(peers.node(), node);
    assert!(peers.is_live(node), "this node is alive");
    assert_eq!(
        peers.owner_of(&"gnew".into()).await.unwrap().as_deref(),
        Some(node)
    );
    let message = BusMessage::Owner {
        game: "gnew".into(),
        node: node.into(),
    };
    assert_eq!(
        peers.send_to("nobody-runs-this", &message).await,
        Some(false),
        "a message to a node nobody runs reaches nobody"
    );
    // Publishing, owning and following never fail, with or without anyone listening.
    peers.publish(&message).await;
    peers.set_owned(&"gnew".into(), true);
    peers.set_owned(&"gnew".into(), false);
}

#[tokio::test]
async fn a_single_node_keeps_the_contract() {
    let registries = Registries::new(&Config::default());
    let topology = Arc::new(SingleNode::new(registries.queues.clone()));
    // Every game and room lives here: a lookup that misses here is a miss.
    assert!(!topology.may_live_elsewhere(&stoa_server::ids::GameId::from("gnew")));
    assert!(!topology.room_may_change_elsewhere(&"ABCD".into()));
    assert!(topology.members().await.is_none());
    contract(topology.clone(), &registries.queues).await;
    peers_contract(topology, "single").await;
}

#[tokio::test]
async fn a_cluster_node_keeps_the_contract() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(RedisOptions {
        url: redis.url(),
        prefix: "contract".into(),
        timeout: Duration::from_millis(500),
        fence: Some("n1".into()),
        redis_cluster: false,
        finished_retention: None,
    })
    .await
    .unwrap();
    let registries = Registries::new(&Config::default());
    let queues: Arc<Matchmaker> = registries.queues.clone();
    let (events_tx, mut events) = mpsc::unbounded_channel::<ClusterEvent>();
    // The node's services would answer the cluster's events; none come in this test, but
    // the channel stays open so the cluster's loops run.
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let (_stop, shutdown) = watch::channel(false);
    let cluster = Arc::new(
        Cluster::new(
            "n1".into(),
            store,
            &redis.url(),
            2_000,
            registries,
            events_tx,
            shutdown,
        )
        .await
        .unwrap(),
    );
    cluster.start().await.unwrap();
    // Another node may run any game and change any room.
    assert!(GameChannels::may_live_elsewhere(
        cluster.as_ref(),
        &stoa_server::ids::GameId::from("gnew")
    ));
    assert!(RoomSharing::room_may_change_elsewhere(
        cluster.as_ref(),
        &stoa_server::ids::RoomCode::from("ABCD")
    ));
    let members = Membership::members(cluster.as_ref())
        .await
        .expect("a cluster node reports");
    assert_eq!(members.node, "n1");
    assert!(members.matchmaker, "alone, it runs the matchmaking");
    contract(cluster.clone(), &queues).await;
    peers_contract(cluster.clone(), "n1").await;
    // The lease is Redis's: a second claim of a held game is refused.
    assert!(!Leases::acquire(cluster.as_ref(), &"gnew".into())
        .await
        .unwrap());
    // The bot claim is the deployment's: taken once until freed.
    assert!(Listings::claim_bot(cluster.as_ref(), &"pbot".into()).await);
    assert!(!Listings::claim_bot(cluster.as_ref(), &"pbot".into()).await);
}
