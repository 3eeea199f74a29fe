//! `stoa rules … akron` through the real binary: perft counts, legal output, play JSON and
//! error exits.

mod common;

use common::{fails, ok};

use serde_json::{json, Value};

fn play(args: &[&str]) -> Value {
    let mut all = vec!["rules", "play", "akron"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(&all)).expect("play prints JSON")
}

const SIZE3: &str = r#"{"size":3}"#;

#[test]
fn perft_reference_counts() {
    assert_eq!(
        ok(&["rules", "perft", "akron", "4", "--options", SIZE3]),
        "3528\n"
    );
    assert_eq!(
        ok(&["rules", "perft", "akron", "3", "--options", SIZE3]),
        "576\n"
    );
    assert_eq!(
        ok(&["rules", "perft", "akron", "3", "--options", r#"{"size":4}"#]),
        "3600\n"
    );
    assert_eq!(
        ok(&["rules", "perft", "akron", "2", "--options", r#"{"size":4}"#]),
        "256\n"
    );
    assert_eq!(ok(&["rules", "perft", "akron", "1"]), "81\n");
}

#[test]
fn perft_divide_after_the_first_add() {
    let out = ok(&[
        "rules",
        "perft",
        "akron",
        "1",
        "--options",
        SIZE3,
        "--moves",
        "B2",
        "--divide",
    ]);
    assert_eq!(
        out,
        "A1 1\nA2 1\nA3 1\nB1 1\nB3 1\nC1 1\nC2 1\nC3 1\nswap 1\n9\n"
    );
}

#[test]
fn start_positions() {
    assert_eq!(ok(&["rules", "start", "akron"]), "9 v 40,40 0 - -\n");
    assert_eq!(
        ok(&[
            "rules",
            "start",
            "akron",
            "--options",
            r#"{"size":5,"pieces":7}"#
        ]),
        "5 v 7,7 0 - -\n"
    );
}

#[test]
fn legal_output_is_sorted() {
    assert_eq!(
        ok(&[
            "rules",
            "legal",
            "akron",
            "--options",
            SIZE3,
            "--moves",
            "b2"
        ]),
        "A1\nA2\nA3\nB1\nB3\nC1\nC2\nC3\nswap\n"
    );
    let out = ok(&[
        "rules",
        "legal",
        "akron",
        "--options",
        r#"{"size":8}"#,
        "--position",
        "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    let d6: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("D6-"))
        .collect();
    assert_eq!(
        d6,
        ["D6-B8'", "D6-C8'", "D6-D8'", "D6-E5", "D6-F7'", "D6-F8", "D6-G8", "D6-H7"]
    );
}

#[test]
fn play_prints_the_game() {
    assert_eq!(
        play(&["--options", SIZE3, "--moves", "b2 SWAP a1"]),
        json!({
            "position": "3 v 3,3 3 B2 A1",
            "to_act": "vert",
            "status": {"state": "playing", "winner": null, "reason": null},
            "moves": ["B2", "swap", "A1"],
        })
    );
}

#[test]
fn play_connection_with_and_without_delay() {
    assert_eq!(
        play(&[
            "--options",
            r#"{"size":3,"nodelay":true}"#,
            "--moves",
            "A1 B1 A2 B2 A3"
        ]),
        json!({
            "position": "3 h 1,2 5 A1,A2,A3 B1,B2",
            "to_act": null,
            "status": {"state": "ended", "winner": "vert", "reason": "connection"},
            "moves": ["A1", "B1", "A2", "B2", "A3"],
        })
    );
    assert_eq!(
        play(&["--options", SIZE3, "--moves", "A1 B1 A2 B2 A3"])["status"],
        json!({"state": "playing", "winner": null, "reason": null})
    );
    assert_eq!(
        play(&["--options", SIZE3, "--moves", "A1 B1 A2 B2 A3 C3"]),
        json!({
            "position": "3 v 1,1 6 A1,A2,A3 B1,B2,C3",
            "to_act": null,
            "status": {"state": "ended", "winner": "vert", "reason": "connection"},
            "moves": ["A1", "B1", "A2", "B2", "A3", "C3"],
        })
    );
}

#[test]
fn play_from_a_position_with_a_move() {
    let v = play(&[
        "--options",
        r#"{"size":8}"#,
        "--position",
        "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6",
        "--moves",
        "d6-f7'",
    ]);
    assert_eq!(
        v["position"],
        json!("8 h 21,26 21 B6,E6,B7,D7,F7,G7,C8,D8,H8,E7',F7' F6,G6,C7,E7,B8,E8")
    );
    assert_eq!(v["moves"], json!(["D6-F7'"]));
}

#[test]
fn bad_moves_name_the_index_and_text() {
    let e = fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        SIZE3,
        "--moves",
        "B2 B2",
    ]);
    assert!(e.contains("move 2 ('B2')") && e.contains("occupied"), "{e}");
    let e = fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        SIZE3,
        "--moves",
        "Z9",
    ]);
    assert!(
        e.contains("move 1 ('Z9')") && e.contains("no point Z9"),
        "{e}"
    );
    let e = fails(&[
        "rules",
        "legal",
        "akron",
        "--options",
        SIZE3,
        "--moves",
        "A1 swap swap",
    ]);
    assert!(e.contains("move 3 ('swap')") && e.contains("ply 1"), "{e}");
    let e = fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        r#"{"size":3,"nodelay":true}"#,
        "--moves",
        "A1 B1 A2 B2 A3 C3",
    ]);
    assert!(
        e.contains("move 6 ('C3')") && e.contains("already over"),
        "{e}"
    );
}

#[test]
fn bad_options_and_positions() {
    let e = fails(&["rules", "start", "akron", "--options", r#"{"size":2}"#]);
    assert!(e.contains("size") && e.contains("3..=16"), "{e}");
    let e = fails(&[
        "rules",
        "perft",
        "akron",
        "1",
        "--options",
        r#"{"pieces":"x"}"#,
    ]);
    assert!(e.contains("pieces"), "{e}");
    let e = fails(&[
        "rules",
        "legal",
        "akron",
        "--options",
        r#"{"nodelay":"yes"}"#,
    ]);
    assert!(e.contains("nodelay"), "{e}");
    let e = fails(&["rules", "legal", "akron", "--position", "9 v 39,40 1 A2' -"]);
    assert!(e.contains("invalid position") && e.contains("A2'"), "{e}");
    let e = fails(&["rules", "legal", "akron", "--position", "9 v 40,40 0"]);
    assert!(e.contains("invalid position"), "{e}");
}
