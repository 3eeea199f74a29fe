//! The clock driver with plain numbers for times: turns, flags, lag grace, the first-action
//! window, pauses, and what survives serde.

use stoa_protocol::Side::{First, Second};

use super::*;

/// What the actor does live: credit as `credit_for` says; end deadlines as the core's
/// events do.
trait Live {
    fn on_action_live(
        &mut self,
        side: Side,
        player_id: &str,
        ends_turn: bool,
        swap: bool,
        next: Option<Side>,
        now: u64,
    ) -> Result<Option<TurnResult>, Flagged>;
    fn check_deadlines(&mut self, now: u64, players: [&str; 2]) -> Option<Expiry>;
}

impl Live for ClockDriver {
    fn on_action_live(
        &mut self,
        side: Side,
        player_id: &str,
        ends_turn: bool,
        swap: bool,
        next: Option<Side>,
        now: u64,
    ) -> Result<Option<TurnResult>, Flagged> {
        // Literal names read best in the tests; the driver takes the typed id.
        let player_id = &PlayerId::from(player_id);
        let credit = self.credit_for(side, player_id);
        self.on_action(side, player_id, ends_turn, swap, next, now, credit)
    }

    fn check_deadlines(&mut self, now: u64, players: [&str; 2]) -> Option<Expiry> {
        let e = self.expiry(now, players);
        match e {
            Some(Expiry::Flag(_)) => self.flag(now),
            Some(Expiry::FirstAction(_)) => self.stop(now),
            None => {}
        }
        e
    }
}

const T: u64 = 1_000_000;
const P: [&str; 2] = ["alice", "bob"];
const NAMES: [&str; 2] = ["white", "black"];

fn fischer(initial_ms: u64, increment_ms: u64) -> ClockDriver {
    let mut d = ClockDriver::new(
        TimeControl::Fischer {
            initial_ms,
            increment_ms,
        },
        P,
        30_000,
    )
    .expect("valid");
    d.start(Some(First), T);
    d
}

#[test]
fn would_flag_says_what_on_action_does() {
    for tc in [
        TimeControl::Fischer {
            initial_ms: 3_000,
            increment_ms: 1_000,
        },
        TimeControl::None,
    ] {
        let mut d = ClockDriver::new(tc, P, 30_000).expect("valid");
        d.start(Some(First), T);
        let (mut flagged, mut kept) = (0, 0);
        let mut turn_start = T;
        for i in 0..30u64 {
            let (side, player) = if i % 2 == 0 {
                (First, PlayerId::from(P[0]))
            } else {
                (Second, PlayerId::from(P[1]))
            };
            // Lag compensation builds up: its grace moves the flag.
            d.record_rtt(&player, 240);
            let credit = d.credit_for(side, &player);
            // Every 7 ms of the turn, over and past the side's remaining time.
            for now in (turn_start..turn_start + 20_000).step_by(7) {
                for ends_turn in [true, false] {
                    let would = d.would_flag(side, &player, ends_turn, now, credit);
                    let mut copy = d.clone();
                    let next = Some(side.other());
                    let did = copy
                        .on_action(side, &player, ends_turn, false, next, now, credit)
                        .is_err();
                    assert_eq!(would, did, "{tc:?} action {i} at {now} ends {ends_turn}");
                    if did {
                        flagged += 1;
                    } else {
                        kept += 1;
                    }
                }
            }
            // The action itself, half a second into the turn: the game goes on.
            turn_start += 500;
            d.on_action(
                side,
                &player,
                true,
                false,
                Some(side.other()),
                turn_start,
                credit,
            )
            .expect("in time");
        }
        assert!(kept > 0);
        // Fischer 3+1 flags within 20 s of a turn; no clock never does.
        assert_eq!(
            flagged > 0,
            matches!(tc, TimeControl::Fischer { .. }),
            "{tc:?}"
        );
    }
}

#[test]
fn default_first_action_window_is_thirty_seconds() {
    let d = fischer(300_000, 0);
    assert_eq!(d.first_action_deadline(), Some(T + 30_000));
    assert_eq!(d.timer_deadline(P), Some(T + 30_000));
    let mut d2 = d.clone();
    assert_eq!(d2.check_deadlines(T + 29_999, P), None);
    assert_eq!(
        d2.check_deadlines(T + 30_000, P),
        Some(Expiry::FirstAction(First))
    );
    // Shorter initial time: the window is the initial time.
    let d = fischer(10_000, 0);
    assert_eq!(d.first_action_deadline(), Some(T + 10_000));
    // Without a clock it is 30 s too.
    let mut none = ClockDriver::new(TimeControl::None, P, 30_000).unwrap();
    none.start(Some(First), T);
    assert_eq!(none.first_action_deadline(), Some(T + 30_000));
    assert_eq!(none.to_json(NAMES)["first_action_deadline"], T + 30_000);
}

