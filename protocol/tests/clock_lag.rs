//! Lag compensation: steady lag is credited, lies gain nothing, the quota is capped.

use stoa_protocol::clock::{
    Clock, LagCompensator, LagParams, TimeControl, TimeSource, VirtualTime, MAX_RTT_SAMPLE_MS,
};
use stoa_protocol::Side::{First, Second};

const FIVE_THREE: TimeControl = TimeControl::Fischer {
    initial_ms: 300_000,
    increment_ms: 3_000,
};

#[test]
fn parameters_scale_with_the_time_control() {
    // 5+3: 300 s + 40 × 3 s = 420 s ≥ 180 s: the largest gain.
    assert_eq!(
        LagParams::for_time_control(&FIVE_THREE),
        LagParams {
            quota_gain_ms: 1_000,
            quota_initial_ms: 3_000,
            quota_max_ms: 7_000
        }
    );
    // A 2-second game gets the smallest.
    let two = TimeControl::Fischer {
        initial_ms: 2_000,
        increment_ms: 0,
    };
    assert_eq!(LagParams::for_time_control(&two).quota_gain_ms, 200);
    // 1+0 (60 s) sits in between, and faster games never get more than slower ones.
    let one = TimeControl::Fischer {
        initial_ms: 60_000,
        increment_ms: 0,
    };
    let g = LagParams::for_time_control(&one).quota_gain_ms;
    assert!(200 < g && g < 1_000, "{g}");
    let mut last = 0;
    for initial_s in (5..400).step_by(5) {
        let tc = TimeControl::Fischer {
            initial_ms: initial_s * 1_000,
            increment_ms: 0,
        };
        let gain = LagParams::for_time_control(&tc).quota_gain_ms;
        assert!(gain >= last, "{tc}");
        last = gain;
    }
    for tc in [
        TimeControl::None,
        TimeControl::Correspondence { days_per_turn: 1 },
    ] {
        assert_eq!(LagParams::for_time_control(&tc).quota_gain_ms, 1_000);
    }
}

#[test]
fn steady_200ms_lag_on_five_three_is_credited() {
    // A steady one-way transit of 200 ms: the server measures round trips of 400 ms.
    let mut comp = LagCompensator::for_time_control(&FIVE_THREE);
    let time = VirtualTime::new(1_000_000);
    let mut clock = Clock::new(FIVE_THREE).unwrap();
    clock.start_turn(First, time.now_ms());
    for side in [First, Second] {
        let now = time.advance(2_000);
        clock.end_turn(side, now, 0).unwrap();
        clock.start_turn(side.other(), now);
    }
    comp.record_rtt(400);
    for mv in 0..100 {
        // First thinks 1.8 s; its move arrives 200 ms later: 2 s of server time.
        let now = time.advance(2_000);
        comp.record_rtt(400);
        let credit = comp.credit(Some(200));
        assert_eq!(credit, 200, "move {mv}");
        let r = clock.end_turn(First, now, credit).unwrap();
        assert_eq!(r.charged_ms, 1_800, "only the thinking time is charged");
        clock.start_turn(Second, now);
        let now = time.advance(1_000);
        clock.end_turn(Second, now, 0).unwrap();
        clock.start_turn(First, now);
    }
    // Without a claim the measured transit is credited all the same.
    assert_eq!(comp.credit(None), 200);
    // 100 moves of 1.8 s each with +3 s increments: First gained 1.2 s a move.
    assert_eq!(clock.main_ms(First), 300_000 + 100 * 1_200);
}

#[test]
fn claimed_lag_beyond_the_measured_round_trip_gains_nothing() {
    let mut comp = LagCompensator::for_time_control(&FIVE_THREE);
    for _ in 0..10 {
        comp.record_rtt(40);
    }
    assert_eq!(comp.transit_estimate_ms(), 20);
    for _ in 0..20 {
        assert_eq!(comp.credit(Some(2_500)), 20);
    }
    // A smaller claim is believed (a client may ask for less than we measured).
    assert_eq!(comp.credit(Some(5)), 5);
    // Before anything is measured, claims earn nothing at all.
    let mut fresh = LagCompensator::for_time_control(&FIVE_THREE);
    assert_eq!(fresh.credit(Some(1_000)), 0);
    assert_eq!(fresh.grace_ms(), 0);
}

#[test]
fn quota_is_capped_and_bounds_faked_lag() {
    let params = LagParams::for_time_control(&FIVE_THREE);
    let mut comp = LagCompensator::new(params);
    assert_eq!(comp.quota_ms(), 3_000);
    // Many moves without lag: the quota grows by the gain per move up to the cap only.
    comp.record_rtt(0);
    for _ in 0..50 {
        assert_eq!(comp.credit(None), 0);
        assert!(comp.quota_ms() <= params.quota_max_ms);
    }
    assert_eq!(comp.quota_ms(), 7_000);
    // Now the client delays its pongs to fake 10 s round trips (5 s transit).
    for _ in 0..20 {
        comp.record_rtt(10_000);
    }
    let transit = comp.transit_estimate_ms();
    assert!(transit > 4_900 && transit <= 5_000, "{transit}");
    // One burst is capped by the quota, then only the gain per move is available.
    assert_eq!(comp.credit(None), transit);
    assert_eq!(comp.credit(None), 7_000 - transit + 1_000);
    for _ in 0..10 {
        assert_eq!(comp.credit(Some(9_999)), 1_000);
    }
    let (moves, total) = comp.stats();
    assert_eq!(moves, 50 + 12);
    // Over n moves the credit never exceeds initial + n × gain.
    assert!(total <= params.quota_initial_ms + moves * params.quota_gain_ms);
}

#[test]
fn round_trip_estimate_is_smoothed_and_clamped() {
    let mut comp = LagCompensator::for_time_control(&FIVE_THREE);
    assert_eq!(comp.rtt_estimate_ms(), None);
    comp.record_rtt(100);
    assert_eq!(comp.rtt_estimate_ms(), Some(100));
    // One slow pong moves the estimate a quarter of the way.
    comp.record_rtt(500);
    assert_eq!(comp.rtt_estimate_ms(), Some(200));
    // Absurd samples are clamped.
    let mut comp = LagCompensator::for_time_control(&FIVE_THREE);
    comp.record_rtt(u64::MAX);
    assert_eq!(comp.rtt_estimate_ms(), Some(MAX_RTT_SAMPLE_MS));
    // A steady link converges to its round trip.
    for _ in 0..60 {
        comp.record_rtt(300);
    }
    assert!(comp.rtt_estimate_ms().unwrap().abs_diff(300) <= 2);
}

#[test]
fn grace_delays_the_flag_by_at_most_the_possible_credit() {
    let two = TimeControl::Fischer {
        initial_ms: 2_000,
        increment_ms: 0,
    };
    let mut comp = LagCompensator::for_time_control(&two);
    comp.record_rtt(3_000); // a terrible link: 1.5 s transit
                            // …but a 2-second game's initial quota is 600 ms, so the flag waits at most that.
    assert_eq!(comp.grace_ms(), 600);
    comp.record_rtt(2); // now measured on localhost-like links, the grace is tiny
    for _ in 0..40 {
        comp.record_rtt(2);
    }
    assert!(comp.grace_ms() <= 1, "{}", comp.grace_ms());
}

#[test]
fn compensator_persists() {
    let mut comp = LagCompensator::for_time_control(&FIVE_THREE);
    comp.record_rtt(120);
    comp.credit(None);
    let text = serde_json::to_string(&comp).unwrap();
    assert_eq!(serde_json::from_str::<LagCompensator>(&text).unwrap(), comp);
}
