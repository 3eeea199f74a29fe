//! Glicko-2 against Glickman's worked example, and the properties the server relies on.

use stoa_server::domain::rating::{update, Glicko2, Outcome, Rating, PROVISIONAL_DEVIATION};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// "Example of the Glicko-2 system": a 1500/200/0.06 player beats a 1400/30
/// player and loses to 1550/100 and 1700/300, with τ = 0.5.
#[test]
fn paper_worked_example() {
    let player = Rating {
        rating: 1500.0,
        deviation: 200.0,
        volatility: 0.06,
        games: 7,
    };
    let results = [
        (Rating::new(1400.0, 30.0), 1.0),
        (Rating::new(1550.0, 100.0), 0.0),
        (Rating::new(1700.0, 300.0), 0.0),
    ];
    let new = Glicko2::with_tau(0.5).update(&player, &results);
    assert!(close(new.rating, 1464.06, 0.01), "rating {}", new.rating);
    assert!(
        close(new.deviation, 151.52, 0.01),
        "deviation {}",
        new.deviation
    );
    assert!(
        close(new.volatility, 0.05999, 0.000_01),
        "volatility {}",
        new.volatility
    );
    assert_eq!(new.games, 10);
    // The free function is the default system, which is τ = 0.5 too.
    assert_eq!(update(&player, &results), new);
}

#[test]
fn defaults_are_the_papers() {
    let r = Rating::default();
    assert_eq!(
        (r.rating, r.deviation, r.volatility, r.games),
        (1500.0, 350.0, 0.06, 0)
    );
    assert!(r.provisional());
    assert_eq!(Glicko2::default().tau, 0.5);
}

#[test]
fn a_game_between_equals_is_symmetric() {
    let sys = Glicko2::default();
    let a = Rating::new(1600.0, 80.0);
    let b = Rating::new(1600.0, 80.0);
    let (a1, b1) = sys.game(&a, &b, Outcome::Win);
    assert!(a1.rating > 1600.0 && b1.rating < 1600.0);
    assert!(close(a1.rating - 1600.0, 1600.0 - b1.rating, 1e-9));
    assert!(close(a1.deviation, b1.deviation, 1e-9));
    assert_eq!((a1.games, b1.games), (1, 1));
}

#[test]
fn argument_order_does_not_matter() {
    let sys = Glicko2::default();
    let a = Rating::new(1720.0, 140.0);
    let b = Rating::new(1480.0, 60.0);
    for outcome in [Outcome::Win, Outcome::Draw, Outcome::Loss] {
        let (a1, b1) = sys.game(&a, &b, outcome);
        let (b2, a2) = sys.game(&b, &a, outcome.reversed());
        assert_eq!((a1, b1), (a2, b2));
    }
}

#[test]
fn draws_move_ratings_towards_each_other() {
    let sys = Glicko2::default();
    let strong = Rating::new(1800.0, 100.0);
    let weak = Rating::new(1400.0, 100.0);
    let (s1, w1) = sys.game(&strong, &weak, Outcome::Draw);
    assert!(
        s1.rating < strong.rating,
        "the favourite loses points on a draw"
    );
    assert!(
        w1.rating > weak.rating,
        "the underdog gains points on a draw"
    );
    // A draw between equals leaves the ratings (but not the deviation) alone.
    let e = Rating::new(1500.0, 100.0);
    let (e1, e2) = sys.game(&e, &e, Outcome::Draw);
    assert!(close(e1.rating, 1500.0, 1e-9) && close(e2.rating, 1500.0, 1e-9));
    assert!(e1.deviation < 100.0);
}

#[test]
fn an_upset_moves_more_than_an_expected_result() {
    let sys = Glicko2::default();
    let strong = Rating::new(1800.0, 100.0);
    let weak = Rating::new(1400.0, 100.0);
    let (expected, _) = sys.game(&strong, &weak, Outcome::Win);
    let (upset, _) = sys.game(&strong, &weak, Outcome::Loss);
    assert!(expected.rating - 1800.0 < 1800.0 - upset.rating);
}

