//! The Glicko-2 update, step by step as in Mark Glickman's "Example of the
//! Glicko-2 system" (the 2012+ revision, whose volatility step uses the
//! Illinois variant of regula falsi). Step numbers in comments refer to it.

use std::f64::consts::PI;

use super::{Outcome, Rating, DEFAULT_RATING};

/// The factor between the Glicko scale and the Glicko-2 scale (step 2:
/// μ = (r − 1500) / 173.7178, φ = RD / 173.7178).
pub const GLICKO2_SCALE: f64 = 173.7178;

/// How many iterations the volatility search may take before we settle for the
/// current bracket. Convergence normally takes under ten; the cap only exists
/// so that hostile or corrupt input (NaN, huge values) cannot hang the server.
const MAX_ITERATIONS: usize = 200;

/// The Glicko-2 system's parameters.
///
/// [`Glicko2::default`] is τ = 0.5 (the paper's example, and a common choice
/// for games where upsets are not rare), ε = 0.000001, deviation kept within
/// [45, 350] and volatility at most 0.1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Glicko2 {
    /// τ, the system constant: how much the volatility may change per period.
    /// Glickman suggests 0.3..1.2; smaller values damp big upsets.
    pub tau: f64,
    /// ε, the convergence tolerance of the volatility search (step 5.4).
    pub epsilon: f64,
    /// The smallest deviation a rating may reach. Without a floor a very
    /// active player's rating would all but freeze; 45 is lichess's floor.
    pub min_deviation: f64,
    /// The largest deviation a rating may reach, also when it grows through
    /// inactivity: a long-absent player is never *less* known than a newcomer.
    pub max_deviation: f64,
    /// The largest volatility a rating may reach (lichess caps it at 0.1 so a
    /// streak of upsets cannot make a rating swing wildly for ever).
    pub max_volatility: f64,
}

impl Default for Glicko2 {
    fn default() -> Self {
        Glicko2 {
            tau: 0.5,
            epsilon: 0.000_001,
            min_deviation: 45.0,
            max_deviation: super::DEFAULT_DEVIATION,
            max_volatility: 0.1,
        }
    }
}

/// g(φ) (step 3): damps an opponent's influence by how uncertain their rating is.
fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (PI * PI)).sqrt()
}

/// E(μ, μⱼ, φⱼ) (step 3): the expected score against opponent j.
fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

impl Glicko2 {
    /// The system with the given τ and the other parameters at their defaults.
    pub fn with_tau(tau: f64) -> Self {
        Glicko2 {
            tau,
            ..Glicko2::default()
        }
    }

    /// Brings possibly corrupt stored values back into the valid domain, so
    /// one bad record cannot poison every opponent's update with NaN.
    fn sanitise(&self, r: &Rating) -> Rating {
        let rating = if r.rating.is_finite() {
            r.rating
        } else {
            DEFAULT_RATING
        };
        let deviation = if r.deviation.is_finite() && r.deviation > 0.0 {
            r.deviation
        } else {
            self.max_deviation
        };
        let volatility = if r.volatility.is_finite() && r.volatility > 0.0 {
            r.volatility.min(self.max_volatility)
        } else {
            super::DEFAULT_VOLATILITY
        };
        Rating {
            rating,
            deviation,
            volatility,
            games: r.games,
        }
    }

