//! `--clock` labels (`5+3`, `none`, `byoyomi:10m/5x30s`, `delay:5m/2s`, `corr:3d`) turned into
//! PROTOCOL.md's clock request object, and clock times formatted for people.
//!
//! Why labels: people think of time controls as "5+3" (minutes plus seconds per move, as on
//! every chess site), not as millisecond JSON; scripts can still pass the exact object as
//! JSON (`--clock '{"kind":"fischer",…}'`).

use serde_json::{json, Value};

/// Parses a duration with an optional unit (`h`, `m`, `s`, `ms`, `d`); a bare number takes
/// `default_unit_ms`. Decimals are allowed (`0.5` minutes).
fn duration_ms(text: &str, default_unit_ms: f64) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let unit_ms = match unit {
        "" => default_unit_ms,
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        other => return Err(format!("unknown time unit '{other}' in '{text}'")),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (e.g. 5m, 30s, 1.5)"))?;
    if !n.is_finite() || n < 0.0 {
        return Err(format!("'{text}' is not a duration"));
    }
    Ok((n * unit_ms).round() as u64)
}

const MIN: f64 = 60_000.0;
const SEC: f64 = 1_000.0;

/// Parses a `--clock` label into the clock request object.
pub fn parse(label: &str) -> Result<Value, String> {
    let label = label.trim();
    if label.starts_with('{') {
        let v: Value =
            serde_json::from_str(label).map_err(|e| format!("clock JSON is invalid: {e}"))?;
        if v["kind"].as_str().is_none() {
            return Err("clock JSON needs a \"kind\"".into());
        }
        return Ok(v);
    }
    let lower = label.to_ascii_lowercase();
    let (kind, rest) = match lower.split_once(':') {
        Some((k, r)) => (k.trim().to_string(), r.trim().to_string()),
        None if lower == "none" || lower == "unlimited" || lower == "-" => {
            return Ok(json!({"kind": "none"}))
        }
        None => ("fischer".to_string(), lower.clone()),
    };
    match kind.as_str() {
        "none" => Ok(json!({"kind": "none"})),
        "fischer" => {
            let (initial, inc) = rest.split_once('+').ok_or_else(|| {
                format!("'{label}': a Fischer clock is MINUTES+SECONDS, e.g. 5+3")
            })?;
            Ok(json!({
                "kind": "fischer",
                "initial_ms": duration_ms(initial, MIN)?,
                "increment_ms": duration_ms(inc, SEC)?,
            }))
        }
        "delay" => {
            let (initial, delay) = rest
                .split_once('/')
                .or_else(|| rest.split_once('+'))
                .ok_or_else(|| {
                    format!("'{label}': a delay clock is delay:MAIN/DELAY, e.g. delay:5m/3s")
                })?;
            Ok(json!({
                "kind": "delay",
                "initial_ms": duration_ms(initial, MIN)?,
                "delay_ms": duration_ms(delay, SEC)?,
            }))
        }
        "byoyomi" | "byo-yomi" | "byo" => {
            let bad = || {
                format!("'{label}': a byo-yomi clock is byoyomi:MAIN/PERIODSxPERIOD, e.g. byoyomi:10m/5x30s")
            };
            let (initial, periods) = rest.split_once('/').ok_or_else(bad)?;
            let (count, period) = periods.split_once('x').ok_or_else(bad)?;
            let count: u32 = count.trim().parse().map_err(|_| bad())?;
            Ok(json!({
                "kind": "byoyomi",
                "initial_ms": duration_ms(initial, MIN)?,
                "periods": count,
                "period_ms": duration_ms(period, SEC)?,
            }))
        }
        "corr" | "correspondence" => {
            let days = rest.trim_end_matches('d').trim();
            let days: u32 = days.parse().map_err(|_| {
                format!("'{label}': a correspondence clock is corr:DAYSd, e.g. corr:3d")
            })?;
            Ok(json!({"kind": "correspondence", "days_per_turn": days}))
        }
        other => Err(format!(
            "unknown clock kind '{other}' (none, 5+3, delay:5m/3s, byoyomi:10m/5x30s, corr:3d)"
        )),
    }
}

fn short(ms: u64) -> String {
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        format!("{ms}ms")
    }
}

/// A short human label for a clock object (request or document form).
pub fn label(clock: &Value) -> String {
    let ms = |k: &str| clock[k].as_u64().unwrap_or(0);
    match clock["kind"].as_str().unwrap_or("none") {
        "none" => "no clock".into(),
        "fischer" => {
            let initial = ms("initial_ms");
            let minutes = if initial % 60_000 == 0 {
                (initial / 60_000).to_string()
            } else {
                format!("{:.1}", initial as f64 / MIN)
            };
            format!("{minutes}+{}", ms("increment_ms") / 1_000)
        }
        "delay" => format!(
            "delay {}/{}",
            short(ms("initial_ms")),
            short(ms("delay_ms"))
        ),
        "byoyomi" => format!(
            "byo-yomi {}/{}x{}",
            short(ms("initial_ms")),
            clock["periods"].as_u64().unwrap_or(0),
            short(ms("period_ms"))
        ),
        "correspondence" => format!("{} days/turn", clock["days_per_turn"].as_u64().unwrap_or(0)),
        other => other.to_string(),
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
            parse("fischer:90s+500ms").unwrap(),
            json!({"kind":"fischer","initial_ms":90_000,"increment_ms":500})
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
            parse(r#"{"kind":"fischer","initial_ms":1,"increment_ms":2}"#).unwrap()["initial_ms"],
            1
        );
        for bad in ["5", "byoyomi:10m", "corr:x", "5+3q", "weird:1", "-1+0"] {
            assert!(parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn labels_and_times() {
        assert_eq!(label(&parse("5+3").unwrap()), "5+3");
        assert_eq!(
            label(&parse("byoyomi:10m/5x30s").unwrap()),
            "byo-yomi 10m/5x30s"
        );
        assert_eq!(label(&json!({"kind":"none"})), "no clock");
        assert_eq!(format_ms(299_000), "4:59");
        assert_eq!(format_ms(9_400), "0:09.4");
        assert_eq!(format_ms(3_723_000), "1:02:03");
        assert_eq!(format_ms(-5), "0:00.0");
        assert_eq!(format_ms(3 * 86_400_000 + 4 * 3_600_000), "3d 04h");
    }
}
