//! End-to-end tests of the reference client `stoa` against the real `stoa-server`: two
//! players in plain mode (separate config directories) play a full game of each kind through
//! host/join, and a third process watches it to the end; plus the terminal UI under tmux.
//!
//! Why scripted lines computed with the rules engines: the test must know which moves are
//! legal and how the game ends, without the client needing any rules knowledge. Each move is
//! sent only after the process to act printed `your turn`, so there are no sleeps as
//! synchronisation.
#![forbid(unsafe_code)]

use std::time::Duration;

use serde_json::json;
use stoa_tests::clients::{host_untimed_unane, Clients, HOST_SMALL_UNANE, TIMEOUT};
use stoa_tests::script::scripted_game;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{Client, Server};

/// A tiny untimed Ūnane game (4x3), the host on black.
const HOST_TINY_UNANE: &[&str] = &host_untimed_unane("width=4,height=3");

/// Plays one full game of `kind` and checks that both players and a spectator see its end.
fn full_game(kind: &str, options: serde_json::Value, seed: u64) {
    let (server, mut clients) = Clients::with_server();
    let script = scripted_game(kind, &options, seed, 400);
    eprintln!(
        "{kind}: {} scripted actions, expected end: {}",
        script.moves.len(),
        script.outcome
    );
    let first_side = stoa_protocol::kind(kind).unwrap().side_names[0];
    let opts = options.to_string();
    let (host, code) = clients.spawn_host(
        "host",
        &[
            "host",
            kind,
            "--public",
            "--side",
            first_side,
            "--clock",
            "none",
            "--options",
            &opts,
        ],
    );
    // The server is not the default one: the line to share names it.
    let share = format!(
        "share this line with your opponent: stoa --server {} join {code}",
        server.ws_url()
    );
    clients.wait(host, |l| l == share);
    // The same invitation for a browser, on the server the client used (issue 47, item 3).
    let web = format!("http://{}/r/{code}", server.addr);
    clients.wait(host, |l| l == format!("or this link: {web}"));
    let guest = clients.spawn("guest", &["join", &code]);
    let started = clients.wait(host, |l| l.starts_with("game started "));
    let game_id = started.split_whitespace().nth(2).unwrap().to_string();
    assert!(
        started.ends_with(&format!("side {first_side}")),
        "{started}"
    );
    clients.wait(guest, |l| {
        l.starts_with(&format!("game started {game_id} side "))
    });
    let watcher = clients.spawn("watcher", &["watch", &game_id]);
    clients.wait(watcher, |l| l.starts_with("== "));

    for (i, mv) in script.moves.iter().enumerate() {
        // Whoever is to act says so; the scripted move goes to that process.
        let who = clients.wait_any(&[host, guest], |l| l == "your turn");
        clients.send(who, mv);
        for c in [host, guest, watcher] {
            clients.wait(c, |l| l == format!("move {} {}", i + 1, mv));
        }
    }
    if script.resign_side.is_some() {
        let who = clients.wait_any(&[host, guest], |l| l == "your turn");
        clients.send(who, "resign");
    }
    clients.game_over(&[host, guest, watcher], &script.outcome);
    // The watcher leaves on its own at the end; players leave when their input closes.
    clients.quit(&[host, guest]);
    clients.expect_exit(watcher, TIMEOUT);
}

#[test]
fn unane_full_game_host_join_watch() {
    full_game("unane", json!({"width": 4, "height": 3}), 1);
}

#[test]
fn staku_full_game_host_join_watch() {
    full_game("staku", json!({}), 2);
}

#[test]
fn akron_full_game_host_join_watch() {
    full_game("akron", json!({"size": 4, "nodelay": true}), 3);
}

#[test]
fn akunur_full_game_host_join_watch() {
    full_game("akunur", json!({}), 0);
}