#[test]
fn uncertain_ratings_move_more() {
    let sys = Glicko2::default();
    let opp = Rating::new(1500.0, 50.0);
    let (newbie, _) = sys.game(&Rating::default(), &opp, Outcome::Win);
    let (veteran, _) = sys.game(&Rating::new(1500.0, 50.0), &opp, Outcome::Win);
    assert!(newbie.rating - 1500.0 > 5.0 * (veteran.rating - 1500.0));
}

#[test]
fn provisional_until_the_deviation_falls_below_110() {
    let sys = Glicko2::default();
    let opp = Rating::new(1500.0, 60.0);
    let mut r = Rating::default();
    let mut n = 0;
    while r.provisional() {
        let outcome = if n % 2 == 0 {
            Outcome::Win
        } else {
            Outcome::Loss
        };
        r = sys.game(&r, &opp, outcome).0;
        n += 1;
        assert!(n < 50, "never left provisional");
    }
    assert!(r.deviation <= PROVISIONAL_DEVIATION);
    assert_eq!(r.games, n);
    assert!((5..30).contains(&n), "left provisional after {n} games");
    assert!(!Rating::new(1500.0, 110.0).provisional());
    assert!(Rating::new(1500.0, 110.1).provisional());
}

#[test]
fn deviation_stays_within_bounds() {
    let sys = Glicko2::default();
    let mut a = Rating::default();
    let mut b = Rating::default();
    for i in 0..500 {
        let outcome = [Outcome::Win, Outcome::Draw, Outcome::Loss][i % 3];
        (a, b) = sys.game(&a, &b, outcome);
    }
    assert!(a.deviation >= sys.min_deviation && b.deviation >= sys.min_deviation);
    assert!(a.volatility <= sys.max_volatility);
    assert!(a.rating.is_finite() && b.rating.is_finite());
}

#[test]
fn inactivity_grows_the_deviation_up_to_the_cap() {
    let sys = Glicko2::default();
    let r = Rating {
        rating: 1700.0,
        deviation: 60.0,
        volatility: 0.06,
        games: 40,
    };
    let one = sys.idle(&r, 1.0);
    let expected = ((60.0f64 / 173.7178).powi(2) + 0.06f64.powi(2)).sqrt() * 173.7178;
    assert!(close(one.deviation, expected, 1e-9));
    assert_eq!((one.rating, one.volatility, one.games), (1700.0, 0.06, 40));
    // An empty rating period is one idle period (the paper's rule).
    assert_eq!(sys.update(&r, &[]), one);
    let ten = sys.idle(&r, 10.0);
    assert!(ten.deviation > one.deviation);
    assert_eq!(sys.idle(&r, 1e9).deviation, 350.0);
    assert_eq!(sys.idle(&r, 0.0), r);
    assert_eq!(sys.idle(&r, -3.0), r);
}

#[test]
fn corrupt_input_does_not_spread_nan() {
    let sys = Glicko2::default();
    let bad = Rating {
        rating: f64::NAN,
        deviation: -1.0,
        volatility: f64::INFINITY,
        games: 0,
    };
    let (a, b) = sys.game(&bad, &Rating::default(), Outcome::Win);
    for r in [a, b] {
        assert!(r.rating.is_finite() && r.deviation.is_finite() && r.volatility.is_finite());
    }
    let r = sys.update(&Rating::default(), &[(Rating::default(), f64::NAN)]);
    assert!(r.rating.is_finite());
}

#[test]
fn serde_round_trip_and_games_default() {
    let r = Rating {
        rating: 1612.5,
        deviation: 88.25,
        volatility: 0.059,
        games: 12,
    };
    let json = serde_json::to_value(r).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"rating":1612.5,"deviation":88.25,"volatility":0.059,"games":12})
    );
    let back: Rating = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
    let old: Rating =
        serde_json::from_str(r#"{"rating":1500,"deviation":350,"volatility":0.06}"#).unwrap();
    assert_eq!(old, Rating::default());
    assert_eq!(serde_json::to_string(&Outcome::Draw).unwrap(), "\"draw\"");
}
