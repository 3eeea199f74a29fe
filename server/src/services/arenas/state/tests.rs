use super::*;
use serde_json::json;

fn arena(now_start: u64) -> ArenaState {
    let setup = GameSetup::parse(
        "unane",
        &json!({}),
        Some(&json!({"kind":"fischer","initial_ms":15000,"increment_ms":0})),
    )
    .unwrap();
    ArenaState::new(Settings {
        id: "a1".into(),
        name: "t".into(),
        setup,
        rated: false,
        visibility: Visibility::Public,
        code: None,
        creator: ("c".into(), "C".into()),
        starts_at: now_start,
        ends_at: now_start + 90_000,
        bots: false,
        berserk: true,
        min_draw_plies: 4,
    })
}

fn end(a: &ArenaState, game: &GameId, winner: Option<&str>, plies: u32) -> ArenaGameEnd {
    let g = a.games.iter().find(|g| g.id == *game).unwrap();
    ArenaGameEnd {
        game_id: game.clone(),
        arena: "a1".into(),
        players: g.players.clone(),
        winner: winner.map(|w| g.players.iter().position(|p| p == w).unwrap()),
        aborted: false,
        plies,
        berserk: [false, false],
        absent: None,
    }
}

#[test]
fn a_player_whose_first_move_never_came_leaves_the_pool() {
    let mut a = arena(0);
    a.join(&"x".into(), "x", 1500, false);
    a.join(&"y".into(), "y", 1600, false);
    let mut ids = || GameId::from("g1");
    let pairs = a.pair_round(1, &|_| true, &mut ids);
    let first = pairs[0].players[0].clone();
    let second = pairs[0].players[1].clone();
    let mut e = end(&a, &"g1".into(), None, 0);
    e.aborted = true;
    e.absent = Some(0);
    assert!(a.game_ended(&e));
    assert!(
        a.entrant(&first).unwrap().paused,
        "not at the board: paused"
    );
    assert!(!a.game_ended(&e), "applied once");
    assert!(!a.entrant(&second).unwrap().paused);
    assert!(a.players.iter().all(|p| p.sheet.games() == 0), "no result");
    // Nobody left to pair the other with, until the absent player joins again.
    let mut ids = || GameId::from("g2");
    assert!(a.pair_round(2, &|_| true, &mut ids).is_empty());
    a.join(&first, first.as_str(), 1500, false);
    assert!(!a.entrant(&first).unwrap().paused);
    let mut ids = || GameId::from("g3");
    assert_eq!(a.pair_round(3, &|_| true, &mut ids).len(), 1);
    // The same abort scored first from the final document (which cannot tell who was
    // absent), then reported live: the player is paused all the same, once.
    let g3_first = a.games[1].players[0].clone();
    let mut from_doc = end(&a, &"g3".into(), None, 0);
    from_doc.aborted = true;
    assert!(a.game_ended(&from_doc));
    assert!(!a.entrant(&g3_first).unwrap().paused);
    let mut live = from_doc.clone();
    live.absent = Some(0);
    assert!(a.game_ended(&live));
    assert!(a.entrant(&g3_first).unwrap().paused);
    assert!(!a.game_ended(&live), "applied once");
}

#[test]
fn a_round_pairs_scores_and_frees_the_players() {
    let mut n = 0;
    let mut ids = || {
        n += 1;
        GameId::from(format!("g{n}"))
    };
    let mut b = arena(10);
    for p in ["p1", "p2", "p3", "p4"] {
        b.join(&p.into(), p, 1500, false);
    }
    // Nothing before the start.
    assert!(b.pair_round(5, &|_| true, &mut ids).is_empty());
    let pairs = b.pair_round(10, &|p| p != "p4", &mut ids);
    assert_eq!(pairs.len(), 1, "p4 is offline: one pair of three");
    let g = pairs[0].game_id.clone();
    let winner = pairs[0].players[0].clone();
    assert!(b.game_ended(&end(&b, &g, Some(winner.as_str()), 20)));
    assert!(
        !b.game_ended(&end(&b, &g, Some(winner.as_str()), 20)),
        "scored once"
    );
    let top = b.standings()[0];
    assert_eq!((top.id.as_str(), top.sheet.score), (winner.as_str(), 2));
    assert!(b.players.iter().all(|p| p.playing.is_none()));
    let doc = b.document(11);
    assert_eq!(doc["status"], "running");
    assert_eq!(doc["players"][0]["sheet"], "2");
    assert_eq!(doc["games"][g.as_str()]["status"], "ended");
    assert_eq!(doc["cutoff_at"], 75_010);
    // A pairing whose game never started is undone, last opponents included.
    let pairs = b.pair_round(20, &|_| true, &mut ids);
    assert_eq!(pairs.len(), 2);
    for p in &pairs {
        b.unpair(&p.game_id);
    }
    assert_eq!(b.games.len(), 1);
    for p in &b.players {
        let expected = if g_players(&b, &g).contains(&p.id) {
            g_players(&b, &g).into_iter().find(|x| *x != p.id)
        } else {
            None
        };
        assert_eq!(p.last_opponent, expected, "{}", p.id);
        assert_eq!(p.playing, None);
    }
    // After the cut-off nobody is paired.
    assert!(b.pair_round(75_010, &|_| true, &mut ids).is_empty());
}

fn g_players(a: &ArenaState, game: &GameId) -> Vec<PlayerId> {
    a.games
        .iter()
        .find(|g| g.id == *game)
        .map(|g| g.players.to_vec())
        .unwrap_or_default()
}

#[test]
fn early_draws_and_aborts() {
    let mut a = arena(0);
    a.join(&"x".into(), "x", 1500, false);
    a.join(&"y".into(), "y", 1600, false);
    let mut ids = || GameId::from("g1");
    let pairs = a.pair_round(1, &|_| true, &mut ids);
    assert_eq!(pairs.len(), 1);
    assert!(a.game_ended(&end(&a, &"g1".into(), None, 3)));
    assert!(a.players.iter().all(|p| p.sheet.points == vec![0]));
    // y's performance: x's 1500 + 0.
    assert_eq!(a.entrant(&"y".into()).unwrap().sheet.performance(), 1500);
    // The two only active players may play again.
    let mut ids = || GameId::from("g2");
    assert_eq!(a.pair_round(2, &|_| true, &mut ids).len(), 1);
    let mut e = end(&a, &"g2".into(), None, 30);
    e.aborted = true;
    assert!(a.game_ended(&e));
    assert!(a.players.iter().all(|p| p.sheet.games() == 1));
    // The pairing lease: one holder until it expires.
    assert!(a.take_lease("n1", 10, 3_010));
    assert!(!a.take_lease("n2", 3_009, 6_009));
    assert!(a.take_lease("n1", 3_000, 6_000), "renewed");
    assert!(a.take_lease("n2", 6_000, 9_000), "expired: taken over");
    // The state reads back from the store as it was.
    let back = ArenaState::from_stored(&a.to_stored(7)).expect("reads back");
    assert_eq!(back.document(3), a.document(3));
    assert_eq!(back.pairer, a.pairer);
    assert!(!back.open(90_000));
    assert!(back.open(89_999));
}
