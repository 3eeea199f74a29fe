//! Helpers shared by the end-to-end tests: building and starting the real server binary on a
//! free port, a websocket test client, and JSON Patch document tracking; a headless browser
//! ([`browser`]); an analysis worker ([`analysis_worker`]); for the tests of the `stoa`
//! client, its processes ([`clients`]), the terminal UI under tmux ([`tmux`]), scripted
//! games ([`script`]), a proxy that cuts connections ([`proxy`]) and temporary config
//! directories ([`temp_dir`]).
//!
//! Why a library: every test file speaks the same protocol through the same helpers, so a
//! test reads as the scenario it checks.
#![forbid(unsafe_code)]

pub mod analysis_worker;
pub mod bench;
pub mod browser;
pub mod clients;
pub mod fault_proxy;
pub mod measure;
pub mod proxy;
pub mod redis;
pub mod run_local;
pub mod script;
pub mod sentinel;
pub mod temp_dir;
pub mod tmux;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod lobby;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for one expected message before failing.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Path of a workspace binary built by cargo (`stoa-server`, `stoa`).
pub fn binary(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("test executable path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Builds the server binary once per test process (`cargo test` alone does not build other
/// packages' binaries).
pub fn build_binaries() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf();
        // The client too: a test that connects and only then starts `stoa` must not
        // wait a minute-long first build with its sockets unread (the server closes idle
        // connections).
        let mut args = vec!["build", "-p", "stoa-server", "-p", "stoa-cli", "--bins"];
        if !cfg!(debug_assertions) {
            // An optimised tool (the load generator) drives the optimised server.
            args.push("--release");
        }
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(&root).args(args);
        clean_cargo_env(&mut cmd);
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "building stoa-server and stoa failed");
    });
}

/// Removes what `cargo test` set for this test process (package variables, the library
/// path) from a nested `cargo build`: build scripts that watch the environment would
/// otherwise see a change and rebuild their crates on every test run.
pub fn clean_cargo_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else {
            continue;
        };
        let keep = matches!(key, "CARGO" | "CARGO_HOME" | "CARGO_TARGET_DIR")
            || key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_REGISTRIES_")
            || key.starts_with("CARGO_NET_");
        if (key.starts_with("CARGO_") && !keep) || key == "LD_LIBRARY_PATH" {
            cmd.env_remove(key);
        }
    }
}

/// Flags for a server that does not get in the way of scripted clients.
pub const LOOSE: &[&str] = &[
    "--rate-limit",
    "100000",
    "--ip-conn-limit",
    "100000",
    "--spectator-batch-ms",
    "200",
    "--lobby-batch-ms",
    "100",
];

/// A running `stoa-server` child process, killed on drop.
pub struct Server {
    /// The process, when this test started it (see [`Server::attach`]).
    child: Option<Child>,
    pid: u32,
    /// The bound address.
    pub addr: SocketAddr,
}

impl Server {
    /// Starts the server with [`LOOSE`] limits.
    pub fn start() -> Server {
        Server::start_with(LOOSE)
    }

    /// Starts the server with extra flags (after `--listen 127.0.0.1:0`).
    pub fn start_with(args: &[&str]) -> Server {
        Server::spawn(&[], args, None, "info")
    }

    /// As [`Server::start_with`], run through a wrapper command that execs the server,
    /// such as `["prlimit", "--nofile=1024:1024"]` for a server with few file descriptors.
    pub fn start_under(wrapper: &[&str], args: &[&str]) -> Server {
        Server::spawn(wrapper, args, None, "info")
    }

    /// As [`Server::start_with`], with `info` logs written to the file `log` (the server's
    /// stderr), for tests of what operators read.
    pub fn start_logging(args: &[&str], log: &std::path::Path) -> Server {
        Server::spawn(&[], args, Some(log), "info")
    }

    /// As [`Server::start_logging`], at another level (`debug`: what must never hold a
    /// secret).
    pub fn start_logging_at(args: &[&str], log: &std::path::Path, level: &str) -> Server {
        Server::spawn(&[], args, Some(log), level)
    }

