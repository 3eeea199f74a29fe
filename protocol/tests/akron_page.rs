//! The Akron engine against its rules page.
//!
//! The core is an independent naive model of the page (points as (k, i, j) triples, the
//! column and crossing rules applied literally over plan coordinates, moves checked
//! condition by condition). The existing reference test compares random playouts, which
//! rarely build stacks two or three levels high; here the comparison runs on random
//! *dense, tall* positions (every supported point filled with some probability), where
//! several pairs share a crossing midpoint and chains of drops are long. Then targeted
//! checks of names, options, position strings, swap, end order and repetition.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use stoa_protocol::akron::{Action, Akron, Options};
use stoa_protocol::{kind, Game, Outcome, Reason, RulesError, Side};

type Pt = (i32, i32, i32); // (level k, column i, row j)

fn pname((k, i, j): Pt) -> String {
    format!(
        "{}{}{}",
        (b'A' + i as u8) as char,
        j + k + 1,
        "'".repeat(k as usize)
    )
}

fn pparse(s: &str) -> Pt {
    let s = s.to_ascii_uppercase();
    let i = (s.as_bytes()[0] - b'A') as i32;
    let k = s.chars().filter(|&c| c == '\'').count() as i32;
    let num: i32 = s[1..].trim_end_matches('\'').parse().unwrap();
    (k, i, num - k - 1)
}

#[derive(Clone)]
struct Model {
    n: i32,
    balls: HashMap<Pt, u8>, // 1 vert, 2 horz
    me: u8,
    piles: [u32; 2],
    ply: u32,
}

impl Model {
    fn parse(pos: &str) -> Model {
        let f: Vec<&str> = pos.split(' ').collect();
        let (a, b) = f[2].split_once(',').unwrap();
        let mut balls = HashMap::new();
        for (c, list) in [(1u8, f[4]), (2u8, f[5])] {
            if list != "-" {
                for s in list.split(',') {
                    balls.insert(pparse(s), c);
                }
            }
        }
        Model {
            n: f[0].parse().unwrap(),
            balls,
            me: if f[1] == "v" { 1 } else { 2 },
            piles: [a.parse().unwrap(), b.parse().unwrap()],
            ply: f[3].parse().unwrap(),
        }
    }

    fn points(&self) -> Vec<Pt> {
        let mut v = Vec::new();
        for k in 0..self.n {
            for j in 0..self.n - k {
                for i in 0..self.n - k {
                    v.push((k, i, j));
                }
            }
        }
        v
    }

    fn supporters((k, i, j): Pt) -> Vec<Pt> {
        if k == 0 {
            return vec![];
        }
        vec![
            (k - 1, i, j),
            (k - 1, i + 1, j),
            (k - 1, i, j + 1),
            (k - 1, i + 1, j + 1),
        ]
    }

    fn touch(p: Pt, q: Pt) -> bool {
        (p.0 == q.0 && (p.1 - q.1).abs() + (p.2 - q.2).abs() == 1)
            || Self::supporters(p).contains(&q)
            || Self::supporters(q).contains(&p)
    }

    fn plan((k, i, j): Pt) -> (i32, i32) {
        (2 * i + k, 2 * j + k)
    }

