//! `stoa`: the thin reference client for the Stoa game server, and offline rules tools.
//!
//! It speaks only protocol/docs/PROTOCOL.md: play (quick pairing), host/join (rooms), watch,
//! lobby, arena tournaments; a terminal UI for people and a plain line mode for scripts.
//! Everything it shows comes from the server's documents; it needs no rules knowledge of its
//! own.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod board;
mod bot;
mod clock_spec;
mod commands;
mod connection;
mod document;
mod identity;
mod plain;
mod present;
mod rules;
mod session;
mod tls;
mod tui;

/// Stoa reference client.
#[derive(Debug, Parser)]
#[command(
    name = "stoa",
    version,
    about = "Stoa: play Ūnane, Staku, Akron and Akunur",
    after_help = "Server address: --server or STOA_SERVER (default ws://127.0.0.1:7878/ws; \
                  several addresses of one deployment, comma-separated, are tried in order). \
                  Identity tokens, one per deployment: ~/.config/stoa/ ($STOA_CONFIG_DIR or \
                  $XDG_CONFIG_HOME/stoa)."
)]
struct Cli {
    #[command(flatten)]
    global: commands::Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Join the quick-pairing queue and play.
    Play(commands::play::PlayArgs),
    /// Create a room, print its code to share, wait for the opponent, then play.
    Host(commands::host::HostArgs),
    /// Join a room by its code and play.
    Join(commands::join::JoinArgs),
    /// Watch a game by id, or a private game by its room code.
    Watch(commands::watch::WatchArgs),
    /// Live list of public rooms and games; pick one to watch or join.
    Lobby,
    /// An arena tournament by id or private code: live standings; join, pause, and play
    /// the games it pairs.
    Arena(commands::arena::ArenaArgs),
    /// Create an arena tournament, print its id (or private code) to share, and follow it.
    HostArena(commands::host_arena::HostArenaArgs),
    /// Offline rules tools: start positions, legal actions, perft, playing out move lists,
    /// each game's guide.
    Rules(rules::RulesArgs),
    /// Print a finished game's text record (to keep, share or replay).
    Export(commands::export::ExportArgs),
    /// Your finished games, newest first.
    History(commands::history::HistoryArgs),
    /// A player's ratings in every game and recent games (yours by default).
    Player(commands::players::PlayerArgs),
    /// A game's leaderboard: the best established players, best first.
    Leaderboard(commands::players::LeaderboardArgs),
    /// Show a one-time code to use this identity on another device; with a code from
    /// another device, become that player here.
    Link(commands::devices::LinkArgs),
    /// The devices holding your identity (`--revoke ID` to remove one).
    Devices(commands::devices::DevicesArgs),
    /// Sign in to your account (claimed with `stoa account claim`) from this device.
    Login(commands::account::LoginArgs),
    /// Your account: whether it is claimed; `claim`, `password`, `logout`.
    Account(commands::account::AccountArgs),
    /// The identities this terminal keeps for a server (who it is, who it was); `--use`
    /// switches back to a previous one.
    Identities(commands::account::IdentitiesArgs),
    /// Step through a finished game (by id, or a record file) on the terminal board.
    Replay(commands::replay::ReplayArgs),
    /// A computer opponent: queues, hosts or joins, and plays within its clock.
    Bot(bot::BotArgs),
    /// A finished game's engine review (per ply: win probability, marks, the engine's
    /// move); `--serve` runs an analysis worker.
    Analyse(bot::analyse::AnalyseArgs),
    /// Learn a game step by step: each step's goal on a board, your move, a hint when it
    /// misses (offline: the rules engines check every move).
    Learn(commands::learn::LearnArgs),
    /// The operators' console: reports, players, sanctions, live games, the audit log
    /// (an operator's token: --token or STOA_ADMIN_TOKEN).
    Admin(commands::admin::AdminArgs),
    /// Bot-vs-bot matches (levels against each other or a random mover), offline.
    Tournament(bot::tournament::TournamentArgs),
}

fn main() -> ExitCode {
    // `stoa rules --help` lists only what acts offline (issue 47, item 10).
    let matches = commands::with_offline_help(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let start = match cli.command {
        Command::Rules(args) => return rules::run(args),
        Command::Learn(args) => return args.run(),
        Command::Export(args) => return args.run(&cli.global),
        Command::History(args) => return args.run(&cli.global),
        Command::Player(args) => return args.run(&cli.global),
        Command::Leaderboard(args) => return args.run(&cli.global),
        Command::Replay(args) => return args.run(&cli.global),
        Command::Link(args) => return args.run(&cli.global),
        Command::Devices(args) => return args.run(&cli.global),
        Command::Login(args) => return args.run(&cli.global),
        Command::Account(args) => return args.run(&cli.global),
        Command::Identities(args) => return args.run(&cli.global),
        Command::Bot(args) => return args.run(&cli.global),
        Command::Analyse(args) => return args.run(&cli.global),
        Command::Tournament(args) => return args.run(),
        Command::Admin(args) => return args.run(&cli.global),
        Command::Play(args) => args.start(),
        Command::Host(args) => args.start(),
        Command::Join(args) => Ok(args.start()),
        Command::Watch(args) => Ok(args.start()),
        Command::Lobby => Ok(commands::lobby::start()),
        Command::Arena(args) => Ok(args.start()),
        Command::HostArena(args) => args.start(),
    };
    match start {
        Ok(start) => commands::run(&cli.global, start),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
