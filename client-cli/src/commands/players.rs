//! `stoa player` and `stoa leaderboard`: a player's ratings and recent games, and a game
//! kind's best players — what the web client shows at `/p/<id>` and `/leaderboard/<kind>`,
//! asked over the websocket (`player`, `leaderboard`).

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, ServerMessage};

use super::{block_on, connect, resolved, Global};

/// Arguments of `stoa player`.
#[derive(Clone, Debug, Args)]
pub struct PlayerArgs {
    /// The player's id (yours when left out).
    id: Option<String>,
}

/// Arguments of `stoa leaderboard`.
#[derive(Clone, Debug, Args)]
pub struct LeaderboardArgs {
    /// The game kind: unane, staku, akron or akunur.
    kind: String,
}

/// Sends `msg`, returns its answer; an error is printed (`error <code>: <message>`).
async fn ask(global: &Global, msg: ClientMessage) -> Result<(ServerMessage, String), ExitCode> {
    let global = resolved(global)?;
    let (conn, me, _) = connect(&global).await?;
    match conn.request(msg).await {
        Ok(answer) => Ok((answer, me.id)),
        Err(e) => {
            eprintln!("error {}: {}", e.code(), e.message());
            Err(ExitCode::FAILURE)
        }
    }
}

impl PlayerArgs {
    /// Prints the player's name, a line per game kind, and the recent games.
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let msg = ClientMessage::Player {
                rid: None,
                player_id: self.id.clone(),
            };
            let (answer, _) = ask(global, msg).await?;
            let ServerMessage::Player { player, .. } = answer else {
                eprintln!("error: the server answered something else");
                return Err(ExitCode::FAILURE);
            };
            for line in page_lines(&player) {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

impl LeaderboardArgs {
    /// Prints one line per listed player, best first.
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let msg = ClientMessage::Leaderboard {
                rid: None,
                kind: self.kind.clone(),
            };
            let (answer, _) = ask(global, msg).await?;
            let ServerMessage::Leaderboard { kind, players, .. } = answer else {
                eprintln!("error: the server answered something else");
                return Err(ExitCode::FAILURE);
            };
            for line in board_lines(&kind, &players) {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

/// `ann (p123)`, `unane 1648 ±106, 17 rated games`, … then the recent games as `stoa
/// history` prints them. A provisional rating is marked `?`.
fn page_lines(p: &Value) -> Vec<String> {
    let id = p["id"].as_str().unwrap_or("?");
    let computer = if p["bot"] == true { " (computer)" } else { "" };
    let mut lines = vec![format!(
        "{}{computer} ({id})",
        p["name"].as_str().unwrap_or("?")
    )];
    lines.push("ratings (? marks a provisional one):".into());
    for kind in stoa_protocol::KINDS {
        let r = &p["ratings"][kind.id];
        if r.is_null() {
            continue;
        }
        let games = r["games"].as_u64().unwrap_or(0);
        lines.push(format!(
            "  {:<7} {}{} ±{}, {games} rated game{}",
            kind.id,
            r["rating"],
            if r["provisional"] == true { "?" } else { "" },
            r["deviation"],
            if games == 1 { "" } else { "s" }
        ));
    }
    let recent = p["recent"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if recent.is_empty() {
        lines.push("no finished games".into());
    } else {
        lines.push("recent games:".into());
        lines.extend(
            recent
                .iter()
                .map(|g| format!("  {}", super::history::line(g, id))),
        );
    }
    lines
}

/// `leaderboard unane`, then `  1. ann 1648 ±106, 17 rated games (p123)` per player.
fn board_lines(kind: &str, players: &[Value]) -> Vec<String> {
    let mut lines = vec![format!("leaderboard {kind}")];
    if players.is_empty() {
        lines.push(format!(
            "no established players in {kind} yet (a rating is listed once it is no longer provisional)"
        ));
    }
    for p in players {
        lines.push(format!(
            "{:>3}. {} {} ±{}, {} rated games ({})",
            p["rank"].as_u64().unwrap_or(0),
            p["name"].as_str().unwrap_or("?"),
            p["rating"],
            p["deviation"],
            p["games"],
            p["id"].as_str().unwrap_or("?")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_says_each_rating_and_marks_provisional_ones() {
        let fresh = json!({"rating":1500,"deviation":350,"provisional":true,"games":0});
        let page = json!({"id":"p1","name":"ann","bot":false,"ratings":{
            "unane":{"rating":1648,"deviation":106,"provisional":false,"games":17},
            "staku":{"rating":1338,"deviation":290,"provisional":true,"games":1},
            "akron":fresh,"akunur":fresh},"recent":[]});
        assert_eq!(
            page_lines(&page),
            [
                "ann (p1)",
                "ratings (? marks a provisional one):",
                "  unane   1648 ±106, 17 rated games",
                "  staku   1338? ±290, 1 rated game",
                "  akron   1500? ±350, 0 rated games",
                "  akunur  1500? ±350, 0 rated games",
                "no finished games",
            ]
        );
    }

    #[test]
    fn a_board_lists_players_best_first_or_says_it_is_empty() {
        let players =
            [json!({"rank":1,"id":"p1","name":"ann","rating":1648,"deviation":106,"games":17})];
        assert_eq!(
            board_lines("unane", &players),
            [
                "leaderboard unane",
                "  1. ann 1648 ±106, 17 rated games (p1)"
            ]
        );
        assert_eq!(
            board_lines("staku", &[]),
            [
                "leaderboard staku",
                "no established players in staku yet (a rating is listed once it is no longer provisional)"
            ]
        );
    }
}
