//! The load generator itself, run as a user runs it: a small `stoa-load fanout` against a
//! real server. Its figures are what docs/performance.md's tables are made of, so the
//! spectators it measures with must see every move, and the kernel's stamp of the server's
//! write (when it reached the wire) can never come after the spectator read it.

use std::collections::HashMap;
use std::process::Command;

/// The `| figure | value |` rows of a `stoa-load` report.
fn figures(report: &str) -> HashMap<String, String> {
    report
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').collect();
            match cells[..] {
                [figure, value] => Some((figure.trim().to_string(), value.trim().to_string())),
                _ => None,
            }
        })
        .collect()
}

/// Runs `stoa-load` with `args` (not pinned: the test shares the machine) and returns its
/// report and figures; the run must succeed.
fn stoa_load(args: &[&str]) -> (String, HashMap<String, String>) {
    run(env!("CARGO_BIN_EXE_stoa-load"), args)
}

/// Runs the tool at `exe` with `args`, not pinned, as `stoa_load` does.
fn run(exe: &str, args: &[&str]) -> (String, HashMap<String, String>) {
    let out = Command::new(exe)
        .arg("--no-pin")
        .args(args)
        .output()
        .expect("run stoa-load");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = figures(&report);
    (report, f)
}

#[test]
fn fanout_spectators_see_every_move_and_the_wire_stamp_precedes_the_read() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "fanout",
        "--spectators",
        "60",
        "--moves",
        "6",
        "--interval-ms",
        "50",
    ]);
    let ms = |name: &str| -> f64 {
        f.get(name)
            .unwrap_or_else(|| panic!("no {name:?} in {report}"))
            .parse()
            .unwrap()
    };
    assert_eq!(f["spectators"], "60", "{report}");
    assert_eq!(f["moves"], "6", "{report}");
    assert_eq!(f["moves every spectator received"], "6", "{report}");
    assert!(
        !f.contains_key("diffs without a kernel timestamp"),
        "{report}"
    );
    for p in ["p50", "p99"] {
        let wire = ms(&format!("{p} move → on the wire to the last spectator, ms"));
        let read = ms(&format!("{p} move → last spectator, ms"));
        // Each spectator's stamp precedes its own read; the wall clock and the monotonic
        // one may disagree by a rounding.
        assert!(
            0.0 < wire && wire <= read + 1.0,
            "{p}: {wire} > {read}\n{report}"
        );
    }
    // The broadcast's own duration (first to last spectator) is part of the move's.
    let spread = ms("p99 first → last spectator on the wire, ms");
    let wire = ms("p99 move → on the wire to the last spectator, ms");
    assert!(spread <= wire + 1.0, "{spread} > {wire}\n{report}");
    // Every recipient received one diff per move, of the size a move's diff has.
    let bytes: u64 = f["bytes per move per recipient"].parse().unwrap();
    assert!((200..2000).contains(&bytes), "{report}");
}

/// `throughput` in rounds: every round's games are set up anew on the same server and
/// played to their end (8x7 games end within a few dozen moves), and the figures add up
/// over the rounds, with the server's page faults and memory growth per move.
#[test]
fn throughput_plays_every_round_and_reports_the_memory_a_move_keeps() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&["throughput", "--games", "4", "--rounds", "3"]);
    assert_eq!(f["concurrent games"], "4", "{report}");
    assert_eq!(f["rounds (games set up anew each)"], "3", "{report}");
    assert_eq!(f["errors"], "0", "{report}");
    assert_eq!(f["games played"], "12", "{report}");
    let moves: u64 = f["moves"].parse().unwrap();
    assert!(moves >= 12, "{report}");
    let cpu: f64 = f["server CPU per move, µs"].parse().unwrap();
    assert!(cpu > 0.0, "{report}");
    for figure in [
        "server page faults per 1,000 moves",
        "server memory growth per move while playing, bytes",
    ] {
        let value: f64 = f[figure].parse().unwrap_or_else(|_| panic!("{report}"));
        assert!(value.is_finite(), "{figure}: {report}");
    }
}

