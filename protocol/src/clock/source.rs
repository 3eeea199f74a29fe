//! Where "now" comes from. The clock maths never reads time itself; the server holds a
//! [`TimeSource`] and passes its readings in, so tests can substitute [`VirtualTime`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time in milliseconds since the Unix epoch.
pub trait TimeSource: Send + Sync {
    /// The current time (ms since the epoch).
    fn now_ms(&self) -> u64;
}

/// The system's wall clock (what `ping`'s `server_time` reports).
#[derive(Copy, Clone, Debug, Default)]
pub struct SystemTimeSource;

impl TimeSource for SystemTimeSource {
    fn now_ms(&self) -> u64 {
        // A wall clock set before 1970 reads as 0 rather than panicking a game actor.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A manually advanced time for tests; clones share the same reading.
#[derive(Clone, Debug, Default)]
pub struct VirtualTime(Arc<AtomicU64>);

impl VirtualTime {
    /// A virtual time reading `start_ms`.
    pub fn new(start_ms: u64) -> VirtualTime {
        VirtualTime(Arc::new(AtomicU64::new(start_ms)))
    }

    /// Moves time forward by `ms` and returns the new reading.
    pub fn advance(&self, ms: u64) -> u64 {
        self.0.fetch_add(ms, Ordering::SeqCst) + ms
    }

    /// Sets the reading (tests may also move it backwards to simulate a wall-clock step).
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl TimeSource for VirtualTime {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
