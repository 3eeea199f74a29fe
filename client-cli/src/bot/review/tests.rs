//! The review judged against exhaustive search: in positions with a forced win in one or two
//! (each game), the engine prefers a winning move and values the position at 0.9 or more.
//!
//! The positions were found in seeded random games (`find_positions`, ignored: run it with
//! `--ignored --nocapture` to print new ones) and every test checks again, by a plain
//! minimax written here apart from the engine, that the position is what it claims.

use super::*;
use serde_json::json;
use stoa_protocol::Game;

/// Whether `me` wins within `plies` plies whatever the other side does (a plain minimax,
/// independent of the engine's proof search).
fn wins_within<G: Game>(g: &G, me: Side, plies: u32) -> bool {
    if let Some(o) = g.outcome() {
        return o.winner == Some(me);
    }
    if plies == 0 {
        return false;
    }
    let Some(to_act) = g.to_act() else {
        return false;
    };
    let mut actions = Vec::new();
    g.legal_actions(&mut actions);
    let wins = |a: &G::Action| {
        let mut h = g.clone();
        h.apply(*a);
        wins_within(&h, me, plies - 1)
    };
    if to_act == me {
        actions.iter().any(wins)
    } else {
        !actions.is_empty() && actions.iter().all(wins)
    }
}

/// The side to act's plies to a forced win: one own move (two plies in Akron, where a
/// connection wins once it survives the reply), or two own moves.
fn plies_for<G: Game>(own_moves: u32) -> u32 {
    let delayed = u32::from(G::KIND == "akron");
    2 * own_moves - 1 + delayed
}

fn check<G: Knowledge>(options: Value, position: &str, own_moves: u32) {
    let options: G::Options = serde_json::from_value(options).unwrap();
    let options = G::validate_options(options).unwrap();
    let g = G::from_position(&options, position).unwrap();
    let me = g.to_act().unwrap();
    let plies = plies_for::<G>(own_moves);
    assert!(
        wins_within(&g, me, plies),
        "{}: {position} is no forced win",
        G::KIND
    );
    if own_moves > 1 {
        assert!(
            !wins_within(&g, me, plies_for::<G>(own_moves - 1)),
            "{}: {position} is a shorter win",
            G::KIND
        );
    }
    let budget = Budget {
        playouts: 500,
        ..Budget::default()
    };
    let judged = judge(&g, &budget, &mut Rng::new(5)).unwrap();
    let mut after = g.clone();
    after.apply(judged.best);
    assert!(
        wins_within(&after, me, plies - 1),
        "{}: {position}: the engine prefers {}, which does not win",
        G::KIND,
        g.format_action(judged.best)
    );
    assert!(judged.value >= 0.9, "{}: value {}", G::KIND, judged.value);
}

#[test]
fn unane_wins_in_one_and_two() {
    check::<Unane>(
        json!({"width":5,"height":4}),
        "b..../..bw./..bww/.w..w b 8",
        1,
    );
    check::<Unane>(json!({"width":5,"height":4}), UNANE_TWO, 2);
}

#[test]
fn staku_wins_in_one_and_two() {
    check::<Staku>(json!({}), STAKU_ONE, 1);
    check::<Staku>(json!({}), STAKU_TWO, 2);
}

#[test]
fn akron_wins_in_one_and_two() {
    check::<Akron>(json!({"size":5}), AKRON_ONE, 1);
    check::<Akron>(json!({"size":5}), AKRON_TWO, 2);
}

#[test]
fn akunur_wins_in_one_and_two() {
    check::<Akunur>(json!({}), AKUNUR_ONE, 1);
    check::<Akunur>(json!({}), AKUNUR_TWO, 2);
}

const UNANE_TWO: &str = "b...w/...b./b...w/b..w. w 13";
const STAKU_ONE: &str = "B,B,B,B,B,B/B,B,B,B,B,.,./N,.,N,.,.,N,.,./.,.,.,N,.,.,NBB/.,.,N,.,.,N,.,N/NW,W,W,.,.,.,WWW/W,W,W,W,WW,W b 15";
const STAKU_TWO: &str = "B,B,B,B,B,B/B,B,B,B,B,.,./N,.,N,.,.,N,.,./.,.,.,N,.,.,NBB/.,.,N,.,.,N,.,N/NW,W,W,W,W,.,W/W,W,W,W,WW,W w 16";
const AKRON_ONE: &str = "5 v 3,5 18 A1,C1,E1,E2,A3,E3,B4,D4,E4 D1,A2,B2,C2,D2,B5,C5";
const AKRON_TWO: &str = "5 v 4,5 16 A1,C1,E1,E2,A3,E3,B4,D4 D1,A2,B2,D2,D3,B5,C5";
const AKUNUR_ONE: &str =
    "D...L/....../......./...DD.../........L/......L./.L...../L.D.LL/...L. l 13,12 111011 10,0 0 0";
