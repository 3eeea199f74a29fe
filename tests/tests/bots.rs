//! `stoa bot` against the real server: a scripted client hosts a timed room of each kind,
//! a bot process joins it by code and plays the game through; the bot never makes an
//! illegal move, never runs out of time, is marked as a bot, and its games are unrated.
//! Another bot waits in quick pairing and is paired with a person.
#![forbid(unsafe_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::clients::Clients;
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{pick, play_the_computer, quick_options, side_of, Client, Server, Tracked};

/// A `stoa bot` process, killed on drop; its output is read when it ends.
struct Bot(Child);

impl Bot {
    fn start(server: &Server, tag: &str, args: &[&str]) -> (Bot, TempDir) {
        stoa_tests::build_binaries();
        let home = TempDir::new(tag);
        let child = Command::new(stoa_tests::binary("stoa"))
            .args(["--server", &server.ws_url(), "bot"])
            .args(args)
            .env("STOA_CONFIG_DIR", &home.0)
            .env_remove("STOA_SERVER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start stoa bot");
        (Bot(child), home)
    }

    /// Waits for the bot to exit; returns (success, stdout, stderr).
    fn finish(mut self, within: Duration) -> (bool, String, String) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                let mut out = String::new();
                let mut err = String::new();
                use std::io::Read;
                if let Some(mut o) = self.0.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                if let Some(mut e) = self.0.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return (status.success(), out, err);
            }
            assert!(Instant::now() < deadline, "the bot did not finish");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Plays the person's side of `game_id` with legal moves chosen by `seed` until the game
