//! The bot's search: Monte Carlo tree search (UCT) over the rules engines' typed actions,
//! generic over [`Game`], so a playout costs no notation strings and no JSON.
//!
//! Why MCTS for all four games: none has a cheap, trustworthy evaluation (connection games,
//! stacking, echoes), while random playouts to the end are cheap and the engines end every
//! game by rule. A side may act twice in a row (Akunur's bonus placements) and a swap
//! exchanges seats, so every node records who acted into it rather than assuming sides
//! alternate.
//!
//! Levels: 1 plays a cheap search and makes mistakes on purpose (a random move one time in
//! eight); 2–4 search a fixed number of playouts; 5 searches for as long as the time it is
//! given.

use std::time::{Duration, Instant};

use stoa_protocol::{Game, Side};

/// A small, fast pseudo-random generator (xorshift64*): the bot needs speed and
/// reproducibility (seeded tournaments), not cryptographic quality.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced, xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How hard a level searches: playouts per move (level 5: as many as the time allows).
pub fn playouts(level: u8) -> Option<u32> {
    match level {
        0 | 1 => Some(150),
        2 => Some(300),
        3 => Some(1_500),
        4 => Some(6_000),
        _ => None,
    }
}

/// Plies after which a playout is scored a draw (games that wander: Staku before its
/// no-capture limit bites, Akunur's movement phase).
const PLAYOUT_CAP: usize = 400;

struct Node<A> {
    /// The action that led here (`None` at the root).
    action: Option<A>,
    /// Who played `action`.
    mover: Option<Side>,
    parent: Option<usize>,
    children: Vec<usize>,
    untried: Vec<A>,
    visits: f64,
    /// Score for `mover`: 1 a win, 0.5 a draw.
    score: f64,
}

/// Chooses an action for the side to act in `game`, at `level`, within `budget` (level 5
/// uses all of it; the other levels stop early once their playouts are done). `None` when
/// the game is over.
pub fn choose<G: Game>(game: &G, level: u8, budget: Duration, rng: &mut Rng) -> Option<G::Action> {
    let mut actions = Vec::new();
    game.to_act()?;
    game.legal_actions(&mut actions);
    if actions.is_empty() {
        return None;
    }
    if actions.len() == 1 {
        return Some(actions[0]);
    }
    // An immediate win is always taken (even a level 1 bot sees a win in one).
    for &a in &actions {
        let mut g = game.clone();
        let me = g.to_act();
        g.apply(a);
        if g.outcome()
            .is_some_and(|o| o.winner.is_some() && o.winner == me)
        {
            return Some(a);
        }
    }
    if level <= 1 && rng.below(8) == 0 {
        return Some(actions[rng.below(actions.len())]);
    }
    // From level 2 on, a move that lets the opponent win at once is never played while
    // another exists: with hundreds of moves (Staku) a short search could not see it.
    if level >= 2 {
        let safe: Vec<G::Action> = actions
            .iter()
            .copied()
            .filter(|&a| !gives_a_win_in_one(game, a))
            .collect();
        if safe.len() == 1 {
            return Some(safe[0]);
        }
        if !safe.is_empty() {
            actions = safe;
        }
    }
    let limit = playouts(level);
    let deadline = Instant::now() + budget;
    let mut tree: Vec<Node<G::Action>> = vec![Node {
        action: None,
        mover: None,
        parent: None,
        children: Vec::new(),
        untried: actions,
        visits: 0.0,
        score: 0.0,
    }];
    let mut done = 0u32;
    let mut scratch = Vec::new();
    loop {
        if limit.is_some_and(|n| done >= n)
            || (done.is_multiple_of(16) && Instant::now() >= deadline)
        {
            break;
        }
        done += 1;
        // Selection: follow UCT through fully expanded nodes.
        let mut node = 0;
        let mut g = game.clone();
        while tree[node].untried.is_empty() && !tree[node].children.is_empty() {
            let parent_visits = tree[node].visits.max(1.0).ln();
            let mut best = tree[node].children[0];
            let mut best_value = f64::MIN;
            for &c in &tree[node].children {
                let n = &tree[c];
                let value = n.score / n.visits + 1.2 * (parent_visits / n.visits).sqrt();
                if value > best_value {
                    best_value = value;
                    best = c;
                }
            }
            node = best;
            g.apply(tree[node].action.expect("a child has an action"));
        }
        // Expansion: one untried action.
        if !tree[node].untried.is_empty() {
            let i = rng.below(tree[node].untried.len());
            let action = tree[node].untried.swap_remove(i);
            let mover = g.to_act();
            g.apply(action);
            let mut untried = Vec::new();
            if g.outcome().is_none() {
                g.legal_actions(&mut untried);
            }
            tree.push(Node {
                action: Some(action),
                mover,
                parent: Some(node),
                children: Vec::new(),
                untried,
                visits: 0.0,
                score: 0.0,
            });
            let child = tree.len() - 1;
            tree[node].children.push(child);
            node = child;
        }
        // Simulation: random actions to the end.
        playout(&mut g, rng, &mut scratch);
        let first = value(&g);
        // Back-propagation.
        let mut at = Some(node);
        while let Some(i) = at {
            let n = &mut tree[i];
            n.visits += 1.0;
            n.score += match n.mover {
                Some(Side::First) => first,
                Some(Side::Second) => 1.0 - first,
                None => 0.5,
            };
            at = n.parent;
        }
    }
    // The most visited move is the most trusted.
    tree[0]
        .children
        .iter()
        .max_by(|&&a, &&b| tree[a].visits.total_cmp(&tree[b].visits))
        .and_then(|&c| tree[c].action)
        .or_else(|| tree[0].untried.first().copied())
}

