//! Property tests of the Akron engine over random playouts on sizes 3..=9: every listed
//! action is legal and applies, unlisted ones are rejected, notation and position strings
//! round-trip, and no input text makes the engine panic.

use std::collections::HashSet;

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stoa_protocol::akron::{Action, Akron, Options};
use stoa_protocol::{Game, RulesError};

mod common;
use common::check_view_changes;

fn points(size: u32) -> u16 {
    (1..=size).map(|m| m * m).sum::<u32>() as u16
}

fn options(size: u32, pieces: u32, nodelay: bool) -> Options {
    Akron::validate_options(Options {
        size,
        pieces: Some(pieces),
        nodelay,
    })
    .expect("valid options")
}

/// Checks one position thoroughly; `exhaustive` also compares `check` with the legal list
/// for every (from, to) pair.
fn check_position(g: &Akron, opts: &Options, rng: &mut StdRng, exhaustive: bool) -> Vec<Action> {
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    let set: HashSet<Action> = legal.iter().copied().collect();
    assert_eq!(set.len(), legal.len(), "duplicate legal actions in {g:?}");
    if g.outcome().is_some() {
        assert!(legal.is_empty());
        assert_eq!(g.to_act(), None);
        return legal;
    }
    assert!(g.to_act().is_some());
    for &a in &legal {
        assert_eq!(
            g.check(a),
            Ok(()),
            "{} listed but rejected",
            g.format_action(a)
        );
        let text = g.format_action(a);
        assert_eq!(g.parse_action(&text), Ok(a), "round trip of {text}");
        assert_eq!(g.parse_action(&text.to_lowercase()), Ok(a));
    }
    // Position strings round-trip to an equivalent game.
    let pos = g.position();
    let back = Akron::from_position(opts, &pos).expect("own position parses");
    assert_eq!(back.position(), pos);
    let mut back_legal = Vec::new();
    back.legal_actions(&mut back_legal);
    assert_eq!(back_legal.len(), legal.len());
    // Random actions: legal exactly when listed.
    let np = points(opts.size);
    let probe = |a: Action| {
        let ok = g.check(a).is_ok();
        assert_eq!(ok, set.contains(&a), "{} in {pos}", g.format_action(a));
    };
    for _ in 0..40 {
        probe(Action::Move {
            from: rng.gen_range(0..np),
            to: rng.gen_range(0..np),
        });
        probe(Action::Add(rng.gen_range(0..np)));
    }
    probe(Action::Swap);
    if exhaustive {
        for from in 0..np {
            for to in 0..np {
                probe(Action::Move { from, to });
            }
        }
    }
    legal
}

