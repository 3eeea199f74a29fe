//! The bounded replay buffer of a published document: the last N encoded diffs, for a
//! watcher that gives `since` (`game.watch`).
//!
//! Why encoded bytes: a replay must be byte-identical to the live broadcast, and keeping the
//! frames avoids re-encoding.

use std::collections::VecDeque;

use crate::net::frame::Frame;

/// The last `capacity` diffs of one document, by seq.
#[derive(Debug)]
pub struct Replay {
    capacity: usize,
    diffs: VecDeque<(u64, Frame)>,
}

impl Replay {
    /// An empty buffer keeping at most `capacity` diffs.
    pub fn new(capacity: usize) -> Self {
        Replay {
            capacity,
            // Grown as diffs come (not allocated up front): most live games at any
            // moment are short or idle, and a full buffer costs ~10 KiB per game.
            diffs: VecDeque::new(),
        }
    }

    /// Appends the diff producing `seq`.
    pub fn push(&mut self, seq: u64, bytes: Frame) {
        if self.capacity == 0 {
            return;
        }
        while self.diffs.len() >= self.capacity {
            self.diffs.pop_front();
        }
        self.diffs.push_back((seq, bytes));
    }

    /// Whether any diff is kept.
    pub fn keeps(&self) -> bool {
        self.capacity > 0
    }

    /// The length of the newest diff's frame, if one is kept.
    pub fn last_len(&self) -> Option<usize> {
        self.diffs.back().map(|(_, f)| f.as_bytes().len())
    }

    /// The diffs after `since` up to `current`, when all are still buffered.
    pub fn since(&self, since: u64, current: u64) -> Option<Vec<Frame>> {
        if since > current {
            return None;
        }
        if since == current {
            return Some(Vec::new());
        }
        let first = self.diffs.front()?.0;
        if first > since + 1 {
            return None;
        }
        Some(
            self.diffs
                .iter()
                .filter(|(s, _)| *s > since)
                .map(|(_, b)| b.clone())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded() {
        let mut r = Replay::new(2);
        for s in 1..=3 {
            r.push(s, Frame::text(format!("{s}")));
        }
        assert!(r.since(0, 3).is_none());
        assert_eq!(r.since(1, 3).unwrap().len(), 2);
        assert_eq!(r.since(2, 3).unwrap().len(), 1);
        assert_eq!(r.since(3, 3).unwrap().len(), 0);
        assert!(r.since(4, 3).is_none());
        assert_eq!(r.last_len(), Some(3));
        assert_eq!(Replay::new(0).last_len(), None);
    }
}