    /// The player's rating after one rating period in which they played the
    /// given games: each `(opponent, score)` is an opponent's rating *before*
    /// the period and the player's score against them (1 win, 0.5 draw, 0 loss;
    /// clamped into [0, 1]).
    ///
    /// With no games the period only makes the rating less certain (the
    /// paper's rule for a player who did not compete): see [`Glicko2::idle`].
    /// `games` grows by the number of games.
    pub fn update(&self, player: &Rating, results: &[(Rating, f64)]) -> Rating {
        let player = self.sanitise(player);
        if results.is_empty() {
            return self.idle(&player, 1.0);
        }
        // Step 2: to the Glicko-2 scale.
        let mu = (player.rating - DEFAULT_RATING) / GLICKO2_SCALE;
        let phi = player.deviation / GLICKO2_SCALE;
        let sigma = player.volatility;

        // Steps 3 and 4: the estimated variance v of the rating from the game
        // outcomes alone, and the estimated improvement Δ.
        let mut inv_v = 0.0;
        let mut sum = 0.0; // Σ g(φⱼ)(sⱼ − E)
        for (opponent, score) in results {
            let opponent = self.sanitise(opponent);
            let mu_j = (opponent.rating - DEFAULT_RATING) / GLICKO2_SCALE;
            let phi_j = opponent.deviation / GLICKO2_SCALE;
            let g_j = g(phi_j);
            let e = expected(mu, mu_j, phi_j);
            let s = if score.is_finite() {
                score.clamp(0.0, 1.0)
            } else {
                0.5
            };
            inv_v += g_j * g_j * e * (1.0 - e);
            sum += g_j * (s - e);
        }
        let v = 1.0 / inv_v;
        let delta = v * sum;

        // Step 5: the new volatility.
        let sigma_new = self.new_volatility(phi, sigma, v, delta);

        // Step 6: pre-period deviation.
        let phi_star = (phi * phi + sigma_new * sigma_new).sqrt();

        // Step 7: new deviation and rating.
        let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
        let mu_new = mu + phi_new * phi_new * sum;

        // Step 8: back to the Glicko scale, within the configured bounds.
        Rating {
            rating: GLICKO2_SCALE * mu_new + DEFAULT_RATING,
            deviation: (GLICKO2_SCALE * phi_new).clamp(self.min_deviation, self.max_deviation),
            volatility: sigma_new.min(self.max_volatility),
            games: player
                .games
                .saturating_add(u32::try_from(results.len()).unwrap_or(u32::MAX)),
        }
    }

    /// Step 5: the new volatility σ′, found as the root of f by the Illinois
    /// algorithm (the 2012+ revision of the paper).
    fn new_volatility(&self, phi: f64, sigma: f64, v: f64, delta: f64) -> f64 {
        let tau = self.tau;
        // 5.1
        let a = (sigma * sigma).ln();
        let phi2 = phi * phi;
        let delta2 = delta * delta;
        let f = |x: f64| {
            let ex = x.exp();
            let denom = phi2 + v + ex;
            ex * (delta2 - phi2 - v - ex) / (2.0 * denom * denom) - (x - a) / (tau * tau)
        };
        // 5.2: bracket the root between A and B.
        let mut big_a = a;
        let mut big_b = if delta2 > phi2 + v {
            (delta2 - phi2 - v).ln()
        } else {
            let mut k = 1.0;
            let mut i = 0;
            while f(a - k * tau) < 0.0 && i < MAX_ITERATIONS {
                k += 1.0;
                i += 1;
            }
            a - k * tau
        };
        // 5.3
        let mut f_a = f(big_a);
        let mut f_b = f(big_b);
        // 5.4: regula falsi with the Illinois modification (halve the
        // retained end's value so the bracket shrinks from both sides).
        let mut i = 0;
        while (big_b - big_a).abs() > self.epsilon && i < MAX_ITERATIONS {
            let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
            let f_c = f(big_c);
            if f_c * f_b <= 0.0 {
                big_a = big_b;
                f_a = f_b;
            } else {
                f_a /= 2.0;
            }
            big_b = big_c;
            f_b = f_c;
            i += 1;
        }
        // 5.5
        let sigma_new = (big_a / 2.0).exp();
        if sigma_new.is_finite() && sigma_new > 0.0 {
            sigma_new
        } else {
            // Only reachable with degenerate input; keep the old volatility
            // rather than spread a NaN.
            sigma
        }
    }

