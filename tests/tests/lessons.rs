//! The lessons' progress on the server (issue 49): `lesson.done` marks a step of a kind's
//! lesson done for the connection's player (idempotent; unknown kinds and steps are
//! `not_found`, missing fields `bad_request`, and nothing is stored), `lessons.progress`
//! lists every kind's steps done in lesson order, `GET /api/players/{id}/lessons` gives the
//! same to the player's own bearer token; a device linked to another player (a one-time
//! code, or signing in to an account) brings its guest's steps along; over Redis the
//! progress survives a restart.
#![forbid(unsafe_code)]

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::{Client, Server};

/// A request's answer, with the rid it echoed checked and taken out (the rest compared
/// whole by the caller).
async fn answer(c: &mut Client, v: Value) -> Value {
    let mut m = c.request(v).await;
    let rid = m.as_object_mut().expect("an object").remove("rid");
    assert!(rid.is_some_and(|r| r.is_i64()), "rid echoed: {m}");
    m
}

async fn done(c: &mut Client, kind: &str, step: &str) -> Value {
    answer(c, json!({"t":"lesson.done","kind":kind,"step":step})).await
}

async fn progress(c: &mut Client) -> Value {
    answer(c, json!({"t":"lessons.progress"})).await
}

/// The progress answer with these steps done (every kind present).
fn with(unane: &[&str], staku: &[&str], akron: &[&str], akunur: &[&str]) -> Value {
    json!({"t":"lessons.progress","done":{
        "akron":akron,"akunur":akunur,"staku":staku,"unane":unane}})
}

#[tokio::test]
async fn steps_done_are_kept_once_in_lesson_order_and_bad_ones_change_nothing() {
    let server = Server::start();
    let mut c = Client::guest(&server, "learner").await;
    assert_eq!(progress(&mut c).await, with(&[], &[], &[], &[]));

    // Out of order, and twice: kept once, listed in the lesson's order.
    let ok = json!({"t":"ok"});
    assert_eq!(done(&mut c, "unane", "one-group").await, ok);
    assert_eq!(done(&mut c, "unane", "capture").await, ok);
    assert_eq!(done(&mut c, "unane", "one-group").await, ok);
    assert_eq!(done(&mut c, "akunur", "corners").await, ok);
    let expected = with(&["capture", "one-group"], &[], &[], &["corners"]);
    assert_eq!(progress(&mut c).await, expected);

    // Refusals: an unknown kind, a step of another kind's lesson, an unknown step.
    assert_eq!(
        done(&mut c, "chess", "capture").await,
        json!({"t":"error","code":"not_found","message":"no lesson for 'chess'"})
    );
    assert_eq!(
        done(&mut c, "staku", "one-group").await,
        json!({"t":"error","code":"not_found",
               "message":"no step 'one-group' in the lesson of staku"})
    );
    assert_eq!(
        done(&mut c, "unane", "").await,
        json!({"t":"error","code":"not_found","message":"no step '' in the lesson of unane"})
    );
    // Missing or mistyped fields.
    for bad in [
        json!({"t":"lesson.done","kind":"unane"}),
        json!({"t":"lesson.done","step":"capture"}),
        json!({"t":"lesson.done","kind":"unane","step":7}),
    ] {
        let m = answer(&mut c, bad.clone()).await;
        assert_eq!(m["t"], "error", "{bad}: {m}");
        assert_eq!(m["code"], "bad_request", "{bad}: {m}");
    }
    // Nothing of it was stored.
    assert_eq!(progress(&mut c).await, expected);

    // Another player has a progress of its own.
    let mut other = Client::guest(&server, "other").await;
    assert_eq!(progress(&mut other).await, with(&[], &[], &[], &[]));

    // Over HTTP, to the player's own token only.
    let path = format!("/api/players/{}/lessons", c.player_id);
    let (status, body) = server.http_get_as(&path, Some(&c.token));
    assert_eq!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body, json!({"done": expected["done"]}));
    for token in [None, Some(other.token.as_str())] {
        let (status, body) = server.http_get_as(&path, token);
        assert_eq!(status, 404, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json"),
            json!({"error":"not_found"})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_device_brings_its_steps_to_the_player_it_becomes() {
    let server = Server::start();
    let mut ann = Client::guest(&server, "ann").await;
    assert_eq!(done(&mut ann, "staku", "step").await, json!({"t":"ok"}));

    // A browser that learnt as a guest links to ann with a code.
    let mut guest = Client::guest(&server, "guest").await;
    assert_eq!(done(&mut guest, "staku", "far").await, json!({"t":"ok"}));
    assert_eq!(done(&mut guest, "akron", "add").await, json!({"t":"ok"}));
    let code = ann.request(json!({"t":"link.code"})).await;
    let linked = guest
        .request(json!({"t":"link.redeem","code":code["code"],"device":"browser"}))
        .await;
    assert_eq!(linked["t"], "link.token", "{linked}");
    let mut as_ann = Client::with_token(&server, linked["token"].as_str().unwrap()).await;
    assert_eq!(as_ann.player_id, ann.player_id);
    let both = with(&[], &["step", "far"], &["add"], &[]);
    assert_eq!(progress(&mut as_ann).await, both);
    assert_eq!(progress(&mut ann).await, both);

    // Signing in to an account brings a guest's steps along the same way.
    let claimed = ann
        .request(json!({"t":"account.claim","name":"Ann","password":"correct horse"}))
        .await;
    assert_eq!(claimed["t"], "account", "{claimed}");
    let mut laptop = Client::guest(&server, "laptop").await;
    assert_eq!(done(&mut laptop, "unane", "swap").await, json!({"t":"ok"}));
    let signed = laptop
        .request(json!({"t":"account.login","name":"ann","password":"correct horse"}))
        .await;
    assert_eq!(signed["t"], "account.token", "{signed}");
    let mut on_laptop = Client::with_token(&server, signed["token"].as_str().unwrap()).await;
    let all = with(&["swap"], &["step", "far"], &["add"], &[]);
    assert_eq!(progress(&mut on_laptop).await, all);
    // A wrong password brings nothing over.
    let mut stranger = Client::guest(&server, "stranger").await;
    assert_eq!(
        done(&mut stranger, "akunur", "echo").await,
        json!({"t":"ok"})
    );
    let refused = stranger
        .request(json!({"t":"account.login","name":"ann","password":"wrong horse"}))
        .await;
    assert_eq!(refused["code"], "unauthorized", "{refused}");
    assert_eq!(progress(&mut ann).await, all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_survives_a_restart_over_redis() {
    let redis = RedisServer::start();
    let server = redis.start_server("lessons");
    let mut c = Client::guest(&server, "learner").await;
    assert_eq!(done(&mut c, "akron", "chain").await, json!({"t":"ok"}));
    assert_eq!(done(&mut c, "akron", "add").await, json!({"t":"ok"}));
    let token = c.token.clone();
    drop(c);
    drop(server); // kill -9
    let server = redis.start_server("lessons");
    let mut again = Client::with_token(&server, &token).await;
    assert_eq!(
        progress(&mut again).await,
        with(&[], &[], &["add", "chain"], &[])
    );
}
