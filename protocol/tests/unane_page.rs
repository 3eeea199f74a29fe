//! The Ūnane engine against its rules page, sentence by sentence: points the
//! existing tests leave open, checked with exact sets, strings and errors, mostly through
//! the registry (what a server or an outside checker drives).

use serde_json::json;
use stoa_protocol::unane::{Action, Options, Unane};
use stoa_protocol::{kind, AnyGame, Game, Outcome, Reason, RulesError, Side};

fn opts(width: u32, height: u32) -> Options {
    Options { width, height }
}

fn load(width: u32, height: u32, position: &str) -> Unane {
    Unane::from_position(&opts(width, height), position)
        .unwrap_or_else(|e| panic!("{position}: {e}"))
}

fn legal(g: &Unane) -> Vec<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    let mut out: Vec<String> = v.iter().map(|a| g.format_action(*a)).collect();
    out.sort();
    out
}

fn play(g: &mut Unane, text: &str) {
    let a = g
        .parse_action(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    g.check(a).unwrap_or_else(|e| panic!("{text}: {e}"));
    g.apply(a);
}

/// The game is over, won by `winner` for being one group.
fn assert_one_group_win(g: &Unane, winner: Side) {
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(winner),
            reason: Reason::OneGroup
        })
    );
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    out.sort();
    out
}

fn registry(options: serde_json::Value, position: &str) -> Box<dyn AnyGame> {
    kind("unane")
        .unwrap()
        .from_position(&options, position)
        .unwrap_or_else(|e| panic!("{position}: {e}"))
}

// ------------------------------------------------------------------ options

#[test]
fn lobby_sizes_and_any_valid_rectangle_are_accepted() {
    let k = kind("unane").unwrap();
    for (w, h) in [
        (8, 7),
        (6, 5),
        (10, 9),
        (12, 11),
        (14, 13),
        (16, 15),
        (3, 4),
        (4, 3),
        (16, 16),
        (4, 4),
        (3, 16),
    ] {
        assert_eq!(
            k.validate_options(&json!({"width": w, "height": h}))
                .unwrap(),
            json!({"width": w, "height": h})
        );
        // Every start is a full checkerboard with the top-left cell black.
        let g = Unane::start(&opts(w, h));
        assert_eq!(
            g.stone_count(Side::First) + g.stone_count(Side::Second),
            w * h
        );
        let first = g.position();
        assert!(first.starts_with('b'), "{first}");
        // Opening action count 2WH - W - H (no swap at ply 0).
        assert_eq!(g.perft(1), u64::from(2 * w * h - w - h));
    }
    for (w, h) in [(3, 3), (5, 5), (15, 15), (7, 9), (3, 5)] {
        let e = k
            .validate_options(&json!({"width": w, "height": h}))
            .unwrap_err();
        assert!(
            matches!(e, RulesError::InvalidOptions(ref m) if m.contains("even")),
            "{w}x{h}: {e}"
        );
    }
    for (w, h) in [(2, 4), (17, 4), (4, 2), (4, 17), (0, 0)] {
        assert!(matches!(
            k.validate_options(&json!({"width": w, "height": h})),
            Err(RulesError::InvalidOptions(_))
        ));
    }
}

// ------------------------------------------------------------------ setup

#[test]
fn start_5x4_string_and_colour_formula() {
    let g = Unane::start(&opts(5, 4));
    assert_eq!(g.position(), "bwbwb/wbwbw/bwbwb/wbwbw b 0");
    // 4x5 (width 4, height 5): a5 black, a1 black (0 + 4 even).
    let g = Unane::start(&opts(4, 5));
    assert_eq!(g.position(), "bwbw/wbwb/bwbw/wbwb/bwbw b 0");
    // 8x7 default: a7 black, a1: (0 + 6) even -> black; h1: (7 + 6) odd -> white.
    let g = Unane::start(&Options::default());
    assert_eq!(
        g.position(),
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw b 0"
    );
    assert_eq!(g.to_act(), Some(Side::First));
}

// ------------------------------------------------------------------ conformance examples, exact

#[test]
fn example_one_exact_sets() {
    let g = load(5, 4, ".w.../wbw../.ww../....b b 5");
    let all = legal(&g);
    let b3: Vec<&String> = all.iter().filter(|m| m.starts_with("b3")).collect();
    assert_eq!(b3, ["b3xa3", "b3xb2", "b3xb4", "b3xc3"]);
    assert!(!all.iter().any(|m| m.starts_with("e1x")));
    assert!(all.contains(&"-e1".to_string()));
    // b3 touches enemies, so it cannot be removed; the whole list is exactly this.
    assert_eq!(all, sorted(&["b3xa3", "b3xb2", "b3xb4", "b3xc3", "-e1"]));
}

