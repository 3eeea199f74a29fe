//! The system under test: N `stoa-server` nodes (`--cluster`) over one private Redis, each
//! node reaching Redis through its own [`FaultProxy`], and the controls the nemesis uses
//! on them (kill -9 and restart, SIGSTOP/SIGCONT, link modes, a Redis restart).
//!
//! Clients find the nodes through a shared [`Directory`]: a killed node has no address
//! until it is restarted (on a new port); a paused or cut-off node keeps its address, and
//! clients find out the hard way, by timeouts.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::fault_proxy::{FaultProxy, Mode};
use crate::redis::RedisServer;
use crate::{signal, Server, LOOSE};

/// The key prefix of the bench's deployment in its private Redis.
pub const PREFIX: &str = "fb";

/// The nodes' current addresses, shared with every client task.
#[derive(Clone, Default)]
pub struct Directory(Arc<RwLock<Vec<Option<SocketAddr>>>>);

impl Directory {
    /// Every node that has a running process: (index, address).
    pub fn live(&self) -> Vec<(usize, SocketAddr)> {
        let nodes = self.0.read().unwrap_or_else(|e| e.into_inner());
        nodes
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.map(|a| (i, a)))
            .collect()
    }

    fn set(&self, i: usize, addr: Option<SocketAddr>) {
        let mut nodes = self.0.write().unwrap_or_else(|e| e.into_inner());
        if nodes.len() <= i {
            nodes.resize(i + 1, None);
        }
        nodes[i] = addr;
    }
}

/// One node: its id, its proxy and its process (none while killed).
struct Node {
    id: String,
    proxy: FaultProxy,
    server: Option<Server>,
}

/// The cluster under test.
pub struct Cluster {
    /// The one real Redis (clients of the bench read it directly, never through a proxy).
    pub redis: RedisServer,
    nodes: Vec<Node>,
    lease_ms: u64,
    /// Where clients find the nodes.
    pub directory: Directory,
}

