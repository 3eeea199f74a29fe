//! The Staku engine against its rules page, sentence by sentence.
//!
//! The core is a deliberately naive, string-based model of the page written independently
//! of the engine (axial coordinates from the page's own formula, token vectors instead of
//! packed bytes, no shared tables): on the start, on random legal positions and along
//! random playouts, both must list exactly the same turns, and every turn must lead to the
//! same position string and the same ending. Then targeted checks of the page's sentences
//! that the existing tests do not pin down exactly.

use std::collections::BTreeSet;

mod staku_positions;
use staku_positions::pos;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stoa_protocol::staku::{Options, Staku};
use stoa_protocol::{Game, Outcome, Reason, RulesError, Side};

const START: &str = "B,B,B,B,B,B/B,B,B,B,B,B,B/N,.,N,.,.,N,.,N/.,.,.,N,.,.,./N,.,N,.,.,N,.,N/W,W,W,W,W,W,W/W,W,W,W,W,W w 20";

// ------------------------------------------------------------------ naive model of the page

const ROW_LEN: [i32; 7] = [6, 7, 8, 7, 8, 7, 6];
const U_FIRST: [i32; 7] = [-1, -2, -3, -3, -4, -4, -4];
/// E, W, NE, NW, SE, SW as on the page.
const DIRS: [(i32, i32); 6] = [(1, 0), (-1, 0), (0, 1), (-1, 1), (1, -1), (0, -1)];

fn uv(name: &str) -> (i32, i32) {
    let r = (name.as_bytes()[0] - b'a') as i32;
    let n: i32 = name[1..].parse().unwrap();
    (U_FIRST[r as usize] + n - 1, r - 3)
}

fn name_at(u: i32, v: i32) -> Option<String> {
    if !(-3..=3).contains(&v) {
        return None;
    }
    let r = (v + 3) as usize;
    let n = u - U_FIRST[r] + 1;
    (1..=ROW_LEN[r])
        .contains(&n)
        .then(|| format!("{}{}", (b'a' + r as u8) as char, n))
}

fn all_cells() -> Vec<String> {
    (0..7)
        .flat_map(|r| (1..=ROW_LEN[r]).map(move |n| format!("{}{}", (b'a' + r as u8) as char, n)))
        .collect()
}

#[derive(Clone, Debug, PartialEq)]
struct Naive {
    cells: std::collections::BTreeMap<String, Vec<char>>, // bottom -> top, 'W' 'B' 'N'
    me: char,                                             // 'W' or 'B'
    counter: u32,
    max: usize,
}

fn legal_stack(s: &[char], max: usize) -> bool {
    if s.len() > max {
        return false;
    }
    let mut seen_colour = None;
    for &t in s {
        if t == 'N' {
            if seen_colour.is_some() {
                return false; // neutral above a coloured token
            }
        } else {
            if seen_colour.is_some_and(|c| c != t) {
                return false;
            }
            seen_colour = Some(t);
        }
    }
    true
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Empty,
    Capture,
    Stack,
}

impl Naive {
    fn parse(pos: &str, max: usize) -> Naive {
        let f: Vec<&str> = pos.split(' ').collect();
        let rows: Vec<&str> = f[0].split('/').collect();
        let mut cells = std::collections::BTreeMap::new();
        for (k, row) in rows.iter().enumerate() {
            let r = 6 - k;
            for (i, c) in row.split(',').enumerate() {
                let name = format!("{}{}", (b'a' + r as u8) as char, i + 1);
                let v: Vec<char> = if c == "." {
                    vec![]
                } else {
                    c.chars().collect()
                };
                cells.insert(name, v);
            }
        }
        Naive {
            cells,
            me: if f[1] == "w" { 'W' } else { 'B' },
            counter: f[2].parse().unwrap(),
            max,
        }
    }

    fn format(&self) -> String {
        let mut rows = Vec::new();
        for r in (0..7).rev() {
            let row: Vec<String> = (1..=ROW_LEN[r])
                .map(|n| {
                    let v = &self.cells[&format!("{}{}", (b'a' + r as u8) as char, n)];
                    if v.is_empty() {
                        ".".to_string()
                    } else {
                        v.iter().collect()
                    }
                })
                .collect();
            rows.push(row.join(","));
        }
        format!(
            "{} {} {}",
            rows.join("/"),
            if self.me == 'W' { "w" } else { "b" },
            self.counter
        )
    }

