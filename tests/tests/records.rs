//! Game records and history against the real server and the real `stoa` binary: games
//! played to every kind of end have records whose moves replay offline to the same end;
//! a private game's record is refused to strangers; a player's history pages newest first
//! and survives a restart over Redis; live public games are listed.
#![forbid(unsafe_code)]

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{quick_options, Client, Server, Table};

/// Runs `stoa` with `args` as the player whose config directory is `home`; returns
/// (exit code, stdout, stderr).
fn stoa(home: &std::path::Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    stoa_tests::build_binaries();
    let mut child = Command::new(stoa_tests::binary("stoa"))
        .args(args)
        .env("STOA_CONFIG_DIR", home)
        .env_remove("STOA_SERVER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run stoa");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), stdin.as_bytes())
        .expect("write stdin");
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("stoa output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A config directory holding `token` as this server's identity (what `stoa` stores).
fn home_with(server: &Server, token: &str, tag: &str) -> TempDir {
    let home = TempDir::new(tag);
    std::fs::write(
        home.0.join("identity.json"),
        json!({ server.ws_url(): {"token": token} }).to_string(),
    )
    .expect("identity file");
    home
}

/// The record over HTTP (as a stranger, with a code, or with a bearer token).
fn record(server: &Server, id: &str, code: Option<&str>, token: Option<&str>) -> (u16, String) {
    let path = match code {
        Some(c) => format!("/api/games/{id}/record?code={c}"),
        None => format!("/api/games/{id}/record"),
    };
    server.http_get_as(&path, token)
}

fn tag<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("[{name} \"")))
        .and_then(|v| v.strip_suffix("\"]"))
}

