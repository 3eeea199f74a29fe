//! How far apart in rating a waiting player accepts to be paired, as a
//! function of how long they have waited.

/// The widening schedule of a rated queue's acceptable rating gap.
///
/// A player who has waited `w` ms accepts an opponent whose rating differs by
/// at most `initial_gap + step_gap × ⌊w / step_ms⌋`, and anyone at all once
/// `w ≥ unlimited_after_ms`. The default is **100 points at join, +50 every
/// 2 s, unlimited after 30 s** (800 points just before that), so close games
/// are preferred while the queue is busy and nobody waits much more than 30 s
/// as long as anyone else is in the queue.
///
/// The schedule is a pure function of the waiting time, so tests drive it
/// with virtual time and two servers with the same configuration behave alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Widening {
    /// The gap accepted right at join.
    pub initial_gap: f64,
    /// How much the gap grows at each step.
    pub step_gap: f64,
    /// How long one step lasts, in ms (0 is treated as 1).
    pub step_ms: u64,
    /// From this waiting time on (ms) any gap is accepted.
    pub unlimited_after_ms: u64,
}

impl Default for Widening {
    fn default() -> Self {
        Widening {
            initial_gap: 100.0,
            step_gap: 50.0,
            step_ms: 2_000,
            unlimited_after_ms: 30_000,
        }
    }
}

impl Widening {
    /// The largest rating difference accepted after waiting `waited_ms`;
    /// `f64::INFINITY` once unlimited.
    pub fn gap(&self, waited_ms: u64) -> f64 {
        if waited_ms >= self.unlimited_after_ms {
            return f64::INFINITY;
        }
        let steps = waited_ms / self.step_ms.max(1);
        self.initial_gap + self.step_gap * steps as f64
    }

    /// Whether a player who has waited `waited_ms` accepts any opponent.
    pub fn is_unlimited(&self, waited_ms: u64) -> bool {
        waited_ms >= self.unlimited_after_ms
    }

    /// The shortest wait (ms) after which the gap covers `difference`: when a
    /// pair that is not acceptable yet will become so (if both keep waiting
    /// from the same moment). Useful for a server that schedules its next
    /// wave precisely instead of every second.
    pub fn wait_to_cover(&self, difference: f64) -> u64 {
        let difference = difference.abs();
        if difference <= self.initial_gap {
            return 0;
        }
        if self.step_gap <= 0.0 || difference.is_nan() {
            return self.unlimited_after_ms;
        }
        let steps = ((difference - self.initial_gap) / self.step_gap).ceil();
        let wait = steps * self.step_ms.max(1) as f64;
        if wait >= self.unlimited_after_ms as f64 {
            self.unlimited_after_ms
        } else {
            wait as u64
        }
    }
}
