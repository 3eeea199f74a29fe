//! Moderation through the terminal client: a player reports another from the game's prompt
//! (`report <name> <reason> [text…]`), an operator reads and acts with `stoa admin` over the
//! server's `/api/admin/` API, and the players' clients say what was decided (`[moderation]
//! …`): a mute refuses chat until it is undone, a ban ends the client and refuses the
//! identity afterwards.
//!
//! Why real processes: the report, the operator's command and the sanction cross the client,
//! the websocket, the HTTP API and the store's moderation version poll, as in a deployment.
#![forbid(unsafe_code)]

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use stoa_tests::clients::{Clients, CLIENT_LOOSE, HOST_SMALL_UNANE, TIMEOUT};
use stoa_tests::temp_dir::TempDir;
use stoa_tests::Server;

/// The operator's token in the test's `--admin-file` (at least 24 characters).
const TOKEN: &str = "op-token-0123456789abcdefghijkl";

/// A server with one operator, `alice` (the admin file's directory is kept with it).
fn server_with_console() -> (Server, TempDir) {
    let dir = TempDir::new("operators");
    let file = dir.0.join("operators");
    std::fs::write(&file, format!("# operators\nalice {TOKEN}\n")).expect("admin file");
    let path = file.to_string_lossy().to_string();
    let mut args: Vec<&str> = CLIENT_LOOSE.to_vec();
    args.extend(["--admin-file", path.as_str()]);
    (Server::start_with(&args), dir)
}

/// `stoa --server <ws> admin <args…>`: success, stdout, stderr.
fn admin(server: &Server, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(stoa_tests::binary("stoa"))
        .arg("--server")
        .arg(server.ws_url())
        .arg("admin")
        .args(args)
        .env_remove("STOA_ADMIN_TOKEN")
        .env_remove("STOA_SERVER")
        .output()
        .expect("run stoa admin");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `stoa admin <args…> --token TOKEN`, which must succeed: its stdout.
fn admin_ok(server: &Server, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--token", TOKEN]);
    let (ok, out, err) = admin(server, &all);
    assert!(ok, "stoa admin {args:?} failed:\n{out}\n{err}");
    out
}

/// Ann hosts a small untimed Ūnane game and Bob joins it: the processes and the game id.
fn ann_and_bob(
    clients: &mut Clients,
    bob_config: Option<&std::path::Path>,
) -> (usize, usize, String) {
    let (ann, code) = clients.spawn_host("Ann", HOST_SMALL_UNANE);
    let bob = match bob_config {
        Some(dir) => clients.spawn_in("Bob", dir, &["join", &code]),
        None => clients.spawn("Bob", &["join", &code]),
    };
    let game = clients.game_started(ann);
    clients.wait(bob, |l| l.starts_with(&format!("game started {game} ")));
    // Both have the game's document once the board is drawn.
    clients.wait(ann, |l| l.starts_with("== "));
    clients.wait(bob, |l| l.starts_with("== "));
    (ann, bob, game)
}

#[test]
fn a_report_from_the_prompt_a_mute_by_stoa_admin_and_its_undo() {
    let (server, _dir) = server_with_console();
    let mut clients = Clients::new(&server);
    let (ann, bob, game) = ann_and_bob(&mut clients, None);

    clients.send(bob, "say you play like a potato");
    clients.wait(ann, |l| l == "chat Bob: you play like a potato");

    // A name nobody here has is refused at the prompt, nothing sent.
    clients.send(ann, "report Zed abuse");
    clients.wait(ann, |l| {
        l == "error input: nobody named 'Zed' plays or has chatted in this game"
    });
    clients.send(ann, "report Bob rude");
    clients.wait(ann, |l| {
        l.starts_with("error input: 'rude' is no reason to report")
    });
    clients.send(ann, "report Bob abuse insults");
    let reported = clients.wait(ann, |l| l.starts_with("reported Bob ("));
    assert!(
        reported.ends_with("): an operator will read it"),
        "{reported}"
    );
    let report_id = reported
        ["reported Bob (".len()..reported.len() - "): an operator will read it".len()]
        .to_string();

    // The operator lists it: one line, its reason, whom, by whom, the reporter's words.
    let out = admin_ok(&server, &["reports"]);
    let line = out
        .lines()
        .find(|l| l.starts_with(&report_id))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("  chat_abuse  Bob ("), "{line}");
    assert!(line.contains(") reported by Ann ("), "{line}");
    assert!(line.ends_with("[open]  \"insults\""), "{line}");
    // In full: the game, and Bob's line marked as the one reported (its ts was sent).
    let page = admin_ok(&server, &["report", &report_id]);
    assert!(page.contains(&format!("  game {game}\n")), "{page}");
    assert!(
        page.lines()
            .any(|l| l.starts_with("  > ") && l.ends_with("Bob: you play like a potato")),
        "{page}"
    );
    let json: Value = serde_json::from_str(admin_ok(&server, &["reports", "--json"]).trim())
        .expect("--json prints the API's JSON");
    let bob_id = json["reports"][0]["target"]
        .as_str()
        .expect("target")
        .to_string();
    assert_eq!(json["reports"][0]["reason"], "chat_abuse");

    // A ten-minute mute: Bob's client says so, and his chat is refused with the reason.
    let out = admin_ok(&server, &["mute", &bob_id, "10m", "spam"]);
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        (words[0], words[2], words[3]),
        ("sanction", "mute", bob_id.as_str()),
        "{out}"
    );
    assert!(
        out.contains(" by alice at ") && out.trim_end().ends_with(": spam"),
        "{out}"
    );
    let sanction = words[1].to_string();
    clients.wait(bob, |l| {
        l.starts_with("[moderation] you are muted until ") && l.ends_with(": spam")
    });
    clients.send(bob, "say still here");
    let refused = clients.wait(bob, |l| l.starts_with("error forbidden: "));
    assert!(
        refused.starts_with("error forbidden: you are muted until "),
        "{refused}"
    );

    // The audit log has it.
    let audit = admin_ok(&server, &["audit"]);
    assert!(
        audit
            .lines()
            .any(|l| l.contains("  alice  mute  ") && l.contains(&bob_id) && l.contains(": spam")),
        "{audit}"
    );

    // Undone on appeal: Bob is told and chats again.
    let out = admin_ok(&server, &["undo", &sanction, "appeal"]);
    assert!(
        out.starts_with(&format!("undone: {sanction}  mute  {bob_id}")),
        "{out}"
    );
    assert!(out.contains("[undone by alice: appeal]"), "{out}");
    clients.wait(bob, |l| {
        l == "[moderation] an operator lifted your mute: you may chat again"
    });
    clients.send(bob, "say sorry");
    clients.wait(ann, |l| l == "chat Bob: sorry");

    // Closing the report says what was done.
    let out = admin_ok(&server, &["close-report", &report_id, "muted", "10m"]);
    assert_eq!(out.trim(), format!("closed report {report_id}"));
    assert_eq!(admin_ok(&server, &["reports"]).trim(), "no reports");
}

