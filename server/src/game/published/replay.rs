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
    /// The lowest seq the document ever went back to (`u64::MAX`: never): a `since` above
    /// it may name a document holding events that were lost, and gets the snapshot.
    went_back_to: u64,
}

impl Replay {
    /// An empty buffer keeping at most `capacity` diffs.
    pub fn new(capacity: usize) -> Self {
        Replay {
            capacity,
            // Grown as diffs come (not allocated up front): most live games at any
            // moment are short or idle, and a full buffer costs ~10 KiB per game.
            diffs: VecDeque::new(),
            went_back_to: u64::MAX,
        }
    }

    /// The document went back to `seq`: the diffs kept are of another history now.
    pub fn rewind(&mut self, seq: u64) {
        self.diffs.clear();
        self.went_back_to = self.went_back_to.min(seq);
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
        if since > current || since > self.went_back_to {
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
