//! Every documented error case gets its exact code and changes nothing: the next snapshot is
//! unchanged.

use serde_json::{json, Value};
use stoa_tests::{Client, Server, Table};

/// The current (seq, doc) through HTTP (no subscription side effects).
fn current(server: &Server, game_id: &str, code: &str) -> Value {
    let (status, doc) = server.api_game(game_id, Some(code));
    assert_eq!(status, 200);
    doc
}

#[tokio::test]
async fn game_errors_change_nothing() {
    let server = Server::start();
    let mut t = Table::open(&server, "unane", json!({"width":4,"height":3}), "private").await;
    let game_id = t.game_id.clone();
    let code = t.code.clone();
    t.step(7).await.expect("first move");
    let before = current(&server, &game_id, &code);
    let seq = t.host_doc.seq;
    let host_acts = t.to_act_is_host().expect("game on");
    let (mover, waiter) = if host_acts {
        (&mut t.host, &mut t.guest)
    } else {
        (&mut t.guest, &mut t.host)
    };

    // Out of turn.
    let legal = mover
        .request(json!({"t":"game.legal","game_id":game_id}))
        .await;
    assert_eq!(legal["seq"].as_u64(), Some(seq));
    let some_move = legal["moves"][0].as_str().expect("a move").to_string();
    let e = waiter
        .request(json!({"t":"game.move","game_id":game_id,"move":some_move}))
        .await;
    assert_eq!(e["code"], "not_your_turn", "{e}");
    assert_eq!(e["t"], "error");
    assert!(e["message"].is_string());

    // Illegal move (unparsable text and a well-formed illegal one).
    for bad in ["zz99", "swap-nonsense", ""] {
        let e = mover
            .request(json!({"t":"game.move","game_id":game_id,"move":bad}))
            .await;
        assert_eq!(e["code"], "illegal_move", "{bad}: {e}");
    }

    // Stale seq.
    let e = mover
        .request(json!({"t":"game.move","game_id":game_id,"move":some_move,"seq":seq - 1}))
        .await;
    assert_eq!(e["code"], "stale_seq", "{e}");
    let e = mover
        .request(json!({"t":"game.move","game_id":game_id,"move":some_move,"seq":seq + 5}))
        .await;
    assert_eq!(e["code"], "stale_seq", "{e}");

    // A spectator trying to act.
    let mut spectator = Client::guest(&server, "spec").await;
    let snap = spectator
        .request(json!({"t":"room.join","code":code}))
        .await;
    assert_eq!(snap["t"], "game.snapshot");
    for req in [
        json!({"t":"game.move","game_id":game_id,"move":some_move}),
        json!({"t":"game.resign","game_id":game_id}),
        json!({"t":"game.draw","game_id":game_id,"action":"offer"}),
        json!({"t":"game.abort","game_id":game_id}),
        json!({"t":"game.claim","game_id":game_id}),
    ] {
        let e = spectator.request(req).await;
        assert_eq!(e["code"], "forbidden", "{e}");
    }

    // Unknown game.
    let e = spectator
        .request(json!({"t":"game.watch","game_id":"gnope"}))
        .await;
    assert_eq!(e["code"], "not_found");
    let e = mover
        .request(json!({"t":"game.move","game_id":"gnope","move":"a1"}))
        .await;
    assert_eq!(e["code"], "not_found");

    // Claim while the opponent is connected; draw accept without an offer; rematch
    // before the end: conflict.
    for req in [
        json!({"t":"game.claim","game_id":game_id}),
        json!({"t":"game.draw","game_id":game_id,"action":"accept"}),
        json!({"t":"game.draw","game_id":game_id,"action":"decline"}),
        json!({"t":"game.rematch","game_id":game_id}),
    ] {
        let e = mover.request(req).await;
        assert_eq!(e["code"], "conflict", "{e}");
    }

    // Nothing changed (the spectator who watches is in the crowd, not the document).
    let after = current(&server, &game_id, &code);
    assert_eq!(after, before);

    // After the end: game_over for moves, resign, draw, abort, claim.
    let e = mover
        .request(json!({"t":"game.resign","game_id":game_id}))
        .await;
    assert_eq!(e["t"], "ok");
    let ended = current(&server, &game_id, &code);
    assert_eq!(ended["status"]["state"], "ended");
    assert_eq!(ended["status"]["reason"], "resign");
    for req in [
        json!({"t":"game.move","game_id":game_id,"move":some_move}),
        json!({"t":"game.resign","game_id":game_id}),
        json!({"t":"game.draw","game_id":game_id,"action":"offer"}),
        json!({"t":"game.abort","game_id":game_id}),
        json!({"t":"game.claim","game_id":game_id}),
    ] {
        let e = waiter.request(req).await;
        assert_eq!(e["code"], "game_over", "{e}");
    }
    assert_eq!(current(&server, &game_id, &code), ended);
}