#[test]
fn example_two_exact_removals() {
    let g = load(5, 4, "..bb./bwb../.bb../.w... b 5");
    assert_eq!(
        legal(&g),
        sorted(&["-c4", "-d4", "-c2", "a3xb3", "c3xb3", "b2xb3", "b2xb1"])
    );
    for text in ["-a3", "-c3", "-b2", "a3-a3"] {
        let a = g.parse_action(text).unwrap();
        assert!(
            matches!(g.check(a), Err(RulesError::IllegalMove { .. })),
            "{text}"
        );
    }
}

#[test]
fn example_three_result_string_and_reason() {
    let mut g = load(5, 4, "b..../..bw./..bww/.w..w b 8");
    assert_eq!(g.outcome(), None);
    play(&mut g, "-a4");
    assert_one_group_win(&g, Side::First);
    assert_eq!(g.to_act(), None);
    assert_eq!(g.position(), "...../..bw./..bww/.w..w w 9");
    assert!(legal(&g).is_empty());
    assert_eq!(g.check(Action::Swap), Err(RulesError::GameOver));
    assert_eq!(Reason::OneGroup.as_str(), "one_group");
}

// ------------------------------------------------------------------ end of game

#[test]
fn opponent_one_group_wins_when_mover_has_several() {
    // (Removing a3 from "b.b./..../.ww. b 3" leaves both sides one group: the mover wins;
    // see `both_one_group_mover_wins`.)
    let mut g = load(4, 3, "b.b./...b/.ww. b 3");
    play(&mut g, "-d2");
    // black a3, c3: two groups; white b1,c1: one group -> white wins at once.
    assert_one_group_win(&g, Side::Second);
}

#[test]
fn both_one_group_mover_wins() {
    // Black a3, c3 (two groups); white b1, c1 (one group). Black removes a3: black is one
    // group and so is white: the mover wins.
    let mut g = load(4, 3, "b.b./..../.ww. b 3");
    play(&mut g, "-a3");
    assert_one_group_win(&g, Side::First);
}

#[test]
fn capture_that_splits_nobody_continues_and_capture_into_one_group_wins() {
    // Black a3, c3, c1; white b3, d1 (two groups). Black c3xb3: black a3-b3 group + c1
    // -> two groups; white d1 alone -> one group -> white wins at once.
    let mut g = load(4, 3, "bwb./..../..bw b 3");
    play(&mut g, "c3xb3");
    assert_eq!(g.position(), "bb../..../..bw w 4");
    assert_one_group_win(&g, Side::Second);
}

// ------------------------------------------------------------------ swap

#[test]
fn swap_offered_exactly_once_at_ply_one_for_white() {
    let mut g = Unane::start(&opts(4, 3));
    assert!(!legal(&g).contains(&"swap".to_string()));
    assert_eq!(legal(&g).len(), 17);
    play(&mut g, "a3xb3");
    assert_eq!(g.position(), ".bbw/wbwb/bwbw w 1");
    assert!(legal(&g).contains(&"swap".to_string()));
    let before = g.position();
    let stone_actions: Vec<String> = legal(&g).into_iter().filter(|m| m != "swap").collect();
    assert!(g.is_swap(Action::Swap));
    play(&mut g, "SWAP");
    // Board and colour to act unchanged, ply counts the swap, no end test, swap gone.
    assert_eq!(g.position(), ".bbw/wbwb/bwbw w 2");
    assert_eq!(
        &before[..before.len() - 2],
        &g.position()[..g.position().len() - 2]
    );
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.outcome(), None);
    assert_eq!(legal(&g), stone_actions);
    assert!(matches!(
        g.check(Action::Swap),
        Err(RulesError::IllegalMove { .. })
    ));
}

#[test]
fn swap_depends_only_on_ply_and_side_in_loaded_positions() {
    for (p, offered) in [
        ("bwbwb/wbwbw/bwbwb/wbwbw w 1", true),
        ("bwbwb/wbwbw/bwbwb/wbwbw b 1", false),
        ("bwbwb/wbwbw/bwbwb/wbwbw w 0", false),
        ("bwbwb/wbwbw/bwbwb/wbwbw w 3", false),
        ("b..../..bw./..bww/.w..w w 1", true),
    ] {
        let g = load(5, 4, p);
        assert_eq!(legal(&g).contains(&"swap".to_string()), offered, "{p}");
    }
}

#[test]
fn swap_through_the_registry_is_flagged_and_keeps_white_to_act() {
    let mut g = registry(json!({"width": 4, "height": 3}), "bwbw/wbwb/bwbw b 0");
    let played = g.play("a3xb3").unwrap();
    assert_eq!(
        (played.notation.as_str(), played.side, played.swap),
        ("a3xb3", Side::First, false)
    );
    let played = g.play(" swap ").unwrap();
    assert_eq!(
        (played.notation.as_str(), played.side, played.swap),
        ("swap", Side::Second, true)
    );
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.position(), ".bbw/wbwb/bwbw w 2");
    assert!(matches!(
        g.play("swap"),
        Err(RulesError::IllegalMove { .. })
    ));
}

