//! `stoa-load`: the project's load generator. It starts the release server (pinned to one
//! core, itself on the other), drives one scenario over real websockets on loopback, reads
//! the server's CPU and memory from /proc, stops by itself and prints a table.
//!
//! ```text
//! cargo run --release -p stoa-tests --bin stoa-load -- idle --conns 10000
//! cargo run --release -p stoa-tests --bin stoa-load -- fanout --spectators 5000
//! cargo run --release -p stoa-tests --bin stoa-load -- throughput --games 200
//! cargo run --release -p stoa-tests --bin stoa-load -- mixed --games 1000   # with Redis
//! cargo run --release -p stoa-tests --bin stoa-load -- all                   # all four
//! ```
//!
//! Figures: server CPU seconds per 1,000 moves, moves/s, p50/p99 move → opponent's diff,
//! p99 move → the last spectator's diff, bytes per move per recipient (the `game.diff`
//! frames' payload), RSS per idle connection. The generator shares the machine's cores
//! with the server: it is kept cheap (one runtime, prefix checks before any parsing).
// Denied everywhere but in `uring`, whose submissions are the one thing that needs it.
#![deny(unsafe_code)]

mod conn;
mod move_floor;
mod proc;
mod scenarios;
mod send_floor;
mod steer;
mod table;
mod uring;

use clap::{Parser, Subcommand};
use serde_json::Value;
use stoa_tests::redis::RedisServer;
use stoa_tests::{Server, LOOSE};

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Stoa's load generator: scenarios against a real server on loopback")]
struct Cli {
    /// Game kind played.
    #[arg(long, default_value = "unane", global = true)]
    kind: String,
    /// Game options (JSON).
    #[arg(long, default_value = r#"{"width":8,"height":7}"#, global = true)]
    options: String,
    /// The games' clock (JSON, as in `room.create`), e.g.
    /// `{"kind":"fischer","initial_ms":600000,"increment_ms":5000}`.
    #[arg(long, default_value = r#"{"kind":"none"}"#, global = true)]
    clock: String,
    /// CPU the server is pinned to.
    #[arg(long, default_value_t = 0, global = true)]
    cpu_server: usize,
    /// CPU the generator is pinned to.
    #[arg(long, default_value_t = 1, global = true)]
    cpu_load: usize,
    /// Do not pin (share both cores).
    #[arg(long, global = true)]
    no_pin: bool,
    /// Run the server over a private redis-server (AOF, appendfsync always).
    #[arg(long, global = true)]
    redis: bool,
    /// Run this many cluster nodes over one private Redis (`--cluster`; implies --redis).
    /// Spectators of `fanout` are spread over them; every node is pinned to the server CPU.
    #[arg(long, default_value_t = 1, global = true)]
    nodes: usize,
    /// Steer loopback's received packets to the generator's CPU (RPS on `lo`, root only;
    /// put back afterwards): the receiving sockets' TCP work, which a real network runs on
    /// the clients' machines, is then not charged to the server's `send`.
    #[arg(long, global = true)]
    steer_receive: bool,
    #[command(subcommand)]
    scenario: Scenario,
}

/// The scenarios.
#[derive(Subcommand, Debug, Clone)]
pub enum Scenario {
    /// N connections after hello, held idle: RSS per connection and idle CPU.
    Idle {
        /// Connections.
        #[arg(long, default_value_t = 10_000)]
        conns: usize,
        /// Seconds to hold them.
        #[arg(long, default_value_t = 10)]
        hold_s: u64,
    },
    /// G games of four connections (two players who made a move each, two spectators),
    /// held idle: server CPU and RSS per connection while nothing happens.
    IdleGames {
        /// Games.
        #[arg(long, default_value_t = 2_500)]
        games: usize,
        /// Seconds to hold them.
        #[arg(long, default_value_t = 10)]
        hold_s: u64,
    },
    /// One game, S spectators: move → last spectator.
    Fanout {
        /// Spectators.
        #[arg(long, default_value_t = 1_000)]
        spectators: usize,
        /// Moves played (one every `--interval-ms`).
        #[arg(long, default_value_t = 60)]
        moves: usize,
        /// Pause between moves, ms.
        #[arg(long, default_value_t = 100)]
        interval_ms: u64,
    },
    /// G games played as fast as the answers come, no spectators.
    Throughput {
        /// Concurrent games.
        #[arg(long, default_value_t = 200)]
        games: usize,
        /// Moves per round, at most (a game that ends stops).
        #[arg(long, default_value_t = 20_000)]
        moves: usize,
        /// Rounds of `games` games, one after the other on the same server.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Every scenario in turn at the sizes the targets are set for (idle 10,000; fanout
    /// 5,000; throughput 200 games; mixed 1,000 games with Redis).
    All,
    /// No server: the kernel's own cost of one small send on a loopback socket, to
    /// read the fan-out figures against (the sender pinned as the server is).
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
    /// No server: the kernel's own cost of a move's read and two writes on loopback, G
    /// games with a move outstanding each, the frames as large as the server's.
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
    /// G games, two players and two spectators each, one move per second per game.
    Mixed {
        /// Games.
        #[arg(long, default_value_t = 1_000)]
        games: usize,
        /// Seconds measured.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
    },
}

/// One scenario's results, printed as a table.
#[derive(Default, Debug)]
pub struct Report {
    /// (figure, value) rows.
    pub rows: Vec<(String, String)>,
}

impl Report {
    /// Adds a row.
    pub fn add(&mut self, name: &str, value: impl std::fmt::Display) {
        self.rows.push((name.to_string(), value.to_string()));
    }

