//! Words about a game document shared by plain mode and the terminal UI: player lines with
//! clocks, the status sentence, the move list, the lobby list, an arena's standings.
//!
//! Why shared: the two front-ends must say the same thing; plain mode's lines are also what
//! scripts and tests read, so their format is stable.

use serde_json::Value;

use crate::board::{self, Drawing, Sides};
use crate::clock_spec;
use crate::document::{cells_in_move, ending_sentence, GameDoc};

/// The board drawing of a document, last move highlighted.
pub fn drawing(g: GameDoc) -> Drawing {
    let last = g
        .moves()
        .last()
        .map(|m| cells_in_move(m))
        .unwrap_or_default();
    let state = board::drawable(g.kind(), g.options(), g.state());
    board::draw(g.kind(), &state, &Sides(g.sides()), &last)
}

/// Clock text for one side: `4:59`, `0:09.4`, byo-yomi `0:00 +3×30s` then `byo 0:27 (2)`;
/// `-` without a clock.
pub fn clock_text(g: GameDoc, side: &str, server_now: i64) -> String {
    let Some(r) = g.clock_reading(side, server_now) else {
        return "-".into();
    };
    match (r.period_ms, r.periods_left) {
        (Some(p), Some(n)) => format!("byo {} ({n})", clock_spec::format_ms(p)),
        (None, Some(n)) => format!("{} +{n}p", clock_spec::format_ms(r.main_ms)),
        _ => clock_spec::format_ms(r.main_ms),
    }
}

/// When the side to act must make its first action (the game aborts otherwise), as text.
pub fn first_action_text(g: GameDoc, server_now: i64) -> Option<String> {
    let deadline = g.clock()["first_action_deadline"].as_i64()?;
    if g.status().ended {
        return None;
    }
    let side = g.to_act()?;
    Some(format!(
        "{side} must make a first move within {}",
        clock_spec::format_ms(deadline - server_now)
    ))
}

/// `rating 1500 -> 1512 (+12)`: a rating before and after a game, rounded.
pub fn rating_change(before: f64, after: f64) -> String {
    let (b, a) = (before.round() as i64, after.round() as i64);
    format!("rating {b} -> {a} ({:+})", a - b)
}

/// A device as a line: its label, when it was linked and last seen (UTC, to the minute),
/// and whether it is this one: `terminal  linked 2026-11-26 08:00  last seen … (this device)`.
pub fn device_text(d: &stoa_protocol::wire::DeviceInfo) -> String {
    format!(
        "{}  linked {}  last seen {}{}",
        d.label,
        utc_minute(d.created_ms),
        utc_minute(d.last_seen_ms),
        if d.current { "  (this device)" } else { "" }
    )
}

/// `YYYY-MM-DD HH:MM` UTC of ms since the epoch: the record's RFC 3339 time to the minute.
pub fn utc_minute(ms: u64) -> String {
    stoa_protocol::record::utc(ms)[..16].replacen('T', " ", 1)
}

/// One line per side: `white  Ann (1500)  4:59  [you] [to act] [offline]`.
pub fn player_line(g: GameDoc, side: &str, me: Option<&str>, server_now: i64) -> String {
    let p = g.player(side);
    let mut s = format!("{side} {}", g.player_name(side));
    if p["bot"] == true {
        s.push_str(" (computer)");
    }
    if let Some(r) = p["rating"].as_f64() {
        s.push_str(&format!(" ({})", r.round()));
    } else if let Some(r) = p["rating"]["rating"].as_f64() {
        s.push_str(&format!(" ({})", r.round()));
    }
    s.push_str(&format!(" clock {}", clock_text(g, side, server_now)));
    if me == Some(side) {
        s.push_str(" (you)");
    }
    if g.to_act() == Some(side) {
        s.push_str(" to act");
    }
    if g.online(side) == Some(false) {
        s.push_str(" offline");
    }
    s
}

