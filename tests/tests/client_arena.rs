//! `stoa arena` end to end against the real server: terminal players (plain mode, and the
//! terminal UI under tmux) open an arena a websocket client created, join it, see the
//! standings, play the game it pairs in the usual game screen, and see the new scores when
//! they come back to the standings; `pause` and `berserk` answer, refusals are error lines
//! that change nothing, and an unknown arena is a clear error with exit status 1.
//!
//! Why a second player in the pool is paused before the first game ends: with two players
//! the arena pairs them again at once, and a paused winner keeps the standings on screen
//! (and their text exact) once the game is over.
#![forbid(unsafe_code)]

use std::cell::RefCell;

use serde_json::json;
use stoa_tests::clients::{Clients, TIMEOUT};
use stoa_tests::script::scripted_game;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::tmux::Tmux;
use stoa_tests::{Client, Server, LOOSE};

/// A server that pairs arenas in fast waves.
fn arena_server() -> Server {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend_from_slice(&["--queue-wave-ms", "200"]);
    Server::start_with(&args)
}

/// A short Ūnane 4x3 arena (15 s + 0, berserk allowed) created by a websocket client
/// `org`, who does not play; starts in `starts_in_ms`. Returns its id.
async fn create_arena(server: &Server, starts_in_ms: u64) -> String {
    let mut org = Client::guest(server, "org").await;
    let created = org
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0},
            "starts_in_ms":starts_in_ms,"duration_ms":60000,"name":"Test arena",
            "berserk":true}),
        )
        .await;
    assert_eq!(created["t"], "arena", "{created}");
    let id = created["doc"]["id"].as_str().expect("arena id").to_string();
    org.close().await;
    id
}

/// Runs `stoa --plain` as `name` with no input to its end: its exit status and output.
fn run_to_end(
    server: &Server,
    config: &TempDir,
    name: &str,
    args: &[&str],
) -> (Option<i32>, String) {
    let out = std::process::Command::new(stoa_tests::binary("stoa"))
        .args(["--plain", "--server", &server.ws_url(), "--name", name])
        .args(args)
        .env("STOA_CONFIG_DIR", &config.0)
        .env_remove("STOA_SERVER")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run stoa");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout)
}

/// One row of the standings as the client prints it (without plain mode's indent): rank,
/// name (padded to the `player` column), score, performance and the rest (sheet and marks).
fn row(rank: usize, name: &str, score: u64, perf: &str, rest: &str) -> String {
    format!("{rank:>3}  {name:<6}  {score:>5}  {perf:>4}  {rest}")
        .trim_end()
        .to_string()
}

/// The move the scripted first mover plays: the first of a fixed Ūnane 4x3 game.
fn first_move() -> String {
    scripted_game("unane", &json!({"width":4,"height":3}), 1, 400).moves[0].clone()
}

/// The side that acts first in Ūnane.
fn first_side() -> String {
    let kind = stoa_protocol::kind("unane").expect("unane");
    let game = kind.start(&json!({"width":4,"height":3})).expect("options");
    let side = game.to_act().expect("a side to act");
    kind.side_names[side.index()].to_string()
}

/// Waits until one standings table printed by `c` (plain mode: `standings:`, then its rows)
/// holds, for each group, one of its rows (exact text, plain mode's indent included), and
/// each of the lines `also` came, before or after it: an answer and the diff it caused
/// may arrive in either order.
fn wait_rows(clients: &mut Clients, c: usize, groups: &[Vec<String>], also: &[&str]) {
    let seen: RefCell<Vec<usize>> = RefCell::new(Vec::new());
    let done: RefCell<bool> = RefCell::new(false);
    let came: RefCell<Vec<usize>> = RefCell::new(Vec::new());
    clients.wait(c, |l| {
        let mut seen = seen.borrow_mut();
        let mut done = done.borrow_mut();
        let mut came = came.borrow_mut();
        if let Some(i) = also.iter().position(|a| *a == l) {
            came.push(i);
        }
        if l == "standings:" && !*done {
            seen.clear();
        }
        if let Some(g) = groups.iter().position(|g| g.iter().any(|r| r == l)) {
            seen.push(g);
        }
        *done = *done || (0..groups.len()).all(|g| seen.contains(&g));
        *done && (0..also.len()).all(|i| came.contains(&i))
    });
}

/// A standings row as plain mode prints it: indented by two.
fn plain_row(rank: usize, name: &str, score: u64, perf: &str, rest: &str) -> String {
    format!("  {}", row(rank, name, score, perf, rest))
}

