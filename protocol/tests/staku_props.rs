//! Property tests of the Staku engine: random playouts from the start and from random
//! positions, round trips of positions and notation, and no panics on arbitrary input.

use std::collections::HashSet;

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stoa_protocol::staku::{Options, Staku};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError};

mod common;
use common::check_view_changes;

const ROW_LEN: [usize; 7] = [6, 7, 8, 7, 8, 7, 6];

/// Each capture removes at least one enemy coloured token (26 in all) and at most 20
/// capture-free turns separate two captures, so every game ends within 27 * 20 turns.
const MAX_TURNS: usize = 27 * 20;

fn legal(g: &Staku) -> Vec<<Staku as Game>::Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

/// Checks the invariants of one position and every listed action in it.
fn check_position(g: &Staku, options: &Options) {
    let actions = legal(g);
    // outcome, to_act and the action list agree
    assert_eq!(g.outcome().is_none(), g.to_act().is_some());
    assert_eq!(
        g.outcome().is_none(),
        !actions.is_empty(),
        "{}",
        g.position()
    );
    // position round trip, state included
    let again = Staku::from_position(options, &g.position()).unwrap();
    assert_eq!(&again, g);
    // each action listed once, checks, and round-trips through notation
    let distinct: HashSet<_> = actions.iter().copied().collect();
    assert_eq!(distinct.len(), actions.len());
    for &a in &actions {
        let text = g.format_action(a);
        assert_eq!(g.parse_action(&text).unwrap(), a);
        assert_eq!(g.parse_action(&text.to_uppercase()).unwrap(), a);
        assert_eq!(g.check(a), Ok(()), "{text}");
    }
}

/// Plays random turns until the game ends; returns the number of turns and the outcome.
fn playout(
    mut g: Staku,
    options: &Options,
    rng: &mut StdRng,
    full_checks: bool,
) -> (usize, Outcome) {
    let mut turns = 0;
    loop {
        if full_checks {
            check_position(&g, options);
        }
        let actions = legal(&g);
        if actions.is_empty() {
            let o = g
                .outcome()
                .expect("no legal action means the game has ended");
            match o.reason {
                Reason::Palace | Reason::NoMoves => assert!(o.winner.is_some()),
                Reason::NoCaptureLimit => {
                    assert_eq!(o.winner, None);
                    assert_eq!(g.counter(), 0);
                }
                other => panic!("unexpected reason {other:?}"),
            }
            return (turns, o);
        }
        assert!(g.counter() >= 1);
        let a = actions[rng.gen_range(0..actions.len())];
        g.apply(a);
        turns += 1;
        assert!(turns <= MAX_TURNS, "game did not end: {}", g.position());
    }
}

