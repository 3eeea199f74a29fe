//! The Akunur engine against its rules page, sentence by sentence: geometry,
//! placement, steps into guarded cells, the Still Point exit, capture and echo (including
//! removal of either colour and two captured stones trading places), tokens, scores and the
//! bonus placement, the end checks in order, passes, repetition, notation and positions.

use serde_json::json;
use stoa_protocol::akunur::{Akunur, Options};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError, Side};

const START: &str =
    "...../....../......./......../........./......../......./....../..... l 0,0 111111 0,0 0 0";

fn xy(name: &str) -> (i32, i32) {
    let b = name.as_bytes();
    ((b[0] - b'a') as i32, (b[1] - b'1') as i32)
}

/// The rows field from `(cell, 'L' | 'D')` pairs.
fn rows(cells: &[(&str, char)]) -> String {
    let mut out = Vec::new();
    for y in (0..9i32).rev() {
        let mut row = String::new();
        for x in 0..9 {
            if (x - y).abs() > 4 {
                continue;
            }
            let c = cells
                .iter()
                .find(|(n, _)| xy(n) == (x, y))
                .map_or('.', |(_, c)| *c);
            row.push(c);
        }
        out.push(row);
    }
    out.join("/")
}

fn pos(cells: &[(&str, char)], rest: &str) -> String {
    format!("{} {rest}", rows(cells))
}

fn load(cells: &[(&str, char)], rest: &str) -> Akunur {
    load_with(3, cells, rest)
}

fn load_with(corners: u8, cells: &[(&str, char)], rest: &str) -> Akunur {
    let p = pos(cells, rest);
    Akunur::from_position(
        &Options {
            corners_to_win: corners,
        },
        &p,
    )
    .unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn legal(g: &Akunur) -> Vec<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    let mut out: Vec<String> = v.iter().map(|&a| g.format_action(a)).collect();
    out.sort();
    out
}

