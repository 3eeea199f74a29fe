//! Akunur rules tests: reference perfts, the page's conformance examples, every rule and
//! special case on hand-built positions, options, position strings and notation.

use serde_json::json;
use stoa_protocol::akunur::{Action, Akunur, Cell, Options};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError, Side};

const START: &str =
    "...../....../......./......../........./......../......./....../..... l 0,0 111111 0,0 0 0";

/// Builds a position string from the cells of each colour and the fields after the board.
fn pos(light: &[&str], dark: &[&str], tail: &str) -> String {
    let mut rows = Vec::new();
    for y in (0..9i32).rev() {
        let mut row = String::new();
        for x in 0..9i32 {
            if (x - y).abs() > 4 {
                continue;
            }
            let name = format!("{}{}", (b'a' + x as u8) as char, y + 1);
            row.push(if light.contains(&name.as_str()) {
                'L'
            } else if dark.contains(&name.as_str()) {
                'D'
            } else {
                '.'
            });
        }
        rows.push(row);
    }
    format!("{} {tail}", rows.join("/"))
}

fn opts(corners_to_win: u8) -> Options {
    Options { corners_to_win }
}

fn game(position: &str) -> Akunur {
    Akunur::from_position(&Options::default(), position).expect("valid position")
}

fn legal(g: &Akunur) -> Vec<String> {
    let mut actions = Vec::new();
    g.legal_actions(&mut actions);
    let mut out: Vec<String> = actions.into_iter().map(|a| g.format_action(a)).collect();
    out.sort();
    out
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    out.sort();
    out
}

fn play(g: &mut Akunur, text: &str) {
    let action = g.parse_action(text).expect("parses");
    g.check(action)
        .unwrap_or_else(|e| panic!("{text} should be legal in {}: {e}", g.position()));
    g.apply(action);
}

/// The reason of an illegal move, panicking if it is legal.
fn illegal(g: &Akunur, text: &str) -> String {
    let action = g.parse_action(text).expect("parses");
    match g.check(action) {
        Err(RulesError::IllegalMove { reason, .. }) => reason,
        other => panic!("{text} should be illegal, got {other:?}"),
    }
}

fn cell(name: &str) -> Cell {
    Cell::parse(name).unwrap()
}

