//! The `skillratings` crate's Glicko-2 as an oracle: for random ratings and results, our
//! update agrees with an independent implementation of the same paper.
//!
//! Both use τ = 0.5, ε = 0.000001 (the convergence tolerance of the volatility search), a
//! newcomer of 1500 / 350 / 0.06, and the Illinois volatility step of the 2012+ paper.
//! Rating periods mean the same in both: `update` is one period with every listed game
//! (`glicko2_rating_period`), `game` makes each game its own period from both players' old
//! ratings (`glicko2`), and a period without games only widens the deviation
//! (`decay_deviation`). Where ours differs on purpose, the oracle's answer is brought into
//! our bounds before comparing: the deviation is kept within [45, 350] and the volatility
//! at most 0.1 (lichess's bounds, see [`Glicko2`]); `skillratings` has no bounds.

use proptest::prelude::*;
use skillratings::glicko2::{
    decay_deviation, glicko2, glicko2_rating_period, Glicko2Config, Glicko2Rating,
};
use skillratings::Outcomes;

use stoa_server::domain::rating::{Glicko2, Outcome, Rating};

/// How far the two may differ: both stop the volatility search within ε, and round
/// differently (`skillratings` uses fused multiply-adds).
const RATING_TOLERANCE: f64 = 1e-3;
const VOLATILITY_TOLERANCE: f64 = 1e-6;

fn ours(r: &Rating) -> Glicko2Rating {
    Glicko2Rating {
        rating: r.rating,
        deviation: r.deviation,
        volatility: r.volatility,
    }
}

fn outcome(o: Outcome) -> Outcomes {
    match o {
        Outcome::Win => Outcomes::WIN,
        Outcome::Draw => Outcomes::DRAW,
        Outcome::Loss => Outcomes::LOSS,
    }
}

/// The oracle's rating within our bounds.
fn bounded(r: Glicko2Rating) -> Glicko2Rating {
    let system = Glicko2::default();
    Glicko2Rating {
        rating: r.rating,
        deviation: r
            .deviation
            .clamp(system.min_deviation, system.max_deviation),
        volatility: r.volatility.min(system.max_volatility),
    }
}

fn assert_agrees(got: &Rating, oracle: Glicko2Rating) -> Result<(), TestCaseError> {
    let want = bounded(oracle);
    prop_assert!(
        (got.rating - want.rating).abs() <= RATING_TOLERANCE,
        "rating {} vs {}",
        got.rating,
        want.rating
    );
    prop_assert!(
        (got.deviation - want.deviation).abs() <= RATING_TOLERANCE,
        "deviation {} vs {}",
        got.deviation,
        want.deviation
    );
    prop_assert!(
        (got.volatility - want.volatility).abs() <= VOLATILITY_TOLERANCE,
        "volatility {} vs {}",
        got.volatility,
        want.volatility
    );
    Ok(())
}

/// A rating as the server may hold one: any deviation a rating can reach, any volatility
/// up to the cap.
fn rating() -> impl Strategy<Value = Rating> {
    (600.0..2900.0f64, 45.0..=350.0f64, 0.02..=0.1f64, 0..500u32).prop_map(
        |(rating, deviation, volatility, games)| Rating {
            rating,
            deviation,
            volatility,
            games,
        },
    )
}

fn result() -> impl Strategy<Value = Outcome> {
    prop_oneof![Just(Outcome::Win), Just(Outcome::Draw), Just(Outcome::Loss)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_period_with_several_games_agrees_with_skillratings(
        player in rating(),
        games in prop::collection::vec((rating(), result()), 1..8),
    ) {
        let results: Vec<(Rating, f64)> =
            games.iter().map(|(r, o)| (*r, o.score())).collect();
        let oracle_results: Vec<(Glicko2Rating, Outcomes)> =
            games.iter().map(|(r, o)| (ours(r), outcome(*o))).collect();
        let got = Glicko2::default().update(&player, &results);
        let want = glicko2_rating_period(&ours(&player), &oracle_results, &Glicko2Config::new());
        assert_agrees(&got, want)?;
        prop_assert_eq!(got.games, player.games + games.len() as u32);
    }

    #[test]
    fn one_game_agrees_with_skillratings(a in rating(), b in rating(), o in result()) {
        let (got_a, got_b) = Glicko2::default().game(&a, &b, o);
        let (want_a, want_b) = glicko2(&ours(&a), &ours(&b), &outcome(o), &Glicko2Config::new());
        assert_agrees(&got_a, want_a)?;
        assert_agrees(&got_b, want_b)?;
    }

    #[test]
    fn a_period_without_games_agrees_with_skillratings(player in rating()) {
        let got = Glicko2::default().idle(&player, 1.0);
        assert_agrees(&got, decay_deviation(&ours(&player)))?;
    }
}
