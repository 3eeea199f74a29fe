//! Choosing who plays whom within one queue in one wave. Pure: the entries
//! and the schedule in, index pairs out.

use super::Widening;

/// What the matcher needs to know of one waiting entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate<'a, P> {
    pub player: &'a P,
    pub rating: f64,
    pub waited_ms: u64,
}

/// The pairs (indices into `entries`, which are in arrival order) to make now.
///
/// * Unrated: first come, first served: 1st with 2nd, 3rd with 4th, …
/// * Rated, in two passes:
///   1. Entries whose window is already unlimited (they have waited
///      `unlimited_after_ms`) are served first, longest-waiting first, each
///      with the closest-rated entry still free, whatever that entry's own
///      window says. This is what guarantees that nobody waits for ever,
///      even an outlier in a busy queue whose neighbours keep pairing among
///      themselves.
///   2. Among the rest, every pair whose difference both players accept
///      (within *each* one's window: a newcomer who asked for a close game
///      is not handed a distant one just because the other waited) is a
///      candidate; the closest pairs are made greedily, ties going to the
///      pair that arrived first.
///
/// Whatever the input, a player is never paired with themself and appears in
/// at most one pair. O(n² log n) for n entries in the queue.
pub(crate) fn select_pairs<P: Eq>(
    entries: &[Candidate<'_, P>],
    rated: bool,
    widening: &Widening,
) -> Vec<(usize, usize)> {
    let n = entries.len();
    let mut used = vec![false; n];
    let mut pairs = Vec::new();
    let distinct = |i: usize, j: usize| i != j && entries[i].player != entries[j].player;

    if !rated {
        let mut waiting: Option<usize> = None;
        for j in 0..n {
            match waiting {
                Some(i) if distinct(i, j) => {
                    pairs.push((i, j));
                    waiting = None;
                }
                // A duplicate of the waiting player (impossible through
                // `Pairing`, which keeps one entry per player) is skipped.
                Some(_) => {}
                None => waiting = Some(j),
            }
        }
        return pairs;
    }

    let diff = |i: usize, j: usize| (entries[i].rating - entries[j].rating).abs();

    // Pass 1: the starving, longest-waiting first (arrival order).
    for i in 0..n {
        if used[i] || !widening.is_unlimited(entries[i].waited_ms) {
            continue;
        }
        let best = (0..n)
            .filter(|&j| !used[j] && distinct(i, j))
            .min_by(|&a, &b| diff(i, a).total_cmp(&diff(i, b)).then(a.cmp(&b)));
        if let Some(j) = best {
            used[i] = true;
            used[j] = true;
            pairs.push((i.min(j), i.max(j)));
        }
    }

    // Pass 2: closest mutually acceptable pairs first.
    let gaps: Vec<f64> = entries.iter().map(|e| widening.gap(e.waited_ms)).collect();
    let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
    for i in 0..n {
        if used[i] {
            continue;
        }
        for j in i + 1..n {
            if used[j] || !distinct(i, j) {
                continue;
            }
            let d = diff(i, j);
            if d <= gaps[i] && d <= gaps[j] {
                candidates.push((d, i, j));
            }
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    for (_, i, j) in candidates {
        if !used[i] && !used[j] {
            used[i] = true;
            used[j] = true;
            pairs.push((i, j));
        }
    }
    pairs
}
