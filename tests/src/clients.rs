//! `stoa` child processes in plain mode, each with its own config directory, whose output
//! lines a test waits for with a timeout.
//!
//! Why one collector for every process: a test of two players and a spectator waits for
//! "whoever is to act", and its failure message shows what each of them printed.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::temp_dir::TempDir;
use crate::Server;

/// How long a test waits for one expected line (or screen): a client's line may wait on a
/// reconnect with back-off.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The flags of the client tests' server: [`crate::LOOSE`]'s limits, spectator batches
/// every 100 ms and the default lobby batch.
pub const CLIENT_LOOSE: &[&str] = &[
    "--rate-limit",
    "100000",
    "--ip-conn-limit",
    "100000",
    "--spectator-batch-ms",
    "100",
];

/// `stoa host` arguments for an untimed Ūnane game of `options` (`width=W,height=H`) with
/// the host on black, who moves first.
pub const fn host_untimed_unane(options: &'static str) -> [&'static str; 8] {
    [
        "host",
        "unane",
        "--side",
        "black",
        "--clock",
        "none",
        "--options",
        options,
    ]
}

/// [`host_untimed_unane`] 5x4: the scripted games of the reconnect and deployment tests.
pub const HOST_SMALL_UNANE: &[&str] = &host_untimed_unane("width=5,height=4");

/// One `stoa` process and what it printed.
struct Proc {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Vec<String>,
    cursor: usize,
    _config: Option<TempDir>,
}

/// A set of `stoa` processes in plain mode whose output lines are collected in one place.
pub struct Clients {
    url: String,
    procs: Vec<Proc>,
    tx: Sender<(usize, Option<String>)>,
    rx: Receiver<(usize, Option<String>)>,
}

impl Clients {
    /// No processes yet.
    pub fn new(server: &Server) -> Clients {
        Clients::with_url(&server.ws_url())
    }

    /// A server of their own, started with [`CLIENT_LOOSE`], and no processes yet.
    pub fn with_server() -> (Server, Clients) {
        let server = Server::start_with(CLIENT_LOOSE);
        let clients = Clients::new(&server);
        (server, clients)
    }

    /// No processes yet; they will connect to `url` (e.g. through a proxy).
    pub fn with_url(url: &str) -> Clients {
        let (tx, rx) = channel();
        Clients {
            url: url.to_string(),
            procs: Vec::new(),
            tx,
            rx,
        }
    }

    /// Starts `stoa --plain --server URL ARGS…` with its own config directory.
    pub fn spawn(&mut self, name: &str, args: &[&str]) -> usize {
        let url = self.url.clone();
        self.spawn_at(name, &url, args)
    }

    /// Like [`Clients::spawn`] with another server address.
    pub fn spawn_at(&mut self, name: &str, url: &str, args: &[&str]) -> usize {
        let config = TempDir::new(name);
        let dir = config.0.clone();
        self.spawn_full(name, url, &dir, Some(config), args)
    }

    /// Like [`Clients::spawn`] with a config directory the caller keeps (to be the same
    /// player in a later process).
    pub fn spawn_in(&mut self, name: &str, config: &Path, args: &[&str]) -> usize {
        let url = self.url.clone();
        self.spawn_full(name, &url, config, None, args)
    }

    /// Like [`Clients::spawn_in`] with another server address (or several, comma-separated).
    pub fn spawn_in_at(&mut self, name: &str, url: &str, config: &Path, args: &[&str]) -> usize {
        self.spawn_full(name, url, config, None, args)
    }

