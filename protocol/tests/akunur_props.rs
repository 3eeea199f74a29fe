//! Property tests over random Akunur playouts and arbitrary input: listed actions apply,
//! unlisted ones are rejected, notation and positions round-trip, nothing panics.

use proptest::prelude::*;
use stoa_protocol::akunur::{Action, Akunur, Cell, Options};
use stoa_protocol::{kind, Game, RulesError, Side};

mod common;
use common::check_view_changes;

/// Every action that can be written down: 61 placements, 61 x 61 moves and the pass.
fn universe() -> Vec<Action> {
    let cells: Vec<Cell> = (0..61).filter_map(Cell::from_index).collect();
    let mut out: Vec<Action> = cells.iter().map(|&c| Action::Place(c)).collect();
    for &from in &cells {
        for &to in &cells {
            out.push(Action::Move { from, to });
        }
    }
    out.push(Action::Pass);
    out
}

fn legal(g: &Akunur) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

/// Invariants that hold in every reachable position.
fn check_state(g: &Akunur) {
    let actions = legal(g);
    assert_eq!(g.to_act().is_none(), g.outcome().is_some());
    assert_eq!(
        actions.is_empty(),
        g.outcome().is_some(),
        "{}",
        g.position()
    );
    let mut seen = std::collections::HashSet::new();
    for &a in &actions {
        assert!(seen.insert(a), "duplicate {a:?} in {}", g.position());
        assert_eq!(
            g.check(a),
            Ok(()),
            "{a:?} listed but rejected in {}",
            g.position()
        );
        let text = g.format_action(a);
        assert_eq!(text, text.to_lowercase());
        assert_eq!(g.parse_action(&text), Ok(a));
        assert_eq!(g.parse_action(&format!(" {} ", text.to_uppercase())), Ok(a));
    }
    // The position string round-trips, and the loaded game offers the same actions.
    let p = g.position();
    let loaded =
        Akunur::from_position(&Options::default(), &p).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert_eq!(loaded.position(), p);
    let mut a = legal(&loaded);
    let mut b = actions.clone();
    a.sort();
    b.sort();
    if g.outcome().is_none() {
        assert_eq!(a, b, "{p}");
    }
    let v = g.view();
    assert_eq!(v["cells"].as_array().map(Vec::len), Some(61));
    let placed = &v["placed"];
    for side in ["light", "dark"] {
        let on_board = v["on_board"][side].as_u64().unwrap();
        let placed = placed[side].as_u64().unwrap();
        assert!(on_board <= placed && placed <= 15, "{p}");
    }
}

/// Stones of a side on the board.
fn stones(g: &Akunur, side: Side) -> usize {
    (0..61)
        .filter_map(Cell::from_index)
        .filter(|&c| g.stone_at(c) == Some(side))
        .count()
}

/// Corners a side occupies.
fn corners(g: &Akunur, side: Side) -> usize {
    ["a1", "e1", "i5", "i9", "e9", "a5"]
        .iter()
        .filter(|c| g.stone_at(Cell::parse(c).unwrap()) == Some(side))
        .count()
}

/// Sum of both scores.
fn points(g: &Akunur) -> u32 {
    g.score(Side::First) + g.score(Side::Second)
}

/// A legal action that captures (the opponent loses stones, or a token is taken), enters a
/// corner or wins,
/// if there is one; `c` picks among them. Random play hardly ever captures, so the greedy
/// playouts below reach tokens, bonus placements and emptied sides.
fn aggressive(g: &Akunur, actions: &[Action], c: u16) -> Option<Action> {
    let me = g.to_act()?;
    let good: Vec<Action> = actions
        .iter()
        .copied()
        .filter(|&a| {
            let mut next = g.clone();
            next.apply(a);
            next.outcome().is_some_and(|o| o.winner == Some(me))
                || stones(&next, me.other()) < stones(g, me.other())
                || points(&next) > points(g)
                || corners(&next, me) > corners(g, me)
        })
        .collect();
    (!good.is_empty()).then(|| good[c as usize % good.len()])
}

/// A random playout of up to `choices.len()` actions, checking every position on the way.
fn playout(choices: &[u16], full_check_every: usize) -> Akunur {
    playout_with(choices, full_check_every, false)
}

