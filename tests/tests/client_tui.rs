//! The terminal UI under a real pseudo-terminal (tmux): the board and both clocks appear, the
//! running clock counts down, and a move typed into the input line reaches the opponent.
#![forbid(unsafe_code)]

mod client_support;

use std::process::Command;
use std::time::{Duration, Instant};

use client_support::{Clients, Server, TempDir, TIMEOUT};

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: String,
    /// The socket file, removed on drop (`kill-server` leaves it behind).
    socket_path: Option<String>,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn start(tag: &str, command: &str) -> Tmux {
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
                "120",
                "-y",
                "40",
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

    fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "t"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Waits until the screen satisfies `pred`; returns the screen.
    fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
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

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn tui_shows_board_and_both_clocks_and_takes_moves() {
    if !Tmux::available() {
        eprintln!("tmux is not installed: skipping the terminal UI test");
        return;
    }
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let host = clients.spawn(
        "host",
        &[
            "host",
            "unane",
            "--side",
            "black",
            "--clock",
            "5+3",
            "--options",
            "width=5,height=4",
        ],
    );
    let code = clients.wait(host, |l| l.starts_with("room "))["room ".len()..].to_string();

    let config = TempDir::new("tui");
    let stoa = stoa_tests_binary();
    let command = format!(
        "env STOA_CONFIG_DIR={} TERM=xterm-256color {} --server {} --name Tui join {}",
        sh_quote(&config.0.to_string_lossy()),
        sh_quote(&stoa),
        sh_quote(&server.url),
        sh_quote(&code)
    );
    let tmux = Tmux::start("game", &command);
    clients.wait(host, |l| l.starts_with("game started "));

    // The board (files and ranks of the 5x4 grid) and both players' clocks at 5:00.
    let screen = tmux.wait_screen("the board and both clocks", |s| {
        s.contains("a b c d e")
            && s.matches("5:00").count() >= 2
            && s.contains("host")
            && s.contains("Tui")
    });
    assert!(screen.contains("  4 B W B W B 4"), "{screen}");
    assert!(screen.contains("Players"), "{screen}");
    assert!(screen.contains("black to act"), "{screen}");

    // Black (the host) moves; the TUI shows it and says it is our turn.
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    tmux.wait_screen("the opponent's move and our turn", |s| {
        s.contains("1. a4xb4") && s.contains("your turn") && s.contains("  4 . B B W B 4")
    });

    // A typed move goes to the server and reaches the host; the clocks keep running.
    tmux.keys(&["d4xc4", "Enter"]);
    clients.wait(host, |l| l == "move 2 d4xc4");
    tmux.wait_screen("our move in the move list", |s| s.contains("2. d4xc4"));
    // Both sides have acted, so black's clock runs and counts down on screen (white got
    // its increment).
    tmux.wait_screen("black's clock counting down", |s| s.contains("    4:5"));

    // An illegal move gets immediate feedback in the status area.
    clients.wait(host, |l| l == "your turn");
    tmux.keys(&["a1xb2", "Enter"]);
    // The error stays the newest line of the Messages pane, saying which move and why.
    let screen = tmux.wait_screen("the not-your-turn error", |s| {
        s.contains("error not_your_turn: a1xb2 not played")
    });
    let pane: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains(" Messages "))
        .skip(1)
        .take_while(|l| !l.contains('└'))
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        pane.iter()
            .any(|l| l.starts_with("error not_your_turn: a1xb2")),
        "the error is in the Messages pane: {screen}"
    );

    // The host (black) resigns: the TUI says who resigned and who won, in words.
    clients.send(host, "resign");
    clients.wait(host, |l| l == "game over: white wins by resign");
    tmux.wait_screen("the ending in words", |s| {
        s.contains("Black resigned — White wins (you won)")
    });

    tmux.keys(&["C-c"]);
}

fn stoa_tests_binary() -> String {
    stoa_tests::binary("stoa").to_string_lossy().into_owned()
}

/// The lobby screen lists a public room; Enter on it joins, and the game's board appears.
#[test]
fn tui_lobby_lists_a_room_and_enter_joins_it() {
    if !Tmux::available() {
        eprintln!("tmux is not installed: skipping the terminal UI test");
        return;
    }
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let host = clients.spawn(
        "host",
        &[
            "host", "akunur", "--public", "--side", "light", "--clock", "10+5",
        ],
    );
    let code = clients.wait(host, |l| l.starts_with("room "))["room ".len()..].to_string();
    let config = TempDir::new("tui-lobby");
    let command = format!(
        "env STOA_CONFIG_DIR={} TERM=xterm-256color {} --server {} --name Tui lobby",
        sh_quote(&config.0.to_string_lossy()),
        sh_quote(&stoa_tests_binary()),
        sh_quote(&server.url),
    );
    let tmux = Tmux::start("lobby", &command);
    tmux.wait_screen("the room in the lobby", |s| {
        s.contains("Lobby") && s.contains(&format!("room {code} akunur 10+5 by host"))
    });
    tmux.keys(&["Enter"]);
    let started = clients.wait(host, |l| l.starts_with("game started "));
    assert!(started.ends_with("side light"), "{started}");
    // One predicate for the whole screen: a capture may catch the board half drawn.
    tmux.wait_screen("the Akunur board, both clocks, light to act", |s| {
        s.contains("e5@.")
            && s.contains("a1*.")
            && s.matches("10:00").count() >= 2
            && s.contains("light to act")
    });
    tmux.keys(&["C-c"]);
}
