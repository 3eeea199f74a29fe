//! Akron rules: reference perft counts, the page's conformance examples, every rule and end
//! condition on hand-built positions, options, position strings and notation.

use serde_json::json;
use stoa_protocol::akron::{Action, Akron, Options};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError, Side};

fn opts(json: &str) -> Options {
    Akron::validate_options(serde_json::from_str(json).expect("options json")).expect("valid")
}

fn load(options: &str, position: &str) -> Akron {
    Akron::from_position(&opts(options), position).expect("valid position")
}

fn legal(g: &Akron) -> Vec<String> {
    let mut out = Vec::new();
    g.legal_actions(&mut out);
    let mut v: Vec<String> = out.into_iter().map(|a| g.format_action(a)).collect();
    v.sort();
    v
}

fn moves_from(g: &Akron, origin: &str) -> Vec<String> {
    let prefix = format!("{origin}-");
    legal(g)
        .into_iter()
        .filter(|m| m.starts_with(&prefix))
        .collect()
}

fn moves(g: &Akron) -> Vec<String> {
    legal(g).into_iter().filter(|m| m.contains('-')).collect()
}

fn play(g: &mut Akron, text: &str) {
    let a = g.parse_action(text).expect("parses");
    g.check(a)
        .unwrap_or_else(|e| panic!("{text} should be legal: {e}"));
    g.apply(a);
}