const AKUNUR_TWO: &str =
    "D...L/.D..../......./.....L.L/.L......L/.LD.D.../......./LLL.../..... l 13,12 111011 10,0 0 0";

/// A Ūnane game whose mover at its second-last ply hangs a win in one (the opponent then
/// wins at once) is reviewed with a blunder there and a winning move preferred.
#[test]
fn a_hung_win_is_a_blunder() {
    let options = json!({"width": 4, "height": 3});
    let o: <Unane as Game>::Options = serde_json::from_value(options.clone()).unwrap();
    let o = Unane::validate_options(o).unwrap();
    let wins_now = |g: &Unane, a| {
        let mut h = *g;
        let me = h.to_act();
        h.apply(a);
        h.outcome().is_some_and(|o| o.winner == me)
    };
    let mut rng = Rng::new(9);
    'games: for _ in 0..500 {
        let mut g = Unane::start(&o);
        let mut moves = Vec::new();
        let mut actions = Vec::new();
        while g.outcome().is_none() {
            actions.clear();
            g.legal_actions(&mut actions);
            actions.retain(|&a| !g.is_swap(a));
            let wins: Vec<_> = actions
                .iter()
                .copied()
                .filter(|&a| wins_now(&g, a))
                .collect();
            if !wins.is_empty() {
                let hang = actions.iter().copied().find(|&a| {
                    let mut h = g;
                    h.apply(a);
                    let mut replies = Vec::new();
                    h.legal_actions(&mut replies);
                    h.outcome().is_none() && replies.iter().any(|&r| wins_now(&h, r))
                });
                let Some(hang) = hang else { continue 'games };
                let wins: Vec<String> = wins.iter().map(|&a| g.format_action(a)).collect();
                moves.push(g.format_action(hang));
                g.apply(hang);
                let mut replies = Vec::new();
                g.legal_actions(&mut replies);
                let reply = replies.into_iter().find(|&r| wins_now(&g, r)).unwrap();
                moves.push(g.format_action(reply));
                let budget = Budget {
                    playouts: 300,
                    ..Budget::default()
                };
                let r = review("unane", &options, &moves, &budget, &mut Rng::new(1)).unwrap();
                assert_eq!(r.plies.len(), moves.len());
                let p = &r.plies[moves.len() - 2];
                assert_eq!(p.mark, Some(Mark::Blunder), "{p:?}");
                assert!(wins.contains(p.best.as_ref().unwrap()), "{p:?} {wins:?}");
                assert_eq!((p.eval, p.after), (1.0, 0.0));
                assert_eq!(r.mismatch(&moves), None);
                return;
            }
            let a = actions[rng.below(actions.len())];
            moves.push(g.format_action(a));
            g.apply(a);
        }
    }
    panic!("no game with a hung win");
}

/// Prints positions with a forced win in one and in two (and none shorter) met in seeded
/// random games, for the tests above.
#[test]
#[ignore]
fn find_positions() {
    fn find<G: Game>(options: Value, own_moves: u32, seed: u64) {
        let options: G::Options = serde_json::from_value(options).unwrap();
        let options = G::validate_options(options).unwrap();
        let mut rng = Rng::new(seed);
        for _game in 0..400 {
            let mut g = G::start(&options);
            let mut actions = Vec::new();
            while g.outcome().is_none() {
                let me = g.to_act().unwrap();
                let plies = plies_for::<G>(own_moves);
                if wins_within(&g, me, plies)
                    && (own_moves == 1 || !wins_within(&g, me, plies_for::<G>(own_moves - 1)))
                {
                    println!("{} {own_moves}: {}", G::KIND, g.position());
                    return;
                }
                actions.clear();
                g.legal_actions(&mut actions);
                g.apply(actions[rng.below(actions.len())]);
            }
        }
        println!("{} {own_moves}: none found", G::KIND);
    }
    find::<Unane>(json!({"width":5,"height":4}), 2, 1);
    find::<Staku>(json!({}), 1, 1);
    find::<Staku>(json!({}), 2, 1);
    find::<Akron>(json!({"size":5}), 1, 1);
    find::<Akron>(json!({"size":5}), 2, 1);
    find::<Akunur>(json!({}), 1, 1);
    find::<Akunur>(json!({}), 2, 1);
}