/// Errors come back as `error <code>: <message>` lines and change nothing; a draw offer is
/// seen by the opponent and accepted; the watcher joins by the private room's code.
#[test]
fn errors_draw_and_private_watch_by_code() {
    let (_server, mut clients) = Clients::with_server();
    let (host, code) = clients.spawn_host("host", HOST_TINY_UNANE);
    let guest = clients.spawn("guest", &["join", &code]);
    let started = clients.wait(guest, |l| l.starts_with("game started "));
    assert!(started.ends_with("side white"), "{started}");
    clients.wait(guest, |l| l.starts_with("== "));
    let watcher = clients.spawn("watcher", &["watch", &code]);
    clients.wait(watcher, |l| l.starts_with("== "));

    clients.wait(host, |l| l == "your turn");
    clients.send(guest, "a1xa2");
    clients.wait(guest, |l| l.starts_with("error not_your_turn: "));
    clients.send(host, "a1xb2");
    clients.wait(host, |l| l.starts_with("error illegal_move: "));
    clients.send(host, "a3xb3");
    for c in [host, guest, watcher] {
        clients.wait(c, |l| l == "move 1 a3xb3");
    }
    clients.wait(guest, |l| l == "your turn");
    clients.send(watcher, "resign");
    clients.wait(watcher, |l| l.starts_with("error forbidden: "));
    clients.send(guest, "draw offer");
    clients.wait(host, |l| l.starts_with("draw offered by white"));
    clients.send(host, "draw accept");
    clients.game_over(&[host, guest, watcher], "draw by agreement");
    // Rematch: asked by one, seen by the other, started for both with sides exchanged.
    clients.send(guest, "rematch");
    clients.wait(host, |l| l.starts_with("rematch requested by white"));
    clients.send(host, "rematch");
    let again = clients.wait(host, |l| l.starts_with("game started "));
    assert!(again.ends_with("side white"), "{again}");
    assert_ne!(
        again.split_whitespace().nth(2),
        started.split_whitespace().nth(2)
    );
    let again = clients.wait(guest, |l| l.starts_with("game started "));
    assert!(again.ends_with("side black"), "{again}");
    clients.wait(guest, |l| l == "your turn");
    clients.send(guest, "abort");
    clients.game_over(&[host, guest], "aborted");
    clients.quit(&[host, guest]);
    clients.expect_exit(watcher, TIMEOUT);
}

/// The quick-pairing queue pairs two `stoa play` processes with the same settings.
#[test]
fn play_pairs_two_players_through_the_queue() {
    let (_server, mut clients) = Clients::with_server();
    let a = clients.spawn(
        "a",
        &["play", "akron", "--clock", "none", "--options", "size=3"],
    );
    let first = clients.wait(a, |l| l.starts_with("queued ") || l.starts_with("error "));
    if first.starts_with("error unavailable") {
        // Matchmaking (issue 8) is integrated into the server separately.
        eprintln!("the server has no matchmaking yet ({first}): skipping");
        return;
    }
    assert!(first.starts_with("queued "), "{first}");
    let b = clients.spawn(
        "b",
        &["play", "akron", "--clock", "none", "--options", "size=3"],
    );
    let sa = clients.wait(a, |l| l.starts_with("game started "));
    let sb = clients.wait(b, |l| l.starts_with("game started "));
    let id = sa.split_whitespace().nth(2).unwrap();
    assert_eq!(sb.split_whitespace().nth(2), Some(id));
    assert_ne!(sa.split_whitespace().nth(4), sb.split_whitespace().nth(4));
    // Nobody has acted: the side to act may abort.
    let who = clients.wait_any(&[a, b], |l| l == "your turn");
    clients.send(who, "abort");
    clients.game_over(&[a, b], "aborted");
    clients.quit(&[a, b]);
}

/// `stoa lobby` lists a public waiting room and a live public game; `watch <id>` typed into
/// it follows that game.
#[test]
fn lobby_lists_rooms_and_games_and_watches_one() {
    let (_server, mut clients) = Clients::with_server();
    let lobby = clients.spawn("lobby", &["lobby"]);
    let first = clients.wait(lobby, |l| {
        l.starts_with("lobby: ") || l.starts_with("error ")
    });
    if first.starts_with("error unavailable") {
        // The lobby is integrated into the server separately.
        eprintln!("the server has no lobby yet ({first}): skipping");
        return;
    }
    let (host, code) = clients.spawn_host(
        "host",
        &[
            "host", "staku", "--public", "--side", "white", "--clock", "none",
        ],
    );
    clients.wait(lobby, |l| {
        l.trim_start().starts_with(&format!("room {code} staku"))
    });
    let guest = clients.spawn("guest", &["join", &code]);
    let id = clients.game_started(host);
    clients.wait(lobby, |l| {
        l.trim_start().starts_with(&format!("game {id} staku"))
    });
    clients.send(lobby, &format!("watch {id}"));
    clients.wait(lobby, |l| l.starts_with("== staku game "));
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "b1-c1+d1");
    clients.wait(lobby, |l| l == "move 1 b1-c1+d1");
    clients.send(guest, "resign");
    clients.game_over(&[host, guest, lobby], "white wins by resign");
    clients.quit(&[host, guest]);
    clients.expect_exit(lobby, TIMEOUT);
}