fn play(g: &mut Akunur, text: &str) {
    let a = g
        .parse_action(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    g.check(a)
        .unwrap_or_else(|e| panic!("{text}: {e} in {}", g.position()));
    g.apply(a);
}

fn is_illegal(g: &Akunur, text: &str) -> bool {
    matches!(
        g.check(g.parse_action(text).unwrap()),
        Err(RulesError::IllegalMove { .. })
    )
}

// ------------------------------------------------------------------ geometry and placement

#[test]
fn placement_cells_are_rings_two_to_four_minus_corners() {
    let g = Akunur::start(&Options::default());
    let l = legal(&g);
    assert_eq!(l.len(), 48);
    for bad in [
        "e5", "f6", "d4", "e4", "f5", "d5", "e6", "i9", "a1", "e1", "i5", "e9", "a5",
    ] {
        assert!(!l.contains(&bad.to_string()), "{bad}");
        assert!(is_illegal(&g, bad), "{bad}");
    }
    for good in ["g7", "c3", "a2", "b1", "i8", "h9", "e7", "c5"] {
        assert!(l.contains(&good.to_string()), "{good}");
    }
    assert_eq!(g.perft(1), 48);
    assert_eq!(g.perft(2), 2256);
    assert_eq!(g.position(), START);
}

#[test]
fn placement_phase_alternates_and_ends_after_24_with_light_to_move() {
    let mut g = Akunur::start(&Options::default());
    let cells = [
        "a2", "a3", "a4", "b1", "b5", "b6", "c1", "c7", "d1", "d8", "e9", "f9", "g9", "h9", "i8",
        "i7", "i6", "h4", "g3", "f2", "e2", "c3", "g7", "c5",
    ];
    // e9 is a corner: replace it by another placement cell.
    let cells: Vec<&str> = cells
        .iter()
        .map(|&c| if c == "e9" { "d2" } else { c })
        .collect();
    for (n, c) in cells.iter().enumerate() {
        assert!(g.in_placement_phase());
        assert_eq!(
            g.to_act(),
            Some(if n % 2 == 0 {
                Side::First
            } else {
                Side::Second
            })
        );
        assert!(is_illegal(&g, "pass"));
        play(&mut g, c);
    }
    assert!(!g.in_placement_phase());
    assert_eq!(g.to_act(), Some(Side::First));
    assert_eq!(g.placed(Side::First), 12);
    assert_eq!(g.placed(Side::Second), 12);
    assert!(g.position().contains(" l 12,12 111111 0,0 0 0"));
    // No more placements now.
    assert!(is_illegal(&g, "e7"));
    assert!(!legal(&g).iter().any(|m| !m.contains('-') && m != "pass"));
}

// ------------------------------------------------------------------ steps and guarded cells

#[test]
fn corner_entry_needs_two_other_own_neighbours() {
    // i9's neighbours: h9, i8, h8.
    let g = load(
        &[("h8", 'L'), ("h9", 'L'), ("i8", 'L'), ("c3", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(legal(&g).contains(&"h8-i9".to_string()));
    let g = load(
        &[("h8", 'L'), ("h9", 'L'), ("c3", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(!legal(&g).contains(&"h8-i9".to_string()));
    assert!(is_illegal(&g, "h8-i9"));
    // h9 entering i9: other neighbours i8 and h8 must be light.
    let g = load(
        &[("h8", 'L'), ("h9", 'L'), ("i8", 'D'), ("c3", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(!legal(&g).contains(&"h9-i9".to_string()));
}

#[test]
fn still_point_entry_needs_two_other_own_neighbours_and_exit_goes_anywhere() {
    // e5's neighbours: d4 e4 d5 f5 e6 f6.
    let g = load(
        &[("e4", 'L'), ("d4", 'L'), ("c3", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(!legal(&g).contains(&"e4-e5".to_string())); // only d4 besides the origin
    let g = load(
        &[("e4", 'L'), ("d4", 'L'), ("f6", 'L'), ("c3", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(legal(&g).contains(&"e4-e5".to_string()));
    // A stone on e5 exits to every empty non-corner cell: 61 - 6 corners - occupied.
    let g = load(
        &[("e5", 'L'), ("c3", 'D'), ("a1", 'L')],
        "l 12,12 111111 0,0 0 0",
    );
    let l = legal(&g);
    let exits: Vec<&String> = l.iter().filter(|m| m.starts_with("e5-")).collect();
    assert_eq!(exits.len(), 61 - 6 - 2);
    assert!(!l
        .iter()
        .any(|m| m.starts_with("e5-") && ["a1", "e1", "i5", "i9", "e9", "a5"].contains(&&m[3..])));
    // The corner stone never moves; so the full list is the exits.
    assert_eq!(l.len(), exits.len());
}

#[test]
fn corner_stones_never_move_and_pass_only_without_other_actions() {
    let mut g = load(&[("a1", 'L'), ("i9", 'D')], "l 12,12 111111 0,0 0 0");
    assert_eq!(legal(&g), ["pass"]);
    assert!(is_illegal(&g, "a1-b1"));
    play(&mut g, "PASS");
    assert!(g.position().ends_with(" d 12,12 111111 0,0 0 1"));
    assert_eq!(g.outcome(), None);
    play(&mut g, "pass");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: Reason::Passes
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
    assert!(g.position().ends_with(" 2"));
}

#[test]
fn a_move_between_passes_resets_the_count() {
    let mut g = load(&[("a1", 'L'), ("c3", 'D')], "l 12,12 111111 0,0 0 0");
    play(&mut g, "pass");
    play(&mut g, "c3-c4");
    assert!(g.position().ends_with(" 0"), "{}", g.position());
    play(&mut g, "pass");
    assert_eq!(g.outcome(), None);
    assert!(g.position().ends_with(" d 12,12 111111 0,0 0 1"));
}

// ------------------------------------------------------------------ capture and echo

#[test]
fn page_example_capture_echoes_to_d3() {
    let p = ".L.../....../..LDL../......../........./......../......./....../..... l 12,12 111111 0,0 0 0";
    let mut g = Akunur::from_position(&Options::default(), p).unwrap();
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(
            &[("e7", 'L'), ("g7", 'L'), ("f8", 'L'), ("d3", 'D')],
            "d 12,12 111111 0,0 0 0"
        )
    );
}

#[test]
fn echo_removes_a_stone_of_either_colour_on_the_echo_cell() {
    // Light captures dark c3 by stepping e3-d3 (c3's neighbours b3, c2, d3 light).
    // Echo of c3 is g7.
    for (occupant, survivor) in [('L', 'D'), ('D', 'D')] {
        let mut g = load(
            &[
                ("b3", 'L'),
                ("c2", 'L'),
                ("e3", 'L'),
                ("c3", 'D'),
                ("g7", occupant),
                ("i9", 'D'),
            ],
            "l 13,13 111111 0,0 0 0",
        );
        play(&mut g, "e3-d3");
        assert_eq!(
            g.position(),
            pos(
                &[
                    ("b3", 'L'),
                    ("c2", 'L'),
                    ("d3", 'L'),
                    ("g7", survivor),
                    ("i9", 'D')
                ],
                "d 13,13 111111 0,0 0 0"
            ),
            "echo cell held {occupant}"
        );
    }
}

#[test]
fn two_captured_echo_partners_trade_places_without_removing_each_other() {
    // Light steps e4-e5 (entry: e6, f6, d4 light). Dark d5 (neighbours e5, e6, d4 light) and
    // dark f5 (neighbours e5, f6, g5 light) are both captured; they are each other's echo.
    let mut g = load(
        &[
            ("e4", 'L'),
            ("e6", 'L'),
            ("f6", 'L'),
            ("d4", 'L'),
            ("g5", 'L'),
            ("d5", 'D'),
            ("f5", 'D'),
            ("a1", 'D'),
        ],
        "l 13,13 111111 0,0 0 0",
    );
    play(&mut g, "e4-e5");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("e5", 'L'),
                ("e6", 'L'),
                ("f6", 'L'),
                ("d4", 'L'),
                ("g5", 'L'),
                ("d5", 'D'),
                ("f5", 'D'),
                ("a1", 'D'),
            ],
            "d 13,13 111111 0,0 0 0"
        )
    );
}

#[test]
fn echoed_stones_do_not_capture_and_the_mover_is_never_captured() {
    // Light steps next to three dark stones: the mover is not captured by its own move.
    let mut g = load(
        &[
            ("c3", 'L'),
            ("d5", 'D'),
            ("c5", 'D'),
            ("b3", 'D'),
            ("i9", 'D'),
        ],
        "l 13,13 111111 0,0 0 0",
    );
    play(&mut g, "c3-c4"); // c4's neighbours d5? (3,4): c4=(2,3) -> d5 is (3,4): adjacent
    assert!(g.position().starts_with(&rows(&[
        ("c4", 'L'),
        ("d5", 'D'),
        ("c5", 'D'),
        ("b3", 'D'),
        ("i9", 'D')
    ])));
}

#[test]
fn still_point_stone_captured_leaves_the_game() {
    // Dark on e5; light on d4 and e6 (neighbours of e5); light steps f7-f6 to capture.
    let mut g = load(
        &[
            ("e5", 'D'),
            ("d4", 'L'),
            ("e6", 'L'),
            ("f7", 'L'),
            ("a1", 'D'),
        ],
        "l 13,13 111111 0,0 0 0",
    );
    play(&mut g, "f7-f6");
    assert_eq!(
        g.position(),
        pos(
            &[("d4", 'L'), ("e6", 'L'), ("f6", 'L'), ("a1", 'D')],
            "d 13,13 111111 0,0 0 0"
        )
    );
}

#[test]
fn still_point_exit_captures_at_its_destination() {
    // Light exits e5 to h3? Use c3: dark c2 with light b1? c2's neighbours: b2, d2, c3, c1, d3, b1.
    let mut g = load(
        &[
            ("e5", 'L'),
            ("b2", 'L'),
            ("d2", 'L'),
            ("c2", 'D'),
            ("i9", 'D'),
        ],
        "l 13,13 111111 0,0 0 0",
    );
    play(&mut g, "e5-c3");
    // c2 echoes to g8.
    assert_eq!(
        g.position(),
        pos(
            &[
                ("c3", 'L'),
                ("b2", 'L'),
                ("d2", 'L'),
                ("g8", 'D'),
                ("i9", 'D')
            ],
            "d 13,13 111111 0,0 0 0"
        )
    );
}

// ------------------------------------------------------------------ tokens, scores, bonus

fn corner_capture_position(light_placed: u8) -> Akunur {
    // Dark on corner a1 (neighbours b1, a2, b2). Light on b1, a2; light steps c2-b2.
    load(
        &[
            ("a1", 'D'),
            ("b1", 'L'),
            ("a2", 'L'),
            ("c2", 'L'),
            ("i9", 'D'),
            ("h8", 'D'),
        ],
        &format!("l {light_placed},13 111111 0,0 0 0"),
    )
}

#[test]
fn corner_capture_takes_the_token_scores_ten_and_owes_a_bonus_placement() {
    let mut g = corner_capture_position(13);
    play(&mut g, "c2-b2");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("b1", 'L'),
                ("a2", 'L'),
                ("b2", 'L'),
                ("i9", 'D'),
                ("h8", 'D')
            ],
            "l 13,13 011111 10,0 1 0"
        )
    );
    assert_eq!(g.to_act(), Some(Side::First));
    assert!(g.bonus_pending());
    assert_eq!(g.score(Side::First), 10);
    // Only placements now: 48 placement cells minus the occupied ones (b1, a2, b2, h8).
    let l = legal(&g);
    assert_eq!(l.len(), 48 - 4);
    assert!(l.iter().all(|m| m.len() == 2));
    assert!(is_illegal(&g, "b2-c2"));
    assert!(is_illegal(&g, "pass"));
    assert!(is_illegal(&g, "e5"));
    assert!(is_illegal(&g, "a1"));
    play(&mut g, "g7");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("b1", 'L'),
                ("a2", 'L'),
                ("b2", 'L'),
                ("g7", 'L'),
                ("i9", 'D'),
                ("h8", 'D')
            ],
            "d 14,13 011111 10,0 0 0"
        )
    );
}

#[test]
fn bonus_is_lost_without_supply_but_points_and_token_are_taken() {
    let mut g = corner_capture_position(15);
    play(&mut g, "c2-b2");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("b1", 'L'),
                ("a2", 'L'),
                ("b2", 'L'),
                ("i9", 'D'),
                ("h8", 'D')
            ],
            "d 15,13 011111 10,0 0 0"
        )
    );
}

#[test]
fn a_later_capture_on_a_corner_without_token_gives_nothing() {
    let mut g = load(
        &[
            ("a1", 'D'),
            ("b1", 'L'),
            ("a2", 'L'),
            ("c2", 'L'),
            ("i9", 'D'),
            ("h8", 'D'),
        ],
        "l 13,13 011111 10,0 0 0",
    );
    play(&mut g, "c2-b2");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("b1", 'L'),
                ("a2", 'L'),
                ("b2", 'L'),
                ("i9", 'D'),
                ("h8", 'D')
            ],
            "d 13,13 011111 10,0 0 0"
        )
    );
}

