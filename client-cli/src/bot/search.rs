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

use std::time::{Duration, Instant};

use stoa_protocol::{Game, Side};

use super::knowledge::Knowledge;
use super::proof;
use super::tree::Tree;

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
    if actions.len() <= 1 {
        return actions.first().copied();
    }
    // An immediate win is always taken (even a level 1 bot sees a win in one).
    if let Some(win) = actions.iter().copied().find(|&a| wins_at_once(game, a)) {
        return Some(win);
    }
    let actions = guard(game, level, actions);
    if actions.len() == 1 {
        return Some(actions[0]);
    }
    let actions = proof::prune(game, level, actions);
    if actions.len() == 1 {
        return Some(actions[0]);
    }
    // Level 1's mistakes on purpose: one time in eight a random move (drawn from the moves
    // left after the guard, where level 1 has one, and the proof search).
    if level <= 1 && rng.below(8) == 0 {
        return Some(actions[rng.below(actions.len())]);
    }
    Tree::new(actions).search(game, playouts(level), Instant::now() + budget, rng)
}

/// Whether playing `action` wins the game for the side playing it.
fn wins_at_once<G: Game>(game: &G, action: G::Action) -> bool {
    let mut g = game.clone();
    let me = g.to_act();
    g.apply(action);
    g.outcome()
        .is_some_and(|o| o.winner.is_some() && o.winner == me)
}

/// The actions that neither lose at once nor let the opponent win at once, when any is
/// left (else all of them).
///
/// From level 2 on (level 1 too where the game asks for it, see
/// [`Knowledge::GUARD_AT_LEVEL_1`]): with hundreds of moves (Staku) a short search could
/// not see such a move, and with Akron's delayed win the threat is two plies deep (a
/// connection that cannot be broken).
fn guard<G: Knowledge>(game: &G, level: u8, actions: Vec<G::Action>) -> Vec<G::Action> {
    if level < 2 && !G::GUARD_AT_LEVEL_1 {
        return actions;
    }
    let safe: Vec<G::Action> = actions
        .iter()
        .copied()
        .filter(|&a| !gives_a_win(game, a))
        .collect();
    if safe.is_empty() {
        actions
    } else {
        safe
    }
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

/// Plays the game's playout actions until the game ends or for its playout length,
/// appending who played what to `trace` when there is one.
pub(super) fn playout<G: Knowledge>(
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
pub(super) fn value<G: Knowledge>(g: &G) -> f64 {
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
