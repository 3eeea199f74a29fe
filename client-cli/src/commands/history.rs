//! `stoa history`: your finished games, newest first, a page at a time.

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use stoa_protocol::record::utc;
use stoa_protocol::wire::{ClientMessage, ServerMessage};

use super::{block_on, connect, resolved, Global};
use crate::clock_spec;
use crate::document::{outcome_text, Status};
use crate::present::{options_text, rating_change};

/// Arguments of `stoa history`.
#[derive(Clone, Debug, Args)]
pub struct HistoryArgs {
    /// Only games that ended before this time (ms since the epoch; the previous page's
    /// last line gives it).
    #[arg(long)]
    before: Option<u64>,
    /// Games per page (1-100).
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    limit: u64,
    /// Another player's public games (by player id) instead of your own.
    #[arg(long)]
    player: Option<String>,
}

impl HistoryArgs {
    /// Prints one line per game, then how to get the next page.
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let global = resolved(global)?;
            let (conn, me, _) = connect(&global).await?;
            let msg = ClientMessage::History {
                rid: None,
                player_id: self.player.clone(),
                before: self.before,
                limit: Some(self.limit),
            };
            let (games, next) = match conn.request(msg).await {
                Ok(ServerMessage::History {
                    games, next_before, ..
                }) => (games, next_before),
                // No other answer to `history` exists: nothing to list.
                Ok(_) => (Vec::new(), None),
                Err(e) => {
                    eprintln!("error {}: {}", e.code(), e.message());
                    return Err(ExitCode::FAILURE);
                }
            };
            if games.is_empty() && next.is_none() {
                println!("no finished games");
            }
            let whose = self.player.clone().unwrap_or(me.id);
            for g in &games {
                println!("{}", line(g, &whose));
            }
            if let Some(next) = next {
                println!("more: {}", self.next_page(next));
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

impl HistoryArgs {
    /// The command that prints the page after this one: the same player and page size.
    fn next_page(&self, before: u64) -> String {
        let mut cmd = format!("stoa history --before {before}");
        if self.limit != DEFAULT_LIMIT {
            cmd.push_str(&format!(" --limit {}", self.limit));
        }
        if let Some(p) = &self.player {
            cmd.push_str(&format!(" --player {p}"));
        }
        cmd
    }
}

/// Games per page unless `--limit` says otherwise.
const DEFAULT_LIMIT: u64 = 20;

/// `2026-11-24 15:03 g123 unane width=6 5+3 rated black Ann vs white Bob: black wins by
/// resign (won) rating 1500 -> 1512 (+12)`; unrated games say neither `rated` nor a rating.
pub(super) fn line(g: &Value, player: &str) -> String {
    let kind = g["kind"].as_str().unwrap_or("?");
    let sides: Vec<String> = stoa_protocol::kind(kind)
        .map(|k| k.side_names.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    let players: Vec<String> = sides
        .iter()
        .map(|s| format!("{s} {}", g["players"][s]["name"].as_str().unwrap_or("?")))
        .collect();
    let status = Status {
        ended: true,
        winner: g["status"]["winner"].as_str().map(String::from),
        reason: g["status"]["reason"].as_str().map(String::from),
    };
    let mine = sides
        .iter()
        .find(|s| g["players"][s.as_str()]["id"] == player);
    let verdict = match (&status.winner, mine) {
        (Some(w), Some(m)) if w == m => " (won)",
        (Some(_), Some(_)) => " (lost)",
        _ => "",
    };
    let when = utc(g["ended_ms"].as_u64().unwrap_or(0));
    let rated = g["rated"] == true;
    // The player's rating before (the document's, rounded) and after a rated game.
    let change = mine
        .filter(|_| rated)
        .and_then(|side| {
            let before = g["players"][side.as_str()]["rating"].as_f64()?;
            let after = g["ratings_after"][side.as_str()].as_f64()?;
            Some(rating_change(before, after))
        })
        .map(|c| format!(" {c}"))
        .unwrap_or_default();
    format!(
        "{} {} {}{} {}{} {}: {}{verdict}{change}",
        when[..16].replace('T', " "),
        g["id"].as_str().unwrap_or("?"),
        kind,
        options_text(kind, &g["options"]),
        clock_spec::label(&g["clock"]),
        if rated { " rated" } else { "" },
        players.join(" vs "),
        outcome_text(&status)
    )
}
