//! Independent conformance review of the four rules engines through `stoa rules`, with
//! expectations derived by hand from `protocol/docs/games/*.md` (not from engine output).

mod common;

use common::{fails, ok};

use serde_json::{json, Value};

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

fn legal(kind: &str, options: &str, position: &str, moves: &str) -> Vec<String> {
    let mut args = vec!["rules", "legal", kind, "--options", options];
    if !position.is_empty() {
        args.extend(["--position", position]);
    }
    if !moves.is_empty() {
        args.extend(["--moves", moves]);
    }
    lines(&ok(&args))
}

fn play(kind: &str, options: &str, position: &str, moves: &str) -> Value {
    let mut args = vec!["rules", "play", kind, "--options", options];
    if !position.is_empty() {
        args.extend(["--position", position]);
    }
    if !moves.is_empty() {
        args.extend(["--moves", moves]);
    }
    serde_json::from_str(&ok(&args)).unwrap()
}

fn perft(kind: &str, options: &str, position: &str, depth: u32) -> u64 {
    let d = depth.to_string();
    let mut args = vec!["rules", "perft", kind, "--options", options];
    if !position.is_empty() {
        args.extend(["--position", position]);
    }
    args.push(&d);
    ok(&args).trim().parse().unwrap()
}

fn playing() -> Value {
    json!({"state": "playing", "winner": null, "reason": null})
}

fn ended(winner: Option<&str>, reason: &str) -> Value {
    json!({"state": "ended", "winner": winner, "reason": reason})
}

/// A Staku position string from `cell=TOKENS` pairs (rows g..a, 6-7-8-7-8-7-6 cells).
fn staku_pos(cells: &[(&str, &str)], tail: &str) -> String {
    let rows: Vec<String> = [
        ('g', 6),
        ('f', 7),
        ('e', 8),
        ('d', 7),
        ('c', 8),
        ('b', 7),
        ('a', 6),
    ]
    .iter()
    .map(|&(r, n)| {
        (1..=n)
            .map(|i| {
                let name = format!("{r}{i}");
                cells
                    .iter()
                    .find(|(c, _)| *c == name)
                    .map_or(".".to_string(), |(_, t)| t.to_string())
            })
            .collect::<Vec<_>>()
            .join(",")
    })
    .collect();
    format!("{} {tail}", rows.join("/"))
}

/// An Akunur position string from `cell=L|D` pairs (rows 9 down to 1).
fn akunur_pos(cells: &[(&str, char)], tail: &str) -> String {
    let mut rows = Vec::new();
    for y in (0..9i32).rev() {
        let mut row = String::new();
        for x in 0..9i32 {
            if (x - y).abs() > 4 {
                continue;
            }
            let name = format!("{}{}", (b'a' + x as u8) as char, y + 1);
            row.push(cells.iter().find(|(c, _)| *c == name).map_or('.', |c| c.1));
        }
        rows.push(row);
    }
    format!("{} {tail}", rows.join("/"))
}

// ---------------------------------------------------------------- Ūnane

const U54: &str = r#"{"width":5,"height":4}"#;

