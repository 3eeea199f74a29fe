//! A deliberately naive second implementation of Akron's move and connection rules, written
//! straight from the page's text (maps of points, no precomputed tables), compared with the
//! engine on positions from random playouts: the legal action sets and every end condition
//! must agree.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stoa_protocol::akron::{Action, Akron, Options};
use stoa_protocol::{Game, Reason, Side};

type Pt = (i32, i32, i32); // (level, column, row)

struct Naive {
    n: i32,
    to_act: u8, // 1 vert, 2 horz
    piles: [u32; 2],
    ply: u32,
    balls: HashMap<Pt, u8>,
}

fn parse_name(s: &str) -> Pt {
    let b = s.as_bytes();
    let i = (b[0] - b'A') as i32;
    let k = s.matches('\'').count() as i32;
    let num: i32 = s[1..s.len() - k as usize].parse().unwrap();
    (k, i, num - k - 1)
}

fn name(p: Pt) -> String {
    let (k, i, j) = p;
    format!(
        "{}{}{}",
        (b'A' + i as u8) as char,
        j + k + 1,
        "'".repeat(k as usize)
    )
}

impl Naive {
    fn parse(pos: &str) -> Naive {
        let f: Vec<&str> = pos.split(' ').collect();
        let (vp, hp) = f[2].split_once(',').unwrap();
        let mut balls = HashMap::new();
        for (c, list) in [(1u8, f[4]), (2u8, f[5])] {
            if list != "-" {
                for s in list.split(',') {
                    balls.insert(parse_name(s), c);
                }
            }
        }
        Naive {
            n: f[0].parse().unwrap(),
            to_act: if f[1] == "v" { 1 } else { 2 },
            piles: [vp.parse().unwrap(), hp.parse().unwrap()],
            ply: f[3].parse().unwrap(),
            balls,
        }
    }