#[test]
fn configured_first_action_window() {
    let mut d = ClockDriver::new(
        TimeControl::Fischer {
            initial_ms: 300_000,
            increment_ms: 0,
        },
        P,
        1_500,
    )
    .unwrap();
    d.start(Some(First), T);
    assert_eq!(d.first_action_deadline(), Some(T + 1_500));
    assert_eq!(d.to_json(NAMES)["first_action_deadline"], T + 1_500);
    // The first side moves; the second side's window starts then.
    d.on_action_live(First, "alice", true, false, Some(Second), T + 1_000)
        .unwrap();
    assert_eq!(d.first_action_deadline(), Some(T + 2_500));
    assert_eq!(
        d.check_deadlines(T + 2_500, P),
        Some(Expiry::FirstAction(Second))
    );
    // Correspondence keeps a whole turn.
    let mut c =
        ClockDriver::new(TimeControl::Correspondence { days_per_turn: 2 }, P, 1_500).unwrap();
    c.start(Some(First), T);
    assert_eq!(c.first_action_deadline(), Some(T + 2 * 86_400_000));
}

#[test]
fn fischer_turns_increment_and_flag_with_grace() {
    let mut d = fischer(2_000, 500);
    d.on_action_live(First, "alice", true, false, Some(Second), T + 100)
        .unwrap();
    d.on_action_live(Second, "bob", true, false, Some(First), T + 300)
        .unwrap();
    // Both started: white's clock runs from T+300.
    let j = d.to_json(NAMES);
    assert_eq!(j["running"], "white");
    assert_eq!(j["since"], T + 300);
    assert_eq!(j["remaining_ms"], json!({"white": 2_000, "black": 2_000}));
    assert_eq!(j["first_action_deadline"], Value::Null);
    assert_eq!(d.timer_deadline(P), Some(T + 2_300));
    // White moves after 700 ms: 2000 - 700 + 500.
    d.on_action_live(First, "alice", true, false, Some(Second), T + 1_000)
        .unwrap();
    let j = d.to_json(NAMES);
    assert_eq!(j["remaining_ms"], json!({"white": 1_800, "black": 2_000}));
    assert_eq!(j["running"], "black");
    assert_eq!(j["since"], T + 1_000);
    // Bob has a measured round trip of 100 ms: 50 ms of grace.
    d.record_rtt(&PlayerId::from("bob"), 100);
    assert_eq!(d.timer_deadline(P), Some(T + 3_050));
    assert_eq!(d.check_deadlines(T + 3_049, P), None);
    assert_eq!(
        d.check_deadlines(T + 3_050, P),
        Some(Expiry::Flag(Flagged {
            side: Second,
            deadline_ms: T + 3_000
        }))
    );
    assert_eq!(
        d.to_json(NAMES)["remaining_ms"],
        json!({"white": 1_800, "black": 0})
    );
    assert_eq!(d.to_json(NAMES)["running"], Value::Null);
}

#[test]
fn a_late_move_is_credited_its_transit_or_flags() {
    let mut d = fischer(2_000, 0);
    d.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    d.on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    d.record_rtt(&PlayerId::from("alice"), 200); // 100 ms each way
                                                 // Arrives 2050 ms into a 2000 ms turn: credited 100 ms, charged 1950.
    let turn = d
        .on_action_live(First, "alice", true, false, Some(Second), T + 2_050)
        .unwrap()
        .expect("a turn");
    assert_eq!(turn.credited_ms, 100);
    assert_eq!(turn.main_ms, 50);
    // Bob has no measurement: no credit, 2001 ms is too late.
    let err = d
        .on_action_live(Second, "bob", true, false, Some(First), T + 2_050 + 2_001)
        .unwrap_err();
    assert_eq!(err.side, Second);
}

#[test]
fn an_action_that_does_not_end_the_turn_only_checks_the_flag() {
    let mut d = fischer(2_000, 1_000);
    d.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    d.on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    assert_eq!(
        d.on_action_live(First, "alice", false, false, Some(First), T + 1_500),
        Ok(None)
    );
    // Still white's turn, same since, nothing charged yet.
    let j = d.to_json(NAMES);
    assert_eq!(j["since"], T);
    assert_eq!(j["remaining_ms"]["white"], 2_000);
    let turn = d
        .on_action_live(First, "alice", true, false, Some(Second), T + 1_800)
        .unwrap()
        .unwrap();
    assert_eq!(turn.main_ms, 2_000 - 1_800 + 1_000);
    assert!(d
        .on_action_live(Second, "bob", false, false, Some(Second), T + 1_800 + 2_000)
        .is_err());
}

