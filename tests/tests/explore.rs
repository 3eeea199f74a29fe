//! `position.explore`: a practice position answered by the engines (legal moves, status,
//! view), never a game; and the lessons built on it (`GET /api/lessons/<kind>`, `/learn`).

use serde_json::{json, Value};
use stoa_tests::{Client, Server};

const UNANE: &str = "....../.bwb../...b.w/w..... b 2";

#[tokio::test]
async fn a_position_its_legal_moves_and_a_line_played_on_it() {
    let server = Server::start();
    let mut c = Client::guest(&server, "learner").await;
    let a = c
        .request(json!({"t":"position.explore","kind":"unane","position":UNANE}))
        .await;
    assert_eq!(a["t"], "position", "{a}");
    assert_eq!(a["legal"], json!(["-d2", "b3xc3", "d3xc3"]));
    assert_eq!(a["to_act"], "black");
    assert_eq!(a["moves"], json!([]));
    assert_eq!(
        a["status"],
        json!({"state":"playing","winner":null,"reason":null})
    );
    // The view is the game document's `state` for this position, drawn on its geometry.
    let game = stoa_protocol::kind("unane")
        .unwrap()
        .from_position(&json!({}), UNANE)
        .unwrap();
    assert_eq!(a["view"], game.view());
    assert_eq!(a["geometry"], game.geometry());

    // A line of moves, in any accepted form: the answer names them canonically.
    let b = c
        .request(json!({"t":"position.explore","kind":"unane","position":UNANE,"moves":["B3-C3"]}))
        .await;
    assert_eq!(b["moves"], json!(["b3xc3"]));
    assert_eq!(
        b["status"],
        json!({"state":"ended","winner":"black","reason":"one_group"})
    );
    assert_eq!(b["to_act"], Value::Null);
    assert_eq!(b["legal"], json!([]));

    // Without a position: the kind's start, with the options given.
    let s = c
        .request(json!({"t":"position.explore","kind":"staku","options":{"max_stack":2}}))
        .await;
    assert_eq!(s["legal"].as_array().map(Vec::len), Some(200));
    assert_eq!(s["options"], json!({"max_stack": 2}));
}

#[tokio::test]
async fn bad_input_is_refused_clearly_and_changes_nothing() {
    let server = Server::start();
    let mut c = Client::guest(&server, "learner").await;
    let ask = json!({"t":"position.explore","kind":"unane","position":UNANE});
    let before = c.request(ask.clone()).await;
    let refusals = [
        (
            json!({"kind":"chess"}),
            "invalid_options",
            "unknown game kind",
        ),
        (
            json!({"kind":"staku","options":{"max_stack":9}}),
            "invalid_options",
            "max_stack",
        ),
        (
            json!({"kind":"akron","position":"9 v"}),
            "bad_request",
            "invalid position",
        ),
        (
            json!({"kind":"unane","position":UNANE,"moves":["-d2","a1xh7"]}),
            "illegal_move",
            "move 2 of the line",
        ),
        (
            json!({"kind":"unane","position":UNANE,"moves":["b3xc3","-d2"]}),
            "game_over",
            "the game is over",
        ),
    ];
    for (mut req, code, words) in refusals {
        req["t"] = json!("position.explore");
        let e = c.request(req.clone()).await;
        assert_eq!(e["t"], "error", "{req}: {e}");
        assert_eq!(e["code"], code, "{req}: {e}");
        assert!(e["message"].as_str().unwrap().contains(words), "{e}");
    }
    // The same question gets the same answer: nothing was kept.
    let mut after = c.request(ask).await;
    let mut before = before;
    before.as_object_mut().unwrap().remove("rid");
    after.as_object_mut().unwrap().remove("rid");
    assert_eq!(before, after);
    // And no game was made: nothing listed, nothing in the player's history.
    let (status, games) = server.http_get("/api/games");
    assert_eq!(status, 200);
    let games: Value = serde_json::from_str(&games).unwrap();
    assert_eq!(games["games"], json!([]), "{games}");
    let history = c.request(json!({"t":"history"})).await;
    assert_eq!(history["games"], json!([]), "{history}");
}

#[test]
fn the_lessons_are_served_as_the_crate_holds_them() {
    let server = Server::start();
    for kind in stoa_protocol::lessons::kinds() {
        let (status, body) = server.http_get(&format!("/api/lessons/{kind}"));
        assert_eq!(status, 200);
        assert_eq!(body, stoa_protocol::lessons::source(kind).unwrap());
        let (status, page) = server.http_get(&format!("/learn/{kind}"));
        assert_eq!(status, 200);
        assert!(page.contains("/assets/app.js"), "{page}");
    }
    let (status, _) = server.http_get("/api/lessons/chess");
    assert_eq!(status, 404);
    let (status, page) = server.http_get("/learn/chess");
    assert_eq!(status, 404);
    assert!(page.contains("no lesson"), "{page}");
    let (status, _) = server.http_get("/learn");
    assert_eq!(status, 200);
}