/// ends; after `cap` of its own moves the person resigns. Returns the final document.
async fn play_against(person: &mut Client, game_id: &str, seed: u64, cap: usize) -> Value {
    let snap = person
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == game_id)
        .await;
    let mut doc = Tracked::from_snapshot(&snap);
    let mut mine = 0;
    loop {
        if doc.doc["status"]["state"] == "ended" {
            return doc.doc;
        }
        let me = side_of(&doc.doc, &person.player_id);
        if me.is_some() && doc.doc["to_act"].as_str() == me.as_deref() {
            if mine >= cap {
                let ok = person
                    .request(json!({"t":"game.resign","game_id":game_id}))
                    .await;
                assert_eq!(ok["t"], "ok", "{ok}");
                doc.absorb_pending(person);
                continue;
            }
            let legal = person
                .request(json!({"t":"game.legal","game_id":game_id}))
                .await;
            let moves = legal["moves"].as_array().expect("moves").clone();
            let ply = doc.doc["moves"].as_array().map_or(0, Vec::len) as u64;
            let mv = moves[pick(seed, ply, moves.len())]
                .as_str()
                .unwrap()
                .to_string();
            let ok = person
                .request(json!({"t":"game.move","game_id":game_id,"move":mv}))
                .await;
            assert_eq!(ok["t"], "ok", "{mv}: {ok}");
            mine += 1;
            doc.absorb_pending(person);
            continue;
        }
        let diff = person.next_diff(game_id).await;
        doc.apply(&diff);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_joins_by_code_and_plays_every_kind_within_its_clock() {
    let server = Server::start();
    for (i, kind) in ["unane", "staku", "akron", "akunur"]
        .into_iter()
        .enumerate()
    {
        let mut person = Client::guest(&server, "person").await;
        let room = person
            .request(
                json!({"t":"room.create","kind":kind,"options":quick_options(kind),
                "clock":{"kind":"fischer","initial_ms":60_000,"increment_ms":1_000},
                "rated":true,"visibility":"private","side":"random"}),
            )
            .await;
        let code = room["room"]["code"].as_str().expect("code").to_string();
        let (bot, _home) = Bot::start(
            &server,
            &format!("bot-{kind}"),
            &["--join", &code, "--level", "2"],
        );
        let started = person.recv_where(|m| m["t"] == "game.started").await;
        let game_id = started["game_id"].as_str().unwrap().to_string();
        let end = play_against(&mut person, &game_id, i as u64 + 1, 40).await;

        let bot_side = ["first", "second"]
            .iter()
            .enumerate()
            .map(|(n, _)| stoa_protocol::kind(kind).unwrap().side_names[n])
            .find(|s| end["players"][*s]["id"] != person.player_id.as_str())
            .expect("the bot's side");
        assert_eq!(
            end["players"][bot_side]["bot"], true,
            "{kind}: the bot is marked"
        );
        assert!(end["players"][bot_side]["name"]
            .as_str()
            .unwrap()
            .starts_with("bot-level-2"));
        assert_eq!(end["rated"], false, "{kind}: a game with a bot is unrated");
        let reason = end["status"]["reason"].as_str().unwrap();
        assert_ne!(reason, "timeout", "{kind}: nobody ran out of time");
        // Every move of the game is legal from the start (the server checked each; the
        // engine agrees on the whole list).
        let moves: Vec<&str> = end["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let mut game = stoa_protocol::kind(kind)
            .unwrap()
            .start(&quick_options(kind))
            .unwrap();
        for m in &moves {
            game.play(m).unwrap_or_else(|e| panic!("{kind}: {m}: {e}"));
        }
        let (ok, out, err) = bot.finish(Duration::from_secs(30));
        assert!(ok, "{kind}: the bot failed: {err}");
        assert!(
            !err.contains("not played"),
            "{kind}: the bot tried a refused move: {err}"
        );
        // The side the bot started on (a swap may have changed it since).
        let names = stoa_protocol::kind(kind).unwrap().side_names;
        let bot_start = names
            .iter()
            .find(|s| started["side"] != **s)
            .expect("the other side");
        assert!(
            out.contains(&format!("game started {game_id} side {bot_start}")),
            "{out}"
        );
        assert!(out.contains("game over: "), "{out}");
        eprintln!("{kind}: {} moves, {reason}", moves.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_bot_is_paired_with_a_person() {
    let server = Server::start();
    let (bot, _home) = Bot::start(
        &server,
        "bot-queue",
        &[
            "--kinds",
            "unane",
            "--options",
            "width=4,height=3",
            "--clock",
            "1+1",
            "--level",
            "1",
            "--games",
            "1",
        ],
    );
    // Wait until the bot waits in the queue (the lobby counts it).
    let mut person = Client::guest(&server, "person").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, body) = server.http_get("/health");
        let lobby = person.request(json!({"t":"lobby.watch"})).await;
        let _ = person.request(json!({"t":"lobby.unwatch"})).await;
        let waiting = lobby["doc"]["queues"]
            .as_object()
            .is_some_and(|q| q.values().any(|v| v["waiting"] == 1));
        if waiting {
            break;
        }
        assert!(Instant::now() < deadline, "the bot never queued: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let queued = person
        .request(
            json!({"t":"queue.join","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":60_000,"increment_ms":1_000},"rated":false}),
        )
        .await;
    assert_eq!(queued["t"], "queued", "{queued}");
    let started = person.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().unwrap().to_string();
    let end = play_against(&mut person, &game_id, 5, 40).await;
    assert_ne!(end["status"]["reason"], "timeout");
    let (ok, out, err) = bot.finish(Duration::from_secs(30));
    assert!(ok, "{err}");
    assert!(out.contains(&format!("game started {game_id}")), "{out}");
}

/// "Play the computer": a bot serving the operator's levels is invited to a room made for
/// the person who asks (`stoa play --computer`), plays it through, then serves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_a_serving_bot_from_the_client_and_it_serves_again() {
    let server = Server::start();
    let (_bot, _home) = Bot::start(
        &server,
        "bot-serve",
        &["--serve", "--kinds", "unane", "--level", "1"],
    );
    // Nobody serves level 4.
    let mut other = Client::guest(&server, "other").await;
    let e = other
        .request(
            json!({"t":"bot.play","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"none"},"level":4}),
        )
        .await;
    assert_eq!(e["code"], "unavailable", "{e}");

    // The person's client asks (again while the bot is still connecting).
    let mut clients = Clients::with_url(&server.ws_url());
    let person = loop {
        let p = clients.spawn(
            "person",
            &[
                "play",
                "unane",
                "--options",
                "width=4,height=3",
                "--clock",
                "none",
                "--computer",
                "1",
            ],
        );
        let line = clients.wait(p, |l| {
            l.starts_with("error ") || l.starts_with("game started ")
        });
        if line.starts_with("game started ") {
            break p;
        }
        assert!(line.starts_with("error unavailable"), "{line}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    clients.wait(person, |l| l.starts_with("== unane game "));
    // Play legal moves until the end.
    loop {
        let line = clients.wait(person, |l| l == "your turn" || l.starts_with("game over: "));
        if line.starts_with("game over: ") {
            break;
        }
        // The legal moves arrive just after "your turn": ask until they are there.
        let legal = loop {
            clients.send(person, "legal");
            let l = clients.wait(person, |l| {
                l.starts_with("legal: ") || l.starts_with("fetching legal moves")
            });
            if l.starts_with("legal: ") {
                break l;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let mv = legal["legal: ".len()..]
            .split_whitespace()
            .find(|m| *m != "swap")
            .expect("a move")
            .to_string();
        clients.send(person, &mv);
    }

    // The bot is free again: a second person gets it at once.
    // (The bot may still be saying it is free.)
    let ask = json!({"t":"bot.play","kind":"unane","options":{"width":4,"height":3},
        "clock":{"kind":"none"},"level":1,"side":"black"});
    // (It first waits a few seconds for the person to ask for a rematch.)
    let room = play_the_computer(&mut other, &ask, Duration::from_secs(30)).await;
    assert_eq!(room["room"]["visibility"], "private");
    let started = other.recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["side"], "black");
    let snap = other.recv_where(|m| m["t"] == "game.snapshot").await;
    assert_eq!(snap["doc"]["players"]["white"]["bot"], true, "{snap}");
    assert_eq!(snap["doc"]["rated"], false);
}

/// A cluster node over `redis` (short lease, so lapsed lists go quickly).
fn cluster_node(redis: &stoa_tests::redis::RedisServer, id: &str) -> Server {
    let mut args = redis.server_args("bt");
    args.extend(["--cluster", "--node-id", id, "--lease-ms", "1500"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

/// In a cluster a person on one node plays a bot that serves on another; two people asking
/// at once on two nodes never get the same bot (one waits for the next free one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_serving_on_one_node_plays_a_person_on_another() {
    let redis = stoa_tests::redis::RedisServer::start();
    let nodes = [cluster_node(&redis, "b1"), cluster_node(&redis, "b2")];
    let (_bot, _home) = Bot::start(
        &nodes[0],
        "bot-cluster",
        &["--serve", "--kinds", "unane", "--level", "2"],
    );
    let ask = json!({"t":"bot.play","kind":"unane","options":{"width":4,"height":3},
        "clock":{"kind":"none"},"level":2,"side":"white"});
    let mut people = [
        Client::guest(&nodes[1], "second-node").await,
        Client::guest(&nodes[0], "first-node").await,
    ];
    // Until the bot's node has listed it in Redis, node 2 finds nobody.
    let room = play_the_computer(&mut people[0], &ask, Duration::from_secs(20)).await;
    // The only bot is taken: the person on its own node is told so, with nothing changed.
    let busy = people[1].request(ask.clone()).await;
    assert_eq!(busy["code"], "unavailable", "{busy}");
    let code = room["room"]["code"].as_str().expect("code").to_string();
    let started = people[0].recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().expect("id").to_string();
    let end = play_against(&mut people[0], &game_id, 7, 40).await;
    assert_eq!(end["players"]["black"]["bot"], true, "{end}");
    assert_eq!(end["players"]["white"]["name"], "second-node");
    assert_eq!(end["status"]["state"], "ended");
    eprintln!(
        "room {code}: {} moves",
        end["moves"].as_array().unwrap().len()
    );

    // Free again: now the person on node 1 gets it.
    play_the_computer(&mut people[1], &ask, Duration::from_secs(20)).await;
    let started = people[1].recv_where(|m| m["t"] == "game.started").await;
    assert_eq!(started["side"], "white");
}

/// A serving bot offering several levels is named after the level each game is played at,
/// and a person's rematch request after the game is accepted: the rematch starts (issue 28,
/// item 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serving_bot_is_named_by_its_level_and_accepts_a_rematch() {
    let server = Server::start();
    let (_bot, _home) = Bot::start(
        &server,
        "bot-rematch",
        &["--serve", "--kinds", "unane", "--levels", "1,2"],
    );
    let mut person = Client::guest(&server, "person").await;
    let ask = json!({"t":"bot.play","kind":"unane","options":{"width":4,"height":3},
        "clock":{"kind":"none"},"level":2,"side":"black"});
    play_the_computer(&mut person, &ask, Duration::from_secs(30)).await;
    let started = person.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().expect("id").to_string();
    let snap = person
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == game_id.as_str())
        .await;
    assert_eq!(
        snap["doc"]["players"]["white"]["name"], "bot-level-2",
        "{snap}"
    );
    assert_eq!(snap["doc"]["players"]["white"]["bot"], true);
    let ok = person
        .request(json!({"t":"game.resign","game_id":game_id}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let ok = person
        .request(json!({"t":"game.rematch","game_id":game_id}))
        .await;
    assert_eq!(ok["t"], "ok", "{ok}");
    let rematch = person
        .recv_where(|m| m["t"] == "game.started" && m["game_id"] != game_id.as_str())
        .await;
    let next = rematch["game_id"].as_str().expect("id").to_string();
    let snap = person
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == next.as_str())
        .await;
    let bot_side = if rematch["side"] == "black" {
        "white"
    } else {
        "black"
    };
    assert_eq!(
        snap["doc"]["players"][bot_side]["name"], "bot-level-2",
        "{snap}"
    );
    assert_eq!(snap["doc"]["status"]["state"], "playing");
}
