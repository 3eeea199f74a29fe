//! The terminal UI under a real pseudo-terminal: a tmux server of a test's own, its screen
//! read back as text and keys typed into it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::clients::TIMEOUT;
use crate::temp_dir::TempDir;

/// A tmux server of our own (its own socket), killed on drop.
pub struct Tmux {
    socket: String,
    /// The socket file, removed on drop (`kill-server` leaves it behind).
    socket_path: Option<String>,
    /// The config directory of the `stoa` the session runs, when this session made it.
    config: Option<TempDir>,
}

impl Tmux {
    /// Whether tmux is installed.
    pub fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Whether tmux is missing, said on stderr: a terminal UI test then passes without a
    /// terminal (`.ci/run` installs tmux).
    pub fn missing() -> bool {
        let missing = !Tmux::available();
        if missing {
            eprintln!("tmux is not installed: skipping the terminal UI test");
        }
        missing
    }

    /// A 120x40 session running `command` (a shell command line).
    pub fn start(tag: &str, command: &str) -> Tmux {
        Tmux::start_sized(tag, command, 120, 40)
    }

    /// A `width`x`height` session running `command`.
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
            config: None,
        }
    }

    /// A 120x40 session running the terminal UI, `stoa ARGS` as player `name` against
    /// `server_url` (see [`tui_command`]), with a config directory of its own that lives as
    /// long as the session.
    pub fn stoa(tag: &str, server_url: &str, name: &str, args: &str) -> Tmux {
        let config = TempDir::new(tag);
        let mut tmux = Tmux::start(tag, &tui_command(&config, server_url, name, args));
        tmux.config = Some(config);
        tmux
    }

    /// The config directory of a session made by [`Tmux::stoa`] (to be the same player in
    /// another process).
    pub fn config(&self) -> &Path {
        &self
            .config
            .as_ref()
            .expect("a session made by Tmux::stoa")
            .0
    }

    /// The screen as text, one line a row.
    pub fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types keys (tmux `send-keys` words: `Enter`, `C-c`, `-l` for literal text).
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

/// `s` quoted for `sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The command line that runs `stoa ARGS` in a tmux pane as player `name`, then keeps the
/// pane open for a while so what the client prints on leaving can be read.
pub fn tui_command(config: &TempDir, server_url: &str, name: &str, args: &str) -> String {
    format!(
        "sh -c {}",
        sh_quote(&format!(
            "env STOA_CONFIG_DIR={} TERM=xterm-256color {} --server {} --name {name} {args}; sleep 60",
            sh_quote(&config.0.to_string_lossy()),
            sh_quote(&crate::binary("stoa").to_string_lossy()),
            sh_quote(server_url),
        ))
    )
}