// ------------------------------------------------------------------ winning

#[test]
fn corners_to_win_three_or_four() {
    // Light holds a1 and e1 and steps into i9 with h9, i8 support.
    let cells = [
        ("a1", 'L'),
        ("e1", 'L'),
        ("h8", 'L'),
        ("h9", 'L'),
        ("i8", 'L'),
        ("c5", 'D'),
    ];
    let mut g = load_with(3, &cells, "l 13,12 111111 0,0 0 0");
    play(&mut g, "h8-i9");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Corners
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
    let mut g = load_with(4, &cells, "l 13,12 111111 0,0 0 0");
    play(&mut g, "h8-i9");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));
}

#[test]
fn entering_a_third_corner_wins_with_reason_corners() {
    // a5's neighbours: a4, b5, b6. Light steps b6-a5: the other two (a4, b5) are light.
    let cells = [
        ("e1", 'L'),
        ("i9", 'L'),
        ("a4", 'L'),
        ("b5", 'L'),
        ("b6", 'L'),
        ("c5", 'D'),
    ];
    let mut g = load_with(3, &cells, "l 13,12 111111 0,0 0 0");
    play(&mut g, "b6-a5");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Corners
        })
    );
    assert_eq!(Reason::Corners.as_str(), "corners");
}

#[test]
fn an_echoed_stone_never_captures_where_it_lands() {
    // Dark c3 is captured and echoes to g7. Light h8 then has three dark neighbours
    // (i9, h9 and the echoed g7) but is not captured: echoed stones do not capture.
    let mut g = load(
        &[
            ("b3", 'L'),
            ("c2", 'L'),
            ("e3", 'L'),
            ("c3", 'D'),
            ("h8", 'L'),
            ("h9", 'D'),
            ("i9", 'D'),
        ],
        "l 13,13 111111 0,0 0 0",
    );
    play(&mut g, "e3-d3");
    assert_eq!(
        g.position(),
        pos(
            &[
                ("b3", 'L'),
                ("c2", 'L'),
                ("d3", 'L'),
                ("g7", 'D'),
                ("h8", 'L'),
                ("h9", 'D'),
                ("i9", 'D')
            ],
            "d 13,13 111111 0,0 0 0"
        )
    );
}