/// `stoa-floors move-floor`: the "server" answers every move with its two writes, whole
/// (the players wait for every byte, so a lost or short write would hang the run, not pass
/// it).
#[test]
fn move_floor_answers_every_move_with_two_whole_writes() {
    let (report, f) = run(
        env!("CARGO_BIN_EXE_stoa-floors"),
        &["move-floor", "--games", "10", "--moves", "2000"],
    );
    assert_eq!(f["moves"], "2000", "{report}");
    assert_eq!(
        f["bytes written per move (mover, opponent)"], "600, 560",
        "{report}"
    );
    assert_eq!(f["writes short or refused (buffer full)"], "0", "{report}");
    let cpu: f64 = f["\"server\" CPU per move, µs"].parse().unwrap();
    assert!(cpu > 0.0, "{report}");
}

/// `stoa-floors send-floor`: every socket gets every round's send, whole, from the sender
/// to the receiving process it starts (a receiver that never connected would hang the run).
#[test]
fn send_floor_writes_every_round_to_every_socket() {
    let (report, f) = run(
        env!("CARGO_BIN_EXE_stoa-floors"),
        &["send-floor", "--conns", "20", "--rounds", "3"],
    );
    assert_eq!(f["sockets"], "20", "{report}");
    assert_eq!(f["rounds (one send to every socket)"], "3", "{report}");
    assert_eq!(f["sends handed to the kernel by"], "Write", "{report}");
    assert_eq!(f["sends short or refused (buffer full)"], "0", "{report}");
    // Read in 10 ms ticks: 60 sends may well measure 0, never a negative or NaN.
    let cpu: f64 = f["sender CPU per send, µs"].parse().unwrap();
    assert!(cpu.is_finite() && cpu >= 0.0, "{report}");
}

/// Whether this machine has the two CPUs a test pins to (a one-core runner cannot).
fn two_cpus() -> bool {
    let two = stoa_tests::measure::cpus::CpuList::online().len() >= 2;
    if !two {
        eprintln!("one CPU online: nothing to pin two processes to");
    }
    two
}

/// `--generators 2`: two child processes each play half the games and half of every
/// round's move budget; the parent prints one table whose moves are the sum of theirs.
/// Four games of 8x7 do not end within 8 moves a round, so every budget is spent whole.
#[test]
fn two_generators_play_half_the_games_each_and_one_table_adds_them_up() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "--generators",
        "2",
        "throughput",
        "--games",
        "4",
        "--moves",
        "8",
        "--rounds",
        "2",
    ]);
    assert_eq!(f["errors"], "0", "{report}");
    assert_eq!(f["games played"], "8", "{report}");
    assert_eq!(f["moves by generator"], "8, 8", "{report}");
    assert_eq!(f["moves"], "16", "{report}");
    // Percentiles of the merged samples, not of either child's alone.
    let p50: f64 = f["p50 move → opponent, ms"].parse().unwrap();
    let p99: f64 = f["p99 move → opponent, ms"].parse().unwrap();
    assert!(0.0 < p50 && p50 <= p99, "{report}");
    assert_eq!(report.matches("| figure | value |").count(), 1, "{report}");
}

/// `fanout` over two generators: each child holds half the spectators, the parent makes
/// the moves, and every move still reaches every spectator, the last one's read and stamp
/// taken on the wall clock all of them share.
#[test]
fn two_generators_share_the_spectators_and_every_move_reaches_all_of_them() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "--generators",
        "2",
        "fanout",
        "--spectators",
        "40",
        "--moves",
        "4",
        "--interval-ms",
        "50",
    ]);
    assert_eq!(f["spectators"], "40", "{report}");
    assert_eq!(f["moves"], "4", "{report}");
    assert_eq!(f["moves every spectator received"], "4", "{report}");
    let wire: f64 = f["p99 move → on the wire to the last spectator, ms"]
        .parse()
        .unwrap();
    let read: f64 = f["p99 move → last spectator, ms"].parse().unwrap();
    assert!(0.0 < wire && wire <= read + 1.0, "{report}");
}

/// `--server-cpus 0-1`: the server runs on those two CPUs with a runtime worker on each,
/// as the kernel and the server's own threads say.
#[test]
fn server_cpus_give_the_server_those_cpus_and_a_worker_thread_each() {
    if !two_cpus() {
        return;
    }
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "--server-cpus",
        "0-1",
        "throughput",
        "--games",
        "2",
        "--moves",
        "4",
        "--rounds",
        "1",
    ]);
    assert_eq!(f["server CPUs allowed"], "0-1", "{report}");
    assert_eq!(f["server worker threads"], "2", "{report}");
    assert_eq!(f["moves"], "4", "{report}");
    // One CPU: the one-thread runtime, as an operator's one core runs it.
    let (report, f) = stoa_load(&[
        "--server-cpus",
        "1",
        "throughput",
        "--games",
        "2",
        "--moves",
        "4",
        "--rounds",
        "1",
    ]);
    assert_eq!(f["server CPUs allowed"], "1", "{report}");
    assert_eq!(
        f["server worker threads"], "1 (the main thread)",
        "{report}"
    );
}