    /// Component id of every uncut ball.
    fn components(balls: &HashMap<Pt, u8>) -> HashMap<Pt, usize> {
        // 1. column rule
        let mut top: HashMap<(i32, i32), Pt> = HashMap::new();
        for &p in balls.keys() {
            let e = top.entry(Self::plan(p)).or_insert(p);
            if p.0 > e.0 {
                *e = p;
            }
        }
        let uncut: HashSet<Pt> = balls
            .keys()
            .copied()
            .filter(|&p| balls[&top[&Self::plan(p)]] == balls[&p])
            .collect();
        // 2. crossing rule
        let mut pairs: Vec<(Pt, Pt)> = Vec::new();
        for &p in &uncut {
            for q in [(p.0, p.1 + 1, p.2), (p.0, p.1, p.2 + 1)] {
                if uncut.contains(&q) && balls[&p] == balls[&q] {
                    pairs.push((p, q));
                }
            }
        }
        let mid = |(p, q): (Pt, Pt)| {
            let (a, b) = (Self::plan(p), Self::plan(q));
            (a.0 + b.0, a.1 + b.1)
        };
        let mut highest: HashMap<(i32, i32), (i32, u8)> = HashMap::new();
        for &pq in &pairs {
            let lvl = pq.0 .0;
            let e = highest.entry(mid(pq)).or_insert((lvl, balls[&pq.0]));
            if lvl > e.0 {
                *e = (lvl, balls[&pq.0]);
            }
        }
        let mut adj: HashMap<Pt, Vec<Pt>> = HashMap::new();
        for &pq in &pairs {
            if highest[&mid(pq)].1 == balls[&pq.0] {
                adj.entry(pq.0).or_default().push(pq.1);
                adj.entry(pq.1).or_default().push(pq.0);
            }
        }
        // 3. supporter edges
        for &p in &uncut {
            for s in Self::supporters(p) {
                if uncut.contains(&s) && balls[&s] == balls[&p] {
                    adj.entry(p).or_default().push(s);
                    adj.entry(s).or_default().push(p);
                }
            }
        }
        let mut comp = HashMap::new();
        let mut sorted: Vec<Pt> = uncut.iter().copied().collect();
        sorted.sort();
        let mut id = 0;
        for s in sorted {
            if comp.contains_key(&s) {
                continue;
            }
            comp.insert(s, id);
            let mut q = VecDeque::from([s]);
            while let Some(p) = q.pop_front() {
                for &r in adj.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
                    if let std::collections::hash_map::Entry::Vacant(e) = comp.entry(r) {
                        e.insert(id);
                        q.push_back(r);
                    }
                }
            }
            id += 1;
        }
        comp
    }

    fn connected(&self, colour: u8) -> bool {
        let comp = Self::components(&self.balls);
        let n = self.n;
        let mut lo = HashSet::new();
        let mut hi = HashSet::new();
        for (&p, &c) in &comp {
            if p.0 != 0 || self.balls[&p] != colour {
                continue;
            }
            let along = if colour == 1 { p.2 } else { p.1 };
            if along == 0 {
                lo.insert(c);
            }
            if along == n - 1 {
                hi.insert(c);
            }
        }
        lo.intersection(&hi).next().is_some()
    }

    fn above(&self, p: Pt) -> Vec<Pt> {
        self.balls
            .keys()
            .copied()
            .filter(|&q| Self::supporters(q).contains(&p))
            .collect()
    }

    fn legal(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        if self.piles[self.me as usize - 1] > 0 {
            for j in 0..self.n {
                for i in 0..self.n {
                    if !self.balls.contains_key(&(0, i, j)) {
                        out.insert(pname((0, i, j)));
                    }
                }
            }
        }
        if self.ply == 1 && self.me == 2 {
            out.insert("swap".into());
        }
        let comp = Self::components(&self.balls);
        for (&f, &c) in &self.balls {
            if c != self.me || self.above(f).len() > 1 {
                continue;
            }
            let Some(&cf) = comp.get(&f) else { continue };
            let group: Vec<Pt> = comp
                .iter()
                .filter(|(&p, &c2)| c2 == cf && p != f)
                .map(|(&p, _)| p)
                .collect();
            if group.is_empty() {
                continue;
            }
            let mut chain = vec![f];
            loop {
                let up = self.above(*chain.last().unwrap());
                assert!(up.len() <= 1);
                match up.first() {
                    Some(&u) => chain.push(u),
                    None => break,
                }
            }
            let after: Vec<Pt> = group
                .iter()
                .map(|&g| match chain.iter().position(|&x| x == g) {
                    Some(t) => chain[t - 1],
                    None => g,
                })
                .collect();
            for d in self.points() {
                if d == f || self.balls.contains_key(&d) {
                    continue;
                }
                if !Self::supporters(d)
                    .iter()
                    .all(|s| self.balls.contains_key(s) && !chain.contains(s))
                {
                    continue;
                }
                if group.iter().any(|&g| Self::touch(d, g))
                    && after.iter().any(|&g| Self::touch(d, g))
                {
                    out.insert(format!("{}-{}", pname(f), pname(d)));
                }
            }
        }
        out
    }

    /// The board after a move (drops applied).
    fn after_move(&self, f: Pt, d: Pt) -> Model {
        let mut m = self.clone();
        let c = m.balls.remove(&f).unwrap();
        let mut cur = f;
        while let Some(&u) = self.above(cur).first() {
            let cu = m.balls.remove(&u).unwrap();
            m.balls.insert(cur, cu);
            cur = u;
        }
        m.balls.insert(d, c);
        m
    }

    fn format(&self) -> String {
        let list = |c: u8| {
            let mut v: Vec<Pt> = self
                .balls
                .iter()
                .filter(|(_, &x)| x == c)
                .map(|(&p, _)| p)
                .collect();
            v.sort_by_key(|&(k, i, j)| (k, j, i)); // level, then row, then column
            if v.is_empty() {
                "-".to_string()
            } else {
                v.into_iter().map(pname).collect::<Vec<_>>().join(",")
            }
        };
        format!(
            "{} {} {},{} {} {} {}",
            self.n,
            if self.me == 1 { "v" } else { "h" },
            self.piles[0],
            self.piles[1],
            self.ply,
            list(1),
            list(2)
        )
    }
}