    fn spawn_full(
        &mut self,
        name: &str,
        url: &str,
        config_dir: &Path,
        owned: Option<TempDir>,
        args: &[&str],
    ) -> usize {
        let mut child = Command::new(crate::binary("stoa"))
            .arg("--plain")
            .arg("--server")
            .arg(url)
            .arg("--name")
            .arg(name)
            .args(args)
            .env("STOA_CONFIG_DIR", config_dir)
            .env_remove("STOA_SERVER")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn stoa");
        let id = self.procs.len();
        for stream in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let tx = self.tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    match line {
                        Ok(l) => {
                            if tx.send((id, Some(l))).is_err() {
                                return;
                            }
                        }
                        Err(_) => break,
                    }
                }
                let _ = tx.send((id, None));
            });
        }
        let stdin = child.stdin.take();
        self.procs.push(Proc {
            name: name.to_string(),
            child,
            stdin,
            lines: Vec::new(),
            cursor: 0,
            _config: owned,
        });
        id
    }

    /// The name a process was given.
    pub fn name(&self, id: usize) -> &str {
        &self.procs[id].name
    }

    fn transcript(&self) -> String {
        let mut s = String::new();
        for p in &self.procs {
            s.push_str(&format!("---- {} ----\n", p.name));
            for l in &p.lines {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    fn pump(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok((id, Some(line))) => {
                self.procs[id].lines.push(line);
                true
            }
            Ok((_, None)) => true,
            Err(_) => false,
        }
    }

    /// Waits for the next line of any of `ids` (after what was already consumed from each)
    /// that matches; returns whose line it was. Earlier non-matching lines are consumed.
    pub fn wait_any(&mut self, ids: &[usize], pred: impl Fn(&str) -> bool) -> usize {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            for &id in ids {
                let p = &mut self.procs[id];
                while p.cursor < p.lines.len() {
                    let line = &p.lines[p.cursor];
                    p.cursor += 1;
                    if pred(line) {
                        return id;
                    }
                }
            }
            if !self.pump(deadline) {
                panic!(
                    "timed out waiting for a line from {:?}\n{}",
                    ids.iter()
                        .map(|&i| self.name(i).to_string())
                        .collect::<Vec<_>>(),
                    self.transcript()
                );
            }
        }
    }

    /// Waits for a matching line from one process and returns it.
    pub fn wait(&mut self, id: usize, pred: impl Fn(&str) -> bool) -> String {
        self.wait_any(&[id], &pred);
        let p = &self.procs[id];
        p.lines[p.cursor - 1].clone()
    }

    /// Every line a process printed so far, after collecting those on their way for
    /// `settle` (for tests of the order and number of lines, not only their presence).
    pub fn lines(&mut self, id: usize, settle: Duration) -> Vec<String> {
        let deadline = Instant::now() + settle;
        while Instant::now() < deadline {
            if !self.pump(deadline) {
                break;
            }
        }
        self.procs[id].lines.clone()
    }

    /// Waits for a hosting process's `room <code>` line and returns the code.
    pub fn room_code(&mut self, id: usize) -> String {
        self.wait(id, |l| l.starts_with("room "))["room ".len()..]
            .trim()
            .to_string()
    }

    /// Starts a host (`stoa host …` arguments in `args`) and waits for its room code:
    /// the process and the code.
    pub fn spawn_host(&mut self, name: &str, args: &[&str]) -> (usize, String) {
        let host = self.spawn(name, args);
        let code = self.room_code(host);
        (host, code)
    }

    /// Waits for a process's `game started <id> side <side>` line and returns the id.
    pub fn game_started(&mut self, id: usize) -> String {
        let line = self.wait(id, |l| l.starts_with("game started "));
        line.split_whitespace()
            .nth(2)
            .unwrap_or_else(|| panic!("no game id in {line:?}"))
            .to_string()
    }

    /// Checks that the next `game over: ` line of each of `ids` says `outcome`.
    pub fn game_over(&mut self, ids: &[usize], outcome: &str) {
        let end = format!("game over: {outcome}");
        for &c in ids {
            let line = self.wait(c, |l| l.starts_with("game over: "));
            assert_eq!(line, end, "client {} saw a different end", self.name(c));
        }
    }

    /// Closes the input of each of `ids` (as a player leaves) and waits for each to exit
    /// successfully.
    pub fn quit(&mut self, ids: &[usize]) {
        for &c in ids {
            self.close_stdin(c);
        }
        for &c in ids {
            self.expect_exit(c, TIMEOUT);
        }
    }

    /// Types one line into a process.
    pub fn send(&mut self, id: usize, line: &str) {
        let p = &mut self.procs[id];
        let stdin = p.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to stoa");
        stdin.flush().expect("flush");
    }

    /// Kills a process (a crash, as far as the server can tell).
    pub fn kill(&mut self, id: usize) {
        let _ = self.procs[id].child.kill();
        let _ = self.procs[id].child.wait();
    }

    /// Closes a process's stdin (EOF).
    pub fn close_stdin(&mut self, id: usize) {
        self.procs[id].stdin = None;
    }

    /// Waits for a process to exit and returns its status (whatever it is).
    pub fn exit_status(&mut self, id: usize, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.procs[id].child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() > deadline {
                panic!("{} did not exit\n{}", self.name(id), self.transcript());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for a process to exit successfully.
    pub fn expect_exit(&mut self, id: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.procs[id].child.try_wait().expect("try_wait") {
                assert!(
                    status.success(),
                    "{} exited with {status}\n{}",
                    self.name(id),
                    self.transcript()
                );
                return;
            }
            if Instant::now() > deadline {
                panic!("{} did not exit\n{}", self.name(id), self.transcript());
            }
            std::thread::sleep(Duration::from_millis(20));
            while self
                .rx
                .try_recv()
                .map(|(i, l)| {
                    if let Some(l) = l {
                        self.procs[i].lines.push(l);
                    }
                })
                .is_ok()
            {}
        }
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }
}

/// `stoa bot --serve` for Ūnane at level 1, in plain mode with a config directory of its own:
/// the computer opponent a test's player asks for. Killed on drop.
pub struct ServingBot {
    child: Child,
    _home: TempDir,
}

impl ServingBot {
    /// Starts the bot against `url`; it serves once connected, a moment later.
    pub fn start(url: &str, tag: &str) -> ServingBot {
        let home = TempDir::new(tag);
        let child = Command::new(crate::binary("stoa"))
            .args([
                "--plain", "--server", url, "bot", "--serve", "--kinds", "unane", "--level", "1",
            ])
            .env("STOA_CONFIG_DIR", &home.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a serving bot");
        ServingBot { child, _home: home }
    }
}

impl Drop for ServingBot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
