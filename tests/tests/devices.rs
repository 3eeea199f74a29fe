//! Identity across devices (issue 28), over real websockets: a one-time code made on one
//! connection (`link.code`) and redeemed on another (`link.redeem`) gives the second device
//! a token of the same player; codes work once, expire, are rate-limited per connection and
//! work across the nodes of a cluster; `devices` lists the player's tokens and
//! `device.revoke` makes one fail `hello` and ends its open connections at once, on every
//! node.
#![forbid(unsafe_code)]

use std::time::Duration;

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::{Client, Server};

/// Says hello with a device label (and a name for a new guest).
async fn hello(server: &Server, token: Option<&str>, name: &str, device: &str) -> Client {
    let mut c = Client::connect(server).await;
    let mut msg = json!({"t":"hello","protocol":1,"name":name,"device":device});
    if let Some(t) = token {
        msg["token"] = json!(t);
    }
    let w = c.request(msg).await;
    assert_eq!(w["t"], "welcome", "{w}");
    c.player_id = w["player"]["id"].as_str().unwrap().to_string();
    c.token = w["token"].as_str().unwrap().to_string();
    c.welcome = w;
    c
}

async fn code_of(c: &mut Client) -> String {
    let m = c.request(json!({"t":"link.code"})).await;
    assert_eq!(m["t"], "link.code", "{m}");
    let code = m["code"].as_str().unwrap().to_string();
    assert_eq!(code.len(), 8, "{code}");
    // Crockford base32: nothing to misread (no I, L, O, U).
    assert!(
        code.chars()
            .all(|ch| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(ch)),
        "{code}"
    );
    let left = m["expires_ms"].as_u64().unwrap() as i64 - now_ms() as i64;
    assert!((250_000..=300_500).contains(&left), "{m}");
    code
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn devices(c: &mut Client) -> Vec<Value> {
    let m = c.request(json!({"t":"devices"})).await;
    assert_eq!(m["t"], "devices", "{m}");
    m["devices"].as_array().unwrap().clone()
}

fn assert_error(m: &Value, code: &str, message: &str) {
    assert_eq!(m["t"], "error", "{m}");
    assert_eq!(m["code"], code, "{m}");
    assert_eq!(m["message"], message, "{m}");
}

/// Asserts the connection was ended as a revoked device: told why, then closed with 4401.
async fn ended_as_revoked(c: &mut Client) {
    assert_eq!(c.closed().await, 4401);
    let told = c
        .pending
        .iter()
        .find(|m| m["t"] == "error" && m["rid"].is_null())
        .unwrap_or_else(|| panic!("no revocation notice in {:?}", c.pending));
    assert_error(
        told,
        "unauthorized",
        "this device was revoked: its token no longer works",
    );
}

const UNKNOWN_CODE: &str = "unknown, expired or used link code";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_links_a_second_device_to_the_same_player_once() {
    let server = Server::start();
    let mut ann = hello(&server, None, "ann", "browser (Chrome)").await;
    let code = code_of(&mut ann).await;
    // Devices are listed oldest first: let the second be linked a few ms later.
    tokio::time::sleep(Duration::from_millis(20)).await;

    // Another device (a guest of its own) redeems it, typed loosely: lower case, a dash.
    let mut other = hello(&server, None, "guest", "terminal").await;
    assert_ne!(other.player_id, ann.player_id);
    let typed = format!("{}-{}", &code[..4], &code[4..]).to_lowercase();
    let got = other
        .request(json!({"t":"link.redeem","code":typed,"device":"terminal"}))
        .await;
    assert_eq!(got["t"], "link.token", "{got}");
    assert_eq!(got["player_id"], ann.player_id.as_str());
    assert_eq!(got["name"], "ann");
    let token = got["token"].as_str().unwrap().to_string();
    assert_ne!(token, ann.token);

    // Said hello with, the new token is ann, on a new connection.
    let mut linked = hello(&server, Some(&token), "ann", "terminal").await;
    assert_eq!(linked.player_id, ann.player_id);
    assert_eq!(linked.welcome["player"]["name"], "ann");
    // And ann's first token still is.
    let again = hello(&server, Some(&ann.token), "ann", "browser (Chrome)").await;
    assert_eq!(again.player_id, ann.player_id);

    // The code worked once: a second redemption changes nothing.
    let mut third = hello(&server, None, "cy", "terminal").await;
    let used = third.request(json!({"t":"link.redeem","code":code})).await;
    assert_error(&used, "not_found", UNKNOWN_CODE);
    let garbage = third
        .request(json!({"t":"link.redeem","code":"no:such code"}))
        .await;
    assert_error(&garbage, "not_found", UNKNOWN_CODE);

    // Both devices are listed, oldest first, each seeing itself as the current one.
    let from_ann = devices(&mut ann).await;
    assert_eq!(from_ann.len(), 2, "{from_ann:?}");
    assert_eq!(from_ann[0]["label"], "browser (Chrome)");
    assert_eq!(from_ann[0]["current"], true);
    assert_eq!(from_ann[1]["label"], "terminal");
    assert_eq!(from_ann[1]["current"], false);
    for d in &from_ann {
        assert!(d["last_seen_ms"].as_u64().unwrap() >= d["created_ms"].as_u64().unwrap());
    }
    let from_linked = devices(&mut linked).await;
    assert_eq!(from_linked[0]["id"], from_ann[0]["id"]);
    assert_eq!(from_linked[0]["current"], false);
    assert_eq!(from_linked[1]["current"], true);
    // Cy's list is cy's own.
    let from_cy = devices(&mut third).await;
    assert_eq!(from_cy.len(), 1);
    assert_eq!(from_cy[0]["label"], "terminal");

    // Bad requests: a label too long, a missing code; nothing changes.
    let long = third
        .request(json!({"t":"link.redeem","code":"ABCDEFGH","device":"x".repeat(41)}))
        .await;
    assert_error(
        &long,
        "bad_request",
        "device must be 1-40 printable characters",
    );
    let missing = third.request(json!({"t":"link.redeem"})).await;
    assert_eq!(missing["code"], "bad_request", "{missing}");
    assert_eq!(devices(&mut ann).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_device_can_no_longer_say_hello() {
    let server = Server::start();
    let mut ann = hello(&server, None, "ann", "browser (Firefox)").await;
    let code = code_of(&mut ann).await;
    let mut other = hello(&server, None, "guest", "terminal").await;
    let got = other
        .request(json!({"t":"link.redeem","code":code,"device":"terminal"}))
        .await;
    let token = got["token"].as_str().unwrap().to_string();
    let mut linked = hello(&server, Some(&token), "ann", "terminal").await;
    let list = devices(&mut ann).await;
    let linked_id = list
        .iter()
        .find(|d| d["current"] == false)
        .expect("the linked device")["id"]
        .as_str()
        .unwrap()
        .to_string();

    // Unknown ids change nothing.
    let none = ann
        .request(json!({"t":"device.revoke","id":"dnosuch"}))
        .await;
    assert_error(&none, "not_found", "no device dnosuch of yours");
    // Another player cannot revoke ann's device.
    let theirs = other
        .request(json!({"t":"device.revoke","id":linked_id}))
        .await;
    assert_eq!(theirs["code"], "not_found", "{theirs}");

    // The linked device is open twice (two tabs), and ann's first device once more.
    let mut linked_too = hello(&server, Some(&token), "ann", "terminal").await;
    let mut ann_too = hello(&server, Some(&ann.token), "ann", "browser (Firefox)").await;
    let ok = ann
        .request(json!({"t":"device.revoke","id":linked_id}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    // Both connections of the revoked device are told and closed at once; a request sent
    // after the revocation is never served.
    linked.send(json!({"t":"devices","rid":99})).await;
    ended_as_revoked(&mut linked).await;
    assert!(
        !linked.pending.iter().any(|m| m["rid"] == 99),
        "{:?}",
        linked.pending
    );
    ended_as_revoked(&mut linked_too).await;
    // The player's other device is untouched.
    assert_eq!(devices(&mut ann_too).await.len(), 1);
    let mut c = Client::connect(&server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":token}))
        .await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");
    let list = devices(&mut ann).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["current"], true);

    // Revoking the current device is allowed: answered, then logged out (closed), with
    // every other connection of that device.
    let first_id = list[0]["id"].clone();
    let ok = ann
        .request(json!({"t":"device.revoke","id":first_id}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    ended_as_revoked(&mut ann).await;
    ended_as_revoked(&mut ann_too).await;
    let mut c = Client::connect(&server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":ann.token}))
        .await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");
    // The guest that redeemed the code is another player: still connected.
    assert_eq!(devices(&mut other).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codes_expire_and_guessing_is_rate_limited() {
    let server = Server::start_with(&["--link-code-ttl-ms", "400"]);
    let mut ann = hello(&server, None, "ann", "terminal").await;
    let m = ann.request(json!({"t":"link.code"})).await;
    let expired = m["code"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(900)).await;
    let mut other = hello(&server, None, "guest", "terminal").await;
    let late = other
        .request(json!({"t":"link.redeem","code":expired}))
        .await;
    assert_error(&late, "not_found", UNKNOWN_CODE);

    // Five tries a minute per connection (the expired one was the first); the sixth is
    // refused without looking, so even a live code is not taken by it.
    for guess in ["AAAAAAAA", "BBBBBBBB", "CCCCCCCC", "DDDDDDDD"] {
        let m = other.request(json!({"t":"link.redeem","code":guess})).await;
        assert_error(&m, "not_found", UNKNOWN_CODE);
    }
    let m = ann.request(json!({"t":"link.code"})).await;
    let live = m["code"].as_str().unwrap().to_string();
    let limited = other.request(json!({"t":"link.redeem","code":live})).await;
    assert_error(
        &limited,
        "rate_limited",
        "too many link codes tried: at most 5 a minute",
    );
    // The live code was not spent: another connection redeems it.
    let mut third = hello(&server, None, "cy", "terminal").await;
    let got = third.request(json!({"t":"link.redeem","code":live})).await;
    assert_eq!(got["t"], "link.token", "{got}");
    assert_eq!(got["player_id"], ann.player_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_made_on_one_node_is_redeemed_on_another() {
    let redis = RedisServer::start();
    let node = |id: &str| {
        let mut args = redis.server_args("dev");
        args.extend(["--cluster", "--node-id", id].map(String::from));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start_with(&refs)
    };
    let (a, b) = (node("na"), node("nb"));
    let mut ann = hello(&a, None, "ann", "browser (Chrome)").await;
    let code = code_of(&mut ann).await;
    let mut other = hello(&b, None, "guest", "terminal").await;
    let got = other
        .request(json!({"t":"link.redeem","code":code,"device":"terminal"}))
        .await;
    assert_eq!(got["t"], "link.token", "{got}");
    assert_eq!(got["player_id"], ann.player_id.as_str());
    let token = got["token"].as_str().unwrap().to_string();
    // The new token is ann on either node.
    for node in [&a, &b] {
        let c = hello(node, Some(&token), "ann", "terminal").await;
        assert_eq!(c.player_id, ann.player_id);
    }
    // Used on B, the code is used on A too.
    let mut on_a = hello(&a, None, "cy", "terminal").await;
    let again = on_a.request(json!({"t":"link.redeem","code":code})).await;
    assert_error(&again, "not_found", UNKNOWN_CODE);
    // Node A lists both devices; a revoke on A stops the token on B, and ends its
    // connections on both nodes at once.
    let mut linked_on_a = hello(&a, Some(&token), "ann", "terminal").await;
    let mut linked_on_b = hello(&b, Some(&token), "ann", "terminal").await;
    let mut ann_on_b = hello(&b, Some(&ann.token), "ann", "browser (Chrome)").await;
    let list = devices(&mut ann).await;
    assert_eq!(list.len(), 2, "{list:?}");
    let linked = list.iter().find(|d| d["current"] == false).expect("linked");
    let ok = ann
        .request(json!({"t":"device.revoke","id":linked["id"]}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    ended_as_revoked(&mut linked_on_b).await;
    ended_as_revoked(&mut linked_on_a).await;
    // Ann's first device, on node B, stays.
    assert_eq!(devices(&mut ann_on_b).await.len(), 1);
    let mut c = Client::connect(&b).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":token}))
        .await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");
}
