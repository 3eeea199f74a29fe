//! Waiting rooms do not outlive their hosts, and one player cannot flood the lobby.

use std::time::Duration;

use serde_json::{json, Value};
use stoa_tests::{Client, Server, LOOSE};

fn create() -> Value {
    json!({"t":"room.create","kind":"staku","options":{},"clock":{"kind":"none"},
           "rated":false,"visibility":"public","side":"random"})
}

fn server() -> Server {
    let mut args = LOOSE.to_vec();
    args.extend(["--room-host-grace-ms", "300"]);
    Server::start_with(&args)
}

#[tokio::test]
async fn a_room_closes_when_its_host_stays_away() {
    let server = server();
    let mut host = Client::guest(&server, "host").await;
    let room = host.request(create()).await;
    let code = room["room"]["code"].as_str().expect("code").to_string();
    host.close().await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Gone from the lobby, and nobody can start a game against the absent host.
    let mut other = Client::guest(&server, "other").await;
    let lobby = other.request(json!({"t":"lobby.watch"})).await;
    assert_eq!(lobby["doc"]["rooms"], json!({}), "{lobby}");
    let joined = other.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["code"], "conflict", "{joined}");
}

#[tokio::test]
async fn a_host_back_within_the_grace_period_keeps_the_room() {
    let server = server();
    let host = Client::guest(&server, "host").await;
    let token = host.token.clone();
    let mut host = host;
    let room = host.request(create()).await;
    let code = room["room"]["code"].as_str().expect("code").to_string();
    host.close().await;
    let mut back = Client::with_token(&server, &token).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let mut other = Client::guest(&server, "other").await;
    let joined = other.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = back.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["kind"], "staku");
}

#[tokio::test]
async fn one_player_hosts_a_bounded_number_of_rooms() {
    let server = server();
    let mut host = Client::guest(&server, "host").await;
    let mut codes = Vec::new();
    for _ in 0..5 {
        let r = host.request(create()).await;
        assert_eq!(r["t"], "room", "{r}");
        codes.push(r["room"]["code"].as_str().unwrap().to_string());
    }
    let refused = host.request(create()).await;
    assert_eq!(refused["code"], "conflict", "{refused}");
    // Closing one makes room for another.
    let ok = host
        .request(json!({"t":"room.leave","code":codes[0]}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let again = host.request(create()).await;
    assert_eq!(again["t"], "room", "{again}");
}

/// Issue 47, item 9: a room code is matched forgivingly (case, `-`, I/L/O for 1/0) but an
/// error echoes it as it was typed, not its normalised form ("no room 'hello'", never
/// "no room 'HELL0'"), for every request that takes a code; nothing changes.
#[tokio::test]
async fn codes_are_echoed_as_typed_in_errors() {
    let server = server();
    let mut alice = Client::guest(&server, "alice").await;
    for (request, typed) in [
        (json!({"t":"room.join","code":"hello"}), "hello"),
        (json!({"t":"room.join","code":" lol-o "}), "lol-o"),
        (json!({"t":"room.leave","code":"hello"}), "hello"),
        (json!({"t":"room.watch","code":"hello"}), "hello"),
        (json!({"t":"room.say","code":"hello","text":"hi"}), "hello"),
    ] {
        let answer = alice.request(request.clone()).await;
        assert_eq!(answer["t"], "error", "{request} → {answer}");
        assert_eq!(answer["code"], "not_found", "{request} → {answer}");
        assert_eq!(
            answer["message"],
            format!("no room '{typed}'"),
            "{request} → {answer}"
        );
    }
    // A code far too long is cut in the message, control characters shown as `?`.
    let long = format!("x\u{1b}{}", "y".repeat(100));
    let answer = alice.request(json!({"t":"room.join","code":long})).await;
    assert_eq!(
        answer["message"],
        format!("no room 'x?{}…'", "y".repeat(30)),
        "{answer}"
    );

    // Matched forgivingly still: a room's code typed in lower case with a dash joins it,
    // and watching a waiting room by such a code names it as typed.
    let mut host = Client::guest(&server, "host").await;
    let room = host.request(create()).await;
    let code = room["room"]["code"].as_str().expect("code").to_string();
    let sloppy = format!("{}-{}", &code[..4], &code[4..]).to_lowercase();
    let watched = alice
        .request(json!({"t":"game.watch","game_id":sloppy}))
        .await;
    assert_eq!(watched["code"], "conflict", "{watched}");
    assert_eq!(
        watched["message"],
        format!("room '{sloppy}' is still waiting for its second player: its game has not started"),
        "{watched}"
    );
    let joined = alice.request(json!({"t":"room.join","code":sloppy})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    assert_eq!(joined["room"]["code"], code, "{joined}");
}