/// As [`playout`]; `greedy` prefers capturing and winning actions.
fn playout_with(choices: &[u16], full_check_every: usize, greedy: bool) -> Akunur {
    let mut g = Akunur::start(&Options::default());
    let all = universe();
    for (ply, &c) in choices.iter().enumerate() {
        check_state(&g);
        let actions = legal(&g);
        if actions.is_empty() {
            break;
        }
        if greedy {
            if let Some(a) = aggressive(&g, &actions, c) {
                assert_eq!(g.check(a), Ok(()));
                g.apply(a);
                continue;
            }
        }
        if ply % full_check_every == 0 {
            // check() agrees with the list on every writable action.
            for &a in &all {
                assert_eq!(
                    g.check(a).is_ok(),
                    actions.contains(&a),
                    "{a:?} in {}",
                    g.position()
                );
            }
        } else {
            let odd = all[c as usize % all.len()];
            if !actions.contains(&odd) {
                assert!(g.check(odd).is_err());
            }
        }
        g.apply(actions[c as usize % actions.len()]);
    }
    check_state(&g);
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_playouts_keep_every_invariant(choices in prop::collection::vec(any::<u16>(), 0..160)) {
        playout(&choices, 23);
    }

    #[test]
    fn greedy_playouts_keep_every_invariant(choices in prop::collection::vec(any::<u16>(), 0..200)) {
        playout_with(&choices, 31, true);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,12}") {
        let g = Akunur::start(&Options::default());
        let _ = g.parse_action(&text);
        let _ = Akunur::from_position(&Options::default(), &text);
    }

    #[test]
    fn notation_like_text_is_parsed_or_rejected(text in "[a-jA-J0-9 \\-]{0,8}|pass|PASS") {
        let g = Akunur::start(&Options::default());
        match g.parse_action(&text) {
            Ok(a) => {
                // Accepted text means the canonical form parses to the same action.
                prop_assert_eq!(g.parse_action(&g.format_action(a)), Ok(a));
                prop_assert_eq!(g.format_action(a), text.trim().to_lowercase());
            }
            Err(e) => {
                let bad_notation = matches!(e, RulesError::BadNotation { .. });
                prop_assert!(bad_notation, "{:?}", e);
            }
        }
    }

    #[test]
    fn mutated_positions_never_panic(
        choices in prop::collection::vec(any::<u16>(), 0..60),
        edits in prop::collection::vec((any::<u16>(), prop::sample::select(vec!['L', 'D', '.', '/', ' ', '0', '1', '2', '9', ',', 'l', 'd', 'x'])), 1..4),
    ) {
        let g = playout(&choices, usize::MAX);
        let mut chars: Vec<char> = g.position().chars().collect();
        for (at, ch) in edits {
            let i = at as usize % chars.len();
            chars[i] = ch;
        }
        let text: String = chars.into_iter().collect();
        if let Ok(loaded) = Akunur::from_position(&Options::default(), &text) {
            let p = loaded.position();
            let again = Akunur::from_position(&Options::default(), &p).unwrap();
            prop_assert_eq!(again.position(), p);
            let mut v = Vec::new();
            loaded.legal_actions(&mut v);
            for a in v {
                let mut next = loaded.clone();
                prop_assert!(next.check(a).is_ok());
                next.apply(a);
            }
        }
    }

    #[test]
    fn random_options_json_never_panics(n in any::<i64>(), f in any::<f64>(), s in "\\PC{0,6}") {
        let k = kind("akunur").unwrap();
        for v in [
            serde_json::json!({"corners_to_win": n}),
            serde_json::json!({"corners_to_win": f}),
            serde_json::json!({"corners_to_win": s.clone()}),
            serde_json::json!({ s.clone(): 3 }),
        ] {
            if let Ok(o) = k.validate_options(&v) {
                let c = o["corners_to_win"].as_u64().unwrap();
                prop_assert!(c == 3 || c == 4);
            }
        }
    }
}

/// Long random games: either they end (by corners, passes or repetition) or they keep
/// offering legal actions; the page sets no move limit, so the playout is capped.
#[test]
fn long_random_games_end_or_go_on_legally() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xA4B5);
    let mut ended = 0;
    for _ in 0..40 {
        let mut g = Akunur::start(&Options::default());
        let mut v = Vec::new();
        for _ in 0..600 {
            v.clear();
            g.legal_actions(&mut v);
            if v.is_empty() {
                break;
            }
            g.apply(v[rng.gen_range(0..v.len())]);
        }
        if g.outcome().is_some() {
            ended += 1;
            assert!(g.to_act().is_none());
        } else {
            assert!(g.to_act().is_some());
        }
    }
    assert!(ended > 0, "no random game ended in 600 actions");
}

/// Greedy games reach the rare parts of the rules: tokens, bonus placements and endings.
/// (The page has no move limit and random games seldom repeat a position three times, so
/// the playouts are long and only a few of them end.)
#[test]
fn greedy_games_reach_tokens_bonuses_and_endings() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (mut tokens, mut bonuses, mut ended, mut captures) = (0, 0, 0, 0);
    for _ in 0..30 {
        let mut g = Akunur::start(&Options::default());
        for _ in 0..1500 {
            let actions = legal(&g);
            if actions.is_empty() {
                break;
            }
            let c: u16 = rng.gen();
            let a = aggressive(&g, &actions, c).unwrap_or(actions[c as usize % actions.len()]);
            let before = points(&g);
            let opp = g.to_act().unwrap().other();
            let opp_stones = stones(&g, opp);
            g.apply(a);
            captures += usize::from(stones(&g, opp) < opp_stones);
            tokens += usize::from(points(&g) > before);
            bonuses += usize::from(g.bonus_pending());
        }
        ended += usize::from(g.outcome().is_some());
    }
    assert!(
        captures > 0 && tokens > 0 && bonuses > 0 && ended > 0,
        "captures {captures}, tokens {tokens}, bonuses {bonuses}, ended {ended}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random and greedy playouts (placements, moves, captures, tokens, bonus placements,
    /// passes, endings): the reported changes turn the view before each action into the
    /// view after it; every legal action is checked every 16th ply.
    #[test]
    fn view_changes_turn_the_old_view_into_the_new(
        choices in prop::collection::vec(any::<u16>(), 0..600), greedy: bool,
    ) {
        let mut g = Akunur::start(&Options::default());
        let other = Akunur::start(&Options { corners_to_win: 4 });
        prop_assert_eq!(g.view_changes(&other), None);
        for (ply, &c) in choices.iter().enumerate() {
            let actions = legal(&g);
            if actions.is_empty() {
                break;
            }
            if ply % 16 == 0 {
                for &a in &actions {
                    let mut next = g.clone();
                    next.apply(a);
                    check_view_changes(&g, &next)?;
                }
            }
            let a = greedy
                .then(|| aggressive(&g, &actions, c))
                .flatten()
                .unwrap_or(actions[c as usize % actions.len()]);
            let before = g.clone();
            g.apply(a);
            check_view_changes(&before, &g)?;
        }
    }
}