/// The one-sentence status: whose turn, draw offer, or the result.
pub fn status_sentence(g: GameDoc, me: Option<&str>) -> String {
    let status = g.status();
    if status.ended {
        let verdict = match (&status.winner, me) {
            (Some(w), Some(m)) if w == m => " (you won)",
            (Some(_), Some(_)) => " (you lost)",
            _ => "",
        };
        return format!("{}{verdict}", ending_sentence(&status, &g.sides()));
    }
    let mut s = match (g.to_act(), me) {
        (Some(side), Some(m)) if side == m => format!("your turn ({side})"),
        (Some(side), _) => format!("{side} to act"),
        (None, _) => "waiting".into(),
    };
    if let Some(offer) = g.draw_offer() {
        s.push_str(&format!("; draw offered by {offer}"));
    }
    s
}

/// The game's heading: kind, id, clock, rated, spectators.
pub fn heading(g: GameDoc) -> String {
    format!(
        "{} game {} · {} · {} · {} spectator{}",
        g.kind(),
        g.id(),
        clock_spec::label(g.clock()),
        if g.rated() { "rated" } else { "casual" },
        g.spectators(),
        if g.spectators() == 1 { "" } else { "s" }
    )
}

/// Numbered moves: `1. b2-c3`.
pub fn numbered_moves(g: GameDoc) -> Vec<String> {
    g.moves()
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{}. {m}", i + 1))
        .collect()
}

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
fn kind_with_options(entry: &Value) -> String {
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

/// A name from a document as shown: control characters (refused by the server anyway)
/// become `?`, so a name can never steer the terminal.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// An arena's settings in one line: `unane width=4,height=3 · 15s+0 · casual · berserk
/// allowed · 2 players` (and the code of a private arena).
pub fn arena_heading(doc: &Value) -> String {
    let players = doc["players"].as_array().map_or(0, Vec::len);
    let mut parts = vec![
        kind_with_options(doc),
        clock_spec::label(&doc["clock"]),
        if doc["rated"] == true {
            "rated"
        } else {
            "casual"
        }
        .to_string(),
    ];
    if doc["berserk"] == true {
        parts.push("berserk allowed".into());
    }
    parts.push(format!(
        "{players} player{}",
        if players == 1 { "" } else { "s" }
    ));
    if let Some(code) = doc["code"].as_str() {
        parts.push(format!("code {}", clean(code)));
    }
    parts.join(" · ")
}

/// Whether any game of the arena is still being played.
fn arena_games_running(doc: &Value) -> bool {
    doc["games"]
        .as_object()
        .is_some_and(|g| g.values().any(|g| g["status"] == "playing"))
}

/// Where the arena stands, without a time: `scheduled`, `running`, `finishing` (over, its
/// last games being played out), `finished` or `cancelled`. Plain mode says the countdown
/// again when this changes.
pub fn arena_stage(doc: &Value) -> &'static str {
    match doc["status"].as_str() {
        Some("scheduled") => "scheduled",
        Some("running") => "running",
        Some("cancelled") => "cancelled",
        _ if arena_games_running(doc) => "finishing",
        _ => "finished",
    }
}

/// The countdown to the start or to the end at server time `now` (ms), or how it ended.
pub fn arena_countdown(doc: &Value, now: i64) -> String {
    let at = |key: &str| doc[key].as_i64().unwrap_or(0);
    match arena_stage(doc) {
        "scheduled" => format!("starts in {}", clock_spec::format_ms(at("starts_at") - now)),
        "running" => format!(
            "running, ends in {}",
            clock_spec::format_ms(at("ends_at") - now)
        ),
        "cancelled" => "cancelled by its creator".into(),
        "finishing" => "over: the last games are being played out".into(),
        _ => "finished: these are the final standings".into(),
    }
}

/// Where the player `me` stands in the arena, in words.
pub fn arena_me_line(doc: &Value, me: &str) -> String {
    let open = matches!(doc["status"].as_str(), Some("scheduled" | "running"));
    let mine = doc["players"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["id"] == me));
    match mine {
        _ if !open => "the arena is closed: no more games".into(),
        None => "not joined: type join to enter the arena".into(),
        Some(p) if p["paused"] == true => "paused: you are not paired until you type join".into(),
        Some(_) if doc["status"] == "scheduled" => "joined: pairing starts at the start".into(),
        Some(p) if p["playing"].is_string() => "in the pool, playing a game".into(),
        Some(_) => "in the pool: you are paired as soon as an opponent is free".into(),
    }
}