    /// Adds a row with percentile `p` of sorted microseconds, in ms.
    pub fn add_ms(&mut self, name: &str, sorted_us: &[u64], p: f64) {
        self.add(name, format!("{:.2}", percentile_ms(sorted_us, p)));
    }
}

/// A percentile of sorted microseconds, in ms.
pub fn percentile_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted_us.len() as f64 - 1.0) * p).round() as usize;
    sorted_us[i] as f64 / 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    let options: Value = serde_json::from_str(&cli.options).expect("--options is JSON");
    let nofile = proc::raise_nofile();
    let _steering = cli.steer_receive.then(|| {
        steer::Steering::to_cpu(cli.cpu_load).unwrap_or_else(|e| {
            eprintln!("error: --steer-receive: {e}");
            std::process::exit(2);
        })
    });
    match cli.scenario {
        Scenario::SendFloor {
            conns,
            rounds,
            bytes,
            via,
        } => {
            let pins = (!cli.no_pin).then_some((cli.cpu_server, cli.cpu_load));
            let drops = proc::backlog_drops();
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
                proc::backlog_drops().saturating_sub(drops),
            );
            print_floor(&cli, "sender", "receivers", &report);
            return;
        }
        Scenario::SendFloorSink { ref addr, conns } => {
            send_floor::sink(addr, conns).await;
            return;
        }
        Scenario::MoveFloor {
            games,
            moves,
            mv,
            ok,
            diff,
        } => {
            let pins = (!cli.no_pin).then_some((cli.cpu_server, cli.cpu_load));
            let busy0 = pins.map(|p| proc::cpu_busy_seconds(p.1));
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
                    format!("{:.2}", proc::cpu_busy_seconds(load) - b0),
                );
            }
            print_floor(&cli, "\"server\"", "players", &report);
            return;
        }
        Scenario::MoveFloorPlayers {
            ref addr,
            games,
            moves_per_game,
            mv,
            ok,
            diff,
        } => {
            let sizes = move_floor::Sizes { mv, ok, diff };
            move_floor::players(addr, games, moves_per_game, sizes).await;
            return;
        }
        _ => {}
    }
    let scenarios = match cli.scenario.clone() {
        // Every scenario at its issue-sized defaults, each on a fresh server.
        Scenario::All => vec![
            Scenario::Idle {
                conns: 10_000,
                hold_s: 10,
            },
            Scenario::IdleGames {
                games: 2_500,
                hold_s: 10,
            },
            Scenario::Fanout {
                spectators: 5_000,
                moves: 40,
                interval_ms: 100,
            },
            Scenario::Throughput {
                games: 200,
                moves: 20_000,
                rounds: 5,
            },
            Scenario::Mixed {
                games: 1_000,
                seconds: 30,
            },
        ],
        one => vec![one],
    };
    for scenario in scenarios {
        run(&cli, &scenario, &options, nofile).await;
    }
}