impl Cluster {
    /// Starts Redis, one proxy and one node per `n`, and waits until every node lists all
    /// the others.
    pub async fn start(n: usize, lease_ms: u64) -> Cluster {
        let redis = tokio::task::spawn_blocking(RedisServer::start)
            .await
            .expect("start redis");
        let mut cluster = Cluster {
            redis,
            nodes: Vec::new(),
            lease_ms,
            directory: Directory::default(),
        };
        for i in 0..n {
            let proxy = FaultProxy::start(cluster.redis.port)
                .await
                .expect("start a proxy");
            cluster.nodes.push(Node {
                id: format!("n{}", i + 1),
                proxy,
                server: None,
            });
            cluster.spawn(i).await;
        }
        cluster.wait_membership(Duration::from_secs(20)).await;
        cluster
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A node's id (`n1`...).
    pub fn id(&self, i: usize) -> &str {
        &self.nodes[i].id
    }

    /// The lease the nodes were started with.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// Starts node `i`'s process (same id, new port) and publishes its address.
    async fn spawn(&mut self, i: usize) {
        let node = &self.nodes[i];
        let mut args: Vec<String> = LOOSE.iter().map(|s| s.to_string()).collect();
        let lease = self.lease_ms.to_string();
        args.extend(
            [
                "--redis",
                &node.proxy.url(),
                "--redis-prefix",
                PREFIX,
                "--redis-timeout-ms",
                "500",
                "--cluster",
                "--node-id",
                &node.id,
                "--lease-ms",
                &lease,
                "--finished-linger-ms",
                "2000",
            ]
            .map(String::from),
        );
        // Starting blocks until the server prints its address.
        // `STOA_FAULTS_LOGS=<dir>`: each node process's `info` log in its own file there
        // (`n1-0.log`, `n1-1.log` after a restart...), to read what the nodes did in a
        // failing run.
        let log = std::env::var_os("STOA_FAULTS_LOGS").map(|dir| {
            let dir = std::path::PathBuf::from(dir);
            let _ = std::fs::create_dir_all(&dir);
            (0..)
                .map(|n| dir.join(format!("{}-{n}.log", node.id)))
                .find(|p| !p.exists())
                .expect("a free log name")
        });
        let server = tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            match log {
                Some(log) => Server::start_logging(&refs, &log),
                None => Server::start_with(&refs),
            }
        })
        .await
        .expect("start stoa-server");
        self.directory.set(i, Some(server.addr));
        self.nodes[i].server = Some(server);
    }

    /// Waits until every node's `/health` lists all nodes.
    pub async fn wait_membership(&self, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let mut all = true;
            for i in 0..self.len() {
                let n = self
                    .health(i)
                    .await
                    .map_or(0, |h| h["nodes"].as_array().map_or(0, Vec::len));
                all &= n == self.len();
            }
            if all || tokio::time::Instant::now() > deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills node `i` with SIGKILL; clients lose its address.
    pub async fn kill(&mut self, i: usize) {
        self.directory.set(i, None);
        if let Some(mut s) = self.nodes[i].server.take() {
            tokio::task::spawn_blocking(move || s.kill9())
                .await
                .expect("kill");
        }
    }

    /// Starts a killed node again (a new process with the same node id).
    pub async fn restart(&mut self, i: usize) {
        if self.nodes[i].server.is_none() {
            self.spawn(i).await;
        }
    }

    /// Sends a signal (`-STOP`, `-CONT`) to node `i`'s process.
    pub fn signal(&self, i: usize, sig: &str) {
        if let Some(s) = &self.nodes[i].server {
            signal(s.pid(), sig);
        }
    }

    /// Sets node `i`'s link to Redis.
    pub fn link(&self, i: usize, mode: Mode) {
        self.nodes[i].proxy.set(mode);
    }

    /// Kills Redis with SIGKILL (its AOF, fsynced on every write, keeps the data).
    pub fn kill_redis(&mut self) {
        tokio::task::block_in_place(|| self.redis.kill9());
    }

    /// Starts Redis again on the same port and data, waiting until it has loaded its AOF.
    /// (Blocking in place: needs the multi-threaded runtime, as the bench uses.)
    pub fn restart_redis(&mut self) {
        tokio::task::block_in_place(|| self.redis.restart());
    }

    /// Heals everything: every node running and resumed, every link passing.
    pub async fn heal_all(&mut self) {
        for i in 0..self.len() {
            self.signal(i, "-CONT");
            self.restart(i).await;
            self.link(i, Mode::Pass);
        }
    }

    /// The port of node `i`'s proxy (its view of Redis), for probing the link itself.
    pub fn link_port(&self, i: usize) -> u16 {
        self.nodes[i].proxy.port()
    }

    /// Node `i`'s address, if it runs.
    pub fn addr(&self, i: usize) -> Option<SocketAddr> {
        self.nodes[i].server.as_ref().map(|s| s.addr)
    }

    /// Node `i`'s `/health` body, if it answers within 2 s.
    pub async fn health(&self, i: usize) -> Option<Value> {
        let addr = self.addr(i)?;
        let (_, body) = http_get(addr, "/health", Duration::from_secs(2)).await?;
        serde_json::from_str(&body).ok()
    }

    /// A command on the real Redis (not through a proxy), within 2 s.
    pub async fn redis_query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Option<T> {
        redis_query(self.redis.port, cmd).await
    }
}

/// A command on the Redis at `127.0.0.1:port`, on a fresh connection (Redis may have been
/// restarted since the last one), within 2 s.
pub async fn redis_query<T: redis::FromRedisValue>(port: u16, cmd: &redis::Cmd) -> Option<T> {
    let query = async {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        cmd.query_async::<T>(&mut conn).await.ok()
    };
    tokio::time::timeout(Duration::from_secs(2), query)
        .await
        .ok()?
}

/// A plain HTTP/1.1 GET within `within`: (status, body); `None` on any failure (a paused
/// node accepts the connection and then answers nothing).
pub async fn http_get(addr: SocketAddr, path: &str, within: Duration) -> Option<(u16, String)> {
    let get = async {
        let mut s = TcpStream::connect(addr).await.ok()?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8_lossy(&buf).into_owned();
        let status = text.split_whitespace().nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((status, body))
    };
    tokio::time::timeout(within, get).await.ok()?
}
