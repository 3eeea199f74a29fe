//! What a Redis did during a measured window: its CPU time (the scheduler's nanoseconds of
//! every thread of its process, so the `fsync`s of its AOF thread count too) and its
//! commands by name (`INFO commandstats`), read before and after.
//!
//! Why commands per move: a move's cost to a deployment over Redis is mostly the round
//! trips and the appends it makes there; the count says which of the store's commands a
//! change added or removed, independent of how fast this machine's Redis was that day.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::run_ns;

/// The readings' own command, left out of the counts.
const OWN: &str = "info";

/// The Redis processes of a store on 127.0.0.1, to read: one, or every primary of a Redis
/// Cluster, whose figures are summed (a deployment pays for all of them).
#[derive(Clone, Debug)]
pub struct RedisProbe {
    /// Each one's port and process id (from `INFO server`).
    pub members: Vec<(u16, u32)>,
}

/// A reading of a store's Redis processes, summed.
#[derive(Clone, Debug, Default)]
pub struct RedisReading {
    /// CPU nanoseconds used so far.
    pub cpu_ns: u64,
    /// Calls so far by command name (the readings' own `info` left out).
    pub calls: BTreeMap<String, u64>,
}

/// What a Redis did between two readings (several windows add up).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RedisSpent {
    /// CPU seconds.
    pub cpu_s: f64,
    /// Calls by command name.
    pub calls: BTreeMap<String, u64>,
}

impl RedisProbe {
    /// The Redis listening on `port`.
    pub fn new(port: u16) -> io::Result<RedisProbe> {
        RedisProbe::of(&[port])
    }

    /// The Redis processes listening on `ports` (each one's pid read from `INFO server`).
    pub fn of(ports: &[u16]) -> io::Result<RedisProbe> {
        let members = ports
            .iter()
            .map(|&port| {
                let server = info(port, "server")?;
                let pid = field(&server, "process_id")
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| io::Error::other("INFO server has no process_id"))?;
                Ok((port, pid))
            })
            .collect::<io::Result<_>>()?;
        Ok(RedisProbe { members })
    }

    /// Reads their CPU time and command counts now, summed (no counts from one that does
    /// not answer).
    pub fn read(&self) -> RedisReading {
        let mut sum = RedisReading::default();
        for &(port, pid) in &self.members {
            sum.add(&RedisReading {
                cpu_ns: run_ns(pid),
                calls: info(port, "commandstats")
                    .map(|s| command_calls(&s))
                    .unwrap_or_default(),
            });
        }
        sum
    }
}

impl RedisReading {
    /// Adds another process's reading taken at the same moment.
    pub fn add(&mut self, other: &RedisReading) {
        self.cpu_ns += other.cpu_ns;
        for (name, n) in &other.calls {
            *self.calls.entry(name.clone()).or_default() += n;
        }
    }

    /// What was done from `self` to `later`.
    pub fn until(&self, later: &RedisReading) -> RedisSpent {
        let calls = later
            .calls
            .iter()
            .map(|(name, n)| {
                let before = self.calls.get(name).copied().unwrap_or(0);
                (name.clone(), n.saturating_sub(before))
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        RedisSpent {
            cpu_s: later.cpu_ns.saturating_sub(self.cpu_ns) as f64 / 1e9,
            calls,
        }
    }
}

impl RedisSpent {
    /// Adds another window's.
    pub fn merge(&mut self, other: &RedisSpent) {
        self.cpu_s += other.cpu_s;
        for (name, n) in &other.calls {
            *self.calls.entry(name.clone()).or_default() += n;
        }
    }

    /// Every command's calls.
    pub fn total_calls(&self) -> u64 {
        self.calls.values().sum()
    }

    /// The `n` commands called most, with their calls per `per` (e.g. per move), as
    /// `evalsha 2.00, xadd 1.00`.
    pub fn top(&self, n: usize, per: f64) -> String {
        let mut by_calls: Vec<(&String, &u64)> = self.calls.iter().collect();
        by_calls.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = by_calls
            .iter()
            .take(n)
            .map(|(name, calls)| {
                // A subcommand's stats are named `script|load`: a `|` would split the
                // report's Markdown cell.
                let name = name.replace('|', " ");
                format!("{name} {:.2}", **calls as f64 / per.max(1e-9))
            })
            .collect();
        if shown.is_empty() {
            "none".to_string()
        } else {
            shown.join(", ")
        }
    }
}

/// `INFO <section>` of the Redis on 127.0.0.1:`port`, whole (a bulk string of any length).
pub fn info(port: u16, section: &str) -> io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.write_all(format!("INFO {section}\r\n").as_bytes())?;
    let mut reader = BufReader::new(s);
    let mut head = String::new();
    reader.read_line(&mut head)?;
    let len: usize = head
        .trim_end()
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| io::Error::other(format!("INFO answered {head:?}")))?;
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The value of `name:value` in an INFO text.
pub fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Calls by command from `INFO commandstats` (`cmdstat_set:calls=3,usec=…`), without the
/// readings' own `info`.
pub fn command_calls(info: &str) -> BTreeMap<String, u64> {
    info.lines()
        .filter_map(|l| {
            let (name, stats) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))?
                .parse()
                .ok()?;
            (name != OWN).then(|| (name.to_string(), calls))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "# Commandstats\r\n\
        cmdstat_evalsha:calls=20,usec=900,usec_per_call=45.00,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_xadd:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n";

    #[test]
    fn commandstats_give_calls_by_command_without_the_readings_own() {
        let calls = command_calls(STATS);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls["evalsha"], 20);
        assert_eq!(calls["xadd"], 10);
        assert_eq!(field("a:1\r\nprocess_id:42\r\n", "process_id"), Some("42"));
    }

    #[test]
    fn a_window_counts_what_was_called_in_it_and_windows_add_up() {
        let before = RedisReading {
            cpu_ns: 1_000_000_000,
            calls: command_calls(STATS),
        };
        let mut later = before.clone();
        later.cpu_ns += 500_000_000;
        *later.calls.get_mut("evalsha").unwrap() += 4;
        later.calls.insert("get".into(), 1);
        later.calls.insert("script|load".into(), 1);
        let mut spent = before.until(&later);
        assert_eq!(spent.cpu_s, 0.5);
        assert_eq!(spent.total_calls(), 6);
        assert_eq!(spent.top(1, 2.0), "evalsha 2.00");
        spent.merge(&before.until(&later));
        assert_eq!(spent.total_calls(), 12);
        assert_eq!(
            spent.top(5, 1.0),
            "evalsha 8.00, get 2.00, script load 2.00"
        );
        assert_eq!(RedisSpent::default().top(3, 1.0), "none");
    }

    #[test]
    fn the_primaries_of_a_cluster_add_up() {
        let mut sum = RedisReading::default();
        let one = RedisReading {
            cpu_ns: 3,
            calls: command_calls(STATS),
        };
        sum.add(&one);
        sum.add(&RedisReading {
            cpu_ns: 4,
            calls: command_calls(
                "cmdstat_get:calls=5,usec=1\r\ncmdstat_evalsha:calls=1,usec=1\r\n",
            ),
        });
        assert_eq!(sum.cpu_ns, 7);
        assert_eq!(sum.calls["evalsha"], 21);
        assert_eq!(sum.calls["get"], 5);
        assert_eq!(sum.calls["xadd"], 10);
    }
}