/// The side named in a `game started <id> side <side>` line.
fn side_of(started: &str) -> String {
    started.rsplit(' ').next().expect("side").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_players_join_play_and_see_the_new_standings() {
    let server = arena_server();
    // Time for both to join before the start, so the standings show both before any game.
    let id = create_arena(&server, 5000).await;
    let mut clients = Clients::with_url(&server.ws_url());

    let ann = clients.spawn("ann", &["arena", &id]);
    let heading = clients.wait(ann, |l| l.starts_with(&format!("arena {id} ")));
    assert_eq!(
        heading,
        format!(
            "arena {id} Test arena: unane width=4,height=3 · 15s+0 · casual · berserk allowed · 0 players"
        )
    );
    let stage = clients.wait(ann, |l| l.starts_with("arena ") && !l.contains(&id));
    assert!(stage.starts_with("arena starts in 0:0"), "{stage}");
    clients.wait(ann, |l| l == "standings:");
    clients.wait(ann, |l| l == "  nobody has joined yet");
    // Arena commands before joining: a pause is refused by the server, and changes nothing.
    clients.send(ann, "pause");
    let refused = clients.wait(ann, |l| l.starts_with("error "));
    assert_eq!(refused, "error conflict: you are not in this arena");
    clients.send(ann, "join");
    clients.wait(ann, |l| {
        l == "joined the arena: pairing starts at its start"
    });
    // bob joins from the command line.
    let bob = clients.spawn("bob", &["arena", &id, "--join"]);
    // Both names in one table (no game yet: no score, no performance; the order is the
    // players' ids then), before the start.
    for (who, mine, other) in [(ann, "ann", "bob"), (bob, "bob", "ann")] {
        let either = |name: &str, rest: &str| {
            vec![
                plain_row(1, name, 0, "-", rest),
                plain_row(2, name, 0, "-", rest),
            ]
        };
        let also: &[&str] = if who == bob {
            &["joined the arena: pairing starts at its start"]
        } else {
            &[]
        };
        wait_rows(
            &mut clients,
            who,
            &[either(mine, "(you)"), either(other, "")],
            also,
        );
    }

    // The arena starts and pairs them: the usual game screen, in both.
    let started = [ann, bob].map(|c| clients.wait(c, |l| l.starts_with("game started ")));
    let game = started[0].split(' ').nth(2).expect("game id").to_string();
    assert!(
        started[1].starts_with(&format!("game started {game} side ")),
        "{started:?}"
    );
    for c in [ann, bob] {
        clients.wait(c, |l| {
            l == "arena game: type berserk before your first move to halve your time for one more point on a win"
        });
    }
    let mover = clients.wait_any(&[ann, bob], |l| l == "your turn");
    let other = if mover == ann { bob } else { ann };
    let mover_side = side_of(&started[if mover == ann { 0 } else { 1 }]);
    let mv = first_move();
    clients.send(mover, &mv);
    clients.wait(other, |l| l == format!("move 1 {mv}"));
    clients.wait(other, |l| l == "your turn");
    // Berserk after one's first move is refused, and changes nothing.
    clients.send(mover, "berserk");
    let refused = clients.wait(mover, |l| l.starts_with("error "));
    assert_eq!(
        refused,
        "error conflict: berserk is only allowed before your first move"
    );
    // The first mover leaves the pool: this game goes on and counts.
    clients.send(mover, "pause");
    clients.wait(mover, |l| {
        l == "paused: this game goes on and counts; no new game until you type join"
    });
    clients.send(other, "resign");
    let end = format!("game over: {mover_side} wins by resign");
    for c in [mover, other] {
        clients.wait(c, |l| l == end);
    }
    clients.wait(other, |l| {
        l == "back to the arena: you are paired again as soon as an opponent is free"
    });
    clients.wait(mover, |l| l.starts_with("back to the arena: "));

    // The new standings: the winner 2 points (a win over a 1500: performance 2000),
    // the loser 0 (1000); the sheets say each game's points.
    let (winner, loser) = (
        clients.name(mover).to_string(),
        clients.name(other).to_string(),
    );
    for (c, me_winner) in [(mover, true), (other, false)] {
        let you = |is_me: bool| if is_me { " (you)" } else { "" };
        let first = plain_row(
            1,
            &winner,
            2,
            "2000",
            &format!("2{} (paused)", you(me_winner)),
        );
        let second = plain_row(2, &loser, 0, "1000", &format!("0{}", you(!me_winner)));
        clients.wait(c, |l| l == first);
        let next = clients.wait(c, |_| true);
        assert_eq!(next, second);
    }

    // `standings` prints the table again on request.
    clients.send(other, "standings");
    clients.wait(other, |l| l == "  #  player  score  perf  sheet");

    // Joining again pairs them again; berserk before one's first move is taken, once.
    clients.send(mover, "join");
    // The pairing may be quicker than the join's answer: either line comes first.
    let first = clients.wait(mover, |l| {
        l.starts_with("joined the arena") || l.starts_with("game started ")
    });
    if first.starts_with("joined the arena") {
        clients.wait(mover, |l| l.starts_with("game started "));
    } else {
        clients.wait(mover, |l| l.starts_with("joined the arena"));
    }
    clients.wait(other, |l| l.starts_with("game started "));
    let second = {
        let first = clients.wait_any(&[mover, other], |l| l == "your turn");
        if first == mover {
            other
        } else {
            mover
        }
    };
    clients.send(second, "berserk");
    clients.wait(second, |l| {
        l == "berserk: your time is halved and you play without increment; a win scores one more"
    });
    clients.send(second, "berserk");
    let again = clients.wait(second, |l| l.starts_with("error "));
    assert_eq!(again, "error conflict: you already went berserk");

    // Quitting leaves the pool (points stay); the game goes on, as any game left.
    clients.send(second, "quit");
    let left = format!(
        "left the arena's pool (paused; your points stay): come back with stoa arena {id}, then join"
    );
    clients.wait(second, |l| l == left);
    clients.wait(second, |l| {
        l.starts_with("game ") && l.contains(" goes on without you and your clock runs")
    });
    clients.expect_exit(second, TIMEOUT);
    // The server took the pause: the one still here sees it in the standings.
    let stayed = if second == mover { other } else { mover };
    let paused = if second == mover {
        plain_row(1, &winner, 2, "2000", "2 (paused) (playing)")
    } else {
        plain_row(2, &loser, 0, "1000", "0 (paused) (playing)")
    };
    clients.wait(stayed, |l| l == paused);
}

#[test]
fn an_unknown_arena_is_a_clear_error_and_exit_status_1() {
    let server = arena_server();
    let config = TempDir::new("arena-unknown");
    for target in ["azzzzzzzzzzzz", "NOSUCHCODE"] {
        let (status, stdout) = run_to_end(&server, &config, "zed", &["arena", target]);
        assert_eq!(status, Some(1), "{stdout}");
        let line = stdout
            .lines()
            .find(|l| l.starts_with("error "))
            .unwrap_or_else(|| panic!("no error line: {stdout}"));
        assert_eq!(
            line,
            format!(
                "error not_found: cannot open arena '{target}': no such arena (or a wrong code)"
            )
        );
    }
}

/// The terminal UI: the arena's view with its standings, `join` at the prompt, the paired
/// game on the usual board, a move typed there, and the standings back with the new
/// scores after the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_arena_shows_standings_plays_the_paired_game_and_comes_back() {
    if Tmux::missing() {
        return;
    }
    let server = arena_server();
    let id = create_arena(&server, 1500).await;
    let tmux = Tmux::stoa("arena", &server.ws_url(), "Tui", &format!("arena {id}"));
    let screen = tmux.wait_screen("the arena's view", |s| {
        s.contains("Arena: Test arena") && s.contains("nobody has joined yet")
    });
    assert!(
        screen.contains("unane width=4,height=3 · 15s+0 · casual · berserk allowed · 0 players"),
        "{screen}"
    );
    assert!(
        screen.contains("not joined: type join to enter the arena"),
        "{screen}"
    );
    assert!(
        screen.contains("arena: join · pause · standings"),
        "{screen}"
    );
    tmux.keys(&["join", "Enter"]);
    tmux.wait_screen("joined", |s| s.contains("joined the arena"));

    let mut clients = Clients::with_url(&server.ws_url());
    let bob = clients.spawn("bob", &["arena", &id, "--join"]);
    let started = clients.wait(bob, |l| l.starts_with("game started "));
    let bob_side = side_of(&started);
    // The usual game screen: the 4x3 board and both names.
    tmux.wait_screen("the paired game's board", |s| {
        s.contains("a b c d") && s.contains("Players") && s.contains("bob") && s.contains("Tui")
    });
    // `standings` during the game opens them in a window; Esc closes it.
    tmux.keys(&["standings", "Enter"]);
    let screen = tmux.wait_screen("the standings window", |s| {
        s.contains("standings of Test arena") && s.contains("(you) (playing)")
    });
    assert!(screen.contains("#  player  score  perf  sheet"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the window closed", |s| {
        !s.contains("standings of Test arena")
    });
    let mv = first_move();
    if bob_side == first_side() {
        // bob acts first and plays the scripted move; the TUI answers.
        clients.wait(bob, |l| l == "your turn");
        clients.send(bob, &mv);
        tmux.wait_screen("our turn", |s| s.contains("your turn"));
        // A move typed in the TUI reaches the opponent.
        let reply = {
            let mut g = stoa_protocol::kind("unane")
                .unwrap()
                .start(&json!({"width":4,"height":3}))
                .unwrap();
            g.play(&mv).unwrap();
            g.legal_notations()
                .into_iter()
                .find(|m| m != "swap")
                .expect("a reply")
        };
        tmux.keys(&[&reply, "Enter"]);
        clients.wait(bob, |l| l == format!("move 2 {reply}"));
    } else {
        tmux.wait_screen("our turn", |s| s.contains("your turn"));
        tmux.keys(&[&mv, "Enter"]);
        clients.wait(bob, |l| l == format!("move 1 {mv}"));
    }
    // bob leaves the pool (no new pairing), then the TUI resigns (confirmed with y).
    clients.send(bob, "pause");
    clients.wait(bob, |l| l.starts_with("paused: "));
    tmux.keys(&["resign", "Enter"]);
    tmux.wait_screen("the resign question", |s| s.contains("Resign this game?"));
    tmux.keys(&["y"]);
    clients.wait(bob, |l| {
        l == format!("game over: {bob_side} wins by resign")
    });

    // Back in the arena's view, with the new scores.
    let first = row(1, "bob", 2, "2000", "2 (paused)");
    let second = row(2, "Tui", 0, "1000", "0 (you)");
    let screen = tmux.wait_screen("the new standings", |s| {
        s.contains(&first) && s.contains(&second)
    });
    assert!(screen.contains("Arena: Test arena"), "{screen}");
    assert!(
        screen.contains("in the pool: you are paired as soon as an opponent is free"),
        "{screen}"
    );
    // The side panes are not left empty between games: the Players pane lists the
    // arena's players, the Moves pane gives way to the arena's games (issue 47, finding 1).
    let panes = tmux.wait_screen("the side panes", |s| {
        s.contains(" 1 bob 2 (paused)") && s.contains(" 2 Tui 0 (you)")
    });
    assert!(panes.contains("Arena games"), "{panes}");
    assert!(panes.contains("bob beat Tui"), "{panes}");
    tmux.keys(&["C-c"]);
}