// ------------------------------------------------------------------ repetition

#[test]
fn third_occurrence_draws_counting_the_loaded_position() {
    let start = pos(&[("c3", 'L'), ("g7", 'D')], "l 12,12 111111 0,0 0 0");
    let mut g = Akunur::from_position(&Options::default(), &start).unwrap();
    let cycle = ["c3-c4", "g7-g6", "c4-c3", "g6-g7"];
    for round in 0..2 {
        for (i, mv) in cycle.iter().enumerate() {
            play(&mut g, mv);
            if round == 1 && i == 3 {
                assert_eq!(g.position(), start);
                assert_eq!(
                    g.outcome(),
                    Some(Outcome {
                        winner: None,
                        reason: Reason::Repetition
                    })
                );
            } else {
                assert_eq!(g.outcome(), None, "{mv} round {round}");
            }
        }
    }
}

// ------------------------------------------------------------------ notation, options, positions

#[test]
fn notation_forms() {
    let g = Akunur::from_position(
        &Options::default(),
        &pos(&[("c3", 'L')], "l 12,12 111111 0,0 0 0"),
    )
    .unwrap();
    for (t, c) in [
        ("c3-d4", "c3-d4"),
        ("C3-D4", "c3-d4"),
        (" c3-c4 ", "c3-c4"),
        ("Pass", "pass"),
        ("E5", "e5"),
    ] {
        assert_eq!(g.format_action(g.parse_action(t).unwrap()), c, "{t}");
    }
    for t in [
        "", "c", "c3-", "-c3", "c3-d4-e5", "c3d4", "a6", "j1", "i4", "e0", "e10", "c3 - d4",
        "passs", "c3x d4",
    ] {
        assert!(
            matches!(g.parse_action(t), Err(RulesError::BadNotation { .. })),
            "{t:?}"
        );
    }
}

