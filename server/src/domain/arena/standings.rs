//! The standings' order: score (descending), then performance (descending), then player
//! id (ascending), so that equal players always appear in the same order everywhere.

use std::cmp::Ordering;

/// What a player is ranked by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked<'a> {
    /// The player's id.
    pub id: &'a str,
    /// Total points.
    pub score: u32,
    /// Performance rating (see [`super::Sheet::performance`]).
    pub performance: i64,
}

/// Compares two players: the better one first.
pub fn order(a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    b.score
        .cmp(&a.score)
        .then(b.performance.cmp(&a.performance))
        .then(a.id.cmp(b.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_then_performance_then_id() {
        let mut v = [
            Ranked {
                id: "c",
                score: 4,
                performance: 1500,
            },
            Ranked {
                id: "b",
                score: 4,
                performance: 1500,
            },
            Ranked {
                id: "a",
                score: 2,
                performance: 2500,
            },
            Ranked {
                id: "d",
                score: 4,
                performance: 1600,
            },
            Ranked {
                id: "e",
                score: 6,
                performance: 0,
            },
        ];
        v.sort_by(order);
        let ids: Vec<&str> = v.iter().map(|r| r.id).collect();
        assert_eq!(ids, ["e", "d", "b", "c", "a"]);
    }
}
