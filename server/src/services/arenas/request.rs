//! Checking an `arena.create` request into an arena's settings.
//!
//! The bounds (documented in protocol/docs/PROTOCOL.md, "Arenas (additions)"): the game
//! settings as `room.create` checks them; a duration of 10 s to 24 h; a start at most
//! 7 days ahead (a start in the past means now); a name of 1-40 printable characters;
//! computer players only in casual arenas; berserk only with a clock that runs (not none,
//! not correspondence); `min_draw_plies` at most 500. Anything else is `invalid_options`
//! and creates nothing.

use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{ArenaSettings, ErrorCode, Visibility};

use super::state::Settings;
use crate::domain::setup::GameSetup;
use crate::error::ApiError;
use crate::ids::{ArenaId, PlayerId};

/// The shortest arena, ms.
pub const MIN_DURATION_MS: u64 = 10_000;
/// The longest arena, ms.
pub const MAX_DURATION_MS: u64 = 24 * 3_600_000;
/// How far ahead an arena may be scheduled, ms.
pub const MAX_LEAD_MS: u64 = 7 * 24 * 3_600_000;
/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 40;
/// The largest `min_draw_plies`.
pub const MAX_MIN_DRAW_PLIES: u32 = 500;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidOptions, message)
}

/// Checks a request at server time `now`; `id` and `code` are the new arena's (the code
/// is kept only for a private arena); `creator` is (id, name).
pub fn settings(
    req: &ArenaSettings,
    now: u64,
    id: ArenaId,
    code: String,
    creator: (PlayerId, String),
) -> Result<Settings, ApiError> {
    let setup = GameSetup::parse(&req.kind, &req.options, req.clock.as_ref())?;
    if !(MIN_DURATION_MS..=MAX_DURATION_MS).contains(&req.duration_ms) {
        return Err(invalid(format!(
            "duration_ms must be between {MIN_DURATION_MS} and {MAX_DURATION_MS}"
        )));
    }
    let starts_at = match (req.starts_in_ms, req.starts_at_ms) {
        (Some(_), Some(_)) => {
            return Err(invalid("give starts_in_ms or starts_at_ms, not both"));
        }
        (Some(d), None) => now.saturating_add(d),
        (None, Some(at)) => at.max(now),
        (None, None) => now,
    };
    if starts_at - now > MAX_LEAD_MS {
        return Err(invalid("an arena starts at most 7 days ahead"));
    }
    let name = match &req.name {
        Some(n) => {
            let n = n.trim().to_string();
            let len = n.chars().count();
            if !(1..=MAX_NAME_CHARS).contains(&len) || n.chars().any(char::is_control) {
                return Err(invalid(format!(
                    "name must be 1-{MAX_NAME_CHARS} printable characters"
                )));
            }
            n
        }
        None => format!("{} arena", setup.kind_id()),
    };
    if req.bots && req.rated {
        return Err(invalid("computer players may only join casual arenas"));
    }
    let runs = !matches!(
        setup.clock,
        TimeControl::None | TimeControl::Correspondence { .. }
    );
    if req.berserk && !runs {
        return Err(invalid(
            "berserk needs a clock that runs (not none, not correspondence)",
        ));
    }
    if req.min_draw_plies > MAX_MIN_DRAW_PLIES {
        return Err(invalid(format!(
            "min_draw_plies must be at most {MAX_MIN_DRAW_PLIES}"
        )));
    }
    let visibility = req.visibility.unwrap_or(Visibility::Public);
    Ok(Settings {
        id,
        name,
        setup,
        rated: req.rated,
        visibility,
        code: (visibility == Visibility::Private).then_some(code),
        creator,
        starts_at,
        ends_at: starts_at + req.duration_ms,
        bots: req.bots,
        berserk: req.berserk,
        min_draw_plies: req.min_draw_plies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(extra: serde_json::Value) -> ArenaSettings {
        let mut v = json!({"kind":"unane","duration_ms":90000,
            "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    fn check(extra: serde_json::Value) -> Result<Settings, ApiError> {
        settings(
            &req(extra),
            1_000,
            "a1".into(),
            "CODE".into(),
            ("c".into(), "C".into()),
        )
    }

    #[test]
    fn accepts_and_fills_defaults() {
        let s = check(json!({"starts_in_ms": 5000, "berserk": true})).unwrap();
        assert_eq!((s.starts_at, s.ends_at), (6_000, 96_000));
        assert_eq!(s.name, "unane arena");
        assert_eq!(s.visibility, Visibility::Public);
        assert_eq!(s.code, None);
        let s = check(json!({"visibility":"private","starts_at_ms": 10})).unwrap();
        assert_eq!(s.code.as_deref(), Some("CODE"));
        assert_eq!(s.starts_at, 1_000, "a start in the past means now");
    }

    #[test]
    fn refuses_out_of_bounds() {
        for bad in [
            json!({"duration_ms": 9_999}),
            json!({"duration_ms": MAX_DURATION_MS + 1}),
            json!({"starts_in_ms": MAX_LEAD_MS + 1}),
            json!({"starts_in_ms": 1, "starts_at_ms": 5}),
            json!({"name": ""}),
            json!({"name": "x".repeat(41)}),
            json!({"bots": true, "rated": true}),
            json!({"berserk": true, "clock": {"kind":"none"}}),
            json!({"berserk": true, "clock": {"kind":"correspondence","days_per_turn":1}}),
            json!({"min_draw_plies": 501}),
            json!({"kind": "chess"}),
            json!({"clock": {"kind":"sundial"}}),
        ] {
            let e = check(bad.clone())
                .err()
                .unwrap_or_else(|| panic!("accepted {bad}"));
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{bad}");
        }
    }
}
