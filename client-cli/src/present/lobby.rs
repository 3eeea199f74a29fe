//! The lobby in words: rooms to join, games to watch, arenas, and the queues.

use serde_json::Value;

use super::arena::arena_countdown;
use super::clean;
use crate::clock_spec;

/// One entry of the lobby list, something to watch or join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LobbyEntry {
    /// `game` (watch it) or `room` (join it).
    pub what: &'static str,
    /// Game id or room code.
    pub key: String,
    /// A line for a person.
    pub text: String,
}

fn players_text(players: &Value) -> String {
    match players {
        Value::Object(m) => m
            .iter()
            .map(|(side, p)| {
                let name = p["name"].as_str().or(p.as_str()).unwrap_or("?");
                let bot = if p["bot"] == true { " (computer)" } else { "" };
                format!("{side} {name}{bot}")
            })
            .collect::<Vec<_>>()
            .join(" vs "),
        _ => String::new(),
    }
}

/// The clock of a lobby entry as the client writes it (`5+3`): rooms and queues carry the
/// clock object, games its kind plus the object as `time_control`.
fn clock_of(entry: &Value) -> String {
    match (&entry["clock"], &entry["time_control"]) {
        (_, tc @ Value::Object(_)) | (tc @ Value::Object(_), _) => clock_spec::label(tc),
        (Value::String(s), _) => s.clone(),
        _ => String::new(),
    }
}

/// The options of a game that differ from its defaults, as `key=value` pairs (the form
/// `--options` takes), with a leading space; empty for a default game.
pub fn options_text(kind: &str, options: &Value) -> String {
    let Some(given) = options.as_object() else {
        return String::new();
    };
    // A field is at its default when leaving it out normalises to the same options (some
    // defaults depend on other fields, such as Akron's pieces on its size).
    let engine = stoa_protocol::kind(kind).ok();
    let normal = |o: &Value| engine.and_then(|k| k.validate_options(o).ok());
    let full = normal(options);
    let at_default = |key: &str| {
        let mut without = given.clone();
        without.remove(key);
        full.is_some() && normal(&Value::Object(without)) == full
    };
    let pairs: Vec<String> = given
        .iter()
        .filter(|(k, v)| !v.is_null() && !at_default(k))
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!(" {}", pairs.join(","))
    }
}

/// `kind options`, e.g. `unane width=6,height=5`.
pub(super) fn kind_with_options(entry: &Value) -> String {
    let kind = entry["kind"].as_str().unwrap_or("?");
    format!("{kind}{}", options_text(kind, &entry["options"]))
}