/// The pie rule: after `swap` the players exchange colours, so the host who made black's
/// first move now plays white and is to act again; each client follows its new seat.
#[test]
fn swap_exchanges_seats_and_the_turn_follows_the_person() {
    let (_server, mut clients) = Clients::with_server();
    let (host, code) = clients.spawn_host("host", HOST_TINY_UNANE);
    let guest = clients.spawn("guest", &["join", &code]);
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a3xb3");
    clients.wait(guest, |l| l == "your turn");
    clients.send(guest, "swap");
    // The host now sits on white, which is to act.
    clients.wait(host, |l| {
        l.starts_with("white host ") && l.ends_with("(you) to act")
    });
    clients.wait(host, |l| l == "move 2 swap");
    clients.wait(host, |l| l == "your turn");
    clients.wait(guest, |l| {
        l.starts_with("black guest ") && l.ends_with("(you)")
    });
    clients.send(guest, "resign");
    clients.game_over(&[host, guest], "white wins by resign");
    clients.quit(&[host, guest]);
}

/// `stoa watch <room-code>` on a room still waiting for its opponent waits for the game
/// instead of taking the seat; the invited player then joins and the watcher follows the
/// game. `stoa watch` of an unknown id names what was typed.
#[test]
fn watching_a_waiting_room_never_takes_the_seat() {
    let (_server, mut clients) = Clients::with_server();
    let (host, code) = clients.spawn_host("host", HOST_TINY_UNANE);
    let watcher = clients.spawn("watcher", &["watch", &code]);
    clients.wait(watcher, |l| {
        l == format!("room {code} is waiting for its second player: watching starts with its game")
    });
    let guest = clients.spawn("guest", &["join", &code]);
    let started = clients.wait(guest, |l| l.starts_with("game started "));
    assert!(
        started.ends_with("side white"),
        "the invited player sits: {started}"
    );
    clients.wait(watcher, |l| l.starts_with("== "));
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    clients.wait(watcher, |l| l == "game over: white wins by resign");

    let lost = clients.spawn("lost", &["watch", "gnosuchgame00"]);
    let line = clients.wait(lost, |l| l.starts_with("error "));
    assert!(
        line.starts_with("error not_found: cannot watch 'gnosuchgame00': "),
        "{line}"
    );
}

/// `--name` renames a player who already has an identity (same id, new name), and the new
/// name is what an opponent sees.
#[test]
fn name_given_again_renames_the_player() {
    let (_server, mut clients) = Clients::with_server();
    let config = TempDir::new("rename");
    let first = clients.spawn_in("Ann", &config.0, &["lobby"]);
    let line = clients.wait(first, |l| l.starts_with("connected as "));
    let id = line
        .rsplit('(')
        .next()
        .unwrap()
        .trim_end_matches(')')
        .to_string();
    assert_eq!(line, format!("connected as Ann ({id})"));
    clients.quit(&[first]);

    let host = clients.spawn_in("Annabel", &config.0, &["host", "staku", "--side", "white"]);
    clients.wait(host, |l| l == format!("connected as Annabel ({id})"));
    let code = clients.room_code(host);
    let guest = clients.spawn("Bob", &["join", &code]);
    clients.wait(guest, |l| l.starts_with("white Annabel "));
}

