//! Several generator processes (`--generators N`): the parent starts the servers once and
//! runs this program again N times (`--worker i/N`), each child on its own CPU with its
//! share of the games or spectators. They speak in lines: the parent's stdin lines tell a
//! child to go or stop, a child's stdout lines say it is ready and, at the end of a round,
//! carry its raw figures as JSON, which the parent merges into one table.
//!
//! Why processes and not threads: one generator process is one runtime on one core, and it
//! was cheap because nothing in it is shared; N of them each keep that, and each can be
//! pinned, measured and counted on its own.
//!
//! Words, parent → child: `watch <game id>` (fanout: open your spectators), `go` (play, or
//! start counting), `stop` (fanout: the moves are made). Child → parent: `ready`, then
//! `result <json>`.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Which share of a scenario a generator drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// This generator's index.
    pub index: usize,
    /// Generators in all.
    pub count: usize,
}

impl Share {
    /// The whole scenario (one generator).
    pub const ALL: Share = Share { index: 0, count: 1 };

    /// Parses `i/N` (`--worker`).
    pub fn parse(text: &str) -> Result<Share, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?} is not i/N"))?;
        let (index, count) = (
            i.parse().map_err(|_| format!("{i:?} is not a number"))?,
            n.parse().map_err(|_| format!("{n:?} is not a number"))?,
        );
        if index >= count {
            return Err(format!("{text:?}: i must be below N"));
        }
        Ok(Share { index, count })
    }

    /// This share of `0..total`: consecutive, the shares of all generators covering it
    /// exactly once (sizes differ by one at most).
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        total * self.index / self.count..total * (self.index + 1) / self.count
    }

    /// This share of a count.
    pub fn of(&self, total: u64) -> u64 {
        let r = self.range(total as usize);
        (r.end - r.start) as u64
    }
}

/// One child generator, as the parent holds it.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

/// The parent's children.
pub struct Workers {
    workers: Vec<Worker>,
}

impl Workers {
    /// Starts every command (this program with `--worker i/N` and the scenario), their
    /// stdin and stdout piped to the parent, stderr shared.
    pub fn start(commands: Vec<std::process::Command>) -> Workers {
        let workers = commands
            .into_iter()
            .map(|c| {
                let mut child = Command::from(c)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .expect("start a generator process");
                let stdin = child.stdin.take().expect("its stdin");
                let lines = BufReader::new(child.stdout.take().expect("its stdout")).lines();
                Worker {
                    child,
                    stdin,
                    lines,
                }
            })
            .collect();
        Workers { workers }
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Tells every child `line`.
    pub async fn tell(&mut self, line: &str) {
        for w in &mut self.workers {
            let sent = w.stdin.write_all(format!("{line}\n").as_bytes()).await;
            sent.unwrap_or_else(|e| panic!("a generator process is gone ({e})"));
            w.stdin.flush().await.expect("a generator process's stdin");
        }
    }

    /// Waits for every child's next line, which must start with `word`; returns what
    /// follows the word, child by child. A child that ended instead fails the run.
    pub async fn expect(&mut self, word: &str) -> Vec<String> {
        let mut out = Vec::with_capacity(self.workers.len());
        for (i, w) in self.workers.iter_mut().enumerate() {
            match w.lines.next_line().await {
                Ok(Some(line)) if line.starts_with(word) => {
                    out.push(line[word.len()..].trim().to_string());
                }
                Ok(Some(line)) => panic!("generator {i} said {line:?}, not {word}"),
                _ => {
                    let status = w.child.wait().await;
                    panic!("generator {i} ended before saying {word}: {status:?}");
                }
            }
        }
        out
    }

    /// Every child's next `result`, parsed.
    pub async fn results(&mut self) -> Vec<Value> {
        self.expect("result")
            .await
            .into_iter()
            .map(|r| serde_json::from_str(&r).expect("a generator's result is JSON"))
            .collect()
    }

    /// Waits for every child to end (each ends after its scenario's last result).
    pub async fn finish(mut self) {
        for (i, w) in self.workers.iter_mut().enumerate() {
            let status = w.child.wait().await.expect("wait for a generator");
            if !status.success() {
                eprintln!("warning: generator {i} ended with {status}");
            }
        }
    }
}

/// A child's side: the parent's words on stdin, its own on stdout.
pub struct Link {
    lines: Lines<BufReader<tokio::io::Stdin>>,
}

impl Link {
    /// The link over this process's stdin and stdout.
    pub fn new() -> Link {
        Link {
            lines: BufReader::new(tokio::io::stdin()).lines(),
        }
    }

    /// Says `line` to the parent.
    pub fn say(&self, line: &str) {
        // Rust's stdout is line-buffered: each line reaches the parent whole, at once.
        println!("{line}");
    }

    /// Waits for the parent's next line, which must start with `word`; returns the rest.
    pub async fn hear(&mut self, word: &str) -> String {
        match self.lines.next_line().await {
            Ok(Some(line)) if line.starts_with(word) => line[word.len()..].trim().to_string(),
            Ok(Some(line)) => panic!("the parent said {line:?}, not {word}"),
            // The parent is gone: nothing left to drive.
            _ => std::process::exit(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_whole_once() {
        for (total, n) in [(4, 2), (5, 2), (200, 3), (1, 4), (0, 2)] {
            let mut covered = Vec::new();
            for index in 0..n {
                covered.extend(Share { index, count: n }.range(total));
            }
            assert_eq!(covered, (0..total).collect::<Vec<_>>(), "{total}/{n}");
        }
        assert_eq!(Share::parse("1/2").unwrap(), Share { index: 1, count: 2 });
        assert!(Share::parse("2/2").is_err());
        assert_eq!(Share::ALL.of(7), 7);
    }
}
