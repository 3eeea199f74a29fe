//! One deployment, one identity, whichever address a player comes through: `welcome` names
//! the deployment (an id kept in Redis, the same on every node and across restarts), the
//! terminal client keeps its token under that id and falls back on the other addresses it
//! was given, and `deploy/run-local.sh` puts a load balancer (Caddy) in front of its nodes,
//! so a player whose node is killed plays on through the one address.
//!
//! Real processes throughout: `redis-server`, `stoa-server` nodes, `caddy` (started by the
//! script) and `stoa` in plain mode.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_tests::clients::{Clients, HOST_SMALL_UNANE, TIMEOUT};
use stoa_tests::redis::{health, RedisServer};
use stoa_tests::run_local::RunLocal;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{Client, Server};

const LEASE_MS: u64 = 1_500;

/// A cluster node over `redis` with the key prefix `prefix`.
fn node(redis: &RedisServer, prefix: &str, id: &str) -> Server {
    node_leased(redis, prefix, id, LEASE_MS)
}

/// As [`node`], with games' leases of `lease_ms`.
fn node_leased(redis: &RedisServer, prefix: &str, id: &str, lease_ms: u64) -> Server {
    let mut args = redis.server_args(prefix);
    args.extend(
        [
            "--cluster",
            "--node-id",
            id,
            "--lease-ms",
            &lease_ms.to_string(),
        ]
        .map(String::from),
    );
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

fn owned(server: &Server) -> u64 {
    health(server).1["games_owned"].as_u64().unwrap_or(0)
}

fn online(server: &Server) -> u64 {
    health(server).1["players_online"].as_u64().unwrap_or(0)
}

/// Polls `check` until it holds, or fails after `within`.
fn wait_until(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `connected as NAME (ID)` → ID.
fn player_id(line: &str) -> String {
    line.rsplit_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no player id in {line:?}"))
        .to_string()
}

/// Types move `mv` (the game's move `n`) until the server takes it: while a dead node's game
/// moves to another node, a move may get `unavailable` and change nothing.
fn play_until_accepted(clients: &mut Clients, who: usize, mv: &str, n: usize) {
    let played = format!("move {n} {mv}");
    let refused = format!("{mv} not played");
    for _ in 0..30 {
        clients.send(who, mv);
        let line = clients.wait(who, |l| l == played || l.contains(&refused));
        if line == played {
            return;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!("{mv} was never accepted");
}

/// The identity file of a config directory.
fn identities(home: &TempDir) -> Value {
    let text = std::fs::read_to_string(home.0.join("identity.json")).expect("identity.json");
    serde_json::from_str(&text).expect("identity JSON")
}

/// The `stoa-deployment` header of a websocket upgrade at `url`.
async fn upgrade_header(url: &str) -> Option<String> {
    let (_ws, response) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket");
    response
        .headers()
        .get("stoa-deployment")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

/// Under `deploy/run-local.sh 3`, two players play through the balancer's one address; the
/// node that holds the guest's connection (and owns the game: the joiner's node creates it)
/// is killed with SIGKILL; the guest's `stoa` reconnects through the same address, as the
/// same player (its token is kept under the deployment), and its next move is accepted.
#[test]
fn a_terminal_player_whose_node_dies_plays_on_through_the_balancer() {
    if !stoa_tests::run_local::balancer_available() {
        return;
    }
    let mut cluster = RunLocal::start(
        3,
        &[
            ("STOA_BOT", "0"),
            ("STOA_LEASE_MS", "1500"),
            ("STOA_RATE_LIMIT", "100000"),
            ("STOA_IP_CONN_LIMIT", "100000"),
        ],
    );
    assert!(
        cluster.report[0].starts_with("balancer ws://127.0.0.1:"),
        "the balancer comes first: {:?}",
        cluster.report
    );
    assert_eq!(cluster.nodes.len(), 3, "{:?}", cluster.report);
    let balancer = cluster.balancer_url();
    let deployment = health(&cluster.nodes[0]).1["deployment"]
        .as_str()
        .expect("deployment in /health")
        .to_string();

    let mut clients = Clients::with_url(&balancer);
    let host = clients.spawn("host", HOST_SMALL_UNANE);
    let code = clients.room_code(host);
    let home = TempDir::new("balancer-guest");
    let guest = clients.spawn_in("guest", &home.0, &["join", &code]);
    let guest_id = player_id(&clients.wait(guest, |l| l.starts_with("connected as guest ")));
    clients.wait(guest, |l| l.starts_with("game started "));
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    clients.wait(guest, |l| l == "your turn");

    let mut owner = None;
    wait_until("the game's owner", TIMEOUT, || {
        owner = cluster.nodes.iter().position(|n| owned(n) == 1);
        owner.is_some()
    });
    let owner = owner.unwrap();
    assert!(
        online(&cluster.nodes[owner]) >= 1,
        "the owner holds the guest's connection"
    );
    cluster.nodes[owner].kill9();
    clients.wait(guest, |l| l.starts_with(RECONNECTING));
    clients.wait(guest, |l| l == "reconnected");
    let survivors: Vec<usize> = (0..3).filter(|&i| i != owner).collect();
    wait_until("a survivor owning the game", TIMEOUT, || {
        survivors
            .iter()
            .map(|&i| owned(&cluster.nodes[i]))
            .sum::<u64>()
            == 1
    });

    play_until_accepted(&mut clients, guest, "d4xc4", 2);
    clients.wait(host, |l| l == "move 2 d4xc4");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    assert_eq!(
        clients.wait(guest, |l| l.starts_with("game over: ")),
        "game over: white wins by resign"
    );

    // The token is kept under the deployment, the balancer among its addresses.
    let stored = identities(&home);
    let entry = &stored["deployments"][&deployment];
    assert_eq!(entry["id"], guest_id.as_str(), "{stored}");
    assert!(
        entry["addresses"]
            .as_array()
            .is_some_and(|a| a.iter().any(|u| u == balancer.as_str())),
        "{stored}"
    );
    clients.close_stdin(host);
    clients.close_stdin(guest);
    clients.expect_exit(host, TIMEOUT);
    clients.expect_exit(guest, TIMEOUT);

    let (status, _) = cluster.stop();
    assert!(status.success(), "the script stops cleanly: {status:?}");
}

/// What a dropped connection says, in words (issue 47, item 7).
const RECONNECTING: &str = "connection lost — reconnecting… (";

/// `stoa --server A,B`: the client plays on A; A is killed and the client reconnects to B by
/// itself as the same player, says so in words, and plays on: the move typed once while B
/// takes A's game over (answered `unavailable`, "this game is changing servers") is sent
/// again by the client itself, never retyped (issue 47, item 7); a new process given the
/// same two addresses, A still dead, is the same player on B; and B, having welcomed it, is
/// known on its own.
#[test]
fn the_client_falls_back_on_its_other_addresses_as_the_same_player() {
    let redis = RedisServer::start();
    // A lease long enough that the move typed at once after the reconnect comes while the
    // game is changing servers.
    let lease = 4_000;
    let mut a = node_leased(&redis, "fb", "a", lease);
    let b = node_leased(&redis, "fb", "b", lease);
    let both = format!("{},{}", a.ws_url(), b.ws_url());
    let mut clients = Clients::with_url(&b.ws_url());
    let host = clients.spawn("host", HOST_SMALL_UNANE);
    let code = clients.room_code(host);
    let home = TempDir::new("fallback-guest");
    let guest = clients.spawn_in_at("guest", &both, &home.0, &["join", &code]);
    let guest_id = player_id(&clients.wait(guest, |l| l.starts_with("connected as guest ")));
    let started = clients.wait(guest, |l| l.starts_with("game started "));
    let game_id = started.split_whitespace().nth(2).expect("id").to_string();
    assert_eq!(online(&a), 1, "the guest is on the first address");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "a4xb4");
    clients.wait(guest, |l| l == "your turn");

    // A dies: the guest comes back on B by itself.
    a.kill9();
    let dropped = clients.wait(guest, |l| l.starts_with(RECONNECTING));
    assert!(!dropped.contains("WebSocket"), "{dropped}");
    clients.wait(guest, |l| l == "reconnected");
    assert_eq!(owned(&b), 0, "B has not taken the game yet");
    clients.send(guest, "d4xc4");
    clients.wait(guest, |l| {
        l == "the game is changing servers: d4xc4 is sent again by itself as soon as it answers"
    });
    clients.wait(guest, |l| l == "move 2 d4xc4");
    assert_eq!(owned(&b), 1, "B took the game over");
    let said = clients.lines(guest, Duration::ZERO);
    assert!(
        !said.iter().any(|l| l.contains("not played")),
        "the move was never refused to the player:\n{}",
        said.join("\n")
    );
    clients.wait(host, |l| l == "move 2 d4xc4");
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "b4xc4");
    clients.wait(guest, |l| l == "move 3 b4xc4");
    clients.kill(guest);

    // A new process, A still dead: B, with the stored identity, in its seat.
    let again = clients.spawn_in_at("guest-again", &both, &home.0, &["watch", &game_id]);
    let line = clients.wait(again, |l| l.starts_with("connected as guest-again "));
    assert_eq!(player_id(&line), guest_id, "the same player");
    clients.wait(again, |l| l == "your turn");
    clients.send(again, "resign");
    assert_eq!(
        clients.wait(host, |l| l.starts_with("game over: ")),
        "game over: black wins by resign"
    );
    clients.close_stdin(again);
    clients.expect_exit(again, TIMEOUT);

    // B welcomed it: B alone is now one of the deployment's known addresses.
    let alone = clients.spawn_in_at("guest-b", &b.ws_url(), &home.0, &["lobby"]);
    let line = clients.wait(alone, |l| l.starts_with("connected as guest-b "));
    assert_eq!(player_id(&line), guest_id, "the same player on B alone");
    clients.close_stdin(alone);
    clients.expect_exit(alone, TIMEOUT);
    clients.close_stdin(host);
    clients.expect_exit(host, TIMEOUT);
}

/// Every node of a cluster names the same deployment — in `welcome`, in the websocket
/// upgrade's `stoa-deployment` header, in `/health` and in the web page — and the id
/// survives a restart of every node and of Redis, with the players' tokens; another key
/// prefix is another deployment, and so is each in-memory server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn welcome_names_one_deployment_that_survives_restarts() {
    let mut redis = RedisServer::start();
    let nodes = [
        node(&redis, "dep", "n1"),
        node(&redis, "dep", "n2"),
        node(&redis, "dep", "n3"),
    ];
    let first = Client::guest(&nodes[0], "first").await;
    let deployment = first.welcome["deployment"]
        .as_str()
        .expect("welcome.deployment")
        .to_string();
    assert!(deployment.len() >= 10, "{deployment}");
    let token = first.token.clone();
    for n in &nodes {
        let c = Client::guest(n, "someone").await;
        assert_eq!(c.welcome["deployment"], deployment.as_str(), "{}", n.addr);
        assert_eq!(health(n).1["deployment"], deployment.as_str());
        assert_eq!(
            upgrade_header(&n.ws_url()).await.as_deref(),
            Some(deployment.as_str())
        );
        let (status, page) = n.http_get("/");
        assert_eq!(status, 200);
        assert!(
            page.contains(&format!(
                r#"<meta name="stoa-deployment" content="{deployment}">"#
            )),
            "{page}"
        );
    }
    drop(first);
    drop(nodes);

    // Everything restarts (Redis reloads its AOF): the same deployment, the same player.
    redis.restart();
    let again = node(&redis, "dep", "n4");
    let back = Client::with_token(&again, &token).await;
    assert_eq!(back.welcome["deployment"], deployment.as_str());

    // Another prefix on the same Redis is another deployment.
    let other = node(&redis, "other", "o1");
    let stranger = Client::guest(&other, "stranger").await;
    let other_id = stranger.welcome["deployment"].as_str().expect("id");
    assert!(!other_id.is_empty());
    assert_ne!(other_id, deployment);

    // In memory nothing outlives the process, tokens included: each process is its own.
    let m1 = Server::start();
    let m2 = Server::start();
    let d1 = Client::guest(&m1, "x").await.welcome["deployment"].clone();
    let d2 = Client::guest(&m2, "y").await.welcome["deployment"].clone();
    assert!(d1.as_str().is_some_and(|d| !d.is_empty()), "{d1}");
    assert_ne!(d1, d2);
}

/// A free loopback port with the next `extra` ports free too (for the nodes, one each).
fn free_ports(extra: u16) -> u16 {
    loop {
        let first = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = first.local_addr().expect("address").port();
        if port.checked_add(extra).is_none() {
            continue;
        }
        let rest: Vec<_> = (1..=extra)
            .map(|k| std::net::TcpListener::bind(("127.0.0.1", port + k)))
            .collect();
        if rest.iter().all(Result::is_ok) {
            return port;
        }
    }
}

/// Issue 47, item 12: `deploy/run-local.sh` takes its ports from options or the
/// environment (Redis, the balancer, the first node: the others follow it), refuses a
/// port that is taken with a clear error, and without Caddy says how it runs instead and
/// runs without the balancer, as `STOA_BALANCER=0` does (it stopped before).
#[test]
fn run_local_takes_its_ports_and_runs_without_caddy() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    // No Caddy: a note, then nodes and Redis on the ports asked for (Redis by the
    // environment, the nodes by the option), no balancer.
    let redis_port = free_ports(0);
    let node_port = free_ports(1);
    let cluster = RunLocal::start_with(
        2,
        &["--node-port", &node_port.to_string()],
        &[
            ("STOA_BOT", "0"),
            ("STOA_CADDY_BIN", "/nonexistent/caddy"),
            ("STOA_REDIS_PORT", &redis_port.to_string()),
        ],
    );
    assert!(cluster.balancer.is_none(), "{:?}", cluster.report);
    let report = cluster.report.join("\n");
    assert!(
        report.contains(&format!("redis redis://127.0.0.1:{redis_port}/ pid ")),
        "{report}"
    );
    for (i, port) in [(1, node_port), (2, node_port + 1)] {
        assert!(
            report.contains(&format!("node{i} ws://127.0.0.1:{port}/ws pid ")),
            "{report}"
        );
    }
    assert_eq!(health(&cluster.nodes[1]).0, 200);
    assert!(
        cluster.notes().iter().any(|l| l
            == "note: caddy is not installed (Debian: apt install caddy): running without the balancer, as STOA_BALANCER=0 does; players connect to a node's address below (set STOA_BALANCER=0 to skip this note)"),
        "{:?}",
        cluster.notes()
    );
    let (status, _) = cluster.stop();
    assert!(status.success(), "stops cleanly: {status:?}");

    // A port that is taken: said, nothing started, exit status 1.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("address").port().to_string();
    let out = std::process::Command::new(root.join("deploy/run-local.sh"))
        .args(["1", "--redis-port", &port])
        .env("STOA_SERVER_BIN", stoa_tests::binary("stoa-server"))
        .env("STOA_BOT", "0")
        .env("STOA_BALANCER", "0")
        .output()
        .expect("run the script");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("the Redis port {port} is already in use")
    );
    // A bad port number: a usage error.
    let out = std::process::Command::new(root.join("deploy/run-local.sh"))
        .args(["1", "--node-port", "http"])
        .env("STOA_SERVER_BIN", stoa_tests::binary("stoa-server"))
        .output()
        .expect("run the script");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("must be a port number"),
        "{out:?}"
    );
    drop(taken);

    // With Caddy: the balancer on the port asked for (option), the first node's port by
    // the environment.
    if !stoa_tests::run_local::balancer_available() {
        return;
    }
    let balancer_port = free_ports(0);
    let node_port = free_ports(0);
    let cluster = RunLocal::start_with(
        1,
        &["--balancer-port", &balancer_port.to_string()],
        &[
            ("STOA_BOT", "0"),
            ("STOA_NODE_PORT", &node_port.to_string()),
        ],
    );
    assert_eq!(
        cluster.balancer_url(),
        format!("ws://127.0.0.1:{balancer_port}/ws")
    );
    assert!(
        cluster
            .report
            .iter()
            .any(|l| l.starts_with(&format!("node1 ws://127.0.0.1:{node_port}/ws pid "))),
        "{:?}",
        cluster.report
    );
    let (status, _) = cluster.stop();
    assert!(status.success(), "stops cleanly: {status:?}");
}
