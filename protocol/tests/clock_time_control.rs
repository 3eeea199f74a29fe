//! Time controls: the exact wire shape, validation errors and labels.

use serde_json::json;
use stoa_protocol::clock::{TimeControl, TimeControlError, DAY_MS};

fn fischer(initial_ms: u64, increment_ms: u64) -> TimeControl {
    TimeControl::Fischer {
        initial_ms,
        increment_ms,
    }
}

fn byoyomi(initial_ms: u64, periods: u32, period_ms: u64) -> TimeControl {
    TimeControl::Byoyomi {
        initial_ms,
        periods,
        period_ms,
    }
}

#[test]
fn wire_shapes_match_protocol() {
    let cases = [
        (TimeControl::None, json!({"kind":"none"})),
        (
            fischer(300_000, 3_000),
            json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000}),
        ),
        (
            TimeControl::Delay {
                initial_ms: 60_000,
                delay_ms: 5_000,
            },
            json!({"kind":"delay","initial_ms":60_000,"delay_ms":5_000}),
        ),
        (
            byoyomi(600_000, 5, 30_000),
            json!({"kind":"byoyomi","initial_ms":600_000,"periods":5,"period_ms":30_000}),
        ),
        (
            TimeControl::Correspondence { days_per_turn: 3 },
            json!({"kind":"correspondence","days_per_turn":3}),
        ),
    ];
    for (tc, wire) in cases {
        assert_eq!(serde_json::to_value(tc).unwrap(), wire, "{tc:?}");
        let back: TimeControl = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(back, tc, "{wire}");
        // Round trip through text too.
        let text = serde_json::to_string(&tc).unwrap();
        assert_eq!(serde_json::from_str::<TimeControl>(&text).unwrap(), tc);
    }
}

