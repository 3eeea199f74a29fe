//! The `Store` contract, run against the in-memory store and the Redis store alike, so the
//! two stay in step: conflicts, the idempotent retry of the last append, seq reservations,
//! the unfinished/finished indexes, rooms waiting or not, ratings, devices and link codes.

use std::time::Duration;

use serde_json::json;
use stoa_protocol::wire::{RoomState, RoomTerms, Visibility};
use stoa_server::domain::rating::Rating;
use stoa_server::ids::{GameId, PlayerId};
use stoa_server::store::memory::MemoryStore;
use stoa_server::store::redis::{RedisOptions, RedisStore};
use stoa_server::store::{
    AccountRecord, ActionKind, ActionRecord, DeviceRecord, FinishedGame, GameRecord, PlayerRecord,
    RoomRecord, SeatRecord, Store, StoreError,
};
use stoa_tests::redis::RedisServer;

#[path = "store_contract/moderation.rs"]
mod moderation;

fn player(id: &str, hash: &str) -> PlayerRecord {
    PlayerRecord {
        id: id.into(),
        name: format!("name of {id}"),
        token_hash: hash.into(),
        created_ms: 5,
        bot: false,
        account: None,
    }
}

fn action(seq: u64, mv: &str) -> ActionRecord {
    ActionRecord {
        seq,
        at_ms: 1000 + seq,
        player_id: "pa".into(),
        action: ActionKind::Move {
            notation: mv.into(),
            credit_ms: seq,
        },
        position: Some(format!("after {mv}")),
        cmd: None,
    }
}

fn room(code: &str, status: RoomState) -> RoomRecord {
    RoomRecord {
        code: code.into(),
        terms: RoomTerms {
            kind: "akron".into(),
            options: json!({"size": 4}),
            clock: json!({"kind": "none"}),
            rated: false,
            visibility: Visibility::Public,
            start: None,
        },
        host: "pa".into(),
        seats: [Some("pa".into()), None],
        status,
        game_id: (status == RoomState::Started).then(|| "g1".into()),
    }
}