/// Lobby lines say the clock as players write it and the options that are not the
/// defaults, for rooms, live games and queues alike.
#[test]
fn lobby_lines_say_clock_and_options() {
    let (_server, mut clients) = Clients::with_server();
    let (_host, room) = clients.spawn_host(
        "host",
        &[
            "host",
            "unane",
            "--public",
            "--clock",
            "3+2",
            "--options",
            "width=6,height=5",
        ],
    );
    let (_a, code) = clients.spawn_host(
        "a",
        &[
            "host",
            "akron",
            "--public",
            "--clock",
            "10+5",
            "--options",
            "size=7",
            "--side",
            "vert",
        ],
    );
    let b = clients.spawn("b", &["join", &code]);
    let game = clients.game_started(b);
    let q = clients.spawn("q", &["play", "staku", "--clock", "none"]);
    clients.wait(q, |l| l.starts_with("queued position 1"));

    let lobby = clients.spawn("lobby", &["lobby"]);
    clients.wait(lobby, |l| l.contains("in queues: staku no clock: 1"));
    clients.wait(lobby, |l| {
        l == format!("  room {room} unane width=6,height=5 3+2 by host")
    });
    clients.wait(lobby, |l| {
        l.starts_with(&format!("  game {game} akron size=7 10+5 vert a vs horz b"))
            || l.starts_with(&format!("  game {game} akron size=7 10+5 horz b vs vert a"))
    });
}

/// Leaving a running game says how to come back; the opponent's declined draw offer and
/// the help pages are printed whole.
#[test]
fn plain_help_guides_declines_and_leaving() {
    let (_server, mut clients) = Clients::with_server();
    let (host, code) = clients.spawn_host(
        "host",
        &[
            "host",
            "unane",
            "--side",
            "black",
            "--options",
            "width=4,height=3",
        ],
    );
    let guest = clients.spawn("guest", &["join", &code]);
    let id = clients.game_started(guest);

    clients.send(guest, "help");
    clients.wait(guest, |l| l.starts_with("draw decline "));
    clients.wait(guest, |l| l.starts_with("quit "));
    clients.send(guest, "help akunur");
    clients.wait(guest, |l| l == "# Akunur — a player's guide");
    clients.wait(guest, |l| l == "## Notation");
    clients.send(guest, "help chess");
    clients.wait(guest, |l| {
        l.starts_with("error input: no guide for 'chess'")
    });

    clients.wait(host, |l| l == "your turn");
    clients.send(host, "draw offer");
    clients.wait(guest, |l| l.starts_with("draw offered by black"));
    clients.send(guest, "draw decline");
    clients.wait(guest, |l| l == "draw declined");
    clients.wait(host, |l| l == "white declined your draw offer");

    clients.send(guest, "quit");
    clients.wait(guest, |l| {
        l == format!(
            "game {id} goes on without you and your clock runs; resume with: stoa watch {id}"
        )
    });
    clients.expect_exit(guest, TIMEOUT);
    clients.wait(host, |l| l == "white offline");
}

/// Starts a plain host (black, untimed small Ūnane) and a guest who joins; returns both.
fn seated_pair(clients: &mut Clients) -> (usize, usize) {
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let guest = clients.spawn("guest", &["join", &code]);
    for c in [host, guest] {
        clients.wait(c, |l| l.starts_with("game started "));
    }
    (host, guest)
}

/// An aborted game says why after its `game over: aborted` line: the first-move window
/// ran out for the side to act, or a player aborted it (issue 28, item 2).
#[test]
fn an_abort_says_why() {
    let mut args = stoa_tests::LOOSE.to_vec();
    args.extend(["--first-action-ms", "3000"]);
    let server = Server::start_with(&args);
    let mut clients = Clients::new(&server);
    // Black (the host) never makes its first move.
    let (host, guest) = seated_pair(&mut clients);
    for c in [host, guest] {
        clients.wait(c, |l| l == "game over: aborted");
        let why = clients.wait(c, |l| l.starts_with("aborted: "));
        assert_eq!(why, "aborted: black did not make a first move in time");
    }
    // The host aborts the next one at once.
    let mut clients = Clients::new(&server);
    let (host, guest) = seated_pair(&mut clients);
    clients.send(host, "abort");
    for (c, why) in [
        (host, "aborted: you aborted the game"),
        (guest, "aborted: black aborted the game"),
    ] {
        clients.wait(c, |l| l == "game over: aborted");
        let line = clients.wait(c, |l| l.starts_with("aborted: "));
        assert_eq!(line, why);
    }
}

