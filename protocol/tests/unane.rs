//! Ūnane conformance tests: every reference count and example of `protocol/docs/games/unane.md`,
//! hand-built positions with exact legal sets, each rule and special case, options,
//! position strings, notation and the client view.

use serde_json::json;
use stoa_protocol::unane::{Action, Cell, Options, Unane};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError, Side};

fn opts(width: u32, height: u32) -> Options {
    Options { width, height }
}

fn load(width: u32, height: u32, position: &str) -> Unane {
    Unane::from_position(&opts(width, height), position)
        .unwrap_or_else(|e| panic!("{position}: {e}"))
}

fn legal(game: &Unane) -> Vec<String> {
    let mut actions = Vec::new();
    game.legal_actions(&mut actions);
    let mut out: Vec<String> = actions.iter().map(|a| game.format_action(*a)).collect();
    out.sort();
    out
}

fn play(game: &mut Unane, text: &str) {
    let action = game.parse_action(text).unwrap();
    game.check(action).unwrap_or_else(|e| panic!("{text}: {e}"));
    game.apply(action);
}

fn cell(name: &str) -> Cell {
    let b = name.as_bytes();
    Cell::new(b[0] - b'a', name[1..].parse::<u8>().unwrap() - 1).unwrap()
}

fn illegal_reason(game: &Unane, text: &str) -> String {
    let action = game.parse_action(text).unwrap();
    match game.check(action) {
        Err(RulesError::IllegalMove { reason, .. }) => reason,
        other => panic!("{text}: expected IllegalMove, got {other:?}"),
    }
}

fn win(side: Side) -> Option<Outcome> {
    Some(Outcome {
        winner: Some(side),
        reason: Reason::OneGroup,
    })
}

// ---------------------------------------------------------------- reference counts

#[test]
fn perft_4x3_with_pie() {
    let g = Unane::start(&opts(4, 3));
    assert_eq!(g.perft(1), 17);
    assert_eq!(g.perft(2), 221);
    assert_eq!(g.perft(3), 2022);
}

#[test]
fn perft_8x7_with_pie() {
    let g = Unane::start(&Options::default());
    assert_eq!(g.perft(0), 1);
    assert_eq!(g.perft(1), 97);
    assert_eq!(g.perft(2), 8909);
    assert_eq!(g.perft(3), 765_446);
}

#[test]
fn generic_perft_agrees_with_the_override() {
    let g = Unane::start(&opts(4, 3));
    for d in 0..=4 {
        assert_eq!(stoa_protocol::perft::perft(&g, d), g.perft(d), "depth {d}");
    }
    let g = Unane::start(&Options::default());
    assert_eq!(stoa_protocol::perft::perft(&g, 2), 8909);
    let g = load(5, 4, "b..../..bw./..bww/.w..w b 8");
    for d in 0..=5 {
        assert_eq!(stoa_protocol::perft::perft(&g, d), g.perft(d), "depth {d}");
    }
}

/// The issue quotes 60,630,319 for 8x7 perft(4); that is the count *without* the swap
/// lines (the same start loaded at ply 2, where swap is never offered). With the pie rule,
/// as the guide (protocol/docs/games/unane.md) defines perft, the count is 61,386,953: the difference is exactly the
/// 756,634 sequences `b1 swap w2 b3`, one per no-pie sequence of length 3.
#[test]
fn perft_8x7_depth4_with_and_without_the_swap_lines() {
    let start = Unane::start(&Options::default());
    let no_pie = load(
        8,
        7,
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw b 2",
    );
    assert_eq!(no_pie.perft(3), 756_634);
    assert_eq!(start.perft(4), 61_386_953);
    assert_eq!(no_pie.perft(4), 60_630_319);
    assert_eq!(start.perft(4) - no_pie.perft(4), no_pie.perft(3));
}

