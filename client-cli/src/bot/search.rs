//! The bot's search: Monte Carlo tree search (UCT) over the rules engines' typed actions,
//! generic over [`Game`](stoa_protocol::Game) plus the game knowledge in
//! [`super::knowledge`], so a playout costs no notation strings and no JSON.
//!
//! Why MCTS for all four games: none has a cheap, trustworthy evaluation for the whole game
//! (connection games, stacking, echoes), while playouts are cheap and the engines end every
//! game by rule. Where random playouts say little (Akunur) they are cut short and judged by
//! the game's evaluation instead; in Akron the search adds RAVE statistics. A side may act
//! twice in a row (Akunur's bonus placements) and a swap exchanges seats, so every node
//! records who acted into it rather than assuming sides alternate.
//!
//! Levels: 1 plays a cheap search and makes mistakes on purpose (a random move one time in
//! eight); 2–4 search a fixed number of playouts; 5 searches for as long as the time it is
//! given. Every level takes a win in one; from level 2 on (in Akron from level 1) none
//! plays a move that loses within two plies while another exists.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use stoa_protocol::{Game, Side};

use super::knowledge::Knowledge;

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

/// How many times the game's proof budget ([`Knowledge::PROOF_NODES`]) a level spends.
fn proof_factor(level: u8) -> u32 {
    match level {
        0 | 1 => 1,
        2 => 2,
        3 => 4,
        4 => 8,
        _ => 20,
    }
}

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
    /// All-moves-as-first statistics (games with [`Knowledge::RAVE`]): simulations through
    /// the parent in which `mover` played `action` at any later point, and their score.
    amaf_visits: f64,
    amaf_score: f64,
}

/// How many real visits the all-moves-as-first estimate is worth: it dominates a node's
/// value while the node has few visits of its own and fades as they grow.
const RAVE_EQUIVALENCE: f64 = 500.0;

