//! The terminal UI under a real pseudo-terminal (tmux): the board and both clocks appear, the
//! running clock counts down, and a move typed into the input line reaches the opponent.
#![forbid(unsafe_code)]

use stoa_tests::clients::{Clients, ServingBot, HOST_SMALL_UNANE};
use stoa_tests::temp_dir::TempDir;
use stoa_tests::tmux::{sh_quote, tui_command, Tmux};
use stoa_tests::Server;

/// `stoa host` arguments for a 5x4 Ūnane game on the default clock, the host on black (who
/// moves first).
const HOST_UNANE_5X4: &[&str] = &[
    "host",
    "unane",
    "--side",
    "black",
    "--options",
    "width=5,height=4",
];

/// The fixture of most tests: a server of their own and no `stoa` processes yet, or `None`
/// (said on stderr) where tmux is not installed.
fn stage() -> Option<(Server, Clients)> {
    if Tmux::missing() {
        return None;
    }
    Some(Clients::with_server())
}

/// A game between a plain-mode host started with `host_args` and the terminal UI (`Tui`),
/// which joins by the room code: the host, the room code, the tmux session and the game id.
fn tui_joins(
    server: &Server,
    clients: &mut Clients,
    tag: &str,
    host_args: &[&str],
) -> (usize, String, Tmux, String) {
    let (host, code) = clients.spawn_host("host", host_args);
    let tmux = Tmux::stoa(tag, &server.ws_url(), "Tui", &format!("join {code}"));
    let id = clients.game_started(host);
    (host, code, tmux, id)
}

/// [`tui_joins`] with [`HOST_UNANE_5X4`], once the board is on screen: the host, the tmux
/// session and the game id.
fn tui_game(server: &Server, clients: &mut Clients, tag: &str) -> (usize, Tmux, String) {
    let (host, _code, tmux, id) = tui_joins(server, clients, tag, HOST_UNANE_5X4);
    tmux.wait_screen("the board", |s| {
        s.contains("a b c d e") && s.contains("black to act")
    });
    (host, tmux, id)
}

