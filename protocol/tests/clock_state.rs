//! The clock maths of every kind, driven on virtual time.

use serde_json::json;
use stoa_protocol::clock::{
    first_action_deadline, Clock, Flagged, TimeControl, TimeSource, VirtualTime, DAY_MS,
};
use stoa_protocol::Side::{self, First, Second};

const NAMES: [&str; 2] = ["white", "black"];
const T0: u64 = 1_700_000_000_000;

/// A clock plus virtual time, with both first actions already made (each taking `gap`),
/// and `First` to act with its clock running.
struct Game {
    clock: Clock,
    time: VirtualTime,
}

impl Game {
    fn new(tc: TimeControl) -> Game {
        let time = VirtualTime::new(T0);
        let mut clock = Clock::new(tc).unwrap();
        clock.start_turn(First, time.now_ms());
        Game { clock, time }
    }

    fn started(tc: TimeControl) -> Game {
        let mut g = Game::new(tc);
        g.act(First, 1_000, 0).unwrap();
        g.act(Second, 1_000, 0).unwrap();
        g
    }

    fn now(&self) -> u64 {
        self.time.now_ms()
    }

    /// `side` thinks `ms`, acts (ending its turn) with `credit`, and the other side is to act.
    fn act(
        &mut self,
        side: Side,
        ms: u64,
        credit: u64,
    ) -> Result<stoa_protocol::clock::TurnResult, Flagged> {
        let now = self.time.advance(ms);
        let r = self.clock.end_turn(side, now, credit)?;
        self.clock.start_turn(side.other(), now);
        Ok(r)
    }
}

fn fischer(initial_ms: u64, increment_ms: u64) -> TimeControl {
    TimeControl::Fischer {
        initial_ms,
        increment_ms,
    }
}

#[test]
fn no_clock_runs_until_each_side_has_acted() {
    let mut g = Game::new(fischer(300_000, 3_000));
    assert_eq!(g.clock.running(), None);
    assert_eq!(g.clock.flag_deadline(), None);
    assert_eq!(g.clock.first_action_deadline(), Some(T0 + 30_000));
    assert!(!g.clock.both_started());

    let r = g.act(First, 20_000, 0).unwrap();
    assert!(r.first_action);
    assert_eq!((r.charged_ms, r.added_ms, r.main_ms), (0, 0, 300_000));
    assert_eq!(g.clock.running(), None);
    assert_eq!(g.clock.first_action_deadline(), Some(T0 + 20_000 + 30_000));
    assert!(g.clock.has_started(First) && !g.clock.has_started(Second));

    let r = g.act(Second, 29_999, 0).unwrap();
    assert!(r.first_action);
    assert_eq!(r.main_ms, 300_000);
    assert!(g.clock.both_started());
    assert_eq!(g.clock.first_action_deadline(), None);
    assert_eq!(g.clock.running(), Some(First));
    assert_eq!(g.clock.since(), Some(g.now()));
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 300_000));
}

#[test]
fn nobody_moves_and_the_game_aborts_at_the_first_action_deadline() {
    let mut g = Game::new(fischer(300_000, 3_000));
    assert_eq!(g.clock.check_first_action(T0 + 29_999), None);
    assert_eq!(g.clock.check_first_action(T0 + 30_000), Some(First));
    // The second side gets its own 30 s once the first has acted.
    g.act(First, 5_000, 0).unwrap();
    assert_eq!(g.clock.check_first_action(T0 + 30_000), None);
    assert_eq!(g.clock.check_first_action(T0 + 35_000), Some(Second));
    g.clock.stop(T0 + 35_000);
    assert_eq!(g.clock.first_action_deadline(), None);
    assert_eq!(g.clock.main_ms(First), 300_000);
    assert_eq!(g.clock.main_ms(Second), 300_000);
    assert_eq!(g.clock.to_json(NAMES)["first_action_deadline"], json!(null));
}