/// At the end of a rated game each player reads its rating change (issue 28, item 9).
#[test]
fn a_rated_game_ends_with_the_rating_change() {
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let mut args = HOST_SMALL_UNANE.to_vec();
    args.push("--rated");
    let (host, code) = clients.spawn_host("host", &args);
    let guest = clients.spawn("guest", &["join", &code]);
    let id = clients.game_started(host);
    clients.game_started(guest);
    // Both act once (a game ended before that is unrated); then black (the host) resigns.
    let script = scripted_game("unane", &json!({"width":5,"height":4}), 1, 40);
    for (i, mv) in script.moves[..2].iter().enumerate() {
        let who = clients.wait_any(&[host, guest], |l| l == "your turn");
        clients.send(who, mv);
        for c in [host, guest] {
            clients.wait(c, |l| l == format!("move {} {mv}", i + 1));
        }
    }
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    let after = server.ratings_after(&id, Some(&code));
    for (c, side) in [(host, "black"), (guest, "white")] {
        let now = after[side].as_f64().expect("a rating after").round() as i64;
        let line = clients.wait(c, |l| l.starts_with("your rating "));
        assert_eq!(
            line,
            format!("your rating 1500 -> {now} ({:+})", now - 1500)
        );
    }
}

/// A mistyped command is said back as one, not sent as a move; a word naming a cell still
/// goes to the server, which says why it is illegal; the joiner reads that it joined the
/// room before the game started (issue 28, item 10).
#[test]
fn a_typo_is_not_a_move_and_joining_comes_before_the_start() {
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let guest = clients.spawn("guest", &["join", &code]);
    let first = clients.wait(guest, |l| {
        l.starts_with("joined room ") || l.starts_with("game started ")
    });
    assert_eq!(first, format!("joined room {code}"));
    clients.wait(guest, |l| l.starts_with("game started "));
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resing");
    let line = clients.wait(host, |l| l.starts_with("error "));
    assert!(
        line.starts_with("error input: 'resing' is neither a command nor a move; "),
        "{line}"
    );
    clients.send(host, "z9");
    let line = clients.wait(host, |l| l.starts_with("error "));
    assert!(line.starts_with("error illegal_move: "), "{line}");
}

/// `stoa leaderboard <kind>` lists the established players best first and `stoa player
/// <id>` a player's ratings (provisional ones marked) and recent games, with the figures
/// the HTTP API gives; an unknown kind is said to be one (issue 28, "Ratings people can
/// see").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaderboard_and_player_commands_print_the_ratings() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    let mut bob = Client::guest(&server, "bob").await;
    let rated = stoa_tests::establish_ratings(&server, &mut ann, &mut bob).await;
    let api = |path: String| {
        let (status, body) = server.http_get(&path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str::<serde_json::Value>(&body).expect("json")
    };
    let board = api("/api/leaderboard/unane".into());
    let page = api(format!("/api/players/{}", ann.player_id));
    let mut clients = Clients::new(&server);

    let reader = clients.spawn("reader", &["leaderboard", "unane"]);
    clients.wait(reader, |l| l == "leaderboard unane");
    let players = board["players"].as_array().expect("players");
    assert_eq!(players.len(), 2, "{board}");
    for p in players {
        let rank = p["rank"].as_u64().unwrap();
        let line = clients.wait(reader, |l| l.starts_with(&format!("{rank:>3}. ")));
        assert_eq!(
            line,
            format!(
                "{rank:>3}. {} {} ±{}, {} rated games ({})",
                p["name"].as_str().unwrap(),
                p["rating"],
                p["deviation"],
                p["games"],
                p["id"].as_str().unwrap()
            )
        );
    }
    assert_eq!(players[0]["name"], "ann");
    clients.expect_exit(reader, TIMEOUT);

    let reader = clients.spawn("reader2", &["player", &ann.player_id]);
    clients.wait(reader, |l| l == format!("ann ({})", ann.player_id));
    let r = &page["ratings"]["unane"];
    let line = clients.wait(reader, |l| l.starts_with("  unane "));
    assert_eq!(
        line,
        format!(
            "  unane   {} ±{}, {} rated games",
            r["rating"], r["deviation"], r["games"]
        )
    );
    let line = clients.wait(reader, |l| l.starts_with("  staku "));
    assert_eq!(line, "  staku   1500? ±350, 0 rated games");
    clients.wait(reader, |l| l == "recent games:");
    // The newest game first, marked rated with ann's rating change, as `history` says it.
    let newest = clients.wait(reader, |l| l.starts_with("  20"));
    let id = rated.last().unwrap();
    assert!(
        newest.contains(&format!(" {id} unane ")) && newest.contains(" rated "),
        "{newest}"
    );
    let after = r["rating"].as_i64().unwrap();
    assert!(newest.contains(&format!(" -> {after} (")), "{newest}");
    clients.expect_exit(reader, TIMEOUT);

    let reader = clients.spawn("reader3", &["leaderboard", "chess"]);
    let line = clients.wait(reader, |l| l.starts_with("error "));
    assert_eq!(
        line,
        "error not_found: no game kind 'chess' (the kinds are unane, staku, akron, akunur)"
    );
}

