//! Cross-check against a deliberately naive model of the page, written independently of
//! the engine (coordinates and strings instead of bitboards and tables): on many positions
//! from greedy random games, both list the same legal actions and every action leads to
//! the same position string and the same corner / pass endings.

use rand::{Rng, SeedableRng};
use stoa_protocol::akunur::{Akunur, Options};
use stoa_protocol::{Game, Reason};

const CORNERS: [(i32, i32); 6] = [(0, 0), (4, 0), (8, 4), (8, 8), (4, 8), (0, 4)];

fn exists(x: i32, y: i32) -> bool {
    (0..9).contains(&x) && (0..9).contains(&y) && (x - y).abs() <= 4
}

fn ring(x: i32, y: i32) -> i32 {
    let (dx, dy) = (x - 4, y - 4);
    dx.abs().max(dy.abs()).max((dy - dx).abs())
}

fn is_corner(x: i32, y: i32) -> bool {
    CORNERS.contains(&(x, y))
}

fn neighbours(x: i32, y: i32) -> Vec<(i32, i32)> {
    [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)]
        .iter()
        .map(|(dx, dy)| (x + dx, y + dy))
        .filter(|&(a, b)| exists(a, b))
        .collect()
}

fn name((x, y): (i32, i32)) -> String {
    format!("{}{}", (b'a' + x as u8) as char, y + 1)
}

#[derive(Clone, Debug)]
struct Naive {
    grid: [[char; 9]; 9], // grid[y][x]: 'L', 'D', '.' (or ' ' off the board)
    me: char,             // 'L' or 'D'
    placed: [u32; 2],
    tokens: [bool; 6],
    scores: [u32; 2],
    bonus: bool,
    passes: u32,
}

impl Naive {
    fn parse(p: &str) -> Naive {
        let f: Vec<&str> = p.split(' ').collect();
        let mut grid = [[' '; 9]; 9];
        for (i, row) in f[0].split('/').enumerate() {
            let y = 8 - i as i32;
            let xs: Vec<i32> = (0..9).filter(|&x| exists(x, y)).collect();
            for (x, ch) in xs.into_iter().zip(row.chars()) {
                grid[y as usize][x as usize] = ch;
            }
        }
        let pair = |s: &str| -> [u32; 2] {
            let (a, b) = s.split_once(',').unwrap();
            [a.parse().unwrap(), b.parse().unwrap()]
        };
        let mut tokens = [false; 6];
        for (k, ch) in f[3].chars().enumerate() {
            tokens[k] = ch == '1';
        }
        Naive {
            grid,
            me: if f[1] == "l" { 'L' } else { 'D' },
            placed: pair(f[2]),
            tokens,
            scores: pair(f[4]),
            bonus: f[5] == "1",
            passes: f[6].parse().unwrap(),
        }
    }

    fn format(&self) -> String {
        let rows: Vec<String> = (0..9)
            .rev()
            .map(|y| {
                (0..9)
                    .filter(|&x| exists(x, y))
                    .map(|x| self.grid[y as usize][x as usize])
                    .collect()
            })
            .collect();
        let tokens: String = self
            .tokens
            .iter()
            .map(|&t| if t { '1' } else { '0' })
            .collect();
        format!(
            "{} {} {},{} {} {},{} {} {}",
            rows.join("/"),
            if self.me == 'L' { 'l' } else { 'd' },
            self.placed[0],
            self.placed[1],
            tokens,
            self.scores[0],
            self.scores[1],
            self.bonus as u8,
            self.passes
        )
    }

    fn at(&self, (x, y): (i32, i32)) -> char {
        self.grid[y as usize][x as usize]
    }

    fn set(&mut self, (x, y): (i32, i32), ch: char) {
        self.grid[y as usize][x as usize] = ch;
    }

    fn cells() -> Vec<(i32, i32)> {
        (0..9)
            .flat_map(|y| (0..9).map(move |x| (x, y)))
            .filter(|&(x, y)| exists(x, y))
            .collect()
    }

    fn side(&self) -> usize {
        if self.me == 'L' {
            0
        } else {
            1
        }
    }

    fn placing(&self) -> bool {
        self.bonus || self.placed[0] + self.placed[1] < 24
    }

    fn legal(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.placing() {
            for c in Self::cells() {
                if self.at(c) == '.' && ring(c.0, c.1) >= 2 && !is_corner(c.0, c.1) {
                    out.push(name(c));
                }
            }
            return out;
        }
        for o in Self::cells() {
            if self.at(o) != self.me || is_corner(o.0, o.1) {
                continue;
            }
            if o == (4, 4) {
                for d in Self::cells() {
                    if self.at(d) == '.' && !is_corner(d.0, d.1) {
                        out.push(format!("{}-{}", name(o), name(d)));
                    }
                }
                continue;
            }
            for d in neighbours(o.0, o.1) {
                if self.at(d) != '.' {
                    continue;
                }
                if is_corner(d.0, d.1) || d == (4, 4) {
                    let support = neighbours(d.0, d.1)
                        .into_iter()
                        .filter(|&n| n != o && self.at(n) == self.me)
                        .count();
                    if support < 2 {
                        continue;
                    }
                }
                out.push(format!("{}-{}", name(o), name(d)));
            }
        }
        if out.is_empty() {
            out.push("pass".to_string());
        }
        out
    }