/// The standings as a table, best first: rank, name, score, performance (`-` before any
/// game), and the sheet (each game's points, oldest first; 🔥 when on fire: the next win
/// counts double), then who is you, paused (only while the arena is open: pausing means
/// nothing once it is over), playing or a computer.
pub fn standings_lines(doc: &Value, me: &str) -> Vec<String> {
    let open = matches!(doc["status"].as_str(), Some("scheduled" | "running"));
    let players = doc["players"].as_array().cloned().unwrap_or_default();
    if players.is_empty() {
        return vec!["nobody has joined yet".into()];
    }
    let names: Vec<String> = players
        .iter()
        .map(|p| clean(p["name"].as_str().unwrap_or("?")))
        .collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut out = vec![format!(
        "{:>3}  {:<w$}  {:>5}  {:>4}  sheet",
        "#", "player", "score", "perf"
    )];
    for (i, (p, name)) in players.iter().zip(&names).enumerate() {
        let perf = if p["games"].as_u64().unwrap_or(0) > 0 {
            p["performance"].to_string()
        } else {
            "-".into()
        };
        let mut flags = String::new();
        if p["fire"] == true {
            flags.push_str(" 🔥");
        }
        if p["id"] == me {
            flags.push_str(" (you)");
        }
        if p["bot"] == true {
            flags.push_str(" (computer)");
        }
        if open && p["paused"] == true {
            flags.push_str(" (paused)");
        }
        if p["playing"].is_string() {
            flags.push_str(" (playing)");
        }
        let sheet = clean(p["sheet"].as_str().unwrap_or(""));
        let rest = format!("{sheet}{flags}");
        let row = format!(
            "{:>3}  {:<w$}  {:>5}  {:>4}  {}",
            i + 1,
            name,
            p["score"].as_u64().unwrap_or(0),
            perf,
            rest.trim_start()
        );
        out.push(row.trim_end().to_string());
    }
    out
}

/// `n` and the noun, singular for one: `1 point`, `3 points`.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The podium of a finished arena (its last game played out): the winner, then second and
/// third, each with their score; empty before that. Nobody wins an arena where nobody
/// scored a game.
pub fn podium_lines(doc: &Value) -> Vec<String> {
    if arena_stage(doc) != "finished" {
        return Vec::new();
    }
    let players = doc["players"].as_array().cloned().unwrap_or_default();
    if !players.iter().any(|p| p["games"].as_u64().unwrap_or(0) > 0) {
        return vec!["no game was played: nobody wins".into()];
    }
    players
        .iter()
        .filter(|p| p["games"].as_u64().unwrap_or(0) > 0)
        .take(3)
        .zip(["winner", "2nd", "3rd"])
        .map(|(p, place)| {
            format!(
                "{place}: {} with {}",
                clean(p["name"].as_str().unwrap_or("?")),
                count(p["score"].as_u64().unwrap_or(0), "point")
            )
        })
        .collect()
}

/// The arena's players in a few words each, best first: `1 ann 9 🔥 (you)`: rank, name,
/// score, the fire mark, and who is you, paused (while the arena is open) or playing.
pub fn arena_players_lines(doc: &Value, me: &str) -> Vec<String> {
    let open = matches!(doc["status"].as_str(), Some("scheduled" | "running"));
    let players = doc["players"].as_array().cloned().unwrap_or_default();
    if players.is_empty() {
        return vec!["nobody has joined yet".into()];
    }
    players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut l = format!(
                "{:>2} {} {}",
                i + 1,
                clean(p["name"].as_str().unwrap_or("?")),
                p["score"].as_u64().unwrap_or(0)
            );
            if p["fire"] == true {
                l.push_str(" 🔥");
            }
            if p["id"] == me {
                l.push_str(" (you)");
            }
            if open && p["paused"] == true {
                l.push_str(" (paused)");
            }
            if p["playing"].is_string() {
                l.push_str(" (playing)");
            }
            l
        })
        .collect()
}