// ------------------------------------------------------------------ notation

#[test]
fn notation_canonical_forms_and_rejections() {
    let g = Unane::start(&opts(16, 16));
    for (text, canon) in [
        ("b3xb4", "b3xb4"),
        ("B3-B4", "b3xb4"),
        (" b3X b4", ""),
        ("-B3", "-b3"),
        ("b3-b3", "-b3"),
        ("\tP16xP15 ", "p16xp15"),
        ("p16xo16", "p16xo16"),
        ("a10-a9", "a10xa9"),
        ("-a16", "-a16"),
        ("SWAP", "swap"),
    ] {
        match g.parse_action(text) {
            Ok(a) => assert_eq!(g.format_action(a), canon, "{text:?}"),
            Err(RulesError::BadNotation { .. }) => assert_eq!(canon, "", "{text:?}"),
            Err(e) => panic!("{text:?}: {e}"),
        }
    }
    for text in [
        "q1xp1", "a17xa16", "-a17", "-q1", "a0xa1", "b3xb3", "b3x-b4", "b3xxb4", "x", "b-3",
    ] {
        assert!(
            matches!(g.parse_action(text), Err(RulesError::BadNotation { .. })),
            "{text:?}"
        );
    }
}

// ------------------------------------------------------------------ positions

#[test]
fn positions_load_through_the_registry_with_default_options() {
    // The size comes from the string when options are left at their defaults.
    let g = registry(json!(null), "bwbwb/wbwbw/bwbwb/wbwbw b 0");
    assert_eq!(g.position(), "bwbwb/wbwbw/bwbwb/wbwbw b 0");
    assert_eq!(g.perft(1), 31u64);
    let g = registry(json!({}), "bwbw/wbwb/bwbw b 0");
    assert_eq!(g.perft(3), 2022);
    // Explicit, matching options are accepted; mismatching ones are not.
    registry(
        json!({"width": 5, "height": 4}),
        "bwbwb/wbwbw/bwbwb/wbwbw b 0",
    );
    assert!(matches!(
        kind("unane").unwrap().from_position(
            &json!({"width": 6, "height": 4}),
            "bwbwb/wbwbw/bwbwb/wbwbw b 0"
        ),
        Err(RulesError::InvalidPosition(_))
    ));
}

#[test]
fn loading_never_ends_a_game_and_ply_is_not_checked_against_the_board() {
    // One group each, an absurd ply: loads, game on, legal actions listed.
    let g = load(5, 4, "bb.../...../...../...ww w 77");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(legal(&g), sorted(&["-d1", "-e1"]));
}

#[test]
fn positions_reject_malformed_strings() {
    for p in [
        "bwbwb/wbwbw/bwbwb/wbwbw b",
        "bwbwb/wbwbw/bwbwb/wbwbw b 0 0",
        "bwbwb/wbwbw/bwbwb/wbwbw  b 0",
        "bwbwb/wbwbw/bwbwb/wbwbw b 00",
        "bwbwb/wbwbw/bwbwb/wbwbw b -0",
        "bwbwb/wbwbw/bwbwb/wbwbw W 0",
        "bwbwb/wbwbw/bwbwb/wbwbw b 1.0",
        "bwbwb/wbwbw/bwbwb/wbwbw/ b 0",
        "bwbwb,wbwbw,bwbwb,wbwbw b 0",
        "bwbwb/wbwbw/bwbwb/wbwbW b 0",
        "bwbwb/wbwbw/bwbwb/wbwb  b 0",
        "bwbwb/wbwbw/bwbwb/wbw0w b 0",
    ] {
        assert!(
            matches!(
                Unane::from_position(&opts(5, 4), p),
                Err(RulesError::InvalidPosition(_))
            ),
            "{p:?}: {:?}",
            Unane::from_position(&opts(5, 4), p).map(|g| g.position())
        );
    }
}

// ------------------------------------------------------------------ perft

#[test]
fn perft_through_the_registry() {
    let g = kind("unane")
        .unwrap()
        .start(&json!({"width": 4, "height": 3}))
        .unwrap();
    assert_eq!([g.perft(1), g.perft(2), g.perft(3)], [17, 221, 2022]);
    let g = kind("unane").unwrap().start(&json!(null)).unwrap();
    assert_eq!([g.perft(1), g.perft(2)], [97, 8909]);
    // divide at depth 1 lists each opening action once, canonical.
    let d = g.perft_divide(1);
    assert_eq!(d.len(), 97);
    assert!(d.iter().all(|(m, n)| *n == 1 && m == &m.to_lowercase()));
}
