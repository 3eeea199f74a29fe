//! `stoa rules … staku` through the real binary: perft figures of the issue, sorted legal
//! output, the `play` JSON object, and exit status 2 with clear messages on bad input.

mod common;

use common::{fails, ok};

use serde_json::{json, Value};

const START: &str = "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W,W w 20";

/// A position string: white W on a1, black B on d7, white to act, counter 20.
fn a1_d7() -> String {
    // white W on a1, black B on d7, everything else empty
    let rows = [
        ".,.,.,.,.,.",
        ".,.,.,.,.,.,.",
        ".,.,.,.,.,.,.,.",
        ".,.,.,.,.,.,B",
        ".,.,.,.,.,.,.,.",
        ".,.,.,.,.,.,.",
        "W,.,.,.,.,.",
    ];
    format!("{} w 20", rows.join("/"))
}

#[test]
fn start_prints_the_start_position() {
    assert_eq!(ok(&["rules", "start", "staku"]), format!("{START}\n"));
    assert_eq!(
        ok(&["rules", "start", "staku", "--options", r#"{"max_stack":2}"#]),
        format!("{START}\n")
    );
}

#[test]
fn perft_reference_counts() {
    assert_eq!(ok(&["rules", "perft", "staku", "1"]), "382\n");
    assert_eq!(
        ok(&[
            "rules",
            "perft",
            "staku",
            "1",
            "--options",
            r#"{"max_stack":2}"#
        ]),
        "200\n"
    );
    assert_eq!(ok(&["rules", "perft", "staku", "2"]), "145780\n");
    assert_eq!(
        ok(&[
            "rules",
            "perft",
            "staku",
            "2",
            "--options",
            r#"{"max_stack":2}"#
        ]),
        "39890\n"
    );
}

#[test]
fn perft_divide_from_a_position() {
    let p = a1_d7();
    assert_eq!(
        ok(&["rules", "perft", "staku", "2", "--divide", "--position", &p]),
        "a1-a2 5\na1-b1 5\na1-b2 5\n15\n"
    );
}

#[test]
fn legal_is_sorted_and_complete() {
    let out = ok(&["rules", "legal", "staku"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 382);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert_eq!(lines[0], "a1-a2");
    assert!(lines.contains(&"b1-c1+d1"));
    let p = a1_d7();
    assert_eq!(
        ok(&["rules", "legal", "staku", "--position", &p]),
        "a1-a2\na1-b1\na1-b2\n"
    );
    // after the moves, black's five
    assert_eq!(
        ok(&[
            "rules",
            "legal",
            "staku",
            "--position",
            &p,
            "--moves",
            "a1-b1"
        ]),
        "d7-c7\nd7-c8\nd7-d6\nd7-e7\nd7-e8\n"
    );
}

#[test]
fn play_prints_the_game_object() {
    let out = ok(&["rules", "play", "staku", "--moves", "b1-c1+D1! f1-e1"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({
            "position": "B,B,B,B,B,B/.,B,B,B,B,B,B/NB,.,N,.,.,N,.,N/NW,.,.,N,.,.,./.,.,N,.,.,N,.,N/.,W,W,W,W,W,W/W,W,W,W,W,W w 18",
            "to_act": "white",
            "status": {"state": "playing", "winner": null, "reason": null},
            "moves": ["b1-c1+d1", "f1-e1"],
        })
    );
}

#[test]
fn play_to_a_palace_win_on_the_last_counted_turn() {
    let p = a1_d7().replace("W,.,.,.,.,.", ".,.,.,.,.,.").replace(
        "/.,.,.,.,.,.,./.,.,.,.,.,.,.,./.,.,.,.,.,.,B",
        "/W,.,.,.,.,.,./.,.,.,.,.,.,.,./.,.,.,.,.,.,B",
    );
    let p = p.replace(" w 20", " w 1");
    let v: Value = serde_json::from_str(&ok(&[
        "rules",
        "play",
        "staku",
        "--position",
        &p,
        "--moves",
        "f1-g1",
    ]))
    .unwrap();
    assert_eq!(
        v,
        json!({
            "position": "W,.,.,.,.,./.,.,.,.,.,.,./.,.,.,.,.,.,.,./.,.,.,.,.,.,B/.,.,.,.,.,.,.,./.,.,.,.,.,.,./.,.,.,.,.,. b 0",
            "to_act": null,
            "status": {"state": "ended", "winner": "white", "reason": "palace"},
            "moves": ["f1-g1"],
        })
    );
    let err = fails(&[
        "rules",
        "play",
        "staku",
        "--position",
        &p,
        "--moves",
        "f1-g1 d7-d6",
    ]);
    assert_eq!(err, "error: move 2 ('d7-d6'): the game is already over\n");
}

#[test]
fn bad_moves_name_the_index_and_text() {
    assert_eq!(
        fails(&["rules", "play", "staku", "--moves", "b1-c1+d1 b1-c1"]),
        "error: move 2 ('b1-c1'): illegal move 'b1-c1': no token on b1\n"
    );
    assert_eq!(
        fails(&["rules", "play", "staku", "--moves", "b1-c1-d1"]),
        "error: move 1 ('b1-c1-d1'): illegal move 'b1-c1-d1': the second move from c1 may only lift + (2 tokens)\n"
    );
    assert_eq!(
        fails(&["rules", "legal", "staku", "--moves", "a1-a2 f1-e1 b2=c3"]),
        "error: move 3 ('b2=c3'): unparsable move 'b2=c3': unexpected '=' (operators are - + *)\n"
    );
}

#[test]
fn bad_options_and_positions_exit_2() {
    assert_eq!(
        fails(&[
            "rules",
            "perft",
            "staku",
            "1",
            "--options",
            r#"{"max_stack":4}"#
        ]),
        "error: invalid options: staku: max_stack must be 2 or 3, got 4\n"
    );
    let err = fails(&["rules", "start", "staku", "--options", r#"{"maxstack":2}"#]);
    assert!(err.contains("unknown field `maxstack`"), "{err}");
    let err = fails(&["rules", "start", "staku", "--options", "{"]);
    assert!(
        err.starts_with("error: invalid options: --options JSON is invalid"),
        "{err}"
    );
    // key=value pairs, as `host` and `play` take them, mean the same as the JSON object.
    assert_eq!(
        ok(&["rules", "start", "staku", "--options", "max_stack=3"]),
        ok(&["rules", "start", "staku", "--options", r#"{"max_stack":3}"#])
    );
    assert_eq!(
        fails(&["rules", "legal", "staku", "--position", "x w 20"]),
        "error: invalid position: expected 7 rows g..a separated by '/', got 1\n"
    );
    let p = a1_d7().replace("W,.", "WN,.");
    assert_eq!(
        fails(&["rules", "legal", "staku", "--position", &p]),
        "error: invalid position: cell a1: 'WN' is not a legal stack (one colour with neutrals, no neutral above a coloured token)\n"
    );
    let p = a1_d7().replace("W,.", "NWW,.");
    assert_eq!(
        fails(&[
            "rules",
            "legal",
            "staku",
            "--options",
            r#"{"max_stack":2}"#,
            "--position",
            &p
        ]),
        "error: invalid position: cell a1: stack of 3 tokens exceeds max_stack 2\n"
    );
}
