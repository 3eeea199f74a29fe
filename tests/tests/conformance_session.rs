//! Conformance with protocol/docs/PROTOCOL.md's Transport, Errors and Session sections, black-box: the
//! first-message rule, `rid` echo rules, frame errors, ping, several connections.

use serde_json::{json, Value};
use stoa_tests::{Client, Server};

/// Sends a ping without rid and returns every message that arrived before its pong (the pong
/// is a barrier: answers are sent in request order).
async fn until_barrier(c: &mut Client) -> Vec<Value> {
    c.send(json!({"t":"ping"})).await;
    let mut seen = Vec::new();
    loop {
        let m = c.recv().await;
        if m["t"] == "pong" && m.get("rid").is_none() {
            return seen;
        }
        seen.push(m);
    }
}

/// "The first client message must be hello … Any other first message gets error
/// unauthorized and the connection closes" — also when that other message is malformed.
#[tokio::test]
async fn any_other_first_message_is_unauthorized_and_closes() {
    let server = Server::start();
    for (raw, rid) in [
        (r#"{"t":"ping"}"#, Value::Null),
        (
            r#"{"t":"game.watch","rid":"w1","game_id":"g"}"#,
            json!("w1"),
        ),
        // Known types with missing or wrong fields (regression: they got bad_request and the
        // connection stayed open).
        (r#"{"t":"game.watch","rid":4}"#, json!(4)),
        (r#"{"t":"room.create","rid":"c"}"#, json!("c")),
        (r#"{"t":"game.move","game_id":7,"move":"a1"}"#, Value::Null),
        // An unknown type.
        (r#"{"t":"teleport","rid":5}"#, json!(5)),
    ] {
        let mut c = Client::connect(&server).await;
        c.send_raw(raw).await;
        let e = c.recv().await;
        assert_eq!(e["t"], "error", "{raw}: {e}");
        assert_eq!(e["code"], "unauthorized", "{raw}: {e}");
        assert_eq!(e.get("rid").cloned().unwrap_or(Value::Null), rid, "{raw}");
        assert!(e["message"].is_string());
        assert_eq!(c.closed().await, 1008, "{raw}");
        assert!(c.pending.is_empty(), "one answer only: {:?}", c.pending);
    }
}

/// A hello that fails (bad name, bad protocol, unknown token) is answered with an error and
/// the client may say hello again; unknown tokens never create an identity.
#[tokio::test]
async fn failed_hello_can_be_retried() {
    let server = Server::start();
    let mut c = Client::connect(&server).await;
    for (hello, code) in [
        (json!({"t":"hello","protocol":1,"name":""}), "bad_request"),
        (
            json!({"t":"hello","protocol":1,"name":"   "}),
            "bad_request",
        ),
        (
            json!({"t":"hello","protocol":1,"name":"x".repeat(25)}),
            "bad_request",
        ),
        (json!({"t":"hello","protocol":"1"}), "bad_request"),
        (json!({"t":"hello","protocol":1,"token":""}), "unauthorized"),
        (
            json!({"t":"hello","protocol":1,"token":"f".repeat(64),"name":"x"}),
            "unauthorized",
        ),
    ] {
        let e = c.request(hello.clone()).await;
        assert_eq!(e["t"], "error", "{hello}: {e}");
        assert_eq!(e["code"], code, "{hello}: {e}");
    }
    // 24 characters (not bytes) is fine.
    let name = "é".repeat(24);
    let w = c
        .request(json!({"t":"hello","protocol":1,"name":name}))
        .await;
    assert_eq!(w["t"], "welcome", "{w}");
    assert_eq!(w["protocol"], 1);
    assert_eq!(w["player"]["name"], name.as_str());
    assert!(w["player"]["ratings"].is_object());
    assert_eq!(w["games"], json!([]));
    assert!(w["server_time"].as_u64().is_some());
    let token = w["token"].as_str().unwrap();
    // At least 128 random bits: here 256 bits in hex.
    assert!(token.len() >= 32);
    assert_ne!(token, w["player"]["id"].as_str().unwrap());
    // The same player again by token, on another connection, at the same time.
    let again = Client::with_token(&server, token).await;
    assert_eq!(again.player_id, w["player"]["id"].as_str().unwrap());
    assert_eq!(again.welcome["player"]["name"], name.as_str());
}

/// "Every request that carries a rid gets exactly one direct answer with the same rid" —
/// integer and string rids (up to 64 characters), on successes and on errors; requests
/// without rid are answered without one.
#[tokio::test]
async fn rid_is_echoed_exactly_once() {
    let server = Server::start();
    let mut c = Client::guest(&server, "rids").await;
    let long = "é".repeat(64);
    let rids = [
        json!(0),
        json!(-7),
        json!(9_007_199_254_740_993_i64),
        json!("a"),
        json!(long),
    ];
    for rid in &rids {
        for req in [
            json!({"t":"ping"}),
            json!({"t":"game.unwatch","game_id":"gnope"}),
            json!({"t":"game.watch","game_id":"gnope"}),
            json!({"t":"game.move","game_id":"gnope","move":"a1"}),
            json!({"t":"room.join","code":"ZZZZZZZZZZ"}),
            json!({"t":"lobby.unwatch"}),
            json!({"t":"hello","protocol":1}),
            json!({"t":"game.teleport"}),
            json!({"t":"game.watch","game_id":5}),
        ] {
            let mut req = req;
            req["rid"] = rid.clone();
            // An unknown field is ignored.
            req["x-extension"] = json!({"nested": [1, 2]});
            c.send(req.clone()).await;
            let seen = until_barrier(&mut c).await;
            assert_eq!(seen.len(), 1, "exactly one answer to {req}: {seen:?}");
            assert_eq!(&seen[0]["rid"], rid, "{req}: {}", seen[0]);
        }
    }
    // Which answers: pong, ok, not_found, conflict (second hello), unknown_type, bad_request.
    let answer = |req: Value| {
        let mut req = req;
        req["rid"] = json!("r");
        req
    };
    let cases = [
        (answer(json!({"t":"ping"})), "pong", None),
        (
            answer(json!({"t":"game.unwatch","game_id":"g"})),
            "ok",
            None,
        ),
        (
            answer(json!({"t":"game.watch","game_id":"g"})),
            "error",
            Some("not_found"),
        ),
        (answer(json!({"t":"nope"})), "error", Some("unknown_type")),
        (
            answer(json!({"t":"game.legal","game_id":["g"]})),
            "error",
            Some("bad_request"),
        ),
        (
            answer(json!({"t":"game.watch","game_id":"g","since":-1})),
            "error",
            Some("bad_request"),
        ),
        (
            answer(json!({"t":"game.watch","game_id":"g","since":"3"})),
            "error",
            Some("bad_request"),
        ),
        (
            answer(json!({"t":"room.create","kind":"unane","rated":"no"})),
            "error",
            Some("bad_request"),
        ),
    ];
    for (req, t, code) in cases {
        c.send(req.clone()).await;
        let seen = until_barrier(&mut c).await;
        assert_eq!(seen.len(), 1, "{req}: {seen:?}");
        assert_eq!(seen[0]["t"], t, "{req}: {}", seen[0]);
        assert_eq!(seen[0]["rid"], "r");
        if let Some(code) = code {
            assert_eq!(seen[0]["code"], code, "{req}: {}", seen[0]);
            assert!(seen[0]["message"].is_string());
        }
    }

    // Without rid: answers carry no rid.
    for req in [
        json!({"t":"game.unwatch","game_id":"g"}),
        json!({"t":"game.watch","game_id":"g"}),
        json!({"t":"nope"}),
        json!({"t":"game.watch"}),
    ] {
        c.send(req.clone()).await;
        let seen = until_barrier(&mut c).await;
        assert_eq!(seen.len(), 1, "{req}: {seen:?}");
        assert!(seen[0].get("rid").is_none(), "{req}: {}", seen[0]);
    }

    // A string rid over 64 characters is not a valid rid: bad_request.
    c.send(json!({"t":"ping","rid":"x".repeat(65)})).await;
    let seen = until_barrier(&mut c).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["code"], "bad_request", "{}", seen[0]);
    // Other rid types are wrong field types.
    for rid in [json!(1.5), json!(true), json!([1]), json!({"a":1})] {
        c.send(json!({"t":"ping","rid":rid})).await;
        let seen = until_barrier(&mut c).await;
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0]["code"], "bad_request", "{rid}: {}", seen[0]);
    }
}

/// "Invalid JSON, a missing t or wrong field types get error bad_request … never a crash,
/// never a silent drop"; "A binary frame gets error bad_request"; the connection stays.
#[tokio::test]
async fn malformed_frames_get_bad_request_and_the_connection_stays() {
    let server = Server::start();
    let mut c = Client::guest(&server, "frames").await;
    for raw in [
        "",
        " ",
        "null",
        "\"ping\"",
        "{\"t\":\"ping\"} {\"t\":\"ping\"}",
        "{\"t\":null}",
        "{\"t\":[\"ping\"]}",
        "{\"T\":\"ping\"}",
        "{\"t\":\"game.draw\",\"game_id\":\"g\"}",
        "{\"t\":\"game.draw\",\"game_id\":\"g\",\"action\":\"OFFER\"}",
        "{\"t\":\"room.join\",\"code\":123}",
    ] {
        c.send_raw(raw).await;
        let seen = until_barrier(&mut c).await;
        assert_eq!(seen.len(), 1, "{raw:?}: {seen:?}");
        assert_eq!(seen[0]["t"], "error", "{raw:?}");
        assert_eq!(seen[0]["code"], "bad_request", "{raw:?}: {}", seen[0]);
    }
    c.send_binary(b"{\"t\":\"ping\"}".to_vec()).await;
    let seen = until_barrier(&mut c).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["code"], "bad_request");
    // Still served.
    let p = c.request(json!({"t":"ping"})).await;
    assert_eq!(p["t"], "pong");
    assert!(p["server_time"].as_u64().unwrap() > 1_600_000_000_000);
}

/// "{"t":"ping"} … is never rate limited": far more pings than 3x the limit neither get
/// `rate_limited` nor close the connection, and do not use up the request budget.
#[tokio::test]
async fn ping_is_never_rate_limited() {
    let server = Server::start_with(&["--rate-limit", "5", "--rate-window-ms", "60000"]);
    let mut c = Client::guest(&server, "pinger").await;
    for i in 0..40 {
        c.send(json!({"t":"ping","rid":i})).await;
    }
    for i in 0..40 {
        let p = c.recv().await;
        assert_eq!(p["t"], "pong", "{p}");
        assert_eq!(p["rid"], i);
    }
    // The pings used none of the budget of 5 (whether hello counts is left open here).
    let mut served = 0;
    loop {
        let r = c.request(json!({"t":"lobby.unwatch"})).await;
        if r["t"] == "ok" {
            served += 1;
            continue;
        }
        assert_eq!(r["code"], "rate_limited", "{r}");
        break;
    }
    assert!((4..=5).contains(&served), "{served} served");
    // A limited request changes nothing and pings still work.
    let p = c.request(json!({"t":"ping"})).await;
    assert_eq!(p["t"], "pong");
}

/// "A player may have several connections at once; each receives what that player is
/// subscribed to": both connections get `game.started` and a snapshot; welcome lists the
/// game; a later connection sees it in `games` and can watch it.
#[tokio::test]
async fn several_connections_of_one_player() {
    let server = Server::start();
    let mut a1 = Client::guest(&server, "a").await;
    let mut a2 = Client::with_token(&server, &a1.token.clone()).await;
    let mut b = Client::guest(&server, "b").await;
    let room = a1
        .request(
            json!({"t":"room.create","kind":"unane","options":{"width":4,"height":3},
            "visibility":"private","side":"white"}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    let joined = b.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room");
    assert_eq!(joined["room"]["status"], "started");
    let mut game_id = String::new();
    for c in [&mut a1, &mut a2] {
        let started = c.recv_where(|m| m["t"] == "game.started").await;
        assert_eq!(started["side"], "white");
        assert_eq!(started["kind"], "unane");
        game_id = started["game_id"].as_str().unwrap().to_string();
        let snap = c.recv_where(|m| m["t"] == "game.snapshot").await;
        assert_eq!(snap["game_id"], game_id.as_str());
        assert_eq!(snap["seq"], 0);
        assert!(snap.get("rid").is_none());
    }
    let started = b.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["side"], "black");
    let a3 = Client::with_token(&server, &a1.token.clone()).await;
    assert_eq!(a3.welcome["games"], json!([game_id]));
    // A move by black reaches both of a's subscribed connections.
    let mv = b.first_legal(&game_id).await;
    let ok = b
        .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
        .await;
    assert_eq!(ok["t"], "ok");
    let seq = ok["seq"].as_u64().unwrap();
    for c in [&mut a1, &mut a2] {
        let d = c
            .recv_where(|m| m["t"] == "game.diff" && m["seq"] == seq)
            .await;
        assert_eq!(d["game_id"], game_id.as_str());
    }
}