    fn opp(c: char) -> char {
        if c == 'W' {
            'B'
        } else {
            'W'
        }
    }

    /// Every single move of `k` tokens from `from` by `me` on `cells`: (to, new cells, kind).
    fn moves(
        cells: &std::collections::BTreeMap<String, Vec<char>>,
        me: char,
        max: usize,
        from: &str,
        k: usize,
    ) -> Vec<(String, std::collections::BTreeMap<String, Vec<char>>, Kind)> {
        let stack = &cells[from];
        let mut out = Vec::new();
        if stack.last() != Some(&me) || k > stack.len() || k == 0 {
            return out;
        }
        let unit: Vec<char> = stack[stack.len() - k..].to_vec();
        let rest: Vec<char> = stack[..stack.len() - k].to_vec();
        let (u0, v0) = uv(from);
        for (du, dv) in DIRS {
            for dist in 1..=k as i32 {
                let Some(to) = name_at(u0 + du * dist, v0 + dv * dist) else {
                    break;
                };
                // every passed cell empty
                let blocked = (1..dist).any(|d| {
                    let p = name_at(u0 + du * d, v0 + dv * d).unwrap();
                    !cells[&p].is_empty()
                });
                if blocked {
                    break;
                }
                let target = &cells[&to];
                let (landed, kind) = if target.is_empty() {
                    (unit.clone(), Kind::Empty)
                } else if *target.last().unwrap() == Self::opp(me) {
                    (unit.clone(), Kind::Capture)
                } else {
                    let mut s = target.clone();
                    s.extend(&unit);
                    if !legal_stack(&s, max) {
                        continue;
                    }
                    (s, Kind::Stack)
                };
                let mut next = cells.clone();
                next.insert(from.to_string(), rest.clone());
                next.insert(to.clone(), landed);
                out.push((to, next, kind));
            }
        }
        out
    }

    fn op(k: usize) -> char {
        ['-', '+', '*'][k - 1]
    }

