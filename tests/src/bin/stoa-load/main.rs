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
//! cargo run --release -p stoa-tests --bin stoa-load -- --server-cpus 0-3 --generators 4 \
//!     --load-cpus 4-7 --redis --redis-cpu 8 throughput --games 800             # several cores
//! cargo run --release -p stoa-tests --bin stoa-load -- --nodes 4 --server-cpus 0-7 \
//!     --load-cpus 8-11 --redis-cluster 3 --redis-cpu 12 throughput --games 800  # Redis Cluster
//! ```
//!
//! One generator process on one core saturates long before a server on several cores
//! does: `--generators N` runs N generator processes (each on its own CPU, see
//! `workers`) and sums their figures, `--server-cpus` gives the server (or each cluster
//! node) cores of its own, `--redis-cpu` pins Redis, whose CPU and commands per move are
//! reported whenever there is one.
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
mod workers;

use std::net::SocketAddr;

use clap::{Parser, Subcommand};
use serde_json::Value;
use stoa_tests::measure::cpus::CpuList;
use stoa_tests::measure::redis_info::RedisProbe;
use stoa_tests::measure::steer::Steering;
use stoa_tests::measure::{self, Report};
use stoa_tests::redis::{RedisCluster, RedisServer};
use stoa_tests::{Server, LOOSE};