/// Chooses an action for the side to act in `game`, at `level`, within `budget` (level 5
/// uses all of it; the other levels stop early once their playouts are done). `None` when
/// the game is over.
pub fn choose<G: Knowledge>(
    game: &G,
    level: u8,
    budget: Duration,
    rng: &mut Rng,
) -> Option<G::Action> {
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
    // From level 2 on (level 1 too where the game asks for it, see
    // [`Knowledge::GUARD_AT_LEVEL_1`]), no move is played that loses at once or lets the
    // opponent win at once while another exists: with hundreds of moves (Staku) a short
    // search could not see it, and with Akron's delayed win the threat is two plies deep
    // (a connection that cannot be broken).
    let guarded = level >= 2 || G::GUARD_AT_LEVEL_1;
    let safe: Vec<G::Action> = actions
        .iter()
        .copied()
        .filter(|&a| !guarded || !gives_a_win(game, a))
        .collect();
    if safe.len() == 1 {
        return Some(safe[0]);
    }
    if !safe.is_empty() {
        actions = safe;
    }
    // Short, sharp endings (Ūnane) are solved outright within a node budget: a proven win
    // is played and proven losses are avoided, at every level, the stronger ones looking
    // further (level 5's budget is twenty times level 1's).
    if G::PROOF_NODES > 0 {
        let mut budget = G::PROOF_NODES.saturating_mul(proof_factor(level));
        let mut scratch = Vec::new();
        for depth in 3..=64 {
            let mut lost = Vec::new();
            for &a in &actions {
                match prove_action(game, a, depth, &mut budget, &mut scratch) {
                    Proof::Win => return Some(a),
                    Proof::Loss => lost.push(a),
                    Proof::Unknown => {}
                }
            }
            if lost.len() < actions.len() {
                actions.retain(|a| !lost.contains(a));
            }
            if actions.len() == 1 {
                return Some(actions[0]);
            }
            if budget == 0 {
                break;
            }
        }
    }
    // Level 1's mistakes on purpose: one time in eight a random move (drawn from the moves
    // left after the guard, where level 1 has one, and the proof search).
    if level <= 1 && rng.below(8) == 0 {
        return Some(actions[rng.below(actions.len())]);
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
        amaf_visits: 0.0,
        amaf_score: 0.0,
    }];
    let mut done = 0u32;
    let mut scratch = Vec::new();
    // Who played what since the root, for the all-moves-as-first statistics.
    let mut trace: Vec<(Side, G::Action)> = Vec::new();
    let mut seen: HashSet<(Side, G::Action)> = HashSet::new();
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
        trace.clear();
        while tree[node].untried.is_empty() && !tree[node].children.is_empty() {
            let parent_visits = tree[node].visits.max(1.0).ln();
            let mut best = tree[node].children[0];
            let mut best_value = f64::MIN;
            for &c in &tree[node].children {
                let n = &tree[c];
                let mean = n.score / n.visits;
                let value = if G::RAVE && n.amaf_visits > 0.0 {
                    let beta = (RAVE_EQUIVALENCE / (3.0 * n.visits + RAVE_EQUIVALENCE)).sqrt();
                    (1.0 - beta) * mean
                        + beta * n.amaf_score / n.amaf_visits
                        + 0.6 * (parent_visits / n.visits).sqrt()
                } else {
                    mean + 1.2 * (parent_visits / n.visits).sqrt()
                };
                if value > best_value {
                    best_value = value;
                    best = c;
                }
            }
            node = best;
            let Some(action) = tree[node].action else {
                break;
            };
            if let Some(mover) = tree[node].mover {
                trace.push((mover, action));
            }
            g.apply(action);
        }
        // Expansion: one untried action.
        if !tree[node].untried.is_empty() {
            let i = rng.below(tree[node].untried.len());
            let action = tree[node].untried.swap_remove(i);
            let mover = g.to_act();
            if let Some(m) = mover {
                trace.push((m, action));
            }
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
                amaf_visits: 0.0,
                amaf_score: 0.0,
            });
            let child = tree.len() - 1;
            tree[node].children.push(child);
            node = child;
        }
        // Simulation: the game's playout actions.
        let in_tree = trace.len();
        playout(&mut g, rng, &mut scratch, G::RAVE.then_some(&mut trace));
        let first = value(&g);
        let for_side = |side: Side| match side {
            Side::First => first,
            Side::Second => 1.0 - first,
        };
        // Back-propagation. A node at depth k sees the actions played from ply k of the
        // trace on: the playout's first, then one more tree action per level up.
        seen.clear();
        if G::RAVE {
            seen.extend(trace[in_tree..].iter().copied());
        }
        let mut depth = in_tree;
        let mut at = Some(node);
        while let Some(i) = at {
            let n = &mut tree[i];
            n.visits += 1.0;
            n.score += n.mover.map_or(0.5, for_side);
            at = n.parent;
            if G::RAVE {
                for k in 0..tree[i].children.len() {
                    let c = tree[i].children[k];
                    let (Some(mover), Some(action)) = (tree[c].mover, tree[c].action) else {
                        continue;
                    };
                    if seen.contains(&(mover, action)) {
                        tree[c].amaf_visits += 1.0;
                        tree[c].amaf_score += for_side(mover);
                    }
                }
                if depth > 0 {
                    depth -= 1;
                    seen.insert(trace[depth]);
                }
            }
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

/// Whether `action` loses at once, or lets the opponent (if it acts next) reply with a
/// move that wins at once or that leaves a pending win ([`Knowledge::pending_win`], Akron's
/// connection) which no answer undoes.
fn gives_a_win<G: Knowledge>(game: &G, action: G::Action) -> bool {
    let Some(me) = game.to_act() else {
        return false;
    };
    let opponent = me.other();
    let mut g = game.clone();
    g.apply(action);
    let Some(next) = g.to_act() else {
        return g.outcome().is_some_and(|o| o.winner == Some(opponent));
    };
    if next == me {
        return false;
    }
    let mut replies = Vec::new();
    g.legal_actions(&mut replies);
    let mut answers = Vec::new();
    replies.into_iter().any(|r| {
        let mut h = g.clone();
        h.apply(r);
        match h.outcome() {
            Some(o) => o.winner == Some(opponent),
            None => {
                h.to_act() == Some(me) && h.pending_win(opponent) && {
                    answers.clear();
                    h.legal_actions(&mut answers);
                    answers.iter().all(|&q| {
                        let mut k = h.clone();
                        k.apply(q);
                        k.outcome().is_some_and(|o| o.winner == Some(opponent))
                    })
                }
            }
        }
    })
}

/// What a bounded proof search established for one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    /// A forced win.
    Win,
    /// A forced loss.
    Loss,
    /// Neither (a draw, or beyond the depth or the node budget).
    Unknown,
}

