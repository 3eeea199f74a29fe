//! Ratings people can see, over the real server's HTTP API (issue 28): a player's page
//! (`GET /api/players/<id>`: name, rating in every kind, recent games) and each kind's
//! leaderboard (`GET /api/leaderboard/<kind>`: established players only, best first), with
//! their web pages (`/p/<id>`, `/leaderboard/<kind>`) and the 404s for what does not exist.
#![forbid(unsafe_code)]

use serde_json::{json, Value};
use stoa_tests::{establish_ratings, resigned_game, Client, Server};

fn get_json(server: &Server, path: &str, token: Option<&str>) -> (u16, Value) {
    let (status, body) = server.http_get_as(path, token);
    let v = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{path}: not JSON: {body}"));
    (status, v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_pages_and_leaderboards_show_the_ratings_games_made() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    let mut bob = Client::guest(&server, "bob").await;
    let mut cy = Client::guest(&server, "cy").await;

    // Before any rated game: every board is empty, every rating the newcomer's.
    let (status, board) = get_json(&server, "/api/leaderboard/unane", None);
    assert_eq!(status, 200);
    assert_eq!(board, json!({"kind": "unane", "players": []}));

    // Cy plays one rated game (she stays provisional), then ann and bob play until both
    // are established, then one casual game.
    let cy_game = resigned_game(&server, &mut cy, &mut ann, true).await;
    let rated = establish_ratings(&server, &mut ann, &mut bob).await;
    let casual = resigned_game(&server, &mut ann, &mut bob, false).await;

    let page = |id: &str, token: Option<&str>| {
        let (status, page) = get_json(&server, &format!("/api/players/{id}"), token);
        assert_eq!(status, 200, "{page}");
        page
    };
    let ann_page = page(&ann.player_id, None);
    let bob_page = page(&bob.player_id, None);
    let cy_page = page(&cy.player_id, None);
    assert_eq!(ann_page["id"], ann.player_id.as_str());
    assert_eq!(ann_page["name"], "ann");
    assert_eq!(ann_page["bot"], false);
    let (a, b) = (&ann_page["ratings"]["unane"], &bob_page["ratings"]["unane"]);
    assert_eq!(a["provisional"], false, "{a}");
    assert_eq!(b["provisional"], false, "{b}");
    assert_eq!(a["games"], rated.len() + 1);
    assert_eq!(b["games"], rated.len());
    assert!(a["deviation"].as_i64().unwrap() <= 110, "{a}");
    // The other kinds: the newcomer's rating, as `welcome` shows it.
    let fresh = json!({"rating":1500,"deviation":350,"provisional":true,"games":0});
    for kind in ["staku", "akron", "akunur"] {
        assert_eq!(ann_page["ratings"][kind], fresh);
    }
    assert_eq!(cy_page["ratings"]["unane"]["provisional"], true);
    assert_eq!(cy_page["ratings"]["unane"]["games"], 1);
    // The same figures as the player's own `welcome`.
    let again = Client::with_token(&server, &ann.token).await;
    assert_eq!(again.welcome["player"]["ratings"], ann_page["ratings"]);

    // Recent games: the last ten, newest first, each with its rating change if rated.
    let recent = ann_page["recent"].as_array().expect("recent");
    assert_eq!(recent.len(), 10);
    assert_eq!(recent[0]["id"], casual.as_str());
    assert_eq!(recent[0]["rated"], false);
    assert_eq!(recent[0]["ratings_after"], Value::Null);
    let newest_rated = &recent[1];
    assert_eq!(newest_rated["id"], rated.last().unwrap().as_str());
    assert_eq!(newest_rated["rated"], true);
    let side = newest_rated["players"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, p)| p["id"] == ann.player_id.as_str())
        .map(|(s, _)| s.clone())
        .expect("ann's side");
    assert_eq!(
        newest_rated["ratings_after"][side.as_str()]
            .as_f64()
            .unwrap()
            .round() as i64,
        a["rating"].as_i64().unwrap()
    );
    let ids: Vec<&str> = recent.iter().map(|g| g["id"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = rated.iter().rev().take(9).map(String::as_str).collect();
    expected.insert(0, casual.as_str());
    assert_eq!(ids, expected);
    assert_eq!(cy_page["recent"][0]["id"], cy_game.as_str());

    // The leaderboard: ann and bob, best first, with the figures of their pages; cy is
    // provisional and not on it.
    let (status, board) = get_json(&server, "/api/leaderboard/unane", None);
    assert_eq!(status, 200);
    let row = |rank: usize, who: &Client, page: &Value, name: &str| {
        let r = &page["ratings"]["unane"];
        json!({"rank": rank, "id": who.player_id, "name": name, "rating": r["rating"],
            "deviation": r["deviation"], "games": r["games"]})
    };
    let (first, second) = if a["rating"].as_i64() > b["rating"].as_i64() {
        (
            row(1, &ann, &ann_page, "ann"),
            row(2, &bob, &bob_page, "bob"),
        )
    } else {
        (
            row(1, &bob, &bob_page, "bob"),
            row(2, &ann, &ann_page, "ann"),
        )
    };
    assert_eq!(board, json!({"kind": "unane", "players": [first, second]}));
    // Ann (two wins in three) is ahead.
    assert_eq!(board["players"][0]["name"], "ann");
    let (status, staku) = get_json(&server, "/api/leaderboard/staku", None);
    assert_eq!(
        (status, staku),
        (200, json!({"kind": "staku", "players": []}))
    );

    // A rename shows on the board at once.
    let renamed = {
        let mut c = Client::connect(&server).await;
        c.request(json!({"t":"hello","protocol":1,"token":ann.token,"name":"anna"}))
            .await
    };
    assert_eq!(renamed["player"]["name"], "anna", "{renamed}");
    let (_, board) = get_json(&server, "/api/leaderboard/unane", None);
    assert_eq!(board["players"][0]["name"], "anna");

    // The same over the websocket (`player`, `leaderboard`), for clients without HTTP.
    let board_now = get_json(&server, "/api/leaderboard/unane", None).1;
    let ws_board = cy.request(json!({"t":"leaderboard","kind":"unane"})).await;
    assert_eq!(ws_board["t"], "leaderboard", "{ws_board}");
    assert_eq!(ws_board["kind"], "unane");
    assert_eq!(ws_board["players"], board_now["players"]);
    let ws_page = cy
        .request(json!({"t":"player","player_id":bob.player_id}))
        .await;
    assert_eq!(ws_page["t"], "player", "{ws_page}");
    assert_eq!(ws_page["player"], page(&bob.player_id, None));
    // Without an id: the asker's own page.
    let own = cy.request(json!({"t":"player"})).await;
    assert_eq!(own["player"]["id"], cy.player_id.as_str());
    let e = cy.request(json!({"t":"leaderboard","kind":"chess"})).await;
    assert_eq!(
        (e["t"].as_str(), e["code"].as_str()),
        (Some("error"), Some("not_found")),
        "{e}"
    );
    assert_eq!(
        e["message"],
        "no game kind 'chess' (the kinds are unane, staku, akron, akunur)"
    );
    let e = cy.request(json!({"t":"player","player_id":"nobody"})).await;
    assert_eq!(e["code"], "not_found", "{e}");
    assert_eq!(e["message"], "no player 'nobody'");
    let e = cy.request(json!({"t":"leaderboard"})).await;
    assert_eq!(e["code"], "bad_request", "{e}");

    // What does not exist is a 404 that says what is missing.
    assert_eq!(
        get_json(&server, "/api/players/nobody", None),
        (
            404,
            json!({"error": "not_found", "message": "no player 'nobody'"})
        )
    );
    assert_eq!(
        get_json(&server, "/api/leaderboard/chess", None),
        (
            404,
            json!({"error": "not_found",
                "message": "no game kind 'chess' (the kinds are unane, staku, akron, akunur)"})
        )
    );

    // The web pages: the client's shell for what exists, a 404 page in words otherwise
    // (a path's own text is escaped, never markup).
    for path in [
        format!("/p/{}", ann.player_id),
        "/leaderboard".to_string(),
        "/leaderboard/unane".to_string(),
    ] {
        let (status, body) = server.http_get(&path);
        assert_eq!(status, 200, "{path}");
        assert!(body.contains("/assets/app.js"), "{path}: {body}");
    }
    let (status, body) = server.http_get("/p/nobody");
    assert_eq!(status, 404);
    assert!(body.contains("<h1>No such player</h1>"), "{body}");
    assert!(
        body.contains("There is no player with the id &#39;nobody&#39;."),
        "{body}"
    );
    let (status, body) = server.http_get("/p/%3Cb%3Ex%3C%2Fb%3E");
    assert_eq!(status, 404);
    assert!(
        body.contains("&lt;b&gt;x&lt;/b&gt;") && !body.contains("<b>x"),
        "{body}"
    );
    let (status, body) = server.http_get("/leaderboard/chess");
    assert_eq!(status, 404);
    assert!(body.contains("<h1>No such game</h1>"), "{body}");
    assert!(
        body.contains("There is no game kind &#39;chess&#39;, so no leaderboard for it."),
        "{body}"
    );
}

/// A player's page lists their private games to them alone (by bearer token), as their
/// history does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_own_private_games_show_on_their_page_to_them_only() {
    let server = Server::start();
    let mut t = stoa_tests::Table::open(
        &server,
        "unane",
        stoa_tests::quick_options("unane"),
        "private",
    )
    .await;
    t.play_out(3, 60).await;
    let id = t.game_id.clone();
    // The record is written just after the end.
    let deadline = std::time::Instant::now() + stoa_tests::TIMEOUT;
    let recent = |token: Option<&str>| {
        let (status, page) = get_json(
            &server,
            &format!("/api/players/{}", t.host.player_id),
            token,
        );
        assert_eq!(status, 200, "{page}");
        page["recent"].clone()
    };
    while recent(Some(&t.host.token)).as_array().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the game never showed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let own = recent(Some(&t.host.token));
    assert_eq!(own[0]["id"], id.as_str());
    assert_eq!(own[0]["visibility"], "private");
    assert_eq!(recent(None), json!([]));
    assert_eq!(recent(Some(&t.guest.token)), json!([]));
}