use scenarios::{Ctx, Role};
use workers::{Link, Share, Workers};

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
    /// CPU the server is pinned to (when `--server-cpus` is not given).
    #[arg(long, default_value_t = 0, global = true)]
    cpu_server: usize,
    /// CPU the generator is pinned to (one generator, when `--load-cpus` is not given).
    #[arg(long, default_value_t = 1, global = true)]
    cpu_load: usize,
    /// Pin nothing but what a CPU list given names (`--server-cpus`, `--load-cpus`,
    /// `--redis-cpu`): without them everything shares every core.
    #[arg(long, global = true)]
    no_pin: bool,
    /// CPUs of the server, in `taskset -c` syntax (`0-3`, `0,2`): it is started under
    /// `taskset -c LIST` with `--threads` one per CPU. With `--nodes N`, node i gets the
    /// i-th block of |LIST|/N consecutive CPUs of the list (what does not divide evenly is
    /// left unused), so every node has cores of its own. Default: `--cpu-server`, one CPU
    /// shared by every node.
    #[arg(long, global = true, value_parser = CpuList::parse)]
    server_cpus: Option<CpuList>,
    /// Generator processes (`throughput`, `mixed`, `fanout`; the idle scenarios always run
    /// in one): this program runs itself N times, each child on its own CPU with 1/N of
    /// the games or spectators, and prints one table of their figures merged. The servers
    /// are started once, by the parent, which measures them (and makes `fanout`'s moves).
    #[arg(long, default_value_t = 1, global = true)]
    generators: usize,
    /// CPUs of the generators (`taskset -c` syntax): generator i gets the i-th, taking
    /// turns when there are fewer CPUs than generators. Default: `--cpu-load` for one
    /// generator; for several, the online CPUs the server and Redis do not have.
    #[arg(long, global = true, value_parser = CpuList::parse)]
    load_cpus: Option<CpuList>,
    /// The generators run at the idle scheduling priority (`SCHED_IDLE`, set with `chrt`
    /// once the servers run): they take a core only when no server thread wants it, as if
    /// they were on machines of their own. For latencies on the wire (`fanout`), which the
    /// kernel stamps as the server sends, whenever the generator reads: on a machine with
    /// fewer cores than the server and its generators need, the server then has every core
    /// while it writes. CPU figures of the generators are meaningless with it.
    #[arg(long, global = true)]
    load_idle: bool,
    /// CPU the private Redis is pinned to (default: not pinned); with `--redis-cluster M`,
    /// primary i is pinned to this CPU + i.
    #[arg(long, global = true)]
    redis_cpu: Option<usize>,
    /// Run the server over a private redis-server (AOF, appendfsync always). Redis's CPU
    /// and commands per move are then reported.
    #[arg(long, global = true)]
    redis: bool,
    /// Run over a private Redis Cluster of this many primaries (no replicas; AOF,
    /// appendfsync always) instead of one Redis (the servers get `--redis-cluster`;
    /// implies --redis): the next step when one Redis saturates. Redis's CPU and commands
    /// are summed over the primaries.
    #[arg(long, global = true)]
    redis_cluster: Option<usize>,
    /// Run this many cluster nodes over one private Redis (`--cluster`; implies --redis).
    /// `fanout`'s spectators are spread over them, and the games of `throughput` and
    /// `mixed` (game g on node g mod N); see `--server-cpus` for their cores.
    #[arg(long, default_value_t = 1, global = true)]
    nodes: usize,
    /// Steer loopback's received packets to the generator's CPU (RPS on `lo`, root only;
    /// put back afterwards): the receiving sockets' TCP work, which a real network runs on
    /// the clients' machines, is then not charged to the server's `send`.
    #[arg(long, global = true)]
    steer_receive: bool,
    /// A child generator: its share `i/N` (set by the parent of `--generators N`).
    #[arg(long, global = true, hide = true, value_parser = Share::parse)]
    worker: Option<Share>,
    /// A child generator's servers: the nodes' addresses, comma-separated.
    #[arg(long, global = true, hide = true)]
    connect: Option<String>,
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
    if let Some(share) = cli.worker {
        return worker(&cli, share, &options).await;
    }
    let _steering = cli.steer_receive.then(|| {
        Steering::to_cpu(cli.cpu_load).unwrap_or_else(|e| fail(&format!("--steer-receive: {e}")))
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
    let placement = Placement::of(&cli);
    for scenario in scenarios {
        run(&cli, &placement, &scenario, &options, nofile).await;
    }
}

/// The names tokio gives its runtime's threads (it changed between versions).
const TOKIO_WORKERS: [&str; 2] = ["tokio-rt-worker", "tokio-runtime-w"];

/// Ends the run on a usage error.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// Which CPUs each process runs on (`None`: not pinned).
struct Placement {
    /// Each node's CPUs.
    nodes: Vec<Option<CpuList>>,
    /// Each generator's CPU.
    generators: Vec<Option<usize>>,
    /// Each Redis primary's CPU (empty: not pinned).
    redis: Vec<usize>,
}

impl Placement {
    /// The placement the flags ask for, checked against the machine's CPUs.
    fn of(cli: &Cli) -> Placement {
        let online = CpuList::online();
        let nodes = cli.nodes.max(1);
        let generators = cli.generators.max(1);
        let redis_cpus: Vec<usize> = match cli.redis_cpu {
            Some(first) => (first..first + cli.redis_cluster.unwrap_or(1).max(1)).collect(),
            None => Vec::new(),
        };
        let node_cpus: Vec<Option<CpuList>> = match (&cli.server_cpus, cli.no_pin) {
            (Some(list), _) => (0..nodes)
                .map(|i| {
                    Some(list.block(i, nodes).unwrap_or_else(|| {
                        fail(&format!(
                            "--server-cpus {list}: fewer CPUs than --nodes {nodes}"
                        ))
                    }))
                })
                .collect(),
            (None, false) => vec![Some(CpuList(vec![cli.cpu_server])); nodes],
            (None, true) => vec![None; nodes],
        };
        let taken = CpuList(
            node_cpus
                .iter()
                .flatten()
                .flat_map(|l| l.0.iter().copied())
                .chain(redis_cpus.iter().copied())
                .collect(),
        );
        let load: Option<CpuList> = match (&cli.load_cpus, cli.no_pin) {
            (Some(list), _) => Some(list.clone()),
            (None, true) => None,
            (None, false) if generators == 1 => Some(CpuList(vec![cli.cpu_load])),
            (None, false) => {
                let free = online.without(&taken);
                Some(if free.is_empty() {
                    CpuList(vec![cli.cpu_load])
                } else {
                    free
                })
            }
        };
        let generator_cpus = (0..generators)
            .map(|i| load.as_ref().map(|l| l.0[i % l.len()]))
            .collect();
        let named = node_cpus
            .iter()
            .flatten()
            .flat_map(|l| l.0.iter())
            .chain(load.iter().flat_map(|l| l.0.iter()))
            .chain(redis_cpus.iter());
        for cpu in named {
            if !online.0.contains(cpu) {
                fail(&format!("CPU {cpu} is not online here (online: {online})"));
            }
        }
        Placement {
            nodes: node_cpus,
            generators: generator_cpus,
            redis: redis_cpus,
        }
    }

    /// For the run's title, with the generators a scenario ran (the idle ones run one).
    fn describe(&self, generators: usize) -> String {
        let cpus = |c: Option<String>| c.unwrap_or_else(|| "any CPU".to_string());
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                cpus(n.as_ref().map(|l| match l.len() {
                    1 => format!("CPU {l}"),
                    _ => format!("CPUs {l}"),
                }))
            })
            .collect();
        let generators: Vec<String> = self
            .generators
            .iter()
            .take(generators)
            .map(|g| cpus(g.map(|c| format!("CPU {c}"))))
            .collect();
        format!(
            "server{} on {} · {} generator{} on {}{}",
            if nodes.len() > 1 { "s" } else { "" },
            nodes.join(" / "),
            generators.len(),
            if generators.len() > 1 { "s" } else { "" },
            generators.join(" / "),
            match self.redis.as_slice() {
                [] => String::new(),
                [cpu] => format!(" · redis on CPU {cpu}"),
                cpus => format!(" · redis primaries on CPUs {}", CpuList(cpus.to_vec())),
            },
        )
    }
}

