//! `deploy/run-local.sh N` for the end-to-end tests: the script runs as a child process with
//! the test's binaries, and its report (balancer, Redis, nodes, bot) is parsed from its
//! output.
//!
//! Why through the script: what players are told to run is what the tests run, balancer
//! included.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{binary, build_binaries, signal, Server};

/// Whether the script can start its balancer: Caddy is installed. Says why a test skips when
/// it is not; under CI (`CI` set), where `.ci/run` installs it, a missing Caddy fails instead.
pub fn balancer_available() -> bool {
    let found = Command::new("caddy")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "`caddy` is not installed (Debian package caddy); .ci/run installs it"
        );
        eprintln!("skipping: `caddy` is not installed (Debian package caddy; .ci/run installs it)");
    }
    found
}

/// A running `deploy/run-local.sh`, stopped (SIGTERM, as Ctrl-C) on drop.
pub struct RunLocal {
    child: Option<Child>,
    lines: Receiver<String>,
    /// Every line printed up to `ready`.
    pub report: Vec<String>,
    /// `ws://127.0.0.1:PORT/ws` of the balancer, when the script started one.
    pub balancer: Option<String>,
    /// The balancer's process id.
    pub balancer_pid: Option<u32>,
    /// The nodes, in order (attached: the script owns them).
    pub nodes: Vec<Server>,
    /// What the script said on stderr so far (notes, errors).
    notes: Arc<Mutex<Vec<String>>>,
}

impl RunLocal {
    /// Runs the script for `n` nodes with the workspace's binaries and `env` on top; waits
    /// for its `ready` line.
    pub fn start(n: usize, env: &[(&str, &str)]) -> RunLocal {
        RunLocal::start_with(n, &[], env)
    }

    /// As [`RunLocal::start`], with the script's options `args` after `n` (ports).
    pub fn start_with(n: usize, args: &[&str], env: &[(&str, &str)]) -> RunLocal {
        build_binaries();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf();
        let mut cmd = Command::new(root.join("deploy/run-local.sh"));
        cmd.arg(n.to_string())
            .args(args)
            .env("STOA_SERVER_BIN", binary("stoa-server"))
            .env("STOA_CLIENT_BIN", binary("stoa"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("run deploy/run-local.sh");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let notes: Arc<Mutex<Vec<String>>> = Arc::default();
        let kept = notes.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                kept.lock().expect("notes").push(line);
            }
        });
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut run = RunLocal {
            child: Some(child),
            lines,
            report: Vec::new(),
            balancer: None,
            balancer_pid: None,
            nodes: Vec::new(),
            notes,
        };
        loop {
            let line = run
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| {
                    panic!(
                        "the script did not get ready; it said {:?}, and on stderr {:?}",
                        run.report,
                        run.notes()
                    )
                });
            run.report.push(line.clone());
            if line.starts_with("ready") {
                break;
            }
            // name ws://127.0.0.1:PORT/ws pid PID
            let parts: Vec<&str> = line.split_whitespace().collect();
            let pid = || parts[3].parse::<u32>().expect("pid");
            if parts[0] == "balancer" {
                run.balancer = Some(parts[1].to_string());
                run.balancer_pid = Some(pid());
            } else if parts[0].starts_with("node") {
                let addr = parts[1]
                    .trim_start_matches("ws://")
                    .trim_end_matches("/ws")
                    .parse()
                    .expect("node address");
                run.nodes.push(Server::attach(addr, pid()));
            }
        }
        run
    }

    /// The lines the script printed on stderr so far.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().expect("notes").clone()
    }

    /// The balancer's websocket address (the script must have started one).
    pub fn balancer_url(&self) -> String {
        self.balancer.clone().expect("a balancer line")
    }

    /// `http://127.0.0.1:PORT` of the balancer: where the web page is.
    pub fn balancer_page(&self) -> String {
        self.balancer_url()
            .replace("ws://", "http://")
            .trim_end_matches("/ws")
            .to_string()
    }

    /// The next line the script prints (after `ready`), if one comes within `within`.
    pub fn next_line(&self, within: Duration) -> Option<String> {
        self.lines.recv_timeout(within).ok()
    }

    /// Stops the script as Ctrl-C does; its exit status and the lines it printed meanwhile.
    pub fn stop(mut self) -> (ExitStatus, Vec<String>) {
        let status = self.terminate();
        (status, self.lines.try_iter().collect())
    }

    fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        signal(child.id(), "-TERM");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return child.wait().expect("wait");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for RunLocal {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.terminate();
        }
    }
}
