//! Rate limits: requests per connection, new connections per IP.
//!
//! Why fixed windows per connection and sliding windows per IP: a connection's limiter lives
//! in its own task (no locking, O(1)), while the IP limiter is shared and must not let a
//! burst straddle two windows to double its budget.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

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

/// Per-IP new-connection limiter (sliding window), shared by the listener.
#[derive(Debug)]
pub struct IpLimiter {
    limit: u32,
    window: Duration,
    seen: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
}

impl IpLimiter {
    /// At most `limit` new connections per IP per `window`.
    pub fn new(limit: u32, window: Duration) -> Self {
        IpLimiter {
            limit,
            window,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Records a new connection attempt from `ip`; `false` when over the limit.
    pub fn allow(&self, ip: IpAddr, now: Instant) -> bool {
        let mut seen = self.seen.lock();
        if seen.len() > 10_000 {
            let window = self.window;
            seen.retain(|_, q| q.back().is_some_and(|t| now.duration_since(*t) < window));
        }
        let q = seen.entry(ip).or_default();
        while q
            .front()
            .is_some_and(|t| now.duration_since(*t) >= self.window)
        {
            q.pop_front();
        }
        if q.len() as u32 >= self.limit {
            return false;
        }
        q.push_back(now);
        true
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
        let l = IpLimiter::new(2, Duration::from_secs(10));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let t = Instant::now();
        assert!(l.allow(ip, t));
        assert!(l.allow(ip, t));
        assert!(!l.allow(ip, t));
        assert!(l.allow(ip, t + Duration::from_secs(10)));
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