/// A private arena is opened by its code (typed in lower case, read forgivingly) and joined
/// by it; its heading shows the code; quitting pauses and exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_arena_is_opened_and_joined_by_its_code() {
    let server = arena_server();
    let mut org = Client::guest(&server, "org").await;
    let created = org
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0},
            "starts_in_ms":600000,"duration_ms":60000,"name":"Private",
            "visibility":"private"}),
        )
        .await;
    assert_eq!(created["t"], "arena", "{created}");
    let id = created["doc"]["id"].as_str().expect("id").to_string();
    let code = created["doc"]["code"].as_str().expect("code").to_string();
    org.close().await;
    let mut clients = Clients::with_url(&server.ws_url());
    let carol = clients.spawn("carol", &["arena", &code.to_ascii_lowercase()]);
    let heading = clients.wait(carol, |l| l.starts_with(&format!("arena {id} ")));
    assert_eq!(
        heading,
        format!(
            "arena {id} Private: unane width=4,height=3 · 15s+0 · casual · 0 players · code {code}"
        )
    );
    clients.send(carol, "join");
    wait_rows(
        &mut clients,
        carol,
        &[vec![plain_row(1, "carol", 0, "-", "(you)")]],
        &["joined the arena: pairing starts at its start"],
    );
    clients.send(carol, "quit");
    clients.wait(carol, |l| {
        l == format!(
            "left the arena's pool (paused; your points stay): come back with stoa arena {}, then join",
            code.to_ascii_lowercase()
        )
    });
    clients.expect_exit(carol, TIMEOUT);
    // The pause reached the server before the exit.
    let (status, body) = server.http_get(&format!("/api/arenas/{id}?code={code}"));
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(doc["players"][0]["name"], "carol", "{doc}");
    assert_eq!(doc["players"][0]["paused"], true, "{doc}");
}

