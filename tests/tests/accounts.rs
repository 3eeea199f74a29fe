//! Accounts (issue 47), over real websockets and the real `stoa` binary: a player claims a
//! name and a password; any device signs in with them (a new device token); wrong names
//! and wrong passwords get one answer in about the same time; attempts are limited per name
//! across the nodes of a cluster; the password changes and signs out; the password leaves
//! no trace but its argon2id hash (logs, Redis, frames); the terminal never throws an
//! identity away (`stoa link` refuses without `--replace`, `stoa identities` switches back,
//! a server that forgot us is said so).
#![forbid(unsafe_code)]

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::redis::RedisServer;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{Client, Server};

const PASSWORD: &str = "correct horse battery";

/// Says hello (with a token, a login, or as a new guest named `name`).
async fn hello(server: &Server, msg: Value) -> (Client, Value) {
    let mut c = Client::connect(server).await;
    let mut msg = msg;
    msg["t"] = json!("hello");
    msg["protocol"] = json!(1);
    let w = c.request(msg).await;
    if w["t"] == "welcome" {
        c.player_id = w["player"]["id"].as_str().unwrap().to_string();
        c.token = w["token"].as_str().unwrap().to_string();
        c.welcome = w.clone();
    }
    (c, w)
}

fn assert_error(m: &Value, code: &str, message: &str) {
    assert_eq!(m["t"], "error", "{m}");
    assert_eq!(m["code"], code, "{m}");
    assert_eq!(m["message"], message, "{m}");
}