    fn spawn(
        wrapper: &[&str],
        args: &[&str],
        log: Option<&std::path::Path>,
        log_level: &str,
    ) -> Server {
        // Another build of the server (the load generator compares two versions).
        let bin = match std::env::var_os("STOA_SERVER_BIN") {
            Some(bin) => PathBuf::from(bin),
            None => {
                build_binaries();
                binary("stoa-server")
            }
        };
        let mut cmd = match wrapper.split_first() {
            Some((program, wrapper_args)) => {
                let mut cmd = Command::new(program);
                cmd.args(wrapper_args).arg(bin);
                cmd
            }
            None => Command::new(bin),
        };
        cmd.args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env(
                "RUST_LOG",
                std::env::var("STOA_TEST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdout(Stdio::piped())
            .stdin(Stdio::null());
        // `STOA_TEST_LOGS=<dir>`: every server a test starts writes its log to a file of its
        // own there (named by start order and node id), to read what each node of a failed
        // cluster test did.
        let kept = std::env::var_os("STOA_TEST_LOGS").map(|dir| {
            static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let node = args
                .iter()
                .position(|a| *a == "--node-id")
                .and_then(|i| args.get(i + 1))
                .unwrap_or(&"server");
            PathBuf::from(dir).join(format!("{}-{n}-{node}.log", std::process::id()))
        });
        if let Some(path) = log.or(kept.as_deref()) {
            let file = std::fs::File::create(path).expect("create the log file");
            // A test that reads the log reads `info` lines, whatever the run's level.
            let level = match log {
                Some(_) => log_level.to_string(),
                None => std::env::var("STOA_TEST_LOG").unwrap_or_else(|_| "info".into()),
            };
            cmd.env("RUST_LOG", level).stderr(file);
        } else if std::env::var_os("STOA_TEST_LOG").is_none() {
            cmd.stderr(Stdio::null());
        }
        let mut child = cmd.spawn().expect("spawn stoa-server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so the child never blocks on a full pipe.
            for _ in lines {}
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("server printed its address");
        let addr = line
            .strip_prefix("stoa-server listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .trim()
            .parse()
            .expect("address");
        let pid = child.id();
        Server {
            child: Some(child),
            pid,
            addr,
        }
    }

    /// The server's process id (for /proc readings and CPU pinning).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The websocket URL.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// A plain HTTP GET: (status, body).
    pub fn http_get(&self, path: &str) -> (u16, String) {
        self.http_get_as(path, None)
    }

    /// A plain HTTP GET, with `Authorization: Bearer <token>` when a token is given.
    pub fn http_get_as(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let mut s = std::net::TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).ok();
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{auth}Connection: close\r\n\r\n",
            self.addr
        )
        .expect("write");
        let mut buf = String::new();
        s.read_to_string(&mut buf).expect("read");
        let status = buf
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = buf
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// A game document through `GET /api/games/{id}` (with `?code=` when given), as
    /// `game.snapshot` carries it: a finished game's added `record` member is left out.
    pub fn api_game(&self, id: &str, code: Option<&str>) -> (u16, Value) {
        let (status, mut doc) = self.api_game_full(id, code);
        if let Value::Object(m) = &mut doc {
            m.remove("record");
        }
        (status, doc)
    }

    /// `GET /api/games/{id}` as served, `record` member included.
    pub fn api_game_full(&self, id: &str, code: Option<&str>) -> (u16, Value) {
        let path = match code {
            Some(c) => format!("/api/games/{id}?code={c}"),
            None => format!("/api/games/{id}"),
        };
        let (status, body) = self.http_get(&path);
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// The `ratings_after` of a rated game's record, asked of `GET /api/games/{id}` until
    /// the record is stored: the record is written a moment after the game's end is sent.
    /// `Null` when it has not come within ten seconds.
    pub fn ratings_after(&self, id: &str, code: Option<&str>) -> Value {
        for _ in 0..100 {
            let (_, full) = self.api_game_full(id, code);
            if full["record"]["ratings_after"].is_object() {
                return full["record"]["ratings_after"].clone();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Value::Null
    }

    /// Kills the process with SIGKILL (no shutdown at all) and waits for it.
    pub fn kill9(&mut self) {
        match &mut self.child {
            Some(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            None => signal(self.pid, "-KILL"),
        }
    }

    /// A server some other program started (a script), by its address and process id; it
    /// is not killed on drop.
    pub fn attach(addr: SocketAddr, pid: u32) -> Server {
        Server {
            child: None,
            pid,
            addr,
        }
    }

    /// Sends SIGTERM (graceful shutdown) and waits for the process to exit; its exit status
    /// when this test started it.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        for _ in 0..200 {
            match &mut self.child {
                Some(child) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Some(status);
                    }
                }
                None => {
                    if !std::path::Path::new(&format!("/proc/{}", self.pid)).exists() {
                        return None;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let child = self.child.as_mut()?;
        let _ = child.kill();
        child.wait().ok()
    }
}

/// Sends a signal (`-TERM`, `-KILL`, `-STOP`, ...) to a process. `-STOP` returns only
/// once every thread of the process has stopped: the kernel wakes one thread to start the
/// stop, and on a loaded machine the others ran on meanwhile (a node "paused" by a test
/// still answered a request sent after the signal, CI's cluster test of a lost command).
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
    if sig == "-STOP" {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !all_threads_stopped(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Whether every thread of `pid` is stopped (`T` in `/proc/<pid>/task/*/stat`) or has
/// exited; also true when the process is gone: there is nothing left to wait for.
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // `pid (comm) S ...`: the state follows the last `)` (a name may hold one).
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        matches!(state, None | Some('T' | 't' | 'Z' | 'X'))
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A websocket test client with a queue of messages received but not yet consumed.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Messages received while waiting for something else, in arrival order.
    pub pending: VecDeque<Value>,
    next_rid: i64,
    /// Player id from `welcome`.
    pub player_id: String,
    /// Token from `welcome`.
    pub token: String,
    /// The `welcome` message.
    pub welcome: Value,
}

impl Client {
    /// Opens a websocket (no hello yet).
    pub async fn connect(server: &Server) -> Client {
        Client::connect_with_window(server, None).await
    }

    /// Connects and says hello as a new guest, with a receive buffer of `bytes` (the
    /// kernel doubles it): a client that stops reading fills it, and then the server's
    /// send buffer, within a few kilobytes.
    pub async fn guest_with_window(server: &Server, name: &str, bytes: u32) -> Client {
        let mut c = Client::connect_with_window(server, Some(bytes)).await;
        let w = c
            .request(json!({"t":"hello","protocol":1,"name":name}))
            .await;
        c.set_welcome(w);
        c
    }

    async fn connect_with_window(server: &Server, recv_buffer: Option<u32>) -> Client {
        let socket = tokio::net::TcpSocket::new_v4().expect("tcp socket");
        if let Some(bytes) = recv_buffer {
            socket.set_recv_buffer_size(bytes).expect("SO_RCVBUF");
        }
        let tcp = socket.connect(server.addr).await.expect("tcp connect");
        tcp.set_nodelay(true).expect("nodelay");
        let (ws, _) = tokio_tungstenite::client_async(server.ws_url(), MaybeTlsStream::Plain(tcp))
            .await
            .expect("websocket connect");
        Client {
            ws,
            pending: VecDeque::new(),
            next_rid: 1,
            player_id: String::new(),
            token: String::new(),
            welcome: Value::Null,
        }
    }

    /// Connects and says hello as a new guest.
    pub async fn guest(server: &Server, name: &str) -> Client {
        let mut c = Client::connect(server).await;
        let w = c
            .request(json!({"t":"hello","protocol":1,"name":name}))
            .await;
        c.set_welcome(w);
        c
    }

    /// Connects and says hello with a token.
    pub async fn with_token(server: &Server, token: &str) -> Client {
        let mut c = Client::connect(server).await;
        let w = c
            .request(json!({"t":"hello","protocol":1,"token":token}))
            .await;
        c.set_welcome(w);
        c
    }

    fn set_welcome(&mut self, w: Value) {
        assert_eq!(w["t"], "welcome", "hello failed: {w}");
        self.player_id = w["player"]["id"].as_str().expect("id").to_string();
        self.token = w["token"].as_str().expect("token").to_string();
        self.welcome = w;
    }

    /// Sends a JSON message.
    pub async fn send(&mut self, v: Value) {
        self.send_raw(&v.to_string()).await;
    }

    /// Sends a raw text frame.
    pub async fn send_raw(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    /// Sends a binary frame.
    pub async fn send_binary(&mut self, data: Vec<u8>) {
        self.ws
            .send(Message::Binary(data.into()))
            .await
            .expect("send");
    }

    /// The next frame from the socket (not the pending queue): `Ok(json)`, or `Err(close
    /// code)` when the server closed (0 without a close frame).
    pub async fn read_frame(&mut self) -> Result<Value, u16> {
        loop {
            let next = tokio::time::timeout(TIMEOUT, self.ws.next())
                .await
                .expect("timed out waiting for a frame");
            match next {
                Some(Ok(Message::Text(t))) => {
                    return Ok(serde_json::from_str(t.as_str()).expect("server sent JSON"))
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(frame.map(|f| u16::from(f.code)).unwrap_or(0))
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Err(0),
            }
        }
    }

    /// The next message: from the pending queue first, then the socket. Panics on close.
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.pending.pop_front() {
            return v;
        }
        match self.read_frame().await {
            Ok(v) => v,
            Err(code) => panic!("connection closed ({code})"),
        }
    }

    /// The first message (pending or new) matching `pred`; others stay queued in order.
    pub async fn recv_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i).expect("index");
        }
        loop {
            match self.read_frame().await {
                Ok(v) if pred(&v) => return v,
                Ok(v) => self.pending.push_back(v),
                Err(code) => panic!("connection closed ({code}) while waiting"),
            }
        }
    }

    /// The first `game.crowd` of a game (pending or new) that satisfies `pred`; the game's
    /// earlier crowds are dropped. The crowd is unversioned (protocol/docs/PROTOCOL.md version 2).
    pub async fn crowd_where(
        &mut self,
        game_id: &str,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Value {
        loop {
            let g = game_id.to_string();
            let c = self
                .recv_where(move |m| m["t"] == "game.crowd" && m["game_id"] == g.as_str())
                .await;
            if pred(&c) {
                return c;
            }
        }
    }

    /// The newest `game.crowd` of a game already received (all of them are taken out of
    /// the pending queue).
    pub fn last_crowd(&mut self, game_id: &str) -> Option<Value> {
        let mut last = None;
        self.pending.retain(|m| {
            let crowd = m["t"] == "game.crowd" && m["game_id"] == game_id;
            if crowd {
                last = Some(m.clone());
            }
            !crowd
        });
        last
    }

    /// Sends `text` as one message in `pieces` fragments (a text frame, then continuations),
    /// all in one write.
    pub async fn send_fragments(&mut self, text: &str, pieces: usize) {
        use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
        use tokio_tungstenite::tungstenite::protocol::frame::Frame;
        let bytes = text.as_bytes();
        let size = bytes.len().div_ceil(pieces.max(1));
        let chunks: Vec<&[u8]> = bytes.chunks(size.max(1)).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let opcode = if i == 0 {
                OpCode::Data(Data::Text)
            } else {
                OpCode::Data(Data::Continue)
            };
            let frame = Frame::message(chunk.to_vec(), opcode, i + 1 == chunks.len());
            self.ws.feed(Message::Frame(frame)).await.expect("feed");
        }
        self.ws.flush().await.expect("flush");
    }

    /// Waits until the server closes the connection; returns the close code (0 if none).
    /// Messages before the close are queued.
    pub async fn closed(&mut self) -> u16 {
        loop {
            match self.read_frame().await {
                Ok(v) => self.pending.push_back(v),
                Err(code) => {
                    // Answer the close handshake so the server need not wait for it.
                    let _ = self.ws.flush().await;
                    let _ = tokio::time::timeout(Duration::from_secs(1), self.ws.next()).await;
                    return code;
                }
            }
        }
    }

    /// A fresh request id.
    pub fn rid(&mut self) -> i64 {
        self.next_rid += 1;
        self.next_rid
    }

    /// The first of the moves `game.legal` lists for this client in `game_id` (the tests
    /// that need some legal move, not a particular one).
    pub async fn first_legal(&mut self, game_id: &str) -> String {
        let legal = self
            .request(json!({"t":"game.legal","game_id":game_id}))
            .await;
        legal["moves"][0]
            .as_str()
            .unwrap_or_else(|| panic!("no legal move: {legal}"))
            .to_string()
    }

    /// Sends a request with a fresh integer rid and returns its direct answer.
    pub async fn request(&mut self, mut v: Value) -> Value {
        let rid = self.rid();
        v["rid"] = json!(rid);
        self.send(v).await;
        self.recv_where(|m| m["rid"] == json!(rid)).await
    }

    /// Like [`Client::request`], but a closed connection is `Err(close code)` (0 without
    /// one) instead of a panic: for tests that kill the server under their clients.
    pub async fn try_request(&mut self, mut v: Value) -> Result<Value, u16> {
        let rid = self.rid();
        v["rid"] = json!(rid);
        self.ws
            .send(Message::Text(v.to_string().into()))
            .await
            .map_err(|_| 0u16)?;
        if let Some(i) = self.pending.iter().position(|m| m["rid"] == json!(rid)) {
            return Ok(self.pending.remove(i).expect("index"));
        }
        loop {
            match self.read_frame().await {
                Ok(m) if m["rid"] == json!(rid) => return Ok(m),
                Ok(m) => self.pending.push_back(m),
                Err(code) => return Err(code),
            }
        }
    }

    /// The next `game.diff` of a game (pending or new).
    pub async fn next_diff(&mut self, game_id: &str) -> Value {
        let g = game_id.to_string();
        self.recv_where(move |m| m["t"] == "game.diff" && m["game_id"] == g.as_str())
            .await
    }

    /// Drops queued messages.
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// Closes the websocket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// A game document kept up to date by applying diffs, checking the seq chain.
#[derive(Clone, Debug)]
pub struct Tracked {
    /// Game id.
    pub game_id: String,
    /// Current seq.
    pub seq: u64,
    /// Current document.
    pub doc: Value,
    /// Number of diffs applied.
    pub diffs: usize,
}

impl Tracked {
    /// From a `game.snapshot` message.
    pub fn from_snapshot(snap: &Value) -> Tracked {
        assert_eq!(snap["t"], "game.snapshot", "expected a snapshot: {snap}");
        Tracked {
            game_id: snap["game_id"].as_str().expect("game_id").to_string(),
            seq: snap["seq"].as_u64().expect("seq"),
            doc: snap["doc"].clone(),
            diffs: 0,
        }
    }

    /// Applies a `game.diff`; panics unless it is exactly the next seq and applies cleanly.
    pub fn apply(&mut self, diff: &Value) {
        assert_eq!(diff["t"], "game.diff");
        assert_eq!(diff["game_id"], self.game_id.as_str());
        let seq = diff["seq"].as_u64().expect("seq");
        assert_eq!(seq, self.seq + 1, "gap or repeat in seq: {diff}");
        let patch: json_patch::Patch =
            serde_json::from_value(diff["patch"].clone()).expect("patch is RFC 6902");
        json_patch::patch(&mut self.doc, &patch).expect("patch applies");
        self.seq = seq;
        self.diffs += 1;
    }

    /// Applies the diffs of this game already queued in a client's pending queue.
    pub fn absorb_pending(&mut self, client: &mut Client) {
        let game_id = self.game_id.clone();
        let mut rest = std::collections::VecDeque::new();
        while let Some(m) = client.pending.pop_front() {
            if m["t"] == "game.diff" && m["game_id"] == game_id.as_str() {
                self.apply(&m);
            } else {
                rest.push_back(m);
            }
        }
        client.pending = rest;
    }

    /// Applies every queued diff of this game from a client's pending queue, and keeps
    /// reading until the tracked seq reaches `seq`.
    pub async fn catch_up(&mut self, client: &mut Client, seq: u64) {
        while self.seq < seq {
            let d = client.next_diff(&self.game_id).await;
            self.apply(&d);
        }
    }
}

/// Side name of a player in a document.
pub fn side_of(doc: &Value, player_id: &str) -> Option<String> {
    doc["players"]
        .as_object()?
        .iter()
        .find(|(_, p)| p["id"] == player_id)
        .map(|(side, _)| side.clone())
}

/// Small options per kind so scripted games end quickly.
pub fn quick_options(kind: &str) -> Value {
    match kind {
        "unane" => json!({"width": 4, "height": 3}),
        "akron" => json!({"size": 4}),
        "staku" => json!({"max_stack": 2}),
        _ => json!({}),
    }
}

/// Asks for a computer opponent (`bot.play` as `ask`) until one is free: a serving bot
/// takes a moment to say `bot.serve` (and, in a cluster, to be listed for the other nodes).
/// Each refusal must be `unavailable`; returns the `room` answer.
pub async fn play_the_computer(client: &mut Client, ask: &Value, within: Duration) -> Value {
    let deadline = std::time::Instant::now() + within;
    loop {
        let r = client.request(ask.clone()).await;
        if r["t"] == "room" {
            return r;
        }
        assert_eq!(r["code"], "unavailable", "{r}");
        assert!(
            std::time::Instant::now() < deadline,
            "no computer opponent within {within:?}: {r}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A deterministic pseudo-random choice (splitmix64 of a seed and a step).
pub fn pick(seed: u64, step: u64, n: usize) -> usize {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(step.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % n.max(1) as u64) as usize
}

/// Two players seated in one game, each tracking the document from its own diffs.
pub struct Table {
    /// The host.
    pub host: Client,
    /// The joiner.
    pub guest: Client,
    /// Room code.
    pub code: String,
    /// Game id.
    pub game_id: String,
    /// The host's view.
    pub host_doc: Tracked,
    /// Move choice: when set, a mover steps back (`y-x` after its own `x-y`) whenever it
    /// can, which ends games with no natural end (Akunur) by repetition.
    pub repeat_back: bool,
    /// The guest's view.
    pub guest_doc: Tracked,
}

impl Table {
    /// Host creates a room (`visibility`), guest joins; both receive `game.started` and a
    /// snapshot.
    pub async fn open(server: &Server, kind: &str, options: Value, visibility: &str) -> Table {
        Table::open_with_clock(server, kind, options, json!({"kind":"none"}), visibility).await
    }

    /// As [`Table::open`], with a `clock` request object.
    pub async fn open_with_clock(
        server: &Server,
        kind: &str,
        options: Value,
        clock: Value,
        visibility: &str,
    ) -> Table {
        Table::open_across(server, server, kind, options, clock, visibility).await
    }

    /// As [`Table::open_with_clock`], the host connected to one server and the guest to
    /// another (nodes of a cluster).
    pub async fn open_across(
        host_server: &Server,
        guest_server: &Server,
        kind: &str,
        options: Value,
        clock: Value,
        visibility: &str,
    ) -> Table {
        let mut host = Client::guest(host_server, "host").await;
        let mut guest = Client::guest(guest_server, "guest").await;
        let room = host
            .request(json!({"t":"room.create","kind":kind,"options":options,
                "clock":clock,"rated":false,"visibility":visibility,"side":"random"}))
            .await;
        assert_eq!(room["t"], "room", "room.create failed: {room}");
        let code = room["room"]["code"].as_str().expect("code").to_string();
        let joined = guest.request(json!({"t":"room.join","code":code})).await;
        assert_eq!(joined["t"], "room", "room.join failed: {joined}");
        let mut docs = Vec::new();
        let mut game_id = String::new();
        for c in [&mut host, &mut guest] {
            let started = c.recv_where(|m| m["t"] == "game.started").await;
            game_id = started["game_id"].as_str().expect("game_id").to_string();
            let snap = c.recv_where(|m| m["t"] == "game.snapshot").await;
            let doc = Tracked::from_snapshot(&snap);
            assert_eq!(
                side_of(&doc.doc, &c.player_id).as_deref(),
                started["side"].as_str()
            );
            docs.push(doc);
        }
        let guest_doc = docs.pop().expect("doc");
        let host_doc = docs.pop().expect("doc");
        Table {
            host,
            guest,
            code,
            game_id,
            host_doc,
            guest_doc,
            repeat_back: false,
        }
    }

    /// The client whose side is to act (per the host's view), or `None` once ended.
    pub fn to_act_is_host(&self) -> Option<bool> {
        let side = self.host_doc.doc["to_act"].as_str()?;
        Some(self.host_doc.doc["players"][side]["id"] == self.host.player_id.as_str())
    }

    /// Plays one move by the side to act (chosen from `game.legal` with `pick(seed, ply)`),
    /// then brings both views up to the new seq. Returns the move.
    pub async fn step(&mut self, seed: u64) -> Option<String> {
        let host_acts = self.to_act_is_host()?;
        let game_id = self.game_id.clone();
        let ply = self.host_doc.doc["moves"].as_array().map_or(0, Vec::len) as u64;
        let own_last = (ply >= 2)
            .then(|| {
                self.host_doc.doc["moves"][ply as usize - 2]
                    .as_str()
                    .map(str::to_string)
            })
            .flatten();
        let repeat_back = self.repeat_back;
        let (mover, mover_doc) = if host_acts {
            (&mut self.host, &mut self.host_doc)
        } else {
            (&mut self.guest, &mut self.guest_doc)
        };
        let legal = mover
            .request(json!({"t":"game.legal","game_id":game_id}))
            .await;
        assert_eq!(legal["t"], "legal", "{legal}");
        let moves = legal["moves"].as_array().expect("moves").clone();
        assert!(!moves.is_empty(), "no legal moves while the game is on");
        let mut mv = moves[pick(seed, ply, moves.len())]
            .as_str()
            .expect("notation")
            .to_string();
        if repeat_back {
            if let Some((from, to)) = own_last.as_deref().and_then(|m| m.split_once('-')) {
                let back = format!("{to}-{from}");
                if moves.iter().any(|m| m == back.as_str()) {
                    mv = back;
                }
            }
        }
        let ok = loop {
            mover_doc.absorb_pending(mover);
            let ok = mover
                .request(json!({"t":"game.move","game_id":game_id,"move":mv,"seq":mover_doc.seq}))
                .await;
            if ok["code"] == "stale_seq" {
                // A spectator-count or presence diff slipped in: catch up and retry.
                let d = mover.next_diff(&game_id).await;
                mover_doc.apply(&d);
                continue;
            }
            break ok;
        };
        assert_eq!(ok["t"], "ok", "move {mv} failed: {ok}");
        let seq = ok["seq"].as_u64().expect("seq");
        // The documented order: the diff is queued before the ok.
        assert!(
            mover
                .pending
                .iter()
                .any(|m| m["t"] == "game.diff" && m["seq"] == seq),
            "the mover's diff must arrive before its ok"
        );
        self.host_doc.catch_up(&mut self.host, seq).await;
        self.guest_doc.catch_up(&mut self.guest, seq).await;
        Some(mv)
    }

    /// Plays until the game ends by rule (or `max` moves, then the side to act resigns).
    /// Returns the number of moves played.
    pub async fn play_out(&mut self, seed: u64, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            if self.step(seed).await.is_none() {
                return n;
            }
            n += 1;
        }
        if self.to_act_is_host().is_some() {
            let game_id = self.game_id.clone();
            let ok = self
                .host
                .request(json!({"t":"game.resign","game_id":game_id}))
                .await;
            assert_eq!(ok["t"], "ok");
            let seq = ok["seq"].as_u64().expect("seq");
            self.host_doc.catch_up(&mut self.host, seq).await;
            self.guest_doc.catch_up(&mut self.guest, seq).await;
        }
        n
    }

    /// A fresh snapshot through a player's connection (players do not count as spectators).
    pub async fn snapshot(&mut self) -> Value {
        let game_id = self.game_id.clone();
        let snap = self
            .host
            .request(json!({"t":"game.watch","game_id":game_id}))
            .await;
        assert_eq!(snap["t"], "game.snapshot", "{snap}");
        snap
    }
}

/// Plays one quick public Ūnane game (4x3, no clock) that `winner` wins: `loser` hosts as
/// black and moves first, `winner` answers, then `loser` resigns (both sides act first: a
/// game ended before that is aborted, which rates nothing). Returns the game id once its
/// record is stored (for a rated game: with the new ratings), so the next game starts from
/// them.
pub async fn resigned_game(
    server: &Server,
    loser: &mut Client,
    winner: &mut Client,
    rated: bool,
) -> String {
    let options = quick_options("unane");
    let room = loser
        .request(json!({"t":"room.create","kind":"unane","options":options,
            "clock":{"kind":"none"},"rated":rated,"visibility":"public","side":"black"}))
        .await;
    assert_eq!(room["t"], "room", "room.create failed: {room}");
    let code = room["room"]["code"].as_str().expect("code").to_string();
    let joined = winner.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "room.join failed: {joined}");
    let started = loser.recv_where(|m| m["t"] == "game.started").await;
    winner.recv_where(|m| m["t"] == "game.started").await;
    let id = started["game_id"].as_str().expect("game id").to_string();
    let mut game = stoa_protocol::kind("unane")
        .expect("unane")
        .start(&options)
        .expect("start");
    for c in [&mut *loser, &mut *winner] {
        let mv = game
            .legal_notations()
            .into_iter()
            .find(|m| m != "swap")
            .expect("a move");
        game.play(&mv).expect("legal");
        let ok = c
            .request(json!({"t":"game.move","game_id":id,"move":mv}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
    }
    let ok = loser.request(json!({"t":"game.resign","game_id":id})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let (_, full) = server.api_game_full(&id, None);
        if full["record"].is_object() {
            assert_eq!(full["record"]["ratings_after"].is_object(), rated, "{full}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no record of {id}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    loser.clear();
    winner.clear();
    id
}

/// Plays rated games between `a` and `b` (`a` wins two of every three) until both hold an
/// established (not provisional) Ūnane rating, as `GET /api/players/<id>` says; returns
/// the games' ids in order. Two newcomers get there in about sixteen games.
pub async fn establish_ratings(server: &Server, a: &mut Client, b: &mut Client) -> Vec<String> {
    let mut ids = Vec::new();
    let established = |id: &str| {
        let (status, body) = server.http_get(&format!("/api/players/{id}"));
        assert_eq!(status, 200, "{body}");
        let page: Value = serde_json::from_str(&body).expect("json");
        page["ratings"]["unane"]["provisional"] == false
    };
    while !(established(&a.player_id) && established(&b.player_id)) {
        assert!(ids.len() < 40, "no established ratings after 40 games");
        let id = if ids.len() % 3 == 2 {
            resigned_game(server, a, b, true).await
        } else {
            resigned_game(server, b, a, true).await
        };
        ids.push(id);
    }
    ids
}
