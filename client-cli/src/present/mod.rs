//! Words about a game document shared by plain mode and the terminal UI: player lines with
//! clocks, the status sentence, the move list, the lobby list, an arena's standings.
//!
//! Why shared: the two front-ends must say the same thing; plain mode's lines are also what
//! scripts and tests read, so their format is stable.

mod arena;
mod lobby;

use crate::board::{self, Drawing, Sides};
use crate::clock_spec;
use crate::document::{cells_in_move, ending_sentence, GameDoc};

pub use arena::*;
pub use lobby::*;

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

/// A name from a document as shown: control characters (refused by the server anyway)
/// become `?`, so a name can never steer the terminal.
pub(super) fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `n` and the noun, singular for one: `1 point`, `3 points`.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
}
