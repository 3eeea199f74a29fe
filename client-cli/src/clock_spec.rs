//! `--clock` labels (`5+3`, `none`, `byoyomi:10m/5x30s`, `delay:5m/2s`, `corr:3d`) turned into
//! protocol/docs/PROTOCOL.md's clock request object, and clock times formatted for people.
//!
//! Why the shared parser: `stoa_protocol::clock::TimeControl` owns the label grammar and the
//! validation the server applies, so `--clock` accepts exactly what the lobby and the server
//! show, and a bad control is refused before any connection. Scripts can still pass the
//! exact object as JSON (`--clock '{"kind":"fischer",…}'`).

use serde_json::Value;
use stoa_protocol::clock::TimeControl;

/// Parses a `--clock` label (or the clock JSON object) into the clock request object.
pub fn parse(label: &str) -> Result<Value, String> {
    let label = label.trim();
    let tc = if label.starts_with('{') {
        serde_json::from_str::<TimeControl>(label)
            .map_err(|e| format!("clock JSON is invalid: {e}"))?
    } else {
        TimeControl::parse_label(label).map_err(|e| {
            format!("{e} (clocks: none, 5+3, delay:5m/3s, byoyomi:10m/5x30s, corr:3d)")
        })?
    };
    let tc = tc.validate().map_err(|e| e.to_string())?;
    serde_json::to_value(tc).map_err(|e| e.to_string())
}

/// A short human label for a clock object (request or document form): the canonical label
/// (`5+3`, `byoyomi:10m/5x30s`), `no clock` for none.
pub fn label(clock: &Value) -> String {
    match serde_json::from_value::<TimeControl>(clock.clone()) {
        Ok(TimeControl::None) => "no clock".into(),
        Ok(tc) => tc.label(),
        Err(_) => clock["kind"].as_str().unwrap_or("?").to_string(),
    }
}

/// Formats remaining time: `1:02:03`, `4:59`, `0:09.4` (tenths under 10 s), `3d 04h` for
/// long correspondence times.
pub fn format_ms(ms: i64) -> String {
    let ms = ms.max(0);
    if ms >= 86_400_000 {
        return format!("{}d {:02}h", ms / 86_400_000, (ms % 86_400_000) / 3_600_000);
    }
    let total_s = ms / 1000;
    let (h, m, s) = (total_s / 3600, (total_s % 3600) / 60, total_s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else if ms < 10_000 {
        format!("{m}:{s:02}.{}", (ms % 1000) / 100)
    } else {
        format!("{m}:{s:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_labels() {
        assert_eq!(parse("none").unwrap(), json!({"kind":"none"}));
        assert_eq!(
            parse("5+3").unwrap(),
            json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000})
        );
        assert_eq!(
            parse("0.5+0").unwrap(),
            json!({"kind":"fischer","initial_ms":30_000,"increment_ms":0})
        );
        assert_eq!(
            parse("byoyomi:10m/5x30s").unwrap(),
            json!({"kind":"byoyomi","initial_ms":600_000,"periods":5,"period_ms":30_000})
        );
        assert_eq!(
            parse("delay:5m/3s").unwrap(),
            json!({"kind":"delay","initial_ms":300_000,"delay_ms":3_000})
        );
        assert_eq!(
            parse("corr:3d").unwrap(),
            json!({"kind":"correspondence","days_per_turn":3})
        );
        assert_eq!(
            parse(r#"{"kind":"fischer","initial_ms":60000,"increment_ms":2000}"#).unwrap()
                ["initial_ms"],
            60_000
        );
        for bad in [
            "5",
            "byoyomi:10m",
            "corr:x",
            "5+3q",
            "weird:1",
            "-1+0",
            "0+0",
        ] {
            assert!(parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn labels_and_times() {
        assert_eq!(label(&parse("5+3").unwrap()), "5+3");
        assert_eq!(
            label(&parse("byoyomi:10m/5x30s").unwrap()),
            "byoyomi:10m/5x30s"
        );
        assert_eq!(label(&parse("corr:3d").unwrap()), "corr:3d");
        assert_eq!(label(&json!({"kind":"none"})), "no clock");
        assert_eq!(format_ms(299_000), "4:59");
        assert_eq!(format_ms(9_400), "0:09.4");
        assert_eq!(format_ms(3_723_000), "1:02:03");
        assert_eq!(format_ms(-5), "0:00.0");
        assert_eq!(format_ms(3 * 86_400_000 + 4 * 3_600_000), "3d 04h");
    }
}
