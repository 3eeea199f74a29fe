//! Lag compensation in the way lichess does it: a per-player quota that grows by a fixed
//! amount each move and is capped; each move is credited at most its estimated transit and
//! at most the quota, and the credit is taken from the quota.
//!
//! What a move's transit is: the document's `since` is server time and clients correct for
//! their offset with `ping`'s `server_time`, so a player's display already counts down the
//! time the diff spent reaching them. What the player cannot see is the time their move
//! spends travelling back. That one-way transit is what we credit, estimated as half the
//! smoothed round trip the server measures with WebSocket pings. A player who moves before
//! their displayed clock reaches zero therefore does not flag (while the quota lasts).
//!
//! Why the quota: the estimate comes from pongs, which a client can delay on purpose, and
//! a client may also *claim* lag. Neither can buy more than the quota: over `n` moves a
//! player is credited at most `quota_initial + n × quota_gain`, and at most `quota_max`
//! in one burst, which is what an honest player on that slow link would get anyway.

use serde::{Deserialize, Serialize};

use super::{TimeControl, SECOND_MS};

/// Round-trip samples are clamped to this (10 s) before smoothing: a longer "round trip" is
/// a stalled connection, not lag, and must not poison the estimate for many moves.
pub const MAX_RTT_SAMPLE_MS: u64 = 10 * SECOND_MS;

/// Fixed-point scale of the smoothed round trip (1/256 ms).
const FP: u64 = 256;

/// The quota parameters of one game's lag compensation (milliseconds).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagParams {
    /// Added to the quota after each move: the average lag per move we are willing to
    /// forgive indefinitely. Steady lag below it is always fully credited.
    pub quota_gain_ms: u64,
    /// The quota at the start of the game (3 gains): room for the first moves of a fresh
    /// connection, whose round-trip estimate is still settling.
    pub quota_initial_ms: u64,
    /// The cap (7 gains): how much unused allowance may pile up for a lag spike. It bounds
    /// what any burst of claimed or faked lag can win.
    pub quota_max_ms: u64,
}

impl LagParams {
    /// Smallest gain (200 ms), for games of at most [`LagParams::FAST_TOTAL_MS`] per side.
    /// It still covers a typical intercontinental one-way transit (100–150 ms) while never
    /// handing a 2-second game more than a fraction of its time per move.
    pub const MIN_GAIN_MS: u64 = 200;
    /// Largest gain (1 s), for games of at least [`LagParams::SLOW_TOTAL_MS`] per side: a
    /// mobile link's worst steady transit; more would be forgiving thinking time.
    pub const MAX_GAIN_MS: u64 = SECOND_MS;
    /// Estimated per-side game length at or below which the gain is the smallest (15 s).
    pub const FAST_TOTAL_MS: u64 = 15 * SECOND_MS;
    /// Estimated per-side game length at or above which the gain is the largest (3 min:
    /// from blitz on, a second per move is small next to the thinking time).
    pub const SLOW_TOTAL_MS: u64 = 180 * SECOND_MS;

    /// Parameters for a time control, scaled like lichess by the estimated length of one
    /// side's game ([`TimeControl::estimated_side_total_ms`]: main + 40 × per-turn time):
    /// the gain grows linearly from [`LagParams::MIN_GAIN_MS`] at 15 s to
    /// [`LagParams::MAX_GAIN_MS`] at 3 min, so faster games get a smaller quota. Untimed
    /// and correspondence games get the largest (nothing hangs on seconds there).
    ///
    /// 5+3: estimate 300 s + 40 × 3 s = 420 s, gain 1 s, initial 3 s, cap 7 s.
    /// 2+0 seconds: estimate 2 s, gain 200 ms, initial 600 ms, cap 1.4 s.
    pub fn for_time_control(tc: &TimeControl) -> LagParams {
        let total = tc.estimated_side_total_ms().unwrap_or(u64::MAX);
        let gain = if total <= Self::FAST_TOTAL_MS {
            Self::MIN_GAIN_MS
        } else if total >= Self::SLOW_TOTAL_MS {
            Self::MAX_GAIN_MS
        } else {
            Self::MIN_GAIN_MS
                + (total - Self::FAST_TOTAL_MS) * (Self::MAX_GAIN_MS - Self::MIN_GAIN_MS)
                    / (Self::SLOW_TOTAL_MS - Self::FAST_TOTAL_MS)
        };
        LagParams::with_gain(gain)
    }