    /// Every legal turn: notation -> (cells after, captured anything).
    #[allow(clippy::type_complexity)]
    fn turns(&self) -> Vec<(String, std::collections::BTreeMap<String, Vec<char>>, bool)> {
        let mut out = Vec::new();
        for from in all_cells() {
            let h = self.cells[&from].len();
            for k in 1..=h {
                for (d, after, kind) in Self::moves(&self.cells, self.me, self.max, &from, k) {
                    let first = format!("{from}{}{d}", Self::op(k));
                    out.push((first.clone(), after.clone(), kind == Kind::Capture));
                    let dh = after[&d].len();
                    let mut sizes = BTreeSet::new();
                    if kind == Kind::Stack {
                        sizes.insert(dh);
                    }
                    if k >= 2 {
                        sizes.insert(1);
                        if dh == 3 {
                            sizes.insert(2);
                        }
                    }
                    for k2 in sizes {
                        for (d2, after2, kind2) in Self::moves(&after, self.me, self.max, &d, k2) {
                            out.push((
                                format!("{first}{}{d2}", Self::op(k2)),
                                after2,
                                kind == Kind::Capture || kind2 == Kind::Capture,
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    /// Plays a turn and returns the outcome by the page's end checks.
    fn play(&self, turn: &str) -> (Naive, Option<(Option<char>, Reason)>) {
        let (_, cells, captured) = self
            .turns()
            .into_iter()
            .find(|(t, _, _)| t == turn)
            .expect("a listed turn");
        let mover = self.me;
        let next = Naive {
            cells,
            me: Self::opp(mover),
            counter: if captured { 20 } else { self.counter - 1 },
            max: self.max,
        };
        let palaces = if mover == 'W' {
            ["g1", "g6"]
        } else {
            ["a1", "a6"]
        };
        let end = if palaces
            .iter()
            .any(|p| next.cells[*p].last() == Some(&mover))
        {
            Some((Some(mover), Reason::Palace))
        } else if next.counter == 0 {
            Some((None, Reason::NoCaptureLimit))
        } else if next.turns().is_empty() {
            Some((Some(mover), Reason::NoMoves))
        } else {
            None
        };
        (next, end)
    }
}

fn engine_turns(g: &Staku) -> BTreeSet<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    let set: BTreeSet<String> = v.iter().map(|&a| g.format_action(a)).collect();
    assert_eq!(set.len(), v.len(), "duplicate turns in {}", g.position());
    set
}

fn side_char(s: Side) -> char {
    if s == Side::First {
        'W'
    } else {
        'B'
    }
}

/// Compares engine and model on one position and, for `follow` of its turns, on the result.
fn compare(g: &Staku, max: usize, rng: &mut StdRng, follow: usize) {
    let naive = Naive::parse(&g.position(), max);
    assert_eq!(naive.format(), g.position());
    let model: BTreeSet<String> = naive.turns().into_iter().map(|t| t.0).collect();
    assert_eq!(engine_turns(g), model, "turns of {}", g.position());
    let list: Vec<String> = model.into_iter().collect();
    for _ in 0..follow.min(list.len()) {
        let t = &list[rng.gen_range(0..list.len())];
        let mut e = *g;
        let a = e.parse_action(t).unwrap();
        e.check(a).unwrap();
        e.apply(a);
        let (n, end) = naive.play(t);
        assert_eq!(e.position(), n.format(), "{} after {t}", g.position());
        let got = e.outcome().map(|o| (o.winner.map(side_char), o.reason));
        assert_eq!(got, end, "{} after {t}", g.position());
        assert_eq!(e.to_act().is_none(), end.is_some());
    }
}

fn random_position(rng: &mut StdRng, max: usize, density: f64) -> String {
    let rows: Vec<String> = (0..7)
        .rev()
        .map(|r| {
            (0..ROW_LEN[r])
                .map(|_| {
                    if !rng.gen_bool(density) {
                        return ".".to_string();
                    }
                    let h = rng.gen_range(1..=max);
                    let neutrals = rng.gen_range(0..=h);
                    let colour = if rng.gen_bool(0.5) { "W" } else { "B" };
                    "N".repeat(neutrals) + &colour.repeat(h - neutrals)
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let side = if rng.gen_bool(0.5) { "w" } else { "b" };
    format!("{} {side} {}", rows.join("/"), rng.gen_range(1..=20))
}

#[test]
fn engine_agrees_with_naive_model_on_the_start() {
    let mut rng = StdRng::seed_from_u64(1);
    for max in [2usize, 3] {
        let g = Staku::start(&Options {
            max_stack: max as u8,
        });
        assert_eq!(g.position(), START);
        compare(&g, max, &mut rng, 40);
        let n = Naive::parse(START, max);
        let turns = n.turns();
        let expected = if max == 3 { 382 } else { 200 };
        assert_eq!(turns.len(), expected);
        assert_eq!(g.perft(1), expected as u64);
    }
}

#[test]
fn engine_agrees_with_naive_model_on_random_positions() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    for i in 0..150 {
        let max = if i % 3 == 0 { 2 } else { 3 };
        let density = [0.2, 0.45, 0.7, 0.9][i % 4];
        let text = random_position(&mut rng, max, density);
        let g = Staku::from_position(
            &Options {
                max_stack: max as u8,
            },
            &text,
        )
        .unwrap();
        if g.outcome().is_some() {
            continue;
        }
        compare(&g, max, &mut rng, 6);
    }
}

#[test]
fn engine_agrees_with_naive_model_along_random_playouts() {
    let mut rng = StdRng::seed_from_u64(77);
    for game in 0..6 {
        let max = if game % 2 == 0 { 3 } else { 2 };
        let mut g = Staku::start(&Options {
            max_stack: max as u8,
        });
        for _ in 0..200 {
            if g.outcome().is_some() {
                break;
            }
            compare(&g, max, &mut rng, 3);
            let mut v = Vec::new();
            g.legal_actions(&mut v);
            let a = v[rng.gen_range(0..v.len())];
            g.apply(a);
        }
    }
}

// ------------------------------------------------------------------ targeted page points

fn load(max: u8, cells: &[(&str, &str)], side: &str, counter: u8) -> Staku {
    let p = pos(cells, side, counter);
    Staku::from_position(&Options { max_stack: max }, &p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn turns_from(g: &Staku, prefix: &str) -> Vec<String> {
    engine_turns(g)
        .into_iter()
        .filter(|t| t.starts_with(prefix))
        .collect()
}

#[test]
fn axial_coordinates_and_neighbour_examples() {
    // d4 = (0,0); first cells of rows a..g have u = -1,-2,-3,-3,-4,-4,-4.
    assert_eq!(uv("d4"), (0, 0));
    // a1 touches a2, b1, b2: a lone W on a1 (white palace) reaches exactly those.
    let g = load(3, &[("a1", "W"), ("g6", "B")], "w", 20);
    assert_eq!(turns_from(&g, "a1"), ["a1-a2", "a1-b1", "a1-b2"]);
    // c8 touches c7, d7, b7.
    let g = load(3, &[("c8", "W"), ("g6", "B")], "w", 20);
    assert_eq!(turns_from(&g, "c8"), ["c8-b7", "c8-c7", "c8-d7"]);
    // d4 touches d3, d5, e4, e5, c4, c5.
    let g = load(3, &[("d4", "W"), ("g6", "B")], "w", 20);
    assert_eq!(
        turns_from(&g, "d4"),
        ["d4-c4", "d4-c5", "d4-d3", "d4-d5", "d4-e4", "d4-e5"]
    );
}

#[test]
fn unit_of_three_moves_one_two_or_three_cells_in_straight_lines_only() {
    let g = load(3, &[("d4", "WWW"), ("g6", "B")], "w", 20);
    let ones: Vec<String> = turns_from(&g, "d4*")
        .into_iter()
        .filter(|t| t.len() == 5)
        .collect();
    // 6 directions x 3 distances, all on board from the centre (d4 to d1/d7, a2..g5 lines).
    // From the page's axial formula: E d5 d6 d7, W d3 d2 d1, NE e5 f5 g5, NW e4 f3 g2,
    // SE c5 b5 a5, SW c4 b3 a2.
    assert_eq!(
        ones,
        [
            "d4*a2", "d4*a5", "d4*b3", "d4*b5", "d4*c4", "d4*c5", "d4*d1", "d4*d2", "d4*d3",
            "d4*d5", "d4*d6", "d4*d7", "d4*e4", "d4*e5", "d4*f3", "d4*f5", "d4*g2", "d4*g5"
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
    );
    // Blocked lines: a token on d5 stops E at d5 (landing on it: stacking too tall for 3).
    let g = load(
        3,
        &[("d4", "WWW"), ("d5", "W"), ("c5", "B"), ("g6", "B")],
        "w",
        20,
    );
    let t: Vec<String> = turns_from(&g, "d4*")
        .into_iter()
        .filter(|t| t.len() == 5)
        .collect();
    assert!(!t
        .iter()
        .any(|m| m == "d4*d5" || m == "d4*d6" || m == "d4*d7"));
    // capture c5 at distance 1 but nothing beyond it
    assert!(t.contains(&"d4*c5".to_string()));
    assert!(!t.iter().any(|m| m == "d4*b5" || m == "d4*a5"));
}

#[test]
fn page_conformance_examples() {
    // A unit N-W lifted from N-N-W may land on a lone N (giving N-N-W) but not on a lone W.
    let g = load(
        3,
        &[("d4", "NNW"), ("d5", "N"), ("d3", "W"), ("g6", "B")],
        "w",
        20,
    );
    let t = turns_from(&g, "d4+");
    assert!(t.contains(&"d4+d5".to_string()));
    assert!(!t.iter().any(|m| m.starts_with("d4+d3")));
    let mut h = g;
    h.apply(h.parse_action("d4+d5").unwrap());
    assert_eq!(
        h.position(),
        pos(
            &[("d4", "N"), ("d5", "NNW"), ("d3", "W"), ("g6", "B")],
            "b",
            19
        )
    );
    // W onto N-N gives N-N-W.
    let mut g = load(3, &[("c4", "W"), ("d4", "NN"), ("g6", "B")], "w", 20);
    g.apply(g.parse_action("c4-d4").unwrap());
    assert_eq!(g.position(), pos(&[("d4", "NNW"), ("g6", "B")], "b", 19));
    // A capture of N-N-B leaves only the attacking unit (and resets the counter).
    let mut g = load(3, &[("c4", "W"), ("d4", "NNB"), ("g6", "B")], "w", 7);
    g.apply(g.parse_action("c4-d4!").unwrap());
    assert_eq!(g.position(), pos(&[("d4", "W"), ("g6", "B")], "b", 20));
    // A unit of 3 never stacks, even onto a lone neutral or a lone friendly token.
    let g = load(
        3,
        &[("d4", "WWW"), ("d5", "N"), ("d3", "W"), ("g6", "B")],
        "w",
        20,
    );
    assert!(!turns_from(&g, "d4*")
        .iter()
        .any(|m| m.starts_with("d4*d5") || m.starts_with("d4*d3")));
}

#[test]
fn all_neutral_cells_block_and_are_never_captured() {
    // A W unit cannot capture N; it stacks on it when legal, otherwise the cell blocks.
    let g = load(3, &[("d4", "WW"), ("d5", "NN"), ("g6", "B")], "w", 20);
    let t = turns_from(&g, "d4");
    // W (k=1) onto N-N gives N-N-W: allowed. W-W onto N-N: 4 tokens: not allowed.
    assert!(t.contains(&"d4-d5".to_string()));
    assert!(!t.iter().any(|m| m.starts_with("d4+d5")));
    // ... and blocks the line: d4+d6 is not possible through d5.
    assert!(!t.iter().any(|m| m.starts_with("d4+d6")));
    // With max_stack 2, W onto N-N is too tall as well.
    let g = load(2, &[("d4", "WW"), ("d5", "NN"), ("g6", "B")], "w", 20);
    assert!(!turns_from(&g, "d4").iter().any(|m| m.contains("d5")));
}

#[test]
fn second_move_rules_exact() {
    // Single-token onto empty: no second move at all.
    let g = load(3, &[("d4", "W"), ("g6", "B")], "w", 20);
    assert!(turns_from(&g, "d4").iter().all(|t| t.len() == 5));
    // Single-token capture: no second move.
    let g = load(3, &[("d4", "W"), ("d5", "B"), ("g6", "B")], "w", 20);
    assert!(turns_from(&g, "d4-d5").iter().all(|t| t == "d4-d5"));
    // Single token stacks on W: the whole 2-stack may move on (operator +), nothing else.
    let g = load(3, &[("d4", "W"), ("d5", "W"), ("g6", "B")], "w", 20);
    let t = turns_from(&g, "d4-d5");
    assert!(t.len() > 1);
    assert!(t.iter().skip(1).all(|m| m.as_bytes()[5] == b'+'), "{t:?}");
    // Two tokens capture: only the top token (-) may move on (D holds 2).
    let g = load(3, &[("d4", "WW"), ("d5", "B"), ("g6", "B")], "w", 20);
    let t = turns_from(&g, "d4+d5");
    assert!(t.len() > 1);
    assert!(t.iter().skip(1).all(|m| m.as_bytes()[5] == b'-'), "{t:?}");
    // Three tokens onto empty: top token (-) or top two (+), never the whole (*).
    let g = load(3, &[("d4", "WWW"), ("g6", "B")], "w", 20);
    let t = turns_from(&g, "d4*d5");
    assert!(t.iter().any(|m| m.len() > 5 && m.as_bytes()[5] == b'-'));
    assert!(t.iter().any(|m| m.len() > 5 && m.as_bytes()[5] == b'+'));
    assert!(!t.iter().any(|m| m.len() > 5 && m.as_bytes()[5] == b'*'));
    // Two tokens stack onto a neutral: whole (*), top (-), top two (+) are all allowed.
    let g = load(3, &[("d4", "WW"), ("d5", "N"), ("g6", "B")], "w", 20);
    let t = turns_from(&g, "d4+d5");
    for op in [b'-', b'+', b'*'] {
        assert!(
            t.iter().any(|m| m.len() > 5 && m.as_bytes()[5] == op),
            "{op} {t:?}"
        );
    }
}

#[test]
fn counter_reaches_zero_and_draws_and_the_string_shows_zero() {
    let mut g = load(3, &[("d4", "W"), ("g6", "B"), ("a6", "N")], "w", 1);
    g.apply(g.parse_action("d4-d5").unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: Reason::NoCaptureLimit
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(g.position().ends_with(" b 0"));
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    assert!(v.is_empty());
    assert_eq!(
        g.check(g.parse_action("g6-f6").unwrap()),
        Err(RulesError::GameOver)
    );
    // The same string loads as the drawn game.
    let again = Staku::from_position(&Options::default(), &g.position()).unwrap();
    assert_eq!(again.outcome(), g.outcome());
}

#[test]
fn palace_win_is_checked_before_the_counter_draw() {
    // White moves onto g1 (black palace, empty) on the last capture-free turn.
    let mut g = load(3, &[("f1", "W"), ("a3", "B")], "w", 1);
    g.apply(g.parse_action("f1-g1").unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Palace
        })
    );
    assert!(g.position().ends_with(" b 0"));
}

#[test]
fn no_legal_turn_loses_even_with_tokens_left() {
    // Black's only token g6 touches g5, f6, f7 (page geometry); each holds N-N-N, which a
    // lone B can neither capture (all neutral) nor stack on (4 tokens).
    let mut g = load(
        3,
        &[
            ("g6", "B"),
            ("g5", "NNN"),
            ("f6", "NNN"),
            ("f7", "NNN"),
            ("d1", "W"),
        ],
        "w",
        20,
    );
    assert_eq!(g.outcome(), None);
    g.apply(g.parse_action("d1-d2").unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::NoMoves
        })
    );
    assert_eq!(g.to_act(), None);
}

#[test]
fn notation_forms() {
    let g = Staku::start(&Options::default());
    for (text, canon) in [
        ("b2-c3", "b2-c3"),
        ("B2-C3", "b2-c3"),
        ("b2-c3!", "b2-c3"),
        ("B1-C1!+D1!", "b1-c1+d1"),
        ("b1-c1+d1", "b1-c1+d1"),
        ("a1-b1", "a1-b1"),
    ] {
        let a = g
            .parse_action(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(g.format_action(a), canon);
    }
    for text in [
        "",
        "b2",
        "b2-",
        "b2c3",
        "b2--c3",
        "b2-c3!!",
        "b2!-c3",
        "h1-a1",
        "a7-a6",
        "g7-f7",
        "b2-c3+d3-e3",
        "b2-c3+",
        "b2/c3",
        "b2-c0",
        "b02-c3",
        "b2 c3",
    ] {
        assert!(
            matches!(g.parse_action(text), Err(RulesError::BadNotation { .. })),
            "{text:?}: {:?}",
            g.parse_action(text)
        );
    }
}

#[test]
fn position_strings_reject_malformed_input() {
    let o = Options::default();
    let bad = [
        START.replace(" w 20", " w 21"),
        START.replace(" w 20", " w 020"),
        START.replace(" w 20", " w -1"),
        START.replace(" w 20", " W 20"),
        START.replace(" w 20", " x 20"),
        START.replace(" w 20", "  w 20"),
        START.replace(" w 20", " w"),
        START.replacen("B,", "b,", 1),
        START.replacen("B,", "WB,", 1),
        START.replacen("B,", "BN,", 1),
        START.replacen("B,", "NNNB,", 1),
        START.replacen("B,", ",", 1),
        START.replacen("B,B,B,B,B,B/", "B,B,B,B,B/", 1),
        START.replacen("/", "", 1),
    ];
    for p in &bad {
        assert!(
            matches!(
                Staku::from_position(&o, p),
                Err(RulesError::InvalidPosition(_))
            ),
            "{p}"
        );
    }
    // A 3-stack is rejected under max_stack 2.
    let p = START.replacen("B,", "BBB,", 1);
    assert!(Staku::from_position(&Options { max_stack: 3 }, &p).is_ok());
    assert!(Staku::from_position(&Options { max_stack: 2 }, &p).is_err());
    // All-neutral stacks are legal stacks.
    let p = START.replacen("N,", "NNN,", 1);
    assert_eq!(Staku::from_position(&o, &p).unwrap().position(), p);
}

/// The page says the end checks run "after each complete turn"; the engine also derives
/// them when a position string is loaded (documented in `Staku::from_position`). These
/// pin the engine's current resolution of that open point.
#[test]
fn loading_derives_the_result_the_string_implies() {
    // White tops black's palace g1 and black is to act: white has won.
    let g = load(3, &[("g1", "W"), ("a3", "B")], "b", 12);
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Palace
        })
    );
    // The side to act has no token: it has lost.
    let g = load(3, &[("d4", "W")], "b", 12);
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::NoMoves
        })
    );
    // A palace topped by the side to act is not a result by itself.
    let g = load(3, &[("g1", "W"), ("a3", "B")], "w", 12);
    assert_eq!(g.outcome(), None);
}