/// `--redis`: Redis's CPU and commands per move are read from it (`INFO commandstats`
/// before and after the moves) and every move makes at least one command there.
#[test]
fn redis_commands_and_cpu_per_move_are_reported_over_redis() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "--redis",
        "throughput",
        "--games",
        "4",
        "--moves",
        "40",
        "--rounds",
        "1",
    ]);
    assert_eq!(f["moves"], "40", "{report}");
    let commands: f64 = f["Redis commands per move"].parse().unwrap();
    assert!((1.0..200.0).contains(&commands), "{report}");
    let cpu: f64 = f["Redis CPU per move, µs"].parse().unwrap();
    assert!(cpu > 0.0, "{report}");
    let top = &f["Redis top commands, calls per move"];
    assert!(top != "none" && !top.contains("info"), "{report}");
    // Without Redis there is nothing to report.
    let (report, f) = stoa_load(&[
        "throughput",
        "--games",
        "2",
        "--moves",
        "4",
        "--rounds",
        "1",
    ]);
    assert!(!f.contains_key("Redis commands per move"), "{report}");
}

/// `--redis-cluster 3`: the nodes run over a private Redis Cluster, and Redis's figures are
/// those of all three primaries summed (one primary alone holds about a third of the games:
/// fewer than one append per move).
#[test]
fn over_a_redis_cluster_the_primaries_figures_add_up() {
    stoa_tests::build_binaries();
    let (report, f) = stoa_load(&[
        "--redis-cluster",
        "3",
        "--nodes",
        "2",
        "throughput",
        "--games",
        "6",
        "--moves",
        "60",
        "--rounds",
        "1",
    ]);
    assert!(
        report.contains("2 cluster nodes over a redis cluster of 3 primaries"),
        "{report}"
    );
    assert_eq!(f["moves"], "60", "{report}");
    assert_eq!(f["errors"], "0", "{report}");
    // Each move: the append script, the game's hash read and written, a publish to the
    // other node and its read there.
    let commands: f64 = f["Redis commands per move"].parse().unwrap();
    assert!(commands >= 4.0, "{report}");
    let top = &f["Redis top commands, calls per move"];
    let appends: f64 = top
        .split(", ")
        .find_map(|c| c.strip_prefix("evalsha "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no evalsha among {top}"));
    assert!(appends >= 1.0, "{report}");
}

/// `tests/many-cores/run.sh`, the script for a 16-core machine, in its smoke mode (every
/// step tiny and unpinned): each of its runs succeeds and lands in the summary with its
/// figures, so a lent machine's time is not lost to a broken step.
#[test]
fn the_many_core_script_runs_every_step() {
    stoa_tests::build_binaries();
    let out = stoa_tests::temp_dir::TempDir::new("many-cores");
    let load = std::path::Path::new(env!("CARGO_BIN_EXE_stoa-load"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/many-cores/run.sh");
    let run = Command::new(script)
        .arg("--smoke")
        .arg(&out.0)
        .env("STOA_BIN_DIR", load.parent().unwrap())
        .env("STOA_SERVER_BIN", stoa_tests::binary("stoa-server"))
        .output()
        .expect("run many-cores/run.sh");
    let summary = std::fs::read_to_string(out.0.join("summary.md")).unwrap_or_default();
    assert!(
        run.status.success(),
        "{summary}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let steps: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    assert_eq!(
        steps,
        [
            "throughput-k1",
            "throughput-k2",
            "throughput-k4",
            "throughput-k8",
            "fanout-k1",
            "fanout-k2",
            "fanout-k4",
            "fanout-k8",
            "nodes-1",
            "nodes-2",
            "nodes-4",
            "redis-cluster",
            "fanout-nodes3",
        ],
        "{summary}"
    );
    for section in summary.split("\n## ").skip(1) {
        let f = figures(section);
        match f.get("moves every spectator received") {
            Some(moves) => assert_eq!(moves, "3", "{section}"),
            None => assert_eq!(f["errors"], "0", "{section}"),
        }
    }
    assert!(
        summary.contains("redis cluster of 3 primaries"),
        "{summary}"
    );
}