#[test]
fn opening_action_count_on_every_allowed_size() {
    let mut sizes = 0;
    for w in 3..=16u32 {
        for h in 3..=16u32 {
            if w % 2 == 1 && h % 2 == 1 {
                assert!(Unane::validate_options(opts(w, h)).is_err());
                continue;
            }
            let g = Unane::start(&Unane::validate_options(opts(w, h)).unwrap());
            let listed = legal(&g);
            assert_eq!(g.perft(1), u64::from(2 * w * h - w - h), "{w}x{h}");
            assert_eq!(listed.len() as u64, g.perft(1));
            // Every opening action is a capture; no stone is free to be removed.
            assert!(listed.iter().all(|m| m.contains('x')));
            sizes += 1;
        }
    }
    assert_eq!(sizes, 14 * 14 - 7 * 7);
}

// ---------------------------------------------------------------- setup

#[test]
fn start_position_strings() {
    assert_eq!(
        Unane::start(&opts(5, 4)).position(),
        "bwbwb/wbwbw/bwbwb/wbwbw b 0"
    );
    assert_eq!(Unane::start(&opts(4, 3)).position(), "bwbw/wbwb/bwbw b 0");
    assert_eq!(
        Unane::start(&Options::default()).position(),
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw b 0"
    );
}

#[test]
fn top_left_is_black_and_checkerboard_on_every_size() {
    for (w, h) in [
        (3u32, 4u32),
        (4, 3),
        (6, 5),
        (16, 16),
        (16, 15),
        (15, 16),
        (3, 16),
    ] {
        let g = Unane::start(&opts(w, h));
        for f in 0..w as u8 {
            for r in 0..h as u8 {
                let want = if (u32::from(f) + (h - 1 - u32::from(r))) % 2 == 0 {
                    Side::First
                } else {
                    Side::Second
                };
                assert_eq!(g.stone(Cell::new(f, r).unwrap()), Some(want), "{w}x{h}");
            }
        }
        assert_eq!(
            g.stone(Cell::new(0, h as u8 - 1).unwrap()),
            Some(Side::First)
        );
        assert_eq!(g.to_act(), Some(Side::First));
        assert_eq!(g.outcome(), None);
        assert_eq!(
            g.stone_count(Side::First) + g.stone_count(Side::Second),
            w * h
        );
    }
}

// ---------------------------------------------------------------- conformance examples

#[test]
fn example_captures_of_b3() {
    let g = load(5, 4, ".w.../wbw../.ww../....b b 5");
    assert_eq!(legal(&g), ["-e1", "b3xa3", "b3xb2", "b3xb4", "b3xc3"]);
    // b3 may not capture c2 (diagonal); e1 has no capture but may be removed.
    assert!(illegal_reason(&g, "b3xc2").contains("not orthogonally adjacent"));
    assert!(g.check(g.parse_action("-e1").unwrap()).is_ok());
    assert!(illegal_reason(&g, "e1xe2").contains("e2 is empty"));
    assert!(illegal_reason(&g, "-b3").contains("touches the enemy stone"));
}

#[test]
fn example_removals() {
    let g = load(5, 4, "..bb./bwb../.bb../.w... b 5");
    assert_eq!(
        legal(&g),
        ["-c2", "-c4", "-d4", "a3xb3", "b2xb1", "b2xb3", "c3xb3"]
    );
    for blocked in ["-a3", "-c3", "-b2"] {
        assert!(
            illegal_reason(&g, blocked).contains("touches the enemy stone"),
            "{blocked}"
        );
    }
}

#[test]
fn example_win_by_removal_and_loading_does_not_end() {
    let mut g = load(5, 4, "b..../..bw./..bww/.w..w b 8");
    // Black has two groups (a4; c3+c2), white two (d3,d2,e2,e1; b1): loading ends nothing.
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::First));
    play(&mut g, "-a4");
    assert_eq!(g.outcome(), win(Side::First));
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
    assert_eq!(g.perft(1), 0);
    assert_eq!(g.perft(3), 0);
    assert_eq!(g.position(), "...../..bw./..bww/.w..w w 9");
    assert_eq!(g.check(Action::Swap), Err(RulesError::GameOver));
    assert_eq!(
        g.check(g.parse_action("b1xc1").unwrap()),
        Err(RulesError::GameOver)
    );
}

#[test]
fn loading_a_one_group_position_does_not_end_it() {
    // Both sides are single groups already: the game is on until someone acts.
    let g = load(4, 3, "bb../..../..ww b 4");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::First));
    assert_eq!(legal(&g), ["-a3", "-b3"]);
}