/// A public arena is listed in `stoa lobby` with its settings, countdown and players, and
/// `arena <id>` typed at the lobby opens it there; `join` then enters its pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_lists_a_public_arena_and_opens_it() {
    let server = arena_server();
    let id = create_arena(&server, 60_000).await;
    let mut clients = Clients::with_url(&server.ws_url());
    let eve = clients.spawn("eve", &["lobby"]);
    let line = clients.wait(eve, |l| l.starts_with(&format!("  arena {id} ")));
    let prefix =
        format!("  arena {id} Test arena · unane width=4,height=3 15s+0 casual · starts in ");
    assert!(line.starts_with(&prefix), "{line}");
    assert!(line.ends_with(" · 0 players"), "{line}");
    clients.wait(eve, |l| {
        l == "type: watch <game-id> | join <room-code> | arena <arena-id>"
    });
    clients.send(eve, &format!("arena {id}"));
    let heading = clients.wait(eve, |l| {
        l.starts_with(&format!("arena {id} ")) && l.contains(':')
    });
    assert_eq!(
        heading,
        format!(
            "arena {id} Test arena: unane width=4,height=3 · 15s+0 · casual · berserk allowed · 0 players"
        )
    );
    clients.send(eve, "join");
    clients.wait(eve, |l| {
        l == "joined the arena: pairing starts at its start"
    });
    // The lobby counts the new player.
    let mut watcher = Client::guest(&server, "watcher").await;
    let lobby = watcher.request(json!({"t":"lobby.watch"})).await;
    assert_eq!(lobby["doc"]["arenas"][&id]["players"], 1, "{lobby}");
}