fn random_tall_position(rng: &mut StdRng, n: i32) -> String {
    let mut m = Model {
        n,
        balls: HashMap::new(),
        me: if rng.gen_bool(0.5) { 1 } else { 2 },
        piles: [rng.gen_range(0..3), rng.gen_range(0..3)],
        ply: rng.gen_range(0..4),
    };
    let fill0 = rng.gen_range(0.75..1.0);
    let fill_up = rng.gen_range(0.6..1.0);
    let vert_bias = rng.gen_range(0.3..0.7);
    for p in m.points() {
        let supported = Model::supporters(p).iter().all(|s| m.balls.contains_key(s));
        let prob = if p.0 == 0 { fill0 } else { fill_up };
        if supported && rng.gen_bool(prob) {
            m.balls
                .insert(p, if rng.gen_bool(vert_bias) { 1 } else { 2 });
        }
    }
    m.format()
}

fn engine_legal(g: &Akron) -> BTreeSet<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    let set: BTreeSet<String> = v.iter().map(|&a| g.format_action(a)).collect();
    assert_eq!(set.len(), v.len());
    set
}

fn options(n: i32, nodelay: bool) -> Options {
    Akron::validate_options(Options {
        size: n as u32,
        pieces: Some(1000),
        nodelay,
    })
    .unwrap()
}

#[test]
fn engine_agrees_with_naive_model_on_dense_tall_positions() {
    let mut rng = StdRng::seed_from_u64(0xA4C0);
    let mut tall = 0;
    for round in 0..700i32 {
        let n = 3 + round % 5; // 3..=7
        let nodelay = round % 3 == 0;
        let text = random_tall_position(&mut rng, n);
        let g = Akron::from_position(&options(n, nodelay), &text)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let m = Model::parse(&text);
        assert_eq!(g.position(), m.format(), "canonical order");
        if m.balls.keys().any(|p| p.0 >= 2) {
            tall += 1;
        }
        assert_eq!(
            g.connected(Side::First),
            m.connected(1),
            "vert connected? {text}"
        );
        assert_eq!(
            g.connected(Side::Second),
            m.connected(2),
            "horz connected? {text}"
        );
        let legal = engine_legal(&g);
        assert_eq!(legal, m.legal(), "legal actions of {text}");
        // Follow a few moves and check the end test in the page's order.
        let moves: Vec<&String> = legal.iter().filter(|a| a.contains('-')).collect();
        for _ in 0..moves.len().min(4) {
            let mv = moves[rng.gen_range(0..moves.len())];
            let (a, b) = mv.split_once('-').unwrap();
            let mut e = g.clone();
            e.apply(e.parse_action(mv).unwrap());
            let mut after = m.after_move(pparse(a), pparse(b));
            after.me = 3 - m.me;
            after.ply += 1;
            assert_eq!(e.position(), after.format(), "{text} after {mv}");
            let (p, q) = (m.me, 3 - m.me);
            let side = |c: u8| if c == 1 { Side::First } else { Side::Second };
            let expected = if after.connected(q) {
                Some((Some(side(q)), Reason::Connection))
            } else if nodelay && after.connected(p) {
                Some((Some(side(p)), Reason::Connection))
            } else if after.legal().is_empty() {
                Some((Some(side(p)), Reason::NoMoves))
            } else {
                None
            };
            assert_eq!(
                e.outcome().map(|o| (o.winner, o.reason)),
                expected,
                "{text} after {mv}"
            );
        }
    }
    assert!(tall > 100, "only {tall} positions with level-2 balls");
}

