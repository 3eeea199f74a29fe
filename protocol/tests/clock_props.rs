//! Property tests of the clock maths: time only decreases except by documented additions,
//! a side flags exactly when its deadline passes, periods never underflow, lag credit is
//! bounded by the quota, labels round-trip.

use proptest::prelude::*;
use stoa_protocol::clock::{Clock, LagCompensator, LagParams, TimeControl};
use stoa_protocol::Side::{self, First};

fn time_control() -> impl Strategy<Value = TimeControl> {
    prop_oneof![
        Just(TimeControl::None),
        (0u64..400_000, 0u64..20_000).prop_map(|(initial_ms, increment_ms)| {
            TimeControl::Fischer {
                initial_ms,
                increment_ms,
            }
        }),
        (0u64..400_000, 0u64..20_000).prop_map(|(initial_ms, delay_ms)| TimeControl::Delay {
            initial_ms,
            delay_ms
        }),
        (0u64..400_000, 0u32..6, 1_000u64..30_000).prop_map(|(initial_ms, periods, period_ms)| {
            TimeControl::Byoyomi {
                initial_ms,
                periods,
                period_ms,
            }
        }),
        (1u32..15).prop_map(|days_per_turn| TimeControl::Correspondence { days_per_turn }),
    ]
    .prop_filter("valid", |tc| tc.validate().is_ok())
}

/// Turns as (thinking ms, lag credit ms); thinking times span well past every budget.
fn turns() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec(
        (
            prop_oneof![
                0u64..5_000,
                0u64..60_000,
                0u64..400_000,
                0u64..3_000_000_000
            ],
            0u64..2_000,
        ),
        1..60,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn clock_invariants(tc in time_control(), turns in turns(), start in 0u64..1u64 << 40) {
        let mut clock = Clock::new(tc).unwrap();
        let mut now = start;
        let mut side = First;
        clock.start_turn(side, now);
        for (think, credit) in turns {
            let other = side.other();
            let before_main = clock.main_ms(side);
            let before_periods = clock.periods_left(side);
            let other_main = clock.main_ms(other);
            let other_periods = clock.periods_left(other);
            let timed = clock.running() == Some(side);
            let deadline = clock.flag_deadline();
            prop_assert_eq!(deadline.is_some(), timed);
            if let Some(d) = deadline {
                // The deadline is exactly where the remaining time reaches zero.
                prop_assert_eq!(d, now + clock.remaining_at(side, now).unwrap());
                prop_assert!(!clock.is_flagged(d - 1));
                prop_assert!(clock.is_flagged(d));
                // Remaining time never increases while the turn runs.
                let a = clock.remaining_at(side, now + think / 2).unwrap();
                let b = clock.remaining_at(side, now + think).unwrap();
                prop_assert!(b <= a);
            }
            now += think;
            let result = clock.end_turn(side, now, credit);
            // The opponent's time is untouched by this side's turn.
            prop_assert_eq!(clock.main_ms(other), other_main);
            prop_assert_eq!(clock.periods_left(other), other_periods);
            match result {
                Err(f) => {
                    // Flags exactly when the charged time reaches the deadline.
                    let d = deadline.unwrap();
                    prop_assert_eq!(f.side, side);
                    prop_assert_eq!(f.deadline_ms, d);
                    prop_assert!(think - credit.min(think) >= d - (now - think));
                    prop_assert_eq!(clock.main_ms(side), 0);
                    prop_assert_eq!(clock.periods_left(side), 0);
                    prop_assert_eq!(clock.running(), None);
                    break;
                }
                Ok(r) => {
                    prop_assert!(r.credited_ms <= credit && r.credited_ms <= think);
                    prop_assert_eq!(r.charged_ms + r.credited_ms, if timed { think } else { 0 });
                    if let Some(d) = deadline {
                        // In time: the credited end of turn was before the deadline.
                        prop_assert!(now - r.credited_ms < d);
                    }
                    match tc {
                        TimeControl::Correspondence { .. } => {
                            // Each turn restores exactly the allowance, never more.
                            prop_assert_eq!(r.main_ms, tc.starting_main_ms());
                        }
                        _ => {
                            // Time only decreases, except by the Fischer increment.
                            prop_assert!(r.main_ms <= before_main + r.added_ms);
                            if !timed {
                                prop_assert_eq!(r.main_ms, before_main);
                            }
                        }
                    }
                    prop_assert!(r.periods_left <= before_periods);
                    prop_assert_eq!(r.periods_left + r.periods_used, before_periods);
                    prop_assert!(r.periods_left <= tc.starting_periods());
                }
            }
            side = other;
            clock.start_turn(side, now);
        }
    }

    #[test]
    fn timer_flag_matches_deadline(tc in time_control(), wait in 0u64..3_000_000_000, grace in 0u64..2_000) {
        let mut clock = Clock::new(tc).unwrap();
        clock.start_turn(First, 0);
        clock.end_turn(First, 10, 0).unwrap();
        clock.start_turn(Side::Second, 10);
        clock.end_turn(Side::Second, 20, 0).unwrap();
        clock.start_turn(First, 20);
        match clock.flag_deadline() {
            None => prop_assert!(!tc.is_timed()),
            Some(d) => {
                let fired = clock.check_flag(20 + wait, grace);
                prop_assert_eq!(fired.is_some(), 20 + wait >= d + grace);
                if let Some(f) = fired {
                    prop_assert_eq!(f.side, First);
                    prop_assert_eq!(f.deadline_ms, d);
                }
            }
        }
    }

    #[test]
    fn lag_credit_is_bounded(
        tc in time_control(),
        moves in prop::collection::vec((0u64..12_000, prop::option::of(0u64..6_000)), 1..200),
    ) {
        let params = LagParams::for_time_control(&tc);
        let mut comp = LagCompensator::new(params);
        let mut total = 0;
        for (n, (rtt, claim)) in moves.iter().enumerate() {
            comp.record_rtt(*rtt);
            let transit = comp.transit_estimate_ms();
            let quota = comp.quota_ms();
            let c = comp.credit(*claim);
            prop_assert!(c <= transit && c <= quota);
            if let Some(claim) = claim {
                prop_assert!(c <= *claim);
            }
            prop_assert!(comp.quota_ms() <= params.quota_max_ms);
            total += c;
            prop_assert!(total <= params.quota_initial_ms + n as u64 * params.quota_gain_ms);
        }
    }

    #[test]
    fn labels_round_trip(tc in time_control()) {
        let label = tc.label();
        prop_assert_eq!(TimeControl::parse_label(&label), Ok(tc), "{}", label);
    }
}