/// Whether, after `action`, the opponent (if it acts next) has a move that wins at once.
fn gives_a_win_in_one<G: Game>(game: &G, action: G::Action) -> bool {
    let me = game.to_act();
    let mut g = game.clone();
    g.apply(action);
    let Some(next) = g.to_act() else {
        return false;
    };
    if Some(next) == me {
        return false;
    }
    let mut replies = Vec::new();
    g.legal_actions(&mut replies);
    replies.into_iter().any(|r| {
        let mut h = g.clone();
        h.apply(r);
        h.outcome().is_some_and(|o| o.winner == Some(next))
    })
}

/// Plays random actions until the game ends or the cap.
fn playout<G: Game>(g: &mut G, rng: &mut Rng, scratch: &mut Vec<G::Action>) {
    for _ in 0..PLAYOUT_CAP {
        if g.outcome().is_some() {
            return;
        }
        scratch.clear();
        g.legal_actions(scratch);
        if scratch.is_empty() {
            return;
        }
        g.apply(scratch[rng.below(scratch.len())]);
    }
}

/// What a playout's last position is worth to the first side, 0 to 1: a win 1, a loss 0;
/// a draw, or a game the cap cut short, 0.5 moved by material. Random Staku games mostly
/// end by the no-capture limit and random Akunur games wander past the cap, so without
/// the material term the search could not tell a good move from a bad one there.
fn value<G: Game>(g: &G) -> f64 {
    match g.outcome() {
        Some(o) => match o.winner {
            Some(Side::First) => 1.0,
            Some(Side::Second) => 0.0,
            None => 0.5 + 0.2 * material(g),
        },
        None => 0.5 + 0.4 * material(g),
    }
}

/// The first side's material lead, -1 to 1, from the counts the engine's view reports
/// (Staku's tokens on the board; Akunur's stones on the board, corners held and tokens won);
/// 0 for games whose counts say nothing about who is ahead (Ūnane, Akron).
fn material<G: Game>(g: &G) -> f64 {
    let view = g.view();
    let [a, b] = G::SIDE_NAMES;
    let mut total = 0.0;
    let mut weights = 0.0;
    for (key, weight) in [
        ("tokens_on_board", 1.0),
        ("on_board", 1.0),
        ("corners_held", 2.0),
        ("scores", 1.0),
    ] {
        let (Some(x), Some(y)) = (view[key][a].as_f64(), view[key][b].as_f64()) else {
            continue;
        };
        weights += weight;
        if x + y > 0.0 {
            total += weight * (x - y) / (x + y);
        }
    }
    if weights > 0.0 {
        total / weights
    } else {
        0.0
    }
}

/// Playouts per second from the start position (the README's search-speed figure).
pub fn playout_rate<G: Game>(start: &G, seconds: f64, rng: &mut Rng) -> f64 {
    let began = Instant::now();
    let mut n = 0u64;
    let mut scratch = Vec::new();
    while began.elapsed().as_secs_f64() < seconds {
        let mut g = start.clone();
        playout(&mut g, rng, &mut scratch);
        std::hint::black_box(value(&g));
        n += 1;
    }
    n as f64 / began.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_protocol::unane::Unane;

    #[test]
    fn takes_a_win_in_one_and_plays_only_legal_moves() {
        // Black to act can remove a4 and leave one black group (the rules guide's example).
        let options = Default::default();
        let g = Unane::from_position(&options, "b..../..bw./..bww/.w..w b 8").unwrap();
        let mut rng = Rng::new(7);
        for level in 1..=5 {
            let a = choose(&g, level, Duration::from_millis(50), &mut rng).unwrap();
            assert_eq!(g.format_action(a), "-a4", "level {level}");
        }
        // From the start, every level's choice is legal.
        let g = Unane::start(&options);
        let mut legal = Vec::new();
        g.legal_actions(&mut legal);
        for level in 1..=5 {
            let a = choose(&g, level, Duration::from_millis(30), &mut rng).unwrap();
            assert!(legal.contains(&a), "level {level}");
        }
    }

    #[test]
    fn no_choice_once_the_game_is_over() {
        let options = Default::default();
        let mut g = Unane::from_position(&options, "b..../..bw./..bww/.w..w b 8").unwrap();
        let a = g.parse_action("-a4").unwrap();
        g.apply(a);
        assert!(g.outcome().is_some());
        assert_eq!(
            choose(&g, 3, Duration::from_millis(10), &mut Rng::new(1)),
            None
        );
    }
}