// ------------------------------------------------------------------ crossing midpoints on three levels

#[test]
fn three_pairs_at_one_midpoint_the_highest_decides() {
    // 4x4: holes rows 1-3 full, level 1 rows 0-1 full, two level-2 balls A3'' and B3''.
    // Midpoint plan (3,2) is shared by B2-C2 (level 0), B2'-B3' (level 1) and
    // A3''-B3'' (level 2). The model decides; the engine must agree for every colouring.
    let lvl0: Vec<Pt> = (0..3)
        .flat_map(|j| (0..4).map(move |i| (0, i, j)))
        .collect();
    let lvl1: Vec<Pt> = (0..2)
        .flat_map(|j| (0..3).map(move |i| (1, i, j)))
        .collect();
    let lvl2: Vec<Pt> = vec![(2, 0, 0), (2, 1, 0)];
    let all: Vec<Pt> = lvl0.iter().chain(&lvl1).chain(&lvl2).copied().collect();
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..300 {
        let mut m = Model {
            n: 4,
            balls: HashMap::new(),
            me: 1,
            piles: [0, 0],
            ply: 9,
        };
        for &p in &all {
            m.balls.insert(p, if rng.gen_bool(0.5) { 1 } else { 2 });
        }
        let text = m.format();
        let g = Akron::from_position(&options(4, false), &text).unwrap();
        assert_eq!(g.connected(Side::First), m.connected(1), "{text}");
        assert_eq!(g.connected(Side::Second), m.connected(2), "{text}");
        assert_eq!(engine_legal(&g), m.legal(), "{text}");
    }
}

// ------------------------------------------------------------------ names and notation

