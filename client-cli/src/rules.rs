//! `stoa rules …`: the offline rules tool. Its output format is an interface other tools and
//! tests depend on; change it only together with them.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};
use stoa_protocol::{kind, AnyGame, RulesError};

/// Arguments of `stoa rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

/// Where a rules command starts from: kind, options, position, moves.
#[derive(Debug, Args)]
struct Setup {
    /// Game kind: unane, staku, akron or akunur.
    kind: String,
    /// Options: a JSON object or key=value pairs separated by commas (e.g.
    /// `width=6,height=5`); omitted fields take their defaults.
    #[arg(long)]
    options: Option<String>,
    /// Start from this position string instead of the start position.
    #[arg(long)]
    position: Option<String>,
    /// Space-separated actions to apply first, in the game's notation. Values may start
    /// with `-` (Ūnane removals such as `-a4`).
    #[arg(long, allow_hyphen_values = true)]
    moves: Option<String>,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Print the start position string.
    Start {
        /// Game kind.
        kind: String,
        /// Options as a JSON object.
        #[arg(long)]
        options: Option<String>,
    },
    /// Print the legal actions of the resulting position, one per line, in byte order.
    Legal(Setup),
    /// Count action sequences of exactly DEPTH actions.
    Perft {
        #[command(flatten)]
        setup: Setup,
        /// Number of actions per sequence.
        depth: u32,
        /// Also print one `move count` line per legal action.
        #[arg(long)]
        divide: bool,
    },
    /// Apply moves and print the resulting game as one JSON object.
    Play(Setup),
}

/// Runs a rules command; errors print a clear message and exit with status 2.
pub fn run(args: RulesArgs) -> ExitCode {
    match execute(args.command) {
        Ok(output) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn execute(command: RulesCommand) -> Result<String, String> {
    match command {
        RulesCommand::Start { kind, options } => {
            let game = setup(&Setup {
                kind,
                options,
                position: None,
                moves: None,
            })?;
            Ok(format!("{}\n", game.position()))
        }
        RulesCommand::Legal(s) => {
            let game = setup(&s)?;
            Ok(game
                .legal_notations()
                .into_iter()
                .map(|m| m + "\n")
                .collect())
        }
        RulesCommand::Perft {
            setup: s,
            depth,
            divide,
        } => {
            let game = setup(&s)?;
            let mut out = String::new();
            if divide && depth > 0 {
                let mut lines = game.perft_divide(depth);
                lines.sort();
                let mut total = 0;
                for (notation, count) in lines {
                    total += count;
                    out.push_str(&format!("{notation} {count}\n"));
                }
                out.push_str(&format!("{total}\n"));
            } else {
                out.push_str(&format!("{}\n", game.perft(depth)));
            }
            Ok(out)
        }
        RulesCommand::Play(s) => {
            let (game, moves) = setup_with_moves(&s)?;
            Ok(format!("{}\n", summary(game.as_ref(), &moves)))
        }
    }
}

fn setup(s: &Setup) -> Result<Box<dyn AnyGame>, String> {
    setup_with_moves(s).map(|(game, _)| game)
}

/// Builds the game from kind, options and position, then applies `--moves`, returning the
/// canonical notation of each.
fn setup_with_moves(s: &Setup) -> Result<(Box<dyn AnyGame>, Vec<String>), String> {
    let kind = kind(&s.kind).map_err(|e| e.to_string())?;
    let options: Value = match &s.options {
        None => Value::Null,
        // The same forms as `host` and `play`: JSON, or key=value pairs.
        Some(text) => {
            crate::commands::parse_options(text).map_err(|e| format!("invalid options: {e}"))?
        }
    };
    let mut game = match &s.position {
        None => kind.start(&options),
        Some(position) => kind.from_position(&options, position),
    }
    .map_err(|e| e.to_string())?;
    let mut played = Vec::new();
    for (index, text) in s
        .moves
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .enumerate()
    {
        match game.play(text) {
            Ok(p) => played.push(p.notation),
            Err(e) => {
                let why = match e {
                    RulesError::GameOver => "the game is already over".to_string(),
                    other => other.to_string(),
                };
                return Err(format!("move {} ('{text}'): {why}", index + 1));
            }
        }
    }
    Ok((game, played))
}

/// The `play` output object.
fn summary(game: &dyn AnyGame, moves: &[String]) -> Value {
    let status = match game.outcome() {
        None => json!({"state": "playing", "winner": null, "reason": null}),
        Some(o) => json!({
            "state": "ended",
            "winner": o.winner.map(|s| game.side_name(s)),
            "reason": o.reason.as_str(),
        }),
    };
    json!({
        "position": game.position(),
        "to_act": game.to_act().map(|s| game.side_name(s)),
        "status": status,
        "moves": moves,
    })
}
