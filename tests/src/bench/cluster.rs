//! The system under test: N `stoa-server` nodes (`--cluster`) over one private Redis, each
//! node reaching Redis through its own [`FaultProxy`], and the controls the nemesis uses
//! on them (kill -9 and restart, SIGSTOP/SIGCONT, link modes, a Redis restart).
//!
//! In Sentinel mode ([`Cluster::start`] with `min_replicas`) the nodes follow a primary
//! through three Sentinels instead ([`Topology`]: a primary and one replica), with
//! `--redis-min-replicas`; they connect wherever the Sentinels point, so there is no proxy
//! of a node's own and the link faults do not apply (a node can still be killed or
//! paused), and the store faults are those of a failover: a killed primary, a switchover,
//! a cut replication link.
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
use crate::sentinel::{Role, Topology};
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

/// One node: its id, its proxy (none in Sentinel mode) and its process (none while
/// killed).
struct Node {
    id: String,
    proxy: Option<FaultProxy>,
    server: Option<Server>,
}

/// Where the nodes keep their data.
pub enum Store {
    /// One Redis, each node through its own proxy.
    Single(RedisServer),
    /// A primary and a replica behind three Sentinels; the nodes answer a move only once
    /// `min_replicas` replicas hold it.
    Sentinel {
        /// The data servers and the Sentinels.
        topology: Topology,
        /// The nodes' `--redis-min-replicas`.
        min_replicas: u32,
    },
}

/// A promotion the nemesis caused: the data servers' indexes and when the new primary
/// first said it was one.
#[derive(Clone, Copy, Debug)]
pub struct Promotion {
    /// The primary before.
    pub old: usize,
    /// The primary after.
    pub new: usize,
    /// When `new` first answered `ROLE` as a primary.
    pub at: std::time::Instant,
}

/// The cluster under test.
pub struct Cluster {
    /// The store (clients of the bench read it directly, never through a proxy).
    pub store: Store,
    nodes: Vec<Node>,
    lease_ms: u64,
    /// Where clients find the nodes.
    pub directory: Directory,
}

