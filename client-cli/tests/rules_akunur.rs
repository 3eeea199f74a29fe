//! `stoa rules … akunur`: the real binary, exact output and exit statuses.

mod common;

use common::{fails, ok};

use serde_json::{json, Value};

const START: &str =
    "...../....../......./......../........./......../......./....../..... l 0,0 111111 0,0 0 0";
const EXAMPLE: &str =
    ".L.../....../..LDL../......../........./......../......./....../..... l 12,12 111111 0,0 0 0";

#[test]
fn perft_counts() {
    assert_eq!(ok(&["rules", "perft", "akunur", "1"]), "48\n");
    assert_eq!(ok(&["rules", "perft", "akunur", "2"]), "2256\n");
    assert_eq!(
        ok(&[
            "rules",
            "perft",
            "akunur",
            "2",
            "--options",
            r#"{"corners_to_win":4}"#
        ]),
        "2256\n"
    );
    let divide = ok(&["rules", "perft", "akunur", "2", "--divide"]);
    let lines: Vec<&str> = divide.lines().collect();
    assert_eq!(lines.len(), 49);
    assert_eq!(lines[0], "a2 47");
    assert_eq!(lines[48], "2256");
}

#[test]
fn start_prints_the_start_position() {
    assert_eq!(ok(&["rules", "start", "akunur"]), format!("{START}\n"));
}

#[test]
fn legal_is_sorted() {
    let out = ok(&["rules", "legal", "akunur"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 48);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert_eq!(&lines[..4], ["a2", "a3", "a4", "b1"]);
    assert!(!lines.contains(&"e5") && !lines.contains(&"f6") && !lines.contains(&"i9"));
    assert!(lines.contains(&"g7"));

    // The conformance example position: exact list.
    let out = ok(&["rules", "legal", "akunur", "--position", EXAMPLE]);
    assert_eq!(
        out,
        "e7-d6\ne7-d7\ne7-e6\ne7-e8\ne7-f8\nf9-e8\nf9-f8\nf9-g9\ng7-f6\ng7-g6\ng7-g8\ng7-h7\ng7-h8\n"
    );
}

#[test]
fn play_prints_the_game() {
    let out = ok(&[
        "rules",
        "play",
        "akunur",
        "--position",
        EXAMPLE,
        "--moves",
        "F9-F8",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({
            "position": "...../..L.../..L.L../......../........./......../...D.../....../..... d 12,12 111111 0,0 0 0",
            "to_act": "dark",
            "status": {"state": "playing", "winner": null, "reason": null},
            "moves": ["f9-f8"],
        })
    );
    let out = ok(&[
        "rules",
        "play",
        "akunur",
        "--position",
        "...../....../......./......../........./......../......./....../L.... l 12,12 111111 0,0 0 0",
        "--moves",
        "pass pass",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({
            "position": "...../....../......./......../........./......../......./....../L.... l 12,12 111111 0,0 0 2",
            "to_act": null,
            "status": {"state": "ended", "winner": null, "reason": "passes"},
            "moves": ["pass", "pass"],
        })
    );
}

#[test]
fn errors_exit_with_status_2() {
    let err = fails(&["rules", "play", "akunur", "--moves", "c3 e5"]);
    assert!(err.contains("move 2 ('e5')"), "{err}");
    assert!(err.contains("Still Point"), "{err}");
    let err = fails(&["rules", "play", "akunur", "--moves", "c3 zz"]);
    assert!(err.contains("move 2 ('zz')"), "{err}");
    let err = fails(&[
        "rules",
        "legal",
        "akunur",
        "--options",
        r#"{"corners_to_win":5}"#,
    ]);
    assert!(err.contains("corners_to_win"), "{err}");
    assert!(err.contains("3 (standard) or 4 (extended)"), "{err}");
    let err = fails(&["rules", "legal", "akunur", "--options", r#"{"corner":3}"#]);
    assert!(err.contains("unknown field"), "{err}");
    let err = fails(&["rules", "legal", "akunur", "--position", "nonsense"]);
    assert!(err.contains("invalid position"), "{err}");
    let err = fails(&[
        "rules",
        "play",
        "akunur",
        "--position",
        "...../....../......./......../........./......../......./....../L.... l 12,12 111111 0,0 0 2",
        "--moves",
        "pass",
    ]);
    assert!(err.contains("move 1 ('pass')"), "{err}");
    assert!(err.contains("over"), "{err}");
}