// ---------------------------------------------------------------- end of game

#[test]
fn mover_with_one_group_wins_even_if_opponent_has_one_group() {
    // Black a3xb3: black {b3}, white {d1}: both one group, the mover wins.
    let mut g = load(4, 3, "bw../..../...w b 3");
    play(&mut g, "a3xb3");
    assert_eq!(g.outcome(), win(Side::First));
    // White b3xa3: white {a3, a2, b2} one group, black {a1} one group: white wins.
    let mut g = load(4, 3, "bw../ww../b... w 7");
    play(&mut g, "b3xa3");
    assert_eq!(g.outcome(), win(Side::Second));
}

#[test]
fn mover_joining_into_one_group_by_capture_wins() {
    // Black a3xb3: black {b3, c3} one group; white {a1}, {c1} two groups.
    let mut g = load(4, 3, "bwb./..../w.w. b 4");
    play(&mut g, "a3xb3");
    assert_eq!(g.outcome(), win(Side::First));
    assert_eq!(g.to_act(), None);
}

#[test]
fn mover_reduced_to_one_group_by_removal_wins() {
    let mut g = load(4, 3, "b.b./..../w.w. b 2");
    play(&mut g, "-a3");
    assert_eq!(g.outcome(), win(Side::First));
}

#[test]
fn opponent_with_one_group_wins_at_once() {
    // Black a3xb3 leaves black {b3}, {d3} (two groups) and white {d1} alone: white wins.
    let mut g = load(4, 3, "bw.b/..../...w b 4");
    play(&mut g, "a3xb3");
    assert_eq!(g.outcome(), win(Side::Second));
    assert_eq!(g.to_act(), None);
    // White removes d1: white {b3}, {d3} two groups; black {a1} one group: black wins.
    let mut g = load(4, 3, ".w.w/..../b..w w 9");
    play(&mut g, "-d1");
    assert_eq!(g.outcome(), win(Side::First));
}

#[test]
fn capture_splitting_the_opponent_keeps_play_going() {
    // White {b3, b2, b1} is one group before; black b2? Black a2xb2 splits it into b3, b1.
    // Black: {a3}, {b2}? a3-b2 diagonal -> two groups; white two groups: play continues.
    let mut g = load(4, 3, "bw../bw../.w.b b 6");
    play(&mut g, "a2xb2");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.position(), "bw../.b../.w.b w 7");
    assert_eq!(g.group_count(Side::First), 3);
    assert_eq!(g.group_count(Side::Second), 2);
}

#[test]
fn play_continues_while_both_have_two_groups() {
    let mut g = load(4, 3, "b.b./...b/w.w. b 2");
    play(&mut g, "-d2");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.position(), "b.b./..../w.w. w 3");
    assert_eq!(legal(&g), ["-a1", "-c1"]);
}

#[test]
fn a_side_left_without_stones_loses_no_moves() {
    // Only reachable from a loaded position: white's last stone is captured while black
    // still has two groups. White would have no action at all.
    let mut g = load(4, 3, "bw.b/..../.... b 3");
    play(&mut g, "a3xb3");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::NoMoves
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
}

#[test]
fn game_from_start_ends_by_one_group() {
    for first in [true, false] {
        let mut g = Unane::start(&opts(4, 3));
        let mut stone_actions = 0;
        while g.outcome().is_none() {
            let mut actions = Vec::new();
            g.legal_actions(&mut actions);
            assert!(!actions.is_empty());
            let a = if first {
                actions[0]
            } else {
                actions[actions.len() - 1]
            };
            if !g.is_swap(a) {
                stone_actions += 1;
            }
            g.apply(a);
        }
        assert!(stone_actions <= 4 * 3 - 3);
        assert_eq!(g.outcome().unwrap().reason, Reason::OneGroup);
    }
}

// ---------------------------------------------------------------- swap

