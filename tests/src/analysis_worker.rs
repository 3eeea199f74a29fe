//! An analysis worker for the tests (`stoa analyse --serve`, the real client binary), so
//! the engine-review tests and the browser tests that show a review start it the same way.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use crate::temp_dir::TempDir;
use crate::Server;

/// A `stoa analyse --serve` process, killed on drop; its stdout lines arrive on `lines`.
pub struct Worker {
    child: Child,
    lines: Receiver<String>,
    _home: TempDir,
}

impl Worker {
    /// A worker serving `server`'s review queue, with its own config directory (`tag`) and
    /// `args` after `analyse --serve` (its engine budget, as [`FAST`]).
    pub fn start(server: &Server, tag: &str, args: &[&str]) -> Worker {
        crate::build_binaries();
        let home = TempDir::new(tag);
        let mut child = Command::new(crate::binary("stoa"))
            .args(["--server", &server.ws_url(), "analyse", "--serve"])
            .args(args)
            .env("STOA_CONFIG_DIR", &home.0)
            .env_remove("STOA_SERVER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start stoa analyse --serve");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Worker {
            child,
            lines,
            _home: home,
        }
    }

    /// The first line starting with `prefix`, waited for up to `within`.
    pub fn line_starting(&self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(_) => panic!("no line starting with '{prefix}' within {within:?}"),
            }
        }
    }

    /// Every line printed so far.
    pub fn printed(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Kills the worker at once (`SIGKILL`), mid-job if it has one.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A fast worker's budget (the test games are small).
pub const FAST: &[&str] = &["--playouts", "200", "--proof-nodes", "50000"];