async fn claim(c: &mut Client, name: &str, password: &str) -> Value {
    c.request(json!({"t":"account.claim","name":name,"password":password}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_account_signs_in_from_another_device() {
    let server = Server::start();
    let (mut bob, w) = hello(&server, json!({"name":"bob","device":"laptop"})).await;
    assert!(w["player"].get("account").is_none(), "a guest: {w}");
    let asked = bob.request(json!({"t":"account"})).await;
    assert_eq!(asked, json!({"t":"account","rid":asked["rid"],"name":null}));

    // Refused claims change nothing.
    for (name, password, message) in [
        (
            "b",
            PASSWORD,
            "an account name is 2-24 letters, digits, '-' or '_'",
        ),
        (
            "has space",
            PASSWORD,
            "an account name is 2-24 letters, digits, '-' or '_'",
        ),
        ("Bobby", "short", "a password is 8-256 characters"),
    ] {
        assert_error(
            &claim(&mut bob, name, password).await,
            "bad_request",
            message,
        );
    }
    assert_eq!(
        bob.request(json!({"t":"account"})).await["name"],
        Value::Null
    );

    let claimed = claim(&mut bob, "Bobby", PASSWORD).await;
    assert_eq!(claimed["t"], "account", "{claimed}");
    assert_eq!(claimed["name"], "Bobby");
    assert_error(
        &claim(&mut bob, "Other", PASSWORD).await,
        "conflict",
        "you have claimed the account 'Bobby' already",
    );
    // The name is unique ignoring case and Unicode forms.
    let (mut ann, _) = hello(&server, json!({"name":"ann"})).await;
    assert_error(
        &claim(&mut ann, "ＢＯＢＢＹ", PASSWORD).await,
        "conflict",
        "the account name 'BOBBY' is taken",
    );
    // Nobody else takes the claimed name as a display name.
    let (_, refused) = hello(&server, json!({"name":"bobby"})).await;
    assert_error(
        &refused,
        "conflict",
        "the name 'bobby' belongs to a claimed account: sign in, or choose another name",
    );
    // The claimed player keeps its name.
    let (_, refused) = hello(&server, json!({"token":bob.token,"name":"Robert"})).await;
    assert_error(
        &refused,
        "conflict",
        "a claimed account keeps its name 'Bobby'",
    );
    let (_, w) = hello(&server, json!({"token":bob.token})).await;
    assert_eq!(w["player"]["name"], "Bobby");
    assert_eq!(w["player"]["account"], "Bobby");

    // A new device signs in by name and password in its hello: no guest on the way.
    let (phone, w) = hello(
        &server,
        json!({"login":{"name":"bobby","password":PASSWORD},"device":"phone"}),
    )
    .await;
    assert_eq!(w["t"], "welcome", "{w}");
    assert_eq!(phone.player_id, bob.player_id);
    assert_ne!(phone.token, bob.token);
    // Or from a connection it already has: a token to say hello with.
    let got = ann
        .request(json!({"t":"account.login","name":"Bobby","password":PASSWORD,"device":"tablet"}))
        .await;
    assert_eq!(got["t"], "account.token", "{got}");
    assert_eq!(got["player_id"], bob.player_id.as_str());
    assert_eq!(got["name"], "Bobby");
    let (tablet, _) = hello(&server, json!({"token":got["token"]})).await;
    assert_eq!(tablet.player_id, bob.player_id);
    let list = bob.request(json!({"t":"devices"})).await;
    let labels: Vec<&str> = list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["laptop", "phone", "tablet"], "{list}");

    // Wrong password and unknown name: one answer.
    let (_, wrong) = hello(
        &server,
        json!({"login":{"name":"Bobby","password":"not the one"}}),
    )
    .await;
    assert_error(&wrong, "unauthorized", "wrong name or password");
    let (_, wrong) = hello(
        &server,
        json!({"login":{"name":"nobody","password":PASSWORD}}),
    )
    .await;
    assert_error(&wrong, "unauthorized", "wrong name or password");
    let wrong = ann
        .request(json!({"t":"account.login","name":"nobody","password":PASSWORD}))
        .await;
    assert_error(&wrong, "unauthorized", "wrong name or password");
    let (_, both) = hello(
        &server,
        json!({"token":bob.token,"login":{"name":"Bobby","password":PASSWORD}}),
    )
    .await;
    assert_error(
        &both,
        "bad_request",
        "say hello with a token or a login, not both",
    );

    // No frame any of these clients received holds the password.
    for c in [&bob, &ann, &phone, &tablet] {
        let seen: Vec<String> = c.pending.iter().map(Value::to_string).collect();
        assert!(!seen.iter().any(|f| f.contains(PASSWORD)), "{seen:?}");
    }
    for answer in [&claimed, &got, &w, &list] {
        assert!(!answer.to_string().contains(PASSWORD), "{answer}");
    }

    // Names that could pass for others are refused, and nothing changes.
    for name in ["An\u{202E}n", "An\u{200B}n", "\u{FEFF}Ann", "An\u{2066}n"] {
        let (_, refused) = hello(&server, json!({"name":name})).await;
        assert_eq!(refused["code"], "bad_request", "{name:?}: {refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("invisible"),
            "{refused}"
        );
        let (_, renamed) = hello(&server, json!({"token":ann.token,"name":name})).await;
        assert_eq!(renamed["code"], "bad_request", "{renamed}");
    }
    let (_, w) = hello(&server, json!({"token":ann.token})).await;
    assert_eq!(w["player"]["name"], "ann");

    // The player page says the account is claimed.
    let (status, body) = server.http_get(&format!("/api/players/{}", bob.player_id));
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["claimed"], true, "{page}");
    let (_, body) = server.http_get(&format!("/api/players/{}", ann.player_id));
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["claimed"],
        false
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_password_changes_and_a_device_signs_out() {
    let server = Server::start();
    let (mut bob, _) = hello(&server, json!({"name":"bob","device":"laptop"})).await;
    assert_eq!(claim(&mut bob, "bob", PASSWORD).await["t"], "account");
    let (mut phone, w) = hello(&server, json!({"login":{"name":"bob","password":PASSWORD}})).await;
    assert_eq!(w["t"], "welcome", "{w}");

    let wrong = bob
        .request(json!({"t":"account.password","current":"not it at all","new":"a new secret"}))
        .await;
    assert_error(&wrong, "unauthorized", "wrong password");
    let short = bob
        .request(json!({"t":"account.password","current":PASSWORD,"new":"short"}))
        .await;
    assert_error(&short, "bad_request", "a password is 8-256 characters");
    let ok = bob
        .request(json!({"t":"account.password","current":PASSWORD,"new":"a new secret"}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    // No device was signed out; the old password no longer signs in, the new one does.
    assert_eq!(phone.request(json!({"t":"ping"})).await["t"], "pong");
    let (_, old) = hello(&server, json!({"login":{"name":"bob","password":PASSWORD}})).await;
    assert_error(&old, "unauthorized", "wrong name or password");
    let (_, new) = hello(
        &server,
        json!({"login":{"name":"bob","password":"a new secret"}}),
    )
    .await;
    assert_eq!(new["player"]["id"], bob.player_id.as_str());
    // Asked to, a change signs out every other device at once.
    let ok = bob
        .request(json!({"t":"account.password","current":"a new secret","new":"third secret","revoke_others":true}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(phone.closed().await, 4401);
    let (_, refused) = hello(&server, json!({"token":phone.token})).await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");
    assert_eq!(bob.request(json!({"t":"ping"})).await["t"], "pong");

    // Signing out: `ok`, then the connection ends and the token is dead.
    let ok = bob.request(json!({"t":"account.logout"})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(bob.closed().await, 4401);
    let (_, refused) = hello(&server, json!({"token":bob.token})).await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");
    // The account is still there: signing in gives a new device.
    let (_, back) = hello(
        &server,
        json!({"login":{"name":"BOB","password":"third secret"}}),
    )
    .await;
    assert_eq!(back["player"]["id"], bob.player_id.as_str());
}

/// Sign-in attempts are counted per name over the whole cluster, and accounts live in Redis:
/// they survive a Redis restart; the password is nowhere but as its argon2id hash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempts_are_limited_across_nodes_and_accounts_outlive_a_redis_restart() {
    let mut redis = RedisServer::start_on_disk();
    let dir = TempDir::new("accounts-logs");
    let node = |id: &str| {
        let mut args = redis.server_args("acct");
        args.extend(["--cluster", "--node-id", id].map(String::from));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Server::start_logging_at(&refs, &dir.0.join(format!("{id}.log")), "debug")
    };
    let (a, b) = (node("na"), node("nb"));
    let (mut bob, _) = hello(&a, json!({"name":"bob"})).await;
    assert_eq!(claim(&mut bob, "Bob", PASSWORD).await["name"], "Bob");
    // Node B signs in to an account claimed on node A.
    let (on_b, w) = hello(&b, json!({"login":{"name":"bob","password":PASSWORD}})).await;
    assert_eq!(w["t"], "welcome", "{w}");
    assert_eq!(on_b.player_id, bob.player_id);
    // Four more attempts (three wrong on A, one on B) make five for this name...
    for node in [&a, &a, &a] {
        let (_, wrong) = hello(
            node,
            json!({"login":{"name":"bob","password":"guess guess"}}),
        )
        .await;
        assert_error(&wrong, "unauthorized", "wrong name or password");
    }
    let (_, wrong) = hello(&b, json!({"login":{"name":"BOB","password":"guess guess"}})).await;
    assert_error(&wrong, "unauthorized", "wrong name or password");
    // ...and the sixth, even with the right password, on either node, is refused.
    for node in [&a, &b] {
        let (_, limited) = hello(node, json!({"login":{"name":"Bob","password":PASSWORD}})).await;
        assert_error(
            &limited,
            "rate_limited",
            "too many sign-in attempts: wait a minute and try again",
        );
    }
    // Signing out on node B ends that device's connections on node A too.
    let (mut phone_a, w) = hello(&a, json!({"token":on_b.token})).await;
    assert_eq!(w["t"], "welcome", "{w}");
    let mut on_b = on_b;
    let ok = on_b.request(json!({"t":"account.logout"})).await;
    assert_eq!(ok["t"], "ok", "{ok}");
    assert_eq!(phone_a.closed().await, 4401);
    let (_, refused) = hello(&a, json!({"token":on_b.token})).await;
    assert_error(&refused, "unauthorized", "unknown or revoked token");

    // Other names are not held back by it.
    let (mut cy, _) = hello(&b, json!({"name":"cy"})).await;
    assert_eq!(claim(&mut cy, "cy", PASSWORD).await["name"], "cy");
    let (_, w) = hello(&a, json!({"login":{"name":"cy","password":PASSWORD}})).await;
    assert_eq!(w["t"], "welcome", "{w}");

    // Only the hash is stored.
    let stored = everything_in(&redis);
    assert!(
        stored.contains("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{stored}"
    );
    assert!(
        !stored.contains(PASSWORD),
        "the password is stored in clear:\n{stored}"
    );
    assert!(!stored.contains("guess guess"));

    // Redis restarts: the account still signs in (after the minute's quota, with cy).
    redis.restart();
    let mut back = None;
    for _ in 0..50 {
        let (_, w) = hello(&a, json!({"login":{"name":"cy","password":PASSWORD}})).await;
        if w["t"] == "welcome" {
            back = Some(w);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let back = back.expect("cy signs in after the Redis restart");
    assert_eq!(back["player"]["account"], "cy");

    // No log line, at debug level, holds a password.
    drop((a, b));
    for id in ["na", "nb"] {
        let log = std::fs::read_to_string(dir.0.join(format!("{id}.log"))).unwrap();
        assert!(log.contains("signed in"), "the log is the debug one: {id}");
        assert!(!log.contains(PASSWORD), "{id}'s log holds the password");
        assert!(
            !log.contains("guess guess"),
            "{id}'s log holds a tried password"
        );
    }
}

/// Every key and value in the Redis, as text.
fn everything_in(redis: &RedisServer) -> String {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    let mut stored = String::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(&key).query(&mut con).unwrap();
        let values: Vec<String> = match kind.as_str() {
            "string" => vec![redis::cmd("GET").arg(&key).query(&mut con).unwrap()],
            "hash" => redis::cmd("HGETALL").arg(&key).query(&mut con).unwrap(),
            "list" => redis::cmd("LRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query(&mut con)
                .unwrap(),
            "set" => redis::cmd("SMEMBERS").arg(&key).query(&mut con).unwrap(),
            "zset" => redis::cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query(&mut con)
                .unwrap(),
            _ => Vec::new(),
        };
        stored.push_str(&format!("{key} {}\n", values.join(" ")));
    }
    stored
}

/// How long a refused sign-in took, from the request to its answer.
async fn time_refusal(c: &mut Client, name: &str, password: &str) -> Duration {
    let started = Instant::now();
    let m = c
        .request(json!({"t":"hello","protocol":1,"login":{"name":name,"password":password}}))
        .await;
    assert_error(&m, "unauthorized", "wrong name or password");
    started.elapsed()
}

/// A wrong name and a wrong password take the same order of time (no user enumeration).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_names_and_wrong_passwords_take_the_same_time() {
    let server = Server::start_with(&["--login-per-name", "1000", "--login-per-ip", "1000"]);
    let (mut bob, _) = hello(&server, json!({"name":"bob"})).await;
    assert_eq!(claim(&mut bob, "bob", PASSWORD).await["t"], "account");
    let mut c = Client::connect(&server).await;
    let mut names = Vec::new();
    let mut passwords = Vec::new();
    for _ in 0..7 {
        names.push(time_refusal(&mut c, "nobody-here", PASSWORD).await);
        passwords.push(time_refusal(&mut c, "bob", "wrong password").await);
    }
    names.sort();
    passwords.sort();
    let (n, p) = (names[3].as_secs_f64(), passwords[3].as_secs_f64());
    assert!(
        n > p / 3.0 && n < p * 3.0,
        "median wrong name {n:.4} s vs wrong password {p:.4} s"
    );
    // Both include the hashing work (argon2id with 19 MiB takes milliseconds, not micro).
    assert!(n > 0.002 && p > 0.002, "{n} {p}");
}

/// Runs `stoa` as the player whose config directory is `home`, with `stdin` piped in.
fn stoa(
    home: &std::path::Path,
    server: &Server,
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    stoa_tests::build_binaries();
    let mut child = Command::new(stoa_tests::binary("stoa"))
        .args(args)
        .args(["--server", &server.ws_url(), "--plain"])
        .env("STOA_CONFIG_DIR", home)
        .env_remove("STOA_SERVER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run stoa");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), stdin.as_bytes())
        .expect("write stdin");
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("stoa output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn identity(home: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.join("identity.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_claims_signs_in_and_never_throws_an_identity_away() {
    let server = Server::start();
    let bob_home = TempDir::new("acct-bob");
    let alice_home = TempDir::new("acct-alice");
    // Bob claims his account from the terminal (password typed twice).
    let (code, out, err) = stoa(
        &bob_home.0,
        &server,
        &["--name", "bob", "account", "claim", "Bob"],
        &format!("{PASSWORD}\n{PASSWORD}\n"),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("claimed: this player ("), "{out}");
    assert!(
        out.contains("sign in from any device with: stoa login Bob"),
        "{out}"
    );
    let (_, out, _) = stoa(&bob_home.0, &server, &["account"], "");
    assert!(out.contains("Bob (p"), "{out}");
    assert!(out.contains("claimed account 'Bob'"), "{out}");
    let bob_id = identity(&bob_home.0)["deployments"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!std::fs::read_to_string(bob_home.0.join("identity.json"))
        .unwrap()
        .contains(PASSWORD));

    // The name asked for when not given, even with a display name given (`--name`).
    let dan = TempDir::new("acct-dan");
    let (code, out, err) = stoa(
        &dan.0,
        &server,
        &["--name", "dan", "account", "claim"],
        &format!("Dan_2\n{PASSWORD}\n{PASSWORD}\n"),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("account name (2-24 letters, digits, - or _): "),
        "{err}"
    );
    assert!(out.contains("stoa login Dan_2"), "{out}");

    // Alice's terminal: she is a player here already.
    let (code, _, err) = stoa(&alice_home.0, &server, &["--name", "alice", "account"], "");
    assert_eq!(code, 0, "{err}");
    // A mismatched repeat changes nothing.
    let (code, _, err) = stoa(
        &alice_home.0,
        &server,
        &["account", "claim", "Alice"],
        "password one\npassword two\n",
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("the two passwords differ; nothing changed"),
        "{err}"
    );

    // Bob's code, typed on Alice's terminal: refused without --replace, the code unspent.
    let (_, out, _) = stoa(&bob_home.0, &server, &["link"], "");
    let link = out
        .lines()
        .find_map(|l| l.strip_prefix("link code: "))
        .expect("a link code")
        .to_string();
    let (code, _, err) = stoa(&alice_home.0, &server, &["link", &link], "");
    assert_eq!(code, 1);
    assert!(err.contains("this terminal already is alice (p"), "{err}");
    assert!(err.contains("stoa account claim"), "{err}");
    assert!(
        err.contains(&format!("stoa link {link} --replace")),
        "{err}"
    );
    let alice_token = identity(&alice_home.0)["deployments"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["token"]
        .clone();
    // With --replace: Alice's token is kept as a previous identity.
    let (code, out, err) = stoa(&alice_home.0, &server, &["link", &link, "--replace"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("linked: this terminal is now Bob"), "{out}");
    assert!(
        out.contains("alice is kept as a previous identity: stoa identities --use p"),
        "{out}"
    );
    let (_, out, _) = stoa(&alice_home.0, &server, &["identities"], "");
    assert!(out.contains(&format!("* Bob ({bob_id})  current")), "{out}");
    assert!(out.contains("  alice (p"), "{out}");
    let (code, out, _) = stoa(
        &alice_home.0,
        &server,
        &["identities", "--use", "alice"],
        "",
    );
    assert_eq!(code, 0);
    assert!(out.contains("this terminal is alice (p"), "{out}");
    let entry = identity(&alice_home.0)["deployments"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!(entry["token"], alice_token);
    let (_, out, _) = stoa(&alice_home.0, &server, &["account"], "");
    assert!(out.contains("alice (p"), "{out}");
    assert!(out.contains("a guest, not claimed"), "{out}");

    // A third terminal signs in as Bob: wrong password first, then right.
    let third = TempDir::new("acct-third");
    let (code, out, err) = stoa(&third.0, &server, &["login", "bob"], "not my password\n");
    assert_eq!(code, 1);
    assert!(out.contains("wrong name or password"), "{out}{err}");
    let (code, out, err) = stoa(&third.0, &server, &["login"], &format!("BOB\n{PASSWORD}\n"));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.lines().next().unwrap(),
        format!("signed in: this terminal is Bob ({bob_id})")
    );
    // Changing the password from there, then signing out.
    let (code, out, err) = stoa(
        &third.0,
        &server,
        &["account", "password"],
        &format!("{PASSWORD}\nan even better one\nan even better one\n"),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("password changed"), "{out}");
    let (code, out, err) = stoa(&third.0, &server, &["account", "logout"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("signed out: Bob is no longer on this terminal"),
        "{out}"
    );
    assert!(!std::fs::read_to_string(third.0.join("identity.json"))
        .unwrap()
        .contains(&bob_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forgot_us_says_so_and_the_old_token_is_kept() {
    let mut server = Server::start();
    let home = TempDir::new("acct-forgot");
    let (code, out, _) = stoa(&home.0, &server, &["--name", "bob", "account"], "");
    assert_eq!(code, 0);
    assert!(out.contains("bob (p"), "{out}");
    let before = identity(&home.0);
    let (old_deployment, old) = before["deployments"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .map(|(d, e)| (d.clone(), e.clone()))
        .unwrap();
    // The server restarts in memory on the same address: a new deployment that knows nobody.
    let addr = server.addr;
    server.kill9();
    let mut again = Command::new(stoa_tests::binary("stoa-server"))
        .args(["--listen", &addr.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the server again");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(again.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.starts_with("stoa-server listening on"), "{line}");
    let (code, out, err) = stoa(&home.0, &server, &["account"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("note: this server does not know you any more: it forgot its players when it restarted without storage (you were bob there); you are now guest-"),
        "{err}"
    );
    assert!(
        err.contains("your old identity is kept for a server that knows it (stoa identities)"),
        "{err}"
    );
    let after = identity(&home.0);
    // The old deployment's token is kept for a server that knows it.
    assert_eq!(after["deployments"][&old_deployment]["token"], old["token"]);
    assert_eq!(
        after["deployments"].as_object().unwrap().len(),
        2,
        "{after}"
    );
    let _ = again.kill();
    let _ = again.wait();
}