#[test]
fn tui_shows_board_and_both_clocks_and_takes_moves() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let timed = [HOST_UNANE_5X4, &["--clock", "5+3"]].concat();
    let (host, _code, tmux, _id) = tui_joins(&server, &mut clients, "game", &timed);

    // The board (files and ranks of the 5x4 grid) and both players' clocks at 5:00. Waited
    // for whole, status line included: tmux may be read in the middle of a redraw.
    let screen = tmux.wait_screen("the board, both clocks and the status", |s| {
        s.contains("a b c d e")
            && s.matches("5:00").count() >= 2
            && s.contains("host")
            && s.contains("Tui")
            && s.contains("black to act")
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

/// The lobby screen lists a public room; Enter on it joins, and the game's board appears.
#[test]
fn tui_lobby_lists_a_room_and_enter_joins_it() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (host, code) = clients.spawn_host(
        "host",
        &[
            "host", "akunur", "--public", "--side", "light", "--clock", "10+5",
        ],
    );
    let tmux = Tmux::stoa("lobby", &server.ws_url(), "Tui", "lobby");
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

/// `legal` and `help` open a window that shows all of it (nothing cut), scrolls, and
/// closes with Esc; `help staku` shows the game's guide.
#[test]
fn tui_long_output_opens_in_a_window() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (host, tmux, _id) = tui_game(&server, &mut clients, "pages");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    tmux.wait_screen("our turn", |s| {
        s.contains("1. a4xb4") && s.contains("your turn")
    });

    // Every legal move of white's first turn (swap included) is in the window.
    let mut game = stoa_protocol::kind("unane")
        .unwrap()
        .start(&serde_json::json!({"width":5,"height":4}))
        .unwrap();
    game.play("a4xb4").unwrap();
    let legal = game.legal_notations();
    assert!(legal.len() > 12, "enough moves to overflow a message pane");
    tmux.keys(&["legal", "Enter"]);
    // Every move, as a word of its own, in one capture.
    tmux.wait_screen("the legal moves window with every move", |s| {
        s.contains(&format!("legal moves ({})", legal.len()))
            && legal.iter().all(|m| {
                s.split(|c: char| c.is_whitespace() || c == '│')
                    .any(|w| w == m)
            })
    });
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the window closed", |s| !s.contains("legal moves ("));

    // help: every command, down to the last line.
    tmux.keys(&["help", "Enter"]);
    // One predicate for the whole window: a capture may catch it half drawn.
    tmux.wait_screen("the help window's first page", |s| {
        s.contains(" commands ")
            && ["<move>", "draw decline", "rematch"]
                .iter()
                .all(|line| s.contains(line))
    });
    // Longer than the screen: the rest is a page or two down (the list grows with commands).
    tmux.keys(&["NPage"]);
    for _ in 0..4 {
        std::thread::sleep(std::time::Duration::from_millis(300));
        if tmux.capture().contains("stoa watch <game-id>") {
            break;
        }
        tmux.keys(&["NPage"]);
    }
    tmux.wait_screen("the help window down to its last command", |s| {
        s.contains(" commands ")
            && ["help <game>", "quit", "stoa watch <game-id>"]
                .iter()
                .all(|line| s.contains(line))
    });
    tmux.keys(&["Escape"]);

    // help staku: the guide, scrolled to its notation section.
    tmux.keys(&["help staku", "Enter"]);
    // Its title, its first line and the scrolling hint of a long text, in one capture.
    tmux.wait_screen("the Staku guide", |s| {
        s.contains("how to play staku")
            && s.contains("Staku — a player's guide")
            && s.contains("PgUp/PgDn")
    });
    // Page down to the end, however long the guide grows (30 pages were enough until the
    // guide's position blocks).
    for _ in 0..60 {
        if tmux.capture().contains("See also") {
            break;
        }
        tmux.keys(&["PageDown"]);
    }
    tmux.wait_screen("the end of the guide", |s| s.contains("See also"));
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the board again", |s| !s.contains("how to play staku"));

    // An illegal move's error stays under the board even as other notes arrive.
    tmux.keys(&["a3xa4", "Enter"]);
    let screen = tmux.wait_screen("the error above the input line", |s| {
        s.contains("move or command") && s.contains("error illegal_move: a3xa4 not played")
    });
    let rows: Vec<&str> = screen.lines().collect();
    let hint = rows
        .iter()
        .position(|l| l.contains("error illegal_move: a3xa4"))
        .expect("error row");
    assert!(
        rows[hint + 1..]
            .iter()
            .any(|l| l.contains("move or command")),
        "the error is just above the input line:\n{screen}"
    );
    clients.send(host, "draw offer");
    tmux.wait_screen("the offer", |s| s.contains("draw offered by black"));
    let screen = tmux.capture();
    assert!(
        screen.contains("error illegal_move: a3xa4 not played"),
        "a later note does not push the error away:\n{screen}"
    );

    // A confirmed resignation ends the game.
    tmux.keys(&["resign", "Enter"]);
    tmux.wait_screen("the resign question", |s| s.contains("Resign this game?"));
    tmux.keys(&["y"]);
    clients.wait(host, |l| l == "game over: black wins by resign");
    tmux.wait_screen("the ending", |s| {
        s.contains("White resigned — Black wins (you lost)")
    });
}

/// `resign` and Ctrl-C in a running game ask first; leaving says how to come back.
#[test]
fn tui_asks_before_resigning_or_leaving_and_says_how_to_resume() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (host, tmux, id) = tui_game(&server, &mut clients, "confirm");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    tmux.wait_screen("our turn", |s| s.contains("your turn"));

    tmux.keys(&["resign", "Enter"]);
    tmux.wait_screen("the resign question", |s| {
        s.contains("Resign this game? Press y to resign")
    });
    tmux.keys(&["n"]);
    tmux.wait_screen("still playing", |s| {
        s.contains("not resigned: the game goes on")
    });

    // The draw offer the host declines is reported to us.
    tmux.keys(&["draw offer", "Enter"]);
    clients.wait(host, |l| l.starts_with("draw offered by white"));
    clients.send(host, "draw decline");
    tmux.wait_screen("the declined offer", |s| {
        s.contains("black declined your draw offer")
    });

    tmux.keys(&["C-c"]);
    tmux.wait_screen("the leave question", |s| {
        s.contains("Leave? The game goes on and your clock runs")
            && s.contains(&format!("stoa watch {id}"))
    });
    tmux.keys(&["x"]);
    tmux.wait_screen("still here", |s| s.contains("still here: the game goes on"));
    tmux.keys(&["C-c"]);
    tmux.wait_screen("the leave question again", |s| {
        s.contains("Press y to leave")
    });
    tmux.keys(&["y"]);
    tmux.wait_screen("the resume line after leaving", |s| {
        s.contains(&format!(
            "game {id} goes on without you and your clock runs; resume with: stoa watch {id}"
        ))
    });
    clients.wait(host, |l| l == "white offline");
}

/// A board larger than the terminal is announced, with the size needed.
#[test]
fn tui_warns_when_the_terminal_is_too_small() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (_host, code) = clients.spawn_host("host", &["host", "akron", "--side", "vert"]);
    let config = TempDir::new("small");
    let tmux = Tmux::start_sized(
        "small",
        &tui_command(&config, &server.ws_url(), "Tui", &format!("join {code}")),
        80,
        24,
    );
    let screen = tmux.wait_screen("the size warning", |s| {
        s.contains("terminal too small for the board: needs")
    });
    assert!(screen.contains("has 80x24"), "{screen}");
}

