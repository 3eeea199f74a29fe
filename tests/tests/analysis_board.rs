//! The analysis board (`/analysis`) in a real browser: a finished game opened at a ply, the
//! arrow keys stepping along its moves (each position string exactly the engine's), a
//! different move clicked at a ply starting a variation while the game's moves stay the main
//! line, a position string opened from the address and a move clicked on it, and a position
//! string the engines refuse showing the server's own words while nothing else changes.
//! The expected strings are computed here with the same engines (`stoa_protocol::explore`).
//!
//! Skipped (with a message) when `chromedriver` is not installed; `.ci/run` installs it.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};
use stoa_tests::analysis_worker::{Worker, FAST};
use stoa_tests::browser::{page_base, screenshot, until, Web, WAIT};
use stoa_tests::{Client as Ws, Server, Table};

/// The small Ūnane board the game is played on (a few moves end it).
fn tiny() -> Value {
    json!({"width": 4, "height": 3})
}

/// The position string after `moves` from the start of a tiny Ūnane game.
fn position_after(moves: &[String]) -> String {
    stoa_protocol::explore::explore("unane", &tiny(), None, moves)
        .expect("the game's moves")
        .position
}

/// The position string the board shows.
async fn shown_position(c: &Client) -> String {
    let v = c
        .execute(
            "const p = document.querySelector('#position'); return p ? p.value : null",
            vec![],
        )
        .await
        .expect("read the position");
    v.as_str().unwrap_or_default().to_string()
}

