//! Ūnane property tests: random playouts on random legal board sizes and random positions,
//! checked against a naive grid model of the rules (protocol/docs/games/unane.md); round trips of positions and
//! notation; no panic on arbitrary input strings.

use std::collections::{BTreeSet, HashSet};

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stoa_protocol::unane::{Action, Cell, Options, Unane};
use stoa_protocol::{kind, Game, Reason, Side};

mod common;
use common::check_view_changes;

/// A legal board size: both in 3..=16, at least one even.
fn size() -> impl Strategy<Value = (u32, u32)> {
    (3..=16u32, 3..=16u32).prop_map(|(w, h)| {
        if w % 2 == 1 && h % 2 == 1 {
            (w + 1, h)
        } else {
            (w, h)
        }
    })
}

fn legal(game: &Unane) -> Vec<Action> {
    let mut out = Vec::new();
    game.legal_actions(&mut out);
    out
}

fn name(f: usize, r: usize) -> String {
    format!("{}{}", (b'a' + f as u8) as char, r + 1)
}

/// The naive model: a grid indexed `[rank][file]` (rank 0 at the bottom) of `b'b'`,
/// `b'w'`, `b'.'`, read from a position string.
struct Model {
    w: usize,
    h: usize,
    grid: Vec<Vec<u8>>,
    to_act: u8,
    ply: u64,
}

impl Model {
    fn parse(position: &str) -> Model {
        let fields: Vec<&str> = position.split(' ').collect();
        let mut grid: Vec<Vec<u8>> = fields[0].split('/').map(|r| r.bytes().collect()).collect();
        grid.reverse();
        Model {
            w: grid[0].len(),
            h: grid.len(),
            grid,
            to_act: fields[1].as_bytes()[0],
            ply: fields[2].parse().unwrap(),
        }
    }

    fn neighbours(&self, f: usize, r: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if f > 0 {
            out.push((f - 1, r));
        }
        if f + 1 < self.w {
            out.push((f + 1, r));
        }
        if r > 0 {
            out.push((f, r - 1));
        }
        if r + 1 < self.h {
            out.push((f, r + 1));
        }
        out
    }

    fn legal(&self) -> BTreeSet<String> {
        let me = self.to_act;
        let foe = if me == b'b' { b'w' } else { b'b' };
        let mut out = BTreeSet::new();
        for r in 0..self.h {
            for f in 0..self.w {
                if self.grid[r][f] != me {
                    continue;
                }
                let mut touches = false;
                for (nf, nr) in self.neighbours(f, r) {
                    if self.grid[nr][nf] == foe {
                        touches = true;
                        out.insert(format!("{}x{}", name(f, r), name(nf, nr)));
                    }
                }
                if !touches {
                    out.insert(format!("-{}", name(f, r)));
                }
            }
        }
        if self.ply == 1 && me == b'w' {
            out.insert("swap".into());
        }
        out
    }

    fn groups(&self, colour: u8) -> usize {
        let mut seen = vec![vec![false; self.w]; self.h];
        let mut n = 0;
        for r in 0..self.h {
            for f in 0..self.w {
                if self.grid[r][f] != colour || seen[r][f] {
                    continue;
                }
                n += 1;
                let mut stack = vec![(f, r)];
                seen[r][f] = true;
                while let Some((cf, cr)) = stack.pop() {
                    for (nf, nr) in self.neighbours(cf, cr) {
                        if self.grid[nr][nf] == colour && !seen[nr][nf] {
                            seen[nr][nf] = true;
                            stack.push((nf, nr));
                        }
                    }
                }
            }
        }
        n
    }

    fn stones(&self, colour: u8) -> usize {
        self.grid.iter().flatten().filter(|&&c| c == colour).count()
    }
}

/// Checks the engine state against the model of its own position string, then applies
/// `action` to both and compares the outcome with the page's end test.
fn check_against_model(game: &Unane) {
    let model = Model::parse(&game.position());
    let engine: BTreeSet<String> = legal(game).iter().map(|a| a.to_string()).collect();
    if game.outcome().is_some() {
        assert!(engine.is_empty());
        assert_eq!(game.to_act(), None);
        return;
    }
    assert_eq!(engine, model.legal(), "{}", game.position());
}

fn expected_end(before: &Unane, action: Action) -> Option<(Side, Reason)> {
    if action == Action::Swap {
        return None;
    }
    let mut after = *before;
    after.apply(action);
    let m = Model::parse(&after.position());
    let mover = before.to_act().unwrap();
    let (mc, oc) = if mover == Side::First {
        (b'b', b'w')
    } else {
        (b'w', b'b')
    };
    if m.groups(mc) == 1 {
        Some((mover, Reason::OneGroup))
    } else if m.groups(oc) == 1 {
        Some((mover.other(), Reason::OneGroup))
    } else if m.stones(oc) == 0 {
        Some((mover, Reason::NoMoves))
    } else {
        None
    }
}