#[test]
fn first_action_deadline_per_kind() {
    let cases = [
        (fischer(300_000, 3_000), 30_000),
        (fischer(2_000, 0), 2_000),
        (fischer(0, 1_000), 3_000),
        (
            TimeControl::Delay {
                initial_ms: 10_000,
                delay_ms: 5_000,
            },
            15_000,
        ),
        (
            TimeControl::Byoyomi {
                initial_ms: 0,
                periods: 3,
                period_ms: 5_000,
            },
            15_000,
        ),
        (
            TimeControl::Byoyomi {
                initial_ms: 0,
                periods: 5,
                period_ms: 30_000,
            },
            30_000,
        ),
        (TimeControl::None, 30_000),
        (TimeControl::Correspondence { days_per_turn: 3 }, 3 * DAY_MS),
    ];
    for (tc, window) in cases {
        assert_eq!(first_action_deadline(T0, &tc), T0 + window, "{tc}");
        assert_eq!(tc.first_action_window_ms(), window, "{tc}");
        let g = Game::new(tc);
        assert_eq!(g.clock.first_action_deadline(), Some(T0 + window), "{tc}");
    }
}

#[test]
fn fischer_charges_and_adds_increment() {
    let mut g = Game::started(fischer(300_000, 3_000));
    let r = g.act(First, 4_000, 0).unwrap();
    assert_eq!(
        (r.elapsed_ms, r.charged_ms, r.added_ms),
        (4_000, 4_000, 3_000)
    );
    assert_eq!(g.clock.main_ms(First), 299_000);
    let r = g.act(Second, 10_500, 0).unwrap();
    assert_eq!(r.main_ms, 292_500);
    assert_eq!(g.clock.running(), Some(First));
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 299_000));
    assert_eq!(g.clock.remaining_at(First, g.now() + 1_000), Some(298_000));
    assert_eq!(g.clock.remaining_at(Second, g.now() + 1_000), Some(292_500));
}

#[test]
fn fischer_flags_exactly_at_the_deadline() {
    // Ending the turn 1 ms before the deadline is in time; at the deadline it is not.
    let mut g = Game::started(fischer(2_000, 0));
    let r = g.act(First, 1_999, 0).unwrap();
    assert_eq!(r.main_ms, 1);
    let since = g.now();
    let err = g.act(Second, 2_000, 0).unwrap_err();
    assert_eq!(
        err,
        Flagged {
            side: Second,
            deadline_ms: since + 2_000
        }
    );
    assert_eq!(g.clock.flagged(), Some(err));
    assert_eq!(g.clock.main_ms(Second), 0);
    assert_eq!(g.clock.running(), None);
    assert!(g.clock.end_turn(First, g.now(), 0).is_err());
}

#[test]
fn server_flags_on_its_own_timer_with_grace() {
    let mut g = Game::started(fischer(2_000, 0));
    let deadline = g.clock.flag_deadline().unwrap();
    assert_eq!(deadline, g.now() + 2_000);
    assert!(!g.clock.is_flagged(deadline - 1));
    assert!(g.clock.is_flagged(deadline));
    // Grace of 50 ms (the running player's possible lag credit): not yet at the deadline.
    assert_eq!(g.clock.check_flag(deadline, 50), None);
    assert_eq!(g.clock.check_flag(deadline + 49, 50), None);
    let f = g.clock.check_flag(deadline + 50, 50).unwrap();
    assert_eq!(
        f,
        Flagged {
            side: First,
            deadline_ms: deadline
        }
    );
    // Idempotent, and the document shows the stopped clock.
    assert_eq!(g.clock.check_flag(deadline + 500, 0), Some(f));
    assert_eq!(g.clock.flag_deadline(), None);
    assert_eq!(g.clock.remaining_at(First, deadline + 500), Some(0));
    let doc = g.clock.to_json(NAMES);
    assert_eq!(doc["remaining_ms"], json!({"white":0,"black":2_000}));
    assert_eq!(doc["running"], json!(null));
    assert_eq!(doc["since"], json!(null));
}