    /// Applies an action; returns `Some(reason)` when the game ends by corners or passes.
    fn apply(&mut self, action: &str) -> Option<Reason> {
        let me = self.side();
        let enemy = if self.me == 'L' { 'D' } else { 'L' };
        let cell = |s: &str| -> (i32, i32) {
            let b = s.as_bytes();
            ((b[0] - b'a') as i32, (b[1] - b'1') as i32)
        };
        let mut earned = false;
        if action == "pass" {
            self.passes += 1;
        } else if let Some((o, d)) = action.split_once('-') {
            self.passes = 0;
            let (o, d) = (cell(o), cell(d));
            self.set(o, '.');
            self.set(d, self.me);
            let captured: Vec<(i32, i32)> = neighbours(d.0, d.1)
                .into_iter()
                .filter(|&s| self.at(s) == enemy)
                .filter(|&s| {
                    neighbours(s.0, s.1)
                        .into_iter()
                        .filter(|&n| n != d && self.at(n) == self.me)
                        .count()
                        >= 2
                })
                .collect();
            for &s in &captured {
                self.set(s, '.');
            }
            for &s in &captured {
                if let Some(k) = CORNERS.iter().position(|&c| c == s) {
                    if self.tokens[k] {
                        self.tokens[k] = false;
                        self.scores[me] += 10;
                        earned = true;
                    }
                } else if s != (4, 4) {
                    let e = (8 - s.0, 8 - s.1);
                    // Whatever stands there now was not captured (captured cells are empty,
                    // and no other echo lands there): it leaves the game.
                    self.set(e, 'x');
                }
            }
            for c in Self::cells() {
                if self.at(c) == 'x' {
                    self.set(c, enemy);
                }
            }
        } else {
            self.set(cell(action), self.me);
            self.placed[me] += 1;
            self.bonus = false;
            self.passes = 0;
        }
        let held = CORNERS.iter().filter(|&&c| self.at(c) == self.me).count();
        let swap = |n: &mut Naive| n.me = if n.me == 'L' { 'D' } else { 'L' };
        if held >= 3 {
            swap(self);
            return Some(Reason::Corners);
        }
        let empty_placement = Self::cells()
            .into_iter()
            .any(|c| self.at(c) == '.' && ring(c.0, c.1) >= 2 && !is_corner(c.0, c.1));
        if earned && self.placed[me] < 15 && empty_placement {
            self.bonus = true;
        } else {
            swap(self);
        }
        (self.passes >= 2).then_some(Reason::Passes)
    }
}

fn legal_of(g: &Akunur) -> Vec<String> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    let mut out: Vec<String> = v.into_iter().map(|a| g.format_action(a)).collect();
    out.sort();
    out
}

#[test]
fn engine_matches_the_naive_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    let mut compared = 0;
    for _ in 0..12 {
        let mut g = Akunur::start(&Options::default());
        for _ in 0..400 {
            if g.outcome().is_some() {
                break;
            }
            let naive = Naive::parse(&g.position());
            assert_eq!(naive.format(), g.position());
            let mut expected = naive.legal();
            expected.sort();
            assert_eq!(legal_of(&g), expected, "{}", g.position());
            // Every action leads to the same position in both; remember the capturing ones.
            let mut capturing = Vec::new();
            for text in &expected {
                let mut e = g.clone();
                e.apply(e.parse_action(text).unwrap());
                let mut n = naive.clone();
                let end = n.apply(text);
                assert_eq!(e.position(), n.format(), "{} after {text}", g.position());
                let engine_end = e
                    .outcome()
                    .map(|o| o.reason)
                    .filter(|r| *r != Reason::Repetition);
                assert_eq!(engine_end, end, "{} after {text}", g.position());
                compared += 1;
                let pieces = |p: &str| p.chars().filter(|c| *c == 'L' || *c == 'D').count();
                if pieces(&e.position()) < pieces(&g.position()) || n.scores != naive.scores {
                    capturing.push(text.clone());
                }
            }
            let pick = if !capturing.is_empty() && rng.gen_bool(0.8) {
                capturing[rng.gen_range(0..capturing.len())].clone()
            } else {
                expected[rng.gen_range(0..expected.len())].clone()
            };
            g.apply(g.parse_action(&pick).unwrap());
        }
    }
    assert!(compared > 10_000, "only {compared} actions compared");
}