/// Waits until the board shows `position`.
async fn shows(c: &Client, position: &str, what: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        if shown_position(c).await == position {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the board shows '{}', not '{position}'",
            shown_position(c).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Presses `key` on the page (not in a field).
async fn press(c: &Client, key: Key) {
    c.execute(
        "document.activeElement && document.activeElement.blur()",
        vec![],
    )
    .await
    .expect("blur");
    let k: char = key.into();
    let keys = KeyActions::new("keys".to_string())
        .then(KeyAction::Down { value: k })
        .then(KeyAction::Up { value: k });
    c.perform_actions(keys).await.expect("press a key");
}

/// Plays `mv` by clicking its cells on the board (its button when the cells leave a choice).
async fn click_move(c: &Client, mv: &str) {
    let cells: Vec<String> = cells_in(mv);
    assert!(!cells.is_empty(), "{mv} names no cell");
    for cell in &cells {
        let css = format!("#board [data-cell=\"{cell}\" i]");
        let target = c
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("{mv}: no cell {cell}: {e}"));
        target.click().await.expect("click a cell");
    }
    let button = format!("#candidates [data-move=\"{mv}\"]");
    if let Ok(b) = c.find(Locator::Css(&button)).await {
        b.click().await.expect("click the move's button");
    }
}

/// The cells a move names, as the page reads them (a letter and digits).
fn cells_in(mv: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = mv.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_alphabetic() && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '\'') {
                j += 1;
            }
            out.push(chars[i..j].iter().collect::<String>().to_lowercase());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// A finished public game of tiny Ūnane, stored (its record served); the table and its moves.
async fn finished_game(server: &Server) -> (Table, Vec<String>) {
    let mut t = Table::open(server, "unane", tiny(), "public").await;
    t.play_out(7, 40).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while server
        .http_get(&format!("/api/games/{}/record", t.game_id))
        .0
        != 200
    {
        assert!(Instant::now() < deadline, "no record");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let moves: Vec<String> = t.host_doc.doc["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m.as_str().expect("move").to_string())
        .collect();
    (t, moves)
}

/// Has a worker review game `id` (asked by one of its players); the review's result.
async fn reviewed(server: &Server, t: &mut Table) -> Value {
    let id = t.game_id.clone();
    let asked = t
        .host
        .request(json!({"t":"analysis.request","game_id":id}))
        .await;
    assert_eq!(asked["t"], "analysis", "{asked}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = server.http_get(&format!("/api/games/{id}/analysis"));
        assert_eq!(status, 200, "{body}");
        let body: Value = serde_json::from_str(&body).expect("json");
        if body["state"] == "done" {
            return body["result"].clone();
        }
        assert!(Instant::now() < deadline, "no review: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The moves of the tree's main line and of its variations, as the page shows them.
async fn tree(c: &Client) -> Value {
    c.execute(
        "const q = (s) => [...document.querySelectorAll(s)].map((b) => b.dataset.move); \
         return {main: q('#tree > button.move'), variations: q('#tree .variation button.move'), \
           current: (document.querySelector('#tree .move.current') || {dataset: {}}).dataset.move || null}",
        vec![],
    )
    .await
    .expect("read the tree")
}

#[tokio::test]
async fn the_analysis_board_steps_branches_and_reads_positions() {
    let Some((web, server)) = Web::with_server("analysis-board") else {
        return;
    };
    let (mut table, moves) = finished_game(&server).await;
    let id = table.game_id.clone();
    assert!(
        moves.len() >= 4,
        "a game of {} moves: {moves:?}",
        moves.len()
    );
    let worker = Worker::start(&server, "board-worker", FAST);
    worker.line_starting("analysis worker", Duration::from_secs(20));
    let review = reviewed(&server, &mut table).await;
    // The plies the review marks, as `<ply> <mark>`.
    let marked: Vec<String> = review["plies"]
        .as_array()
        .expect("plies")
        .iter()
        .filter(|p| p["mark"].is_string())
        .map(|p| format!("{} {}", p["ply"], p["mark"].as_str().unwrap_or_default()))
        .collect();
    let base = page_base(&server);
    let c = web.page("analyst").await;

    // The finished game's page links to its board at the ply the replay shows (the end).
    c.goto(&format!("{base}/g/{id}"))
        .await
        .expect("open the game");
    let href = until(
        &c,
        "the game's Analysis board link",
        "const a = document.querySelector('#analysis-board-link'); return a && a.getAttribute('href')",
    )
    .await;
    assert_eq!(
        href,
        json!(format!("/analysis?game={id}&ply={}", moves.len()))
    );
    c.find(Locator::Css("#analysis-board-link"))
        .await
        .expect("the link")
        .click()
        .await
        .expect("follow it");
    shows(
        &c,
        &position_after(&moves),
        "the board from the game's link",
    )
    .await;

    // The game at ply 2; ← and → step along its moves.
    c.goto(&format!("{base}/analysis?game={id}&ply=2"))
        .await
        .expect("open the board");
    shows(&c, &position_after(&moves[..2]), "the game at ply 2").await;
    // The review: its graph with a rule at the ply shown, its marks on the game's moves.
    let graph = until(
        &c,
        "the evaluation graph",
        "const at = document.querySelector('#analysis-graph #analysis-graph-at'); \
         const pts = document.querySelector('#analysis-graph polyline'); \
         return at && pts && [at.dataset.ply, pts.getAttribute('points').split(' ').length]",
    )
    .await;
    assert_eq!(graph, json!(["2", moves.len() + 1]));
    let marks = c
        .execute(
            "return [...document.querySelectorAll('#tree > button.move[data-mark]')] \
               .map((b) => b.dataset.ply + ' ' + b.dataset.mark)",
            vec![],
        )
        .await
        .expect("the marks");
    assert_eq!(marks, json!(marked));
    press(&c, Key::Left).await;
    shows(&c, &position_after(&moves[..1]), "after ←").await;
    press(&c, Key::Right).await;
    press(&c, Key::Right).await;
    shows(&c, &position_after(&moves[..3]), "after → →").await;
    let url = c.current_url().await.expect("url").to_string();
    assert!(
        url.ends_with(&format!("/analysis?game={id}&ply=3")),
        "{url}"
    );
    press(&c, Key::End).await;
    shows(&c, &position_after(&moves), "after End").await;
    press(&c, Key::Home).await;
    shows(&c, &position_after(&[]), "after Home").await;
    press(&c, Key::Right).await;
    press(&c, Key::Right).await;
    shows(&c, &position_after(&moves[..2]), "back at ply 2").await;

    // Another move than the game's third one starts a variation there.
    let at2 = stoa_protocol::explore::explore("unane", &tiny(), None, &moves[..2]).unwrap();
    let other = at2
        .legal
        .iter()
        .find(|m| **m != moves[2] && !cells_in(m).is_empty())
        .expect("another legal move")
        .clone();
    click_move(&c, &other).await;
    let mut line = moves[..2].to_vec();
    line.push(other.clone());
    shows(&c, &position_after(&line), "after the variation's move").await;
    let shown = tree(&c).await;
    assert_eq!(shown["main"], json!(moves), "the game stays the main line");
    assert_eq!(shown["variations"], json!([other]), "{shown}");
    assert_eq!(shown["current"], json!(other));
    let url = c.current_url().await.expect("url").to_string();
    assert!(url.contains("/analysis?kind=unane&position="), "{url}");
    // The variation branches off where it was played: right after the game's second move.
    let after = c
        .execute(
            "const v = document.querySelector('#tree .variation'); \
             const b = v.previousElementSibling; return b && b.dataset.ply + ' ' + b.dataset.move",
            vec![],
        )
        .await
        .expect("the move before the variation");
    assert_eq!(after, json!(format!("3 {}", moves[2])));
    // Clicking a move of the main line goes there.
    c.find(Locator::Css(&format!(
        "#tree > button.move[data-ply=\"{}\"]",
        moves.len()
    )))
    .await
    .expect("the last move")
    .click()
    .await
    .expect("click it");
    shows(&c, &position_after(&moves), "the game's last move").await;
    c.find(Locator::Css("#tree .variation button.move"))
        .await
        .expect("the variation")
        .click()
        .await
        .expect("click it");
    shows(&c, &position_after(&line), "the variation again").await;
    screenshot(&c, "analysis-board").await;

    // A position string from the address; a move clicked on it.
    let start = "....../.bwb../...b.w/w..... b 2";
    c.goto(&format!(
        "{base}/analysis?kind=unane&position={}",
        start.replace(' ', "%20")
    ))
    .await
    .expect("open a position");
    let loaded = stoa_protocol::explore::explore("unane", &json!({}), Some(start), &[]).unwrap();
    shows(&c, &loaded.position, "the position from the address").await;
    click_move(&c, "b3xc3").await;
    let played =
        stoa_protocol::explore::explore("unane", &json!({}), Some(start), &["b3xc3".into()])
            .unwrap();
    shows(&c, &played.position, "after b3xc3").await;
    assert_eq!(played.position, "....../..bb../...b.w/w..... w 3");
    let url = c.current_url().await.expect("url").to_string();

    // A position the engines refuse: the server's words, nothing else changes.
    let mut ws = Ws::guest(&server, "asker").await;
    let refused = ws
        .request(json!({"t":"position.explore","kind":"unane","position":"no such position"}))
        .await;
    assert_eq!(refused["t"], "error", "{refused}");
    let words = refused["message"].as_str().expect("message").to_string();
    c.execute(
        "document.querySelector('#setup-position').value = 'no such position'; \
         document.querySelector('#setup-go').click()",
        vec![],
    )
    .await
    .expect("submit a bad position");
    let error = until(
        &c,
        "the refusal",
        "return document.querySelector('#analysis-error').textContent",
    )
    .await;
    assert_eq!(error, json!(words));
    assert_eq!(shown_position(&c).await, played.position);
    assert_eq!(c.current_url().await.expect("url").to_string(), url);
    // The same string in the address: the form, with the same words.
    c.goto(&format!(
        "{base}/analysis?kind=unane&position=no%20such%20position"
    ))
    .await
    .expect("open a bad position");
    let error = until(
        &c,
        "the refusal from the address",
        "const e = document.querySelector('#analysis-error'); return e && e.textContent",
    )
    .await;
    assert_eq!(error, json!(words));
    assert!(
        c.find(Locator::Css("#board")).await.is_err(),
        "no board for a refused position"
    );

    // A lesson step's "Analyse this position" opens the step's position.
    let (status, lesson) = server.http_get("/api/lessons/unane");
    assert_eq!(status, 200, "{lesson}");
    let lesson: Value = serde_json::from_str(&lesson).expect("the lesson");
    let step = &lesson["steps"][1];
    let options = step.get("options").cloned().unwrap_or(json!({}));
    let expected = stoa_protocol::explore::explore(
        "unane",
        &options,
        Some(step["position"].as_str().expect("position")),
        &[],
    )
    .expect("the step's position");
    c.goto(&format!("{base}/learn/unane?step=2"))
        .await
        .expect("open the lesson");
    // The lesson page draws the step again once its progress arrives: a link found just
    // before is then a stale element, and is looked up again.
    let mut followed = Err(String::new());
    for _ in 0..5 {
        let link = c
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css("#analyse-step"))
            .await
            .expect("the step's link");
        followed = link.click().await.map_err(|e| e.to_string());
        if followed.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    followed.expect("follow the step's link");
    shows(&c, &expected.position, "the lesson step's position").await;
    let url = c.current_url().await.expect("url").to_string();
    assert!(url.ends_with("/analysis?lesson=unane&step=2"), "{url}");
}
