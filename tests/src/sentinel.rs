//! A Redis failover topology of our own for the tests and the fault bench: a primary, one
//! replica and three Sentinels (quorum 2, down after 1 s), each a child process on a free
//! port in a scratch directory, the data servers with AOF and `appendfsync always`. The
//! controls are the faults of a real failover: kill -9 and restart either data server,
//! `SENTINEL FAILOVER` with the primary alive, cutting the primary's link to its replica,
//! `REPLICAOF` an old primary to the new one, and asking who is the primary now.
//!
//! Why the replication link is cut with an ACL rather than through a [`FaultProxy`]: a
//! replica told to follow a proxy reports the proxy's address as its primary, and Sentinel
//! "fixes" any replica whose primary is not the address it monitors (`+fix-slave-config`,
//! `failover-timeout` after the replica was configured, 3 s here): it points the replica
//! straight at the primary again, around the proxy. Instead, every data server replicates
//! as the ACL user `repl` (`masteruser`/`masterauth`), and the cut disables that user on
//! the primary and closes its connections: the replica retries every second and is
//! refused, as a replica behind a broken link is, while the nodes and the Sentinels (the
//! default user) reach the primary as before. The heal enables the user again; the replica
//! reconnects within a second and catches up with a partial resync.
//!
//! [`FaultProxy`]: crate::fault_proxy::FaultProxy
//!
//! Every call blocks (plain sockets, at most a couple of seconds per command): from async
//! code, call it inside `spawn_blocking` or `block_in_place`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The name the Sentinels monitor the primary under (the server's default
/// `--redis-sentinel-master`).
pub const MASTER: &str = "mymaster";
/// The ACL user the data servers replicate as; disabling it on the primary cuts the link.
const REPL_USER: &str = "repl";
const REPL_PASS: &str = "stoa-repl-secret";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A fresh directory for one process, in `/dev/shm` when it has room (every write of a
/// data server is fsynced; in memory an fsync cannot stall it past the nodes' timeouts).
fn scratch(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let shm = PathBuf::from("/dev/shm");
    let roomy = Command::new("df")
        .arg("-Pk")
        .arg(&shm)
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.lines()
                .nth(1)?
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()
        })
        .is_some_and(|kib| kib >= 512 * 1024);
    let root = if roomy { shm } else { std::env::temp_dir() };
    let dir = root.join(format!(
        "stoa-sentinel-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// One command on `127.0.0.1:port` on a fresh connection, within 2 s; `None` on any
/// failure (the server down, an error reply, a timeout).
pub fn query<T: redis::FromRedisValue>(port: u16, cmd: &redis::Cmd) -> Option<T> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).ok()?;
    let mut conn = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    conn.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
    cmd.query(&mut conn).ok()
}

/// A `redis-server` child process (a data server or a Sentinel) in a directory of its own.
struct Proc {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
}