#[test]
fn point_names_follow_the_page() {
    assert_eq!(pname((1, 3, 2)), "D4'");
    assert_eq!(pname((2, 3, 3)), "D6''");
    let g = Akron::start(&Akron::validate_options(Options::default()).unwrap());
    for (text, canon) in [
        ("d4'", "D4'"),
        ("  D6''  ", "D6''"),
        ("a1", "A1"),
        ("i9", "I9"),
        ("a2-d3'", "A2-D3'"),
        ("D3'-f5", "D3'-F5"),
        ("Swap", "swap"),
        ("A9''''''''", "A9''''''''"),
    ] {
        let a = g
            .parse_action(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(g.format_action(a), canon);
    }
    for text in [
        "", "-", "A", "A0", "A01", "J1", "A10", "I9'", "A1-", "-A1", "A1--B1", "A1-B1-C1",
        "A1 - B1", "A1''-", "1A", "A1’",
    ] {
        assert!(
            matches!(g.parse_action(text), Err(RulesError::BadNotation { .. })),
            "{text:?}: {:?}",
            g.parse_action(text)
        );
    }
    // 16x16: column P and two-digit numbers; the top point is A16 with 15 apostrophes.
    let g = Akron::start(&Akron::validate_options(Options::with_size(16)).unwrap());
    let top = format!("A16{}", "'".repeat(15));
    assert_eq!(
        g.format_action(g.parse_action(&top.to_lowercase()).unwrap()),
        top
    );
    assert_eq!(g.format_action(g.parse_action("p16").unwrap()), "P16");
    assert!(g.parse_action("Q1").is_err());
}

// ------------------------------------------------------------------ options

#[test]
fn options_defaults_ranges_and_derived_pieces() {
    let k = kind("akron").unwrap();
    assert_eq!(
        k.validate_options(&json!(null)).unwrap(),
        json!({"size": 9, "pieces": 40, "nodelay": false})
    );
    for (size, pieces) in [(3, 4), (4, 8), (5, 12), (8, 32), (9, 40), (16, 128)] {
        assert_eq!(
            k.validate_options(&json!({"size": size})).unwrap(),
            json!({"size": size, "pieces": pieces, "nodelay": false})
        );
    }
    assert_eq!(
        k.validate_options(&json!({"size": 5, "pieces": 5, "nodelay": true}))
            .unwrap(),
        json!({"size": 5, "pieces": 5, "nodelay": true})
    );
    assert_eq!(
        k.validate_options(&json!({"pieces": 1000})).unwrap()["pieces"],
        json!(1000)
    );
    for bad in [
        json!({"size": 2}),
        json!({"size": 17}),
        json!({"size": 5, "pieces": 4}),
        json!({"pieces": 1001}),
        json!({"pieces": 8}),
        json!({"nodelay": 1}),
        json!({"nodelay": "true"}),
        json!({"size": "9"}),
        json!({"colour": "vert"}),
    ] {
        assert!(
            matches!(k.validate_options(&bad), Err(RulesError::InvalidOptions(_))),
            "{bad}"
        );
    }
    assert_eq!(k.side_names, ["vert", "horz"]);
    // The start pile is the pieces option.
    let g = k.start(&json!({"size": 5, "pieces": 7})).unwrap();
    assert_eq!(g.position(), "5 v 7,7 0 - -");
    assert_eq!(k.start(&json!(null)).unwrap().position(), "9 v 40,40 0 - -");
}

// ------------------------------------------------------------------ position strings

#[test]
fn position_lists_are_ordered_by_level_row_column_and_accept_any_order() {
    let p = "4 h 5,6 7 B2',B1,A1,D4,A2,B2 C1,C2,A3,B3";
    let g = Akron::from_position(&options(4, false), p).unwrap();
    assert_eq!(g.position(), "4 h 5,6 7 A1,B1,A2,B2,D4,B2' C1,C2,A3,B3");
}

#[test]
fn positions_reject_malformed_strings() {
    let o = options(4, false);
    for p in [
        "4 v 8,8 0 -",
        "4 v 8,8 0 - - -",
        "4 v 8;8 0 - -",
        "4 v 8,8 0 A1,A1 -",
        "4 v 8,8 0 A1 A1",
        "4 v 8,8 0 A1' -",
        "4 v 8,8 0 E1 -",
        "4 v 8,8 0 A5 -",
        "4 x 8,8 0 - -",
        "4 v -1,8 0 - -",
        "4 v 8,8 -1 - -",
        "2 v 8,8 0 - -",
        "17 v 8,8 0 - -",
        "4  v 8,8 0 - -",
        "4 v 8,8 0 , -",
        "4 v 8,8 0 A1, -",
    ] {
        assert!(
            matches!(
                Akron::from_position(&o, p),
                Err(RulesError::InvalidPosition(_))
            ),
            "{p:?}: {:?}",
            Akron::from_position(&o, p).map(|g| g.position())
        );
    }
}

#[test]
fn positions_reject_upper_case_side_and_leading_zeros() {
    let o = Akron::validate_options(Options::default()).unwrap();
    for p in [
        "9 V 40,40 0 - -",
        "9 H 40,40 1 - -",
        "09 v 40,40 0 - -",
        "9 v 040,40 0 - -",
        "9 v 40,40 00 - -",
    ] {
        assert!(
            matches!(
                Akron::from_position(&o, p),
                Err(RulesError::InvalidPosition(_))
            ),
            "{p:?} loads as {:?}",
            Akron::from_position(&o, p).map(|g| g.position())
        );
    }
}

// ------------------------------------------------------------------ actions, swap, ends

#[test]
fn swap_only_at_ply_one_for_horz_and_changes_nothing_but_ply() {
    let mut g = Akron::start(&Akron::validate_options(Options::with_size(3)).unwrap());
    assert!(!engine_legal(&g).contains("swap"));
    g.apply(g.parse_action("b2").unwrap());
    assert_eq!(g.position(), "3 h 3,4 1 B2 -");
    let legal = engine_legal(&g);
    assert!(legal.contains("swap"));
    assert_eq!(legal.len(), 9); // 8 adds + swap
    g.apply(Action::Swap);
    assert_eq!(g.position(), "3 h 3,4 2 B2 -");
    assert_eq!(g.to_act(), Some(Side::Second));
    assert_eq!(engine_legal(&g).len(), 8);
    // Loaded positions: only ply 1 with horz to act.
    for (p, offered) in [
        ("3 h 4,4 1 B2 -", true),
        ("3 v 4,4 1 B2 -", false),
        ("3 h 3,4 3 B2,A1 C3", false),
    ] {
        let g = Akron::from_position(&options(3, false), p).unwrap();
        assert_eq!(engine_legal(&g).contains("swap"), offered, "{p}");
    }
}

#[test]
fn adds_need_a_pile_and_go_on_empty_holes_only() {
    let g = Akron::from_position(&options(3, false), "3 v 0,4 4 A1,B1 A2,B2").unwrap();
    let legal = engine_legal(&g);
    assert!(!legal.iter().any(|a| !a.contains('-')), "{legal:?}");
    let a = g.parse_action("C3").unwrap();
    assert!(matches!(g.check(a), Err(RulesError::IllegalMove { .. })));
    let g = Akron::from_position(&options(3, false), "3 v 1,4 4 A1,B1 A2,B2").unwrap();
    let adds: Vec<String> = engine_legal(&g)
        .into_iter()
        .filter(|a| !a.contains('-'))
        .collect();
    assert_eq!(adds, ["A3", "B3", "C1", "C2", "C3"]);
}

#[test]
fn connection_survives_the_reply_then_wins_with_reason_connection() {
    // 3x3, vert A1, A2 and A3 in a column: vert is connected after adding A3, but wins
    // only if horz's reply does not break it. Horz has no move that cuts a level-0 chain
    // here (horz has a single ball and an empty pile), so vert wins after horz acts.
    let mut g = Akron::from_position(&options(3, false), "3 v 2,0 6 A1,A2 C2").unwrap();
    g.apply(g.parse_action("A3").unwrap());
    // Horz has one ball and no pile: no legal action -> horz loses at once (no_moves)
    // unless vert's connection is checked first: it is vert (P) who just connected and
    // nodelay is off, so the rule order gives: Q connected? no. nodelay? no. repetition?
    // no. Q has no legal action -> Q (horz) loses by no_moves.
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::NoMoves
        })
    );
    // With nodelay the connection wins at once with reason connection.
    let mut g = Akron::from_position(&options(3, true), "3 v 2,0 6 A1,A2 C2").unwrap();
    g.apply(g.parse_action("A3").unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
    // Without nodelay and with a horz reply available, the game goes on; any horz reply
    // that leaves the column standing gives vert the win (Q connected after horz acts).
    let mut g = Akron::from_position(&options(3, false), "3 v 2,3 6 A1,A2 C2").unwrap();
    g.apply(g.parse_action("A3").unwrap());
    assert_eq!(g.outcome(), None);
    g.apply(g.parse_action("C3").unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Side::First),
            reason: Reason::Connection
        })
    );
    assert_eq!(g.to_act(), None);
    assert!(engine_legal(&g).is_empty());
}

