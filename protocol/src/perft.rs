//! Perft: counting action sequences, the first correctness tool for a move generator.

use crate::game::Game;

/// Number of distinct action sequences of exactly `depth` actions from `game`.
///
/// A sequence whose game ends before `depth` is not extended and not counted. Depth 0 is 1.
/// The last level is counted without applying its actions (bulk counting), which is why
/// `legal_actions` must never list duplicates.
pub fn perft<G: Game>(game: &G, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut actions = Vec::new();
    game.legal_actions(&mut actions);
    if depth == 1 {
        return actions.len() as u64;
    }
    let mut total = 0;
    for action in actions {
        let mut next = game.clone();
        next.apply(action);
        total += perft(&next, depth - 1);
    }
    total
}

/// Perft split by first action: `(canonical notation, count)` for every legal action.
pub fn divide<G: Game>(game: &G, depth: u32) -> Vec<(String, u64)> {
    let mut actions = Vec::new();
    game.legal_actions(&mut actions);
    actions
        .into_iter()
        .map(|action| {
            let notation = game.format_action(action);
            let mut next = game.clone();
            next.apply(action);
            let count = if depth <= 1 { 1 } else { next.perft(depth - 1) };
            (notation, count)
        })
        .collect()
}