#[test]
fn swap_is_white_first_action_only() {
    let mut g = Unane::start(&opts(4, 3));
    assert!(!g.swap_available());
    assert!(g.check(Action::Swap).is_err());
    play(&mut g, "a3xb3");
    assert!(g.swap_available());
    assert!(legal(&g).contains(&"swap".to_string()));
    assert!(g.is_swap(Action::Swap));
    assert!(!g.is_swap(g.parse_action("-a1").unwrap()));
    let before = g.position();
    play(&mut g, "SWAP");
    // Board and colour to act unchanged, ply counts the swap.
    assert_eq!(g.position(), before.replace(" w 1", " w 2"));
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.outcome(), None);
    assert!(!g.swap_available());
    assert!(!legal(&g).contains(&"swap".to_string()));
    assert!(illegal_reason(&g, "swap").contains("white's first action"));
    play(&mut g, "d3xc3");
    assert_eq!(g.to_act(), Some(Side::First));
    assert!(!legal(&g).contains(&"swap".to_string()));
}

#[test]
fn swap_offered_exactly_at_ply_1_with_white_to_act() {
    let board = "bwbw/wbwb/bwbw";
    assert!(load(4, 3, &format!("{board} w 1")).swap_available());
    assert!(legal(&load(4, 3, &format!("{board} w 1"))).contains(&"swap".into()));
    assert!(!load(4, 3, &format!("{board} b 1")).swap_available());
    assert!(!load(4, 3, &format!("{board} w 3")).swap_available());
    assert!(!load(4, 3, &format!("{board} w 0")).swap_available());
    assert!(!load(4, 3, &format!("{board} w 2")).swap_available());
    // Not offered after white's first stone action either.
    let mut g = Unane::start(&opts(4, 3));
    play(&mut g, "a3xb3");
    play(&mut g, "a2xb2");
    assert!(!g.swap_available());
    play(&mut g, "b3xb2");
    assert!(!g.swap_available());
}

#[test]
fn swap_does_not_run_the_end_test() {
    // At ply 1 black is already one group (loaded): swap leaves the game on.
    let mut g = load(4, 3, "bb../w.w./.... w 1");
    play(&mut g, "swap");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.position(), "bb../w.w./.... w 2");
}

// ---------------------------------------------------------------- legality details

#[test]
fn specific_reasons_for_illegal_actions() {
    let g = load(4, 3, "bw../.b../w..w b 4");
    assert_eq!(
        illegal_reason(&g, "c2xc3"),
        "no stone of yours on c2: it is empty"
    );
    assert_eq!(
        illegal_reason(&g, "-b3"),
        "no stone of yours on b3: it holds a white stone"
    );
    assert_eq!(
        illegal_reason(&g, "a3xb2"),
        "b2 is not orthogonally adjacent to a3: a stone moves one step, no diagonals or slides"
    );
    assert_eq!(
        illegal_reason(&g, "b2xc2"),
        "c2 is empty: a stone only moves onto an enemy stone"
    );
    assert_eq!(
        illegal_reason(&g, "-a3"),
        "the stone on a3 cannot be removed: it touches the enemy stone on b3"
    );
    let g = load(4, 3, "bb../.w../w..w b 4");
    assert_eq!(illegal_reason(&g, "a3xb3"), "b3 holds your own stone");
    assert_eq!(legal(&g), ["-a3", "b3xb2"]);
}

#[test]
fn diagonal_enemies_and_friendly_neighbours_do_not_block_removal() {
    let g = load(4, 3, "bb../..w./.... b 4");
    // a3 touches b3 (friendly) and nothing else; b3 touches c2 only diagonally.
    assert_eq!(legal(&g), ["-a3", "-b3"]);
    let g = load(4, 3, "bb../..w./.... w 4");
    assert_eq!(legal(&g), ["-c2"]);
}