/// Runs one scenario on a fresh server and prints its table.
async fn run(cli: &Cli, scenario: &Scenario, options: &Value, nofile: u64) {
    // Connections beyond the defaults: no per-IP or request limits in the way, every
    // pending frame of a big fan-out queued.
    let cluster = cli.nodes > 1;
    let redis = (cli.redis || cluster || matches!(scenario, Scenario::Mixed { .. }))
        .then(RedisServer::start_on_disk);
    let mut args: Vec<String> = match &redis {
        // The Redis flags come with the loose limits.
        Some(r) => r.server_args("load"),
        None => LOOSE.iter().map(|s| s.to_string()).collect(),
    };
    args.extend([
        "--outbound-queue".into(),
        "4096".into(),
        // Every generated connection comes from a few loopback addresses.
        "--max-connections-per-ip".into(),
        "100000".into(),
    ]);
    let mut servers = Vec::new();
    for i in 0..cli.nodes.max(1) {
        let mut node_args = args.clone();
        if cluster {
            node_args.extend(["--cluster".into(), "--node-id".into(), format!("node{i}")]);
        }
        let refs: Vec<&str> = node_args.iter().map(String::as_str).collect();
        // Started on its core, as an operator gives a server one core: the runtime then
        // sizes itself to it (one worker thread). Pinned only after the start, it would run
        // a worker per core of the machine taking turns on the one core, and measure their
        // hand-offs.
        let cpu = cli.cpu_server.to_string();
        servers.push(if cli.no_pin {
            Server::start_with(&refs)
        } else {
            Server::start_under(&["taskset", "-c", &cpu], &refs)
        });
    }
    let server = &servers[0];
    if !cli.no_pin {
        for s in &servers {
            proc::pin(s.pid(), cli.cpu_server);
        }
        proc::pin(std::process::id(), cli.cpu_load);
    }
    let ctx = scenarios::Ctx {
        addr: server.addr,
        pid: server.pid(),
        kind: cli.kind.clone(),
        options: options.clone(),
        clock: serde_json::from_str(&cli.clock).expect("--clock is JSON"),
        nodes: servers.iter().map(|s| (s.addr, s.pid())).collect(),
        load_cpu: (!cli.no_pin).then_some(cli.cpu_load),
    };
    let drops = proc::backlog_drops();
    let mut report = match scenario.clone() {
        Scenario::Idle { conns, hold_s } => scenarios::idle(&ctx, conns, hold_s).await,
        Scenario::IdleGames { games, hold_s } => scenarios::idle_games(&ctx, games, hold_s).await,
        Scenario::Fanout {
            spectators,
            moves,
            interval_ms,
        } => scenarios::fanout(&ctx, spectators, moves, interval_ms).await,
        Scenario::Throughput {
            games,
            moves,
            rounds,
        } => scenarios::throughput(&ctx, games, moves, rounds).await,
        Scenario::Mixed { games, seconds } => scenarios::mixed(&ctx, games, seconds).await,
        Scenario::All
        | Scenario::SendFloor { .. }
        | Scenario::SendFloorSink { .. }
        | Scenario::MoveFloor { .. }
        | Scenario::MoveFloorPlayers { .. } => unreachable_all(),
    };
    report.add(
        "packets dropped at a full backlog",
        proc::backlog_drops().saturating_sub(drops),
    );
    println!(
        "\n{:?} · {} {} · clock {} · store {} · server pinned to CPU {}, generator to CPU {}{}{} · open-file limit {nofile}",
        scenario,
        cli.kind,
        cli.options,
        cli.clock,
        match (cluster, redis.is_some()) {
            (true, _) => format!("{} cluster nodes over redis", cli.nodes),
            (false, true) => "redis (AOF, appendfsync always)".to_string(),
            (false, false) => "memory".to_string(),
        },
        cli.cpu_server,
        cli.cpu_load,
        if cli.no_pin { " (not pinned)" } else { "" },
        steered(cli),
    );
    print_report(&report);
    drop(servers);
    drop(redis);
}

/// The run's title notes receive steering, so a figure is never read without it.
fn steered(cli: &Cli) -> String {
    if cli.steer_receive {
        format!(" · loopback receive steered to CPU {}", cli.cpu_load)
    } else {
        String::new()
    }
}

/// Prints the title and table of a scenario without a server: which side ran on which CPU.
fn print_floor(cli: &Cli, server_side: &str, client_side: &str, report: &Report) {
    println!(
        "\n{:?} · no server · {server_side} pinned to CPU {}, {client_side} to CPU {}{}{}",
        cli.scenario,
        cli.cpu_server,
        cli.cpu_load,
        if cli.no_pin { " (not pinned)" } else { "" },
        steered(cli),
    );
    print_report(report);
}

/// Prints a report as a Markdown table.
fn print_report(report: &Report) {
    println!("| figure | value |\n|---|---|");
    for (k, v) in &report.rows {
        println!("| {k} | {v} |");
    }
}

/// `all` is expanded into the other scenarios before any runs; `send-floor` runs no server.
fn unreachable_all() -> Report {
    Report::default()
}
