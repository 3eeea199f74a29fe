//! Short, sharp endings solved outright: a bounded proof search over the rules engine, so
//! that a proven win is played and proven losses are avoided at every level.

use stoa_protocol::Game;

use super::knowledge::Knowledge;

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

/// The actions left once proven losses are avoided: only the winning one when a win is
/// proven, else those not proven lost (all of them when every one is).
///
/// Why a deepening search within a node budget: short, sharp endings (Ūnane) are solved
/// outright that way, the stronger levels looking further (level 5's budget is twenty
/// times level 1's); games without a proof budget ([`Knowledge::PROOF_NODES`] 0) skip it.
pub(super) fn prune<G: Knowledge>(
    game: &G,
    level: u8,
    mut actions: Vec<G::Action>,
) -> Vec<G::Action> {
    if G::PROOF_NODES == 0 {
        return actions;
    }
    let mut budget = G::PROOF_NODES.saturating_mul(proof_factor(level));
    let mut scratch = Vec::new();
    for depth in 3..=64 {
        let mut lost = Vec::new();
        for &a in &actions {
            match prove_action(game, a, depth, &mut budget, &mut scratch) {
                Proof::Win => return vec![a],
                Proof::Loss => lost.push(a),
                Proof::Unknown => {}
            }
        }
        if lost.len() < actions.len() {
            actions.retain(|a| !lost.contains(a));
        }
        if actions.len() == 1 || budget == 0 {
            break;
        }
    }
    actions
}

/// What a bounded proof search established for one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proof {
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
pub(super) fn prove_action<G: Game>(
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