/// The scenario as command-line words (a child generator runs it again).
fn scenario_args(scenario: &Scenario) -> Vec<String> {
    let words = |name: &str, pairs: &[(&str, String)]| -> Vec<String> {
        let mut out = vec![name.to_string()];
        for (flag, value) in pairs {
            out.extend([format!("--{flag}"), value.clone()]);
        }
        out
    };
    match scenario {
        Scenario::Fanout {
            spectators,
            moves,
            interval_ms,
        } => words(
            "fanout",
            &[
                ("spectators", spectators.to_string()),
                ("moves", moves.to_string()),
                ("interval-ms", interval_ms.to_string()),
            ],
        ),
        Scenario::Throughput {
            games,
            moves,
            rounds,
        } => words(
            "throughput",
            &[
                ("games", games.to_string()),
                ("moves", moves.to_string()),
                ("rounds", rounds.to_string()),
            ],
        ),
        Scenario::Mixed { games, seconds } => words(
            "mixed",
            &[
                ("games", games.to_string()),
                ("seconds", seconds.to_string()),
            ],
        ),
        // The idle scenarios run in one process.
        _ => Vec::new(),
    }
}

/// The child generators of a scenario, started (`None`: one generator, this process).
fn start_workers(
    cli: &Cli,
    placement: &Placement,
    scenario: &Scenario,
    nodes: &[SocketAddr],
) -> Option<Workers> {
    let args = scenario_args(scenario);
    if placement.generators.len() < 2 || args.is_empty() {
        return None;
    }
    let n = placement.generators.len();
    let connect: Vec<String> = nodes.iter().map(ToString::to_string).collect();
    let commands = placement
        .generators
        .iter()
        .enumerate()
        .map(|(i, cpu)| {
            let mut c = measure::this_program_on(*cpu);
            c.args(["--kind", &cli.kind, "--options", &cli.options])
                .args(["--clock", &cli.clock, "--worker", &format!("{i}/{n}")])
                .args(["--connect", &connect.join(",")]);
            match cpu {
                Some(cpu) => c.args(["--cpu-load", &cpu.to_string()]),
                None => c.arg("--no-pin"),
            };
            c.args(&args);
            c
        })
        .collect();
    Some(Workers::start(commands))
}