#[test]
fn edges_do_not_wrap_on_16_wide_boards() {
    // p1/a2 and p16 (top right)/a16: neighbours in index space, not on the board.
    let mut rows = vec![".".repeat(16); 16];
    rows[14] = format!("w{}", ".".repeat(15)); // rank 2
    rows[15] = format!("{}b", ".".repeat(15)); // rank 1
    rows[0] = format!("w{}b", ".".repeat(14)); // rank 16
    let g = load(16, 16, &format!("{} b 10", rows.join("/")));
    assert_eq!(legal(&g), ["-p1", "-p16"]);
    let g = load(16, 16, &format!("{} w 10", rows.join("/")));
    assert_eq!(legal(&g), ["-a16", "-a2"]);
    // Across the middle of the board (ranks 8 and 9) captures work both ways.
    let mut rows = vec![".".repeat(16); 16];
    rows[7] = format!("b{}", ".".repeat(15)); // rank 9
    rows[8] = format!("w{}", ".".repeat(15)); // rank 8
    let g = load(16, 16, &format!("{} b 10", rows.join("/")));
    assert_eq!(legal(&g), ["a9xa8"]);
    let g = load(16, 16, &format!("{} w 10", rows.join("/")));
    assert_eq!(legal(&g), ["a8xa9"]);
}

#[test]
fn check_accepts_exactly_the_listed_actions_on_a_small_board() {
    let g = load(4, 3, "bw.b/wbbw/..wb w 7");
    let listed = legal(&g);
    let mut accepted = Vec::new();
    for f1 in 0..5u8 {
        for r1 in 0..4u8 {
            let a = Cell::new(f1, r1).unwrap();
            let rm = Action::Remove(a);
            if g.check(rm).is_ok() {
                accepted.push(g.format_action(rm));
            }
            for f2 in 0..5u8 {
                for r2 in 0..4u8 {
                    let b = Cell::new(f2, r2).unwrap();
                    let cap = Action::Capture { from: a, to: b };
                    if g.check(cap).is_ok() {
                        accepted.push(g.format_action(cap));
                    }
                }
            }
        }
    }
    accepted.sort();
    assert_eq!(accepted, listed);
    assert_eq!(
        listed,
        ["a2xa3", "a2xb2", "b3xa3", "b3xb2", "c1xc2", "c1xd1", "d2xc2", "d2xd1", "d2xd3"]
    );
    assert!(g.check(Action::Swap).is_err());
}

// ---------------------------------------------------------------- notation

#[test]
fn notation_input_forms() {
    let g = Unane::start(&Options::default());
    let cap = Action::Capture {
        from: cell("b3"),
        to: cell("b4"),
    };
    for text in ["b3xb4", "b3-b4", "B3XB4", "B3-B4", "  b3xB4\t", "\nb3-b4 "] {
        assert_eq!(g.parse_action(text), Ok(cap), "{text:?}");
    }
    let rm = Action::Remove(cell("b3"));
    for text in ["-b3", "b3-b3", "-B3", " B3-b3 "] {
        assert_eq!(g.parse_action(text), Ok(rm), "{text:?}");
    }
    for text in ["swap", "SWAP", " Swap "] {
        assert_eq!(g.parse_action(text), Ok(Action::Swap), "{text:?}");
    }
    assert_eq!(g.format_action(cap), "b3xb4");
    assert_eq!(g.format_action(rm), "-b3");
    assert_eq!(g.format_action(Action::Swap), "swap");
    // Two-digit ranks on big boards.
    let big = Unane::start(&opts(16, 16));
    let a = big.parse_action("P16xP15").unwrap();
    assert_eq!(big.format_action(a), "p16xp15");
    assert_eq!(
        big.parse_action("-p16").unwrap(),
        Action::Remove(cell("p16"))
    );
}

#[test]
fn notation_rejects_malformed_text() {
    let g = Unane::start(&Options::default());
    for text in [
        "", " ", "b3", "b3xb4x", "b3 xb4", "b3xb", "xb4", "b3xb3", "b0xb1", "b03xb4", "-", "--b3",
        "-b3x", "b3+b4", "swapp", "sw ap", "i1xh1", "a8xa7", "a1xa0", "-q1", "b3:b4", "é3xb4",
        "b3xb4é", "3bx4b", "b123xb1", "-b3-b3",
    ] {
        match g.parse_action(text) {
            Err(RulesError::BadNotation { text: t, .. }) => assert_eq!(t, text),
            other => panic!("{text:?}: expected BadNotation, got {other:?}"),
        }
    }
    // Off-board cells name the board.
    let e = g.parse_action("i1xh1").unwrap_err().to_string();
    assert!(e.contains("i1 is off the 8x7 board"), "{e}");
}