/// `stoa host-arena`: a player creates a private arena from the terminal and joins it
/// (`--join`); the line it prints names the arena and the code others open it with; another
/// player opens it by that code and sees the host in the standings; the server holds the
/// settings as given. Bad settings are refused with an error line and exit status 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_hosted_from_the_terminal_is_created_joined_and_opened_by_its_code() {
    let server = arena_server();
    let mut clients = Clients::with_url(&server.ws_url());
    let dave = clients.spawn(
        "dave",
        &[
            "host-arena",
            "unane",
            "--options",
            "width=4,height=3",
            "--clock",
            "1+0",
            "--minutes",
            "2",
            "--starts-in",
            "600",
            "--title",
            "Hosted",
            "--private",
            "--berserk",
            "--join",
        ],
    );
    let created = clients.wait(dave, |l| l.starts_with("created arena "));
    let rest = created.strip_prefix("created arena ").expect("prefix");
    // The server is not the default one: the line names it (issue 47, item 3).
    let (id, code) = rest
        .split_once(&format!(
            "; others open it with: stoa --server {} arena ",
            server.ws_url()
        ))
        .unwrap_or_else(|| panic!("{created}"));
    let (id, code) = (id.to_string(), code.to_string());
    assert!(id.starts_with('a') && id.len() == 13, "{created}");
    assert_eq!(code.len(), 10, "{created}");
    // And the arena's page for a browser, with the private arena's code.
    let link = clients.wait(dave, |l| l.starts_with("or this link: "));
    assert_eq!(
        link,
        format!("or this link: http://{}/t/{id}?code={code}", server.addr)
    );
    let (status, _) = server.http_get(&format!("/t/{id}?code={code}"));
    assert_eq!(status, 200, "the link opens the arena's page");
    wait_rows(
        &mut clients,
        dave,
        &[vec![plain_row(1, "dave", 0, "-", "(you)")]],
        &["joined the arena: pairing starts at its start"],
    );

    let erin = clients.spawn("erin", &["arena", &code]);
    let heading = clients.wait(erin, |l| l.starts_with(&format!("arena {id} ")));
    assert_eq!(
        heading,
        format!(
            "arena {id} Hosted: unane width=4,height=3 · 1+0 · casual · berserk allowed · 1 player · code {code}"
        )
    );
    wait_rows(
        &mut clients,
        erin,
        &[vec![plain_row(1, "dave", 0, "-", "")]],
        &[],
    );

    let (status, body) = server.http_get(&format!("/api/arenas/{id}?code={code}"));
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(doc["name"], "Hosted", "{doc}");
    assert_eq!(doc["kind"], "unane", "{doc}");
    assert_eq!(doc["options"], json!({"width":4,"height":3}), "{doc}");
    assert_eq!(doc["berserk"], true, "{doc}");
    assert_eq!(
        doc["ends_at"]
            .as_u64()
            .zip(doc["starts_at"].as_u64())
            .map(|(e, s)| e - s),
        Some(120_000),
        "{doc}"
    );
    assert_eq!(
        doc["clock"],
        json!({"kind":"fischer","initial_ms":60000,"increment_ms":0}),
        "{doc}"
    );
    assert_eq!(doc["visibility"], "private", "{doc}");
    assert_eq!(doc["creator"]["name"], "dave", "{doc}");
    assert_eq!(doc["players"][0]["name"], "dave", "{doc}");
    assert_eq!(doc["players"].as_array().map(Vec::len), Some(1), "{doc}");
    for c in [dave, erin] {
        clients.send(c, "quit");
        clients.expect_exit(c, TIMEOUT);
    }

    // Settings the server refuses: an error line, nothing created, exit status 1.
    let config = TempDir::new("arena-refused");
    let args = ["host-arena", "unane", "--minutes", "0.01"];
    let (status, stdout) = run_to_end(&server, &config, "fay", &args);
    assert_eq!(status, Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l == "error invalid_options: duration_ms must be between 10000 and 86400000"),
        "{stdout}"
    );
    assert!(!stdout.contains("created arena"), "{stdout}");
}