#[test]
fn options_exact() {
    let k = kind("akunur").unwrap();
    assert_eq!(
        k.validate_options(&json!(null)).unwrap(),
        json!({"corners_to_win": 3})
    );
    assert_eq!(
        k.validate_options(&json!({"corners_to_win": 4})).unwrap(),
        json!({"corners_to_win": 4})
    );
    for bad in [
        json!({"corners_to_win": 2}),
        json!({"corners_to_win": 5}),
        json!({"corners_to_win": "3"}),
        json!({"corners_to_win": 3.5}),
        json!({"x": 1}),
        json!([3]),
    ] {
        assert!(
            matches!(k.validate_options(&bad), Err(RulesError::InvalidOptions(_))),
            "{bad}"
        );
    }
    assert_eq!(k.side_names, ["light", "dark"]);
}

#[test]
fn positions_round_trip_and_reject_malformed_strings() {
    for p in [
        START.to_string(),
        pos(&[("c3", 'L'), ("g7", 'D')], "d 13,12 101011 20,10 0 1"),
        pos(&[("c3", 'L')], "l 14,12 011111 10,0 1 0"),
    ] {
        assert_eq!(
            Akunur::from_position(&Options::default(), &p)
                .unwrap()
                .position(),
            p
        );
    }
    let bad = [
        START.replace(" l ", " x "),
        START.replace(" l ", " L "),
        START.replace("0,0 111111", "0;0 111111"),
        START.replace("111111", "11111"),
        START.replace("111111", "111112"),
        START.replace(" 0,0 0 0", " 0,0 2 0"),
        START.replace(" 0,0 0 0", " 5,0 0 0"),
        START.replace(" 0,0 0 0", " 0,0 0"),
        START.replace("...../", "....../"),
        START.replace("...../", "....l/"),
        START.replace(" l 0,0", " l 16,0"),
        START.replace(" l ", "  l "),
    ];
    for p in &bad {
        assert!(
            matches!(
                Akunur::from_position(&Options::default(), p),
                Err(RulesError::InvalidPosition(_))
            ),
            "{p}"
        );
    }
}

/// Minor: numbers with leading zeros load (and come back canonical), while the Ūnane and
/// Staku parsers reject them; the page gives the canonical form only.
#[test]
fn numbers_with_leading_zeros_are_rejected() {
    for p in [
        START.replace(" l 0,0 ", " l 00,0 "),
        START.replace(" 0,0 0 0", " 00,0 0 0"),
    ] {
        assert!(
            Akunur::from_position(&Options::default(), &p).is_err(),
            "{p}"
        );
    }
}