#[test]
fn well_formed_but_illegal_text_parses() {
    let g = Unane::start(&Options::default());
    // Not adjacent, not legal, but notation: parse succeeds, check refuses.
    let a = g.parse_action("a1xc3").unwrap();
    assert!(matches!(g.check(a), Err(RulesError::IllegalMove { .. })));
    assert!(matches!(
        g.check(g.parse_action("swap").unwrap()),
        Err(RulesError::IllegalMove { .. })
    ));
}

// ---------------------------------------------------------------- options

#[test]
fn options_defaults_and_normalisation() {
    let k = kind("unane").unwrap();
    assert_eq!(
        k.validate_options(&json!(null)).unwrap(),
        json!({"width": 8, "height": 7})
    );
    assert_eq!(
        k.validate_options(&json!({})).unwrap(),
        json!({"width": 8, "height": 7})
    );
    assert_eq!(
        k.validate_options(&json!({"width": 6})).unwrap(),
        json!({"width": 6, "height": 7})
    );
    assert_eq!(
        k.validate_options(&json!({"height": 5, "width": 16}))
            .unwrap(),
        json!({"width": 16, "height": 5})
    );
    assert_eq!(k.side_names, ["black", "white"]);
    assert_eq!(Options::default(), opts(8, 7));
}

#[test]
fn options_errors_name_the_field_and_range() {
    let k = kind("unane").unwrap();
    let err = |v: serde_json::Value| match k.validate_options(&v) {
        Err(RulesError::InvalidOptions(m)) => m,
        other => panic!("{v}: expected InvalidOptions, got {other:?}"),
    };
    for (v, field) in [
        (json!({"width": 2}), "width"),
        (json!({"width": 17}), "width"),
        (json!({"height": 0}), "height"),
        (json!({"height": -4}), "height"),
        (json!({"width": 1e3}), "width"),
        (json!({"width": "8"}), "width"),
        (json!({"height": null}), "height"),
        (json!({"height": 99_999_999_999u64}), "height"),
        (json!({"height": -99_999_999_999i64}), "height"),
    ] {
        let m = err(v.clone());
        assert!(m.contains(field) && m.contains("3..=16"), "{v}: {m}");
    }
    let m = err(json!({"width": 5, "height": 7}));
    assert!(m.contains("even") && m.contains("5x7"), "{m}");
    let m = err(json!({"width": 3}));
    assert!(m.contains("even") && m.contains("3x7"), "{m}");
    let m = err(json!({"depth": 3}));
    assert!(m.contains("unknown field `depth`"), "{m}");
    let m = err(json!([8, 7]));
    assert!(m.contains("object"), "{m}");
    assert!(Unane::validate_options(opts(3, 3)).is_err());
    assert!(Unane::validate_options(opts(3, 4)).is_ok());
    assert!(Unane::validate_options(opts(16, 15)).is_ok());
    assert!(Unane::validate_options(opts(16, 17)).is_err());
}

// ---------------------------------------------------------------- position strings

#[test]
fn position_round_trips() {
    for p in [
        "bwbwb/wbwbw/bwbwb/wbwbw b 0",
        ".w.../wbw../.ww../....b b 5",
        "..bb./bwb../.bb../.w... b 5",
        "b..../..bw./..bww/.w..w b 8",
        "bwbwb/wbwbw/bwbwb/wbwbw w 4294967295",
        "...../...../...../....w w 1",
    ] {
        assert_eq!(load(5, 4, p).position(), p);
    }
}