    fn all_points(&self) -> Vec<Pt> {
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

    fn supporters(p: Pt) -> Vec<Pt> {
        let (k, i, j) = p;
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

    /// Components of the connection graph over a board (cut balls are left out).
    fn components(balls: &HashMap<Pt, u8>) -> Vec<HashSet<Pt>> {
        let plan = |p: Pt| (2 * p.1 + p.0, 2 * p.2 + p.0);
        // Column rule.
        let mut top: HashMap<(i32, i32), (i32, u8)> = HashMap::new();
        for (&p, &c) in balls {
            let e = top.entry(plan(p)).or_insert((p.0, c));
            if p.0 > e.0 {
                *e = (p.0, c);
            }
        }
        let uncut: HashSet<Pt> = balls
            .iter()
            .filter(|(&p, &c)| top[&plan(p)].1 == c)
            .map(|(&p, _)| p)
            .collect();
        // Crossing rule.
        let mut pairs = Vec::new();
        for &p in &uncut {
            for q in [(p.0, p.1 + 1, p.2), (p.0, p.1, p.2 + 1)] {
                if uncut.contains(&q) && balls[&p] == balls[&q] {
                    pairs.push((p, q));
                }
            }
        }
        let mid = |(p, q): (Pt, Pt)| {
            let (a, b) = (plan(p), plan(q));
            (a.0 + b.0, a.1 + b.1)
        };
        let mut best: HashMap<(i32, i32), (i32, u8)> = HashMap::new();
        for &pq in &pairs {
            let e = best.entry(mid(pq)).or_insert((pq.0 .0, balls[&pq.0]));
            if pq.0 .0 > e.0 {
                *e = (pq.0 .0, balls[&pq.0]);
            }
        }
        let mut adj: HashMap<Pt, Vec<Pt>> = HashMap::new();
        for &pq in &pairs {
            if best[&mid(pq)].1 == balls[&pq.0] {
                adj.entry(pq.0).or_default().push(pq.1);
                adj.entry(pq.1).or_default().push(pq.0);
            }
        }
        for &p in &uncut {
            for s in Self::supporters(p) {
                if uncut.contains(&s) && balls[&s] == balls[&p] {
                    adj.entry(p).or_default().push(s);
                    adj.entry(s).or_default().push(p);
                }
            }
        }
        let mut seen = HashSet::new();
        let mut comps = Vec::new();
        for &s in &uncut {
            if !seen.insert(s) {
                continue;
            }
            let mut comp = HashSet::from([s]);
            let mut queue = VecDeque::from([s]);
            while let Some(p) = queue.pop_front() {
                for &q in adj.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
                    if seen.insert(q) {
                        comp.insert(q);
                        queue.push_back(q);
                    }
                }
            }
            comps.push(comp);
        }
        comps
    }

    fn connected(&self, colour: u8) -> bool {
        let n = self.n;
        Self::components(&self.balls).iter().any(|comp| {
            let mut ends = (false, false);
            for &(k, i, j) in comp {
                if k != 0 || self.balls[&(k, i, j)] != colour {
                    continue;
                }
                let along = if colour == 1 { j } else { i };
                ends.0 |= along == 0;
                ends.1 |= along == n - 1;
            }
            ends.0 && ends.1
        })
    }

    fn legal(&self) -> BTreeSet<String> {
        let me = self.to_act;
        let mut out = BTreeSet::new();
        if self.piles[me as usize - 1] > 0 {
            for j in 0..self.n {
                for i in 0..self.n {
                    if !self.balls.contains_key(&(0, i, j)) {
                        out.insert(name((0, i, j)));
                    }
                }
            }
        }
        if self.ply == 1 && me == 2 {
            out.insert("swap".to_string());
        }
        let comps = Self::components(&self.balls);
        let above = |p: Pt| -> Vec<Pt> {
            self.balls
                .keys()
                .copied()
                .filter(|&q| Self::supporters(q).contains(&p))
                .collect()
        };
        for (&f, &c) in &self.balls {
            if c != me || above(f).len() > 1 {
                continue;
            }
            let Some(comp) = comps.iter().find(|comp| comp.contains(&f)) else {
                continue;
            };
            let group: Vec<Pt> = comp.iter().copied().filter(|&g| g != f).collect();
            if group.is_empty() {
                continue;
            }
            let mut chain = vec![f];
            loop {
                let up = above(*chain.last().unwrap());
                assert!(up.len() <= 1, "the chain never branches");
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
            for d in self.all_points() {
                if d == f || self.balls.contains_key(&d) {
                    continue;
                }
                let rests = Self::supporters(d)
                    .iter()
                    .all(|s| self.balls.contains_key(s) && !chain.contains(s));
                if !rests {
                    continue;
                }
                if group.iter().any(|&g| Self::touch(d, g))
                    && after.iter().any(|&g| Self::touch(d, g))
                {
                    out.insert(format!("{}-{}", name(f), name(d)));
                }
            }
        }
        out
    }
}

fn engine_legal(g: &Akron) -> BTreeSet<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v.into_iter().map(|a| g.format_action(a)).collect()
}

fn compare_playout(size: u32, pieces: u32, nodelay: bool, seed: u64, plies: usize) {
    let opts = Akron::validate_options(Options {
        size,
        pieces: Some(pieces),
        nodelay,
    })
    .unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut g = Akron::start(&opts);
    for _ in 0..plies {
        let naive = Naive::parse(&g.position());
        let legal = engine_legal(&g);
        assert_eq!(legal, naive.legal(), "legal actions of {}", g.position());
        let mut actions = Vec::new();
        g.legal_actions(&mut actions);
        let moves: Vec<Action> = actions
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Move { .. }))
            .collect();
        let a = if !moves.is_empty() && rng.gen_bool(0.7) {
            moves[rng.gen_range(0..moves.len())]
        } else {
            actions[rng.gen_range(0..actions.len())]
        };
        let mover = g.to_act().unwrap();
        g.apply(a);
        if a == Action::Swap {
            continue;
        }
        // End conditions, in the page's order, from the naive side.
        let after = Naive::parse(&g.position());
        let (p, q) = (mover.index() as u8 + 1, mover.other().index() as u8 + 1);
        let o = g.outcome();
        if after.connected(q) {
            assert_eq!(
                o.map(|o| (o.winner, o.reason)),
                Some((Some(mover.other()), Reason::Connection))
            );
        } else if nodelay && after.connected(p) {
            assert_eq!(
                o.map(|o| (o.winner, o.reason)),
                Some((Some(mover), Reason::Connection))
            );
        } else if o.is_some_and(|o| o.reason == Reason::Repetition) {
            assert_eq!(o.unwrap().winner, None);
        } else if after.legal().is_empty() {
            assert_eq!(
                o.map(|o| (o.winner, o.reason)),
                Some((Some(mover), Reason::NoMoves))
            );
        } else {
            assert_eq!(o, None, "{}", g.position());
        }
        assert_eq!(g.connected(Side::First), after.connected(1));
        assert_eq!(g.connected(Side::Second), after.connected(2));
        if o.is_some() {
            break;
        }
    }
}

#[test]
fn engine_agrees_with_naive_rules_small_boards() {
    for seed in 0..60u64 {
        let size = 3 + (seed % 3) as u32;
        let pieces = size + (seed as u32 * 7) % (size * size);
        compare_playout(size, pieces, seed % 4 == 0, seed, 80);
    }
}

#[test]
fn engine_agrees_with_naive_rules_larger_boards() {
    for seed in 0..8u64 {
        let size = 6 + (seed % 4) as u32;
        compare_playout(size, size * size / 2 + 4, false, 1000 + seed, 70);
    }
}

#[test]
fn engine_agrees_on_the_page_example() {
    let opts = Akron::validate_options(Options::with_size(8)).unwrap();
    let pos = "8 v 21,26 20 B6,B7,C8,D6,D7,D8,E6,E7',F7,G7,H8 B8,C7,E7,E8,F6,G6";
    let g = Akron::from_position(&opts, pos).unwrap();
    assert_eq!(engine_legal(&g), Naive::parse(&g.position()).legal());
}