#[test]
fn a_swap_is_a_turn_and_times_follow_the_person() {
    // Black (First) moves, white (Second) swaps: the person who moved first now plays
    // white and is to act; the swapper now plays black.
    let mut d = fischer(5_000, 0);
    d.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    // Second side's first action is the swap; both have started now.
    d.on_action_live(Second, "bob", true, true, Some(Second), T + 1_000)
        .unwrap();
    let players_after = ["bob", "alice"];
    let j = d.to_json(NAMES);
    assert_eq!(j["running"], "black");
    let mut d2 = d.clone();
    // Alice (now Second) thinks 1.2 s.
    let turn = d2
        .on_action_live(Second, "alice", true, false, Some(First), T + 2_200)
        .unwrap()
        .unwrap();
    assert_eq!(turn.main_ms, 3_800);
    assert_eq!(
        d2.to_json(NAMES)["remaining_ms"],
        json!({"white": 5_000, "black": 3_800})
    );
    assert_eq!(d2.timer_deadline(players_after), Some(T + 2_200 + 5_000));
}

#[test]
fn byoyomi_and_delay_documents() {
    let mut b = ClockDriver::new(
        TimeControl::Byoyomi {
            initial_ms: 1_000,
            periods: 2,
            period_ms: 3_000,
        },
        P,
        30_000,
    )
    .unwrap();
    b.start(Some(First), T);
    let j = b.to_json(NAMES);
    assert_eq!(j["kind"], "byoyomi");
    assert_eq!(j["periods"], 2);
    assert_eq!(j["period_ms"], 3_000);
    assert_eq!(j["periods_left"], json!({"white": 2, "black": 2}));
    b.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    b.on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    // 1 s main + one whole period gone + part of the next: one period used.
    b.on_action_live(First, "alice", true, false, Some(Second), T + 5_500)
        .unwrap();
    let j = b.to_json(NAMES);
    assert_eq!(j["remaining_ms"]["white"], 0);
    assert_eq!(j["periods_left"], json!({"white": 1, "black": 2}));

    let mut d = ClockDriver::new(
        TimeControl::Delay {
            initial_ms: 10_000,
            delay_ms: 2_000,
        },
        P,
        30_000,
    )
    .unwrap();
    d.start(Some(First), T);
    d.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    d.on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    d.on_action_live(First, "alice", true, false, Some(Second), T + 3_000)
        .unwrap();
    let j = d.to_json(NAMES);
    assert_eq!(j["delay_ms"], 2_000);
    assert_eq!(j["remaining_ms"], json!({"white": 9_000, "black": 10_000}));
    // Black's flag: since + main + delay.
    assert_eq!(d.timer_deadline(P), Some(T + 3_000 + 12_000));
}

#[test]
fn abandonment_timeout() {
    let mut d = fischer(300_000, 0);
    assert_eq!(d.abandonment_timeout_ms(Second, T, 60_000), 60_000);
    assert_eq!(d.abandonment_timeout_ms(Second, T, 5_000), 5_000);
    let mut short = fischer(20_000, 0);
    assert_eq!(short.abandonment_timeout_ms(Second, T, 60_000), 20_000);
    short
        .on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    short
        .on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    // White's clock runs: 20 s - 8 s used.
    assert_eq!(
        short.abandonment_timeout_ms(First, T + 8_000, 60_000),
        12_000
    );
    d.stop(T);
    let c = ClockDriver::new(TimeControl::Correspondence { days_per_turn: 1 }, P, 30_000).unwrap();
    assert_eq!(c.abandonment_timeout_ms(First, T, 60_000), 86_400_000);
}

#[test]
fn pause_freezes_deadlines_and_resume_moves_since() {
    let mut d = fischer(2_000, 0);
    d.on_action_live(First, "alice", true, false, Some(Second), T)
        .unwrap();
    d.on_action_live(Second, "bob", true, false, Some(First), T)
        .unwrap();
    d.pause(T + 500);
    assert_eq!(d.timer_deadline(P), None);
    assert_eq!(d.check_deadlines(T + 10_000, P), None);
    d.resume(T + 10_000);
    assert_eq!(d.to_json(NAMES)["since"], T + 9_500);
    assert_eq!(d.timer_deadline(P), Some(T + 11_500));
}

#[test]
fn survives_serde() {
    let mut d = fischer(2_000, 0);
    d.record_rtt(&PlayerId::from("alice"), 80);
    let back: ClockDriver = serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
    assert_eq!(back, d);
}