/// The lobby document as a list: waiting rooms first, then live games, then public arenas
/// (with their countdown at server time `now`, ms).
pub fn lobby_entries(doc: &Value, now: i64) -> Vec<LobbyEntry> {
    let mut out = Vec::new();
    if let Some(rooms) = doc["rooms"].as_object() {
        for (code, r) in rooms {
            let host = r["host"]["name"].as_str().unwrap_or("?");
            out.push(LobbyEntry {
                what: "room",
                key: code.clone(),
                text: format!(
                    "room {code} {} {} by {host}{}",
                    kind_with_options(r),
                    clock_of(r),
                    if r["rated"].as_bool() == Some(true) {
                        " rated"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    if let Some(games) = doc["games"].as_object() {
        for (id, g) in games {
            out.push(LobbyEntry {
                what: "game",
                key: id.clone(),
                text: format!(
                    "game {id} {} {} {} · {} spectators",
                    kind_with_options(g),
                    clock_of(g),
                    players_text(&g["players"]),
                    g["spectators"].as_u64().unwrap_or(0)
                ),
            });
        }
    }
    if let Some(arenas) = doc["arenas"].as_object() {
        for (id, a) in arenas {
            let players = a["players"].as_u64().unwrap_or(0);
            out.push(LobbyEntry {
                what: "arena",
                key: id.clone(),
                text: format!(
                    "arena {id} {} · {} {} {} · {} · {players} player{}",
                    clean(a["name"].as_str().unwrap_or("?")),
                    kind_with_options(a),
                    clock_spec::label(&a["clock"]),
                    if a["rated"] == true {
                        "rated"
                    } else {
                        "casual"
                    },
                    arena_countdown(a, now),
                    if players == 1 { "" } else { "s" },
                ),
            });
        }
    }
    out
}

/// The lobby's summary line: players online and queue counts.
pub fn lobby_summary(doc: &Value) -> String {
    let mut s = format!("lobby: {} online", doc["online"].as_u64().unwrap_or(0));
    if let Some(q) = doc["queues"].as_object() {
        let waiting: Vec<String> = q
            .iter()
            .filter_map(|(label, v)| {
                let n = v["waiting"].as_u64().or_else(|| v.as_u64()).unwrap_or(0);
                let what = if v["kind"].is_string() {
                    format!(
                        "{} {}{}",
                        kind_with_options(v),
                        clock_of(v),
                        if v["rated"] == true { " rated" } else { "" }
                    )
                } else {
                    label.clone()
                };
                (n > 0).then(|| format!("{what}: {n}"))
            })
            .collect();
        if !waiting.is_empty() {
            s.push_str(&format!("; in queues: {}", waiting.join(", ")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lobby_lists_rooms_and_games() {
        let doc = json!({
            "rooms": {"ABC": {"kind":"unane","clock":{"kind":"fischer","initial_ms":300000,"increment_ms":3000},"rated":false,"host":{"id":"p","name":"Ann"}}},
            "games": {"g9": {"kind":"akron","clock":"fischer","players":{"vert":{"name":"A"},"horz":{"name":"B"}},"spectators":2,
                             "time_control":{"kind":"fischer","initial_ms":600000,"increment_ms":5000},
                             "options":{"size":7}}},
            "queues": {"staku {} {\"kind\":\"none\"} casual": {"kind":"staku","options":{},"clock":{"kind":"none"},"rated":false,"waiting":1}},
            "online": 3
        });
        let e = lobby_entries(&doc, 0);
        assert_eq!(e[0].text, "room ABC unane 5+3 by Ann");
        assert_eq!(e[1].key, "g9");
        assert!(
            e[1].text.contains("vert A") && e[1].text.contains("horz B"),
            "{}",
            e[1].text
        );
        assert!(
            e[1].text.starts_with("game g9 akron size=7 10+5 "),
            "{}",
            e[1].text
        );
        assert_eq!(
            lobby_summary(&doc),
            "lobby: 3 online; in queues: staku no clock: 1"
        );
        assert_eq!(
            options_text("unane", &json!({"width":6,"height":7})),
            " width=6"
        );
        assert_eq!(options_text("unane", &json!({"width":8,"height":7})), "");
        // Arenas come last, with their countdown at the given server time.
        let arenas = json!({"arenas": {
            "a1": {"name":"Friday <b>","kind":"staku","options":{},"rated":true,
                   "clock":{"kind":"fischer","initial_ms":180000,"increment_ms":2000},
                   "status":"scheduled","starts_at":70_000,"ends_at":1_870_000,"players":1},
            "a2": {"name":"Night","kind":"unane","options":{"width":4,"height":3},"rated":false,
                   "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0},
                   "status":"running","starts_at":0,"ends_at":100_000,"players":12}}});
        let e = lobby_entries(&arenas, 10_000);
        assert_eq!((e[0].what, e[0].key.as_str()), ("arena", "a1"));
        assert_eq!(
            e[0].text,
            "arena a1 Friday <b> · staku 3+2 rated · starts in 1:00 · 1 player"
        );
        assert_eq!(
            e[1].text,
            "arena a2 Night · unane width=4,height=3 15s+0 casual · running, ends in 1:30 · 12 players"
        );
        // Akron's pieces follow its size by default.
        assert_eq!(
            options_text("akron", &json!({"size":7,"pieces":24,"nodelay":false})),
            " size=7"
        );
    }
}