#[test]
fn unane_options_and_start() {
    assert_eq!(
        ok(&["rules", "start", "unane", "--options", U54]),
        "bwbwb/wbwbw/bwbwb/wbwbw b 0\n"
    );
    // 3x4: top-left a4 black.
    assert_eq!(
        ok(&[
            "rules",
            "start",
            "unane",
            "--options",
            r#"{"width":3,"height":4}"#
        ]),
        "bwb/wbw/bwb/wbw b 0\n"
    );
    // Omitted fields take their defaults (8x7 with one side given).
    assert_eq!(
        ok(&["rules", "start", "unane", "--options", r#"{"height":7}"#]),
        ok(&["rules", "start", "unane"])
    );
    for bad in [
        r#"{"width":3,"height":3}"#,
        r#"{"width":2,"height":4}"#,
        r#"{"width":17,"height":4}"#,
        r#"{"width":16,"height":17}"#,
        r#"{"width":"8"}"#,
        r#"{"width":8.5}"#,
        r#"{"width":-8}"#,
        "[1]",
        "{",
    ] {
        let e = fails(&["rules", "start", "unane", "--options", bad]);
        assert!(e.contains("options"), "{bad}: {e}");
    }
    // Opening action count 2WH - W - H on full boards.
    for (w, h) in [(3, 4), (4, 3), (16, 16), (16, 15), (6, 5)] {
        let o = format!(r#"{{"width":{w},"height":{h}}}"#);
        assert_eq!(perft("unane", &o, "", 1), 2 * w * h - w - h, "{w}x{h}");
    }
    let big = legal("unane", r#"{"width":16,"height":16}"#, "", "");
    assert!(big.contains(&"p15xp16".to_string()));
    assert!(!big.contains(&"p16xp15".to_string()));
    assert!(big.contains(&"a16xb16".to_string()));
}

#[test]
fn unane_page_examples() {
    let l = legal("unane", U54, ".w.../wbw../.ww../....b b 5", "");
    for m in ["b3xb4", "b3xa3", "b3xc3", "b3xb2", "-e1"] {
        assert!(l.contains(&m.to_string()), "{m}");
    }
    assert!(!l.contains(&"b3xc2".to_string()));
    assert!(!l.iter().any(|m| m.starts_with("e1x")));
    let l = legal("unane", U54, "..bb./bwb../.bb../.w... b 5", "");
    let removals: Vec<&String> = l.iter().filter(|m| m.starts_with('-')).collect();
    assert_eq!(removals, ["-c2", "-c4", "-d4"]);
    let g = play("unane", U54, "b..../..bw./..bww/.w..w b 8", " -A4 ");
    assert_eq!(g["status"], ended(Some("black"), "one_group"));
    assert_eq!(g["to_act"], Value::Null);
    assert_eq!(g["moves"], json!(["-a4"]));
    assert_eq!(g["position"], "...../..bw./..bww/.w..w w 9");
    // The same position loaded does not end by itself.
    let g = play("unane", U54, "...../..bw./..bww/.w..w w 9", "");
    assert_eq!(g["status"], playing());
    // Alternative input form of a removal.
    let g = play("unane", U54, "b..../..bw./..bww/.w..w b 8", "a4-a4");
    assert_eq!(g["moves"], json!(["-a4"]));
    assert!(legal("unane", U54, "b..../..bw./..bww/.w..w b 8", "-a4").is_empty());
    let out = ok(&[
        "rules",
        "perft",
        "unane",
        "--options",
        U54,
        "--position",
        "b..../..bw./..bww/.w..w b 8",
        "3",
        "--divide",
    ]);
    assert!(out.lines().any(|l| l == "-a4 0"), "{out}");
}

#[test]
fn unane_end_order() {
    // Black captures and ends as one group while white is one group too: black wins.
    let g = play("unane", U54, "bw.../...../...../..... b 7", "a4xb4");
    assert_eq!(g["status"], ended(Some("black"), "one_group"));
    // Black removes a stone, staying in two groups, white is one group: white wins.
    let g = play("unane", U54, "b.b../...../...../ww... b 7", "-a4");
    assert_eq!(g["status"], ended(Some("black"), "one_group"));
    let g = play("unane", U54, "b.b.b/...../...../ww... b 7", "-a4");
    assert_eq!(g["status"], ended(Some("white"), "one_group"));
}

#[test]
fn unane_swap_and_notation() {
    let g = play("unane", U54, "", "a4xa3 SWAP");
    assert_eq!(g["status"], playing());
    assert_eq!(g["to_act"], "white");
    assert_eq!(g["moves"], json!(["a4xa3", "swap"]));
    assert_eq!(g["position"], ".wbwb/bbwbw/bwbwb/wbwbw w 2");
    // Swap only once, only at ply 1, never for black.
    let e = fails(&[
        "rules",
        "play",
        "unane",
        "--options",
        U54,
        "--moves",
        "a4xa3 swap swap",
    ]);
    assert!(e.contains("move 3") && e.contains("swap"), "{e}");
    let e = fails(&[
        "rules",
        "play",
        "unane",
        "--options",
        U54,
        "--moves",
        "swap",
    ]);
    assert!(e.contains("move 1"), "{e}");
    assert!(legal("unane", U54, "", "a4xa3").contains(&"swap".to_string()));
    assert!(!legal("unane", U54, "", "a4xa3 swap").contains(&"swap".to_string()));
    assert!(!legal("unane", U54, "", "a4xa3 e1xe2").contains(&"swap".to_string()));
    assert!(legal("unane", U54, "bwbwb/wbwbw/bwbwb/wbwbw w 1", "").contains(&"swap".to_string()));
    assert!(!legal("unane", U54, "bwbwb/wbwbw/bwbwb/wbwbw b 1", "").contains(&"swap".to_string()));
    // Alternative capture form and case.
    let g = play("unane", U54, "", "A4-A3");
    assert_eq!(g["moves"], json!(["a4xa3"]));
    for bad in ["a4xa5", "a4xb3", "a4xa4", "pass", "a4", "a4xa3!", "f1xe1"] {
        let e = fails(&["rules", "play", "unane", "--options", U54, "--moves", bad]);
        assert!(e.contains("move 1") && e.contains(bad), "{bad}: {e}");
    }
    // Moves to empty cells do not exist.
    let e = fails(&[
        "rules",
        "play",
        "unane",
        "--options",
        U54,
        "--moves",
        "a4xa3 b4xa4",
    ]);
    assert!(e.contains("move 2") && e.contains("b4xa4"), "{e}");
}

#[test]
fn unane_reference_perft() {
    let o = r#"{"width":4,"height":3}"#;
    assert_eq!(perft("unane", o, "", 1), 17);
    assert_eq!(perft("unane", o, "", 2), 221);
    assert_eq!(perft("unane", o, "", 3), 2022);
    assert_eq!(perft("unane", "{}", "", 2), 8909);
}

// ---------------------------------------------------------------- Staku

#[test]
fn staku_options_start_perft() {
    let start = "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W,W w 20";
    assert_eq!(ok(&["rules", "start", "staku"]), format!("{start}\n"));
    assert_eq!(perft("staku", "{}", "", 1), 382);
    assert_eq!(perft("staku", r#"{"max_stack":2}"#, "", 1), 200);
    let singles: Vec<String> = legal("staku", "{}", "", "")
        .into_iter()
        .filter(|m| m.len() == 5)
        .collect();
    assert_eq!(singles.len(), 60);
    assert_eq!(singles.iter().filter(|m| m.starts_with('a')).count(), 22);
    for bad in [
        r#"{"max_stack":1}"#,
        r#"{"max_stack":4}"#,
        r#"{"max_stack":"3"}"#,
        r#"{"max_stack":2.0}"#,
    ] {
        let e = fails(&["rules", "start", "staku", "--options", bad]);
        assert!(e.contains("max_stack"), "{bad}: {e}");
    }
}

#[test]
fn staku_landing_rules() {
    // c1 = N-N-W, c2 = N, c3 = W; black somewhere harmless.
    let p = staku_pos(
        &[("c1", "NNW"), ("c2", "N"), ("c3", "W"), ("g3", "B")],
        "w 20",
    );
    let l = legal("staku", "{}", &p, "");
    // N-W lifted from N-N-W lands on the lone N ...
    assert!(l.contains(&"c1+c2".to_string()));
    // ... and a unit of 3 never stacks (c2 neighbours c1).
    assert!(!l.iter().any(|m| m.starts_with("c1*c2")));
    // c1 touches only c2, d1, b1; a 3-unit goes up to 3 cells in a straight line.
    assert!(l.contains(&"c1*f2".to_string()));
    assert!(l.contains(&"c1*a1".to_string()));
    assert!(!l
        .iter()
        .any(|m| m.starts_with("c1*b2") || m.starts_with("c1-b2")));
    // After c1+c2 (stacked, lifted 2): whole stack (3) or unstack 1 or 2.
    assert!(l.contains(&"c1+c2*b1".to_string()));
    assert!(l.contains(&"c1+c2+c1".to_string()));
    // Unstacking the top W onto the lone W on c3 makes W-W: legal.
    assert!(l.contains(&"c1+c2-c3".to_string()));
    // The N-W unit may not land on a W (a neutral would stand above it).
    assert!(!l.contains(&"c1+c2+c3".to_string()));
    // A single-token move onto an empty cell gives no second move.
    assert!(l.contains(&"c1-b1".to_string()));
    assert!(!l.iter().any(|m| m.starts_with("c1-b1") && m.len() > 5));
}

#[test]
fn staku_max_stack_2() {
    let p = staku_pos(
        &[("c1", "W"), ("c2", "W"), ("c3", "WW"), ("c4", "N")],
        "w 5",
    );
    let l = legal("staku", r#"{"max_stack":2}"#, &p, "");
    assert!(l.contains(&"c1-c2".to_string()));
    // W-W onto W would make 3.
    assert!(!l.contains(&"c3-c2+c1".to_string()));
    assert!(!l.contains(&"c3+c2".to_string()));
    // N-W (whole stack after W onto N) cannot go onto a W.
    assert!(l.contains(&"c3-c4".to_string()));
    assert!(!l.contains(&"c3-c4+c3".to_string()));
    // W-W onto W makes 3: legal with max_stack 3 only.
    assert!(legal("staku", "{}", &p, "").contains(&"c3+c2".to_string()));
    assert!(legal("staku", "{}", &p, "").contains(&"c3-c2+c1".to_string()));
}

#[test]
fn staku_captures_counter_and_end() {
    // A capture of N-N-B leaves only the attacking unit and resets the counter.
    let p = staku_pos(
        &[("c1", "W"), ("c2", "NNB"), ("g3", "B"), ("a3", "W")],
        "w 5",
    );
    let g = play("staku", "{}", &p, "c1-c2");
    assert_eq!(
        g["position"],
        staku_pos(&[("c2", "W"), ("g3", "B"), ("a3", "W")], "b 20")
    );
    assert_eq!(g["status"], playing());
    // A capture in the second move counts for the turn (counter 1 -> 20), '!' ignored.
    let p = staku_pos(
        &[("c1", "WW"), ("c3", "B"), ("g3", "B"), ("a3", "W")],
        "w 1",
    );
    let g = play("staku", "{}", &p, "C1+C2-C3!");
    assert_eq!(g["moves"], json!(["c1+c2-c3"]));
    assert_eq!(
        g["position"],
        staku_pos(
            &[("c2", "W"), ("c3", "W"), ("g3", "B"), ("a3", "W")],
            "b 20"
        )
    );
    // The last capture-free turn: counter 1 -> 0, drawn; the string shows 0.
    let g = play("staku", "{}", &p, "c1+c2-c1");
    assert_eq!(g["status"], ended(None, "no_capture_limit"));
    assert_eq!(g["to_act"], Value::Null);
    assert!(g["position"].as_str().unwrap().ends_with(" b 0"));
    // Palace before the counter.
    let p = staku_pos(&[("f1", "W"), ("c3", "B"), ("g3", "B"), ("a3", "W")], "w 1");
    let g = play("staku", "{}", &p, "f1-g1");
    assert_eq!(g["status"], ended(Some("white"), "palace"));
    // The counter before "no move": black on g1 walled in by all-neutral 3-stacks.
    let walled = [
        ("g1", "B"),
        ("g2", "NNN"),
        ("f1", "NNN"),
        ("f2", "NNN"),
        ("a3", "W"),
    ];
    let g = play("staku", "{}", &staku_pos(&walled, "w 1"), "a3-b3");
    assert_eq!(g["status"], ended(None, "no_capture_limit"));
    let g = play("staku", "{}", &staku_pos(&walled, "w 5"), "a3-b3");
    assert_eq!(g["status"], ended(Some("white"), "no_moves"));
    assert!(g["position"].as_str().unwrap().ends_with(" b 4"));
    // After the end: no legal actions, perft 0, moves rejected.
    assert!(legal("staku", "{}", &staku_pos(&walled, "w 5"), "a3-b3").is_empty());
    let e = fails(&[
        "rules",
        "play",
        "staku",
        "--position",
        &staku_pos(&walled, "w 5"),
        "--moves",
        "a3-b3 g1-g2",
    ]);
    assert!(e.contains("move 2") && e.contains("g1-g2"), "{e}");
    // A loaded drawn position (counter 0) is over.
    let g = play(
        "staku",
        "{}",
        &staku_pos(&[("c1", "W"), ("g3", "B")], "w 0"),
        "",
    );
    assert_eq!(g["status"], ended(None, "no_capture_limit"));
    assert_eq!(
        perft(
            "staku",
            "{}",
            &staku_pos(&[("c1", "W"), ("g3", "B")], "w 0"),
            2
        ),
        0
    );
}

#[test]
fn staku_notation_errors() {
    let g = play("staku", "{}", "", "B1-C1!+D1!");
    assert_eq!(g["moves"], json!(["b1-c1+d1"]));
    for bad in [
        "b1-c1!!",
        "!b1-c1",
        "a7-b7",
        "b1",
        "b1-c1+d1-e1",
        "b1--c1",
        "swap",
    ] {
        let e = fails(&["rules", "play", "staku", "--moves", bad]);
        assert!(e.contains("move 1") && e.contains(bad), "{bad}: {e}");
    }
    // A single-token move onto an empty cell has no second move.
    let e = fails(&["rules", "play", "staku", "--moves", "b2-c2-d2"]);
    assert!(e.contains("move 1"), "{e}");
    for bad in [
        "x w 20",
        "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W,W w 21",
        "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/WN,W,W,W,W,W w 20",
        "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/WB,W,W,W,W,W w 20",
        "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W w 20",
        "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W,W x 20",
    ] {
        let e = fails(&["rules", "legal", "staku", "--position", bad]);
        assert!(e.contains("position"), "{bad}: {e}");
    }
    // A 3-stack does not fit max_stack 2.
    let p = staku_pos(&[("c1", "WWW"), ("g3", "B")], "w 20");
    let e = fails(&[
        "rules",
        "legal",
        "staku",
        "--options",
        r#"{"max_stack":2}"#,
        "--position",
        &p,
    ]);
    assert!(e.contains("position"), "{e}");
}

// ---------------------------------------------------------------- Akron

const AKRON_EX: &str = "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6";

#[test]
fn akron_options_start_perft() {
    assert_eq!(ok(&["rules", "start", "akron"]), "9 v 40,40 0 - -\n");
    assert_eq!(
        ok(&["rules", "start", "akron", "--options", r#"{"size":3}"#]),
        "3 v 4,4 0 - -\n"
    );
    assert_eq!(
        ok(&[
            "rules",
            "start",
            "akron",
            "--options",
            r#"{"size":16,"pieces":1000,"nodelay":true}"#
        ]),
        "16 v 1000,1000 0 - -\n"
    );
    for bad in [
        r#"{"size":2}"#,
        r#"{"size":17}"#,
        r#"{"size":3,"pieces":2}"#,
        r#"{"pieces":1001}"#,
        r#"{"nodelay":1}"#,
        r#"{"size":"9"}"#,
    ] {
        let e = fails(&["rules", "start", "akron", "--options", bad]);
        assert!(e.contains("options"), "{bad}: {e}");
    }
    let o3 = r#"{"size":3}"#;
    assert_eq!(perft("akron", o3, "", 1), 9);
    assert_eq!(perft("akron", o3, "", 2), 81);
    assert_eq!(perft("akron", o3, "", 3), 576);
    assert_eq!(perft("akron", o3, "", 4), 3528);
    assert_eq!(perft("akron", r#"{"size":4}"#, "", 3), 3600);
    // 16x16 names run up to P.
    let g = play("akron", r#"{"size":16}"#, "", "p16 swap a1 P15");
    assert_eq!(g["position"], "16 h 126,127 4 P15,P16 A1");
    fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        r#"{"size":16}"#,
        "--moves",
        "Q1",
    ]);
}

#[test]
fn akron_page_example_and_moves() {
    let o8 = r#"{"size":8}"#;
    let d6: Vec<String> = legal("akron", o8, AKRON_EX, "")
        .into_iter()
        .filter(|m| m.starts_with("D6-"))
        .collect();
    assert_eq!(
        d6,
        ["D6-B8'", "D6-C8'", "D6-D8'", "D6-E5", "D6-F7'", "D6-F8", "D6-G8", "D6-H7"]
    );
    // Canonical order: level, then row, then column.
    assert_eq!(
        play("akron", o8, AKRON_EX, "")["position"],
        "8 v 21,26 20 B6,D6,E6,B7,D7,F7,G7,C8,D8,H8,E7' F6,G6,C7,E7,B8,E8"
    );
    // A1 carries A2' (drops into A1 when A1 moves); the only destination touching the
    // group {B1, A2'} and not resting on the chain is C1.
    let moves: Vec<String> = legal("akron", "{}", "4 v 5,5 6 A1,B1,A2' A2,B2", "")
        .into_iter()
        .filter(|m| m.contains('-'))
        .collect();
    assert_eq!(moves, ["A1-C1", "A2'-C1"]);
    let g = play("akron", "{}", "4 v 5,5 6 A1,B1,A2' A2,B2", "a1-c1");
    assert_eq!(g["position"], "4 h 5,5 7 A1,B1,C1 A2,B2");
    // B2 supports A2' and B3': pinned. Horz has no legal action at all here.
    let p = "3 v 0,0 12 A1,B2,C3,A2',B3' B1,C1,A2,C2,A3,B3";
    let moves = legal("akron", "{}", p, "");
    assert_eq!(
        moves,
        ["A1-A3'", "A1-B2'", "A2'-A3'", "A2'-B2'", "B3'-A3'", "B3'-B2'", "C3-A3'", "C3-B2'"]
    );
    assert!(legal(
        "akron",
        "{}",
        "3 h 0,0 12 A1,B2,C3,A2',B3' B1,C1,A2,C2,A3,B3",
        ""
    )
    .is_empty());
}

#[test]
fn akron_connection_and_end_order() {
    // Vert connects with A3; without nodelay it must survive horz's reply.
    let p = "3 v 2,2 4 A1,A2 B1,B2";
    let g = play("akron", "{}", p, "a3");
    assert_eq!(g["status"], playing());
    assert_eq!(g["to_act"], "horz");
    let g = play("akron", "{}", p, "a3 c3");
    assert_eq!(g["status"], ended(Some("vert"), "connection"));
    assert!(legal("akron", "{}", p, "a3 c3").is_empty());
    let g = play("akron", r#"{"nodelay":true}"#, p, "a3");
    assert_eq!(g["status"], ended(Some("vert"), "connection"));
    // Crossing: the horz pair A2'-B2' is above the vert pair B1-B2, so vert's column is
    // cut while horz connects A1-A2'-B2'-C1: horz's own add leaves vert unconnected ...
    let p = "3 h 5,5 9 B1,B2,B3 A1,A2,C1,C2,A2',B2'";
    let g = play("akron", "{}", p, "C3");
    assert_eq!(g["status"], playing());
    // ... and a vert action leaves horz connected: horz wins.
    let g = play(
        "akron",
        "{}",
        "3 v 5,5 9 B1,B2,B3 A1,A2,C1,C2,A2',B2'",
        "A3",
    );
    assert_eq!(g["status"], ended(Some("horz"), "connection"));
    // Without the crossing horz pair, vert's column holds.
    let g = play("akron", "{}", "3 h 5,5 9 B1,B2,B3 A1,A2,C1,C2,A2'", "C3");
    assert_eq!(g["status"], ended(Some("vert"), "connection"));
}

#[test]
fn akron_repetition_and_swap() {
    let p = "4 v 0,0 30 A1,A2 C4,D4";
    let cycle = "A1-A3 D4-C3 A3-A1 C3-D4 A1-A3 D4-C3 A3-A1";
    assert_eq!(play("akron", "{}", p, cycle)["status"], playing());
    let g = play("akron", "{}", p, &format!("{cycle} C3-D4"));
    assert_eq!(g["status"], ended(None, "repetition"));
    assert_eq!(g["to_act"], Value::Null);
    let e = fails(&[
        "rules",
        "play",
        "akron",
        "--position",
        p,
        "--moves",
        &format!("{cycle} C3-D4 a1-a3"),
    ]);
    assert!(e.contains("move 9") && e.contains("a1-a3"), "{e}");
    // Swap: only horz at ply 1, once.
    let o3 = r#"{"size":3}"#;
    assert!(legal("akron", o3, "", "b2").contains(&"swap".to_string()));
    assert!(!legal("akron", o3, "", "b2 swap").contains(&"swap".to_string()));
    assert!(!legal("akron", o3, "", "").contains(&"swap".to_string()));
    let g = play("akron", o3, "", "B2 SWAP");
    assert_eq!(g["position"], "3 h 3,4 2 B2 -");
    assert_eq!(g["to_act"], "horz");
    fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        o3,
        "--moves",
        "b2 swap swap",
    ]);
    fails(&[
        "rules",
        "play",
        "akron",
        "--options",
        o3,
        "--moves",
        "b2 a1 swap",
    ]);
    // Adds go on level 0 only; notation errors.
    for bad in ["A2'", "B2-", "Z1", "A0", "A2''-B1", "pass"] {
        let e = fails(&["rules", "play", "akron", "--options", o3, "--moves", bad]);
        assert!(e.contains("move 1"), "{bad}: {e}");
    }
}

// ---------------------------------------------------------------- Akunur

const AKUNUR_START: &str =
    "...../....../......./......../........./......../......./....../..... l 0,0 111111 0,0 0 0";

#[test]
fn akunur_options_start_perft_placement() {
    assert_eq!(
        ok(&["rules", "start", "akunur"]),
        format!("{AKUNUR_START}\n")
    );
    assert_eq!(perft("akunur", "{}", "", 1), 48);
    assert_eq!(perft("akunur", "{}", "", 2), 2256);
    assert_eq!(perft("akunur", "{}", "", 3), 48 * 47 * 46);
    for bad in [
        r#"{"corners_to_win":2}"#,
        r#"{"corners_to_win":5}"#,
        r#"{"corners_to_win":"3"}"#,
    ] {
        let e = fails(&["rules", "start", "akunur", "--options", bad]);
        assert!(e.contains("corners_to_win"), "{bad}: {e}");
    }
    let l = legal("akunur", "{}", "", "");
    assert!(l.contains(&"g7".to_string()));
    for bad in ["e5", "f6", "i9", "a1", "pass", "j1", "a6"] {
        assert!(!l.contains(&bad.to_string()));
        let e = fails(&["rules", "play", "akunur", "--moves", bad]);
        assert!(e.contains("move 1") && e.contains(bad), "{bad}: {e}");
    }
    let g = play("akunur", "{}", "", " G7 ");
    assert_eq!(g["moves"], json!(["g7"]));
    assert_eq!(g["to_act"], "dark");
}

#[test]
fn akunur_capture_echo_tokens_bonus_corners() {
    let g = play(
        "akunur",
        "{}",
        ".L.../....../..LDL../......../........./......../......./....../..... l 12,12 111111 0,0 0 0",
        "F9-F8",
    );
    assert_eq!(
        g["position"],
        akunur_pos(
            &[("e7", 'L'), ("g7", 'L'), ("f8", 'L'), ("d3", 'D')],
            "d 12,12 111111 0,0 0 0"
        )
    );
    // The echo cell's stone (here the mover's own) leaves the game.
    let p = akunur_pos(
        &[
            ("c4", 'D'),
            ("b4", 'L'),
            ("d4", 'L'),
            ("c2", 'L'),
            ("g6", 'L'),
            ("a5", 'D'),
        ],
        "l 12,12 111111 0,0 0 0",
    );
    let g = play("akunur", "{}", &p, "c2-c3");
    assert_eq!(
        g["position"],
        akunur_pos(
            &[
                ("g6", 'D'),
                ("b4", 'L'),
                ("d4", 'L'),
                ("c3", 'L'),
                ("a5", 'D')
            ],
            "d 12,12 111111 0,0 0 0"
        )
    );
    // A stone captured on the Still Point leaves the game.
    let p = akunur_pos(
        &[("e5", 'D'), ("d5", 'L'), ("f6", 'L'), ("e4", 'L')],
        "l 12,12 111111 0,0 0 0",
    );
    let g = play("akunur", "{}", &p, "e4-f5");
    assert_eq!(
        g["position"],
        akunur_pos(
            &[("d5", 'L'), ("f6", 'L'), ("f5", 'L')],
            "d 12,12 111111 0,0 0 0"
        )
    );
    // Corner capture: token, 10 points, bonus placement owed by the mover.
    let p = akunur_pos(
        &[
            ("a1", 'D'),
            ("a2", 'L'),
            ("b2", 'L'),
            ("c1", 'L'),
            ("e1", 'L'),
            ("i5", 'L'),
            ("g7", 'D'),
        ],
        "l 12,12 111111 0,0 0 0",
    );
    let g = play("akunur", "{}", &p, "c1-b1");
    assert_eq!(
        g["position"],
        akunur_pos(
            &[
                ("a2", 'L'),
                ("b2", 'L'),
                ("b1", 'L'),
                ("e1", 'L'),
                ("i5", 'L'),
                ("g7", 'D')
            ],
            "l 12,12 011111 10,0 1 0"
        )
    );
    assert_eq!(g["to_act"], "light");
    assert_eq!(legal("akunur", "{}", &p, "c1-b1").len(), 44);
    let e = fails(&[
        "rules",
        "play",
        "akunur",
        "--position",
        &p,
        "--moves",
        "c1-b1 b1-c1",
    ]);
    assert!(e.contains("move 2"), "{e}");
    let g = play("akunur", "{}", &p, "c1-b1 c3");
    assert!(g["position"]
        .as_str()
        .unwrap()
        .ends_with(" d 13,12 011111 10,0 0 0"));
    // Entering corner a1 needs 2 of its other neighbours (a2, b2): then 3 corners win.
    let g = play("akunur", "{}", &p, "c1-b1 c3 g7-g6 b1-a1");
    assert_eq!(g["status"], ended(Some("light"), "corners"));
    assert_eq!(g["to_act"], Value::Null);
    let g = play(
        "akunur",
        r#"{"corners_to_win":4}"#,
        &p,
        "c1-b1 c3 g7-g6 b1-a1",
    );
    assert_eq!(g["status"], playing());
    // Without support the corner is closed.
    let p = akunur_pos(
        &[("b1", 'L'), ("a2", 'L'), ("g7", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(!legal("akunur", "{}", &p, "").contains(&"b1-a1".to_string()));
}

#[test]
fn akunur_passes_repetition_still_point() {
    let p = akunur_pos(&[("a1", 'L'), ("i9", 'D')], "l 12,12 111111 0,0 0 0");
    assert_eq!(legal("akunur", "{}", &p, ""), ["pass"]);
    let g = play("akunur", "{}", &p, "pass");
    assert_eq!(g["status"], playing());
    assert!(g["position"]
        .as_str()
        .unwrap()
        .ends_with(" d 12,12 111111 0,0 0 1"));
    let g = play("akunur", "{}", &p, "PASS pass");
    assert_eq!(g["status"], ended(None, "passes"));
    let p = akunur_pos(&[("c3", 'L'), ("g7", 'D')], "l 12,12 111111 0,0 0 0");
    fails(&[
        "rules",
        "play",
        "akunur",
        "--position",
        &p,
        "--moves",
        "pass",
    ]);
    let cycle = "c3-c4 g7-g6 c4-c3 g6-g7 c3-c4 g7-g6 c4-c3";
    assert_eq!(play("akunur", "{}", &p, cycle)["status"], playing());
    let g = play("akunur", "{}", &p, &format!("{cycle} g6-g7"));
    assert_eq!(g["status"], ended(None, "repetition"));
    assert!(legal("akunur", "{}", &p, &format!("{cycle} g6-g7")).is_empty());
    // Still Point: entry needs 2 other neighbours; exit goes to any empty non-corner cell.
    let p = akunur_pos(
        &[("d4", 'L'), ("d5", 'L'), ("a5", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(!legal("akunur", "{}", &p, "").contains(&"d4-e5".to_string()));
    let p = akunur_pos(
        &[("d4", 'L'), ("d5", 'L'), ("f6", 'L'), ("a5", 'D')],
        "l 12,12 111111 0,0 0 0",
    );
    assert!(legal("akunur", "{}", &p, "").contains(&"d4-e5".to_string()));
    let p = akunur_pos(&[("e5", 'L'), ("b2", 'D')], "l 12,12 111111 0,0 0 0");
    let l = legal("akunur", "{}", &p, "");
    assert_eq!(l.len(), 61 - 2 - 6);
    assert!(l.contains(&"e5-h8".to_string()));
    assert!(!l.contains(&"e5-i9".to_string()));
}

#[test]
fn cli_errors() {
    let e = fails(&["rules", "start", "chess"]);
    assert!(e.contains("chess"), "{e}");
    let e = fails(&["rules", "legal", "unane", "--position", "xx"]);
    assert!(e.contains("position"), "{e}");
    let e = fails(&["rules", "legal", "akunur", "--position", "xx"]);
    assert!(e.contains("position"), "{e}");
    let e = fails(&["rules", "legal", "akron", "--position", "3 v 4,4 0 A2' -"]);
    assert!(e.contains("position"), "{e}");
    let e = fails(&["rules", "play", "staku", "--moves", "b2-c3 f1-e1 zz"]);
    assert!(e.contains("move 3") && e.contains("zz"), "{e}");
    // Depth 0 is one (empty) sequence.
    assert_eq!(ok(&["rules", "perft", "staku", "0"]), "1\n");
    // --divide: sorted `move count` lines, then the total.
    let out = ok(&[
        "rules",
        "perft",
        "unane",
        "--options",
        r#"{"width":4,"height":3}"#,
        "2",
        "--divide",
    ]);
    let ls: Vec<&str> = out.lines().collect();
    assert_eq!(ls.len(), 18);
    assert_eq!(ls[17], "221");
    let mut sorted = ls[..17].to_vec();
    sorted.sort();
    assert_eq!(sorted, ls[..17]);
    let sum: u64 = ls[..17]
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 221);
}