/// Identity across devices (issue 28): `stoa link <code>` with a code another device (a
/// websocket client, as a browser is) made turns this terminal into that player for good
/// (the token is kept in its identity file); `stoa devices` lists both devices; `stoa link`
/// shows a code that makes another device this player.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stoa_link_makes_the_terminal_the_player_of_another_device() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    let made = ann.request(json!({"t":"link.code"})).await;
    // Devices are listed oldest first: the terminal's is linked later.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let code = made["code"].as_str().expect("code").to_string();
    let mut clients = Clients::new(&server);
    let config = TempDir::new("link-terminal");

    let linker = clients.spawn_in("linker", &config.0, &["link", &code.to_lowercase()]);
    let line = clients.wait(linker, |l| l.starts_with("linked"));
    assert_eq!(
        line,
        format!("linked: this terminal is now ann ({})", ann.player_id)
    );
    clients.expect_exit(linker, TIMEOUT);

    // The next command from this terminal is ann (the harness gives every process a
    // `--name`, which renames: these say ann's own).
    let reader = clients.spawn_in("ann", &config.0, &["player"]);
    clients.wait(reader, |l| l == format!("ann ({})", ann.player_id));
    clients.expect_exit(reader, TIMEOUT);
    let lister = clients.spawn_in("ann", &config.0, &["devices"]);
    clients.wait(lister, |l| {
        l == format!("devices of ann ({}):", ann.player_id)
    });
    let first = clients.wait(lister, |l| l.starts_with('d'));
    assert!(first.contains("  first device  linked "), "{first}");
    assert!(!first.ends_with("(this device)"), "{first}");
    let second = clients.wait(lister, |l| l.starts_with('d'));
    assert!(second.contains("  terminal  linked "), "{second}");
    assert!(second.ends_with("  (this device)"), "{second}");
    clients.expect_exit(lister, TIMEOUT);

    // A code used once is refused the second time, with the server's words.
    let again = clients.spawn("again", &["link", &code]);
    let line = clients.wait(again, |l| l.starts_with("error "));
    assert_eq!(line, "error not_found: unknown, expired or used link code");

    // And the other way: the terminal shows a code, another device becomes ann with it.
    let shower = clients.spawn_in("ann", &config.0, &["link"]);
    let line = clients.wait(shower, |l| l.starts_with("link code: "));
    let code = line["link code: ".len()..].to_string();
    clients.expect_exit(shower, TIMEOUT);
    let mut bea = Client::guest(&server, "bea").await;
    let got = bea
        .request(json!({"t":"link.redeem","code":code,"device":"browser"}))
        .await;
    assert_eq!(got["t"], "link.token", "{got}");
    assert_eq!(got["player_id"], ann.player_id.as_str());

    // `stoa devices --revoke`: the websocket client's first token stops working.
    let first_id = first.split_whitespace().next().unwrap().to_string();
    let revoker = clients.spawn_in("ann", &config.0, &["devices", "--revoke", &first_id]);
    clients.wait(revoker, |l| l == format!("revoked {first_id}"));
    clients.expect_exit(revoker, TIMEOUT);
    let mut c = Client::connect(&server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":ann.token}))
        .await;
    assert_eq!(refused["code"], "unauthorized", "{refused}");
}

/// A host waiting in plain mode talks with a visitor who opened the room by its code (as
/// the web client's invitation page does, before taking the seat): the visitor's lines
/// show as `chat [room] <name>: <text>`, and the host's `say` reaches the visitor; the
/// game then starts as ever.
#[test]
fn a_waiting_host_chats_with_a_visitor_in_the_room() {
    let server = Server::start();
    let mut clients = Clients::new(&server);
    let (host, code) = clients.spawn_host("host", HOST_SMALL_UNANE);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut visitor = Client::guest(&server, "vi").await;
        let h = visitor.request(json!({"t":"room.watch","code":code})).await;
        assert_eq!(h["t"], "room.chat.history", "{h}");
        let ok = visitor
            .request(json!({"t":"room.say","code":code,"text":"<b>hi</b> host"}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
        clients.wait(host, |l| l == "chat [room] vi: <b>hi</b> host");
        clients.send(host, "say welcome, sit down");
        let line = visitor
            .recv_where(|m| m["t"] == "room.chat" && m["name"] == "host")
            .await;
        assert_eq!(line["text"], "welcome, sit down", "{line}");
        let joined = visitor.request(json!({"t":"room.join","code":code})).await;
        assert_eq!(joined["t"], "room", "{joined}");
    });
    clients.wait(host, |l| l.starts_with("game started "));
}