#[test]
fn lag_credit_saves_a_move_in_flight() {
    // Move sent at 1 990 ms, arriving 60 ms later (after the raw deadline), credited 60 ms.
    let mut g = Game::started(fischer(2_000, 0));
    let r = g.act(First, 2_050, 60).unwrap();
    assert_eq!((r.credited_ms, r.charged_ms, r.main_ms), (60, 1_990, 10));
    // A credit never makes the charge negative.
    let r = g.act(Second, 30, 500).unwrap();
    assert_eq!((r.credited_ms, r.charged_ms, r.main_ms), (30, 0, 2_000));
}

#[test]
fn simple_delay_makes_the_first_seconds_free() {
    let mut g = Game::started(TimeControl::Delay {
        initial_ms: 60_000,
        delay_ms: 5_000,
    });
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 65_000));
    let r = g.act(First, 3_000, 0).unwrap();
    assert_eq!((r.charged_ms, r.main_ms), (3_000, 60_000));
    let r = g.act(Second, 8_000, 0).unwrap();
    assert_eq!(r.main_ms, 57_000);
    // Unused delay does not accumulate.
    let r = g.act(First, 0, 0).unwrap();
    assert_eq!(r.main_ms, 60_000);
    // Flag: the delay plus the whole main time, exactly.
    let r = g.act(Second, 61_999, 0).unwrap();
    assert_eq!(r.main_ms, 1);
    assert!(g.act(First, 65_000, 0).is_err());
}

#[test]
fn byoyomi_consumes_and_resets_periods() {
    let mut g = Game::started(TimeControl::Byoyomi {
        initial_ms: 10_000,
        periods: 3,
        period_ms: 5_000,
    });
    // 10 s main + 3 × 5 s.
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 25_000));
    // Main time runs out, the turn ends 2 s into the first period: the period resets.
    let r = g.act(First, 12_000, 0).unwrap();
    assert_eq!((r.main_ms, r.periods_left, r.periods_used), (0, 3, 0));
    g.act(Second, 1_000, 0).unwrap();
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 15_000));
    // A turn of 11 s uses two whole periods and ends within the third.
    let r = g.act(First, 11_000, 0).unwrap();
    assert_eq!((r.periods_left, r.periods_used), (1, 2));
    g.act(Second, 1_000, 0).unwrap();
    // Within the last period, repeatedly: it resets each time.
    for _ in 0..5 {
        let r = g.act(First, 4_999, 0).unwrap();
        assert_eq!((r.periods_left, r.periods_used), (1, 0));
        g.act(Second, 1_000, 0).unwrap();
    }
    // Running out of the last period flags.
    let since = g.now();
    assert_eq!(g.clock.flag_deadline(), Some(since + 5_000));
    assert_eq!(
        g.act(First, 5_000, 0).unwrap_err(),
        Flagged {
            side: First,
            deadline_ms: since + 5_000
        }
    );
    assert_eq!(g.clock.periods_left(First), 0);
    assert_eq!(g.clock.periods_left(Second), 3);
}

#[test]
fn byoyomi_turn_ending_exactly_as_main_time_runs_out() {
    let mut g = Game::started(TimeControl::Byoyomi {
        initial_ms: 10_000,
        periods: 2,
        period_ms: 5_000,
    });
    let r = g.act(First, 10_000, 0).unwrap();
    assert_eq!((r.main_ms, r.periods_left), (0, 2));
    g.act(Second, 1, 0).unwrap();
    // Exactly one whole period: the turn ends at the start of the second one.
    let r = g.act(First, 5_000, 0).unwrap();
    assert_eq!((r.periods_left, r.periods_used), (1, 1));
}

