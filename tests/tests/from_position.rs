//! Games from a position against the computer ("play on from here", `bot.play` with a
//! `position`) on the real server with a real serving bot (`stoa bot --serve`): the game
//! starts at the position with the side to act there acting first, the bot answers with a
//! legal move from there, and the finished game's record, replay and history line start
//! there too; a position the engine refuses (or where the game is over) is `bad_request`
//! and takes no bot. In a browser, a lesson step's "Play on from here against the
//! computer" opens the game page on the step's position.
#![forbid(unsafe_code)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::Locator;
use serde_json::{json, Value};
use stoa_tests::browser::{page_base, until, Web, WAIT};
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{play_the_computer, Client, Server, Tracked};

/// The first step of the Ūnane lesson: a 6x4 board (the default options are 8x7), black to
/// act.
const POSITION: &str = ".....b/.w..w./.bw.../b...w. b 2";

/// A `stoa bot --serve` process for Ūnane at levels 1 and 2 (the web page's default), killed
/// on drop; its config directory lives (and is removed) with it.
struct Bot(Child, #[allow(dead_code)] TempDir);

impl Bot {
    fn serve(server: &Server) -> Bot {
        stoa_tests::build_binaries();
        let home = TempDir::new("from-position-bot");
        let child = Command::new(stoa_tests::binary("stoa"))
            .args(["--server", &server.ws_url(), "bot"])
            .args(["--serve", "--kinds", "unane", "--levels", "1,2"])
            .env("STOA_CONFIG_DIR", &home.0)
            .env_remove("STOA_SERVER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start stoa bot");
        Bot(child, home)
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The engine's game at `position` with `options`, as the test computes it itself.
fn engine_at(options: &Value, position: &str) -> Box<dyn stoa_protocol::AnyGame> {
    let kind = stoa_protocol::kind("unane").unwrap();
    kind.from_position(&kind.validate_options(options).unwrap(), position)
        .unwrap()
}

/// A position where the game is over, as the engine sees it once loaded: the end of a
/// played-out game of the kind that shows it (Akron's connection stays on the board).
fn ended_position() -> (&'static str, String) {
    for kind in stoa_protocol::KINDS {
        let options = kind.validate_options(&Value::Null).unwrap();
        let mut game = kind.start(&options).unwrap();
        while game.outcome().is_none() {
            let Some(mv) = game.legal_notations().first().cloned() else {
                break;
            };
            game.play(&mv).unwrap();
        }
        let end = game.position();
        let loaded = kind.from_position(&options, &end).unwrap();
        if loaded.outcome().is_some() || loaded.legal_notations().is_empty() {
            return (kind.id, end);
        }
    }
    panic!("no kind's end is seen over from its position");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lesson_position_is_played_on_against_a_serving_bot() {
    let server = Server::start();
    let _bot = Bot::serve(&server);
    let mut person = Client::guest(&server, "learner").await;

    // Refused before any bot is asked: an unreadable position, and one where the game is
    // over. Each is the engine's word, and no room is made.
    let bad = person
        .request(json!({"t":"bot.play","kind":"unane","options":{},"level":1,
            "position":"not a position"}))
        .await;
    assert_eq!(bad["t"], "error", "{bad}");
    assert_eq!(bad["code"], "bad_request", "{bad}");
    let (kind, ended) = ended_position();
    let over = person
        .request(json!({"t":"bot.play","kind":kind,"options":{},"level":1,"position":ended}))
        .await;
    assert_eq!(over["code"], "bad_request", "{over}");
    assert_eq!(over["message"], "the game is already over in this position");

    // The person plays white: the bot (black, to act in the position) moves first.
    let ask = json!({"t":"bot.play","kind":"unane","options":{},"clock":{"kind":"none"},
        "level":1,"side":"white","position":POSITION});
    let room = play_the_computer(&mut person, &ask, Duration::from_secs(30)).await;
    assert_eq!(room["room"]["start"], POSITION, "{room}");
    assert_eq!(room["room"]["options"], json!({"width": 6, "height": 4}));
    assert_eq!(room["room"]["visibility"], "private");
    assert_eq!(room["room"]["rated"], false);
    let code = room["room"]["code"].as_str().unwrap().to_string();
    let started = person.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["side"], "white");
    let game_id = started["game_id"].as_str().unwrap().to_string();
    let snap = person
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == game_id.as_str())
        .await;
    let doc = &snap["doc"];
    assert_eq!(doc["start"], POSITION, "{snap}");
    assert_eq!(doc["position"], POSITION);
    assert_eq!(doc["moves"], json!([]));
    assert_eq!(doc["to_act"], "black");
    assert_eq!(doc["players"]["black"]["bot"], true);
    assert_eq!(doc["rated"], false);
    let at_start = engine_at(&doc["options"], POSITION);
    assert_eq!(doc["state"], at_start.view(), "the board is the position's");
    // The members' order: `start` follows the options.
    let names: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(&names[..4], ["id", "kind", "options", "start"]);

    // The bot answers with a legal move of the position.
    let mut tracked = Tracked::from_snapshot(&snap);
    while tracked.doc["moves"].as_array().unwrap().is_empty() {
        let diff = person.next_diff(&game_id).await;
        tracked.apply(&diff);
    }
    let bot_move = tracked.doc["moves"][0].as_str().unwrap().to_string();
    assert!(
        at_start.legal_notations().contains(&bot_move),
        "{bot_move} is not legal in {POSITION}"
    );
    // The person plays on, then resigns.
    if tracked.doc["status"]["state"] == "playing" {
        let mv = person.first_legal(&game_id).await;
        let ok = person
            .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
        // The person's move may itself end the game (the position is a lesson's, near an
        // end): then there is nothing left to resign.
        let ok = person
            .request(json!({"t":"game.resign","game_id":game_id}))
            .await;
        assert!(ok["t"] == "ok" || ok["code"] == "game_over", "{ok}");
    }
    finished_record_starts_there(&server, &person, &game_id, &code).await;
}

/// The finished game's record, replay, text record and history line start at the position.
async fn finished_record_starts_there(server: &Server, person: &Client, game_id: &str, code: &str) {
    let mut full = Value::Null;
    for _ in 0..100 {
        let (status, body) = server.api_game_full(game_id, Some(code));
        if status == 200 && body["status"]["state"] == "ended" {
            full = body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(full["start"], POSITION, "{full}");
    let moves: Vec<String> = serde_json::from_value(full["moves"].clone()).unwrap();
    let (status, body) = server.http_get(&format!("/api/games/{game_id}/replay?code={code}"));
    assert_eq!(status, 200, "{body}");
    let replay: Value = serde_json::from_str(&body).unwrap();
    let mut game = engine_at(&full["options"], POSITION);
    let mut states = vec![game.view()];
    for m in &moves {
        game.play(m).unwrap();
        states.push(game.view());
    }
    assert_eq!(
        replay["states"],
        json!(states),
        "replayed from the start position"
    );
    assert_eq!(replay["states"][moves.len()], full["state"]);
    let (status, text) = server.http_get(&format!("/api/games/{game_id}/record?code={code}"));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(&format!("[Start \"{POSITION}\"]")), "{text}");
    let (status, history) = server.http_get_as(
        &format!("/api/players/{}/games", person.player_id),
        Some(&person.token),
    );
    assert_eq!(status, 200, "{history}");
    let history: Value = serde_json::from_str(&history).unwrap();
    assert_eq!(history["games"][0]["id"], game_id, "{history}");
    assert_eq!(history["games"][0]["start"], POSITION, "{history}");
}

/// The web lesson's button: the game page opens with the step's position on the board (each
/// cell's stone read from the page, against the engine's board of the position string).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lesson_step_is_played_on_from_the_web_page() {
    let Some((web, server)) = Web::with_server("web-play-on") else {
        return;
    };
    let _bot = Bot::serve(&server);
    let base = page_base(&server);
    let c = web.page("learner").await;
    // Step 1 of the Ūnane lesson is POSITION; the learner plays black, to act there.
    c.goto(&format!("{base}/learn/unane?step=1"))
        .await
        .expect("open the lesson");
    let level = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("#play-on select[name=level]"))
        .await
        .expect("the level select");
    assert_eq!(
        level.prop("value").await.expect("level").as_deref(),
        Some("2")
    );
    // The bot may still be connecting: ask again while no computer is free.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        c.find(Locator::Css("#play-on-button"))
            .await
            .expect("the button")
            .click()
            .await
            .expect("click it");
        let v = until(
            &c,
            "the game page or a refusal",
            "return location.pathname.startsWith('/g/') ? 'game' : (document.querySelector('#play-on-status') || {}).textContent.startsWith('No game') ? 'no' : null",
        )
        .await;
        if v == "game" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no computer came");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // The board: each cell of the position's board as the page draws it.
    let game = engine_at(&json!({}), POSITION);
    let names = game.geometry()["names"].clone();
    let drawn = until(
        &c,
        "the position on the game page's board",
        &format!(
            "const rows = {names}; if (!document.querySelector('#board svg')) return null;
             return rows.map((r) => r.map((n) => {{
               const cell = document.querySelector(`#board [data-cell=\"${{n}}\"]`);
               if (!cell) return '?';
               return cell.querySelector('.piece-black') ? 'b' : cell.querySelector('.piece-white') ? 'w' : '.';
             }}).join('')).join('/').replace(/^.*\\?.*$/, '')"
        ),
    )
    .await;
    let board = POSITION.split(' ').next().unwrap();
    assert_eq!(drawn, board, "the step's position on the game's board");
    let cells = c
        .execute(
            "return document.querySelectorAll('#board [data-cell]').length",
            vec![],
        )
        .await
        .expect("count the cells");
    assert_eq!(cells, 24, "a 6x4 board, not the default options' board");
}