/// The queue screen says where we stand and how many others wait.
#[test]
fn tui_queue_screen_shows_who_else_waits() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    // Someone waits in another queue.
    let other = clients.spawn("other", &["play", "akron", "--clock", "1+0"]);
    clients.wait(other, |l| l.starts_with("queued position 1"));
    let tmux = Tmux::stoa("queue", &server.ws_url(), "Tui", "play staku --clock 3+2");
    tmux.wait_screen("the queue screen", |s| {
        s.contains("In the queue for staku (3+2)")
            && s.contains("Your place in the queue:      1")
            && s.contains("Others with the same settings: nobody yet")
            && s.contains("Players in other queues:      1")
            && s.contains("Waiting for 0:0")
            && s.contains("Ctrl-C leaves the queue")
    });
}

/// A spectator in the terminal UI follows the players into their rematch.
#[test]
fn tui_spectator_follows_the_rematch() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (host, code) = clients.spawn_host("host", &[HOST_UNANE_5X4, &["--public"]].concat());
    let guest = clients.spawn("guest", &["join", &code]);
    let first = clients.game_started(host);
    let tmux = Tmux::stoa(
        "rematch",
        &server.ws_url(),
        "Watcher",
        &format!("watch {first}"),
    );
    tmux.wait_screen("the first game", |s| {
        s.contains(&format!("unane game {first}"))
    });
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    tmux.wait_screen("the first ending", |s| {
        s.contains("Black resigned — White wins")
    });
    clients.send(host, "rematch");
    tmux.wait_screen("the rematch request", |s| {
        s.contains("rematch requested by black")
    });
    clients.send(guest, "rematch");
    let again = clients.wait(host, |l| {
        l.starts_with("game started ") && !l.contains(&first)
    });
    let second = again.split(' ').nth(2).expect("rematch id").to_string();
    tmux.wait_screen("the rematch's board", |s| {
        s.contains("rematch started: watching")
            && s.contains(&format!("unane game {second}"))
            && s.contains("black to act")
    });
    // The rematch's moves reach the spectator.
    let mover = clients.wait_any(&[host, guest], |l| l == "your turn");
    clients.send(mover, "a4xb4");
    tmux.wait_screen("the rematch's first move", |s| s.contains("1. a4xb4"));
}