/// The lines of `lines` between the first matching `from` (excluded) and the first
/// matching `to` after it (excluded); panics with the transcript when either is missing.
fn between(lines: &[String], from: &str, to: &str) -> Vec<String> {
    let start = lines
        .iter()
        .position(|l| l.starts_with(from))
        .unwrap_or_else(|| panic!("no line '{from}…' in:\n{}", lines.join("\n")));
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with(to))
        .unwrap_or_else(|| panic!("no line '{to}…' after '{from}' in:\n{}", lines.join("\n")));
    lines[start + 1..start + 1 + end].to_vec()
}

/// Issue 47, item 2: the lines say what happened in the order it happened, once each:
/// our own draw offer is one line, said before the opponent's decline; a rematch request
/// is said before the `game started` of the game it made, never after it, and nobody is
/// told to type `rematch` once they did.
#[test]
fn messages_keep_the_order_things_happened_in() {
    let (_server, mut clients) = Clients::with_server();
    let (host, guest) = seated_pair(&mut clients);
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a2xa1");
    clients.wait(guest, |l| l == "your turn");

    clients.send(guest, "draw offer");
    clients.wait(host, |l| l.starts_with("draw offered by white"));
    clients.send(host, "draw decline");
    clients.wait(guest, |l| l == "black declined your draw offer");
    let said = clients.lines(guest, Duration::from_millis(500));
    let offers: Vec<&String> = said
        .iter()
        .filter(|l| l.starts_with("draw offered"))
        .collect();
    assert_eq!(offers, ["draw offered by white"], "{}", said.join("\n"));
    let offered = said
        .iter()
        .position(|l| l.starts_with("draw offered"))
        .unwrap();
    let declined = said
        .iter()
        .position(|l| l == "black declined your draw offer")
        .unwrap();
    assert!(offered < declined, "{}", said.join("\n"));

    clients.send(guest, "draw offer");
    clients.wait(host, |l| l.starts_with("draw offered by white"));
    clients.send(host, "draw accept");
    for c in [host, guest] {
        clients.wait(c, |l| l == "game over: draw by agreement");
    }
    clients.send(guest, "rematch");
    clients.wait(guest, |l| {
        l == "rematch requested; waiting for the opponent"
    });
    clients.wait(host, |l| l == "rematch requested by white (type: rematch)");
    clients.send(host, "rematch");
    for c in [host, guest] {
        clients.wait(c, |l| l.starts_with("game started "));
        clients.wait(c, |l| l.starts_with("status: "));
    }
    let host_lines = clients.lines(host, Duration::from_millis(500));
    let guest_lines = clients.lines(guest, Duration::from_millis(0));
    let rematch_lines = |lines: &[String]| -> Vec<String> {
        between(lines, "game over: ", "game started ")
            .into_iter()
            .filter(|l| l.starts_with("rematch"))
            .collect()
    };
    assert_eq!(
        rematch_lines(&host_lines),
        [
            "rematch requested by white (type: rematch)",
            "rematch accepted"
        ],
        "{}",
        host_lines.join("\n")
    );
    let guest_said = rematch_lines(&guest_lines);
    assert_eq!(
        guest_said[0],
        "rematch requested; waiting for the opponent",
        "{}",
        guest_lines.join("\n")
    );
    assert!(
        guest_said.len() == 1 || guest_said[1..] == ["rematch accepted by black".to_string()],
        "{}",
        guest_lines.join("\n")
    );
    for lines in [&host_lines, &guest_lines] {
        let started = lines
            .iter()
            .rposition(|l| l.starts_with("game started "))
            .unwrap();
        assert!(
            !lines[started..].iter().any(|l| l.starts_with("rematch")),
            "nothing about the rematch after its game started:\n{}",
            lines.join("\n")
        );
    }
}