    /// The rating after `periods` rating periods without games: the deviation
    /// grows as φ′ = √(φ² + n·σ²) (the paper's rule for a player who does not
    /// compete, applied n times), capped at `max_deviation`. Rating,
    /// volatility and `games` are unchanged.
    ///
    /// The server decides what a period is (lichess-style: one per several
    /// days of absence) and may pass a fraction; non-positive values change
    /// nothing.
    pub fn idle(&self, player: &Rating, periods: f64) -> Rating {
        let player = self.sanitise(player);
        if periods.is_nan() || periods <= 0.0 {
            return player;
        }
        let phi = player.deviation / GLICKO2_SCALE;
        let sigma = player.volatility;
        let phi_star = (phi * phi + periods * sigma * sigma).sqrt();
        Rating {
            deviation: (GLICKO2_SCALE * phi_star).min(self.max_deviation),
            ..player
        }
    }

    /// Both players' new ratings after one rated game between them, `outcome`
    /// being the result for `a`. Each game is its own rating period and both
    /// updates use the *old* ratings, so the order of the arguments does not
    /// matter.
    pub fn game(&self, a: &Rating, b: &Rating, outcome: Outcome) -> (Rating, Rating) {
        let new_a = self.update(a, &[(*b, outcome.score())]);
        let new_b = self.update(b, &[(*a, outcome.reversed().score())]);
        (new_a, new_b)
    }
}

/// [`Glicko2::update`] with the default system (τ = 0.5).
pub fn update(player: &Rating, results: &[(Rating, f64)]) -> Rating {
    Glicko2::default().update(player, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's intermediate quantities (steps 3–5) for its example, which
    /// the public API does not expose.
    #[test]
    fn paper_intermediate_values() {
        let mu = 0.0;
        let phi = 200.0 / GLICKO2_SCALE;
        let opponents = [
            (1400.0, 30.0, 1.0),
            (1550.0, 100.0, 0.0),
            (1700.0, 300.0, 0.0),
        ];
        let mut inv_v = 0.0;
        let mut sum = 0.0;
        let mut gs = vec![];
        for (r, rd, s) in opponents {
            let mu_j = (r - 1500.0) / GLICKO2_SCALE;
            let phi_j = rd / GLICKO2_SCALE;
            let e = expected(mu, mu_j, phi_j);
            gs.push((g(phi_j), e));
            inv_v += g(phi_j).powi(2) * e * (1.0 - e);
            sum += g(phi_j) * (s - e);
        }
        // The paper's table: g = 0.9955, 0.9531, 0.7242; E = 0.639, 0.432, 0.303.
        let want = [(0.9955, 0.639), (0.9531, 0.432), (0.7242, 0.303)];
        for ((g_j, e), (wg, we)) in gs.iter().zip(want) {
            assert!((g_j - wg).abs() < 0.0001, "g {g_j} vs {wg}");
            assert!((e - we).abs() < 0.001, "E {e} vs {we}");
        }
        let v = 1.0 / inv_v;
        let delta = v * sum;
        // The paper computes v and Δ from E rounded to three digits, so its
        // printed values are off by a few 1e-4 from the exact ones.
        assert!((v - 1.7785).abs() < 0.001, "v = {v}");
        assert!((delta - -0.4834).abs() < 0.001, "Δ = {delta}");
        let sigma = Glicko2::default().new_volatility(phi, 0.06, v, delta);
        assert!((sigma - 0.05999).abs() < 0.00001, "σ′ = {sigma}");
        let phi_star = (phi * phi + sigma * sigma).sqrt();
        let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
        let mu_new = mu + phi_new * phi_new * sum;
        assert!((phi_new - 0.8722).abs() < 0.0002, "φ′ = {phi_new}");
        assert!((mu_new - -0.2069).abs() < 0.0002, "μ′ = {mu_new}");
    }

    #[test]
    fn volatility_search_survives_degenerate_input() {
        let s = Glicko2::default().new_volatility(f64::NAN, 0.06, f64::NAN, f64::NAN);
        assert!(s.is_finite() && s > 0.0);
        let s = Glicko2::default().new_volatility(1e-9, 0.06, 1e12, 1e9);
        assert!(s.is_finite() && s > 0.0);
    }
}
