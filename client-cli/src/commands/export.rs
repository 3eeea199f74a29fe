//! `stoa export <game-id>`: print a finished game's text record (tags, then the moves in
//! the game's notation), to keep, share, or replay with `stoa replay FILE` or
//! `stoa rules play <kind> --record FILE`.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{block_on, connect, resolved, Global};

/// Arguments of `stoa export`.
#[derive(Clone, Debug, Args)]
pub struct ExportArgs {
    /// A finished game's id.
    game_id: String,
    /// The room code of a private game you did not play.
    #[arg(long)]
    code: Option<String>,
}

impl ExportArgs {
    /// Fetches and prints the record.
    pub fn run(&self, global: &Global) -> ExitCode {
        match block_on(fetch_record(
            global,
            &self.game_id,
            self.code.as_deref(),
            "export",
        )) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(code) => code,
        }
    }
}

/// The text record of a finished game, as the stored player (errors are reported here,
/// saying what could not be done: `verb` is `export` or `replay`).
pub async fn fetch_record(
    global: &Global,
    game_id: &str,
    code: Option<&str>,
    verb: &str,
) -> Result<String, ExitCode> {
    let global = resolved(global)?;
    let (conn, _, _) = connect(&global).await?;
    let mut msg = json!({"t": "game.record", "game_id": game_id});
    if let Some(c) = code {
        msg["code"] = json!(c);
    }
    match conn.request(msg).await {
        Ok(answer) => Ok(answer["text"].as_str().unwrap_or_default().to_string()),
        Err(e) => {
            eprintln!(
                "error {}: cannot {verb} '{game_id}': {}",
                e.code(),
                e.message()
            );
            Err(ExitCode::FAILURE)
        }
    }
}