fn playout(size: u32, pieces: u32, nodelay: bool, seed: u64, plies: usize) {
    let opts = options(size, pieces, nodelay);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut g = Akron::start(&opts);
    for ply in 0..plies {
        let exhaustive = size <= 5 && ply % 16 == 15;
        let legal = check_position(&g, &opts, &mut rng, exhaustive);
        if legal.is_empty() {
            break;
        }
        // Prefer moves once some exist, so boards grow levels and drop chains happen.
        let moves: Vec<Action> = legal
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Move { .. }))
            .collect();
        let a = if !moves.is_empty() && rng.gen_bool(0.6) {
            moves[rng.gen_range(0..moves.len())]
        } else {
            legal[rng.gen_range(0..legal.len())]
        };
        let before_ply = g.position();
        g.apply(a);
        assert_ne!(g.position(), before_ply);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_playouts_small(size in 3u32..=5, extra in 0u32..20, nodelay: bool, seed: u64) {
        let pieces = size + extra;
        playout(size, pieces, nodelay, seed, 120);
    }

    #[test]
    fn random_playouts_large(size in 6u32..=9, nodelay: bool, seed: u64) {
        playout(size, size * size / 2, nodelay, seed, 90);
    }

    #[test]
    fn arbitrary_notation_never_panics(text in "\\PC{0,12}", size in 3u32..=9) {
        let g = Akron::start(&options(size, size * size / 2, false));
        if let Ok(a) = g.parse_action(&text) {
            // Whatever parses formats back to something that parses to the same action.
            let canonical = g.format_action(a);
            prop_assert_eq!(g.parse_action(&canonical), Ok(a));
            let _ = g.check(a);
        }
    }

    #[test]
    fn notation_like_text_never_panics(text in "[a-qA-Q0-9'\\- ]{0,10}", size in 3u32..=16) {
        let g = Akron::start(&options(size, size * size / 2 + 1, false));
        match g.parse_action(&text) {
            Ok(a) => {
                let canonical = g.format_action(a);
                prop_assert_eq!(g.parse_action(&canonical), Ok(a));
                let _ = g.check(a);
            }
            Err(e) => {
                let bad_notation = matches!(e, RulesError::BadNotation { .. });
                prop_assert!(bad_notation, "unexpected error {:?}", e);
            }
        }
    }

    #[test]
    fn arbitrary_positions_never_panic(text in "\\PC{0,40}") {
        let opts = options(9, 40, false);
        if let Ok(g) = Akron::from_position(&opts, &text) {
            let p = g.position();
            prop_assert_eq!(Akron::from_position(&opts, &p).map(|g| g.position()), Ok(p));
        }
    }

    #[test]
    fn mutated_positions_never_panic(seed: u64, edits in 1usize..4) {
        // Start from a real mid-game position and corrupt a few characters.
        let opts = options(5, 12, false);
        let mut rng = StdRng::seed_from_u64(seed);
        let mut g = Akron::start(&opts);
        for _ in 0..rng.gen_range(0..30) {
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            if legal.is_empty() { break; }
            g.apply(legal[rng.gen_range(0..legal.len())]);
        }
        let mut chars: Vec<char> = g.position().chars().collect();
        let alphabet: Vec<char> = "0123456789abcdeABCDE',- vhx'".chars().collect();
        for _ in 0..edits {
            let i = rng.gen_range(0..chars.len());
            match rng.gen_range(0..3) {
                0 => chars[i] = alphabet[rng.gen_range(0..alphabet.len())],
                1 => { chars.remove(i); }
                _ => chars.insert(i, alphabet[rng.gen_range(0..alphabet.len())]),
            }
            if chars.is_empty() { break; }
        }
        let text: String = chars.into_iter().collect();
        if let Ok(g) = Akron::from_position(&opts, &text) {
            let p = g.position();
            prop_assert_eq!(Akron::from_position(&opts, &p).map(|g| g.position()), Ok(p));
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            for a in legal {
                let mut next = g.clone();
                next.apply(a);
            }
        }
    }
}

/// A random playout preferring moves (as [`playout`]), checking the view changes of every
/// action played and, every 16th ply, of every legal action.
fn view_changes_playout(
    size: u32,
    pieces: u32,
    nodelay: bool,
    seed: u64,
    plies: usize,
) -> Result<(), TestCaseError> {
    let opts = options(size, pieces, nodelay);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut g = Akron::start(&opts);
    let other = Akron::start(&options(size, pieces + 1, nodelay));
    prop_assert_eq!(g.view_changes(&other), None);
    for ply in 0..plies {
        let mut legal = Vec::new();
        g.legal_actions(&mut legal);
        if legal.is_empty() {
            break;
        }
        if ply % 16 == 0 {
            for &a in &legal {
                let mut next = g.clone();
                next.apply(a);
                check_view_changes(&g, &next)?;
            }
        }
        let moves: Vec<Action> = legal
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Move { .. }))
            .collect();
        let a = if !moves.is_empty() && rng.gen_bool(0.6) {
            moves[rng.gen_range(0..moves.len())]
        } else {
            legal[rng.gen_range(0..legal.len())]
        };
        let before = g.clone();
        g.apply(a);
        check_view_changes(&before, &g)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random playouts (adds, moves with drop chains, swaps, connections): the reported
    /// changes turn the view before each action into the view after it.
    #[test]
    fn view_changes_turn_the_old_view_into_the_new_small(
        size in 3u32..=5, extra in 0u32..20, nodelay: bool, seed: u64,
    ) {
        view_changes_playout(size, size + extra, nodelay, seed, 120)?;
    }

    #[test]
    fn view_changes_turn_the_old_view_into_the_new_large(size in 6u32..=9, nodelay: bool, seed: u64) {
        view_changes_playout(size, size * size / 2, nodelay, seed, 90)?;
    }
}
