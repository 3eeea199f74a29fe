//! Validation of the `clock` object of `room.create` and `queue.join` (one helper for both,
//! so a room and a queue accept exactly the same clocks).
//!
//! Decisions (protocol/docs/PROTOCOL.md, Clocks): a missing or `null` clock means `{"kind":"none"}`; the
//! clock must be an object whose `kind` is one of the five kinds and whose fields are that
//! kind's fields with non-negative integer values (milliseconds, or days for
//! correspondence) within [`TimeControl::validate`]'s bounds. Anything else is refused with
//! `invalid_options` and a message naming the problem. Fields a kind does not have are
//! ignored and dropped: the accepted clock is returned in canonical form (exactly the
//! kind's fields), which is what rooms, queues, stores and documents carry, so two requests
//! for the same control compare equal (matchmaking pairs on it).

use serde_json::Value;
use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{ErrorCode, CLOCK_KINDS};

use crate::error::ApiError;

/// Checks the game settings shared by `room.create` and `queue.join` — kind, options (by the
/// game's own validation, defaults filled in) and clock — so both accept exactly the same
/// games. Returns the kind, the normalised options and the canonical clock.
pub fn validate_settings(
    kind: &str,
    options: &Value,
    clock: Option<&Value>,
) -> Result<(&'static stoa_protocol::GameKind, Value, Value), ApiError> {
    let game_kind = stoa_protocol::kind(kind).map_err(|e| invalid(e.to_string()))?;
    let options = game_kind
        .validate_options(options)
        .map_err(|e| invalid(e.to_string()))?;
    let (_, clock) = validate_clock(clock)?;
    Ok((game_kind, options, clock))
}

/// Checks a request's `clock` and returns the time control and its canonical JSON
/// (`{"kind":"fischer","initial_ms":…,"increment_ms":…}`).
pub fn validate_clock(clock: Option<&Value>) -> Result<(TimeControl, Value), ApiError> {
    let tc = match clock {
        None | Some(Value::Null) => TimeControl::None,
        Some(v) => time_control(v)?,
    };
    let canonical = serde_json::to_value(tc).map_err(|e| invalid(format!("clock: {e}")))?;
    Ok((tc, canonical))
}

/// A time control as a canonical JSON object (`{"kind":"none"}` for none).
pub fn clock_json(tc: &TimeControl) -> Value {
    serde_json::to_value(tc).unwrap_or_else(|_| serde_json::json!({"kind": "none"}))
}

/// The time control of a clock object (a request's, or a canonical one from a room, a
/// queue or the store), validated.
pub fn time_control(clock: &Value) -> Result<TimeControl, ApiError> {
    let Value::Object(m) = clock else {
        return Err(invalid(format!(
            "clock must be an object with a 'kind' (one of: {})",
            CLOCK_KINDS.join(", ")
        )));
    };
    match m.get("kind").and_then(Value::as_str) {
        Some(k) if CLOCK_KINDS.contains(&k) => {}
        _ => {
            return Err(invalid(format!(
                "clock.kind must be one of: {}",
                CLOCK_KINDS.join(", ")
            )))
        }
    }
    let tc: TimeControl = serde_json::from_value(clock.clone()).map_err(|e| {
        invalid(format!(
            "clock: {e} (durations are non-negative integers in milliseconds)"
        ))
    })?;
    tc.validate().map_err(|e| invalid(format!("clock: {e}")))
}

fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidOptions, message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn err(v: Value) -> String {
        let e = validate_clock(Some(&v)).expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidOptions, "{v}");
        e.message
    }

    #[test]
    fn accepts_every_kind_in_canonical_form() {
        for v in [
            json!({"kind":"none"}),
            json!({"kind":"fischer","initial_ms":2000,"increment_ms":0}),
            json!({"kind":"delay","initial_ms":60000,"delay_ms":5000}),
            json!({"kind":"byoyomi","initial_ms":0,"periods":3,"period_ms":10000}),
            json!({"kind":"correspondence","days_per_turn":3}),
        ] {
            let (tc, canonical) = validate_clock(Some(&v)).expect("valid");
            assert_eq!(canonical, v);
            assert_eq!(tc.kind(), v["kind"]);
        }
    }

    #[test]
    fn missing_or_null_is_none_and_extra_fields_are_dropped() {
        assert_eq!(validate_clock(None).unwrap().1, json!({"kind":"none"}));
        assert_eq!(
            validate_clock(Some(&Value::Null)).unwrap().1,
            json!({"kind":"none"})
        );
        let (_, c) = validate_clock(Some(
            &json!({"kind":"fischer","initial_ms":1000,"increment_ms":5,"remaining_ms":{}}),
        ))
        .unwrap();
        assert_eq!(
            c,
            json!({"kind":"fischer","initial_ms":1000,"increment_ms":5})
        );
    }

    #[test]
    fn refuses_bad_clocks_with_a_clear_message() {
        assert!(err(json!("5+3")).contains("must be an object"));
        assert!(err(json!({})).contains("clock.kind must be one of"));
        assert!(err(json!({"kind":"hourglass"})).contains("clock.kind must be one of"));
        assert!(err(json!({"kind":"fischer","initial_ms":1000})).contains("increment_ms"));
        assert!(
            err(json!({"kind":"fischer","initial_ms":-1,"increment_ms":0}))
                .contains("non-negative integers")
        );
        assert!(
            err(json!({"kind":"fischer","initial_ms":"1000","increment_ms":0})).contains("clock:")
        );
        assert!(
            err(json!({"kind":"fischer","initial_ms":1.5,"increment_ms":0})).contains("clock:")
        );
        assert_eq!(
            err(json!({"kind":"fischer","initial_ms":0,"increment_ms":0})),
            "clock: a fischer clock must give each side at least 1000 ms for its first timed turn (this one gives 0 ms)"
        );
        assert!(
            err(json!({"kind":"fischer","initial_ms":500,"increment_ms":0}))
                .contains("at least 1000 ms")
        );
        assert!(
            err(json!({"kind":"fischer","initial_ms":90000000,"increment_ms":0}))
                .contains("initial_ms of 90000000 ms is too long")
        );
        assert!(
            err(json!({"kind":"byoyomi","initial_ms":0,"periods":5,"period_ms":100}))
                .contains("period_ms")
        );
        assert!(err(json!({"kind":"correspondence","days_per_turn":0})).contains("days_per_turn"));
        assert!(err(json!({"kind":"correspondence","days_per_turn":15})).contains("days_per_turn"));
    }
}