#[test]
fn stoa_admin_with_a_wrong_token_is_not_an_operator() {
    let (server, _dir) = server_with_console();
    let (ok, out, err) = admin(
        &server,
        &["reports", "--token", "not-the-token-0123456789abcdef"],
    );
    assert!(!ok, "{out}");
    assert_eq!(out, "");
    assert_eq!(
        err.trim(),
        "error: not an operator token (or this server has no console)"
    );
    // Without any token nothing is asked.
    let (ok, _, err) = admin(&server, &["me"]);
    assert!(!ok);
    assert!(err.contains("an operator token is needed"), "{err}");
    assert_eq!(admin_ok(&server, &["me"]).trim(), "operator alice");
    // An API error is said as the API says it, and fails.
    let (ok, _, err) = admin(&server, &["report", "nope", "--token", TOKEN]);
    assert!(!ok);
    assert_eq!(err.trim(), "error: not_found: no report 'nope'");
}

#[test]
fn a_ban_ends_the_players_client_and_refuses_the_identity() {
    let (server, _dir) = server_with_console();
    let mut clients = Clients::new(&server);
    let bob_dir = TempDir::new("bob");
    let (ann, bob, game) = ann_and_bob(&mut clients, Some(&bob_dir.0));

    let live: Value =
        serde_json::from_str(admin_ok(&server, &["live", "--json"]).trim()).expect("json");
    let g = live["games"]
        .as_array()
        .and_then(|a| a.iter().find(|g| g["id"] == game.as_str()))
        .unwrap_or_else(|| panic!("{live}"));
    let bob_id = g["players"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "Bob"))
        .and_then(|p| p["id"].as_str())
        .expect("Bob in the live game")
        .to_string();
    let text = admin_ok(&server, &["live"]);
    assert!(text.contains(&format!("{game}  unane  ")), "{text}");

    let out = admin_ok(&server, &["ban", &bob_id, "--for", "7d", "engine", "help"]);
    assert!(
        out.starts_with("sanction ") && out.contains(&format!("  ban  {bob_id}  until ")),
        "{out}"
    );
    clients.wait(bob, |l| {
        l.starts_with("[moderation] this account is banned until ") && l.ends_with(": engine help")
    });
    clients.wait(bob, |l| l.starts_with("error connection: banned: "));
    let status = clients.exit_status(bob, TIMEOUT);
    assert!(!status.success(), "{status}");
    // No reconnection was tried.
    let lines = clients.lines(bob, Duration::ZERO);
    assert!(
        !lines.iter().any(|l| l.contains("reconnecting")),
        "{lines:?}"
    );
    // The game is lost by the ban; Ann is told it ended.
    clients.wait(ann, |l| l.starts_with("game over: "));

    // Bob again, with the same identity: refused, as the ban, and no new guest stands in.
    let again = clients.spawn_in("Bob", &bob_dir.0, &["watch", &game]);
    clients.wait(again, |l| {
        l.starts_with("error banned: this account is banned until ") && l.ends_with(": engine help")
    });
    let status = clients.exit_status(again, TIMEOUT);
    assert!(!status.success(), "{status}");
}