#[test]
fn correspondence_gives_each_turn_its_days() {
    let mut g = Game::started(TimeControl::Correspondence { days_per_turn: 2 });
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 2 * DAY_MS));
    let r = g.act(First, DAY_MS + DAY_MS / 2, 0).unwrap();
    assert_eq!(r.main_ms, 2 * DAY_MS);
    // Unused time does not accumulate: a quick turn does not bank anything.
    let r = g.act(Second, 1_000, 0).unwrap();
    assert_eq!(r.main_ms, 2 * DAY_MS);
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 2 * DAY_MS));
    assert_eq!(g.clock.remaining_at(First, g.now() + DAY_MS), Some(DAY_MS));
    let deadline = g.clock.flag_deadline().unwrap();
    assert_eq!(g.clock.check_flag(deadline, 0).map(|f| f.side), Some(First));
}

#[test]
fn no_clock_never_runs_or_flags() {
    let mut g = Game::started(TimeControl::None);
    g.act(First, 10 * DAY_MS, 0).unwrap();
    assert_eq!(g.clock.running(), None);
    assert_eq!(g.clock.flag_deadline(), None);
    assert_eq!(g.clock.remaining_at(First, g.now()), None);
    assert!(!g.clock.is_flagged(u64::MAX));
    assert_eq!(
        g.clock.to_json(NAMES),
        json!({"kind":"none","remaining_ms":{"white":null,"black":null},
               "running":null,"since":null,"first_action_deadline":null})
    );
}

#[test]
fn document_clock_shape() {
    let mut g = Game::new(TimeControl::Byoyomi {
        initial_ms: 600_000,
        periods: 5,
        period_ms: 30_000,
    });
    assert_eq!(
        g.clock.to_json(NAMES),
        json!({"kind":"byoyomi","initial_ms":600_000,"periods":5,"period_ms":30_000,
               "remaining_ms":{"white":600_000,"black":600_000},
               "periods_left":{"white":5,"black":5},
               "running":null,"since":null,"first_action_deadline":T0 + 30_000})
    );
    g.act(First, 1_000, 0).unwrap();
    g.act(Second, 1_000, 0).unwrap();
    g.act(First, 7_000, 0).unwrap();
    let since = g.now();
    // Remaining times are the values at `since`; the document does not change while the
    // clock runs.
    g.time.advance(12_345);
    assert_eq!(
        g.clock.to_json(["light", "dark"]),
        json!({"kind":"byoyomi","initial_ms":600_000,"periods":5,"period_ms":30_000,
               "remaining_ms":{"light":593_000,"dark":600_000},
               "periods_left":{"light":5,"dark":5},
               "running":"dark","since":since,"first_action_deadline":null})
    );
    let fischer_doc = Game::started(fischer(300_000, 3_000)).clock.to_json(NAMES);
    assert_eq!(fischer_doc["kind"], "fischer");
    assert_eq!(fischer_doc["increment_ms"], 3_000);
    assert!(fischer_doc.get("periods_left").is_none());
    // The document's clock reads back as its time control.
    assert_eq!(
        serde_json::from_value::<TimeControl>(fischer_doc).unwrap(),
        fischer(300_000, 3_000)
    );
}

#[test]
fn pause_charges_nobody_for_downtime() {
    let mut g = Game::started(fischer(60_000, 0));
    g.time.advance(10_000);
    g.clock.pause(g.now());
    assert!(g.clock.is_paused());
    assert_eq!(g.clock.running(), None);
    assert_eq!(g.clock.flag_deadline(), None);
    assert_eq!(g.clock.to_json(NAMES)["running"], json!(null));
    // Down for an hour: nothing is charged and no flag falls.
    g.time.advance(3_600_000);
    assert_eq!(g.clock.remaining_at(First, g.now()), Some(50_000));
    assert_eq!(g.clock.check_flag(g.now(), 0), None);
    g.clock.resume(g.now());
    assert_eq!(g.clock.since(), Some(g.now() - 10_000));
    assert_eq!(g.clock.flag_deadline(), Some(g.now() + 50_000));
    let r = g.act(First, 5_000, 0).unwrap();
    assert_eq!((r.elapsed_ms, r.main_ms), (15_000, 45_000));
}