/// The proof for the side to act in `game` after it plays `action`, looking `depth` plies
/// deep (the action included) within `budget` nodes. Exact whenever it says `Win` or
/// `Loss`: a line cut short by depth or budget only ever yields `Unknown`.
fn prove_action<G: Game>(
    game: &G,
    action: G::Action,
    depth: u32,
    budget: &mut u32,
    scratch: &mut Vec<G::Action>,
) -> Proof {
    let Some(me) = game.to_act() else {
        return Proof::Unknown;
    };
    if *budget == 0 {
        return Proof::Unknown;
    }
    *budget -= 1;
    let mut g = game.clone();
    g.apply(action);
    if let Some(o) = g.outcome() {
        return match o.winner {
            Some(w) if w == me => Proof::Win,
            Some(_) => Proof::Loss,
            None => Proof::Unknown,
        };
    }
    if depth <= 1 {
        return Proof::Unknown;
    }
    let Some(next) = g.to_act() else {
        return Proof::Unknown;
    };
    scratch.clear();
    g.legal_actions(scratch);
    let replies = std::mem::take(scratch);
    // The side to act next: a win for it is found by one reply, a loss needs all of them.
    let mut all_lose = true;
    let mut found = Proof::Unknown;
    for &r in &replies {
        match prove_action(&g, r, depth - 1, budget, scratch) {
            Proof::Win => {
                found = Proof::Win;
                all_lose = false;
                break;
            }
            Proof::Loss => {}
            Proof::Unknown => all_lose = false,
        }
    }
    let for_next = if found == Proof::Win {
        Proof::Win
    } else if all_lose && !replies.is_empty() {
        Proof::Loss
    } else {
        Proof::Unknown
    };
    *scratch = replies;
    match (for_next, next == me) {
        (Proof::Unknown, _) => Proof::Unknown,
        (p, true) => p,
        (Proof::Win, false) => Proof::Loss,
        (_, false) => Proof::Win,
    }
}

/// Plays the game's playout actions until the game ends or for its playout length,
/// appending who played what to `trace` when there is one.
fn playout<G: Knowledge>(
    g: &mut G,
    rng: &mut Rng,
    scratch: &mut Vec<G::Action>,
    mut trace: Option<&mut Vec<(Side, G::Action)>>,
) {
    for _ in 0..G::PLAYOUT_PLIES {
        let Some(mover) = g.to_act() else {
            return;
        };
        let Some(action) = g.playout_action(rng, scratch) else {
            return;
        };
        if let Some(t) = trace.as_deref_mut() {
            t.push((mover, action));
        }
        g.apply(action);
    }
}

/// What a playout's last position is worth to the first side, 0 to 1: a win 1, a loss 0;
/// a draw, or a playout stopped short, 0.5 moved by the game's evaluation
/// ([`Knowledge::lead`]). Random Staku games mostly end by the no-capture limit and Akunur
/// playouts stop after a few plies, so without that term the search could not tell a good
/// move from a bad one there.
fn value<G: Knowledge>(g: &G) -> f64 {
    match g.outcome() {
        Some(o) => match o.winner {
            Some(Side::First) => 1.0,
            Some(Side::Second) => 0.0,
            None => 0.5 + 0.2 * g.lead(),
        },
        None => 0.5 + 0.4 * g.lead(),
    }
}

/// Playouts per second from the start position (docs/bots.md's search-speed figure).
pub fn playout_rate<G: Knowledge>(start: &G, seconds: f64, rng: &mut Rng) -> f64 {
    let began = Instant::now();
    let mut n = 0u64;
    let mut scratch = Vec::new();
    while began.elapsed().as_secs_f64() < seconds {
        let mut g = start.clone();
        playout(&mut g, rng, &mut scratch, None);
        std::hint::black_box(value(&g));
        n += 1;
    }
    n as f64 / began.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_protocol::unane::Unane;
    use stoa_protocol::Game;

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
