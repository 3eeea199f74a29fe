//! Engine review of a finished game (`stoa analyse --serve`): per ply, the win probability of
//! the side to act, the engine's preferred move, and a mark when the move played lost
//! enough of it ([`Mark::of`]).
//!
//! Why the bot's own search with a fixed budget: the review must judge every position alike
//! (a budget by the clock would make late, fast moves look worse), and a proven result must
//! read as certain. So a position is judged in three steps: a win in one is a win (1.0); a
//! bounded proof search ([`proof::prove_action`], deepening) settles short forced wins (1.0)
//! and leaves out proven losses; what is left is searched by Monte Carlo tree search for a
//! fixed number of playouts, and the most visited move's mean score is the win probability,
//! kept inside 0.02–0.98 since a search by sampling proves nothing.

use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_protocol::akron::Akron;
use stoa_protocol::akunur::Akunur;
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::wire::{AnalysisPly, AnalysisResult, Mark};
use stoa_protocol::Side;

use super::knowledge::Knowledge;
use super::proof::{self, Proof};
use super::search::Rng;
use super::tree::Tree;

/// How much the engine searches per position.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Playouts of the tree search.
    pub playouts: u32,
    /// Nodes of the proof search.
    pub proof_nodes: u32,
    /// The proof search's deepest depth, in plies.
    pub proof_depth: u32,
    /// The longest time per position (the playouts stop early past it).
    pub per_position: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            playouts: 3_000,
            proof_nodes: 2_000_000,
            proof_depth: 5,
            per_position: Duration::from_secs(2),
        }
    }
}

impl Budget {
    /// The budget as the result's `engine` text.
    pub fn describe(&self) -> String {
        format!(
            "stoa mcts {} playouts, proof search {} nodes to depth {}",
            self.playouts, self.proof_nodes, self.proof_depth
        )
    }
}

/// Unsure values stay this far from 0 and 1: only a proof is certain.
const UNPROVEN_MARGIN: f64 = 0.02;

/// What the engine thinks of one position: its preferred action and the win probability of
/// the side to act.
#[derive(Clone, Copy, Debug)]
pub struct Judged<A> {
    /// The preferred action.
    pub best: A,
    /// The side to act's win probability, 0 to 1.
    pub value: f64,
}

/// Judges the position `game` for its side to act; `None` once the game is over.
pub fn judge<G: Knowledge>(game: &G, budget: &Budget, rng: &mut Rng) -> Option<Judged<G::Action>> {
    game.to_act()?;
    let mut actions = Vec::new();
    game.legal_actions(&mut actions);
    if actions.is_empty() {
        return None;
    }
    let mut nodes = budget.proof_nodes;
    let mut scratch = Vec::new();
    // Depth 1 first: a win in one is found before anything deeper is spent. Then from
    // depth 3 on: a search to depth d finds every result within d plies, so depth 2 would
    // only cost as much again where moves are many (Staku's hundreds); depth 4 stays, for
    // Akron's wins, which count at the opponent's reply.
    let mut lost: Vec<G::Action> = Vec::new();
    let depths = std::iter::once(1).chain(3..=budget.proof_depth);
    for depth in depths {
        lost.clear();
        for &a in &actions {
            match proof::prove_action(game, a, depth, &mut nodes, &mut scratch) {
                Proof::Win => {
                    return Some(Judged {
                        best: a,
                        value: 1.0,
                    })
                }
                Proof::Loss => lost.push(a),
                Proof::Unknown => {}
            }
        }
        if lost.len() == actions.len() || nodes == 0 {
            break;
        }
    }
    if lost.len() == actions.len() {
        // Every move loses by force: the least bad is still searched for, the value is 0.
        let best = searched(game, actions, budget, rng)?.0;
        return Some(Judged { best, value: 0.0 });
    }
    actions.retain(|a| !lost.contains(a));
    let (best, value) = searched(game, actions, budget, rng)?;
    Some(Judged {
        best,
        value: value.clamp(UNPROVEN_MARGIN, 1.0 - UNPROVEN_MARGIN),
    })
}

/// The tree search's choice among `actions` and its mean score for the side to act.
fn searched<G: Knowledge>(
    game: &G,
    actions: Vec<G::Action>,
    budget: &Budget,
    rng: &mut Rng,
) -> Option<(G::Action, f64)> {
    Tree::new(actions).search_valued(
        game,
        Some(budget.playouts),
        Instant::now() + budget.per_position,
        rng,
    )
}

/// The value of the position after a move for `mover`: the result when the game is over,
/// else the judged value for the side to act there, turned round when that is the other
/// side. Also the judgement, for the next ply.
fn after_move<G: Knowledge>(
    g: &G,
    mover: Side,
    budget: &Budget,
    rng: &mut Rng,
) -> (f64, Option<Judged<G::Action>>) {
    if let Some(o) = g.outcome() {
        let v = match o.winner {
            Some(w) if w == mover => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
        return (v, None);
    }
    let judged = judge(g, budget, rng);
    let v = match (&judged, g.to_act()) {
        (Some(j), Some(side)) if side == mover => j.value,
        (Some(j), Some(_)) => 1.0 - j.value,
        _ => 0.5,
    };
    (v, judged)
}

/// The review of a game of `kind` with `options` played as `moves` from the start.
pub fn review(
    kind: &str,
    options: &Value,
    moves: &[String],
    budget: &Budget,
    rng: &mut Rng,
) -> Result<AnalysisResult, String> {
    match kind {
        "unane" => review_game::<Unane>(options, moves, budget, rng),
        "staku" => review_game::<Staku>(options, moves, budget, rng),
        "akron" => review_game::<Akron>(options, moves, budget, rng),
        "akunur" => review_game::<Akunur>(options, moves, budget, rng),
        other => Err(format!("no engine for game kind '{other}'")),
    }
}

fn review_game<G: Knowledge>(
    options: &Value,
    moves: &[String],
    budget: &Budget,
    rng: &mut Rng,
) -> Result<AnalysisResult, String> {
    let options: G::Options = serde_json::from_value(options.clone()).map_err(|e| e.to_string())?;
    let options = G::validate_options(options).map_err(|e| e.to_string())?;
    let mut g = G::start(&options);
    let mut judged = judge(&g, budget, rng);
    let start = judged.map_or(0.5, |j| for_first(j.value, g.to_act()));
    let mut plies = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        let mover = g
            .to_act()
            .ok_or_else(|| format!("move {} ({m}) after the end", i + 1))?;
        let action = g.parse_action(m).map_err(|e| format!("{m}: {e}"))?;
        g.check(action).map_err(|e| format!("{m}: {e}"))?;
        let played = g.format_action(action);
        let best = judged.map(|j| g.format_action(j.best));
        let eval = judged.map_or(0.5, |j| j.value);
        g.apply(action);
        let (after, next) = after_move(&g, mover, budget, rng);
        let played_best = best.as_deref() == Some(played.as_str());
        plies.push(AnalysisPly {
            ply: i as u32 + 1,
            side: G::SIDE_NAMES[mover.index()].to_string(),
            mark: Mark::of(eval, after, played_best),
            played,
            eval,
            after,
            first: for_first(after, Some(mover)),
            best,
        });
        judged = next;
    }
    Ok(AnalysisResult {
        start,
        plies,
        engine: budget.describe(),
    })
}

/// A side's win probability as the first side's.
fn for_first(value: f64, side: Option<Side>) -> f64 {
    match side {
        Some(Side::Second) => 1.0 - value,
        _ => value,
    }
}

#[cfg(test)]
mod tests;