/// `stoa replay FILE` steps through a record on the terminal board: arrows, End, a jump.
#[test]
fn tui_replay_steps_through_a_record() {
    if Tmux::missing() {
        return;
    }
    stoa_tests::build_binaries();
    let dir = TempDir::new("replay");
    let file = dir.0.join("game.txt");
    std::fs::write(
        &file,
        "[Game \"unane\"]\n[Options \"{\\\"width\\\":4,\\\"height\\\":3}\"]\n[Id \"gdemo\"]\n\
         [Black \"Ann\"]\n[White \"Bob\"]\n[Result \"black\"]\n[Reason \"resign\"]\n\n\
         1. a3xb3 2. d3xc3 3. b3xc3\n",
    )
    .unwrap();
    let command = format!(
        "env TERM=xterm-256color {} replay {}; sleep 30",
        sh_quote(&stoa_tests::binary("stoa").to_string_lossy()),
        sh_quote(&file.to_string_lossy())
    );
    let tmux = Tmux::start("replay", &command);
    tmux.wait_screen("the start", |s| {
        s.contains("unane gdemo · black Ann vs white Bob")
            && s.contains("ply 0/3: start")
            && s.contains("  3 B W B W 3")
    });
    tmux.keys(&["Right", "Right"]);
    tmux.wait_screen("two moves on", |s| {
        s.contains("ply 2/3: d3xc3") && s.contains("  3 . B W . 3")
    });
    tmux.keys(&["End"]);
    tmux.wait_screen("the end", |s| {
        s.contains("ply 3/3: b3xc3") && s.contains("end: black wins by resign")
    });
    tmux.keys(&["1", "Enter"]);
    tmux.wait_screen("a jump to move 1", |s| s.contains("ply 1/3: a3xb3"));
    tmux.keys(&["Left"]);
    tmux.wait_screen("back to the start", |s| s.contains("ply 0/3: start"));
}

