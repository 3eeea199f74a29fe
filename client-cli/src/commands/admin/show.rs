//! `stoa admin`'s readable output: one line per report, sanction, audit entry, game or room,
//! from the API's JSON (read field by field, so a newer server's extra fields are ignored).

use serde_json::Value;

use crate::present::utc_minute;

/// A time in ms since the epoch as `YYYY-MM-DD HH:MM` UTC, `-` when absent.
fn when(v: &Value) -> String {
    v.as_u64().map_or_else(|| "-".to_string(), utc_minute)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// `<id>  <time>  <reason>  <target> (<id>) by <reporter>  [open|closed: action]  "text"`.
pub fn report_line(r: &Value) -> String {
    let state = match &r["closed"] {
        Value::Null => "open".to_string(),
        c => format!("closed by {}: {}", text(&c["by"]), text(&c["action"])),
    };
    let mut line = format!(
        "{}  {}  {}  {} ({}) reported by {} ({})  [{state}]",
        text(&r["id"]),
        when(&r["created_ms"]),
        text(&r["reason"]),
        text(&r["target_name"]),
        text(&r["target"]),
        text(&r["reporter_name"]),
        text(&r["reporter"]),
    );
    if !text(&r["text"]).is_empty() {
        line.push_str(&format!("  \"{}\"", text(&r["text"])));
    }
    line
}

/// A report in full: its line, where, and the chat lines copied with it.
pub fn report_page(r: &Value) -> Vec<String> {
    let mut lines = vec![report_line(r)];
    if let Some(g) = r["game_id"].as_str() {
        lines.push(format!("  game {g}"));
    }
    if let Some(c) = r["room"].as_str() {
        lines.push(format!("  room {c}"));
    }
    for c in r["context"].as_array().into_iter().flatten() {
        let mark = if c["reported"] == true { ">" } else { " " };
        lines.push(format!(
            "  {mark} {}  {}: {}",
            when(&c["ts"]),
            text(&c["name"]),
            text(&c["text"])
        ));
    }
    lines
}

/// `<id>  <kind>  <player or network>  until <time>  by <operator>: <reason>  [undone]`.
pub fn sanction_line(s: &Value) -> String {
    let who = s["player"]
        .as_str()
        .or(s["network"].as_str())
        .unwrap_or("-");
    let until = match s["until_ms"].as_u64() {
        Some(ms) => format!("until {}", utc_minute(ms)),
        None if matches!(text(&s["kind"]), "mute" | "ban" | "address_ban") => {
            "for good".to_string()
        }
        None => String::new(),
    };
    let mut line = format!(
        "{}  {}  {who}  {until}  by {} at {}: {}",
        text(&s["id"]),
        text(&s["kind"]),
        text(&s["by"]),
        when(&s["at_ms"]),
        text(&s["reason"]),
    );
    if let Some(old) = s["old_name"].as_str() {
        line.push_str(&format!("  (was {old})"));
    }
    if let Some(u) = s["undone"].as_object() {
        line.push_str(&format!(
            "  [undone by {}: {}]",
            text(&u["by"]),
            text(&u["reason"])
        ));
    }
    line
}

/// `<time>  <operator>  <action>  <target>: <reason>  (<detail>)`.
pub fn audit_line(e: &Value) -> String {
    let mut line = format!(
        "{}  {}  {}  {}: {}",
        when(&e["at_ms"]),
        text(&e["by"]),
        text(&e["action"]),
        text(&e["target"]),
        text(&e["reason"]),
    );
    if !text(&e["detail"]).is_empty() {
        line.push_str(&format!("  ({})", text(&e["detail"])));
    }
    line
}

/// A player's page: who, standing, sanctions, reports about them, devices, recent games.
pub fn player_page(p: &Value) -> Vec<String> {
    let mut lines = vec![format!(
        "{} ({}){}{}  {}",
        text(&p["name"]),
        text(&p["id"]),
        if p["bot"] == true { " computer" } else { "" },
        p["account"]
            .as_str()
            .map(|a| format!(" account {a}"))
            .unwrap_or_default(),
        if p["online"] == true {
            "online"
        } else {
            "offline"
        },
    )];
    if p["muted"].is_object() {
        lines.push(format!("muted: {}", sanction_line(&p["muted"])));
    }
    if p["banned"].is_object() {
        lines.push(format!("banned: {}", sanction_line(&p["banned"])));
    }
    let list = |title: &str, v: &Value, f: fn(&Value) -> String, lines: &mut Vec<String>| {
        let items = v.as_array().cloned().unwrap_or_default();
        lines.push(format!("{title} ({}):", items.len()));
        lines.extend(items.iter().map(|i| format!("  {}", f(i))));
    };
    list("sanctions", &p["sanctions"], sanction_line, &mut lines);
    list("reports about them", &p["reports"], report_line, &mut lines);
    list("devices", &p["devices"], device_line, &mut lines);
    list("recent games", &p["recent"], game_line, &mut lines);
    lines
}

fn device_line(d: &Value) -> String {
    format!(
        "{}  {}  linked {}  last seen {}",
        text(&d["id"]),
        text(&d["label"]),
        when(&d["created_ms"]),
        when(&d["last_seen_ms"])
    )
}

/// A game: `<id>  <kind>  <players>  [rated] [private]  started <time>`.
pub fn game_line(g: &Value) -> String {
    let players: Vec<String> = match &g["players"] {
        Value::Array(a) => a
            .iter()
            .map(|p| format!("{} ({})", text(&p["name"]), text(&p["id"])))
            .collect(),
        Value::Object(o) => o
            .iter()
            .map(|(side, p)| format!("{side} {}", text(&p["name"])))
            .collect(),
        _ => Vec::new(),
    };
    let mut line = format!(
        "{}  {}  {}",
        text(&g["id"]),
        text(&g["kind"]),
        players.join(" vs ")
    );
    if g["rated"] == true {
        line.push_str("  rated");
    }
    if let Some(v) = g["visibility"].as_str() {
        line.push_str(&format!("  {v}"));
    }
    if let Some(ms) = g["created_ms"].as_u64() {
        line.push_str(&format!("  started {}", utc_minute(ms)));
    }
    line
}

/// A waiting room: `<code>  <kind>  host <player id>  <visibility>`.
pub fn room_line(r: &Value) -> String {
    let host = text(&r["host"]);
    format!(
        "{}  {}  host {host}  {}",
        text(&r["code"]),
        text(&r["kind"]),
        text(&r["visibility"])
    )
}