#[test]
fn wire_reads_document_clock_and_rejects_garbage() {
    // The document's clock carries extra fields; it still reads as its time control.
    let doc = json!({"kind":"fischer","initial_ms":1000,"increment_ms":0,
        "remaining_ms":{"white":1000,"black":1000},"running":null,"since":null});
    assert_eq!(
        serde_json::from_value::<TimeControl>(doc).unwrap(),
        fischer(1000, 0)
    );
    for bad in [
        json!({"kind":"sandglass"}),
        json!({"kind":"fischer","initial_ms":1000}),
        json!({"kind":"fischer","initial_ms":-1,"increment_ms":0}),
        json!({"initial_ms":1000,"increment_ms":0}),
        json!({"kind":"correspondence","days_per_turn":"3"}),
    ] {
        assert!(
            serde_json::from_value::<TimeControl>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn validation_accepts_sane_controls() {
    for tc in [
        TimeControl::None,
        fischer(300_000, 3_000),
        fischer(2_000, 0),
        fischer(0, 1_000), // 0+1 starts with 3 s, like lichess
        fischer(24 * 3_600_000, 600_000),
        TimeControl::Delay {
            initial_ms: 0,
            delay_ms: 5_000,
        },
        byoyomi(600_000, 5, 30_000),
        byoyomi(0, 3, 10_000),
        byoyomi(60_000, 0, 0),
        TimeControl::Correspondence { days_per_turn: 1 },
        TimeControl::Correspondence { days_per_turn: 14 },
    ] {
        assert_eq!(tc.validate(), Ok(tc), "{tc:?}");
    }
}

#[test]
fn validation_rejects_zero_time_and_absurd_controls() {
    let err = |tc: TimeControl| tc.validate().unwrap_err();
    assert!(matches!(
        err(fischer(0, 0)),
        TimeControlError::TooLittleTime {
            kind: "fischer",
            ..
        }
    ));
    assert!(matches!(
        err(fischer(500, 0)),
        TimeControlError::TooLittleTime { got_ms: 500, .. }
    ));
    assert!(matches!(
        err(byoyomi(0, 0, 30_000)),
        TimeControlError::TooLittleTime {
            kind: "byoyomi",
            got_ms: 0,
            ..
        }
    ));
    assert!(matches!(
        err(TimeControl::Delay {
            initial_ms: 0,
            delay_ms: 0
        }),
        TimeControlError::TooLittleTime { kind: "delay", .. }
    ));
    assert!(matches!(
        err(fischer(24 * 3_600_000 + 1, 0)),
        TimeControlError::TooLong {
            field: "initial_ms",
            ..
        }
    ));
    assert!(matches!(
        err(fischer(60_000, 600_001)),
        TimeControlError::TooLong {
            field: "increment_ms",
            ..
        }
    ));
    assert!(matches!(
        err(TimeControl::Delay {
            initial_ms: 60_000,
            delay_ms: 3_600_000
        }),
        TimeControlError::TooLong {
            field: "delay_ms",
            ..
        }
    ));
    assert!(matches!(
        err(byoyomi(60_000, 61, 30_000)),
        TimeControlError::TooManyPeriods {
            periods: 61,
            max: 60
        }
    ));
    assert!(matches!(
        err(byoyomi(60_000, 5, 999)),
        TimeControlError::PeriodTooShort { value_ms: 999, .. }
    ));
    assert!(matches!(
        err(byoyomi(60_000, 5, 3_600_001)),
        TimeControlError::TooLong {
            field: "period_ms",
            ..
        }
    ));
    assert!(matches!(
        err(TimeControl::Correspondence { days_per_turn: 0 }),
        TimeControlError::Days { days: 0, .. }
    ));
    assert!(matches!(
        err(TimeControl::Correspondence { days_per_turn: 15 }),
        TimeControlError::Days { days: 15, .. }
    ));
    // Messages are for people.
    let msg = err(fischer(0, 0)).to_string();
    assert!(msg.contains("fischer") && msg.contains("1000 ms"), "{msg}");
}

#[test]
fn labels_are_canonical_and_round_trip() {
    let cases = [
        (TimeControl::None, "none"),
        (fischer(300_000, 3_000), "5+3"),
        (fischer(30_000, 0), "30s+0"),
        (fischer(2_000, 0), "2s+0"),
        (fischer(90_000, 500), "90s+500ms"),
        (fischer(3_600_000, 0), "60+0"),
        (
            TimeControl::Delay {
                initial_ms: 300_000,
                delay_ms: 10_000,
            },
            "delay:5m/10s",
        ),
        (byoyomi(600_000, 5, 30_000), "byoyomi:10m/5x30s"),
        (byoyomi(0, 3, 60_000), "byoyomi:0/3x1m"),
        (byoyomi(3_600_000, 1, 30_000), "byoyomi:1h/1x30s"),
        (TimeControl::Correspondence { days_per_turn: 3 }, "corr:3d"),
    ];
    for (tc, label) in cases {
        assert_eq!(tc.label(), label);
        assert_eq!(tc.to_string(), label);
        assert_eq!(TimeControl::parse_label(label), Ok(tc), "{label}");
        assert_eq!(label.parse::<TimeControl>(), Ok(tc), "{label}");
    }
}

#[test]
fn labels_accept_other_spellings() {
    let same = [
        ("5+3", "5m+3s"),
        ("5+3", " 5 + 3 "),
        ("0.5+0", "30s+0"),
        ("1.5+2", "90s+2000ms"),
        ("byoyomi:10/5x30", "byoyomi:10m/5x30s"),
        ("BYOYOMI:10M/5X30S", "byoyomi:10m/5x30s"),
        ("delay:5/10", "delay:5m/10s"),
        ("corr:3", "corr:3d"),
        ("correspondence:3d", "corr:3d"),
        ("NONE", "none"),
    ];
    for (a, b) in same {
        assert_eq!(
            TimeControl::parse_label(a).unwrap(),
            TimeControl::parse_label(b).unwrap(),
            "{a} vs {b}"
        );
    }
    assert_eq!(
        TimeControl::parse_label("corr:2d").unwrap(),
        TimeControl::Correspondence { days_per_turn: 2 }
    );
    assert_eq!(2 * DAY_MS, 172_800_000);
}

#[test]
fn bad_labels_say_why() {
    for bad in [
        "",
        "blitz",
        "5",
        "5+",
        "+3",
        "5+3x",
        "5q+3",
        "0.00001+0",
        "byoyomi:10m",
        "byoyomi:10m/5",
        "byoyomi:10m/fivex30s",
        "delay:5m",
        "corr:1.5d",
        "corr:12h",
        "1.2.3+0",
        "99999999999999999+0",
    ] {
        let err = TimeControl::parse_label(bad).unwrap_err();
        assert!(
            matches!(err, TimeControlError::BadLabel { .. }),
            "{bad}: {err:?}"
        );
        assert!(err.to_string().contains("expected e.g."), "{err}");
    }
    // Well-formed labels are validated too.
    assert!(matches!(
        TimeControl::parse_label("0+0").unwrap_err(),
        TimeControlError::TooLittleTime { .. }
    ));
    assert!(matches!(
        TimeControl::parse_label("corr:30d").unwrap_err(),
        TimeControlError::Days { .. }
    ));
}