    /// Parameters with the given gain and the standard initial (3×) and cap (7×).
    pub fn with_gain(quota_gain_ms: u64) -> LagParams {
        LagParams {
            quota_gain_ms,
            quota_initial_ms: 3 * quota_gain_ms,
            quota_max_ms: 7 * quota_gain_ms,
        }
    }
}

/// One player's lag compensation in one game.
///
/// It belongs to the *person*, not the side: keep it keyed by player so a pie-rule swap
/// does not exchange it. Feed it every measured WebSocket round trip of that player's
/// connections ([`LagCompensator::record_rtt`]) and ask it for each timed move's credit
/// ([`LagCompensator::credit`]). Serializable so it survives a server restart with the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagCompensator {
    params: LagParams,
    quota_ms: u64,
    /// Smoothed round trip in 1/256 ms (fixed point, so the average converges exactly
    /// instead of sticking a few ms off as integer milliseconds would); `None` until the
    /// first measurement (nothing is credited before the server has measured anything:
    /// claims alone are never trusted).
    rtt_fp: Option<u64>,
    moves: u64,
    total_credit_ms: u64,
}

impl LagCompensator {
    /// A fresh compensator (quota at its initial value, no measurement yet).
    pub fn new(params: LagParams) -> LagCompensator {
        LagCompensator {
            params,
            quota_ms: params.quota_initial_ms.min(params.quota_max_ms),
            rtt_fp: None,
            moves: 0,
            total_credit_ms: 0,
        }
    }

    /// A fresh compensator with [`LagParams::for_time_control`].
    pub fn for_time_control(tc: &TimeControl) -> LagCompensator {
        LagCompensator::new(LagParams::for_time_control(tc))
    }

    /// Records one measured round trip (ping sent → pong received, server time). The
    /// estimate is an exponentially weighted average with weight 1/4 for the new sample:
    /// it follows a changed link within a few pings while one slow pong moves it only a
    /// quarter of the way. The first sample is taken as is. Samples are clamped to
    /// [`MAX_RTT_SAMPLE_MS`].
    pub fn record_rtt(&mut self, rtt_ms: u64) {
        let sample = rtt_ms.min(MAX_RTT_SAMPLE_MS) * FP;
        self.rtt_fp = Some(match self.rtt_fp {
            None => sample,
            // Values stay ≤ MAX_RTT_SAMPLE_MS × FP, so this cannot overflow.
            Some(old) => (3 * old + sample) / 4,
        });
    }

    /// The smoothed round trip, once anything has been measured.
    pub fn rtt_estimate_ms(&self) -> Option<u64> {
        self.rtt_fp.map(|fp| (fp + FP / 2) / FP)
    }

    /// The estimated one-way transit of a move: half the smoothed round trip, rounded down
    /// (0 before any measurement).
    pub fn transit_estimate_ms(&self) -> u64 {
        self.rtt_fp.map_or(0, |fp| fp / 2 / FP)
    }

    /// The credit for one timed move, and the quota update: the credit is the smallest of
    /// the estimated transit, the client's own claim if it sent one (a client may only ask
    /// for less than we measured, never more), and the quota; then the quota loses the
    /// credit, gains [`LagParams::quota_gain_ms`], and is capped at
    /// [`LagParams::quota_max_ms`]. Call it once per timed turn (not for first actions,
    /// which no clock charges) and pass the result to [`super::Clock::end_turn`].
    pub fn credit(&mut self, claimed_lag_ms: Option<u64>) -> u64 {
        let credit = self
            .transit_estimate_ms()
            .min(claimed_lag_ms.unwrap_or(u64::MAX))
            .min(self.quota_ms);
        self.quota_ms =
            (self.quota_ms - credit + self.params.quota_gain_ms).min(self.params.quota_max_ms);
        self.moves += 1;
        self.total_credit_ms += credit;
        credit
    }

    /// The most the next move could be credited (estimated transit capped by the quota).
    /// The actor waits this long past [`super::Clock::flag_deadline`] before flagging, so a
    /// move sent just before the player's displayed zero and still in flight is not lost.
    pub fn grace_ms(&self) -> u64 {
        self.transit_estimate_ms().min(self.quota_ms)
    }

    /// The quota available now.
    pub fn quota_ms(&self) -> u64 {
        self.quota_ms
    }

    /// The parameters in use.
    pub fn params(&self) -> LagParams {
        self.params
    }

    /// How many moves have been credited, and the total credit (for metrics and logs).
    pub fn stats(&self) -> (u64, u64) {
        (self.moves, self.total_credit_ms)
    }
}
