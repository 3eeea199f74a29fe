//! `stoa rules …`: the offline rules tool. Its output format is an interface other tools and
//! tests depend on; change it only together with them.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};
use stoa_protocol::record::Record;
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
    /// A game record (`stoa export` writes one): its options and moves are applied, and
    /// `play` checks that they end the game as its Result and Reason tags say.
    #[arg(long, conflicts_with_all = ["moves", "position"])]
    record: Option<String>,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Print the start position string.
    Start {
        /// Game kind.
        kind: String,
        /// Options: a JSON object or key=value pairs separated by commas.
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
    /// Print the player's guide of a game: the board, moves, how to win, notation, options.
    Explain {
        /// Game kind: unane, staku, akron or akunur.
        kind: String,
    },
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
                record: None,
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
            if let Some(path) = &s.record {
                check_result(game.as_ref(), &read_record(path)?)?;
            }
            Ok(format!("{}\n", summary(game.as_ref(), &moves)))
        }
        RulesCommand::Explain { kind: k } => {
            let id = kind(&k.to_ascii_lowercase()).map_err(|e| e.to_string())?.id;
            stoa_protocol::guide(id)
                .map(String::from)
                .ok_or_else(|| format!("no guide for '{k}'"))
        }
    }
}

fn setup(s: &Setup) -> Result<Box<dyn AnyGame>, String> {
    setup_with_moves(s).map(|(game, _)| game)
}

fn read_record(path: &str) -> Result<Record, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    Record::parse(&text).map_err(|e| format!("{path}: {e}"))
}

/// The end a record claims must be the end its moves reach: a win or draw by rule exactly
/// as the rules decide it; any other end (resignation, agreement, time, abort, abandonment)
/// only while the rules have not ended the game.
fn check_result(game: &dyn AnyGame, record: &Record) -> Result<(), String> {
    let claimed = match (record.tag("Result"), record.tag("Reason")) {
        (Some(result), Some(reason)) => (result, reason),
        _ => return Ok(()),
    };
    match game.outcome() {
        Some(o) => {
            let result = o.winner.map_or("draw", |s| game.side_name(s));
            if claimed != (result, o.reason.as_str()) {
                return Err(format!(
                    "the record says {} by {}, but its moves end the game: {result} by {}",
                    claimed.0,
                    claimed.1,
                    o.reason.as_str()
                ));
            }
        }
        None => {
            if !matches!(
                claimed.1,
                "resign" | "agreement" | "timeout" | "aborted" | "abandoned"
            ) {
                return Err(format!(
                    "the record says {} by {}, but the game is not over after its moves",
                    claimed.0, claimed.1
                ));
            }
        }
    }
    Ok(())
}

/// Builds the game from kind, options and position, then applies `--moves`, returning the
/// canonical notation of each.
fn setup_with_moves(s: &Setup) -> Result<(Box<dyn AnyGame>, Vec<String>), String> {
    let kind = kind(&s.kind).map_err(|e| e.to_string())?;
    let record = s.record.as_deref().map(read_record).transpose()?;
    if let Some(r) = &record {
        let theirs = r.kind().map_err(|e| e.to_string())?;
        if theirs != kind.id {
            return Err(format!("the record is a game of {theirs}, not {}", kind.id));
        }
    }
    let options: Value = match &s.options {
        None => match record.as_ref().and_then(|r| r.tag("Options")) {
            Some(o) => serde_json::from_str(o).map_err(|e| format!("the record's Options: {e}"))?,
            None => Value::Null,
        },
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
    let listed: Vec<String> = match &record {
        Some(r) => r.moves.clone(),
        None => s
            .moves
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect(),
    };
    for (index, text) in listed.iter().enumerate() {
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
