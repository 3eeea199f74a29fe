//! `stoa export <game-id>`: print a finished game's text record (tags, then the moves in
//! the game's notation), to keep, share, or replay with `stoa replay FILE` or
//! `stoa rules play <kind> --record FILE`.

use std::process::ExitCode;

use clap::Args;
use stoa_protocol::wire::{ClientMessage, ServerMessage};

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
    let msg = ClientMessage::GameRecord {
        rid: None,
        game_id: game_id.to_string(),
        code: code.map(String::from),
    };
    match conn.request(msg).await {
        Ok(ServerMessage::Record { text, .. }) => Ok(text),
        // No other answer to `game.record` exists: an empty record.
        Ok(_) => Ok(String::new()),
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
