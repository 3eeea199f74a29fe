//! `stoa`: the thin reference client for the Stoa game server, and offline rules tools.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod rules;

/// Stoa reference client.
#[derive(Debug, Parser)]
#[command(
    name = "stoa",
    version,
    about = "Stoa: play Ūnane, Staku, Akron and Akunur"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Offline rules tools: start positions, legal actions, perft, playing out move lists.
    Rules(rules::RulesArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Rules(args) => rules::run(args),
    }
}
