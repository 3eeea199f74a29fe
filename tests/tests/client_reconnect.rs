//! The client survives a network drop: a TCP proxy between one player and the server cuts
//! every connection; the client reconnects by itself as the same player, catches up on the
//! moves it missed (`game.watch` with `since`) and plays on.
#![forbid(unsafe_code)]

use std::time::Duration;

use stoa_tests::clients::{Clients, HOST_SMALL_UNANE};
use stoa_tests::proxy::Proxy;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::tmux::Tmux;

#[test]
fn reconnects_after_a_drop_and_catches_up() {
    let (server, mut clients) = Clients::with_server();
    let proxy = Proxy::start(server.addr);
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let guest = clients.spawn_at("guest", &proxy.ws_url(), &["join", &code]);
    clients.wait(guest, |l| l.starts_with("game started "));

    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    clients.wait(guest, |l| l == "your turn");
    clients.send(guest, "d4xc4");
    clients.wait(host, |l| l == "move 2 d4xc4");
    clients.wait(guest, |l| l == "move 2 d4xc4");

    // Cut the guest's link, and play a move it cannot see while it is away.
    proxy.cut();
    let dropped = clients.wait(guest, |l| {
        l.starts_with("connection lost — reconnecting… (")
    });
    assert!(!dropped.contains("WebSocket"), "said in words: {dropped}");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "b4xc4");
    clients.wait(host, |l| l == "move 3 b4xc4");

    // Back by itself, as the same player, with the missed move and the turn.
    clients.wait(guest, |l| l == "reconnected");
    clients.wait(guest, |l| l == "move 3 b4xc4");
    clients.wait(guest, |l| l == "your turn");
    clients.send(guest, "resign");
    clients.game_over(&[host, guest], "black wins by resign");
    clients.quit(&[host, guest]);
}

/// A player whose client died comes back with a new process: the stored identity makes it the
/// same player, `welcome` lists the unfinished game, and `stoa watch <id>` resumes playing.
#[test]
fn a_new_process_resumes_an_unfinished_game() {
    let (_server, mut clients) = Clients::with_server();
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let guest_home = TempDir::new("guest-home");
    let guest = clients.spawn_in("guest", &guest_home.0, &["join", &code]);
    let id = clients.game_started(guest);
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    clients.wait(guest, |l| l == "your turn");
    clients.kill(guest);
    clients.wait(host, |l| l == "white offline");

    let again = clients.spawn_in("guest-again", &guest_home.0, &["watch", &id]);
    // The same identity; `--name` renamed the player, while the seat keeps the name the
    // game started with.
    clients.wait(again, |l| l.starts_with("connected as guest-again "));
    clients.wait(again, |l| {
        l.starts_with("white guest ") && l.ends_with("(you) to act")
    });
    clients.wait(again, |l| l == "your turn");
    clients.wait(host, |l| l == "white online");
    clients.send(again, "d4xc4");
    clients.wait(host, |l| l == "move 2 d4xc4");
    clients.send(host, "resign");
    clients.game_over(&[again], "white wins by resign");
    clients.quit(&[host, again]);
}

/// A stored token the server does not know (e.g. a fresh server) is refused with
/// `unauthorized`; the client says so, continues as a new guest and stores the new token
/// (under the server's deployment).
#[test]
fn a_refused_token_falls_back_to_a_new_guest() {
    let (server, mut clients) = Clients::with_server();
    let url = server.ws_url();
    let home = TempDir::new("stale-identity");
    let file = home.0.join("identity.json");
    std::fs::write(
        &file,
        format!(r#"{{"{url}": {{"token": "not-a-real-token"}}}}"#),
    )
    .unwrap();
    let c = clients.spawn_in("stale", &home.0, &["lobby"]);
    clients.wait(c, |l| l.starts_with("connected as stale "));
    clients.wait(c, |l| l.starts_with("lobby: "));
    // The note goes to stderr, the rest to stdout: two pipes, read by two threads, so the
    // note may reach the test before or after the stdout lines. Only its presence counts.
    let refused = |l: &str| l.starts_with("note: the server refused the stored identity");
    if !clients.lines(c, Duration::ZERO).iter().any(|l| refused(l)) {
        clients.wait(c, refused);
    }
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // The refused entry (per address, as earlier versions kept it) is gone; the new token
    // is kept under the server's deployment, with the address that welcomed it.
    assert!(stored.get(url.as_str()).is_none(), "{stored}");
    let deployments = stored["deployments"].as_object().expect("deployments");
    assert_eq!(deployments.len(), 1, "{stored}");
    let entry = deployments.values().next().unwrap();
    assert_eq!(entry["addresses"], serde_json::json!([url]));
    let token = entry["token"].as_str().unwrap();
    assert_ne!(token, "not-a-real-token");
    assert!(token.len() >= 22, "{token}");
    clients.quit(&[c]);
}

/// The terminal UI tells its player what happens to the link: the drop, the reconnect, and
/// a server that shuts down.
#[test]
fn tui_says_disconnected_reconnected_and_shutting_down() {
    if Tmux::missing() {
        return;
    }
    let (server, mut clients) = Clients::with_server();
    let proxy = Proxy::start(server.addr);
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let tmux = Tmux::stoa("link", &proxy.ws_url(), "Tui", &format!("join {code}"));
    clients.wait(host, |l| l.starts_with("game started "));
    tmux.wait_screen("the board", |s| s.contains("black to act"));

    proxy.cut();
    tmux.wait_screen("the drop and the reconnect", |s| {
        s.contains("connection lost — reconnecting…") && s.contains("reconnected")
    });
    clients.send(host, "a4xb4");
    tmux.wait_screen("the move after the reconnect", |s| s.contains("1. a4xb4"));

    // SIGTERM, not waiting for the exit: the notice is read while the server drains.
    stoa_tests::signal(server.pid(), "-TERM");
    tmux.wait_screen("the shutdown notice", |s| {
        s.contains("server shutting down")
    });
}