/// An arena player's name by id, cleaned for the terminal (`?` for one not listed).
fn arena_player_name(doc: &Value, id: &str) -> String {
    doc["players"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["id"] == id))
        .and_then(|p| p["name"].as_str())
        .map(clean)
        .unwrap_or_else(|| "?".into())
}

/// The side names of an arena's game kind, first mover first.
fn arena_sides(doc: &Value) -> Vec<&'static str> {
    doc["kind"]
        .as_str()
        .and_then(|k| stoa_protocol::kind(k).ok())
        .map(|k| k.side_names.to_vec())
        .unwrap_or_default()
}

/// The arena's games, newest first, in words: `ann vs bob: playing`, `ann beat bob`,
/// `ann drew with bob`, `ann vs bob: aborted`.
pub fn arena_results_lines(doc: &Value) -> Vec<String> {
    let name = |id: &str| arena_player_name(doc, id);
    let sides = arena_sides(doc);
    let mut games: Vec<(&String, &Value)> = doc["games"]
        .as_object()
        .map(|g| g.iter().collect())
        .unwrap_or_default();
    games.sort_by(|a, b| {
        let at = |g: &Value| g["started_at"].as_u64().unwrap_or(0);
        (at(b.1), b.0).cmp(&(at(a.1), a.0))
    });
    games
        .into_iter()
        .filter_map(|(_, g)| {
            let ids: Vec<&str> = sides.iter().filter_map(|s| g[*s].as_str()).collect();
            let [a, b] = ids[..] else { return None };
            Some(match (g["status"].as_str(), g["winner"].as_str()) {
                (Some("playing"), _) => format!("{} vs {}: playing", name(a), name(b)),
                (Some("aborted"), _) => format!("{} vs {}: aborted", name(a), name(b)),
                (_, Some(w)) => {
                    let l = if w == a { b } else { a };
                    format!("{} beat {}", name(w), name(l))
                }
                _ => format!("{} drew with {}", name(a), name(b)),
            })
        })
        .collect()
}

