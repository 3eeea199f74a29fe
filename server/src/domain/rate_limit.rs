//! Rate limits: requests per connection, new connections per IP.
//!
//! Why a fixed window per connection and GCRA per IP: a connection's limiter lives in its
//! own task (no locking, O(1)), while the IP limiter is shared by every accept and must not
//! let a burst straddle two windows to double its budget; GCRA (`governor`) keeps one
//! arrival time per address in a sharded map, so an accept costs one map entry.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};

/// What to do with one request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within the limit.
    Allow,
    /// Over the limit: answer `rate_limited`.
    Limit,
    /// Far over the limit: close the connection (1008).
    Close,
}

/// Per-connection request limiter (fixed window).
#[derive(Debug)]
pub struct ConnLimiter {
    limit: u32,
    close_at: u32,
    window: Duration,
    start: Instant,
    count: u32,
}

impl ConnLimiter {
    /// A limiter of `limit` requests per `window`, closing at `limit * close_factor`.
    pub fn new(limit: u32, close_factor: u32, window: Duration) -> Self {
        ConnLimiter {
            limit,
            close_at: limit.saturating_mul(close_factor.max(1)),
            window,
            start: Instant::now(),
            count: 0,
        }
    }

    /// Counts one request and says whether it may proceed.
    pub fn check(&mut self, now: Instant) -> Verdict {
        if now.duration_since(self.start) >= self.window {
            self.start = now;
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
        if self.count > self.close_at {
            Verdict::Close
        } else if self.count > self.limit {
            Verdict::Limit
        } else {
            Verdict::Allow
        }
    }
}

/// Checks between two looks at how many addresses the IP limiter holds.
const SWEEP_EVERY: u64 = 1024;
/// Past this many addresses, the IP limiter forgets those whose budget is full again.
const SWEEP_ABOVE: usize = 10_000;

/// `governor`'s limiter keyed by address, on clock `C`.
type KeyedLimiter<C> =
    RateLimiter<IpAddr, DashMapStateStore<IpAddr>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// Per-IP new-connection limiter, shared by the listener: at most `limit` new connections
/// from an address at once, refilled at `limit` per `window` (GCRA, the `governor` crate).
pub struct IpLimiter<C: Clock = DefaultClock> {
    /// `None` for a limit of 0: every connection is refused.
    limiter: Option<KeyedLimiter<C>>,
    limit: u32,
    window: Duration,
    /// Checks so far, to sweep every [`SWEEP_EVERY`]th.
    checks: AtomicU64,
}

impl std::fmt::Debug for IpLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpLimiter")
            .field("limit", &self.limit)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl IpLimiter {
    /// At most `limit` new connections per IP per `window`.
    pub fn new(limit: u32, window: Duration) -> Self {
        IpLimiter::with_clock(limit, window, DefaultClock::default())
    }
}

impl<C: Clock> IpLimiter<C> {
    /// As [`IpLimiter::new`], on another clock (a test's).
    pub fn with_clock(limit: u32, window: Duration, clock: C) -> Self {
        let limiter = NonZeroU32::new(limit).map(|burst| {
            // One connection comes back every window / limit; a window too short to
            // divide still lets one through per nanosecond rather than none.
            let each = (window / limit).max(Duration::from_nanos(1));
            let quota = Quota::with_period(each)
                .expect("a period of at least a nanosecond")
                .allow_burst(burst);
            RateLimiter::dashmap_with_clock(quota, clock)
        });
        IpLimiter {
            limiter,
            limit,
            window,
            checks: AtomicU64::new(0),
        }
    }

    /// Records a new connection attempt from `ip`; `false` when over the limit.
    pub fn allow(&self, ip: IpAddr) -> bool {
        let Some(limiter) = &self.limiter else {
            return false;
        };
        // Now and then, not on every accept: forgetting the addresses whose budget is full
        // again walks the whole map, so it runs once per SWEEP_EVERY checks and only when
        // the map has grown large.
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
            && limiter.len() > SWEEP_ABOVE
        {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&ip).is_ok()
    }

    /// How many addresses the limiter holds.
    pub fn addresses(&self) -> usize {
        self.limiter.as_ref().map_or(0, RateLimiter::len)
    }
}

/// A token bucket: a burst of `burst` at once, then `per_sec` a second (chat lines per
/// person, see [`crate::domain::chat`]).
///
/// Why a bucket rather than the connection's window: a person may say a few lines quickly,
/// then must slow to a steady pace, and no window edge lets a burst through twice.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    burst: f64,
    per_sec: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(burst: u32, per_sec: f64, now: Instant) -> Self {
        TokenBucket {
            burst: f64::from(burst),
            per_sec,
            tokens: f64::from(burst),
            at: now,
        }
    }

    /// Takes one token if there is one; `false` (nothing taken) when the bucket is empty.
    pub fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_sec).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    #[test]
    fn connection_limits() {
        let mut l = ConnLimiter::new(2, 3, Duration::from_secs(10));
        let t = Instant::now();
        assert_eq!(l.check(t), Verdict::Allow);
        assert_eq!(l.check(t), Verdict::Allow);
        assert_eq!(l.check(t), Verdict::Limit);
        for _ in 0..3 {
            l.check(t);
        }
        assert_eq!(l.check(t), Verdict::Close);
        assert_eq!(l.check(t + Duration::from_secs(11)), Verdict::Allow);
    }

    #[test]
    fn ip_limits() {
        let clock = FakeRelativeClock::default();
        let l = IpLimiter::with_clock(2, Duration::from_secs(10), clock.clone());
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        assert!(l.allow(ip));
        assert!(l.allow(ip));
        assert!(!l.allow(ip));
        assert!(l.allow(other), "another address has its own budget");
        // One connection comes back every window / limit.
        clock.advance(Duration::from_secs(4));
        assert!(!l.allow(ip));
        clock.advance(Duration::from_secs(1));
        assert!(l.allow(ip));
        assert!(!l.allow(ip));
        clock.advance(Duration::from_secs(10));
        assert!(l.allow(ip));
        assert!(l.allow(ip));
        assert!(!l.allow(ip));
    }

    #[test]
    fn a_limit_of_zero_refuses_every_connection() {
        let l = IpLimiter::new(0, Duration::from_secs(10));
        assert!(!l.allow("127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn addresses_whose_budget_is_full_again_are_forgotten_once_there_are_many() {
        let clock = FakeRelativeClock::default();
        let l = IpLimiter::with_clock(3, Duration::from_secs(10), clock.clone());
        let many = SWEEP_ABOVE as u32 + 100;
        for n in 0..many {
            assert!(l.allow(IpAddr::from(n.to_be_bytes())));
        }
        assert_eq!(l.addresses(), many as usize);
        clock.advance(Duration::from_secs(10));
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..SWEEP_EVERY {
            l.allow(ip);
        }
        assert!(l.addresses() < 10, "{} addresses kept", l.addresses());
    }

    #[test]
    fn token_bucket_allows_a_burst_then_a_steady_pace() {
        let t = Instant::now();
        let mut b = TokenBucket::new(5, 1.0, t);
        for _ in 0..5 {
            assert!(b.take(t));
        }
        assert!(!b.take(t));
        assert!(!b.take(t + Duration::from_millis(900)));
        assert!(b.take(t + Duration::from_millis(1100)));
        assert!(!b.take(t + Duration::from_millis(1200)));
        // A long pause refills only up to the burst.
        let later = t + Duration::from_secs(60);
        for _ in 0..5 {
            assert!(b.take(later));
        }
        assert!(!b.take(later));
    }
}