impl Cluster {
    /// Starts Redis, one proxy and one node per `n`, and waits until every node lists all
    /// the others. With `min_replicas`, the store is a Sentinel [`Topology`] instead, and
    /// the nodes have no proxy.
    pub async fn start(n: usize, lease_ms: u64, min_replicas: Option<u32>) -> Cluster {
        let store = match min_replicas {
            None => Store::Single(
                tokio::task::spawn_blocking(RedisServer::start)
                    .await
                    .expect("start redis"),
            ),
            Some(min_replicas) => Store::Sentinel {
                topology: tokio::task::spawn_blocking(Topology::start)
                    .await
                    .expect("start the sentinel topology"),
                min_replicas,
            },
        };
        let mut cluster = Cluster {
            store,
            nodes: Vec::new(),
            lease_ms,
            directory: Directory::default(),
        };
        for i in 0..n {
            let proxy = match &cluster.store {
                Store::Single(redis) => {
                    Some(FaultProxy::start(redis.port).await.expect("start a proxy"))
                }
                Store::Sentinel { .. } => None,
            };
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
        match (&self.store, &node.proxy) {
            (
                Store::Sentinel {
                    topology,
                    min_replicas,
                },
                _,
            ) => args.extend([
                "--redis-sentinel".to_string(),
                topology.sentinel_list(),
                "--redis-min-replicas".to_string(),
                min_replicas.to_string(),
                "--redis-wait-ms".to_string(),
                "500".to_string(),
                // Above the `WAIT`, so that a write waiting for a replica is not taken
                // for a lost answer.
                "--redis-timeout-ms".to_string(),
                "1000".to_string(),
            ]),
            (Store::Single(_), Some(proxy)) => args.extend([
                "--redis".to_string(),
                proxy.url(),
                "--redis-timeout-ms".to_string(),
                "500".to_string(),
            ]),
            (Store::Single(redis), None) => args.extend([
                "--redis".to_string(),
                redis.url(),
                "--redis-timeout-ms".to_string(),
                "500".to_string(),
            ]),
        }
        args.extend(
            [
                "--redis-prefix",
                PREFIX,
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

    /// Sets node `i`'s link to Redis (nothing in Sentinel mode: no proxy).
    pub fn link(&self, i: usize, mode: Mode) {
        if let Some(p) = &self.nodes[i].proxy {
            p.set(mode);
        }
    }

    /// The nodes' `--redis-min-replicas` in Sentinel mode.
    pub fn min_replicas(&self) -> Option<u32> {
        match &self.store {
            Store::Single(_) => None,
            Store::Sentinel { min_replicas, .. } => Some(*min_replicas),
        }
    }

    /// The Sentinel topology, in Sentinel mode.
    pub fn topology(&self) -> Option<&Topology> {
        match &self.store {
            Store::Single(_) => None,
            Store::Sentinel { topology, .. } => Some(topology),
        }
    }

    fn topology_mut(&mut self) -> Option<&mut Topology> {
        match &mut self.store {
            Store::Single(_) => None,
            Store::Sentinel { topology, .. } => Some(topology),
        }
    }

    /// Kills Redis with SIGKILL (its AOF, fsynced on every write, keeps the data); in
    /// Sentinel mode, the primary (see [`Cluster::kill_primary`]).
    pub fn kill_redis(&mut self) {
        match &mut self.store {
            Store::Single(redis) => tokio::task::block_in_place(|| redis.kill9()),
            Store::Sentinel { .. } => {
                self.kill_primary();
            }
        }
    }

    /// Starts Redis again on the same port and data, waiting until it has loaded its AOF.
    /// (Blocking in place: needs the multi-threaded runtime, as the bench uses.)
    pub fn restart_redis(&mut self) {
        match &mut self.store {
            Store::Single(redis) => tokio::task::block_in_place(|| redis.restart()),
            Store::Sentinel { .. } => self.heal_store(),
        }
    }

    /// Sentinel mode: kill -9 the primary and wait (up to 30 s) for Sentinel to promote
    /// the replica. `None` if there was no primary or no promotion.
    pub fn kill_primary(&mut self) -> Option<Promotion> {
        let t = self.topology_mut()?;
        tokio::task::block_in_place(|| {
            let old = t.primary()?;
            t.kill9(old);
            let (new, at) = t.wait_promotion(old, Duration::from_secs(30))?;
            Some(Promotion { old, new, at })
        })
    }

    /// Sentinel mode: `SENTINEL FAILOVER` with the primary alive, and wait (up to 30 s) for
    /// the promotion.
    pub fn switchover(&self) -> Option<Promotion> {
        let t = self.topology()?;
        tokio::task::block_in_place(|| {
            let old = t.primary()?;
            if !t.failover(Duration::from_secs(15)) {
                return None;
            }
            let (new, at) = t.wait_promotion(old, Duration::from_secs(30))?;
            Some(Promotion { old, new, at })
        })
    }

    /// Sentinel mode: the old primary of a promotion replicates the new one: a killed one
    /// is restarted as its replica; a demoted one Sentinel has not turned yet gets
    /// `REPLICAOF`. Both only once every Sentinel names the new primary (see
    /// [`Topology::wait_sentinels_agree`]; up to 15 s). What it does: `restarted as a
    /// replica`, `REPLICAOF`, or `already a replica` (Sentinel was first).
    pub fn rejoin(&mut self, p: Promotion) -> &'static str {
        let Some(t) = self.topology_mut() else {
            return "no topology";
        };
        tokio::task::block_in_place(|| {
            t.wait_sentinels_agree(p.new, Duration::from_secs(15));
            if !t.running(p.old) {
                t.restart(p.old, Some(p.new));
                "restarted as a replica"
            } else if t.role(p.old) == Role::Primary {
                t.replicaof(p.old, p.new);
                "REPLICAOF"
            } else {
                "already a replica"
            }
        })
    }

    /// Sentinel mode: cuts the primary's replication link; the primary's index.
    pub fn cut_replication(&self) -> Option<usize> {
        let t = self.topology()?;
        tokio::task::block_in_place(|| {
            let p = t.primary()?;
            t.cut_replication(p).then_some(p)
        })
    }

    /// Sentinel mode: lets data server `i`'s replicas in again (the heal of
    /// [`Cluster::cut_replication`]; the replica catches up on its own).
    pub fn restore_replication(&self, i: usize) {
        if let Some(t) = self.topology() {
            tokio::task::block_in_place(|| t.heal_replication(i));
        }
    }

    /// Sentinel mode: every data server running, letting its replicas in, the primary
    /// with its replica caught up (waits up to 30 s), the Sentinels agreeing on it.
    pub fn heal_store(&mut self) {
        let Some(t) = self.topology_mut() else {
            return;
        };
        tokio::task::block_in_place(|| {
            for i in 0..t.len() {
                t.heal_replication(i);
            }
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            let primary = loop {
                if let Some(p) = t.primary() {
                    break Some(p);
                }
                if std::time::Instant::now() > deadline {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(100));
            };
            if let Some(p) = primary {
                for i in 0..t.len() {
                    if i == p {
                        continue;
                    }
                    if !t.running(i) {
                        t.restart(i, Some(p));
                    } else if t.role(i) == Role::Primary {
                        t.replicaof(i, p);
                    }
                }
            }
            t.wait_settled(Duration::from_secs(30));
        });
    }

    /// Heals everything: every node running and resumed, every link passing, and in
    /// Sentinel mode the store whole again.
    pub async fn heal_all(&mut self) {
        self.heal_store();
        for i in 0..self.len() {
            self.signal(i, "-CONT");
            self.restart(i).await;
            self.link(i, Mode::Pass);
        }
    }

    /// The port of the Redis the truth is read from: the one Redis, or the primary now
    /// (`None` in the middle of a promotion: a replica's copy may be behind).
    pub fn redis_port(&self) -> Option<u16> {
        match &self.store {
            Store::Single(redis) => Some(redis.port),
            Store::Sentinel { topology, .. } => {
                let p = tokio::task::block_in_place(|| topology.primary())?;
                Some(topology.port(p))
            }
        }
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
        redis_query(self.redis_port()?, cmd).await
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