#[test]
fn position_errors_are_specific() {
    let o = opts(5, 4);
    let err = |p: &str| match Unane::from_position(&o, p) {
        Err(RulesError::InvalidPosition(m)) => m,
        other => panic!("{p:?}: expected InvalidPosition, got {other:?}"),
    };
    assert!(err("").contains("field"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b").contains("field"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw  b 0").contains("field"));
    // Surrounding whitespace is ignored, as for notation.
    for p in [
        " bwbwb/wbwbw/bwbwb/wbwbw b 0",
        "bwbwb/wbwbw/bwbwb/wbwbw b 0 \n",
    ] {
        assert_eq!(load(5, 4, p).position(), "bwbwb/wbwbw/bwbwb/wbwbw b 0");
    }
    assert!(err("bwbwb/wbwbw/bwbwb b 0").contains("4 ranks"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw/bwbwb b 0").contains("4 ranks"));
    assert!(err("bwbw/wbwbw/bwbwb/wbwbw b 0").contains("rank 4"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbwb b 0").contains("rank 1"));
    assert!(err("bwbwb/wbxbw/bwbwb/wbwbw b 0").contains("'x' at file c"));
    assert!(err("bwbwB/wbwbw/bwbwb/wbwbw b 0").contains("'B'"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw x 0").contains("'b' or 'w'"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw B 0").contains("'b' or 'w'"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b -1").contains("ply"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b 01").contains("ply"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b +1").contains("ply"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b 4294967296").contains("ply"));
    assert!(err("bwbwb/wbwbw/bwbwb/wbwbw b x").contains("ply"));
    assert!(err("bwbwé/wbwbw/bwbwb/wbwbw b 0").contains("rank 4"));
    assert!(err("bwbé/wbwbw/bwbwb/wbwbw b 0").contains("rank 4"));
    assert!(err("wwwww/...../...../..... b 0").contains("black is to act but has no stones"));
    // Options are validated here too.
    assert!(matches!(
        Unane::from_position(&opts(5, 5), "bwbwb/wbwbw/bwbwb/wbwbw/bwbwb b 0"),
        Err(RulesError::InvalidOptions(_))
    ));
}

// ---------------------------------------------------------------- view and registry

#[test]
fn view_shape() {
    let mut g = Unane::start(&opts(4, 3));
    play(&mut g, "a3xb3");
    let v = g.view();
    let geo = g.geometry();
    assert_eq!(geo["width"], 4);
    assert_eq!(geo["height"], 3);
    assert_eq!(
        geo["names"],
        json!([
            ["a3", "b3", "c3", "d3"],
            ["a2", "b2", "c2", "d2"],
            ["a1", "b1", "c1", "d1"]
        ])
    );
    assert_eq!(
        v["rows"],
        json!([
            [null, "black", "black", "white"],
            ["white", "black", "white", "black"],
            ["black", "white", "black", "white"]
        ])
    );
    assert_eq!(v["stones"], json!({"black": 6, "white": 5}));
    assert_eq!(v["groups"], json!({"black": 4, "white": 5}));
    assert_eq!(v["swap_available"], true);
    // The board once (no second map of cells), no side to act or ply (the document's
    // `to_act` and position have them), no static size (the geometry has it).
    assert_eq!(v.as_object().unwrap().len(), 4);
    let mut ended = load(5, 4, "b..../..bw./..bww/.w..w b 8");
    play(&mut ended, "-a4");
    assert_eq!(ended.to_act(), None);
    assert_eq!(ended.view()["swap_available"], false);
}

#[test]
fn through_the_registry() {
    let k = kind("unane").unwrap();
    let mut g = k.start(&json!({"width": 4, "height": 3})).unwrap();
    assert_eq!(g.position(), "bwbw/wbwb/bwbw b 0");
    assert_eq!(g.options_json(), json!({"width": 4, "height": 3}));
    assert_eq!(g.perft(3), 2022);
    let played = g.play(" A3-B3 ").unwrap();
    assert_eq!(played.notation, "a3xb3");
    assert_eq!(played.side, Side::First);
    assert!(!played.swap);
    let played = g.play("swap").unwrap();
    assert!(played.swap);
    assert_eq!(played.side, Side::Second);
    assert_eq!(g.to_act(), Some(Side::Second));
    assert!(g.play("a1xb1").is_err());
    assert_eq!(g.position(), ".bbw/wbwb/bwbw w 2");
    let divide = g.perft_divide(2);
    assert_eq!(divide.iter().map(|(_, n)| n).sum::<u64>(), g.perft(2));
    assert!(k
        .from_position(&json!({"width": 4, "height": 3}), "bwbw/wbwb/bwbw b 0 x")
        .is_err());
}
