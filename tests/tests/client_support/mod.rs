//! Helpers for the client end-to-end tests: the real server on a free port, `stoa` child
//! processes in plain mode with their own config directories, line waiting with timeouts,
//! and deterministic game scripts computed with the rules engines.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_protocol::kind;

/// How long a test waits for one expected line.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// `stoa host` arguments for a small untimed Ūnane game with the host on black (so the
/// joiner moves first): the scripted games of the reconnect and deployment tests.
pub const HOST_SMALL_UNANE: &[&str] = &[
    "host",
    "unane",
    "--side",
    "black",
    "--clock",
    "none",
    "--options",
    "width=5,height=4",
];

/// Builds `stoa` and `stoa-server` once per test process: `cargo test` does not build other
/// packages' binaries by itself.
pub fn build_binaries() {
    stoa_tests::build_binaries();
}

/// A running `stoa-server`, killed on drop.
pub struct Server {
    child: Child,
    /// `ws://127.0.0.1:PORT/ws`.
    pub url: String,
}

impl Server {
    /// Starts the server on a free port with limits that do not get in the way of tests.
    pub fn start() -> Server {
        build_binaries();
        let mut child = Command::new(stoa_tests::binary("stoa-server"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--rate-limit",
                "100000",
                "--ip-conn-limit",
                "100000",
                "--spectator-batch-ms",
                "100",
            ])
            .env(
                "RUST_LOG",
                std::env::var("STOA_TEST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("STOA_TEST_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("spawn stoa-server");
        let stdout = child.stdout.take().expect("server stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            while let Some(Ok(line)) = lines.next() {
                if let Some(addr) = line.strip_prefix("stoa-server listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                    break;
                }
            }
            for _ in lines {}
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server printed its address");
        Server {
            child,
            url: format!("ws://{addr}/ws"),
        }
    }
}

impl Server {
    /// Sends SIGTERM (a graceful shutdown, as an operator stops it).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("stoa-client-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
        Clients::with_url(&server.url)
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
    pub fn spawn_in(&mut self, name: &str, config: &std::path::Path, args: &[&str]) -> usize {
        let url = self.url.clone();
        self.spawn_full(name, &url, config, None, args)
    }

    /// Like [`Clients::spawn_in`] with another server address (or several, comma-separated).
    pub fn spawn_in_at(
        &mut self,
        name: &str,
        url: &str,
        config: &std::path::Path,
        args: &[&str],
    ) -> usize {
        self.spawn_full(name, url, config, None, args)
    }

    fn spawn_full(
        &mut self,
        name: &str,
        url: &str,
        config_dir: &std::path::Path,
        owned: Option<TempDir>,
        args: &[&str],
    ) -> usize {
        let mut child = Command::new(stoa_tests::binary("stoa"))
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

/// A deterministic game: the moves to play and how the server must end it.
pub struct Script {
    /// Canonical moves in order.
    pub moves: Vec<String>,
    /// When the rules did not end the game within the cap: the side to act resigns.
    pub resign_side: Option<String>,
    /// `winner reason` as the client prints it after `game over: `.
    pub outcome: String,
}

/// Plays a game with the engine: a move that wins at once when there is one, otherwise a
/// pseudo-random legal move (fixed seed; seed 0 takes the first legal move in byte order;
/// never `swap`, so seats stay put). Stops at the
/// rules' end, or after `cap` actions with a resignation.
pub fn scripted_game(k: &str, options: &Value, seed: u64, cap: usize) -> Script {
    let gk = kind(k).expect("kind");
    let mut game = gk.start(options).expect("options");
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut moves = Vec::new();
    while game.outcome().is_none() && moves.len() < cap {
        let mover = game.to_act().expect("side to act");
        let legal: Vec<String> = game
            .legal_notations()
            .into_iter()
            .filter(|m| m != "swap")
            .collect();
        assert!(!legal.is_empty(), "no legal move");
        let winning = legal.iter().find(|m| {
            let mut g = game.clone();
            g.play(m).expect("legal");
            g.outcome().is_some_and(|o| o.winner == Some(mover))
        });
        let mv = match winning {
            Some(m) => m.clone(),
            None if seed == 0 => legal[0].clone(),
            None => {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                legal[((rng >> 33) as usize) % legal.len()].clone()
            }
        };
        game.play(&mv).expect("legal move");
        moves.push(mv);
    }
    match game.outcome() {
        Some(o) => {
            let outcome = match o.winner {
                Some(s) => format!("{} wins by {}", gk.side_names[s.index()], o.reason.as_str()),
                None => format!("draw by {}", o.reason.as_str()),
            };
            Script {
                moves,
                resign_side: None,
                outcome,
            }
        }
        None => {
            let side = game.to_act().expect("to act");
            Script {
                moves,
                resign_side: Some(gk.side_names[side.index()].to_string()),
                outcome: format!("{} wins by resign", gk.side_names[side.other().index()]),
            }
        }
    }
}

/// A tmux server of our own (its own socket), killed on drop.
pub struct Tmux {
    socket: String,
    /// The socket file, removed on drop (`kill-server` leaves it behind).
    socket_path: Option<String>,
}

impl Tmux {
    pub fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    pub fn start(tag: &str, command: &str) -> Tmux {
        Tmux::start_sized(tag, command, 120, 40)
    }

    pub fn start_sized(tag: &str, command: &str, width: u16, height: u16) -> Tmux {
        let socket = format!("stoa-tui-test-{}-{tag}", std::process::id());
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                command,
            ])
            .status()
            .expect("run tmux");
        assert!(status.success(), "tmux new-session failed");
        let socket_path = Command::new("tmux")
            .args(["-L", &socket, "display-message", "-p", "#{socket_path}"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|p| !p.is_empty());
        Tmux {
            socket,
            socket_path,
        }
    }

    pub fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "t"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Waits until the screen satisfies `pred`; returns the screen.
    pub fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let screen = self.capture();
            if pred(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The path of the `stoa` binary the tests run.
pub fn stoa_tests_binary() -> String {
    stoa_tests::binary("stoa").to_string_lossy().into_owned()
}

/// The command line that runs `stoa ARGS` in a tmux pane as player `name`, then keeps the
/// pane open for a while so what the client prints on leaving can be read.
pub fn tui_command(config: &TempDir, server_url: &str, name: &str, args: &str) -> String {
    format!(
        "sh -c {}",
        sh_quote(&format!(
            "env STOA_CONFIG_DIR={} TERM=xterm-256color {} --server {} --name {name} {args}; sleep 60",
            sh_quote(&config.0.to_string_lossy()),
            sh_quote(&stoa_tests_binary()),
            sh_quote(server_url),
        ))
    )
}

/// Forwards TCP connections to `upstream`; [`Proxy::cut`] drops every open one.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// Starts forwarding.
    pub fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let registry = open.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                for s in [&client, &server] {
                    registry.lock().unwrap().push(s.try_clone().expect("clone"));
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        loop {
                            match std::io::Read::read(&mut from, &mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    if std::io::Write::write_all(&mut to, &buf[..n]).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Proxy { addr, open }
    }

    /// Drops every open connection (new ones are still forwarded).
    pub fn cut(&self) {
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}
