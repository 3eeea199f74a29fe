//! What the measuring tools share: readings of a process from /proc, CPU pinning with
//! `taskset`, receive steering on loopback ([`steer`]) and the `| figure | value |` report
//! they print. `stoa-load` (the load generator's scenarios against a real server) and
//! `stoa-floors` (the kernel's own cost of the same socket work, with no server) both use
//! them, so their figures are read and printed the same way.
//!
//! Why /proc: the figures that matter (CPU seconds the server spent, its resident memory)
//! are the kernel's own accounting of that one process, independent of what the load
//! generator, sharing the machine, does meanwhile.

pub mod cpus;
pub mod redis_info;
pub mod steer;

use std::process::Command;

/// One run's results, printed as a table.
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

    /// Prints the report as a Markdown table (`tests/tests/load_generator.rs` reads it).
    pub fn print(&self) {
        println!("| figure | value |\n|---|---|");
        for (k, v) in &self.rows {
            println!("| {k} | {v} |");
        }
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

/// Clock ticks per second of `utime`/`stime` (`getconf CLK_TCK`; 100 on Linux).
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// CPU seconds (user + system) the process has used so far.
pub fn cpu_seconds(pid: u32) -> f64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// CPU seconds the process has used so far in user space and in the kernel: on loopback
/// the kernel's share includes the receiver's TCP work, which no change of ours can cut.
pub fn cpu_split(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may contain spaces: fields count from after its closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name and state.
    let hz = clock_ticks();
    (ticks(11) / hz, ticks(12) / hz)
}

/// Minor page faults of the process so far: each a page the kernel had to find and zero
/// (a whole 2 MiB one where the allocator asked for huge pages) when memory was first
/// touched, or touched again after the allocator gave it back.
pub fn minor_faults(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    // minflt is field 10 of stat, 8 after the name and state.
    rest.split_whitespace()
        .nth(7)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// Resident memory of the process, KiB.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Pins every thread of `pid` to `cpu` (best effort: a warning when `taskset` is missing).
pub fn pin(pid: u32, cpu: usize) {
    let ok = Command::new("taskset")
        .args(["-a", "-p", "-c", &cpu.to_string(), &pid.to_string()])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("warning: could not pin process {pid} to CPU {cpu} (is taskset installed?)");
    }
}

/// Pins every thread of `pid` to the CPUs of `cpus` (best effort, as [`pin`]).
pub fn pin_to(pid: u32, cpus: &cpus::CpuList) {
    let ok = Command::new("taskset")
        .args(["-a", "-p", "-c", &cpus.to_string(), &pid.to_string()])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("warning: could not pin process {pid} to CPUs {cpus} (is taskset installed?)");
    }
}

/// The CPUs the process may run on (`Cpus_allowed_list` of `/proc/PID/status`).
pub fn cpus_allowed(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// Threads of the process named `name` (as `/proc/PID/task/*/comm` has it: the first 15
/// bytes), e.g. tokio's workers, `tokio-runtime-w`.
pub fn threads_named(pid: u32, name: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

/// A command running this program again (a scenario's other side, in its own process),
/// started on `cpu` by `taskset` when given.
pub fn this_program_on(cpu: Option<usize>) -> Command {
    let exe = std::env::current_exe().expect("this program's path");
    match cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &cpu.to_string()]).arg(exe);
            c
        }
        None => Command::new(exe),
    }
}

/// Raises this process's open-file limit to its hard limit (children inherit it).
pub fn raise_nofile() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("warning: could not raise the open-file limit: {e}");
            0
        }
    }
}

/// Packets the kernel dropped so far because a core's receive backlog was full, summed over
/// the cores (`/proc/net/softnet_stat`, second column, hexadecimal).
///
/// Why a run reports it: loopback queues every packet to a backlog, and one that overflows
/// turns into TCP retransmissions hundreds of milliseconds later, which a latency figure
/// would otherwise show without saying why.
pub fn backlog_drops() -> u64 {
    let stat = std::fs::read_to_string("/proc/net/softnet_stat").unwrap_or_default();
    stat.lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .filter_map(|dropped| u64::from_str_radix(dropped, 16).ok())
        .sum()
}

/// Seconds one CPU has spent busy (everything but idle and I/O wait, interrupts and
/// softirqs included) since boot (`/proc/stat`).
///
/// Why a run reads it for the generator's CPU: the receiving sockets' TCP work, when steered
/// there, runs in softirqs that no process is charged for, and a latency figure only
/// measures the server while that core still has time to spare.
pub fn cpu_busy_seconds(cpu: usize) -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let name = format!("cpu{cpu}");
    let Some(line) = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))
    else {
        return 0.0;
    };
    let ticks: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
    let busy: f64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .take(6)
        .map(|(_, t)| t)
        .sum();
    busy / clock_ticks()
}

/// Nanoseconds every thread of the process has spent on a CPU so far (the scheduler's own
/// accounting, `/proc/PID/task/*/schedstat`): exact where `cpu_seconds` counts 10 ms ticks,
/// so a window of a few hundred milliseconds can be measured.
pub fn run_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}