impl Proc {
    /// A process on `port` in `dir` with `args`, started.
    fn start(port: u16, dir: PathBuf, args: Vec<String>) -> Proc {
        let mut p = Proc {
            child: None,
            port,
            dir,
            args,
        };
        p.spawn();
        p
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (is it installed?)");
        self.child = Some(child);
        // A data server answers `LOADING` while it replays its AOF: wait for a real PONG.
        let deadline = Instant::now() + Duration::from_secs(30);
        while query::<String>(self.port, &redis::cmd("PING")).as_deref() != Some("PONG") {
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not start",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A data server's role, as `ROLE` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A primary.
    Primary,
    /// A replica, and whether its link to its primary is up (`connected`).
    Replica {
        /// Whether the replica is connected to its primary and in sync.
        connected: bool,
    },
    /// No answer: killed, or not answering.
    Down,
}

/// A primary, one replica and three Sentinels; everything is killed on drop.
pub struct Topology {
    servers: Vec<Proc>,
    sentinels: Vec<Proc>,
}

impl Topology {
    /// Starts the two data servers (server 0 the primary, server 1 its replica) and three
    /// Sentinels, and waits until the replica is in sync and every Sentinel knows the
    /// replica and the two other Sentinels.
    pub fn start() -> Topology {
        let a = data_server("a", None);
        let b = data_server("b", Some(a.port));
        let servers = vec![a, b];
        let sentinels: Vec<Proc> = (0..3)
            .map(|i| sentinel(&format!("s{i}"), servers[0].port))
            .collect();
        let t = Topology { servers, sentinels };
        assert!(
            t.wait_replicated(Duration::from_secs(20)),
            "the replica did not sync"
        );
        let replica = t.servers[1].port.to_string();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !t.sentinels.iter().all(|s| {
            let replicas: String =
                query::<redis::Value>(s.port, redis::cmd("SENTINEL").arg("replicas").arg(MASTER))
                    .map(|v| format!("{v:?}"))
                    .unwrap_or_default();
            let others = query::<Vec<redis::Value>>(
                s.port,
                redis::cmd("SENTINEL").arg("sentinels").arg(MASTER),
            )
            .map_or(0, |v| v.len());
            replicas.contains(&replica) && others == 2
        }) {
            assert!(
                Instant::now() < deadline,
                "the sentinels did not find the replica and each other"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        t
    }

    /// The Sentinels as a node's `--redis-sentinel` wants them: `h:p,h:p,h:p`.
    pub fn sentinel_list(&self) -> String {
        self.sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Number of data servers (2).
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Always false: there are two data servers.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Data server `i`'s port.
    pub fn port(&self, i: usize) -> u16 {
        self.servers[i].port
    }

    /// Whether data server `i` has a running process.
    pub fn running(&self, i: usize) -> bool {
        self.servers[i].child.is_some()
    }

    /// Data server `i`'s role now.
    pub fn role(&self, i: usize) -> Role {
        if !self.running(i) {
            return Role::Down;
        }
        let Some(reply) = query::<Vec<redis::Value>>(self.port(i), &redis::cmd("ROLE")) else {
            return Role::Down;
        };
        let text = |v: &redis::Value| match v {
            redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            redis::Value::SimpleString(s) => s.clone(),
            _ => String::new(),
        };
        match reply.first().map(text).as_deref() {
            Some("master") => Role::Primary,
            Some("slave") => Role::Replica {
                connected: reply.get(3).map(text).as_deref() == Some("connected"),
            },
            _ => Role::Down,
        }
    }

    /// The primary the Sentinels name (the majority of those answering), as a data server
    /// index; `None` while they disagree or name neither.
    pub fn sentinels_primary(&self) -> Option<usize> {
        let mut votes = vec![0; self.servers.len()];
        for s in &self.sentinels {
            let addr: Option<Vec<String>> = query(
                s.port,
                redis::cmd("SENTINEL")
                    .arg("get-master-addr-by-name")
                    .arg(MASTER),
            );
            let port = addr.and_then(|a| a.get(1)?.parse::<u16>().ok());
            if let Some(i) = self.servers.iter().position(|d| Some(d.port) == port) {
                votes[i] += 1;
            }
        }
        let best = (0..votes.len()).max_by_key(|i| votes[*i])?;
        (votes[best] * 2 > self.sentinels.len()).then_some(best)
    }

    /// The primary now: the data server the Sentinels name, if it says it is a primary;
    /// else the only one that says so. `None` in the middle of a promotion.
    pub fn primary(&self) -> Option<usize> {
        if let Some(p) = self.sentinels_primary() {
            if self.role(p) == Role::Primary {
                return Some(p);
            }
        }
        let primaries: Vec<usize> = (0..self.len())
            .filter(|i| self.role(*i) == Role::Primary)
            .collect();
        (primaries.len() == 1).then(|| primaries[0])
    }

    /// Kills data server `i` with SIGKILL (its AOF keeps what it had written).
    pub fn kill9(&mut self, i: usize) {
        self.servers[i].kill9();
    }

    /// Starts data server `i` again on its port and data, as a replica of `primary` (a
    /// data server index) or, with `None`, as it was first started. Waits until it answers.
    pub fn restart(&mut self, i: usize, primary: Option<usize>) {
        self.servers[i].kill9();
        if let Some(p) = primary {
            let port = self.servers[p].port.to_string();
            let args = &mut self.servers[i].args;
            if let Some(at) = args.iter().position(|a| a == "--replicaof") {
                args.drain(at..at + 3);
            }
            args.extend(["--replicaof".into(), "127.0.0.1".into(), port]);
        }
        self.servers[i].spawn();
    }

    /// `REPLICAOF` data server `i` to data server `primary`: what Sentinel does to a
    /// demoted primary only at its next INFO round (10 s, fixed in Sentinel), done at once.
    pub fn replicaof(&self, i: usize, primary: usize) -> bool {
        query::<String>(
            self.port(i),
            redis::cmd("REPLICAOF")
                .arg("127.0.0.1")
                .arg(self.port(primary)),
        )
        .is_some()
    }

    /// `SENTINEL FAILOVER` (the primary alive), asked of each Sentinel in turn until one
    /// accepts (one refuses while a failover is in progress or no replica looks good),
    /// within `within`.
    pub fn failover(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            for s in &self.sentinels {
                let ok: Option<String> =
                    query(s.port, redis::cmd("SENTINEL").arg("FAILOVER").arg(MASTER));
                if ok.is_some() {
                    return true;
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until a data server other than `old` says it is the primary; its index and
    /// when it was first seen so.
    pub fn wait_promotion(&self, old: usize, within: Duration) -> Option<(usize, Instant)> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(p) = (0..self.len()).find(|i| *i != old && self.role(*i) == Role::Primary) {
                return Some((p, Instant::now()));
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (up to `within`) until every Sentinel names data server `p` as the primary;
    /// whether they do. A promoted replica answers `ROLE` as a primary before the Sentinels
    /// have all switched: an old primary restarted (or demoted) meanwhile is seen by a
    /// Sentinel still naming it as "a primary claiming to be a replica", which it takes for
    /// down, and a second failover may promote it back (seen in the fault bench: the nodes
    /// followed it there, and nothing was acknowledged until Sentinel demoted the other
    /// one at its next INFO round, 13 s later).
    pub fn wait_sentinels_agree(&self, p: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let agree = self.sentinels.iter().all(|s| {
                let addr: Option<Vec<String>> = query(
                    s.port,
                    redis::cmd("SENTINEL")
                        .arg("get-master-addr-by-name")
                        .arg(MASTER),
                );
                addr.and_then(|a| a.get(1)?.parse::<u16>().ok()) == Some(self.port(p))
            });
            if agree {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Cuts data server `primary`'s link to its replicas: the replication user is disabled
    /// there and its connections closed, so the replicas cannot reconnect (see the module's
    /// comment for why not a proxy).
    pub fn cut_replication(&self, primary: usize) -> bool {
        let port = self.port(primary);
        let off: Option<String> = query(
            port,
            redis::cmd("ACL").arg("SETUSER").arg(REPL_USER).arg("off"),
        );
        let _: Option<i64> = query(
            port,
            redis::cmd("CLIENT").arg("KILL").arg("USER").arg(REPL_USER),
        );
        off.is_some()
    }

    /// Lets data server `i`'s replicas in again (the heal of [`Topology::cut_replication`];
    /// harmless on a server whose link was never cut).
    pub fn heal_replication(&self, i: usize) -> bool {
        query::<String>(
            self.port(i),
            redis::cmd("ACL").arg("SETUSER").arg(REPL_USER).arg("on"),
        )
        .is_some()
    }

    /// Waits (up to `within`) until the primary has every other running data server as a
    /// connected replica, caught up with its offset; whether it did.
    pub fn wait_replicated(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if let Some(p) = self.primary() {
                let live = (0..self.len()).filter(|i| self.running(*i)).count();
                let info: String =
                    query(self.port(p), redis::cmd("INFO").arg("replication")).unwrap_or_default();
                let want = format!("connected_slaves:{}", live - 1);
                let offset = field(&info, "master_repl_offset");
                let caught_up = (0..self.len())
                    .filter(|i| *i != p && self.running(*i))
                    .all(|i| {
                        let r: String = query(self.port(i), redis::cmd("INFO").arg("replication"))
                            .unwrap_or_default();
                        field(&r, "master_link_status").as_deref() == Some("up")
                            && field(&r, "master_port") == Some(self.port(p).to_string())
                            && field(&r, "slave_repl_offset") == offset
                    });
                if info.contains(&want) && caught_up {
                    return true;
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Topology {
    /// Waits (up to `within`) until the store is whole: the replica caught up with the
    /// primary and the Sentinels naming that primary; whether it is.
    pub fn wait_settled(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.wait_replicated(left) && self.sentinels_primary() == self.primary() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A `name:value` line of an `INFO` reply.
fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// A data server (AOF, `appendfsync always`) that replicates as the ACL user `repl`, and
/// lets that user replicate from it; a replica of `primary` if given. A full resync starts
/// as soon as the one replica asks (`repl-diskless-sync-max-replicas 1`).
fn data_server(name: &str, primary: Option<u16>) -> Proc {
    let port = free_port();
    let dir = scratch(name);
    let mut args: Vec<String> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir.to_str().expect("utf-8"),
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
        "--daemonize",
        "no",
        // With one replica, a full resync (a restarted or demoted primary rejoining)
        // starts at once rather than after Redis's default 5 s wait for more replicas.
        "--repl-diskless-sync-max-replicas",
        "1",
        "--masteruser",
        REPL_USER,
        "--masterauth",
        REPL_PASS,
        "--user",
        REPL_USER,
        "on",
        &format!(">{REPL_PASS}"),
        "+psync",
        "+replconf",
        "+ping",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(p) = primary {
        args.extend(["--replicaof".into(), "127.0.0.1".into(), p.to_string()]);
    }
    Proc::start(port, dir, args)
}

/// A Sentinel watching `primary` as [`MASTER`] (quorum 2, down after 1 s, failover
/// timeout 3 s).
fn sentinel(name: &str, primary: u16) -> Proc {
    let port = free_port();
    let dir = scratch(name);
    let conf = dir.join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "port {port}\nbind 127.0.0.1\ndir {}\n\
             sentinel monitor {MASTER} 127.0.0.1 {primary} 2\n\
             sentinel down-after-milliseconds {MASTER} 1000\n\
             sentinel failover-timeout {MASTER} 3000\n\
             sentinel parallel-syncs {MASTER} 1\n",
            dir.display()
        ),
    )
    .expect("sentinel.conf");
    let args = vec![conf.display().to_string(), "--sentinel".to_string()];
    Proc::start(port, dir, args)
}