/// A child generator: drives its share of the scenario against the servers it was given
/// and reports to the parent (its table is the parent's to print).
async fn worker(cli: &Cli, share: Share, options: &Value) {
    let nodes: Vec<SocketAddr> = cli
        .connect
        .as_deref()
        .unwrap_or_else(|| fail("--worker needs --connect"))
        .split(',')
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| fail(&format!("--connect {a}")))
        })
        .collect();
    let mut ctx = Ctx {
        addr: nodes[0],
        kind: cli.kind.clone(),
        options: options.clone(),
        clock: serde_json::from_str(&cli.clock).expect("--clock is JSON"),
        nodes,
        pids: Vec::new(),
        // The parent reads the generators' CPUs.
        load_cpus: Vec::new(),
        redis: None,
        role: Role::Child(share, Link::new()),
    };
    let _ = play(&mut ctx, &cli.scenario).await;
}

/// Runs one scenario in `ctx`.
async fn play(ctx: &mut Ctx, scenario: &Scenario) -> Report {
    match scenario.clone() {
        Scenario::Idle { conns, hold_s } => scenarios::idle(ctx, conns, hold_s).await,
        Scenario::IdleGames { games, hold_s } => scenarios::idle_games(ctx, games, hold_s).await,
        Scenario::Fanout {
            spectators,
            moves,
            interval_ms,
        } => scenarios::fanout(ctx, spectators, moves, interval_ms).await,
        Scenario::Throughput {
            games,
            moves,
            rounds,
        } => scenarios::throughput(ctx, games, moves, rounds).await,
        Scenario::Mixed { games, seconds } => scenarios::mixed(ctx, games, seconds).await,
        Scenario::All => unreachable_all(),
    }
}