/// A random position: random legal stacks (at most `max_stack`), random side and counter.
fn random_position(rng: &mut StdRng, max_stack: u8) -> String {
    let rows: Vec<String> = (0..7)
        .rev()
        .map(|r| {
            (0..ROW_LEN[r])
                .map(|_| {
                    if rng.gen_bool(0.45) {
                        return ".".to_string();
                    }
                    let h = rng.gen_range(1..=max_stack as usize);
                    let neutrals = rng.gen_range(0..=h);
                    let colour = if rng.gen_bool(0.5) { "W" } else { "B" };
                    "N".repeat(neutrals) + &colour.repeat(h - neutrals)
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let side = if rng.gen_bool(0.5) { "w" } else { "b" };
    format!("{} {side} {}", rows.join("/"), rng.gen_range(1..=20))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_playouts_from_the_start_end_and_keep_invariants(seed: u64, three: bool) {
        let options = Options { max_stack: if three { 3 } else { 2 } };
        let mut rng = StdRng::seed_from_u64(seed);
        playout(Staku::start(&options), &options, &mut rng, true);
    }

    #[test]
    fn random_positions_keep_invariants(seed: u64, three: bool) {
        let max_stack = if three { 3 } else { 2 };
        let options = Options { max_stack };
        let mut rng = StdRng::seed_from_u64(seed);
        let text = random_position(&mut rng, max_stack);
        let g = Staku::from_position(&options, &text).unwrap();
        prop_assert_eq!(g.position(), text);
        playout(g, &options, &mut rng, true);
    }

    /// `check` accepts a random well-formed turn exactly when generation lists it.
    #[test]
    fn check_agrees_with_generation(seed: u64, picks in proptest::collection::vec(
        (0usize..49, 1u8..=3, 0usize..49, 0u8..=3, 0usize..49), 64)) {
        let options = Options::default();
        let mut rng = StdRng::seed_from_u64(seed);
        let g = Staku::from_position(&options, &random_position(&mut rng, 3)).unwrap();
        let listed: HashSet<_> = legal(&g).into_iter().collect();
        let names: Vec<String> = (0..7usize)
            .flat_map(|r| (1..=ROW_LEN[r]).map(move |i| format!("{}{i}", (b'a' + r as u8) as char)))
            .collect();
        let op = |k: u8| ["-", "+", "*"][k as usize - 1];
        // random turns, plus random second moves appended to listed first moves
        let firsts: Vec<_> = listed.iter().copied().filter(|a| a.second().is_none()).collect();
        for (i, &(from, k, to, k2, to2)) in picks.iter().enumerate() {
            let mut text = format!("{}{}{}", names[from], op(k), names[to]);
            if i % 2 == 1 && !firsts.is_empty() {
                text = g.format_action(firsts[from % firsts.len()]);
            }
            if k2 > 0 {
                text += &format!("{}{}", op(k2), names[to2]);
            }
            let a = g.parse_action(&text).unwrap();
            prop_assert_eq!(g.format_action(a), text.clone());
            prop_assert_eq!(g.check(a).is_ok(), listed.contains(&a), "{}", text);
        }
    }

    #[test]
    fn arbitrary_notation_never_panics(text in "\\PC{0,16}") {
        let g = Staku::start(&Options::default());
        if let Ok(a) = g.parse_action(&text) {
            let canonical = g.format_action(a);
            prop_assert_eq!(g.parse_action(&canonical).unwrap(), a);
            let _ = g.check(a);
        }
    }

    #[test]
    fn notation_like_strings_never_panic(text in "[a-hA-H0-9!+*\\- ]{0,12}") {
        let g = Staku::start(&Options::default());
        match g.parse_action(&text) {
            Ok(a) => {
                let _ = g.check(a);
                prop_assert_eq!(g.parse_action(&g.format_action(a)).unwrap(), a);
            }
            Err(e) => {
                let bad_notation = matches!(e, RulesError::BadNotation { .. });
                prop_assert!(bad_notation, "{}", e);
            }
        }
    }

    #[test]
    fn arbitrary_positions_never_panic(text in "\\PC{0,120}") {
        let _ = Staku::from_position(&Options::default(), &text);
    }

    #[test]
    fn position_like_strings_never_panic(
        rows in proptest::collection::vec("[WBN.,]{0,20}", 0..9),
        side in "[wbx]?",
        counter in "[0-9-]{0,3}",
    ) {
        let text = format!("{} {side} {counter}", rows.join("/"));
        if let Ok(g) = Staku::from_position(&Options::default(), &text) {
            prop_assert_eq!(g.position(), text);
            let _ = legal(&g);
        }
    }

    #[test]
    fn arbitrary_options_never_panic(json in "\\PC{0,40}", n in any::<i64>()) {
        let k = kind("staku").unwrap();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&json) {
            let _ = k.validate_options(&v);
        }
        let v = serde_json::json!({"max_stack": n});
        let r = k.validate_options(&v);
        prop_assert_eq!(r.is_ok(), n == 2 || n == 3);
    }
}

/// Long seeded playouts without per-position checks: many complete games end properly, and
/// random play reaches more than one kind of ending.
#[test]
fn many_seeded_games_end() {
    let mut reasons = HashSet::new();
    for seed in 0..300u64 {
        let options = Options {
            max_stack: if seed % 2 == 0 { 3 } else { 2 },
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let (_, outcome) = playout(Staku::start(&options), &options, &mut rng, false);
        reasons.insert(outcome.reason.as_str());
    }
    let mut reasons: Vec<_> = reasons.into_iter().collect();
    reasons.sort();
    assert_eq!(reasons, ["no_capture_limit", "no_moves", "palace"]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random playouts (from the start or a random position, both stacking limits): every
    /// action played, and every legal action of some positions on the way, turns the old
    /// view into the new one through the reported changes alone.
    #[test]
    fn view_changes_turn_the_old_view_into_the_new(seed: u64, three: bool, from_start: bool) {
        let max_stack = if three { 3 } else { 2 };
        let options = Options { max_stack };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut game = if from_start {
            Staku::start(&options)
        } else {
            Staku::from_position(&options, &random_position(&mut rng, max_stack)).unwrap()
        };
        let other = Staku::start(&Options { max_stack: 5 - max_stack });
        prop_assert_eq!(game.view_changes(&other), None);
        let mut turns = 0;
        while game.outcome().is_none() {
            let actions = legal(&game);
            if turns % 32 == 0 {
                for &a in &actions {
                    let mut next = game;
                    next.apply(a);
                    check_view_changes(&game, &next)?;
                }
            }
            let before = game;
            game.apply(actions[rng.gen_range(0..actions.len())]);
            check_view_changes(&before, &game)?;
            turns += 1;
        }
    }
}