/// A plain player whose first move never came (issue 47, finding 1): told they are paused
/// (as the server did) and how to come back, not that they are paired again; back in with
/// join, they lose the next game; at the end the standings show nobody paused and name the
/// winner and second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_without_a_first_move_is_told_they_are_paused_and_the_end_names_the_winner() {
    let mut args: Vec<&str> = LOOSE.to_vec();
    // The first move's window must outlast ann's pause and resign in the second game (bob
    // may be first there and never moves) on a loaded machine: 6 s, and the arena long
    // enough for the first game's abort, the second game and the pairing cut-off.
    args.extend_from_slice(&["--queue-wave-ms", "200", "--first-action-ms", "6000"]);
    let server = Server::start_with(&args);
    // 3 s a side, 24 s long: pairing goes on until 3 s before the end.
    let mut bob = Client::guest(&server, "bob").await;
    let created = bob
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":3000,"duration_ms":24000,"name":"Short"}),
        )
        .await;
    let id = created["doc"]["id"].as_str().expect("arena id").to_string();
    let mut clients = Clients::with_url(&server.ws_url());
    let ann = clients.spawn("ann", &["arena", &id, "--join"]);
    clients.wait(ann, |l| l.starts_with("joined the arena"));
    let joined = bob.request(json!({"t":"arena.join","id":id})).await;
    assert_eq!(joined["t"], "ok", "{joined}");
    // The first game: bob makes his first move when he is first, ann never moves.
    let started = bob.recv_where(|m| m["t"] == "game.started").await;
    let game = started["game_id"].as_str().expect("game").to_string();
    // `game.legal` lists the side to act's moves, whoever asks: bob moves only on his turn.
    let snap = bob
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == game.as_str())
        .await;
    let bob_first = snap["doc"]["to_act"] == started["side"];
    let legal = bob.request(json!({"t":"game.legal","game_id":game})).await;
    if let Some(mv) = legal["moves"][0].as_str().filter(|_| bob_first) {
        let moved = bob
            .request(json!({"t":"game.move","game_id":game,"move":mv}))
            .await;
        assert_eq!(moved["t"], "ok", "{moved}");
    }
    let back = clients.wait(ann, |l| l.starts_with("back to the arena"));
    assert_eq!(
        back,
        format!(
            "back to the arena: you are paused, as your first move never came; type join to be paired again (or later: stoa --server {} arena {id} --join)",
            server.ws_url()
        )
    );
    // Back in: the next game ann leaves the pool, then resigns (no game after it).
    clients.send(ann, "join");
    clients.wait(ann, |l| l.starts_with("game started "));
    clients.send(ann, "pause");
    clients.wait(ann, |l| l.starts_with("paused: this game goes on"));
    clients.send(ann, "resign");
    clients.wait(ann, |l| l.starts_with("game over: "));
    // The end: nobody paused any more, and the winner named.
    clients.wait(ann, |l| {
        l == "arena finished: these are the final standings"
    });
    wait_rows(
        &mut clients,
        ann,
        &[
            vec![plain_row(1, "bob", 2, "2000", "2")],
            vec![plain_row(2, "ann", 0, "1000", "0 (you)")],
        ],
        &["winner: bob with 2 points", "2nd: ann with 0 points"],
    );
}