/// Runs one scenario on fresh servers and prints its table.
async fn run(cli: &Cli, placement: &Placement, scenario: &Scenario, options: &Value, nofile: u64) {
    // Connections beyond the defaults: no per-IP or request limits in the way, every
    // pending frame of a big fan-out queued.
    let cluster = cli.nodes > 1;
    let redis = (cli.redis
        || cli.redis_cluster.is_some()
        || cluster
        || matches!(scenario, Scenario::Mixed { .. }))
    .then(|| match cli.redis_cluster {
        Some(primaries) => PrivateRedis::Cluster(RedisCluster::start_on_disk(primaries.max(1))),
        None => PrivateRedis::One(RedisServer::start_on_disk()),
    });
    let probe = redis.as_ref().map(|r| {
        let probe = RedisProbe::of(&r.ports()).expect("the private Redis answers INFO");
        for (&(_, pid), &cpu) in probe.members.iter().zip(&placement.redis) {
            measure::pin(pid, cpu);
        }
        probe
    });
    let mut args: Vec<String> = match &redis {
        // The Redis flags come with the loose limits.
        Some(r) => r.server_args(),
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
    for (i, cpus) in placement.nodes.iter().enumerate() {
        let mut node_args = args.clone();
        if cluster {
            node_args.extend(["--cluster".into(), "--node-id".into(), format!("node{i}")]);
        }
        // Started on its cores, as an operator gives a server cores: one worker thread per
        // core (on one core the runtime is a single thread). Pinned only after the start,
        // it would run a worker per core of the machine taking turns on its cores, and
        // measure their hand-offs.
        servers.push(match cpus {
            Some(cpus) => {
                node_args.extend(["--threads".into(), cpus.len().to_string()]);
                let refs: Vec<&str> = node_args.iter().map(String::as_str).collect();
                Server::start_under(&["taskset", "-c", &cpus.to_string()], &refs)
            }
            None => {
                let refs: Vec<&str> = node_args.iter().map(String::as_str).collect();
                Server::start_with(&refs)
            }
        });
    }
    let nodes: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
    if cli.load_idle {
        // Every thread of this process; the generators it starts next inherit it (the
        // servers, started already, keep theirs).
        let pid = std::process::id().to_string();
        let set = std::process::Command::new("chrt")
            .args(["--idle", "--all-tasks", "--pid", "0", &pid])
            .status();
        if !set.is_ok_and(|s| s.success()) {
            fail("--load-idle: chrt --idle failed");
        }
    }
    let workers = start_workers(cli, placement, scenario, &nodes);
    let generators = workers.as_ref().map_or(1, Workers::len);
    // The parent of several generators only waits and reads (and makes `fanout`'s moves):
    // left unpinned, it measures its children's CPUs, each counted once however many
    // children share it.
    let mut load_cpus: Vec<usize> = placement.generators[..generators]
        .iter()
        .flatten()
        .copied()
        .collect();
    load_cpus.sort_unstable();
    load_cpus.dedup();
    if let (None, Some(cpu)) = (&workers, placement.generators[0]) {
        measure::pin(std::process::id(), cpu);
    }
    let mut ctx = Ctx {
        addr: servers[0].addr,
        kind: cli.kind.clone(),
        options: options.clone(),
        clock: serde_json::from_str(&cli.clock).expect("--clock is JSON"),
        nodes,
        pids: servers.iter().map(Server::pid).collect(),
        load_cpus,
        redis: probe,
        role: workers.map_or(Role::Alone, Role::Parent),
    };
    let drops = measure::backlog_drops();
    let mut report = play(&mut ctx, scenario).await;
    report.add(
        "packets dropped at a full backlog",
        measure::backlog_drops().saturating_sub(drops),
    );
    // Read from the running servers: the CPUs they may use and the runtime's workers (a
    // server on one thread runs its tasks on the main thread, which tokio does not name).
    let each = |f: &dyn Fn(u32) -> String| -> String {
        ctx.pids
            .iter()
            .map(|p| f(*p))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    report.add("server CPUs allowed", each(&measure::cpus_allowed));
    report.add(
        "server worker threads",
        each(&|pid| match TOKIO_WORKERS
            .iter()
            .map(|name| measure::threads_named(pid, name))
            .sum()
        {
            0 => "1 (the main thread)".to_string(),
            n => n.to_string(),
        }),
    );
    if let Role::Parent(w) = std::mem::replace(&mut ctx.role, Role::Alone) {
        w.finish().await;
    }
    println!(
        "\n{:?} · {} {} · clock {} · store {} · {}{} · open-file limit {nofile}",
        scenario,
        cli.kind,
        cli.options,
        cli.clock,
        match (cluster, &redis) {
            (_, None) => "memory".to_string(),
            (false, Some(r)) => format!("{} (AOF, appendfsync always)", r.describe()),
            (true, Some(r)) => format!(
                "{} cluster nodes over {} (AOF, appendfsync always)",
                cli.nodes,
                r.describe()
            ),
        },
        placement.describe(generators),
        steered(cli),
    );
    report.print();
    drop(servers);
    drop(redis);
}

/// The private store of a run over Redis.
enum PrivateRedis {
    /// One redis-server.
    One(RedisServer),
    /// A Redis Cluster's primaries.
    Cluster(RedisCluster),
}

impl PrivateRedis {
    /// Its processes' ports.
    fn ports(&self) -> Vec<u16> {
        match self {
            PrivateRedis::One(r) => vec![r.port],
            PrivateRedis::Cluster(c) => c.ports(),
        }
    }

    /// The servers' flags for it, with the loose limits.
    fn server_args(&self) -> Vec<String> {
        match self {
            PrivateRedis::One(r) => r.server_args("load"),
            PrivateRedis::Cluster(c) => c.server_args("load"),
        }
    }

    /// For the run's title.
    fn describe(&self) -> String {
        match self {
            PrivateRedis::One(_) => "redis".to_string(),
            PrivateRedis::Cluster(c) => format!("a redis cluster of {} primaries", c.ports().len()),
        }
    }
}

/// The run's title notes receive steering, so a figure is never read without it.
fn steered(cli: &Cli) -> String {
    let mut out = String::new();
    if cli.steer_receive {
        out += &format!(" · loopback receive steered to CPU {}", cli.cpu_load);
    }
    if cli.load_idle {
        out += " · generators at idle priority";
    }
    out
}

/// `all` is expanded into the other scenarios before any runs.
fn unreachable_all() -> Report {
    Report::default()
}
