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
