//! Redis for the end-to-end tests: a private `redis-server` per test (free port, temporary
//! directory, AOF on), which a test can kill -9 and restart on the same port and data; and
//! [`Duel`], a scripted pair of players that survives its server being killed.
//!
//! Why private instances: tests kill and restart Redis, so they must never touch a shared
//! instance (the machine's 6379 one in particular); each test owns its port and directory.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::{pick, Client, Server, Table, LOOSE};

/// A private `redis-server` child process, killed (and its directory removed) on drop.
pub struct RedisServer {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its data directory (the AOF lives here).
    pub dir: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Where the instances keep their AOF: `/dev/shm` when it is there. Why: every write is
/// fsynced (`appendfsync always`), and on a slow CI disk an fsync can stall Redis past the
/// servers' 500 ms timeout, which the servers rightly report as an outage — failing tests
/// that are not about one. A file in memory still survives a kill -9 of Redis, which is
/// what the tests kill.
fn data_root() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    let writable = std::fs::metadata(&shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    // A container's /dev/shm can be as small as 64 MiB (Docker's default), shared with the
    // browser tests' Chromium: a full one would fail Redis's writes instead.
    if writable && free_kib(&shm).is_some_and(|kib| kib >= 512 * 1024) {
        shm
    } else {
        std::env::temp_dir()
    }
}

/// Free space of a file system in KiB, as `df` reports it.
fn free_kib(path: &std::path::Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
}

impl RedisServer {
    /// Starts `redis-server` on a free port with a fresh temporary directory, AOF on
    /// (`appendfsync always`, so even a kill -9 of Redis loses no acknowledged write), no
    /// RDB snapshots.
    pub fn start() -> RedisServer {
        RedisServer::start_in(data_root())
    }

    /// As [`RedisServer::start`], with the AOF on the disk (the temporary directory) even
    /// where `/dev/shm` has room: for the load generator, whose Redis figures must include
    /// the `fsync` a deployment pays.
    pub fn start_on_disk() -> RedisServer {
        RedisServer::start_in(std::env::temp_dir())
    }

