//! `stoa-load`: the project's load generator, for whoever sizes or checks a deployment.
//! It starts the release server (pinned to one core, itself on the other), drives one
//! scenario over real websockets on loopback, reads the server's CPU and memory from /proc,
//! stops by itself and prints a table.
//!
//! ```text
//! cargo run --release -p stoa-tests --bin stoa-load -- idle --conns 10000
//! cargo run --release -p stoa-tests --bin stoa-load -- idle-games --games 2500
//! cargo run --release -p stoa-tests --bin stoa-load -- fanout --spectators 5000
//! cargo run --release -p stoa-tests --bin stoa-load -- throughput --games 200
//! cargo run --release -p stoa-tests --bin stoa-load -- mixed --games 1000   # with Redis
//! cargo run --release -p stoa-tests --bin stoa-load -- all                   # every one
//! ```
//!
//! Figures: server CPU per move, moves/s, p50/p99 move → opponent's diff, p99 move → the
//! last spectator's diff, bytes per move per recipient (the `game.diff` frames' payload),
//! RSS per idle connection. The generator shares the machine's cores with the server: it
//! is kept cheap (one runtime, prefix checks before any parsing). What the kernel alone
//! charges for the same socket work, with no server at all, is `stoa-floors`'s to measure.
#![forbid(unsafe_code)]

mod conn;
mod scenarios;
mod table;

use clap::{Parser, Subcommand};
use serde_json::Value;
use stoa_tests::measure::steer::Steering;
use stoa_tests::measure::{self, Report};
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
    /// G games, two players and two spectators each, one move per second per game.
    Mixed {
        /// Games.
        #[arg(long, default_value_t = 1_000)]
        games: usize,
        /// Seconds measured.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
    },
    /// Every scenario in turn at the sizes the targets are set for (idle 10,000; fanout
    /// 5,000; throughput 200 games; mixed 1,000 games with Redis).
    All,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    let options: Value = serde_json::from_str(&cli.options).expect("--options is JSON");
    let nofile = measure::raise_nofile();
    let _steering = cli.steer_receive.then(|| {
        Steering::to_cpu(cli.cpu_load).unwrap_or_else(|e| {
            eprintln!("error: --steer-receive: {e}");
            std::process::exit(2);
        })
    });
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
            measure::pin(s.pid(), cli.cpu_server);
        }
        measure::pin(std::process::id(), cli.cpu_load);
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
    let drops = measure::backlog_drops();
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
        Scenario::All => unreachable_all(),
    };
    report.add(
        "packets dropped at a full backlog",
        measure::backlog_drops().saturating_sub(drops),
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
    report.print();
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

/// `all` is expanded into the other scenarios before any runs.
fn unreachable_all() -> Report {
    Report::default()
}
