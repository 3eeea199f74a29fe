//! The server's clock: what "now" is for game clocks, `since`, `server_time` and pings.
//!
//! Why not the wall clock directly: a game clock must never jump when the system clock is
//! stepped (NTP, an operator), and actor tests must be able to run on tokio's paused,
//! auto-advancing time. [`TokioTime`] reads the wall clock once, when the server starts,
//! and from then on advances with tokio's monotonic [`tokio::time::Instant`]: in production
//! it is the wall clock without the jumps, under `#[tokio::test(start_paused = true)]` it is
//! virtual time. Everything that publishes or compares server times (documents' `since`,
//! `ping`'s and `welcome`'s `server_time`, websocket ping round trips) reads the hub's one
//! [`TimeSource`], so clients that correct their offset with `ping` count down correctly.

use stoa_protocol::clock::{SystemTimeSource, TimeSource};
use tokio::time::Instant;

/// Wall-clock milliseconds at construction, advanced by tokio's monotonic clock.
#[derive(Copy, Clone, Debug)]
pub struct TokioTime {
    anchor_ms: u64,
    anchor: Instant,
}

impl TokioTime {
    /// Anchored at the current wall clock.
    pub fn new() -> TokioTime {
        TokioTime::anchored_at(SystemTimeSource.now_ms())
    }

    /// Anchored at `anchor_ms` now (tests use round numbers).
    pub fn anchored_at(anchor_ms: u64) -> TokioTime {
        TokioTime {
            anchor_ms,
            anchor: Instant::now(),
        }
    }
}

impl Default for TokioTime {
    fn default() -> Self {
        TokioTime::new()
    }
}

impl TimeSource for TokioTime {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.anchor.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.anchor_ms.saturating_add(elapsed)
    }
}

/// The tokio instant at which `source` will read `ms`, assuming it advances like tokio's
/// clock (true for [`TokioTime`]; for any other source a good enough approximation: the
/// actor re-checks the real reading when the timer fires and re-arms if it is early).
///
/// Waits are capped at [`MAX_WAIT_MS`] (an `Instant` far in the future can overflow); a
/// timer woken at the cap finds nothing due and is re-armed.
pub fn instant_at(source: &dyn TimeSource, ms: u64) -> Instant {
    let wait = ms.saturating_sub(source.now_ms()).min(MAX_WAIT_MS);
    Instant::now() + std::time::Duration::from_millis(wait)
}

/// A time (ms since the epoch) as people read it in a message: `Sun, 29 Nov 2026 04:10:00
/// GMT` (HTTP's date format, by the `httpdate` crate hyper already uses).
pub fn utc_text(ms: u64) -> String {
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
}

/// The longest single timer wait: 30 days (longer than any correspondence turn).
pub const MAX_WAIT_MS: u64 = 30 * 24 * 3_600_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn follows_tokio_time() {
        let t = TokioTime::anchored_at(1_000_000);
        assert_eq!(t.now_ms(), 1_000_000);
        tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
        assert_eq!(t.now_ms(), 1_002_500);
        let at = instant_at(&t, 1_003_000);
        tokio::time::sleep_until(at).await;
        assert_eq!(t.now_ms(), 1_003_000);
        // A time in the past maps to now; the far future to the cap.
        assert_eq!(instant_at(&t, 5), Instant::now());
        assert_eq!(
            instant_at(&t, u64::MAX),
            Instant::now() + std::time::Duration::from_millis(MAX_WAIT_MS)
        );
    }

    #[test]
    fn starts_at_the_wall_clock() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let wall = SystemTimeSource.now_ms();
            let t = TokioTime::new();
            assert!(t.now_ms() >= wall && t.now_ms() - wall < 1_000);
        });
    }
}