/// The players panel marks a computer opponent as such (issue 28, item 8) and shows the
/// players' ratings (item 9).
#[test]
fn tui_marks_the_computer_in_the_players_panel() {
    let Some((server, _clients)) = stage() else {
        return;
    };
    let _bot = ServingBot::start(&server.ws_url(), "tui-bot");
    let config = TempDir::new("tui-computer");
    // Asked until the bot serves (it may still be connecting).
    let deadline = std::time::Instant::now() + stoa_tests::clients::TIMEOUT;
    let (tmux, screen) = loop {
        let tmux = Tmux::start(
            "computer",
            &tui_command(
                &config,
                &server.ws_url(),
                "Tui",
                "play unane --options width=4,height=3 --clock none --computer 1 --side white",
            ),
        );
        let screen = tmux.wait_screen("the game or a refusal", |s| {
            s.contains("bot-level-1") || s.contains("unavailable")
        });
        if screen.contains("bot-level-1") {
            let screen = tmux.wait_screen("the computer marked", |s| {
                s.contains("bot-level-1 (computer)")
            });
            break (tmux, screen);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no computer: {screen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert!(screen.contains("Players"), "{screen}");
    // The person's rating shows in the panel too (issue 28, item 9).
    assert!(screen.contains("white Tui (1500) (you)"), "{screen}");
    // The computer's whole label, not cut at the panel's edge (issue 47, item 8).
    assert!(screen.contains("bot-level-1 (computer) (1500)"), "{screen}");

    // An error longer than the screen is wide wraps under the board, whole (issue 47,
    // item 8): its end is on the row just above the input box.
    tmux.keys(&["frobnicate the board please", "Enter"]);
    let screen = tmux.wait_screen("the error under the board", |s| {
        s.contains("error input: 'frobnicate the board please' is neither")
    });
    let rows: Vec<&str> = screen.lines().collect();
    let input = rows
        .iter()
        .rposition(|l| l.contains("move or command"))
        .expect("the input box");
    assert!(
        rows[input - 1].trim_end().ends_with("· help · quit"),
        "the error's end is shown:\n{screen}"
    );
    assert!(
        rows[input - 2].starts_with("error input: 'frobnicate the board please'"),
        "the error's start is on the row above:\n{screen}"
    );
}

/// The Messages pane says the end of a game in words (not the protocol's codes), the
/// status line counts "1 move", and a spectator and the lobby are offered their own
/// commands, not the players' (issue 28, item 10).
#[test]
fn tui_says_ends_in_words_and_offers_each_screen_its_commands() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    // A public game, so anyone may watch it by id.
    let public = [HOST_UNANE_5X4, &["--public"]].concat();
    let (host, _code, tmux, id) = tui_joins(&server, &mut clients, "words", &public);
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    let screen = tmux.wait_screen("one move", |s| s.contains("your turn (white)"));
    assert!(screen.contains(" · 1 move · "), "{screen}");
    assert!(
        screen.contains(" move or command (help, Tab completes"),
        "{screen}"
    );

    // A spectator of the same game.
    let watcher = Tmux::stoa(
        "words-watch",
        &server.ws_url(),
        "Eve",
        &format!("watch {id}"),
    );
    let screen = watcher.wait_screen("the watched board", |s| s.contains("white to act"));
    assert!(
        screen.contains("watching: say <text> · watch <game> · join <code> · help · quit"),
        "{screen}"
    );
    assert!(
        screen.contains(" command (help, Ctrl-C quits) "),
        "{screen}"
    );
    assert!(!screen.contains("move or command"), "{screen}");
    assert!(!screen.contains("resign"), "{screen}");

    clients.send(host, "resign");
    let screen = tmux.wait_screen("the end in the messages", |s| {
        s.contains("game over: Black resigned")
    });
    assert!(!screen.contains("wins by resign"), "{screen}");

    // The lobby.
    let lobby = Tmux::stoa("words-lobby", &server.ws_url(), "Lou", "lobby");
    let screen = lobby.wait_screen("the lobby", |s| s.contains("Lobby"));
    let screen = if screen.contains("lobby: ↑/↓") {
        screen
    } else {
        lobby.wait_screen("the lobby's commands", |s| s.contains("lobby: ↑/↓"))
    };
    assert!(
        screen.contains(
            "lobby: ↑/↓ and Enter join a room or watch a game · join <code> · watch <game> · help · quit"
        ),
        "{screen}"
    );
    assert!(!screen.contains("move or command"), "{screen}");
}

/// `say <text>` chats from the terminal UI and from plain mode: the players' lines show in
/// the Messages pane and on stdout, markup shows as typed, a spectator's line goes to the
/// spectators only, and an over-long line is refused with the server's reason.
#[test]
fn tui_and_plain_mode_chat_with_say() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let (host, code, tmux, _id) = tui_joins(&server, &mut clients, "chat", HOST_UNANE_5X4);
    tmux.wait_screen("the board", |s| s.contains("black to act"));
    tmux.keys(&["-l", "say hello <b>there</b>"]);
    tmux.keys(&["Enter"]);
    tmux.wait_screen("our own line in the messages", |s| {
        s.contains("chat Tui: hello <b>there</b>")
    });
    clients.wait(host, |l| l == "chat Tui: hello <b>there</b>");
    clients.send(host, "say  good luck  to you");
    clients.wait(host, |l| l == "chat host: good luck  to you");
    tmux.wait_screen("the host's line", |s| {
        s.contains("chat host: good luck  to you")
    });

    // A spectator (by the room code: the game is private) talks with spectators only.
    let watcher = clients.spawn("eve", &["watch", &code]);
    clients.wait(watcher, |l| l.starts_with("watching "));
    clients.send(watcher, "say nice game");
    clients.wait(watcher, |l| l == "chat [spectators] eve: nice game");
    // The host's next line arrives after the spectator's would have: it did not come.
    clients.send(host, "say still here");
    let next = clients.wait(host, |l| l.starts_with("chat "));
    assert_eq!(next, "chat host: still here");

    let long = format!("say {}", "x".repeat(301));
    clients.send(host, &long);
    clients.wait(host, |l| {
        l == "error bad_request: a chat line may be at most 300 characters (this one has 301)"
    });
    let screen = tmux.capture();
    assert!(!screen.contains("nice game"), "{screen}");

    // A second spectator mutes the first by name; the players turn the spectators off.
    let zed = clients.spawn("zed", &["watch", &code]);
    clients.wait(zed, |l| l == "chat [spectators] eve: nice game");
    clients.send(zed, "mute eve");
    clients.wait(zed, |l| {
        l == "muted: their chat lines no longer reach you here"
    });
    clients.send(watcher, "say are you there");
    clients.wait(watcher, |l| l == "chat [spectators] eve: are you there");
    clients.send(zed, "say hi");
    let next = clients.wait(zed, |l| l.starts_with("chat "));
    assert_eq!(next, "chat [spectators] zed: hi");
    clients.send(host, "spectators off");
    for c in [watcher, zed] {
        clients.wait(c, |l| l == "the players turned the spectators' chat off");
    }
    clients.send(watcher, "say hello?");
    clients.wait(watcher, |l| {
        l == "error forbidden: the players turned the spectators' chat off for this game"
    });
}

/// At the end of a rated game the terminal UI says the player's rating change in its
/// Messages pane, with the figures of the game's record (issue 28, item 9).
#[test]
fn tui_says_the_rating_change_at_the_end_of_a_rated_game() {
    if Tmux::missing() {
        return;
    }
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let mut args = HOST_SMALL_UNANE.to_vec();
    args.push("--rated");
    let (host, code, tmux, id) = tui_joins(&server, &mut clients, "rated", &args);
    tmux.wait_screen("the rated game", |s| {
        s.contains("a b c d e") && s.contains("black to act")
    });
    // Both act once (a game ended before that is unrated), then black (the host) resigns.
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    tmux.wait_screen("our turn", |s| s.contains("your turn"));
    tmux.keys(&["d4xc4", "Enter"]);
    clients.wait(host, |l| l == "move 2 d4xc4");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    let after = server.ratings_after(&id, Some(&code));
    let now = after["white"]
        .as_f64()
        .expect("white's rating after")
        .round() as i64;
    assert!(now > 1500, "{after}");
    let line = format!("your rating 1500 -> {now} ({:+})", now - 1500);
    let screen = tmux.wait_screen("the rating change", |s| s.contains(&line));
    assert!(
        screen.contains("Black resigned — White wins (you won)"),
        "{screen}"
    );
    tmux.keys(&["C-c"]);
}

/// The devices holding an identity, at the terminal UI's prompt: `link` shows a one-time
/// code (redeemed here by `stoa link <code>` in another config directory), `devices` lists
/// both devices numbered with "this device" marked, and `revoke 2` revokes the other one:
/// its open plain-mode session is told and cut off, and the list is down to one.
#[test]
fn tui_lists_links_and_revokes_devices() {
    let Some((server, mut clients)) = stage() else {
        return;
    };
    let tmux = Tmux::stoa("devices", &server.ws_url(), "Tui", "lobby");
    tmux.wait_screen("the lobby", |s| s.contains("Lobby"));

    // Before any list, a number names nothing.
    tmux.keys(&["revoke 2", "Enter"]);
    tmux.wait_screen("revoke before devices", |s| {
        s.contains("error input: type devices first")
    });

    tmux.keys(&["link", "Enter"]);
    let screen = tmux.wait_screen("a link code", |s| s.contains("link code: "));
    let code: String = screen
        .split("link code: ")
        .nth(1)
        .expect("the code")
        .chars()
        .take(8)
        .collect();
    assert!(
        code.chars().all(|c| c.is_ascii_alphanumeric()),
        "{code:?} in {screen}"
    );

    // Another terminal (its own config directory) redeems it and connects as Tui.
    let other = TempDir::new("tui-devices-other");
    let linker = clients.spawn_in("Other", &other.0, &["link", &code]);
    clients.wait(linker, |l| {
        l.starts_with("linked: this terminal is now Tui")
    });
    let second = clients.spawn_in("Tui", &other.0, &["lobby"]);
    clients.wait(second, |l| l.starts_with("connected as Tui "));

    tmux.keys(&["devices", "Enter"]);
    let screen = tmux.wait_screen("both devices listed", |s| {
        s.contains("devices of Tui (2)") && s.contains("2. terminal  linked ")
    });
    let first = screen
        .lines()
        .find(|l| l.contains("1. terminal  linked "))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(first.contains("(this device)"), "{screen}");
    let second_line = screen
        .lines()
        .find(|l| l.contains("2. terminal  linked "))
        .expect("second");
    assert!(!second_line.contains("(this device)"), "{screen}");
    tmux.keys(&["Escape"]);

    tmux.keys(&["revoke 3", "Enter"]);
    tmux.wait_screen("a number off the list", |s| {
        // The Messages pane wraps at its width: a line's start is what fits.
        s.contains("error input: '3' is not a device")
    });
    tmux.keys(&["revoke 2", "Enter"]);
    tmux.wait_screen("the revocation", |s| {
        s.contains("revoked terminal: its token no")
    });
    // The revoked device's open session is told and cut off at once.
    clients.wait(second, |l| l.contains("this device was revoked"));
    clients.wait(second, |l| {
        l.contains("the server refused to resume this session (unauthorized)")
    });

    tmux.keys(&["devices", "Enter"]);
    let screen = tmux.wait_screen("one device left", |s| s.contains("devices of Tui (1)"));
    assert!(!screen.contains("2. terminal"), "{screen}");
    tmux.keys(&["Escape", "C-c"]);
}