#[test]
fn third_occurrence_draws_counting_the_loaded_position() {
    // Two vert balls shuttle: A1-A2 connected pair on 4x4; both sides have empty piles.
    // Vert: A1,B1 ; horz: D3,D4. Moves: vert B1-B2? must touch group {A1}: B2 does not
    // touch A1 (diagonal) -> use A2. Play a cycle of 4 plies twice.
    let start = "4 v 0,0 10 A1,B1 D3,D4";
    let mut g = Akron::from_position(&options(4, false), start).unwrap();
    let cycle = ["B1-A2", "D4-C3", "A2-B1", "C3-D4"];
    let mut seen = 0;
    for round in 0..2 {
        for (i, mv) in cycle.iter().enumerate() {
            let a = g.parse_action(mv).unwrap_or_else(|e| panic!("{mv}: {e}"));
            g.check(a)
                .unwrap_or_else(|e| panic!("{mv}: {e} in {}", g.position()));
            g.apply(a);
            seen += 1;
            let last = round == 1 && i == 3;
            if last {
                // back at the loaded position for the third time
                assert_eq!(g.position().split(' ').nth(4), Some("A1,B1"));
                assert_eq!(
                    g.outcome(),
                    Some(Outcome {
                        winner: None,
                        reason: Reason::Repetition
                    }),
                    "after {seen} plies"
                );
            } else {
                assert_eq!(
                    g.outcome(),
                    None,
                    "after {mv} ({seen} plies): {}",
                    g.position()
                );
            }
        }
    }
}

