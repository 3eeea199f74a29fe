//! `stoa-floors`: what the kernel alone charges on this machine for the socket work a Stoa
//! server does, with no server at all. A research tool beside the load generator
//! (`stoa-load`): its figures are floors to read the load generator's against, not
//! measurements of Stoa.
//!
//! ```text
//! cargo run --release -p stoa-tests --bin stoa-floors -- send-floor --conns 2000   # one loopback send
//! cargo run --release -p stoa-tests --bin stoa-floors -- send-floor --via uring    # a round per system call
//! cargo run --release -p stoa-tests --bin stoa-floors -- move-floor --games 200    # a move's read and two writes
//! ```
//!
//! Why apart from `stoa-load`: an operator sizing a deployment runs the scenarios; these
//! floors answer a research question (how much of a figure any server on this kernel must
//! pay, and whether io_uring or receive steering would change it), and need what an
//! operator's tool should not (an io_uring, root for `--steer-receive`).
// Denied everywhere but in `uring`, whose submissions are the one thing that needs it.
#![deny(unsafe_code)]

mod move_floor;
mod send_floor;
mod uring;

use clap::{Parser, Subcommand};
use stoa_tests::measure::steer::Steering;
use stoa_tests::measure::{self, Report};

/// Command line.
#[derive(Parser, Debug)]
#[command(
    about = "The kernel's own cost of Stoa's socket work on loopback, with no server: floors to read stoa-load's figures against"
)]
struct Cli {
    /// CPU the sending side (where a server would run) is pinned to.
    #[arg(long, default_value_t = 0, global = true)]
    cpu_server: usize,
    /// CPU the receiving side (where the load generator would run) is pinned to.
    #[arg(long, default_value_t = 1, global = true)]
    cpu_load: usize,
    /// Do not pin (share both cores).
    #[arg(long, global = true)]
    no_pin: bool,
    /// Steer loopback's received packets to the receiving side's CPU (RPS on `lo`, root
    /// only; put back afterwards), as `stoa-load --steer-receive` does.
    #[arg(long, global = true)]
    steer_receive: bool,
    #[command(subcommand)]
    command: Command,
}

/// The floors, each a subcommand.
#[derive(Subcommand, Debug, Clone)]
enum Command {
    /// The kernel's own cost of one small send on a loopback socket, to read the fan-out
    /// figures against (the sender pinned as the server is).
    SendFloor {
        /// Sockets written to.
        #[arg(long, default_value_t = 2_000)]
        conns: usize,
        /// Rounds of one send to every socket, 100 ms apart.
        #[arg(long, default_value_t = 50)]
        rounds: usize,
        /// Bytes per send (about a diff frame).
        #[arg(long, default_value_t = 500)]
        bytes: usize,
        /// How the sends reach the kernel: `write` (one system call each, as the server
        /// does) or a round at a time through io_uring.
        #[arg(long, value_enum, default_value_t = send_floor::Via::Write)]
        via: send_floor::Via,
    },
    /// The kernel's own cost of a move's read and two writes on loopback, G games with a
    /// move outstanding each, the frames as large as the server's.
    MoveFloor {
        /// Concurrent games.
        #[arg(long, default_value_t = 200)]
        games: usize,
        /// Moves in all.
        #[arg(long, default_value_t = 20_000)]
        moves: u64,
        /// Bytes of a `game.move` frame.
        #[arg(long, default_value_t = 80)]
        mv: usize,
        /// Bytes of the mover's `ok` frame.
        #[arg(long, default_value_t = 40)]
        ok: usize,
        /// Bytes of a diff frame.
        #[arg(long, default_value_t = 560)]
        diff: usize,
    },
    /// The players of `move-floor` (run by it).
    #[command(hide = true)]
    MoveFloorPlayers {
        /// The "server"'s address.
        #[arg(long)]
        addr: String,
        /// Games.
        #[arg(long)]
        games: usize,
        /// Moves each game plays.
        #[arg(long)]
        moves_per_game: u64,
        /// Bytes of a `game.move` frame.
        #[arg(long)]
        mv: usize,
        /// Bytes of the mover's `ok` frame.
        #[arg(long)]
        ok: usize,
        /// Bytes of a diff frame.
        #[arg(long)]
        diff: usize,
    },
    /// The receiving side of `send-floor` (run by it).
    #[command(hide = true)]
    SendFloorSink {
        /// The sender's address.
        #[arg(long)]
        addr: String,
        /// Sockets to open.
        #[arg(long)]
        conns: usize,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    measure::raise_nofile();
    let _steering = cli.steer_receive.then(|| {
        Steering::to_cpu(cli.cpu_load).unwrap_or_else(|e| {
            eprintln!("error: --steer-receive: {e}");
            std::process::exit(2);
        })
    });
    let pins = (!cli.no_pin).then_some((cli.cpu_server, cli.cpu_load));
    match cli.command {
        Command::SendFloor {
            conns,
            rounds,
            bytes,
            via,
        } => {
            let drops = measure::backlog_drops();
            let mut report = send_floor::send_floor(
                conns,
                rounds,
                bytes,
                via,
                pins.map(|p| p.0),
                pins.map(|p| p.1),
            );
            report.add(
                "packets dropped at a full backlog",
                measure::backlog_drops().saturating_sub(drops),
            );
            print_floor(&cli, "sender", "receivers", &report);
        }
        Command::SendFloorSink { ref addr, conns } => send_floor::sink(addr, conns).await,
        Command::MoveFloor {
            games,
            moves,
            mv,
            ok,
            diff,
        } => {
            let busy0 = pins.map(|p| measure::cpu_busy_seconds(p.1));
            let mut report = move_floor::move_floor(
                games,
                moves,
                move_floor::Sizes { mv, ok, diff },
                pins.map(|p| p.0),
                pins.map(|p| p.1),
            );
            if let (Some(b0), Some((_, load))) = (busy0, pins) {
                report.add(
                    "players' CPU busy, s (whole run, set-up included)",
                    format!("{:.2}", measure::cpu_busy_seconds(load) - b0),
                );
            }
            print_floor(&cli, "\"server\"", "players", &report);
        }
        Command::MoveFloorPlayers {
            ref addr,
            games,
            moves_per_game,
            mv,
            ok,
            diff,
        } => {
            let sizes = move_floor::Sizes { mv, ok, diff };
            move_floor::players(addr, games, moves_per_game, sizes).await;
        }
    }
}

/// Prints the title and table of a floor: which side ran on which CPU, and whether the
/// receive was steered, so a figure is never read without them.
fn print_floor(cli: &Cli, server_side: &str, client_side: &str, report: &Report) {
    println!(
        "\n{:?} · no server · {server_side} pinned to CPU {}, {client_side} to CPU {}{}{}",
        cli.command,
        cli.cpu_server,
        cli.cpu_load,
        if cli.no_pin { " (not pinned)" } else { "" },
        if cli.steer_receive {
            format!(" · loopback receive steered to CPU {}", cli.cpu_load)
        } else {
            String::new()
        },
    );
    report.print();
}
