//! Which free arena players play each other next.
//!
//! The free players (in the pool, not playing, not paused, online) come in standings
//! order; neighbours are paired, so scores are close. Two players whose last game was
//! against each other are not paired again while the arena has any other active player
//! (who will be free sooner or later): they wait instead. Only when the pair are the
//! arena's only active players do they play again (otherwise the arena would stall).
//!
//! The choice is greedy down the standings (each player takes the nearest free player
//! below that is not a repeat), then repaired: two players left over because they would
//! repeat take the partners of an earlier pair when that makes two pairs without a
//! repeat, so a leftover is only left when no exchange helps.

/// A free player as the pairing sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// The player's id.
    pub id: &'a str,
    /// Whom the player's last arena game was against.
    pub last_opponent: Option<&'a str>,
}

fn repeat(a: &Candidate<'_>, b: &Candidate<'_>) -> bool {
    a.last_opponent == Some(b.id) || b.last_opponent == Some(a.id)
}

/// Pairs `free` (in standings order); returns index pairs into `free`, the better-placed
/// player first. `allow_repeats`: the two would-be repeaters are the arena's only active
/// players, so a rematch is allowed.
pub fn pair(free: &[Candidate<'_>], allow_repeats: bool) -> Vec<(usize, usize)> {
    let n = free.len();
    let ok = |i: usize, j: usize| allow_repeats || !repeat(&free[i], &free[j]);
    let mut used = vec![false; n];
    let mut pairs = Vec::new();
    for i in 0..n {
        if used[i] {
            continue;
        }
        if let Some(j) = (i + 1..n).find(|&j| !used[j] && ok(i, j)) {
            used[i] = true;
            used[j] = true;
            pairs.push((i, j));
        }
    }
    // Repair: leftovers x, y (necessarily a repeat) swap into an existing pair (a, b) when
    // both new pairs are allowed. Each success pairs two more players, so this ends.
    loop {
        let left: Vec<usize> = (0..n).filter(|&i| !used[i]).collect();
        let mut changed = false;
        'search: for (k, &x) in left.iter().enumerate() {
            for &y in &left[k + 1..] {
                for p in 0..pairs.len() {
                    let (a, b) = pairs[p];
                    let swap = if ok(x, a) && ok(y, b) {
                        Some(((x, a), (y, b)))
                    } else if ok(x, b) && ok(y, a) {
                        Some(((x, b), (y, a)))
                    } else {
                        None
                    };
                    if let Some((p1, p2)) = swap {
                        let sorted = |(u, v): (usize, usize)| (u.min(v), u.max(v));
                        pairs[p] = sorted(p1);
                        pairs.push(sorted(p2));
                        used[x] = true;
                        used[y] = true;
                        changed = true;
                        break 'search;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c<'a>(id: &'a str, last: Option<&'a str>) -> Candidate<'a> {
        Candidate {
            id,
            last_opponent: last,
        }
    }

    #[test]
    fn neighbours_are_paired() {
        let free = [
            c("a", None),
            c("b", None),
            c("c", None),
            c("d", None),
            c("e", None),
        ];
        assert_eq!(pair(&free, false), vec![(0, 1), (2, 3)]);
    }

    #[test]
    fn last_opponents_are_avoided() {
        let free = [
            c("a", Some("b")),
            c("b", Some("a")),
            c("c", Some("d")),
            c("d", Some("c")),
        ];
        assert_eq!(pair(&free, false), vec![(0, 2), (1, 3)]);
        // One-sided memory counts too: b played a last, a has played someone since.
        let free = [c("a", Some("x")), c("b", Some("a")), c("c", None)];
        assert_eq!(pair(&free, false), vec![(0, 2)]);
    }

    #[test]
    fn two_repeaters_wait_unless_alone() {
        let free = [c("a", Some("b")), c("b", Some("a"))];
        assert!(pair(&free, false).is_empty());
        assert_eq!(pair(&free, true), vec![(0, 1)]);
    }

    #[test]
    fn greedy_leftovers_are_repaired() {
        // Greedy pairs a-b, then c and d would repeat: c-a and d-b (or c-b, d-a) instead.
        let free = [
            c("a", None),
            c("b", None),
            c("c", Some("d")),
            c("d", Some("c")),
        ];
        let pairs = pair(&free, false);
        assert_eq!(pairs.len(), 2);
        for (i, j) in &pairs {
            assert!(!repeat(&free[*i], &free[*j]), "{pairs:?}");
        }
        assert_eq!(pairs, vec![(0, 2), (1, 3)]);
    }

    #[test]
    fn nobody_is_paired_twice() {
        let ids: Vec<String> = (0..9).map(|i| format!("p{i}")).collect();
        let free: Vec<Candidate> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let last = ids[(i + 1) % ids.len()].as_str();
                c(id, Some(last))
            })
            .collect();
        let pairs = pair(&free, false);
        assert_eq!(pairs.len(), 4);
        let mut seen = std::collections::HashSet::new();
        for (i, j) in pairs {
            assert!(seen.insert(i) && seen.insert(j));
            assert!(!repeat(&free[i], &free[j]));
        }
    }
}