/// Every placement cell: rings 2..4 minus the six corners.
fn placement_cells() -> Vec<String> {
    let mut out = Vec::new();
    for y in 0..9i32 {
        for x in 0..9i32 {
            let (dx, dy) = (x - 4, y - 4);
            let ring = dx.abs().max(dy.abs()).max((dy - dx).abs());
            if (x - y).abs() > 4 || ring < 2 {
                continue;
            }
            let name = format!("{}{}", (b'a' + x as u8) as char, y + 1);
            if !["a1", "e1", "i5", "i9", "e9", "a5"].contains(&name.as_str()) {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------- start, perft

#[test]
fn start_position_and_reference_perft() {
    let g = Akunur::start(&Options::default());
    assert_eq!(g.position(), START);
    assert_eq!(g.to_act(), Some(Side::First));
    assert_eq!(g.outcome(), None);
    assert_eq!(g.perft(0), 1);
    assert_eq!(g.perft(1), 48);
    assert_eq!(g.perft(2), 2256);
    assert_eq!(g.perft(3), 48 * 47 * 46);
    assert_eq!(legal(&g), placement_cells());
    assert_eq!(placement_cells().len(), 48);
    // Extended play changes nothing in the placement phase.
    assert_eq!(Akunur::start(&opts(4)).perft(2), 2256);
}

#[test]
fn placement_phase_conformance_example() {
    let g = Akunur::start(&Options::default());
    assert!(illegal(&g, "e5").contains("Still Point"));
    assert!(illegal(&g, "f6").contains("ring 1"));
    assert!(illegal(&g, "i9").contains("corner"));
    assert!(g.check(g.parse_action("g7").unwrap()).is_ok());
}

#[test]
fn placement_phase_alternates_and_ends_after_24_stones() {
    let mut g = Akunur::start(&Options::default());
    play(&mut g, "c3");
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(legal(&g).len(), 47);
    assert!(illegal(&g, "c3").contains("occupied"));
    assert!(illegal(&g, "pass").contains("no other legal action"));
    assert!(illegal(&g, "c3-c4").contains("placement phase"));
    let cells = placement_cells();
    let rest: Vec<&String> = cells.iter().filter(|c| *c != "c3").take(23).collect();
    for c in &rest {
        play(&mut g, c);
    }
    assert!(!g.in_placement_phase());
    assert_eq!(g.to_act(), Some(Side::First));
    assert_eq!(g.placed(Side::First), 12);
    assert_eq!(g.placed(Side::Second), 12);
    assert!(g.position().ends_with(" l 12,12 111111 0,0 0 0"));
    let moves = legal(&g);
    assert!(!moves.is_empty());
    assert!(moves.iter().all(|m| m.contains('-')));
    assert!(illegal(&g, "e5").contains("placement phase is over"));
}

// ---------------------------------------------------------------- capture and echo

#[test]
fn capture_conformance_example() {
    let start = ".L.../....../..LDL../......../........./......../......./....../..... l 12,12 111111 0,0 0 0";
    assert_eq!(
        pos(&["f9", "e7", "g7"], &["f7"], "l 12,12 111111 0,0 0 0"),
        start
    );
    let mut g = game(start);
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(&["e7", "g7", "f8"], &["d3"], "d 12,12 111111 0,0 0 0")
    );
    assert_eq!(g.to_act(), Some(Side::Second));
}

#[test]
fn simultaneous_double_capture_echoes_swap_places() {
    // Light enters e5 (supported by e6 and f6): d5 (c5, e6 + mover) and f5 (f6, g5 + mover)
    // are both captured; they are lifted first, so each echoes onto the other's cell.
    let mut g = game(&pos(
        &["e4", "e6", "f6", "c5", "g5"],
        &["d5", "f5"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "e4-e5");
    assert_eq!(
        g.position(),
        pos(
            &["e5", "e6", "f6", "c5", "g5"],
            &["d5", "f5"],
            "d 12,12 111111 0,0 0 0"
        )
    );
    // Without g5, f5 is not captured: d5's echo lands on it and removes it.
    let mut g = game(&pos(
        &["e4", "e6", "f6", "c5"],
        &["d5", "f5"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "e4-e5");
    assert_eq!(
        g.position(),
        pos(&["e5", "e6", "f6", "c5"], &["f5"], "d 12,12 111111 0,0 0 0")
    );
}

#[test]
fn echo_onto_a_light_stone_removes_it() {
    let mut g = game(&pos(
        &["f9", "e7", "g7", "d3"],
        &["f7"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(&["e7", "g7", "f8"], &["d3"], "d 12,12 111111 0,0 0 0")
    );
}

#[test]
fn echo_onto_a_dark_stone_removes_it() {
    let mut g = game(&pos(
        &["f9", "e7", "g7"],
        &["f7", "d3", "a3"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(&["e7", "g7", "f8"], &["d3", "a3"], "d 12,12 111111 0,0 0 0")
    );
}

#[test]
fn echoed_stones_do_not_capture() {
    // The echoed stone lands on d3 next to light d2, which then has three dark neighbours
    // (d3, e2, c1): it stays.
    let mut g = game(&pos(
        &["f9", "e7", "g7", "d2"],
        &["f7", "e2", "c1"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(
            &["e7", "g7", "f8", "d2"],
            &["d3", "e2", "c1"],
            "d 12,12 111111 0,0 0 0"
        )
    );
}

#[test]
fn capture_needs_two_other_supporters() {
    // Only e7 and the mover touch f7: no capture.
    let mut g = game(&pos(&["f9", "e7"], &["f7"], "l 12,12 111111 0,0 0 0"));
    play(&mut g, "f9-f8");
    assert_eq!(
        g.position(),
        pos(&["e7", "f8"], &["f7"], "d 12,12 111111 0,0 0 0")
    );
}

#[test]
fn support_is_counted_after_the_move() {
    // g8 touches f7; when it is the stone that moves away (to f8), it no longer supports.
    let mut g = game(&pos(&["g8", "e7"], &["f7"], "l 12,12 111111 0,0 0 0"));
    play(&mut g, "g8-f8");
    assert_eq!(
        g.position(),
        pos(&["e7", "f8"], &["f7"], "d 12,12 111111 0,0 0 0")
    );
}

#[test]
fn a_stone_moving_next_to_three_enemies_is_not_captured() {
    let mut g = game(&pos(
        &["b4", "c5", "d4", "b2"],
        &["c3", "h8"],
        "d 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "c3-c4");
    assert_eq!(
        g.position(),
        pos(
            &["b4", "c5", "d4", "b2"],
            &["c4", "h8"],
            "l 12,12 111111 0,0 0 0"
        )
    );
    // It is captured when light moves next to it: c4 echoes to g6.
    play(&mut g, "b2-b3");
    assert_eq!(
        g.position(),
        pos(
            &["b4", "c5", "d4", "b3"],
            &["g6", "h8"],
            "d 12,12 111111 0,0 0 0"
        )
    );
}

#[test]
fn still_point_capture_has_no_echo() {
    let mut g = game(&pos(
        &["d5", "f5", "e3"],
        &["e5", "a3"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "e3-e4");
    assert_eq!(
        g.position(),
        pos(&["d5", "f5", "e4"], &["a3"], "d 12,12 111111 0,0 0 0")
    );
}

// ---------------------------------------------------------------- corners and tokens

#[test]
fn corner_capture_takes_the_token_and_a_bonus_placement() {
    let mut g = game(&pos(
        &["b1", "a2", "c2"],
        &["a1", "h8"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "c2-b2");
    assert_eq!(
        g.position(),
        pos(&["b1", "a2", "b2"], &["h8"], "l 12,12 011111 10,0 1 0")
    );
    assert_eq!(g.to_act(), Some(Side::First));
    assert!(g.bonus_pending());
    assert_eq!(g.score(Side::First), 10);
    assert!(!g.has_token(cell("a1")));
    // The bonus: any empty placement cell, nothing else.
    let expected: Vec<String> = placement_cells()
        .into_iter()
        .filter(|c| !["b1", "a2", "b2", "h8"].contains(&c.as_str()))
        .collect();
    assert_eq!(legal(&g), expected);
    assert!(illegal(&g, "b2-c2").contains("bonus placement"));
    assert!(illegal(&g, "e5").contains("Still Point"));
    assert!(illegal(&g, "a1").contains("corner"));
    assert!(illegal(&g, "d4").contains("ring 1"));
    play(&mut g, "c3");
    assert_eq!(
        g.position(),
        pos(
            &["b1", "a2", "b2", "c3"],
            &["h8"],
            "d 13,12 011111 10,0 0 0"
        )
    );
    // The view shows the counters.
    let v = g.view();
    assert_eq!(v["scores"], json!({"light": 10, "dark": 0}));
    assert_eq!(v["supply"], json!({"light": 2, "dark": 3}));
    assert_eq!(v["tokens"], json!(["e1", "i5", "i9", "e9", "a5"]));
    assert_eq!(v["bonus_pending"], json!(false));
}

#[test]
fn a_second_capture_at_the_same_corner_gives_nothing() {
    let mut g = game(&pos(
        &["b1", "a2", "c2"],
        &["a1", "h8"],
        "l 12,12 011111 0,10 0 0",
    ));
    play(&mut g, "c2-b2");
    assert_eq!(
        g.position(),
        pos(&["b1", "a2", "b2"], &["h8"], "d 12,12 011111 0,10 0 0")
    );
    assert!(!g.bonus_pending());
}

#[test]
fn the_bonus_is_lost_with_an_empty_supply() {
    let mut g = game(&pos(
        &["b1", "a2", "c2"],
        &["a1", "h8"],
        "l 15,12 111111 0,0 0 0",
    ));
    play(&mut g, "c2-b2");
    // Points and token are still taken; dark acts next.
    assert_eq!(
        g.position(),
        pos(&["b1", "a2", "b2"], &["h8"], "d 15,12 011111 10,0 0 0")
    );
}

#[test]
fn dark_takes_tokens_too() {
    let mut g = game(&pos(
        &["i9", "a3"],
        &["h9", "i8", "g8"],
        "d 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "g8-h8");
    assert_eq!(
        g.position(),
        pos(&["a3"], &["h9", "i8", "h8"], "d 12,12 111011 0,10 1 0")
    );
    play(&mut g, "a2");
    assert_eq!(g.to_act(), Some(Side::First));
    assert!(g.position().ends_with(" l 12,13 111011 0,10 0 0"));
}

#[test]
fn entering_a_corner_needs_two_other_supporters() {
    // Conformance: h8 may step into i9 only if h9 and i8 hold light stones.
    let g = game(&pos(&["h8", "h9", "i8"], &["a3"], "l 12,12 111111 0,0 0 0"));
    let moves = legal(&g);
    for m in ["h8-i9", "h9-i9", "i8-i9"] {
        assert!(moves.contains(&m.to_string()), "{m}");
    }
    let g = game(&pos(&["h8", "h9"], &["a3"], "l 12,12 111111 0,0 0 0"));
    assert!(illegal(&g, "h8-i9").contains("at least 2"));
    // Enemy stones do not support.
    let g = game(&pos(&["h8", "h9"], &["i8"], "l 12,12 111111 0,0 0 0"));
    assert!(illegal(&g, "h8-i9").contains("(it has 1)"));
}

#[test]
fn a_stone_on_a_corner_never_moves() {
    let g = game(&pos(&["a1"], &["h8"], "l 12,12 111111 0,0 0 0"));
    assert_eq!(legal(&g), ["pass"]);
    assert!(illegal(&g, "a1-b1").contains("never moves"));
}

#[test]
fn exact_legal_moves_near_a_corner() {
    let g = game(&pos(&["b2", "b1"], &["h8"], "l 12,12 111111 0,0 0 0"));
    assert_eq!(
        legal(&g),
        sorted(&["b2-a2", "b2-b3", "b2-c2", "b2-c3", "b1-c1", "b1-c2"])
    );
    let g = game(&pos(&["b2", "b1", "a2"], &["h8"], "l 12,12 111111 0,0 0 0"));
    assert_eq!(
        legal(&g),
        sorted(&[
            "b2-a1", "b2-b3", "b2-c2", "b2-c3", "b1-a1", "b1-c1", "b1-c2", "a2-a1", "a2-a3",
            "a2-b3"
        ])
    );
}

#[test]
fn entering_the_still_point_needs_two_other_supporters() {
    let g = game(&pos(&["f6", "d5"], &["a3"], "l 12,12 111111 0,0 0 0"));
    assert!(illegal(&g, "f6-e5").contains("Still Point"));
    // The origin does not count.
    let g = game(&pos(&["f6", "e6"], &["a3"], "l 12,12 111111 0,0 0 0"));
    assert!(!legal(&g).iter().any(|m| m.ends_with("-e5")));
    let g = game(&pos(&["f6", "d5", "e6"], &["a3"], "l 12,12 111111 0,0 0 0"));
    let moves = legal(&g);
    for m in ["f6-e5", "d5-e5", "e6-e5"] {
        assert!(moves.contains(&m.to_string()), "{m}");
    }
}

#[test]
fn still_point_exit_reaches_any_empty_non_corner_cell() {
    let g = game(&pos(&["e5"], &["a3", "a1"], "l 12,12 111111 0,0 0 0"));
    let moves = legal(&g);
    // 61 cells - 6 corners - e5 - a3.
    assert_eq!(moves.len(), 53);
    assert!(moves.contains(&"e5-i8".to_string()));
    assert!(moves.contains(&"e5-f6".to_string()));
    assert!(!moves.contains(&"e5-a3".to_string()));
    assert!(!moves.contains(&"e5-i9".to_string()));
    assert!(illegal(&g, "e5-i9").contains("corner"));
    assert!(illegal(&g, "e5-a3").contains("occupied"));
}

#[test]
fn still_point_exit_captures() {
    // e5 exits to b4; the dark stone on b3 has a3 and c4 besides: captured, echoes to h7.
    let mut g = game(&pos(&["e5", "a3", "c4"], &["b3"], "l 12,12 111111 0,0 0 0"));
    play(&mut g, "e5-b4");
    assert_eq!(
        g.position(),
        pos(&["b4", "a3", "c4"], &["h7"], "d 12,12 111111 0,0 0 0")
    );
    // With a4 instead of a3 (not a neighbour of b3) there is no capture.
    let mut g = game(&pos(&["e5", "a4", "c4"], &["b3"], "l 12,12 111111 0,0 0 0"));
    play(&mut g, "e5-b4");
    assert_eq!(
        g.position(),
        pos(&["b4", "a4", "c4"], &["b3"], "d 12,12 111111 0,0 0 0")
    );
}

// ---------------------------------------------------------------- end of game

#[test]
fn three_corners_win_in_standard_play() {
    let p = pos(
        &["a1", "e1", "h5", "i6", "h4"],
        &["c3"],
        "l 12,12 111111 0,0 0 0",
    );
    let mut g = game(&p);
    play(&mut g, "h4-i5");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Corners
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
    assert_eq!(
        g.check(g.parse_action("c3-c4").unwrap()),
        Err(RulesError::GameOver)
    );
}

#[test]
fn extended_play_needs_four_corners() {
    let p = pos(
        &["a1", "e1", "h5", "i6", "h4"],
        &["c3"],
        "l 12,12 111111 0,0 0 0",
    );
    let mut g = Akunur::from_position(&opts(4), &p).unwrap();
    play(&mut g, "h4-i5");
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));

    let p = pos(
        &["a1", "e1", "i9", "h5", "i6", "h4"],
        &["c3"],
        "l 12,12 111111 0,0 0 0",
    );
    let mut g = Akunur::from_position(&opts(4), &p).unwrap();
    play(&mut g, "h4-i5");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Corners
        })
    );
}

#[test]
fn only_the_mover_wins_by_corners() {
    // Dark already holds three corners (a loaded position does not end by itself); light's
    // move does not end the game, dark's next action does.
    let mut g = game(&pos(
        &["c3"],
        &["a1", "e1", "i5", "g7"],
        "l 12,12 111111 0,0 0 0",
    ));
    assert_eq!(g.outcome(), None);
    play(&mut g, "c3-c4");
    assert_eq!(g.outcome(), None);
    play(&mut g, "g7-g6");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::Second),
            reason: Reason::Corners
        })
    );
}

#[test]
fn pass_only_when_nothing_else_is_legal() {
    // a2 is boxed in by dark and cannot enter a1 (b1 and b2 are not light).
    let mut g = game(&pos(&["a2"], &["b2", "a3", "b3"], "l 12,12 111111 0,0 0 0"));
    assert_eq!(legal(&g), ["pass"]);
    play(&mut g, "PASS");
    assert!(g.position().ends_with(" d 12,12 111111 0,0 0 1"));
    assert!(illegal(&g, "pass").contains("no other legal action"));
    play(&mut g, "b3-c4");
    assert!(g.position().ends_with(" l 12,12 111111 0,0 0 0"));
    assert_eq!(legal(&g), sorted(&["a2-b3"]));
}

#[test]
fn a_player_without_stones_passes() {
    let g = game(&pos(&["c3"], &[], "d 12,12 111111 0,0 0 0"));
    assert_eq!(legal(&g), ["pass"]);
}

#[test]
fn two_consecutive_passes_draw() {
    let mut g = game(&pos(&["a1"], &["i9"], "l 12,12 111111 0,0 0 0"));
    play(&mut g, "pass");
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
    // The string records the draw, and loading it gives the ended game.
    let p = g.position();
    assert!(p.ends_with(" l 12,12 111111 0,0 0 2"));
    let again = game(&p);
    assert_eq!(again.outcome(), g.outcome());
    assert_eq!(again.position(), p);
}

#[test]
fn third_repetition_draws() {
    let mut g = game(&pos(&["c3"], &["g7"], "l 12,12 111111 0,0 0 0"));
    let cycle = ["c3-c4", "g7-g6", "c4-c3", "g6-g7"];
    for (i, m) in cycle.iter().chain(cycle.iter()).enumerate() {
        assert_eq!(g.outcome(), None, "before action {}", i + 1);
        play(&mut g, m);
    }
    // The start position (recorded on loading) occurred for the third time.
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: Reason::Repetition
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(legal(&g).is_empty());
}

#[test]
fn repetition_counts_passes_and_player_to_act() {
    // Light passes each time (boxed in); dark shuffles. Positions differ by who is to act,
    // so the start recurs only every 4 actions: third occurrence after 8.
    let mut g = game(&pos(
        &["a2"],
        &["b2", "a3", "b3", "g7"],
        "l 12,12 111111 0,0 0 0",
    ));
    let cycle = ["pass", "g7-g6", "pass", "g6-g7"];
    for m in cycle.iter().chain(cycle.iter()) {
        assert_eq!(g.outcome(), None);
        play(&mut g, m);
    }
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: Reason::Repetition
        })
    );
}

#[test]
fn an_echo_without_removal_does_not_reset_repetition() {
    // A capture that only echoes keeps every stone, so the position before it can recur:
    // f7 is captured and echoes to d3, walks back to f7 while light steps back, twice.
    let start = pos(&["f9", "e7", "g7", "a3"], &["f7"], "l 12,12 111111 0,0 0 0");
    let mut g = game(&start);
    let cycle = [
        "f9-f8", "d3-e4", "f8-f9", "e4-f5", "a3-a4", "f5-f6", "a4-a3", "f6-f7",
    ];
    for m in cycle {
        play(&mut g, m);
    }
    assert_eq!(g.position(), start);
    for (i, m) in cycle.iter().enumerate() {
        assert_eq!(g.outcome(), None, "before action {}", i + 9);
        play(&mut g, m);
    }
    assert_eq!(g.outcome().map(|o| o.reason), Some(Reason::Repetition));
}

// ---------------------------------------------------------------- options

#[test]
fn options_validation() {
    let k = kind("akunur").unwrap();
    assert_eq!(
        k.validate_options(&serde_json::Value::Null).unwrap(),
        json!({"corners_to_win": 3})
    );
    assert_eq!(
        k.validate_options(&json!({})).unwrap(),
        json!({"corners_to_win": 3})
    );
    assert_eq!(
        k.validate_options(&json!({"corners_to_win": 4})).unwrap(),
        json!({"corners_to_win": 4})
    );
    for bad in [
        json!({"corners_to_win": 5}),
        json!({"corners_to_win": 2}),
        json!({"corners_to_win": -1}),
        json!({"corners_to_win": 1000}),
        json!({"corners_to_win": "3"}),
        json!({"corners_to_win": 3.5}),
        json!({"corners_to_win": null}),
    ] {
        match k.validate_options(&bad) {
            Err(RulesError::InvalidOptions(m)) => {
                assert!(m.contains("corners_to_win"), "{m}");
                assert!(m.contains("3 (standard) or 4 (extended)"), "{m}");
            }
            other => panic!("{bad} should be rejected, got {other:?}"),
        }
    }
    match k.validate_options(&json!({"corners": 3})) {
        Err(RulesError::InvalidOptions(m)) => assert!(m.contains("unknown field `corners`"), "{m}"),
        other => panic!("unknown field accepted: {other:?}"),
    }
    assert!(matches!(
        k.validate_options(&json!([3])),
        Err(RulesError::InvalidOptions(_))
    ));
    assert!(matches!(
        Akunur::validate_options(opts(7)),
        Err(RulesError::InvalidOptions(_))
    ));
    let g = k.start(&json!({"corners_to_win": 4})).unwrap();
    assert_eq!(g.options_json(), json!({"corners_to_win": 4}));
    assert_eq!(g.geometry()["corners_to_win"], json!(4));
}

// ---------------------------------------------------------------- position strings

#[test]
fn position_strings_round_trip() {
    for p in [
        START.to_string(),
        pos(&["b1", "a2", "b2"], &["h8"], "l 12,12 011111 10,0 1 0"),
        pos(&["a2"], &["b2"], "d 14,13 010101 20,10 0 1"),
        pos(&["c3", "e5"], &["i9", "a5"], "l 12,15 000000 30,30 0 0"),
    ] {
        let g = game(&p);
        assert_eq!(g.position(), p);
    }
    // Surrounding whitespace is tolerated; the output is canonical.
    assert_eq!(game(&format!("  {START}\n")).position(), START);
}

#[test]
fn bad_position_strings_are_rejected_with_reasons() {
    let board = "...../....../......./......../........./......../......./....../.....";
    let cases = [
        ("", "found 1 field"),
        ("garbage", "found 1 field"),
        (&format!("{board} l 0,0 111111 0,0 0"), "found 6 field"),
        (&format!("{board}  l 0,0 111111 0,0 0 0"), "empty"),
        (
            "...../....../......./......../........./......../......./...... l 0,0 111111 0,0 0 0",
            "9 rows",
        ),
        (
            "...../....../......./......../......../......../......./....../..... l 0,0 111111 0,0 0 0",
            "row 5 must have 9 cells",
        ),
        (
            "...../....../......./......../....X..../......../......./....../..... l 0,0 111111 0,0 0 0",
            "cell e5 holds 'X'",
        ),
        (&format!("{board} x 0,0 111111 0,0 0 0"), "'l' or 'd'"),
        (&format!("{board} l 0;0 111111 0,0 0 0"), "placed counts"),
        (&format!("{board} l 16,15 111111 0,0 0 0"), "only 15"),
        (&format!("{board} l a,0 111111 0,0 0 0"), "must be a number"),
        (&format!("{board} l 0,0 11111 0,0 0 0"), "tokens"),
        (&format!("{board} l 0,0 111112 0,0 0 0"), "tokens"),
        (&format!("{board} l 12,12 111111 5,0 0 0"), "multiple of 10"),
        (&format!("{board} l 12,12 111111 0,0 2 0"), "bonus"),
        (&format!("{board} l 12,12 111111 0,0 0 3"), "passes"),
        (&format!("{board} d 0,0 111111 0,0 0 0"), "light (l) to act"),
        (&format!("{board} l 3,0 111111 0,0 0 0"), "cannot occur"),
        (&format!("{board} l 0,0 111111 0,0 1 0"), "placement phase"),
        (&format!("{board} l 0,0 111111 0,0 0 1"), "placement phase"),
        (&format!("{board} l 15,12 111111 0,0 1 0"), "no supply left"),
        (&format!("{board} l 12,12 111111 0,0 1 1"), "passes must be 0"),
        (
            &pos(&["a2", "a3"], &[], "l 1,0 111111 0,0 0 0"),
            "2 stones on the board but has placed only 1",
        ),
    ];
    for (text, needle) in cases {
        match Akunur::from_position(&Options::default(), text) {
            Err(RulesError::InvalidPosition(m)) => {
                assert!(m.contains(needle), "'{text}': '{m}' lacks '{needle}'")
            }
            other => panic!("'{text}' should be rejected, got {other:?}"),
        }
    }
}

// ---------------------------------------------------------------- notation

#[test]
fn notation_input_forms() {
    let g = Akunur::start(&Options::default());
    let c3 = cell("c3");
    let d4 = cell("d4");
    for t in ["c3", "C3", " c3 ", "\tC3\n"] {
        assert_eq!(g.parse_action(t), Ok(Action::Place(c3)), "{t}");
    }
    for t in ["c3-d4", "C3-D4", "  c3-D4  "] {
        assert_eq!(
            g.parse_action(t),
            Ok(Action::Move { from: c3, to: d4 }),
            "{t}"
        );
    }
    for t in ["pass", "PASS", " Pass "] {
        assert_eq!(g.parse_action(t), Ok(Action::Pass), "{t}");
    }
    assert_eq!(g.format_action(Action::Move { from: c3, to: d4 }), "c3-d4");
    assert_eq!(g.format_action(Action::Place(cell("i5"))), "i5");
    assert_eq!(g.format_action(Action::Pass), "pass");
    for t in [
        "", "  ", "a9", "j1", "a0", "c10", "c3-", "-d4", "c3-d4-e5", "c3 d4", "c3d4", "passs",
        "é5", "c3–d4", "i1",
    ] {
        assert!(
            matches!(g.parse_action(t), Err(RulesError::BadNotation { .. })),
            "'{t}' should be bad notation"
        );
    }
    // Well-formed but illegal text parses; check says why.
    assert!(g.parse_action("e5").is_ok());
}

#[test]
fn check_gives_specific_reasons() {
    let g = game(&pos(&["c3", "a1"], &["c4", "h8"], "l 12,12 111111 0,0 0 0"));
    assert!(illegal(&g, "d3-d4").contains("no stone of yours on d3"));
    assert!(illegal(&g, "h8-h7").contains("no stone of yours on h8"));
    assert!(illegal(&g, "c3-c4").contains("c4 is occupied"));
    assert!(illegal(&g, "c3-c5").contains("not adjacent"));
    assert!(illegal(&g, "c3-c3").contains("another cell"));
    assert!(illegal(&g, "a1-a2").contains("never moves"));
    assert!(illegal(&g, "d4").contains("placement phase is over"));
}

// ---------------------------------------------------------------- view

#[test]
fn view_shows_board_and_counters() {
    let g = Akunur::start(&Options::default());
    let v = g.view();
    let geo = g.geometry();
    let cells = v["cells"].as_array().unwrap();
    let places = geo["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 61);
    assert_eq!(places.len(), 61, "the geometry lines up with the view");
    // The view holds what changes; the geometry what does not.
    assert_eq!(cells[0], json!({"stone": null, "token": true}));
    assert_eq!(
        places[0],
        json!({"name": "e9", "x": 4, "y": 8, "ring": 4, "kind": "corner", "echo": "e1"})
    );
    assert_eq!(cells[30], json!({"stone": null}));
    assert_eq!(
        places[30],
        json!({"name": "e5", "x": 4, "y": 4, "ring": 0, "kind": "still_point", "echo": "e5"})
    );
    assert_eq!(
        geo["board"]["corners"],
        json!(["a1", "e1", "i5", "i9", "e9", "a5"])
    );
    assert!(
        v.get("to_act").is_none(),
        "the document has the side to act"
    );
    assert_eq!(v["phase"], "placement");
    assert_eq!(v["tokens"], json!(["a1", "e1", "i5", "i9", "e9", "a5"]));
    assert_eq!(v["scores"], json!({"light": 0, "dark": 0}));
    assert_eq!(v["placed"], json!({"light": 0, "dark": 0}));
    assert_eq!(v["supply"], json!({"light": 15, "dark": 15}));
    assert_eq!(v["on_board"], json!({"light": 0, "dark": 0}));
    assert_eq!(v["corners_held"], json!({"light": 0, "dark": 0}));
    assert_eq!(geo["corners_to_win"], json!(3));
    assert_eq!(v["bonus_pending"], json!(false));
    assert_eq!(v["passes"], json!(0));

    let mut g = game(&pos(
        &["b1", "a2", "c2"],
        &["a1", "h8"],
        "l 12,12 111111 0,0 0 0",
    ));
    play(&mut g, "c2-b2");
    let v = g.view();
    assert_eq!(v["phase"], "movement");
    assert_eq!(v["bonus_pending"], json!(true));
    assert_eq!(g.to_act(), Some(stoa_protocol::Side::First));
    assert_eq!(v["scores"], json!({"light": 10, "dark": 0}));
    let cell = |name: &str| {
        let i = places.iter().position(|c| c["name"] == name).unwrap();
        v["cells"][i].clone()
    };
    assert_eq!(cell("a1")["token"], json!(false));
    assert_eq!(cell("a1")["stone"], json!(null));
    assert_eq!(cell("b2")["stone"], json!("light"));
}