    fn start_in(root: PathBuf) -> RedisServer {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = root.join(format!(
            "stoa-redis-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary redis directory");
        let mut r = RedisServer {
            child: None,
            port: free_port(),
            dir,
        };
        r.spawn();
        r
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--dir",
                self.dir.to_str().expect("utf-8 path"),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--daemonize",
                "no",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (is it installed?)");
        self.child = Some(child);
        self.wait_ready();
    }

    /// Waits until the server answers PING with PONG (it answers LOADING while it replays
    /// its AOF).
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.command("PING").is_some_and(|r| r.starts_with("+PONG")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not start", self.port);
    }

    /// Sends one inline command and returns the first chunk of the raw reply.
    pub fn command(&self, cmd: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).ok()?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the process with SIGKILL (no shutdown, no final save) and waits for it.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and directory (it reloads its AOF).
    pub fn restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    /// Server flags for a `stoa-server` over this Redis with a key prefix (plus
    /// [`LOOSE`] limits).
    pub fn server_args(&self, prefix: &str) -> Vec<String> {
        let mut args: Vec<String> = LOOSE.iter().map(|s| s.to_string()).collect();
        args.extend([
            "--redis".to_string(),
            self.url(),
            "--redis-prefix".to_string(),
            prefix.to_string(),
            "--redis-timeout-ms".to_string(),
            "500".to_string(),
        ]);
        args
    }

    /// Starts a `stoa-server` over this Redis with a key prefix.
    pub fn start_server(&self, prefix: &str) -> Server {
        let args = self.server_args(prefix);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start_with(&refs)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/health` of a server: (status code, body).
pub fn health(server: &Server) -> (u16, Value) {
    let (status, body) = server.http_get("/health");
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Polls `/health` until it answers `code` (or panics after `within`).
pub fn wait_health(server: &Server, code: u16, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (status, body) = health(server);
        if status == code {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "/health stayed {status} {body}, expected {code}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What one [`Duel::step`] did.
#[derive(Debug)]
pub enum Step {
    /// A move was acknowledged.
    Moved,
    /// The game is over (no legal moves).
    Ended,
    /// The server refused (the error message), e.g. `unavailable` while Redis is down.
    Refused(Value),
    /// The connection closed (the server died).
    Closed,
}

/// Two scripted players in one game that remember exactly which moves were acknowledged,
/// at which ply, and which move was in flight when the server stopped answering.
pub struct Duel {
    /// The host's connection.
    pub host: Client,
    /// The guest's connection.
    pub guest: Client,
    /// Host token (to reconnect).
    pub host_token: String,
    /// Guest token.
    pub guest_token: String,
    /// Game id.
    pub game_id: String,
    /// Room code.
    pub code: String,
    /// The game's moves as last known (acknowledged moves, and after a resync the
    /// server's list).
    pub moves: Vec<String>,
    /// Every acknowledged move with its ply.
    pub acked: Vec<(usize, String)>,
    /// A move sent whose answer never came or was an error: (ply, move).
    pub in_flight: Option<(usize, String)>,
    seed: u64,
    host_moves_next: bool,
    needs_resync: bool,
}

impl Duel {
    /// A private room game between two new guests.
    pub async fn open(server: &Server, kind: &str, options: Value, seed: u64) -> Duel {
        let t = Table::open(server, kind, options, "private").await;
        let mut d = Duel {
            host_token: t.host.token.clone(),
            guest_token: t.guest.token.clone(),
            host: t.host,
            guest: t.guest,
            game_id: t.game_id,
            code: t.code,
            moves: Vec::new(),
            acked: Vec::new(),
            in_flight: None,
            seed,
            host_moves_next: true,
            needs_resync: false,
        };
        d.host.clear();
        d.guest.clear();
        d
    }

    /// Plays one move for the side to act (chosen with `pick(seed, ply)` from
    /// `game.legal`); the mover is whoever the server accepts.
    pub async fn step(&mut self) -> Step {
        if self.needs_resync && self.resync().await.is_ok() {
            self.needs_resync = false;
        }
        let game_id = self.game_id.clone();
        let legal = match self
            .host
            .try_request(json!({"t":"game.legal","game_id":game_id}))
            .await
        {
            Ok(v) => v,
            Err(_) => return Step::Closed,
        };
        if legal["t"] != "legal" {
            return Step::Refused(legal);
        }
        let options = legal["moves"].as_array().cloned().unwrap_or_default();
        if options.is_empty() {
            return Step::Ended;
        }
        let ply = self.moves.len();
        let mv = options[pick(self.seed, ply as u64, options.len())]
            .as_str()
            .expect("notation")
            .to_string();
        self.in_flight = Some((ply, mv.clone()));
        for host in [self.host_moves_next, !self.host_moves_next] {
            let c = if host {
                &mut self.host
            } else {
                &mut self.guest
            };
            let r = match c
                .try_request(json!({"t":"game.move","game_id":game_id,"move":mv}))
                .await
            {
                Ok(v) => v,
                Err(_) => return Step::Closed,
            };
            if r["t"] == "ok" {
                // The move's ply, from its diff (queued before the ok): our view may lack
                // a move whose write was settled from the log after an outage.
                let seq = r["seq"].clone();
                let at = c
                    .pending
                    .iter()
                    .find(|m| m["t"] == "game.diff" && m["seq"] == seq)
                    .and_then(|d| ply_in_patch(&d["patch"], &mv));
                c.clear();
                let at = at.unwrap_or(ply);
                self.in_flight = None;
                self.acked.push((at, mv.clone()));
                if at == self.moves.len() {
                    self.moves.push(mv);
                } else {
                    self.needs_resync = true;
                }
                self.host_moves_next = !host;
                return Step::Moved;
            }
            c.clear();
            if r["code"] != "not_your_turn" {
                self.needs_resync = true;
                return Step::Refused(r);
            }
        }
        // Neither may move it: the game changed under our view (a settled write).
        self.needs_resync = true;
        Step::Refused(json!({"code": "not_your_turn", "move": mv}))
    }

    /// A fresh snapshot through the host; the known moves become the server's.
    pub async fn resync(&mut self) -> Result<Value, Value> {
        let game_id = self.game_id.clone();
        let snap = self
            .host
            .try_request(json!({"t":"game.watch","game_id":game_id}))
            .await
            .map_err(|code| json!({"closed": code}))?;
        self.host.clear();
        if snap["t"] != "game.snapshot" {
            return Err(snap);
        }
        self.moves = moves_of(&snap["doc"]);
        self.in_flight = None;
        Ok(snap["doc"].clone())
    }

    /// Both players reconnect with their tokens (after a server restart).
    pub async fn reconnect(&mut self, server: &Server) {
        self.host = Client::with_token(server, &self.host_token).await;
        self.guest = Client::with_token(server, &self.guest_token).await;
    }

    /// Whether a document's moves keep every acknowledged move at its ply.
    pub fn keeps_acked(&self, doc: &Value) -> bool {
        let moves = moves_of(doc);
        self.acked
            .iter()
            .all(|(ply, mv)| moves.get(*ply) == Some(mv))
    }
}

/// The index at which a patch adds `mv` to the document's `moves`.
fn ply_in_patch(patch: &Value, mv: &str) -> Option<usize> {
    patch.as_array()?.iter().find_map(|op| {
        let index = op["path"].as_str()?.strip_prefix("/moves/")?;
        (op["value"] == mv).then(|| index.parse().ok()).flatten()
    })
}

/// The `moves` of a game document.
pub fn moves_of(doc: &Value) -> Vec<String> {
    doc["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A private Redis Cluster of `masters` masters (no replicas), each a `redis-server` with
/// `cluster-enabled yes` on a free port and its own temporary directory; killed on drop.
pub struct RedisCluster {
    nodes: Vec<RedisClusterNode>,
}

struct RedisClusterNode {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts the servers, joins them into one cluster (`redis-cli --cluster create`) and
    /// waits until every node reports `cluster_state:ok`.
    pub fn start(masters: usize) -> RedisCluster {
        RedisCluster::start_in(masters, data_root())
    }

    /// As [`RedisCluster::start`], the AOFs on the disk (see
    /// [`RedisServer::start_on_disk`]).
    pub fn start_on_disk(masters: usize) -> RedisCluster {
        RedisCluster::start_in(masters, std::env::temp_dir())
    }

    fn start_in(masters: usize, root: PathBuf) -> RedisCluster {
        static N: AtomicU32 = AtomicU32::new(0);
        let mut nodes = Vec::new();
        for _ in 0..masters {
            let dir = root.join(format!(
                "stoa-redis-cluster-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temporary redis directory");
            let port = free_port();
            let child = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    dir.to_str().expect("utf-8 path"),
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--appendonly",
                    "yes",
                    "--appendfsync",
                    "always",
                    "--save",
                    "",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server (is it installed?)");
            nodes.push(RedisClusterNode { child, port, dir });
        }
        let cluster = RedisCluster { nodes };
        for n in &cluster.nodes {
            wait_port(n.port);
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for n in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", n.port));
        }
        let status = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run redis-cli --cluster create (redis-tools)");
        assert!(status.success(), "redis-cli --cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ok = cluster.nodes.iter().all(|n| {
                inline(n.port, "CLUSTER INFO").is_some_and(|i| i.contains("cluster_state:ok"))
            });
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "the redis cluster did not form");
            std::thread::sleep(Duration::from_millis(100));
        }
        cluster
    }

    /// Seed URLs, comma-separated (what `--redis` takes with `--redis-cluster`).
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("redis://127.0.0.1:{}/", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Server flags for a `stoa-server` over this cluster with a key prefix (plus
    /// [`LOOSE`] limits), as [`RedisServer::server_args`].
    pub fn server_args(&self, prefix: &str) -> Vec<String> {
        let mut args: Vec<String> = LOOSE.iter().map(|s| s.to_string()).collect();
        args.extend([
            "--redis".to_string(),
            self.urls(),
            "--redis-cluster".to_string(),
            "--redis-prefix".to_string(),
            prefix.to_string(),
            "--redis-timeout-ms".to_string(),
            "500".to_string(),
        ]);
        args
    }

    /// The masters' ports.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            let _ = n.child.kill();
            let _ = n.child.wait();
            let _ = std::fs::remove_dir_all(&n.dir);
        }
    }
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while inline(port, "PING").is_none_or(|r| !r.contains("PONG")) {
        assert!(Instant::now() < deadline, "redis on {port} did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends one inline command to 127.0.0.1:port; the first chunk of the reply.
fn inline(port: u16, cmd: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
    let mut buf = [0u8; 8192];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}