#[test]
fn pause_before_first_actions_shifts_the_abort_deadline() {
    let mut g = Game::new(fischer(60_000, 0));
    g.time.advance(20_000);
    g.clock.pause(g.now());
    assert_eq!(g.clock.first_action_deadline(), None);
    g.time.advance(100_000);
    g.clock.resume(g.now());
    assert_eq!(g.clock.first_action_deadline(), Some(g.now() + 10_000));
}

#[test]
fn persisted_clock_restores_and_resumes() {
    let mut g = Game::started(fischer(60_000, 2_000));
    g.act(First, 3_000, 0).unwrap();
    g.time.advance(4_000);
    g.clock.pause(g.now());
    let saved = serde_json::to_string(&g.clock).unwrap();
    let mut restored: Clock = serde_json::from_str(&saved).unwrap();
    assert_eq!(restored, g.clock);
    g.time.advance(60_000);
    restored.resume(g.now());
    assert_eq!(restored.running(), Some(Second));
    assert_eq!(restored.remaining_at(Second, g.now()), Some(56_000));
}

#[test]
fn swap_sides_follows_the_persons() {
    let mut g = Game::new(fischer(60_000, 0));
    // Different histories per person, then swap with the second person to act.
    g.act(First, 1_000, 0).unwrap();
    g.act(Second, 1_000, 0).unwrap();
    g.act(First, 7_000, 0).unwrap(); // person A (First) now has 53 s
    let since = g.now();
    g.clock.swap_sides();
    // Person A now sits as Second; person B (to act, clock running) as First.
    assert_eq!(g.clock.main_ms(Second), 53_000);
    assert_eq!(g.clock.main_ms(First), 60_000);
    assert_eq!(g.clock.running(), Some(First));
    assert_eq!(g.clock.since(), Some(since));
    let doc = g.clock.to_json(NAMES);
    assert_eq!(doc["remaining_ms"], json!({"white":60_000,"black":53_000}));
    assert_eq!(doc["running"], json!("white"));
    let r = g.act(First, 2_000, 0).unwrap();
    assert_eq!(r.main_ms, 58_000);
}

#[test]
fn stop_freezes_without_flag_or_increment() {
    let mut g = Game::started(fischer(60_000, 5_000));
    g.time.advance(7_000);
    g.clock.stop(g.now());
    assert_eq!(g.clock.main_ms(First), 53_000);
    assert_eq!(g.clock.running(), None);
    assert_eq!(g.clock.flagged(), None);
    // Stopping long after the deadline shows zero, not a flag.
    let mut g = Game::started(fischer(2_000, 0));
    g.time.advance(10_000);
    g.clock.stop(g.now());
    assert_eq!(g.clock.main_ms(First), 0);
    assert_eq!(g.clock.flagged(), None);
}

#[test]
fn abandonment_timeout_is_sixty_seconds_or_the_remaining_clock() {
    let g = Game::started(fischer(300_000, 0));
    assert_eq!(g.clock.abandonment_timeout_ms(First, g.now()), 60_000);
    let g = Game::started(fischer(20_000, 0));
    assert_eq!(
        g.clock.abandonment_timeout_ms(First, g.now() + 5_000),
        15_000
    );
    assert_eq!(g.clock.abandonment_timeout_ms(Second, g.now()), 20_000);
    let g = Game::started(TimeControl::None);
    assert_eq!(g.clock.abandonment_timeout_ms(First, g.now()), 60_000);
    let g = Game::started(TimeControl::Correspondence { days_per_turn: 1 });
    assert_eq!(g.clock.abandonment_timeout_ms(First, g.now()), DAY_MS);
}

#[test]
fn fischer_zero_initial_starts_with_one_increment() {
    let g = Game::started(fischer(0, 5_000));
    assert_eq!(g.clock.main_ms(First), 5_000);
    let g = Game::started(fischer(0, 1_000));
    assert_eq!(g.clock.main_ms(First), 3_000);
}

#[test]
fn new_validates() {
    assert!(Clock::new(fischer(0, 0)).is_err());
}
