//! An arena in words: its settings, stage and countdown, the standings, the podium, its
//! players and games.

use serde_json::Value;

use super::lobby::kind_with_options;
use super::{clean, count};
use crate::clock_spec;

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