#[test]
fn perft_reference_counts_through_the_registry() {
    let g = kind("akron").unwrap().start(&json!({"size": 3})).unwrap();
    assert_eq!(
        [g.perft(1), g.perft(2), g.perft(3), g.perft(4)],
        [9, 81, 576, 3528]
    );
    let g = kind("akron").unwrap().start(&json!({"size": 4})).unwrap();
    assert_eq!([g.perft(1), g.perft(2), g.perft(3)], [16, 256, 3600]);
}

/// The page runs the end test after actions; a loaded position whose side to act has no
/// legal action is where play would have ended by its fourth check ("if Q has no legal
/// action, Q loses"), so it loads as that ended game (as Staku's does), never as a game on
/// that nobody can continue.
#[test]
fn loaded_position_without_legal_action_is_lost_by_the_side_to_act() {
    let o = options(3, false);
    // vert: empty pile, a single ball (no group, so no move): no legal action.
    let g = Akron::from_position(&o, "3 v 0,0 5 A1 B3").unwrap();
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    assert!(v.is_empty());
    assert_eq!(g.to_act(), None);
    let outcome = g.outcome().expect("ended on load");
    assert_eq!(outcome.winner, Some(Side::Second));
    assert_eq!(outcome.reason, Reason::NoMoves);
    assert_eq!(g.position(), "3 v 0,0 5 A1 B3");
    // With a ball in the pile (and an empty hole) vert can act: the game is on.
    let g = Akron::from_position(&o, "3 v 1,0 5 A1 B3").unwrap();
    assert_eq!(g.outcome(), None);
    assert_eq!(g.to_act(), Some(Side::First));
}

/// Balls plus pile may not exceed `pieces` when the string's size is the options' size; a
/// string of another size is taken as written (its piles up to 1000), since a position
/// string loads on its own.
#[test]
fn pile_bound_is_pieces_for_the_options_board_and_free_for_another() {
    let k = kind("akron").unwrap();
    // 1 ball + 40 in the pile: more than 9x9's default 40 pieces.
    assert!(k.from_position(&json!(null), "9 v 40,40 0 A1 -").is_err());
    assert!(k
        .from_position(&json!({"pieces": 41}), "9 v 40,40 0 A1 -")
        .is_ok());
    // Another size: piles as written.
    assert!(k
        .from_position(&json!({"size": 8}), "9 v 40,40 0 A1 -")
        .is_ok());
    assert!(k
        .from_position(&json!(null), "3 h 5,5 9 B1,B2,B3 A1,A2,C1,C2,A2',B2'")
        .is_ok());
    assert!(k.from_position(&json!(null), "8 v 1001,0 0 - -").is_err());
}