async fn contract(store: &dyn Store) {
    // Players: by id and token hash; neither may be taken twice.
    store.create_player(&player("pa", "aa11")).await.unwrap();
    store.create_player(&player("pb", "bb22")).await.unwrap();
    assert!(matches!(
        store.create_player(&player("pa", "cc33")).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.create_player(&player("pc", "aa11")).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.player_by_token_hash("aa11").await.unwrap(),
        Some(player("pa", "aa11"))
    );
    assert_eq!(store.player_by_token_hash("ffff").await.unwrap(), None);
    assert_eq!(
        store.player(&"pb".into()).await.unwrap(),
        Some(player("pb", "bb22"))
    );
    assert_eq!(store.player(&"pc".into()).await.unwrap(), None);

    // Games.
    let game = GameRecord {
        id: "g1".into(),
        kind: "staku".into(),
        options: json!({"max_stack": 2}),
        clock: json!({"kind": "fischer", "initial_ms": 60000, "increment_ms": 0}),
        rated: true,
        visibility: Visibility::Private,
        code: Some("ABCDEFGHJK".into()),
        players: [
            SeatRecord {
                id: "pa".into(),
                name: "a".into(),
                rating: Some(json!(1500)),
                bot: false,
            },
            SeatRecord {
                id: "pb".into(),
                name: "b".into(),
                rating: None,
                bot: false,
            },
        ],
        created_ms: 42,
        rematch_of: None,
        arena: None,
        start: None,
    };
    store.create_game(&game).await.unwrap();
    assert!(matches!(
        store.create_game(&game).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.game(&"g1".into()).await.unwrap(), Some(game.clone()));
    assert_eq!(store.game(&"g2".into()).await.unwrap(), None);
    assert_eq!(store.unfinished_games(&"pa".into()).await.unwrap(), ["g1"]);
    assert_eq!(store.unfinished_games(&"pb".into()).await.unwrap(), ["g1"]);
    assert_eq!(store.all_unfinished_games().await.unwrap(), ["g1"]);

    // The log: each seq exactly one above the last (from 1); the very last record may be
    // written again (a retry after a lost answer), nothing else.
    assert_eq!(store.last_action(&"g1".into()).await.unwrap(), None);
    assert!(matches!(
        store
            .append_action(&"g1".into(), &action(2, "a").into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    store
        .append_action(&"g1".into(), &action(1, "a").into())
        .await
        .unwrap();
    store
        .append_action(&"g1".into(), &action(1, "a").into())
        .await
        .unwrap();
    assert!(matches!(
        store
            .append_action(&"g1".into(), &action(1, "b").into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .append_action(&"g1".into(), &action(3, "c").into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    store
        .append_action(&"g1".into(), &action(2, "d").into())
        .await
        .unwrap();
    assert!(matches!(
        store
            .append_action(&"g1".into(), &action(1, "a").into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .append_action(&"nope".into(), &action(9, "x").into())
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.actions(&"g1".into()).await.unwrap(),
        [action(1, "a"), action(2, "d")]
    );
    assert_eq!(
        store.last_action(&"g1".into()).await.unwrap(),
        Some(action(2, "d"))
    );
    assert_eq!(store.actions(&"nope".into()).await.unwrap(), []);

    // Finishing moves the game out of every unfinished index and keeps its document.
    let finished = FinishedGame {
        seq: 7,
        doc: json!({"id": "g1", "status": {"state": "ended"}}),
        ended_ms: 2_000,
        ratings_after: Some(json!({"white": 1516.2, "black": 1483.8})),
    };
    assert_eq!(store.finished_game(&"g1".into()).await.unwrap(), None);
    store
        .finish_game(&"g1".into(), finished.clone())
        .await
        .unwrap();
    assert_eq!(
        store.finished_game(&"g1".into()).await.unwrap(),
        Some(finished.clone())
    );
    assert!(store
        .unfinished_games(&"pa".into())
        .await
        .unwrap()
        .is_empty());
    assert!(store.all_unfinished_games().await.unwrap().is_empty());
    // Replacing it (a rematch request on an ended game) is fine.
    let again = FinishedGame { seq: 8, ..finished };
    store
        .finish_game(&"g1".into(), again.clone())
        .await
        .unwrap();
    assert_eq!(
        store.finished_game(&"g1".into()).await.unwrap(),
        Some(again)
    );
    // Each player's history lists it once, under its end time.
    for p in ["pa", "pb"] {
        assert_eq!(
            store.finished_games_of(&p.into(), None, 10).await.unwrap(),
            [("g1".into(), 2_000)]
        );
    }
    assert!(store
        .finished_games_of(&"pc".into(), None, 10)
        .await
        .unwrap()
        .is_empty());
    // More games of pa end later: newest first, paged by `before`.
    for (i, ended) in [(2, 3_000u64), (3, 4_000), (4, 5_000)] {
        let id = GameId::from(format!("g{i}"));
        store
            .create_game(&GameRecord {
                id: id.clone(),
                created_ms: ended - 500,
                ..game.clone()
            })
            .await
            .unwrap();
        store
            .finish_game(
                &id,
                FinishedGame {
                    seq: 1,
                    doc: json!({"id": id}),
                    ended_ms: ended,
                    ratings_after: None,
                },
            )
            .await
            .unwrap();
    }
    let page = |v: Vec<(GameId, u64)>| v.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    assert_eq!(
        page(
            store
                .finished_games_of(&"pa".into(), None, 2)
                .await
                .unwrap()
        ),
        ["g4", "g3"]
    );
    assert_eq!(
        page(
            store
                .finished_games_of(&"pa".into(), Some(4_000), 2)
                .await
                .unwrap()
        ),
        ["g2", "g1"]
    );
    assert!(store
        .finished_games_of(&"pa".into(), Some(2_000), 2)
        .await
        .unwrap()
        .is_empty());

    // Rooms: only waiting ones are listed for recovery; every one reads back.
    store
        .save_room(&room("ROOMA00001", RoomState::Waiting))
        .await
        .unwrap();
    store
        .save_room(&room("ROOMB00002", RoomState::Waiting))
        .await
        .unwrap();
    assert_eq!(
        store.waiting_rooms().await.unwrap(),
        [
            room("ROOMA00001", RoomState::Waiting),
            room("ROOMB00002", RoomState::Waiting)
        ]
    );
    // A seat is claimed once: the first claim of a waiting room wins, later ones (another
    // node's joiner) find it started and write nothing.
    assert!(store
        .claim_room(&room("ROOMA00001", RoomState::Started))
        .await
        .unwrap());
    let mut late = room("ROOMA00001", RoomState::Started);
    late.game_id = Some("gother".into());
    assert!(!store.claim_room(&late).await.unwrap());
    assert!(!store
        .claim_room(&room("NOSUCHROOM", RoomState::Started))
        .await
        .unwrap());
    store
        .save_room(&room("ROOMB00002", RoomState::Closed))
        .await
        .unwrap();
    assert!(store.waiting_rooms().await.unwrap().is_empty());
    assert_eq!(
        store.room(&"ROOMA00001".into()).await.unwrap(),
        Some(room("ROOMA00001", RoomState::Started))
    );
    assert_eq!(store.room(&"NOSUCHROOM".into()).await.unwrap(), None);

    // Ratings: per player and kind, both players of a game at once.
    assert!(store.ratings(&"pa".into()).await.unwrap().is_empty());
    let r = |rating: f64, games: u32| Rating {
        rating,
        deviation: 200.0,
        volatility: 0.06,
        games,
    };
    store
        .save_ratings(
            "staku",
            &[("pa".into(), r(1600.5, 1)), ("pb".into(), r(1400.0, 1))],
        )
        .await
        .unwrap();
    store
        .save_ratings("akron", &[("pa".into(), r(1510.0, 3))])
        .await
        .unwrap();
    let pa = store.ratings(&"pa".into()).await.unwrap();
    assert_eq!(pa.len(), 2);
    assert_eq!(pa["staku"], r(1600.5, 1));
    assert_eq!(pa["akron"], r(1510.0, 3));
    assert_eq!(
        store.ratings(&"pb".into()).await.unwrap()["staku"],
        r(1400.0, 1)
    );
    leaderboard_contract(store).await;
    devices_contract(store).await;
    lessons_contract(store).await;
    accounts_contract(store).await;
    arenas_contract(store).await;
    moderation::moderation_contract(store).await;
    store.ping().await.unwrap();
}

/// Lesson steps: a set per player and kind (a step added twice is kept once), read for the
/// kinds asked, sorted; players and kinds apart; unsafe ids read as nothing.
async fn lessons_contract(store: &dyn Store) {
    let pa: PlayerId = "pa".into();
    let pb: PlayerId = "pb".into();
    let kinds = ["unane", "staku", "akron"];
    assert!(store.lesson_steps(&pa, &kinds).await.unwrap().is_empty());
    let steps = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    store
        .add_lesson_steps(&pa, "unane", &steps(&["removal", "capture"]))
        .await
        .unwrap();
    store
        .add_lesson_steps(&pa, "unane", &steps(&["capture", "one-group"]))
        .await
        .unwrap();
    store
        .add_lesson_steps(&pa, "akron", &steps(&["add"]))
        .await
        .unwrap();
    store.add_lesson_steps(&pa, "staku", &[]).await.unwrap();
    store
        .add_lesson_steps(&pb, "staku", &steps(&["far"]))
        .await
        .unwrap();
    let done = store.lesson_steps(&pa, &kinds).await.unwrap();
    assert_eq!(
        done.into_iter().collect::<Vec<_>>(),
        [
            ("akron".to_string(), steps(&["add"])),
            (
                "unane".to_string(),
                steps(&["capture", "one-group", "removal"])
            ),
        ]
    );
    // Only the kinds asked.
    let only = store.lesson_steps(&pa, &["akron"]).await.unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only["akron"], steps(&["add"]));
    let b = store.lesson_steps(&pb, &kinds).await.unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b["staku"], steps(&["far"]));
    // An id or kind that cannot be a key reads as nothing done.
    assert!(store
        .lesson_steps(&"p:x".into(), &kinds)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .lesson_steps(&pa, &["una ne"])
        .await
        .unwrap()
        .is_empty());
}

/// Arenas: one conditional write per version, and the open index.
async fn arenas_contract(store: &dyn Store) {
    assert_eq!(store.arena(&"acontract1".into()).await.unwrap(), None);
    let v1 = json!({"players": []});
    assert!(
        !store
            .save_arena(&"acontract1".into(), 2, true, &v1)
            .await
            .unwrap(),
        "a gap"
    );
    assert!(store
        .save_arena(&"acontract1".into(), 1, true, &v1)
        .await
        .unwrap());
    assert!(
        !store
            .save_arena(&"acontract1".into(), 1, true, &v1)
            .await
            .unwrap(),
        "twice"
    );
    assert_eq!(
        store.arena(&"acontract1".into()).await.unwrap(),
        Some((1, v1.clone()))
    );
    let v2 = json!({"players": ["p"]});
    assert!(store
        .save_arena(&"acontract1".into(), 2, true, &v2)
        .await
        .unwrap());
    assert!(store
        .save_arena(&"acontract2".into(), 1, true, &v1)
        .await
        .unwrap());
    let open = store.open_arenas().await.unwrap();
    assert!(open.contains(&"acontract1".into()) && open.contains(&"acontract2".into()));
    // A stale writer changes nothing.
    assert!(!store
        .save_arena(&"acontract1".into(), 2, false, &v1)
        .await
        .unwrap());
    assert_eq!(
        store.arena(&"acontract1".into()).await.unwrap(),
        Some((2, v2.clone()))
    );
    assert!(store
        .save_arena(&"acontract1".into(), 3, false, &v2)
        .await
        .unwrap());
    let open = store.open_arenas().await.unwrap();
    assert!(!open.contains(&"acontract1".into()), "{open:?}");
    assert!(open.contains(&"acontract2".into()));
}

fn account(name: &str, player: &str, hash: &str) -> AccountRecord {
    AccountRecord {
        name_key: name.to_lowercase(),
        name: name.into(),
        player_id: player.into(),
        password_hash: hash.into(),
        created_ms: 9,
    }
}

/// Accounts: a name is claimed once, a player claims once, the player record carries the
/// name, and the password hash can be replaced.
async fn accounts_contract(store: &dyn Store) {
    store
        .create_player(&player("pacc1", "acc111"))
        .await
        .unwrap();
    store
        .create_player(&player("pacc2", "acc222"))
        .await
        .unwrap();
    assert_eq!(store.account("ann").await.unwrap(), None);
    assert!(store
        .claim_account(&account("Ann", "pacc1", "$h1"))
        .await
        .unwrap());
    let got = store.account("ann").await.unwrap().expect("claimed");
    assert_eq!(got.player_id, "pacc1");
    assert_eq!(got.name, "Ann");
    assert_eq!(got.password_hash, "$h1");
    assert_eq!(
        store
            .player(&"pacc1".into())
            .await
            .unwrap()
            .unwrap()
            .account
            .as_deref(),
        Some("Ann")
    );
    // The name is another's now; and a player that claimed claims nothing more.
    assert!(!store
        .claim_account(&account("Ann", "pacc2", "$h2"))
        .await
        .unwrap());
    assert!(!store
        .claim_account(&account("Other", "pacc1", "$h3"))
        .await
        .unwrap());
    assert_eq!(store.account("other").await.unwrap(), None);
    assert_eq!(
        store
            .player(&"pacc2".into())
            .await
            .unwrap()
            .unwrap()
            .account,
        None
    );
    assert_eq!(
        store.account("ann").await.unwrap().unwrap().password_hash,
        "$h1"
    );
    // A new password replaces the hash, nothing else.
    store.set_password("ann", "$new").await.unwrap();
    let got = store.account("ann").await.unwrap().unwrap();
    assert_eq!(
        (got.password_hash.as_str(), got.player_id.as_str()),
        ("$new", "pacc1")
    );
    assert!(store.set_password("nobody", "$x").await.is_err());
}

fn device(hash: &str, label: &str, at: u64) -> DeviceRecord {
    DeviceRecord {
        id: format!("d{hash}"),
        token_hash: hash.into(),
        label: label.into(),
        created_ms: at,
        last_seen_ms: at,
    }
}

/// Devices (a player's tokens) and one-time link codes. Runs after `contract` made players
/// `pa` (token hash `aa11`) and `pb` (`bb22`).
async fn devices_contract(store: &dyn Store) {
    // A player from before devices has none listed until its first token is seen, and
    // seeing it records it once (label and creation kept, last-seen moves).
    assert_eq!(store.devices(&"pa".into()).await.unwrap(), vec![]);
    store
        .seen_device(&"pa".into(), &device("aa11", "terminal", 10))
        .await
        .unwrap();
    store
        .seen_device(&"pa".into(), &device("aa11", "other label", 20))
        .await
        .unwrap();
    let mut first = device("aa11", "terminal", 10);
    first.last_seen_ms = 20;
    assert_eq!(
        store.devices(&"pa".into()).await.unwrap(),
        vec![first.clone()]
    );
    // Seeing a token that is not the player's records nothing.
    store
        .seen_device(&"pa".into(), &device("bb22", "x", 30))
        .await
        .unwrap();
    store
        .seen_device(&"pa".into(), &device("ee55", "x", 30))
        .await
        .unwrap();
    assert_eq!(store.devices(&"pa".into()).await.unwrap().len(), 1);

    // A second device: its token names the player; a token taken is a conflict.
    let second = device("cc33", "browser (Chrome)", 15);
    store.add_device(&"pa".into(), &second).await.unwrap();
    assert_eq!(
        store
            .player_by_token_hash("cc33")
            .await
            .unwrap()
            .unwrap()
            .id,
        "pa"
    );
    assert!(matches!(
        store
            .add_device(&"pb".into(), &device("cc33", "x", 16))
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .add_device(&"pb".into(), &device("bb22", "x", 16))
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.devices(&"pa".into()).await.unwrap(),
        vec![first.clone(), second.clone()]
    );
    assert_eq!(store.devices(&"pb".into()).await.unwrap(), vec![]);

    // Revoking: the token names nobody; unknown devices (or another player's) change nothing.
    assert!(!store.revoke_device(&"pb".into(), "dcc33").await.unwrap());
    assert!(!store.revoke_device(&"pa".into(), "dnone").await.unwrap());
    assert!(!store.revoke_device(&"pa".into(), "bad:id").await.unwrap());
    assert!(store.revoke_device(&"pa".into(), "dcc33").await.unwrap());
    assert_eq!(store.player_by_token_hash("cc33").await.unwrap(), None);
    assert_eq!(
        store.devices(&"pa".into()).await.unwrap(),
        vec![first.clone()]
    );
    assert!(!store.revoke_device(&"pa".into(), "dcc33").await.unwrap());
    // A revoked token seen again (a hello racing the revoke) is not listed again.
    store
        .seen_device(&"pa".into(), &device("cc33", "x", 40))
        .await
        .unwrap();
    assert_eq!(
        store.devices(&"pa".into()).await.unwrap(),
        vec![first.clone()]
    );
    // The first token can be revoked too.
    assert!(store.revoke_device(&"pa".into(), "daa11").await.unwrap());
    assert_eq!(store.player_by_token_hash("aa11").await.unwrap(), None);
    assert_eq!(store.player(&"pa".into()).await.unwrap().unwrap().id, "pa");

    // Link codes: taken once; a code in use cannot be made again; unknown ones are None.
    assert!(store
        .create_link_code("CODE1234", &"pa".into(), 60_000)
        .await
        .unwrap());
    assert!(!store
        .create_link_code("CODE1234", &"pb".into(), 60_000)
        .await
        .unwrap());
    assert_eq!(store.take_link_code("NOPE0000").await.unwrap(), None);
    assert_eq!(store.take_link_code("bad:code").await.unwrap(), None);
    assert_eq!(
        store
            .take_link_code("CODE1234")
            .await
            .unwrap()
            .as_ref()
            .map(PlayerId::as_str),
        Some("pa")
    );
    assert_eq!(store.take_link_code("CODE1234").await.unwrap(), None);
    // Expiry: a code past its time is gone, and can then be made anew.
    assert!(store
        .create_link_code("CODE5678", &"pb".into(), 50)
        .await
        .unwrap());
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(store.take_link_code("CODE5678").await.unwrap(), None);
    assert!(store
        .create_link_code("CODE5678", &"pb".into(), 60_000)
        .await
        .unwrap());
    assert_eq!(
        store
            .take_link_code("CODE5678")
            .await
            .unwrap()
            .as_ref()
            .map(PlayerId::as_str),
        Some("pb")
    );
}

/// The leaderboard index: established ratings only, highest first (equal ones by id, the
/// greater first), kept in step by `save_ratings`, cut at the limit.
async fn leaderboard_contract(store: &dyn Store) {
    let at = |rating: f64, deviation: f64, games: u32| Rating {
        rating,
        deviation,
        volatility: 0.059,
        games,
    };
    // Provisional ratings (deviation above 110) are not listed.
    assert!(store.leaderboard("staku", 100).await.unwrap().is_empty());
    store
        .save_ratings(
            "unane",
            &[
                ("pa".into(), at(1620.5, 80.0, 14)),
                ("pb".into(), at(1680.25, 95.5, 16)),
            ],
        )
        .await
        .unwrap();
    store
        .save_ratings(
            "unane",
            &[
                ("pz".into(), at(1900.0, 110.5, 9)),
                ("py".into(), at(1400.0, 110.0, 20)),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        store.leaderboard("unane", 100).await.unwrap(),
        vec![
            ("pb".to_string(), at(1680.25, 95.5, 16)),
            ("pa".to_string(), at(1620.5, 80.0, 14)),
            ("py".to_string(), at(1400.0, 110.0, 20)),
        ]
    );
    assert_eq!(
        store.leaderboard("unane", 1).await.unwrap(),
        vec![("pb".to_string(), at(1680.25, 95.5, 16))]
    );
    assert!(store.leaderboard("unane", 0).await.unwrap().is_empty());
    // Other kinds have their own boards.
    assert!(store.leaderboard("akron", 100).await.unwrap().is_empty());
    assert!(store
        .leaderboard("no-such-kind", 100)
        .await
        .unwrap()
        .is_empty());
    // A new rating moves a player; a provisional one takes the player off; equal ratings
    // are ordered by id, the greater first.
    store
        .save_ratings(
            "unane",
            &[
                ("pb".into(), at(1600.0, 90.0, 17)),
                ("pa".into(), at(1590.0, 111.0, 15)),
            ],
        )
        .await
        .unwrap();
    store
        .save_ratings("unane", &[("pc".into(), at(1600.0, 70.0, 30))])
        .await
        .unwrap();
    assert_eq!(
        store.leaderboard("unane", 100).await.unwrap(),
        vec![
            ("pc".to_string(), at(1600.0, 70.0, 30)),
            ("pb".to_string(), at(1600.0, 90.0, 17)),
            ("py".to_string(), at(1400.0, 110.0, 20)),
        ]
    );
    assert_eq!(
        store.ratings(&"pa".into()).await.unwrap()["unane"],
        at(1590.0, 111.0, 15)
    );
}

#[tokio::test]
async fn memory_store_keeps_the_contract() {
    let store = MemoryStore::new();
    assert_eq!(store.persistence(), "off");
    contract(&store).await;
}

/// The deployment id: Redis keeps the first one ever offered under the prefix (every node
/// and every restart reads it), another prefix has its own; in memory each store is its own.
#[tokio::test]
async fn the_deployment_id_is_made_once_per_prefix() {
    let memory = MemoryStore::new();
    assert_eq!(memory.deployment("dm").await.unwrap(), "dm");
    let redis = RedisServer::start();
    let options = |prefix: &str| RedisOptions {
        url: redis.url(),
        prefix: prefix.into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: None,
    };
    let first = RedisStore::connect(options("one")).await.unwrap();
    let second = RedisStore::connect(options("one")).await.unwrap();
    assert_eq!(first.deployment("d1").await.unwrap(), "d1");
    assert_eq!(second.deployment("d2").await.unwrap(), "d1");
    assert_eq!(first.deployment("d3").await.unwrap(), "d1");
    assert_eq!(
        redis.command("GET one:deployment").as_deref(),
        Some("$2\r\nd1\r\n")
    );
    let other = RedisStore::connect(options("two")).await.unwrap();
    assert_eq!(other.deployment("d4").await.unwrap(), "d4");
}

/// Without Redis only the newest finished games stay (`--keep-finished`): the oldest goes,
/// with its setup, log and place in the players' histories.
#[tokio::test]
async fn memory_store_keeps_a_bounded_number_of_finished_games() {
    let store = MemoryStore::keeping(2);
    for (i, ended) in [(1, 100u64), (2, 200), (3, 300)] {
        let id = format!("g{i}");
        let mut game = serde_json::from_value::<GameRecord>(json!({
            "id": id, "kind": "unane", "options": {}, "clock": {"kind": "none"}, "rated": false,
            "visibility": "public", "code": null, "created_ms": ended - 50, "rematch_of": null,
            "players": [{"id": "pa", "name": "a"}, {"id": "pb", "name": "b"}]
        }))
        .unwrap();
        let id = GameId::from(id);
        game.id = id.clone();
        store.create_game(&game).await.unwrap();
        store
            .append_action(&id, &action(1, "a1xb1").into())
            .await
            .unwrap();
        let done = FinishedGame {
            seq: 1,
            doc: json!({"id": id}),
            ended_ms: ended,
            ratings_after: None,
        };
        store.finish_game(&id, done).await.unwrap();
    }
    assert_eq!(store.finished_game(&"g1".into()).await.unwrap(), None);
    assert_eq!(store.game(&"g1".into()).await.unwrap(), None);
    assert!(store.actions(&"g1".into()).await.unwrap().is_empty());
    assert!(store.finished_game(&"g3".into()).await.unwrap().is_some());
    let ids: Vec<GameId> = store
        .finished_games_of(&"pb".into(), None, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["g3", "g2"]);
}

/// With a retention, a finished game's keys expire by themselves in Redis and its entries
/// leave the players' histories.
#[tokio::test]
async fn redis_store_forgets_finished_games_after_the_retention() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(RedisOptions {
        url: redis.url(),
        prefix: "ret".into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: Some(Duration::from_millis(300)),
    })
    .await
    .unwrap();
    let game = serde_json::from_value::<GameRecord>(json!({
        "id": "gr1", "kind": "unane", "options": {}, "clock": {"kind": "none"}, "rated": false,
        "visibility": "public", "code": null, "created_ms": 1, "rematch_of": null,
        "players": [{"id": "pa", "name": "a"}, {"id": "pb", "name": "b"}]
    }))
    .unwrap();
    store.create_game(&game).await.unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let done = FinishedGame {
        seq: 0,
        doc: json!({"id": "gr1"}),
        ended_ms: now,
        ratings_after: None,
    };
    store.finish_game(&"gr1".into(), done).await.unwrap();
    assert_eq!(
        store
            .finished_games_of(&"pa".into(), None, 5)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(store.finished_game(&"gr1".into()).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(store.finished_game(&"gr1".into()).await.unwrap(), None);
    assert_eq!(store.game(&"gr1".into()).await.unwrap(), None);
    assert!(store
        .finished_games_of(&"pa".into(), None, 5)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn redis_store_keeps_the_contract_and_its_prefix() {
    let mut redis = RedisServer::start();
    let options = |prefix: &str| RedisOptions {
        url: redis.url(),
        prefix: prefix.into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: None,
    };
    let store = RedisStore::connect(options("one")).await.unwrap();
    assert_eq!(store.persistence(), "redis");
    contract(&store).await;
    // The same contract from scratch under another prefix: nothing of "one" is visible.
    let other = RedisStore::connect(options("two")).await.unwrap();
    assert_eq!(other.player(&"pa".into()).await.unwrap(), None);
    contract(&other).await;
    // A node that does not hold a game's lease cannot append to its log (cluster fencing).
    let fenced = RedisStore::connect(RedisOptions {
        fence: Some("n1".into()),
        ..options("one")
    })
    .await
    .unwrap();
    let next = store.actions(&"g1".into()).await.unwrap().len() as u64 + 1;
    assert!(matches!(
        fenced
            .append_action(&"g1".into(), &action(next, "x").into())
            .await,
        Err(StoreError::NotOwner(_))
    ));
    redis
        .command("SET one:game:{g1}:lease n1")
        .expect("set the lease");
    fenced
        .append_action(&"g1".into(), &action(next, "x").into())
        .await
        .unwrap();
    redis
        .command("SET one:game:{g1}:lease n2")
        .expect("move the lease");
    assert!(matches!(
        fenced
            .append_action(&"g1".into(), &action(next + 1, "y").into())
            .await,
        Err(StoreError::NotOwner(_))
    ));
    assert_eq!(
        store.actions(&"g1".into()).await.unwrap().len() as u64,
        next
    );

    // Ids that are not ids never reach a key.
    assert_eq!(store.game(&"g1:log".into()).await.unwrap(), None);
    assert_eq!(store.room(&"a b".into()).await.unwrap(), None);

    // Down: calls fail at once with `unavailable`; back: the store reconnects by itself.
    redis.kill9();
    let mut down = false;
    for _ in 0..100 {
        if matches!(store.ping().await, Err(StoreError::Unavailable(_))) {
            down = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(down, "a dead redis is noticed");
    assert!(matches!(
        store.player(&"pa".into()).await,
        Err(StoreError::Unavailable(_))
    ));
    redis.restart();
    let mut back = false;
    for _ in 0..200 {
        if store.ping().await.is_ok() {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "the store reconnects after redis restarts");
    // And the AOF kept everything.
    assert_eq!(
        store.player(&"pa".into()).await.unwrap(),
        Some(player("pa", "aa11"))
    );
    assert_eq!(
        store.actions(&"g1".into()).await.unwrap(),
        [action(1, "a"), action(2, "d"), action(3, "x")]
    );
}

/// The same contract on a 3-master Redis Cluster: every script and transaction stays in
/// one hash slot (a game's keys share its id as a hash tag; a player's and a room's too).
#[tokio::test]
async fn redis_cluster_store_keeps_the_contract() {
    let cluster = stoa_tests::redis::RedisCluster::start(3);
    let store = RedisStore::connect(RedisOptions {
        url: cluster.urls(),
        prefix: "rc".into(),
        timeout: Duration::from_millis(2_000),
        fence: None,
        redis_cluster: true,
        finished_retention: None,
    })
    .await
    .unwrap();
    contract(&store).await;
}

/// Ratings saved before the store kept leaderboards (an upgraded deployment) are on the
/// boards from the next start: the store builds them once at connect from every rated
/// player's rating, established ones only, and not again after that.
#[tokio::test]
async fn redis_store_builds_the_leaderboards_of_older_ratings_once() {
    let redis = RedisServer::start();
    let options = || RedisOptions {
        url: redis.url(),
        prefix: "up".into(),
        timeout: Duration::from_millis(500),
        fence: None,
        redis_cluster: false,
        finished_retention: None,
    };
    let at = |rating: f64, deviation: f64| Rating {
        rating,
        deviation,
        volatility: 0.06,
        games: 20,
    };
    let store = RedisStore::connect(options()).await.unwrap();
    assert_eq!(
        redis.command("EXISTS up:leaderboards:built").as_deref(),
        Some(":1\r\n")
    );
    store
        .save_ratings(
            "akron",
            &[
                ("pa".into(), at(1700.0, 60.0)),
                ("pb".into(), at(1800.0, 200.0)),
            ],
        )
        .await
        .unwrap();
    store
        .save_ratings("staku", &[("pc".into(), at(1550.0, 90.0))])
        .await
        .unwrap();
    // What an older server left: the ratings and their `ratings:<kind>` sets, no boards.
    for cmd in [
        "DEL up:leaderboard:akron",
        "DEL up:leaderboard:staku",
        "DEL up:leaderboards:built",
    ] {
        assert_eq!(redis.command(cmd).as_deref(), Some(":1\r\n"), "{cmd}");
    }
    assert!(store.leaderboard("akron", 100).await.unwrap().is_empty());
    let upgraded = RedisStore::connect(options()).await.unwrap();
    assert_eq!(
        upgraded.leaderboard("akron", 100).await.unwrap(),
        vec![("pa".to_string(), at(1700.0, 60.0))]
    );
    assert_eq!(
        upgraded.leaderboard("staku", 100).await.unwrap(),
        vec![("pc".to_string(), at(1550.0, 90.0))]
    );
    // Built once: a board emptied since stays as the games leave it.
    assert_eq!(
        redis.command("DEL up:leaderboard:staku").as_deref(),
        Some(":1\r\n")
    );
    let again = RedisStore::connect(options()).await.unwrap();
    assert!(again.leaderboard("staku", 100).await.unwrap().is_empty());
}
