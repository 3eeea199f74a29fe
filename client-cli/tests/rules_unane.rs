//! `stoa rules … unane`: the offline rules tool driving the Ūnane engine, through the real
//! binary.

mod common;

use common::{fails, ok};

use serde_json::{json, Value};

const O54: &str = r#"{"width":5,"height":4}"#;

#[test]
fn start_positions() {
    assert_eq!(
        ok(&["rules", "start", "unane"]),
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb/bwbwbwbw b 0\n"
    );
    assert_eq!(
        ok(&["rules", "start", "unane", "--options", O54]),
        "bwbwb/wbwbw/bwbwb/wbwbw b 0\n"
    );
    assert_eq!(
        ok(&["rules", "start", "unane", "--options", r#"{"height":4}"#]),
        "bwbwbwbw/wbwbwbwb/bwbwbwbw/wbwbwbwb b 0\n"
    );
}

#[test]
fn perft_reference_counts() {
    let o87 = r#"{"width":8,"height":7}"#;
    assert_eq!(
        ok(&["rules", "perft", "unane", "3", "--options", o87]),
        "765446\n"
    );
    assert_eq!(ok(&["rules", "perft", "unane", "2"]), "8909\n");
    assert_eq!(ok(&["rules", "perft", "unane", "1"]), "97\n");
    let o43 = r#"{"width":4,"height":3}"#;
    for (d, n) in [("0", "1"), ("1", "17"), ("2", "221"), ("3", "2022")] {
        assert_eq!(
            ok(&["rules", "perft", "unane", d, "--options", o43]),
            format!("{n}\n")
        );
    }
}

#[test]
fn perft_divide_lines_sum_to_the_total() {
    let out = ok(&[
        "rules",
        "perft",
        "unane",
        "2",
        "--options",
        r#"{"width":4,"height":3}"#,
        "--divide",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 18);
    assert_eq!(*lines.last().unwrap(), "221");
    let sum: u64 = lines[..17]
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 221);
    assert_eq!(lines[0], "a1xa2 14");
    let mut sorted = lines[..17].to_vec();
    sorted.sort();
    assert_eq!(sorted, lines[..17]);
}

#[test]
fn perft_after_moves_and_from_a_position() {
    // After black's first action white has its replies plus swap.
    assert_eq!(
        ok(&[
            "rules",
            "perft",
            "unane",
            "1",
            "--options",
            r#"{"width":4,"height":3}"#,
            "--moves",
            "a3xb3"
        ]),
        "14\n"
    );
    // The example position: `-a4` wins at once, so it adds nothing at depth 3.
    let args = |d: &'static str| {
        [
            "rules",
            "perft",
            "unane",
            d,
            "--options",
            O54,
            "--position",
            "b..../..bw./..bww/.w..w b 8",
        ]
    };
    assert_eq!(ok(&args("3")), "24\n");
    let divide = ok(&[&args("2")[..], &["--divide"]].concat());
    assert!(divide.lines().any(|l| l == "-a4 0"), "{divide}");
}

#[test]
fn legal_lists_the_conformance_examples_sorted() {
    assert_eq!(
        ok(&[
            "rules",
            "legal",
            "unane",
            "--options",
            O54,
            "--position",
            ".w.../wbw../.ww../....b b 5"
        ]),
        "-e1\nb3xa3\nb3xb2\nb3xb4\nb3xc3\n"
    );
    assert_eq!(
        ok(&[
            "rules",
            "legal",
            "unane",
            "--options",
            O54,
            "--position",
            "..bb./bwb../.bb../.w... b 5"
        ]),
        "-c2\n-c4\n-d4\na3xb3\nb2xb1\nb2xb3\nc3xb3\n"
    );
    let out = ok(&["rules", "legal", "unane", "--moves", "a7xa6"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 94);
    assert_eq!(
        ok(&["rules", "perft", "unane", "1", "--moves", "a7xa6"]),
        "94\n"
    );
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert!(lines.contains(&"swap"));
}

#[test]
fn play_prints_the_exact_object() {
    let out = ok(&[
        "rules",
        "play",
        "unane",
        "--options",
        O54,
        "--position",
        "b..../..bw./..bww/.w..w b 8",
        "--moves=A4-a4",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({
            "position": "...../..bw./..bww/.w..w w 9",
            "to_act": null,
            "status": {"state": "ended", "winner": "black", "reason": "one_group"},
            "moves": ["-a4"]
        })
    );
    let out = ok(&[
        "rules",
        "play",
        "unane",
        "--options",
        r#"{"width":4,"height":3}"#,
        "--moves",
        " a3-B3  SWAP d3xc3 ",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({
            "position": ".bw./wbwb/bwbw b 3",
            "to_act": "black",
            "status": {"state": "playing", "winner": null, "reason": null},
            "moves": ["a3xb3", "swap", "d3xc3"]
        })
    );
    let v: Value = serde_json::from_str(&ok(&["rules", "play", "unane", "--moves", ""])).unwrap();
    assert_eq!(v["moves"], json!([]));
    assert_eq!(v["to_act"], "black");
}

#[test]
fn bad_moves_name_index_and_text() {
    let e = fails(&["rules", "play", "unane", "--moves", "a7xa6 a6xa5"]);
    assert!(e.contains("move 2 ('a6xa5')"), "{e}");
    assert!(e.contains("no stone of yours on a6"), "{e}");
    let e = fails(&["rules", "play", "unane", "--moves", "a7xa6 swap zz9"]);
    assert!(e.contains("move 3 ('zz9')"), "{e}");
    let e = fails(&["rules", "legal", "unane", "--moves", "a7xa6 swap swap"]);
    assert!(e.contains("move 3 ('swap')"), "{e}");
    let e = fails(&["rules", "perft", "unane", "1", "--moves", "a7xa5"]);
    assert!(
        e.contains("move 1 ('a7xa5')") && e.contains("not orthogonally adjacent"),
        "{e}"
    );
    let e = fails(&[
        "rules",
        "play",
        "unane",
        "--options",
        O54,
        "--position",
        "b..../..bw./..bww/.w..w b 8",
        "--moves=-a4 b1xc1",
    ]);
    assert!(e.contains("move 2 ('b1xc1')") && e.contains("over"), "{e}");
}

#[test]
fn bad_options_and_positions_exit_2() {
    let e = fails(&[
        "rules",
        "start",
        "unane",
        "--options",
        r#"{"width":5,"height":5}"#,
    ]);
    assert!(e.contains("even"), "{e}");
    let e = fails(&["rules", "start", "unane", "--options", r#"{"width":20}"#]);
    assert!(e.contains("width") && e.contains("3..=16"), "{e}");
    let e = fails(&[
        "rules",
        "legal",
        "unane",
        "--options",
        r#"{"colour":"red"}"#,
    ]);
    assert!(e.contains("colour"), "{e}");
    let e = fails(&["rules", "start", "unane", "--options", "{width:8"]);
    assert!(e.contains("JSON"), "{e}");
    let e = fails(&[
        "rules",
        "legal",
        "unane",
        "--options",
        O54,
        "--position",
        "bwbwb/wbwbw/bwbwb b 0",
    ]);
    assert!(
        e.contains("invalid position") && e.contains("4 ranks"),
        "{e}"
    );
    // Without options the string's own size is used, but it must be a valid board.
    let e = fails(&[
        "rules",
        "perft",
        "unane",
        "1",
        "--position",
        "bwbwb/wbwbw/bwbwb b 0",
    ]);
    assert!(e.contains("invalid position") && e.contains("5x3"), "{e}");
}

#[test]
fn a_position_without_options_uses_its_own_board_size() {
    let out = ok(&[
        "rules",
        "legal",
        "unane",
        "--position",
        ".w.../wbw../.ww../....b b 5",
    ]);
    assert_eq!(out, "-e1\nb3xa3\nb3xb2\nb3xb4\nb3xc3\n");
}