fn alternative_forms(action: Action) -> Vec<String> {
    match action {
        Action::Capture { from, to } => vec![
            format!("{from}-{to}").to_uppercase(),
            format!(" {from}x{to}\t").to_uppercase(),
        ],
        Action::Remove(c) => vec![format!("{c}-{c}"), format!(" -{c} ").to_uppercase()],
        Action::Swap => vec!["SWAP".into(), " swap\n".into()],
    }
}

fn random_action(rng: &mut StdRng) -> Action {
    let cell = |rng: &mut StdRng| Cell::new(rng.gen_range(0..16), rng.gen_range(0..16)).unwrap();
    match rng.gen_range(0..10) {
        0 => Action::Swap,
        1..=3 => Action::Remove(cell(rng)),
        4..=6 => Action::Capture {
            from: cell(rng),
            to: cell(rng),
        },
        _ => {
            // A step to a neighbour, the likeliest kind of near miss.
            let from = cell(rng);
            let (f, r) = (from.file() as i32, from.rank() as i32);
            let (df, dr) = [(0, 1), (0, -1), (1, 0), (-1, 0)][rng.gen_range(0..4)];
            match Cell::new((f + df).clamp(0, 15) as u8, (r + dr).clamp(0, 15) as u8) {
                Some(to) => Action::Capture { from, to },
                None => Action::Remove(from),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random playouts from the start: every listed action is accepted and round-trips its
    /// notation, unlisted ones are refused, positions round-trip, the model agrees on every
    /// legal set and every end, and the game ends within width*height-3 stone actions.
    #[test]
    fn random_playouts_from_the_start((w, h) in size(), seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let options = Unane::validate_options(Options { width: w, height: h }).unwrap();
        let mut game = Unane::start(&options);
        let mut stone_actions = 0u32;
        while game.outcome().is_none() {
            let actions = legal(&game);
            prop_assert!(!actions.is_empty());
            prop_assert_eq!(actions.iter().collect::<HashSet<_>>().len(), actions.len());
            prop_assert_eq!(game.perft(1), actions.len() as u64);
            check_against_model(&game);
            for &a in &actions {
                prop_assert!(game.check(a).is_ok());
                let text = game.format_action(a);
                prop_assert_eq!(game.parse_action(&text), Ok(a));
                for alt in alternative_forms(a) {
                    prop_assert_eq!(game.parse_action(&alt), Ok(a), "{}", alt);
                }
            }
            for _ in 0..8 {
                let a = random_action(&mut rng);
                prop_assert_eq!(game.check(a).is_ok(), actions.contains(&a), "{:?}", a);
            }
            let reloaded = Unane::from_position(&options, &game.position()).unwrap();
            prop_assert_eq!(reloaded.position(), game.position());
            prop_assert_eq!(reloaded, game);

            let a = actions[rng.gen_range(0..actions.len())];
            let expected = expected_end(&game, a);
            if !game.is_swap(a) {
                stone_actions += 1;
            }
            game.apply(a);
            prop_assert_eq!(
                game.outcome().map(|o| (o.winner.unwrap(), o.reason)),
                expected
            );
        }
        prop_assert!(stone_actions <= w * h - 3, "{} stone actions on {}x{}", stone_actions, w, h);
        prop_assert_eq!(game.outcome().unwrap().reason, Reason::OneGroup);
        prop_assert_eq!(game.to_act(), None);
        prop_assert!(legal(&game).is_empty());
        prop_assert_eq!(game.perft(2), 0);
        // The ended position still loads (as a game on) and prints the same.
        let reloaded = Unane::from_position(&options, &game.position());
        if let Ok(r) = reloaded {
            prop_assert_eq!(r.position(), game.position());
            prop_assert_eq!(r.outcome(), None);
        }
    }

    /// Random positions (any mix of stones, side, ply): the model agrees on the legal set and
    /// on the end after each action; check accepts exactly the listed actions; perft's
    /// override agrees with the generic definition.
    #[test]
    fn random_positions((w, h) in size(), seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let options = Options { width: w, height: h };
        let density: f64 = rng.gen_range(0.05..1.0);
        let rows: Vec<String> = (0..h)
            .map(|_| {
                (0..w)
                    .map(|_| {
                        if rng.gen_bool(density) {
                            if rng.gen_bool(0.5) { 'b' } else { 'w' }
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect();
        let to_act = if rng.gen_bool(0.5) { 'b' } else { 'w' };
        let ply = [0u32, 1, 1, 2, 7, u32::MAX][rng.gen_range(0..6)];
        let position = format!("{} {to_act} {ply}", rows.join("/"));
        let has_stones = rows.iter().any(|r| r.contains(to_act));
        let game = match Unane::from_position(&options, &position) {
            Ok(g) => g,
            Err(e) => {
                prop_assert!(!has_stones, "{}: {}", position, e);
                return Ok(());
            }
        };
        prop_assert_eq!(game.position(), position.clone());
        prop_assert_eq!(game.outcome(), None);
        check_against_model(&game);
        let actions = legal(&game);
        prop_assert!(!actions.is_empty());
        prop_assert_eq!(actions.iter().collect::<HashSet<_>>().len(), actions.len());
        for _ in 0..64 {
            let a = random_action(&mut rng);
            prop_assert_eq!(game.check(a).is_ok(), actions.contains(&a), "{:?}", a);
        }
        for &a in &actions {
            prop_assert!(game.check(a).is_ok());
            let expected = expected_end(&game, a);
            let mut next = game;
            next.apply(a);
            prop_assert_eq!(next.outcome().map(|o| (o.winner.unwrap(), o.reason)), expected);
            prop_assert_eq!(next.to_act().is_none(), next.outcome().is_some());
            check_against_model(&next);
        }
        prop_assert_eq!(game.perft(2), stoa_protocol::perft::perft(&game, 2));
    }

    /// Arbitrary text never panics; accepted notation re-formats to a form that parses back.
    #[test]
    fn arbitrary_notation_never_panics(text in "\\PC{0,12}", (w, h) in size()) {
        let game = Unane::start(&Options { width: w, height: h });
        if let Ok(a) = game.parse_action(&text) {
            let canonical = game.format_action(a);
            prop_assert_eq!(game.parse_action(&canonical), Ok(a));
            prop_assert_eq!(canonical.clone(), canonical.to_lowercase());
            let _ = game.check(a);
        }
    }

    /// Near-miss notation (the notation's own alphabet) never panics either.
    #[test]
    fn near_miss_notation_never_panics(text in "[ a-qA-Q0-9x\\-]{0,9}", (w, h) in size()) {
        let game = Unane::start(&Options { width: w, height: h });
        if let Ok(a) = game.parse_action(&text) {
            prop_assert_eq!(game.parse_action(&game.format_action(a)), Ok(a));
            let _ = game.check(a);
        }
    }

    /// Arbitrary position strings never panic; an accepted one is already canonical.
    #[test]
    fn arbitrary_positions_never_panic(
        text in prop_oneof!["\\PC{0,40}", "[bw./ 0-9]{0,40}", "[bw.]{4}/[bw.]{4}/[bw.]{4} [bwx] [0-9]{1,3}"],
    ) {
        for (w, h) in [(4u32, 3u32), (8, 7), (3, 4)] {
            if let Ok(g) = Unane::from_position(&Options { width: w, height: h }, &text) {
                prop_assert_eq!(g.position(), text.clone());
                let _ = g.view();
                let _ = g.perft(2);
            }
        }
    }

    /// Arbitrary options JSON never panics; accepted options are in range.
    #[test]
    fn arbitrary_options_never_panic(text in "\\PC{0,30}", a in any::<i64>(), b in -2..20i64) {
        let k = kind("unane").unwrap();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            let _ = k.validate_options(&v);
        }
        let v = serde_json::json!({"width": a, "height": b});
        let ok = (3..=16).contains(&a) && (3..=16).contains(&b) && (a % 2 == 0 || b % 2 == 0);
        prop_assert_eq!(k.validate_options(&v).is_ok(), ok);
        let v = serde_json::json!({"width": b, "height": 8});
        prop_assert_eq!(k.validate_options(&v).is_ok(), (3..=16).contains(&b));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random playouts (swaps included): after every action, replacing the reported view
    /// changes in the view before it gives exactly the view after it, and every reported
    /// member did change (nothing missing, nothing extra). The same game played as a server
    /// plays it (each state keeping its group counts for the next diff) reports exactly the
    /// same changes, and its changes pass the same check.
    #[test]
    fn view_changes_turn_the_old_view_into_the_new((w, h) in size(), seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut game = Unane::start(&Options { width: w, height: h });
        let mut kept = game;
        while game.outcome().is_none() {
            let actions = legal(&game);
            let action = actions[rng.gen_range(0..actions.len())];
            let before = game;
            game.apply(action);
            check_view_changes(&before, &game)?;
            let kept_before = kept;
            kept.apply(action);
            prop_assert_eq!(kept.view_changes_kept(&kept_before), game.view_changes(&before));
            check_view_changes(&kept_before, &kept)?;
            prop_assert_eq!(kept, game);
            prop_assert_eq!(kept.view(), game.view());
        }
    }
}