#[tokio::test]
async fn frame_errors() {
    let server = Server::start();
    let mut c = Client::guest(&server, "frames").await;

    // Malformed frames: bad_request, never a crash or a silent drop.
    for raw in [
        "{",
        "[]",
        "42",
        r#"{"rid":1}"#,
        r#"{"t":5,"rid":1}"#,
        r#"{"t":"game.move","rid":1,"game_id":7,"move":"a1"}"#,
        r#"{"t":"game.watch","rid":1}"#,
        r#"{"t":"game.draw","rid":1,"game_id":"g","action":"maybe"}"#,
        r#"{"t":"ping","rid":{"x":1}}"#,
    ] {
        c.send_raw(raw).await;
        let e = c.recv().await;
        assert_eq!(e["t"], "error", "{raw}");
        assert_eq!(e["code"], "bad_request", "{raw}: {e}");
    }
    // The rid is echoed when it can be read.
    c.send_raw(r#"{"t":"game.move","rid":"r-1","game_id":7}"#)
        .await;
    let e = c.recv().await;
    assert_eq!(e["rid"], "r-1");
    assert_eq!(e["code"], "bad_request");

    // Unknown type.
    c.send_raw(r#"{"t":"game.teleport","rid":9}"#).await;
    let e = c.recv().await;
    assert_eq!(e["code"], "unknown_type");
    assert_eq!(e["rid"], 9);

    // Binary frame.
    c.send_binary(vec![1, 2, 3]).await;
    let e = c.recv().await;
    assert_eq!(e["code"], "bad_request");

    // Ping answers pong with the rid.
    let p = c.request(json!({"t":"ping"})).await;
    assert_eq!(p["t"], "pong");
    assert!(p["server_time"].as_u64().is_some());

    // A 16 KiB frame is fine (it is just an unknown type); one byte more closes with 1009.
    let pad = |n: usize| {
        let base = r#"{"t":"x","pad":""}"#;
        format!(r#"{{"t":"x","pad":"{}"}}"#, "a".repeat(n - base.len()))
    };
    c.send_raw(&pad(16 * 1024)).await;
    assert_eq!(c.recv().await["code"], "unknown_type");
    c.send_raw(&pad(16 * 1024 + 1)).await;
    assert_eq!(c.closed().await, 1009);
}

#[tokio::test]
async fn session_rules() {
    let server = Server::start();
    // A first message other than hello: unauthorized, and the connection closes.
    let mut c = Client::connect(&server).await;
    c.send(json!({"t":"game.watch","rid":1,"game_id":"g"}))
        .await;
    let e = c.recv().await;
    assert_eq!(e["code"], "unauthorized");
    assert_eq!(e["rid"], 1);
    assert_eq!(c.closed().await, 1008);

    // An unknown token: unauthorized, never a new identity.
    let mut c = Client::connect(&server).await;
    let e = c
        .request(json!({"t":"hello","protocol":1,"token":"0123456789abcdef"}))
        .await;
    assert_eq!(e["code"], "unauthorized");

    // A bad name.
    let e = c
        .request(json!({"t":"hello","protocol":1,"name":"x".repeat(25)}))
        .await;
    assert_eq!(e["code"], "bad_request");

    // A guest, then the same player again by token.
    let a = Client::guest(&server, "alice").await;
    assert_eq!(a.welcome["protocol"], 1);
    assert_eq!(a.welcome["player"]["name"], "alice");
    assert!(a.token.len() >= 32, "tokens carry at least 128 bits");
    assert!(a.welcome["games"].as_array().is_some());
    let b = Client::with_token(&server, &a.token).await;
    assert_eq!(b.player_id, a.player_id);
    assert_eq!(b.welcome["player"]["name"], "alice");

    // Rooms: unknown code, invalid options, invalid kind, bad side.
    let mut a = a;
    let e = a
        .request(json!({"t":"room.join","code":"ZZZZZZZZZZ"}))
        .await;
    assert_eq!(e["code"], "not_found");
    for req in [
        json!({"t":"room.create","kind":"unane","options":{"width":5,"height":5}}),
        json!({"t":"room.create","kind":"unane","options":{"width":"wide"}}),
        json!({"t":"room.create","kind":"chess"}),
        json!({"t":"room.create","kind":"unane","side":"green"}),
        json!({"t":"room.create","kind":"unane","clock":{"kind":"hourglass"}}),
    ] {
        let e = a.request(req).await;
        assert_eq!(e["code"], "invalid_options", "{e}");
    }
    // A room closed by its host cannot be joined.
    let room = a
        .request(json!({"t":"room.create","kind":"unane","visibility":"public","side":"black"}))
        .await;
    assert_eq!(room["room"]["status"], "waiting");
    assert_eq!(room["room"]["visibility"], "public");
    assert_eq!(room["room"]["seats"]["black"]["id"], a.player_id.as_str());
    assert_eq!(room["room"]["seats"]["white"], Value::Null);
    let code = room["room"]["code"].as_str().unwrap().to_string();
    assert!(code.len() >= 10);
    let ok = a.request(json!({"t":"room.leave","code":code})).await;
    assert_eq!(ok["t"], "ok");
    let mut c = Client::guest(&server, "carol").await;
    let e = c.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(e["code"], "conflict");
}

#[tokio::test]
async fn rate_limits() {
    let server = Server::start_with(&["--rate-limit", "10", "--rate-window-ms", "60000"]);
    let mut c = Client::guest(&server, "flood").await;
    // hello does not count: 10 requests are allowed, the 11th is limited.
    for _ in 0..10 {
        let r = c.request(json!({"t":"game.unwatch","game_id":"g"})).await;
        assert_eq!(r["t"], "ok");
    }
    let r = c.request(json!({"t":"game.unwatch","game_id":"g"})).await;
    assert_eq!(r["code"], "rate_limited");
    // Ping is free.
    let p = c.request(json!({"t":"ping"})).await;
    assert_eq!(p["t"], "pong");
    // Far over the limit (3x): closed with 1008.
    for _ in 0..24 {
        c.send(json!({"t":"game.unwatch","game_id":"g"})).await;
    }
    assert_eq!(c.closed().await, 1008);
}

#[tokio::test]
async fn per_ip_connection_limit() {
    // A window no run outlasts: the limit refills one connection per window/limit, and
    // a starved machine must not see one given back before the 4th attempt.
    let server = Server::start_with(&["--ip-conn-limit", "3", "--ip-window-ms", "600000"]);
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(Client::connect(&server).await);
    }
    let refused = tokio_tungstenite::connect_async(server.ws_url()).await;
    assert!(
        refused.is_err(),
        "the 4th connection in the window is refused"
    );
}

/// An oversized message sent as fragments (20 KiB in five 4 KiB pieces, all in one write)
/// closes with 1009 every time: the close frame is not lost to a reset from unread input.
#[tokio::test]
async fn oversized_fragmented_messages_always_close_with_1009() {
    let server = Server::start();
    for _ in 0..10 {
        let mut c = Client::guest(&server, "big").await;
        let text = format!(r#"{{"t":"x","pad":"{}"}}"#, "a".repeat(20 * 1024));
        c.send_fragments(&text, 5).await;
        assert_eq!(c.closed().await, 1009);
    }
}

/// A raw client that writes an oversized fragmented message followed by more input the server
/// will never read, and only then looks for the answer (as a slow or careless client does):
/// the 1009 close frame must still be there to read, not destroyed by a TCP reset that closing
/// a socket with unread input causes.
#[test]
fn oversized_message_close_survives_unread_input() {
    use std::io::{Read, Write};
    let server = Server::start();
    let mut lost = 0;
    for _ in 0..10 {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        s.set_read_timeout(Some(stoa_tests::TIMEOUT)).ok();
        write!(
            s,
            "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            server.addr
        )
        .expect("write handshake");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut byte).expect("read handshake");
            head.push(byte[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"), "upgrade refused");

        // Five 4 KiB fragments (masked with a zero key), then 64 KiB more of the same.
        let frame = |opcode: u8, fin: bool, payload: &[u8]| {
            let mut f = vec![if fin { 0x80 } else { 0 } | opcode, 0x80 | 126];
            f.extend_from_slice(&(payload.len() as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0]);
            f.extend_from_slice(payload);
            f
        };
        let piece = vec![b'a'; 4096];
        let mut bytes = frame(0x1, false, &piece);
        for i in 1..5 {
            bytes.extend(frame(0x0, i == 4, &piece));
        }
        for _ in 0..16 {
            bytes.extend(frame(0x1, true, &piece));
        }
        // The server may close before it has read it all: a failed write is expected.
        let _ = s.write_all(&bytes);
        std::thread::sleep(std::time::Duration::from_millis(300));

        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        // The first server frame is the close: 0x88, length, then the code.
        if !(got.len() >= 4 && got[0] == 0x88 && u16::from_be_bytes([got[2], got[3]]) == 1009) {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "the 1009 close was lost in {lost} of 10 tries");
}