/// The arena's games in progress: `ann (white) vs bob (black)`, the top game marked.
pub fn arena_games_lines(doc: &Value) -> Vec<String> {
    let name = |id: &str| arena_player_name(doc, id);
    let sides = arena_sides(doc);
    let mut out = Vec::new();
    if let Some(games) = doc["games"].as_object() {
        for (id, g) in games.iter().filter(|(_, g)| g["status"] == "playing") {
            let who: Vec<String> = sides
                .iter()
                .filter_map(|s| g[*s].as_str().map(|p| format!("{} ({s})", name(p))))
                .collect();
            let top = if doc["top_game"] == id.as_str() {
                " · top game"
            } else {
                ""
            };
            out.push(format!("{id} {}{top}", who.join(" vs ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_about_a_game() {
        let doc = json!({
            "id": "g1", "kind": "staku",
            "clock": {"kind":"fischer","initial_ms":300000,"increment_ms":3000,
                      "remaining_ms":{"white":299000,"black":300000},"running":"white","since":1000},
            "players": {"white":{"id":"a","name":"Ann","rating":null},"black":{"id":"b","name":"Bob","rating":1500.4}},
            "to_act": "white", "moves": ["b2-c3"],
            "status": {"state":"playing","winner":null,"reason":null},
            "draw_offer": "black"
        });
        let crowd = json!({"t":"game.crowd","game_id":"g1","spectators":1,
                           "online":{"white":true,"black":false}});
        let g = GameDoc::with_crowd(&doc, &crowd);
        assert_eq!(
            player_line(g, "white", Some("white"), 2000),
            "white Ann clock 4:58 (you) to act"
        );
        assert_eq!(
            player_line(g, "black", Some("white"), 2000),
            "black Bob (1500) clock 5:00 offline"
        );
        assert_eq!(
            status_sentence(g, Some("white")),
            "your turn (white); draw offered by black"
        );
        assert_eq!(
            status_sentence(g, None),
            "white to act; draw offered by black"
        );
        assert_eq!(heading(g), "staku game g1 · 5+3 · casual · 1 spectator");
        assert_eq!(numbered_moves(g), vec!["1. b2-c3"]);
    }

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

    #[test]
    fn an_arena_in_words() {
        let doc = json!({
            "id":"a1","name":"Friday","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0},"rated":false,
            "berserk":true,"status":"running","starts_at":1000,"ends_at":61000,
            "players":[
                {"id":"p1","name":"ann","score":9,"sheet":"2 2 5","fire":true,"games":3,
                 "performance":2000,"paused":false,"playing":"g2"},
                {"id":"p2","name":"bob","score":0,"sheet":"","fire":false,"games":0,
                 "performance":0,"paused":true,"playing":null}],
            "games":{"g2":{"white":"p1","black":"p3","status":"playing"}},
            "top_game":"g2"
        });
        assert_eq!(
            arena_heading(&doc),
            "unane width=4,height=3 · 15s+0 · casual · berserk allowed · 2 players"
        );
        assert_eq!(arena_countdown(&doc, 1000), "running, ends in 1:00");
        assert_eq!(
            standings_lines(&doc, "p2"),
            [
                "  #  player  score  perf  sheet",
                "  1  ann         9  2000  2 2 5 🔥 (playing)",
                "  2  bob         0     -  (you) (paused)",
            ]
        );
        assert_eq!(
            arena_games_lines(&doc),
            ["g2 ? (black) vs ann (white) · top game"]
        );
        assert_eq!(
            arena_me_line(&doc, "p2"),
            "paused: you are not paired until you type join"
        );
        assert!(podium_lines(&doc).is_empty(), "not over");
    }

    #[test]
    fn a_finished_arena_names_its_podium_and_nobody_paused() {
        let doc = json!({
            "id":"a1","name":"Friday","kind":"unane","status":"finished",
            "players":[
                {"id":"p1","name":"ann","score":9,"sheet":"2 2 5","fire":true,"games":3,
                 "performance":2000,"paused":true,"playing":null},
                {"id":"p2","name":"bob","score":1,"sheet":"1","fire":false,"games":1,
                 "performance":1500,"paused":true,"playing":null},
                {"id":"p3","name":"cy","score":0,"sheet":"0 0","fire":false,"games":2,
                 "performance":1000,"paused":false,"playing":null},
                {"id":"p4","name":"dee","score":0,"sheet":"0","fire":false,"games":1,
                 "performance":1000,"paused":false,"playing":null}],
            "games":{
                "g1":{"white":"p1","black":"p2","status":"ended","winner":null,"started_at":1},
                "g2":{"white":"p3","black":"p1","status":"ended","winner":"p1","started_at":2},
                "g3":{"white":"p4","black":"p2","status":"aborted","winner":null,"started_at":3}}
        });
        assert_eq!(
            podium_lines(&doc),
            [
                "winner: ann with 9 points",
                "2nd: bob with 1 point",
                "3rd: cy with 0 points"
            ]
        );
        assert!(
            standings_lines(&doc, "p2")
                .iter()
                .all(|l| !l.contains("(paused)")),
            "{:?}",
            standings_lines(&doc, "p2")
        );
        assert_eq!(
            arena_results_lines(&doc),
            ["bob vs dee: aborted", "ann beat cy", "bob drew with ann"]
        );
        assert_eq!(
            arena_players_lines(&doc, "p2"),
            [" 1 ann 9 🔥", " 2 bob 1 (you)", " 3 cy 0", " 4 dee 0"]
        );
        let empty = json!({"status":"finished","players":[{"id":"p1","name":"ann","games":0}]});
        assert_eq!(podium_lines(&empty), ["no game was played: nobody wins"]);
    }
}