fn illegal_reason(g: &Akron, text: &str) -> String {
    let a = g.parse_action(text).expect("parses");
    match g.check(a) {
        Err(RulesError::IllegalMove { reason, .. }) => reason,
        other => panic!("{text}: expected an illegal move, got {other:?}"),
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------- reference counts

#[test]
fn perft_3x3_reference_counts() {
    let g = Akron::start(&opts(r#"{"size":3}"#));
    let counts: Vec<u64> = (1..=4).map(|d| g.perft(d)).collect();
    assert_eq!(counts, vec![9, 81, 576, 3528]);
}

#[test]
fn perft_4x4_reference_counts() {
    let g = Akron::start(&opts(r#"{"size":4}"#));
    let counts: Vec<u64> = (1..=3).map(|d| g.perft(d)).collect();
    assert_eq!(counts, vec![16, 256, 3600]);
}

#[test]
fn perft_regression_counts() {
    // Not from the page: this engine's counts one ply deeper (moves appear from ply 4 on),
    // kept so that a change in move generation cannot go unnoticed.
    assert_eq!(Akron::start(&opts(r#"{"size":3}"#)).perft(5), 20784);
    assert_eq!(Akron::start(&opts(r#"{"size":4}"#)).perft(4), 47040);
    assert_eq!(Akron::start(&opts("{}")).perft(2), 6561);
}

#[test]
fn perft_counts_match_the_generic_perft() {
    // The engine may override perft; the trait's generic version must agree.
    let g = Akron::start(&opts(r#"{"size":4}"#));
    assert_eq!(g.perft(4), stoa_protocol::perft::perft(&g, 4));
}

#[test]
fn start_positions() {
    assert_eq!(Akron::start(&opts("{}")).position(), "9 v 40,40 0 - -");
    assert_eq!(
        Akron::start(&opts(r#"{"size":3}"#)).position(),
        "3 v 4,4 0 - -"
    );
    assert_eq!(
        Akron::start(&opts(r#"{"size":16,"pieces":1000}"#)).position(),
        "16 v 1000,1000 0 - -"
    );
    let g = Akron::start(&opts("{}"));
    assert_eq!(g.to_act(), Some(Side::First));
    assert_eq!(g.outcome(), None);
    assert_eq!(legal(&g).len(), 81);
}

// ---------------------------------------------------------------- conformance examples

/// The page's example (its ball lists are not in canonical order; input may use any order).
const D6_EXAMPLE: &str = "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6";
/// The same position in canonical form: by level, then row, then column.
const D6_CANONICAL: &str = "8 v 21,26 20 B6,D6,E6,B7,D7,F7,G7,C8,D8,H8,E7' F6,G6,C7,E7,B8,E8";

#[test]
fn d6_example_exact_destinations() {
    let g = load(r#"{"size":8}"#, D6_EXAMPLE);
    assert_eq!(
        moves_from(&g, "D6"),
        strings(&["D6-B8'", "D6-C8'", "D6-D8'", "D6-E5", "D6-F7'", "D6-F8", "D6-G8", "D6-H7"])
    );
    let reason = illegal_reason(&g, "D6-D7'");
    assert!(reason.contains("the point the ball leaves"), "{reason}");
}

#[test]
fn d6_example_loads_without_options() {
    // The position string is self-describing: its size wins over the default options.
    let g = load("{}", D6_EXAMPLE);
    assert_eq!(g.size(), 8);
    assert_eq!(g.position(), D6_CANONICAL);
    assert_eq!(moves_from(&g, "D6").len(), 8);
}

// Full 3x3 board, vert on column B, level 1 checkered so no crossing pair interferes.
const COLUMN_BASE: &str = "3 v 0,0 12 B1,B2,B3,A2',B3' A1,C1,A2,C2,A3,C3,B2',A3'";
const COLUMN_COVERED: &str = "3 v 0,0 12 B1,B2,B3,A2',B3' A1,C1,A2,C2,A3,C3,B2',A3',A3''";

#[test]
fn column_rule_ball_under_opponent_is_cut() {
    let o = r#"{"size":3,"pieces":10}"#;
    let open = load(o, COLUMN_BASE);
    assert!(open.connected(Side::First));
    assert!(!open.connected(Side::Second));
    // A horz ball two levels above B2 (same plan point (2,2)) cuts B2 from every connection.
    let covered = load(o, COLUMN_COVERED);
    assert!(!covered.connected(Side::First));
    // ... and the covering ball joins horz's columns through its supporters A3' and B2'.
    assert!(covered.connected(Side::Second));
    let v = covered.view();
    let b2 = v["balls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["point"] == "B2")
        .unwrap();
    assert_eq!(b2["cut"], json!(true));
    assert_eq!(b2["plan"], json!([2, 2]));
    let top = v["balls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["point"] == "A3''")
        .unwrap();
    assert_eq!(top["plan"], json!([2, 2]));
    assert_eq!(top["cut"], json!(false));
    // The links of the cut ball are shown as cut.
    let b1b2 = v["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["a"] == "B1" && l["b"] == "B2")
        .unwrap();
    assert_eq!(b1b2["cut"], json!(true));
}

// ---------------------------------------------------------------- moves

#[test]
fn pinned_balls_cannot_move() {
    // B1 and B2 support both A2' and B2'; A1 supports only A2'.
    let g = load(
        r#"{"size":4,"pieces":10}"#,
        "4 v 2,7 10 A1,B1,C1,A2,B2,C2,A2',B2' D4",
    );
    assert!(moves_from(&g, "B1").is_empty());
    assert!(moves_from(&g, "B2").is_empty());
    let reason = illegal_reason(&g, "B1-D1");
    assert!(reason.contains("pinned"), "{reason}");
    assert!(reason.contains("supports 2 balls"), "{reason}");
    assert_eq!(
        moves_from(&g, "A1"),
        strings(&["A1-A3", "A1-B3", "A1-C3", "A1-D1", "A1-D2"])
    );
}

#[test]
fn two_ball_drop_chain() {
    let o = r#"{"size":5}"#;
    // A1 carries A2' (horz), which carries A3'' (vert).
    let mut g = load(
        o,
        "5 v 0,10 20 A1,B1,C1,A2,C2,A3,B3,C3,B2',A3',B3',A3'' B2,A2'",
    );
    play(&mut g, "A1-D1");
    assert_eq!(
        g.position(),
        "5 h 0,10 21 B1,C1,D1,A2,C2,A3,B3,C3,A2',B2',A3',B3' A1,B2"
    );
    assert_eq!(g.outcome(), None);
}

#[test]
fn destination_may_not_rest_on_a_dropped_ball() {
    let o = r#"{"size":5,"pieces":20}"#;
    let g = load(
        o,
        "5 v 4,20 30 A1,B1,C1,D1,A2,B2,C2,D2,A3,B3,C3,D3,B2',C2',B3',C3' -",
    );
    // D1 carries C2', which would drop into D1; B3'' rests on C2'.
    assert!(!moves_from(&g, "D1").contains(&"D1-B3''".to_string()));
    let reason = illegal_reason(&g, "D1-B3''");
    assert!(reason.contains("drops this turn"), "{reason}");
    // A1 carries nothing, so B3'' is fine for it.
    assert!(moves_from(&g, "A1").contains(&"A1-B3''".to_string()));
    let mut after = g.clone();
    play(&mut after, "A1-B3''");
    assert_eq!(
        after.position(),
        "5 h 4,20 31 B1,C1,D1,A2,B2,C2,D2,A3,B3,C3,D3,B2',C2',B3',C3',B3'' -"
    );
}

#[test]
fn destination_must_touch_the_group_after_the_drops() {
    // B1's only group ball is B2', which sits on B1 and drops into it: C2' touches B2'
    // before the move but nothing of the group afterwards.
    let g = load(r#"{"size":4}"#, "4 v 6,3 9 B1,B2' C1,D1,B2,C2,D2");
    assert_eq!(moves(&g), strings(&["B2'-A1"]));
    let reason = illegal_reason(&g, "B1-C2'");
    assert!(reason.contains("once the balls above drop"), "{reason}");
}

#[test]
fn group_must_not_be_empty_and_destination_must_touch_it() {
    let g = load(r#"{"size":4}"#, "4 v 6,6 4 A1,C3 B2,D4");
    assert!(moves(&g).is_empty());
    let reason = illegal_reason(&g, "A1-B1");
    assert!(reason.contains("not connected"), "{reason}");
    let g = load(r#"{"size":4}"#, "4 v 6,6 4 A1,A2 B2,D4");
    assert_eq!(
        moves(&g),
        strings(&["A1-A3", "A2-B1"]),
        "each destination touches the other ball"
    );
    let reason = illegal_reason(&g, "A1-C1");
    assert!(reason.contains("does not touch"), "{reason}");
}

#[test]
fn specific_reasons_for_illegal_actions() {
    let g = load(r#"{"size":4}"#, "4 v 6,6 4 A1,A2 B2,D4");
    assert!(illegal_reason(&g, "B2-B1").contains("no ball of yours on B2"));
    assert!(illegal_reason(&g, "A1-A2").contains("A2 is occupied"));
    assert!(illegal_reason(&g, "A1-A1").contains("another point"));
    assert!(illegal_reason(&g, "A1-B2'").contains("under it is empty"));
    assert!(illegal_reason(&g, "B2").contains("B2 is occupied"));
    assert!(illegal_reason(&g, "A2'").contains("level-0"));
    assert!(illegal_reason(&g, "swap").contains("ply 1"));
    let empty = load(r#"{"size":4}"#, "4 v 0,6 4 A1,A2 B2,D4");
    assert!(illegal_reason(&empty, "C1").contains("pile is empty"));
}

// ---------------------------------------------------------------- connections

// Horz runs along row 2; vert's B2'-B3' crosses B2-C2 and horz's A3''-B3'' crosses back.
const CROSS_CUT: &str = "4 v 0,0 30 A1,B1,C1,D1,A3,B3,C3,D3,B2',A3',B3',C3' A2,B2,C2,D2,A2',C2'";
const CROSS_RESTORED: &str =
    "4 v 0,0 30 A1,B1,C1,D1,A3,B3,C3,D3,B2',A3',B3',C3' A2,B2,C2,D2,A2',C2',A3'',B3''";
const CROSS_ONE_ABOVE: &str =
    "4 v 0,0 30 A1,B1,C1,D1,A3,B3,C3,D3,B2',A3',B3',C3' A2,B2,C2,D2,A2',C2',A3''";

fn link_cut(g: &Akron, a: &str, b: &str) -> bool {
    let v = g.view();
    let link = v["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["a"] == a && l["b"] == b)
        .unwrap_or_else(|| panic!("no link {a}-{b}"))
        .clone();
    link["cut"].as_bool().unwrap()
}

#[test]
fn crossing_pair_cuts_and_a_higher_pair_restores() {
    let o = r#"{"size":4,"pieces":20}"#;
    let cut = load(o, CROSS_CUT);
    assert!(link_cut(&cut, "B2", "C2"));
    assert!(!link_cut(&cut, "B2'", "B3'"));
    assert!(!cut.connected(Side::Second));
    // One ball above is no pair: nothing changes.
    let one = load(o, CROSS_ONE_ABOVE);
    assert!(link_cut(&one, "B2", "C2"));
    assert!(!one.connected(Side::Second));
    // The horz pair A3''-B3'' crosses the vert pair at the same midpoint (3,2): the highest
    // pair prevails, the vert pair is cut and horz's level-0 link holds again.
    let restored = load(o, CROSS_RESTORED);
    assert!(!link_cut(&restored, "B2", "C2"));
    assert!(link_cut(&restored, "B2'", "B3'"));
    assert!(!link_cut(&restored, "A3''", "B3''"));
    assert!(restored.connected(Side::Second));
    assert!(!restored.connected(Side::First));
}

// Vert connects along column B of a 4x4 board; horz can cross B2-B3 with A3'-B3'.
const B_COLUMN: &str = "4 h 4,2 11 B1,B2,B3,B4 A2,C2,A3,C3,A4,A3'";

#[test]
fn connection_wins_only_after_surviving_the_reply() {
    let g = load(r#"{"size":4}"#, B_COLUMN);
    assert!(g.connected(Side::First));
    assert_eq!(g.outcome(), None, "loading a position never ends the game");
    // A reply that leaves the connection standing loses at once.
    let mut survived = g.clone();
    play(&mut survived, "D1");
    assert_eq!(
        survived.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
    assert_eq!(survived.to_act(), None);
    assert!(legal(&survived).is_empty());
    assert_eq!(survived.check(Action::Swap), Err(RulesError::GameOver));
    // A reply that crosses B2-B3 with a horz pair breaks it and the game goes on.
    let mut broken = g.clone();
    assert!(moves_from(&broken, "A4").contains(&"A4-B3'".to_string()));
    play(&mut broken, "A4-B3'");
    assert_eq!(broken.outcome(), None);
    assert!(!broken.connected(Side::First));
    assert_eq!(broken.to_act(), Some(Side::First));
}

#[test]
fn making_a_connection_does_not_win_at_once() {
    let mut g = load(r#"{"size":3}"#, "3 v 2,2 4 A1,A2 B1,C1");
    play(&mut g, "A3");
    assert!(g.connected(Side::First));
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::Second));
    play(&mut g, "C3");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
}

#[test]
fn nodelay_connection_wins_at_once() {
    let mut g = load(r#"{"size":3,"nodelay":true}"#, "3 v 2,2 4 A1,A2 B1,C1");
    play(&mut g, "A3");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
    assert_eq!(g.to_act(), None);
    assert_eq!(g.to_act(), None);
}

#[test]
fn uncovering_an_opponent_connection_loses_at_once() {
    let mut g = load(r#"{"size":4}"#, B_COLUMN);
    play(&mut g, "A4-B3'");
    play(&mut g, "D1");
    assert_eq!(g.outcome(), None);
    // Horz lifts B3': vert's B2-B3 link is no longer crossed, and vert wins on horz's turn.
    assert!(moves_from(&g, "B3'").contains(&"B3'-D2".to_string()));
    play(&mut g, "B3'-D2");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
}

#[test]
fn opponent_connection_is_checked_before_nodelay() {
    // Vert's add connects vert, but horz is already connected: horz (Q) wins first.
    let mut h = load(r#"{"size":3,"nodelay":true}"#, "3 v 2,1 6 A1,A2 A3,B3,C3");
    assert!(h.connected(Side::Second));
    play(&mut h, "B1");
    assert_eq!(
        h.outcome(),
        Some(Outcome {
            winner: Some(Side::Second),
            reason: Reason::Connection
        })
    );
}

// ---------------------------------------------------------------- other end conditions

#[test]
fn third_repetition_draws() {
    let mut g = load(r#"{"size":4}"#, "4 v 0,0 10 A1,B1 C4,D4");
    let cycle = ["B1-A2", "D4-C3", "A2-B1", "C3-D4"];
    for (i, m) in cycle.iter().chain(cycle.iter()).enumerate() {
        assert_eq!(g.outcome(), None, "ended early before ply {i}");
        play(&mut g, m);
    }
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: Reason::Repetition
        })
    );
    assert_eq!(g.to_act(), None);
}

#[test]
fn no_legal_action_loses() {
    // Horz has an empty pile and a lone ball (no group): after vert's add it cannot act.
    let mut g = load(r#"{"size":3}"#, "3 v 1,0 6 A1,C3 B2");
    play(&mut g, "B1");
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::NoMoves
        })
    );
    assert!(legal(&g).is_empty());
}

// ---------------------------------------------------------------- swap

#[test]
fn swap_keeps_board_and_colour_to_act() {
    let mut g = Akron::start(&opts(r#"{"size":3}"#));
    play(&mut g, "B2");
    let l = legal(&g);
    assert!(l.contains(&"swap".to_string()));
    assert_eq!(l.len(), 9);
    let swap = g.parse_action(" SWAP ").unwrap();
    assert!(g.is_swap(swap));
    assert_eq!(g.format_action(swap), "swap");
    g.apply(swap);
    assert_eq!(g.position(), "3 h 3,4 2 B2 -");
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(g.outcome(), None);
    let l = legal(&g);
    assert_eq!(l.len(), 8, "only adds: no second swap");
    assert!(illegal_reason(&g, "swap").contains("ply 1"));
    play(&mut g, "A1");
    assert_eq!(g.position(), "3 v 3,3 3 B2 A1");
}

#[test]
fn swap_only_at_ply_one_for_horz() {
    let g = Akron::start(&opts(r#"{"size":3}"#));
    assert!(!legal(&g).contains(&"swap".to_string()));
    let g = load(r#"{"size":3}"#, "3 h 3,4 1 B2 -");
    assert!(legal(&g).contains(&"swap".to_string()));
    assert_eq!(g.view()["swap_available"], json!(true));
    let g = load(r#"{"size":3}"#, "3 v 3,4 1 B2 -");
    assert!(!legal(&g).contains(&"swap".to_string()));
}

// ---------------------------------------------------------------- options

fn options_error(json: serde_json::Value) -> String {
    match kind("akron").unwrap().validate_options(&json) {
        Err(RulesError::InvalidOptions(m)) => m,
        other => panic!("expected invalid options for {json}, got {other:?}"),
    }
}

#[test]
fn options_defaults_and_normalisation() {
    let k = kind("akron").unwrap();
    assert_eq!(
        k.validate_options(&json!(null)).unwrap(),
        json!({"size": 9, "pieces": 40, "nodelay": false})
    );
    assert_eq!(
        k.validate_options(&json!({"size": 3})).unwrap(),
        json!({"size": 3, "pieces": 4, "nodelay": false})
    );
    assert_eq!(
        k.validate_options(&json!({"size": 16, "nodelay": true}))
            .unwrap(),
        json!({"size": 16, "pieces": 128, "nodelay": true})
    );
    assert_eq!(
        k.validate_options(&json!({"size": 5, "pieces": 5}))
            .unwrap(),
        json!({"size": 5, "pieces": 5, "nodelay": false})
    );
    assert_eq!(
        k.validate_options(&json!({"pieces": 1000})).unwrap(),
        json!({"size": 9, "pieces": 1000, "nodelay": false})
    );
}

#[test]
fn options_errors_name_the_field_and_range() {
    let m = options_error(json!({"size": 2}));
    assert!(
        m.contains("size") && m.contains("3..=16") && m.contains('2'),
        "{m}"
    );
    let m = options_error(json!({"size": 17}));
    assert!(m.contains("size") && m.contains("3..=16"), "{m}");
    let m = options_error(json!({"size": "big"}));
    assert!(m.contains("size") && m.contains("3..=16"), "{m}");
    let m = options_error(json!({"size": -3}));
    assert!(m.contains("size") && m.contains("3..=16"), "{m}");
    let m = options_error(json!({"size": 4.5}));
    assert!(m.contains("size"), "{m}");
    let m = options_error(json!({"size": 3, "pieces": 2}));
    assert!(m.contains("pieces") && m.contains("3..=1000"), "{m}");
    let m = options_error(json!({"pieces": 1001}));
    assert!(m.contains("pieces") && m.contains("9..=1000"), "{m}");
    let m = options_error(json!({"pieces": "many"}));
    assert!(m.contains("pieces"), "{m}");
    let m = options_error(json!({"nodelay": 1}));
    assert!(m.contains("nodelay") && m.contains("true or false"), "{m}");
    let m = options_error(json!({"delay": true}));
    assert!(m.contains("unknown field") && m.contains("delay"), "{m}");
    let m = options_error(json!([1, 2]));
    assert!(m.contains("object"), "{m}");
}

// ---------------------------------------------------------------- position strings

#[test]
fn position_round_trips_and_canonical_order() {
    let o = opts(r#"{"size":8}"#);
    let shuffled = "8 v 21,26 20 h8,E7',B7,C8,D6,D7,D8,E6,F7,G7,B6 G6,F6,E8,E7,C7,B8";
    let g = Akron::from_position(&o, shuffled).unwrap();
    assert_eq!(g.position(), D6_CANONICAL);
    let example = Akron::from_position(&o, D6_EXAMPLE).unwrap();
    assert_eq!(example.position(), D6_CANONICAL);
    let again = Akron::from_position(&o, D6_CANONICAL).unwrap();
    assert_eq!(again.position(), D6_CANONICAL);
    let padded = Akron::from_position(&o, &format!("  {D6_EXAMPLE}\n")).unwrap();
    assert_eq!(padded.position(), D6_CANONICAL);
}

fn position_error(options: &str, position: &str) -> String {
    match Akron::from_position(&opts(options), position) {
        Err(RulesError::InvalidPosition(m)) => m,
        other => panic!("expected invalid position for '{position}', got {other:?}"),
    }
}

#[test]
fn position_errors_say_what_is_wrong() {
    let e = position_error("{}", "9 v 40,40 0 -");
    assert!(e.contains("6 fields"), "{e}");
    let e = position_error("{}", "9  v 40,40 0 - -");
    assert!(e.contains("single spaces"), "{e}");
    let e = position_error("{}", "2 v 1,1 0 - -");
    assert!(e.contains("size"), "{e}");
    let e = position_error("{}", "x v 1,1 0 - -");
    assert!(e.contains("size"), "{e}");
    let e = position_error("{}", "9 x 40,40 0 - -");
    assert!(e.contains("'v' or 'h'"), "{e}");
    let e = position_error("{}", "9 v 40;40 0 - -");
    assert!(e.contains("piles"), "{e}");
    let e = position_error("{}", "9 v 40,-1 0 - -");
    assert!(e.contains("horz pile"), "{e}");
    let e = position_error("{}", "9 v 40,40 z - -");
    assert!(e.contains("ply"), "{e}");
    let e = position_error("{}", "9 v 39,40 1 A1,a1 -");
    assert!(e.contains("A1 is listed twice"), "{e}");
    let e = position_error("{}", "9 v 39,39 2 A1 A1");
    assert!(e.contains("A1 is listed twice"), "{e}");
    let e = position_error("{}", "9 v 39,40 1 B2' -");
    assert!(e.contains("B2'") && e.contains("not supported"), "{e}");
    let e = position_error("{}", "9 v 39,40 1 J1 -");
    assert!(e.contains("no point J1"), "{e}");
    let e = position_error("{}", "9 v 39,40 1 A1, -");
    assert!(e.contains("vert balls"), "{e}");
    let e = position_error("{}", "9 v 40,40 1 A1 -");
    assert!(e.contains("40 pieces"), "{e}");
    let e = position_error("{}", "8 v 1001,0 1 - -");
    assert!(e.contains("1000 pieces"), "{e}");
    let e = position_error("{}", "9 v 40,40 0 é -");
    assert!(e.contains("vert balls"), "{e}");
    let e = position_error("{}", "");
    assert!(e.contains("6 fields"), "{e}");
}

// ---------------------------------------------------------------- notation

#[test]
fn notation_input_forms() {
    let g = Akron::start(&opts(r#"{"size":8}"#));
    let a = g.parse_action("  a2-d3'\t").unwrap();
    assert_eq!(g.format_action(a), "A2-D3'");
    let b = g.parse_action("A2-D3'").unwrap();
    assert_eq!(a, b);
    let raised = g.parse_action("d3'-f5").unwrap();
    assert_eq!(g.format_action(raised), "D3'-F5");
    let add = g.parse_action("f6").unwrap();
    assert_eq!(g.format_action(add), "F6");
    assert!(matches!(add, Action::Add(_)));
    assert_eq!(g.parse_action("Swap").unwrap(), Action::Swap);
    let top = g.parse_action("A8'''''''").unwrap();
    assert_eq!(g.format_action(top), "A8'''''''");
    // Point names: (1,3,2) is D4', (2,3,3) is D6''.
    let p = g.parse_action("D4'").unwrap();
    assert_eq!(g.format_action(p), "D4'");
    let p = g.parse_action("d6''").unwrap();
    assert_eq!(g.format_action(p), "D6''");
}

#[test]
fn malformed_notation_is_rejected() {
    let g = Akron::start(&opts(r#"{"size":8}"#));
    for bad in [
        "",
        "  ",
        "A",
        "A0",
        "A01",
        "1A",
        "A1-",
        "-A1",
        "A1-B2-C3",
        "A1 - B2",
        "A1--B2",
        "I1",
        "A9",
        "A1'",
        "A8''''''''",
        "H2'",
        "A1x",
        "A1\"",
        "swap2",
        "é1",
        "A99999999999999",
        "A1'-",
        "Ä1",
    ] {
        match g.parse_action(bad) {
            Err(RulesError::BadNotation { .. }) => {}
            other => panic!("'{bad}' should be bad notation, got {other:?}"),
        }
    }
}

// ---------------------------------------------------------------- view

#[test]
fn view_shows_every_level() {
    let g = load(r#"{"size":8}"#, D6_EXAMPLE);
    let v = g.view();
    let geo = g.geometry();
    // Static facts are in the geometry, not in the view (nor the side to act, nor the ply:
    // the document has them).
    for key in ["size", "to_act", "ply", "pieces", "nodelay"] {
        assert!(v.get(key).is_none(), "{key} is not in the view");
    }
    assert_eq!(geo["size"], json!(8));
    assert_eq!(geo["pieces"], json!(32));
    assert_eq!(geo["nodelay"], json!(false));
    assert_eq!(v["piles"], json!({"vert": 21, "horz": 26}));
    assert_eq!(v["swap_available"], json!(false));
    assert_eq!(v["connected"], json!({"vert": false, "horz": false}));
    let levels = v["levels"].as_array().unwrap();
    let geo_levels = geo["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 8);
    assert_eq!(geo_levels.len(), 8);
    for (k, level) in levels.iter().enumerate() {
        assert_eq!(geo_levels[k]["level"], json!(k));
        assert_eq!(geo_levels[k]["size"], json!(8 - k));
        assert_eq!(level["rows"].as_array().unwrap().len(), 8 - k);
    }
    // D6 is column 3, row 5 of level 0; E7' is column 4, row 5 of level 1.
    assert_eq!(levels[0]["rows"][5][3], json!("vert"));
    assert_eq!(levels[0]["rows"][5][5], json!("horz"));
    assert_eq!(levels[0]["rows"][0][0], json!(null));
    assert_eq!(levels[1]["rows"][5][4], json!("vert"));
    let balls = v["balls"].as_array().unwrap();
    assert_eq!(balls.len(), 17);
    assert_eq!(
        balls.last().unwrap(),
        &json!({"point": "E7'", "level": 1, "column": 4, "row": 5, "plan": [9, 11],
                "side": "vert", "cut": false})
    );
    let links = v["links"].as_array().unwrap();
    assert!(
        links.contains(&json!({"a": "B6", "b": "B7", "level": 0, "side": "vert", "cut": false}))
    );
    assert!(
        links.contains(&json!({"a": "E7", "b": "E8", "level": 0, "side": "horz", "cut": false}))
    );
}