/// Checks one finished game: its record's tags say the document's end, and its moves
/// replay offline (`stoa rules play --record`) to the same status.
fn check_record(server: &Server, t: &Table, home: &std::path::Path) -> String {
    let doc = &t.host_doc.doc;
    assert_eq!(doc["status"]["state"], "ended", "{doc}");
    let (status, text) = record(server, &t.game_id, Some(&t.code), None);
    assert_eq!(status, 200, "{text}");
    let kind = doc["kind"].as_str().unwrap();
    assert_eq!(tag(&text, "Game"), Some(kind));
    assert_eq!(tag(&text, "Id"), Some(t.game_id.as_str()));
    let reason = doc["status"]["reason"].as_str().unwrap();
    assert_eq!(tag(&text, "Reason"), Some(reason));
    let result = match (doc["status"]["winner"].as_str(), reason) {
        (_, "aborted") => "aborted",
        (Some(w), _) => w,
        (None, _) => "draw",
    };
    assert_eq!(tag(&text, "Result"), Some(result));
    assert!(tag(&text, "Date").is_some_and(|d| d.ends_with('Z')));
    assert!(tag(&text, "End").is_some_and(|d| d.ends_with('Z')));
    // The moves, in order, after the tags.
    let moves: Vec<&str> = doc["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let body: Vec<&str> = text
        .split("\n\n")
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .filter(|w| !w.ends_with('.'))
        .collect();
    assert_eq!(body, moves, "{text}");
    // Offline: the same moves reach the same position and, for an end by rule, the same end.
    let file = home.join(format!("{}.txt", t.game_id));
    std::fs::write(&file, &text).unwrap();
    let (code, out, err) = stoa(
        home,
        &["rules", "play", kind, "--record", file.to_str().unwrap()],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let replayed: Value = serde_json::from_str(&out).expect("play prints JSON");
    assert_eq!(replayed["position"], doc["position"]);
    assert_eq!(replayed["moves"], doc["moves"]);
    if replayed["status"]["state"] == "ended" {
        assert_eq!(replayed["status"], doc["status"]);
    } else {
        assert!(
            ["resign", "agreement", "timeout", "aborted", "abandoned"].contains(&reason),
            "{reason}"
        );
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_end_has_a_record_that_replays_to_the_same_end() {
    let server = Server::start();
    let home = TempDir::new("records");
    let mut reasons = Vec::new();

    // Ends by rule, one game of each kind (Akunur repeats itself into a draw).
    for (kind, seed) in [("unane", 1), ("staku", 3), ("akron", 2), ("akunur", 4)] {
        let mut t = Table::open(&server, kind, quick_options(kind), "private").await;
        t.repeat_back = kind == "akunur";
        t.play_out(seed, 400).await;
        let text = check_record(&server, &t, &home.0);
        reasons.push(tag(&text, "Reason").unwrap().to_string());
    }

    // A resignation, a draw by agreement, an abort.
    let mut t = Table::open(&server, "unane", quick_options("unane"), "private").await;
    t.play_out(7, 2).await;
    assert_eq!(t.host_doc.doc["status"]["reason"], "resign");
    reasons.push(
        tag(&check_record(&server, &t, &home.0), "Reason")
            .unwrap()
            .into(),
    );

    let mut t = Table::open(&server, "staku", quick_options("staku"), "private").await;
    t.step(1).await;
    t.step(1).await;
    let g = t.game_id.clone();
    let offer = t
        .host
        .request(json!({"t":"game.draw","game_id":g,"action":"offer"}))
        .await;
    assert_eq!(offer["t"], "ok", "{offer}");
    let accept = t
        .guest
        .request(json!({"t":"game.draw","game_id":g,"action":"accept"}))
        .await;
    assert_eq!(accept["t"], "ok", "{accept}");
    let seq = accept["seq"].as_u64().unwrap();
    t.host_doc.catch_up(&mut t.host, seq).await;
    reasons.push(
        tag(&check_record(&server, &t, &home.0), "Reason")
            .unwrap()
            .into(),
    );

    let mut t = Table::open(&server, "akron", quick_options("akron"), "private").await;
    let g = t.game_id.clone();
    let ok = t.host.request(json!({"t":"game.abort","game_id":g})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    t.host_doc
        .catch_up(&mut t.host, ok["seq"].as_u64().unwrap())
        .await;
    reasons.push(
        tag(&check_record(&server, &t, &home.0), "Reason")
            .unwrap()
            .into(),
    );

    // A flag that falls: one second each, both sides move, then nobody does.
    let mut t = Table::open_with_clock(
        &server,
        "unane",
        quick_options("unane"),
        json!({"kind":"fischer","initial_ms":1000,"increment_ms":0}),
        "private",
    )
    .await;
    t.step(2).await;
    t.step(2).await;
    let g = t.game_id.clone();
    let ended = t
        .host
        .recv_where(|m| {
            m["t"] == "game.diff"
                && m["game_id"] == g.as_str()
                && m["patch"].to_string().contains("timeout")
        })
        .await;
    t.host_doc.apply(&ended);
    reasons.push(
        tag(&check_record(&server, &t, &home.0), "Reason")
            .unwrap()
            .into(),
    );

    for expected in ["resign", "agreement", "aborted", "timeout"] {
        assert!(reasons.iter().any(|r| r == expected), "{reasons:?}");
    }
    assert!(
        reasons[..4]
            .iter()
            .all(|r| !["resign", "agreement", "aborted", "timeout"].contains(&r.as_str())),
        "the first four games end by rule: {reasons:?}"
    );

    // `stoa replay FILE` steps through the last record offline: first, last, a jump.
    let file = home.0.join(format!("{g}.txt"));
    let (code, out, err) = stoa(
        &home.0,
        &["replay", file.to_str().unwrap()],
        "last\n1\nprev\nsideways\nquit\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("replay unane "), "{out}");
    assert!(out.contains("ply 0/2: start"), "{out}");
    assert!(out.contains("ply 2/2: "), "{out}");
    assert!(out.contains("end: "), "{out}");
    assert!(out.contains("ply 1/2: "), "{out}");
    assert!(out.contains("error input: 'sideways'"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_record_is_refused_to_strangers() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", quick_options("unane"), "private").await;
    t.play_out(3, 3).await;
    let id = t.game_id.clone();
    // Strangers: over HTTP the game does not exist; over the websocket it is forbidden.
    assert_eq!(record(&server, &id, None, None).0, 404);
    assert_eq!(record(&server, &id, Some("AAAAAAAAAA"), None).0, 404);
    let (status, body) = server.http_get(&format!("/api/games/{id}"));
    assert_eq!(status, 404, "{body}");
    let mut stranger = Client::guest(&server, "stranger").await;
    assert_eq!(record(&server, &id, None, Some(&stranger.token)).0, 404);
    let e = stranger
        .request(json!({"t":"game.record","game_id":id}))
        .await;
    assert_eq!(e["code"], "forbidden", "{e}");
    let home = home_with(&server, &stranger.token, "stranger");
    let (code, out, err) = stoa(&home.0, &["--server", &server.ws_url(), "export", &id], "");
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with(&format!("error forbidden: cannot export '{id}'")),
        "{err}"
    );

    // Its players (bearer token, or the client's stored identity) and holders of the code.
    let (status, text) = record(&server, &id, None, Some(&t.guest.token));
    assert_eq!(status, 200);
    assert_eq!(
        record(&server, &id, Some(&t.code), None),
        (200, text.clone())
    );
    let home = home_with(&server, &t.host.token, "player");
    let (code, out, err) = stoa(&home.0, &["--server", &server.ws_url(), "export", &id], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, text);
    // The full JSON record: the document plus times.
    let (status, full) = server.api_game_full(&id, Some(&t.code));
    assert_eq!(status, 200);
    assert_eq!(full["moves"], t.host_doc.doc["moves"]);
    let rec = &full["record"];
    assert!(rec["ended_ms"].as_u64().unwrap() >= rec["started_ms"].as_u64().unwrap());
    assert_eq!(rec["ratings_after"], Value::Null, "a casual game");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_pages_newest_first_across_a_restart_with_redis() {
    let redis = RedisServer::start();
    let server = redis.start_server("hist");
    let mut host = Client::guest(&server, "ann").await;
    let token = host.token.clone();
    let me = host.player_id.clone();
    let mut ids = Vec::new();
    for (i, visibility) in ["public", "private", "public"].iter().enumerate() {
        let room = host
            .request(
                json!({"t":"room.create","kind":"unane","options":quick_options("unane"),
                "clock":{"kind":"none"},"rated":false,"visibility":visibility,"side":"random"}),
            )
            .await;
        let code = room["room"]["code"].as_str().unwrap().to_string();
        let mut guest = Client::guest(&server, &format!("g{i}")).await;
        let joined = guest.request(json!({"t":"room.join","code":code})).await;
        assert_eq!(joined["t"], "room", "{joined}");
        let started = host.recv_where(|m| m["t"] == "game.started").await;
        let id = started["game_id"].as_str().unwrap().to_string();
        let ok = host.request(json!({"t":"game.abort","game_id":id})).await;
        assert_eq!(ok["t"], "ok", "{ok}");
        ids.push(id);
        // Distinct end times, so the order is the order of play.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check_history(&server, &me, &token, &ids, "before the restart");
    drop(server); // kill -9
    let server = redis.start_server("hist");
    check_history(&server, &me, &token, &ids, "after the restart");
}

/// The history of player `me` (token `token`) who played `ids` in order, the second one
/// private.
fn check_history(server: &Server, me: &str, token: &str, ids: &[String], when: &str) {
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    let page = |path: &str, token: Option<&str>| -> Value {
        let (status, body) = server.http_get_as(path, token);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let listed = |v: &Value| -> Vec<String> {
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    };
    // The player, with its token: every game, two per page.
    let first = page(&format!("/api/players/{me}/games?limit=2"), Some(token));
    assert_eq!(listed(&first), newest_first[..2], "{when}");
    let before = first["next_before"].as_u64().expect("a next page");
    let second = page(
        &format!("/api/players/{me}/games?limit=2&before={before}"),
        Some(token),
    );
    assert_eq!(listed(&second), newest_first[2..], "{when}");
    assert_eq!(second["next_before"], Value::Null);
    assert_eq!(second["games"][0]["status"]["reason"], "aborted");
    // Anyone else: the public games only.
    let public = page(&format!("/api/players/{me}/games"), None);
    assert_eq!(listed(&public), [ids[2].clone(), ids[0].clone()], "{when}");
    // `stoa history` as the player.
    let home = home_with(server, token, "hist");
    let url = server.ws_url();
    let (code, out, err) = stoa(&home.0, &["--server", &url, "history", "--limit", "2"], "");
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].contains(&format!(" {} unane ", ids[2])), "{out}");
    assert!(lines[0].ends_with(": aborted"), "{out}");
    assert!(lines[1].contains(&format!(" {} unane ", ids[1])), "{out}");
    // The next page's command keeps the page size.
    let next = lines[2]
        .strip_prefix("more: stoa history --before ")
        .and_then(|rest| rest.strip_suffix(" --limit 2"))
        .unwrap_or_else(|| panic!("{out}"));
    let (code, out, _) = stoa(
        &home.0,
        &[
            "--server", &url, "history", "--limit", "2", "--before", next,
        ],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains(&format!(" {} unane ", ids[0])), "{out}");
    // Bad paging input is a clear error.
    assert_eq!(
        server
            .http_get(&format!("/api/players/{me}/games?limit=0"))
            .0,
        400
    );
    assert_eq!(
        server
            .http_get(&format!("/api/players/{me}/games?before=soon"))
            .0,
        400
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_public_games_are_listed_by_kind() {
    let server = Server::start();
    let public = Table::open(&server, "staku", quick_options("staku"), "public").await;
    let _private = Table::open(&server, "staku", quick_options("staku"), "private").await;
    let other = Table::open(&server, "akron", quick_options("akron"), "public").await;
    let list = |path: &str| -> Vec<String> {
        let (status, body) = server.http_get(path);
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut both = vec![public.game_id.clone(), other.game_id.clone()];
    both.sort();
    assert_eq!(list("/api/games?status=live"), both);
    assert_eq!(
        list("/api/games?status=live&kind=staku"),
        std::slice::from_ref(&public.game_id)
    );
    assert_eq!(
        list("/api/games?status=live&kind=unane"),
        Vec::<String>::new()
    );
    assert_eq!(server.http_get("/api/games?status=finished").0, 400);
}

/// A rated game's record says the ratings before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_record_has_ratings_before_and_after() {
    let server = Server::start();
    let mut host = Client::guest(&server, "ann").await;
    let mut guest = Client::guest(&server, "bob").await;
    let room = host
        .request(
            json!({"t":"room.create","kind":"unane","options":quick_options("unane"),
            "clock":{"kind":"none"},"rated":true,"visibility":"public","side":"black"}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    guest.request(json!({"t":"room.join","code":code})).await;
    let started = host.recv_where(|m| m["t"] == "game.started").await;
    let id = started["game_id"].as_str().unwrap().to_string();
    // Both sides act (a game ended before that is unrated), then black resigns.
    let mut game = stoa_protocol::kind("unane")
        .unwrap()
        .start(&quick_options("unane"))
        .unwrap();
    for c in [&mut host, &mut guest] {
        let mv = game
            .legal_notations()
            .into_iter()
            .find(|m| m != "swap")
            .unwrap();
        game.play(&mv).unwrap();
        let ok = c
            .request(json!({"t":"game.move","game_id":id,"move":mv}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
    }
    let ok = host.request(json!({"t":"game.resign","game_id":id})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let (status, full) = server.api_game_full(&id, None);
    assert_eq!(status, 200, "{full}");
    let after = &full["record"]["ratings_after"];
    let (w, b) = (
        after["white"].as_f64().unwrap(),
        after["black"].as_f64().unwrap(),
    );
    assert!(w > 1500.0 && b < 1500.0, "{after}");
    let (status, text) = record(&server, &id, None, None);
    assert_eq!(status, 200);
    assert_eq!(tag(&text, "Rated"), Some("yes"));
    assert_eq!(tag(&text, "BlackRating"), Some("1500"));
    assert_eq!(
        tag(&text, "WhiteRatingAfter"),
        Some(format!("{}", w.round()).as_str())
    );
    assert_eq!(
        tag(&text, "BlackRatingAfter"),
        Some(format!("{}", b.round()).as_str())
    );
}

/// An unrated game changed no rating, and its record names none (issue 28, item 9): the
/// tags a rated record carries are absent, the rest is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrated_record_names_no_ratings() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", quick_options("unane"), "public").await;
    t.play_out(3, 6).await;
    let (status, text) = record(&server, &t.game_id, None, None);
    assert_eq!(status, 200, "{text}");
    assert_eq!(tag(&text, "Rated"), Some("no"), "{text}");
    assert!(tag(&text, "Black").is_some(), "{text}");
    for name in [
        "BlackRating",
        "WhiteRating",
        "BlackRatingAfter",
        "WhiteRatingAfter",
    ] {
        assert_eq!(
            tag(&text, name),
            None,
            "{name} in an unrated record:\n{text}"
        );
    }
}

/// Plays one game of small Ūnane between `host` and a new guest and ends it: rated games
/// are played a move each and resigned by the host (so they count); others are aborted.
/// Returns the game id.
async fn finish_one(server: &Server, host: &mut Client, visibility: &str, rated: bool) -> String {
    let room = host
        .request(
            json!({"t":"room.create","kind":"unane","options":quick_options("unane"),
            "clock":{"kind":"none"},"rated":rated,"visibility":visibility,"side":"black"}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    let mut guest = Client::guest(server, "opponent").await;
    let joined = guest.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = host.recv_where(|m| m["t"] == "game.started").await;
    let id = started["game_id"].as_str().unwrap().to_string();
    if rated {
        // Black (the host) then white act once each; black resigns.
        let mut game = stoa_protocol::kind("unane")
            .unwrap()
            .start(&quick_options("unane"))
            .unwrap();
        for c in [&mut *host, &mut guest] {
            let mv = game
                .legal_notations()
                .into_iter()
                .find(|m| m != "swap")
                .unwrap();
            game.play(&mv).unwrap();
            let ok = c
                .request(json!({"t":"game.move","game_id":id,"move":mv}))
                .await;
            assert_eq!(ok["t"], "ok", "{ok}");
        }
        let ok = host.request(json!({"t":"game.resign","game_id":id})).await;
        assert_eq!(ok["t"], "ok", "{ok}");
    } else {
        let ok = host.request(json!({"t":"game.abort","game_id":id})).await;
        assert_eq!(ok["t"], "ok", "{ok}");
    }
    // Distinct end times, so the order is the order of play.
    tokio::time::sleep(Duration::from_millis(20)).await;
    id
}

/// Another player's history skips the games the reader may not see and still fills the
/// page; its `more:` line keeps `--player` and `--limit`; an unknown player is `not_found`,
/// over HTTP a 404 (issue 28, item 10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_players_history_fills_its_pages_and_says_how_to_go_on() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    let ann_id = ann.player_id.clone();
    let older = finish_one(&server, &mut ann, "public", false).await;
    let newer = finish_one(&server, &mut ann, "public", false).await;
    let _private = finish_one(&server, &mut ann, "private", false).await;
    let reader = Client::guest(&server, "reader").await;
    let home = home_with(&server, &reader.token, "hist-reader");
    let url = server.ws_url();
    let args = [
        "--server", &url, "history", "--limit", "1", "--player", &ann_id,
    ];
    let (code, out, err) = stoa(&home.0, &args, "");
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains(&format!(" {newer} unane ")), "{out}");
    let next = lines[1]
        .strip_prefix("more: stoa history --before ")
        .and_then(|rest| rest.strip_suffix(&format!(" --limit 1 --player {ann_id}")))
        .unwrap_or_else(|| panic!("the next page's command: {out}"));
    let mut second = args.to_vec();
    second.extend(["--before", next]);
    let (code, out, err) = stoa(&home.0, &second, "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains(&format!(" {older} unane ")), "{out}");

    let (status, body) = server.http_get("/api/players/pnosuchplayer0/games");
    assert_eq!(status, 404, "{body}");
    let (code, out, err) = stoa(
        &home.0,
        &["--server", &url, "history", "--player", "pnosuchplayer0"],
        "",
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(err.trim(), "error not_found: no player 'pnosuchplayer0'");
}

/// `stoa history` marks rated games and gives the player's rating change; unrated games say
/// neither (issue 28, item 9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_marks_rated_games_with_the_rating_change() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    let casual = finish_one(&server, &mut ann, "public", false).await;
    let rated = finish_one(&server, &mut ann, "public", true).await;
    let (_, full) = server.api_game_full(&rated, None);
    let after = full["record"]["ratings_after"]["black"]
        .as_f64()
        .expect("black's rating after")
        .round() as i64;
    assert!(after < 1500, "{full}");
    let home = home_with(&server, &ann.token, "hist-rated");
    let url = server.ws_url();
    let (code, out, err) = stoa(&home.0, &["--server", &url, "history"], "");
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains(&format!(" {rated} unane ")), "{out}");
    assert!(lines[0].contains(" no clock rated black ann vs "), "{out}");
    assert!(
        lines[0].ends_with(&format!(
            ": white wins by resign (lost) rating 1500 -> {after} ({:+})",
            after - 1500
        )),
        "{out}"
    );
    assert!(lines[1].contains(&format!(" {casual} unane ")), "{out}");
    assert!(
        !lines[1].contains("rated") && !lines[1].contains("rating"),
        "{out}"
    );
}

/// `stoa replay` of a file that is not there says so (not "cannot export"); a game id the
/// server does not know says it cannot be replayed; a too-long `--name` is refused by the
/// server without sending the user to check that the server runs (issue 28, item 10).
#[test]
fn replay_and_name_errors_say_what_went_wrong() {
    let home = TempDir::new("replay-missing");
    let (code, out, err) = stoa(&home.0, &["replay", "no-such-game.txt"], "");
    assert_eq!(code, 2, "{out}");
    assert_eq!(err.trim(), "error: no such file: no-such-game.txt");

    let server = Server::start();
    let url = server.ws_url();
    let (code, _, err) = stoa(&home.0, &["--server", &url, "replay", "gnosuchgame00"], "");
    assert_eq!(code, 1);
    assert!(
        err.trim()
            .starts_with("error not_found: cannot replay 'gnosuchgame00': "),
        "{err}"
    );
    let long = "n".repeat(25);
    let (code, out, err) = stoa(&home.0, &["--server", &url, "--name", &long, "history"], "");
    assert_eq!(code, 1);
    assert!(
        out.starts_with("error connection: server refused hello (bad_request): "),
        "{out}"
    );
    assert!(!err.contains("is the server running"), "{err}");
}
