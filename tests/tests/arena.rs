//! Arena tournaments against the real server: scripted players play a short arena to its
//! end; the final standings equal a recomputation from the games' results by the scoring
//! rules (streaks, berserk and early draws included); nobody meets the same opponent twice
//! in a row while others are active; no game starts after the cut-off; the watcher's
//! document (snapshot plus diffs) equals the final one served over HTTP. And the requests'
//! errors: bad settings, cancelling, private arenas, berserk where it is not allowed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::lobby::{recv_within, LobbyView};
use stoa_tests::{Client, Server, LOOSE};

/// A server pairing arenas in fast waves.
fn server() -> Server {
    let mut args: Vec<&str> = LOOSE.to_vec();
    args.extend_from_slice(&["--queue-wave-ms", "200"]);
    Server::start_with(&args)
}

/// An arena document kept up to date from `arena.diff`s, checking the seq chain.
struct ArenaView {
    id: String,
    seq: u64,
    doc: Value,
}

impl ArenaView {
    fn from_answer(a: &Value) -> ArenaView {
        assert_eq!(a["t"], "arena", "{a}");
        ArenaView {
            id: a["doc"]["id"].as_str().expect("id").to_string(),
            seq: a["seq"].as_u64().expect("seq"),
            doc: a["doc"].clone(),
        }
    }

    /// Applies every diff of this arena already received by `c`.
    fn absorb(&mut self, c: &mut Client) {
        let id = self.id.clone();
        let mut rest = std::collections::VecDeque::new();
        while let Some(m) = c.pending.pop_front() {
            if m["t"] == "arena.diff" && m["id"] == id.as_str() {
                self.apply(&m);
            } else {
                rest.push_back(m);
            }
        }
        c.pending = rest;
    }

    fn apply(&mut self, diff: &Value) {
        let seq = diff["seq"].as_u64().expect("seq");
        assert_eq!(seq, self.seq + 1, "arena diffs arrive in seq order");
        let patch: json_patch::Patch =
            serde_json::from_value(diff["patch"].clone()).expect("a JSON Patch");
        json_patch::patch(&mut self.doc, &patch).expect("the patch applies");
        self.seq = seq;
    }
}

/// Scores one player's games as the rules say (an implementation independent of the
/// server's): (sheet, score, fire, wins, draws, losses, performance).
fn score(games: &[(char, bool, u64, i64)], min_draw_plies: u64) -> Value {
    let (mut streak, mut total, mut w, mut d, mut l, mut perf) = (0, 0, 0, 0, 0, 0i64);
    let mut sheet = Vec::new();
    for &(outcome, berserk, plies, opponent) in games {
        let points = match outcome {
            'w' => {
                let p = if streak >= 2 { 4 } else { 2 } + u32::from(berserk);
                streak += 1;
                w += 1;
                perf += opponent + 500;
                p
            }
            'd' => {
                streak = 0;
                d += 1;
                perf += opponent;
                u32::from(plies >= min_draw_plies)
            }
            _ => {
                streak = 0;
                l += 1;
                perf += opponent - 500;
                0
            }
        };
        total += points;
        sheet.push(points.to_string());
    }
    let n = games.len() as f64;
    let performance = if games.is_empty() {
        0
    } else {
        (perf as f64 / n).round() as i64
    };
    json!({"sheet": sheet.join(" "), "score": total, "fire": streak >= 2, "wins": w,
        "draws": d, "losses": l, "games": games.len(), "performance": performance})
}

/// What the script does in a game between players `i` and `j` (indices, i < j): the
/// lower index wins by resignation, except i + j == 5 (a draw after two plies, counted)
/// and i + j == 7 (a draw at once, too early to count). Players 0 and 1 go berserk.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Script {
    Win(usize),
    LongDraw,
    EarlyDraw,
}

fn script(i: usize, j: usize) -> Script {
    match i + j {
        5 => Script::LongDraw,
        7 => Script::EarlyDraw,
        _ => Script::Win(i.min(j)),
    }
}

fn ok(a: &Value) {
    assert_eq!(a["t"], "ok", "{a}");
}

/// One ply by whoever is to act (asked with `game.legal`); returns the mover's index, or
/// `None` once the game is over. In a cluster a player's node may follow the game a moment
/// behind its owner (the legal moves of the ply before), and a game whose owner died is
/// `unavailable` until another node takes it over: the ply is tried again then.
async fn one_ply(clients: &mut [Client], seats: [usize; 2], game: &str) -> Option<usize> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        for &s in &seats {
            let legal = clients[s]
                .request(json!({"t":"game.legal","game_id":game}))
                .await;
            if legal["code"] == "unavailable" {
                continue;
            }
            assert_eq!(legal["t"], "legal", "{legal}");
            let Some(mv) = legal["moves"][0].as_str().map(String::from) else {
                continue;
            };
            let a = clients[s]
                .request(json!({"t":"game.move","game_id":game,"move":mv}))
                .await;
            if a["t"] == "ok" {
                return Some(s);
            }
            if a["code"] == "game_over" {
                return None;
            }
            assert!(
                ["not_your_turn", "illegal_move", "unavailable"]
                    .contains(&a["code"].as_str().unwrap_or("")),
                "{a}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nobody could move in {game}");
}

/// Sends a request about a game, again while the game is changing servers (an
/// `unavailable` answer changed nothing, and a dead owner's games are taken over within a
/// few seconds). `None` once the game is over: a game the dead node cut before anyone
/// acted in it is aborted, and an aborted game is on nobody's sheet.
async fn settled(client: &mut Client, req: Value) -> Option<Value> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let a = client.request(req.clone()).await;
        if a["code"] == "unavailable" && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        if a["code"] == "game_over" {
            return None;
        }
        return Some(a);
    }
}

/// Plays an arena game by its script with both players' clients (until the game is over,
/// should the node that owned it die first).
async fn play(clients: &mut [Client], seats: [usize; 2], game: &str) {
    for &s in &seats {
        if s <= 1 {
            let Some(a) =
                settled(&mut clients[s], json!({"t":"game.berserk","game_id":game})).await
            else {
                return;
            };
            ok(&a);
            // Only once (asked again while the game is briefly paused, as after a restart).
            let Some(again) =
                settled(&mut clients[s], json!({"t":"game.berserk","game_id":game})).await
            else {
                return;
            };
            assert_eq!(again["code"], "conflict", "{again}");
        }
    }
    let (i, j) = (seats[0].min(seats[1]), seats[0].max(seats[1]));
    match script(i, j) {
        Script::Win(w) => {
            let loser = if w == i { j } else { i };
            if let Some(a) = settled(
                &mut clients[loser],
                json!({"t":"game.resign","game_id":game}),
            )
            .await
            {
                ok(&a);
            }
        }
        Script::LongDraw | Script::EarlyDraw => {
            if script(i, j) == Script::LongDraw {
                if one_ply(clients, seats, game).await.is_none() {
                    return;
                }
                let Some(second) = one_ply(clients, seats, game).await else {
                    return;
                };
                // A player who moved can no longer go berserk.
                let late = clients[second]
                    .request(json!({"t":"game.berserk","game_id":game}))
                    .await;
                assert_eq!(late["t"], "error", "{late}");
            }
            let offer = json!({"t":"game.draw","game_id":game,"action":"offer"});
            let Some(a) = settled(&mut clients[i], offer).await else {
                return;
            };
            ok(&a);
            let accept = json!({"t":"game.draw","game_id":game,"action":"accept"});
            if let Some(a) = settled(&mut clients[j], accept).await {
                ok(&a);
            }
        }
    }
}

/// Plays every arena game the clients are seated in, by its script, until `until`: whoever
/// gets `game.started` is seated, and once both seats of a game are known it is played.
/// Diffs of the arena on the first client's connection go into `view`. A player the arena
/// paused (their first move never came: a `game.started` lost with a dying node) joins
/// again, as a player coming back does; the arena is read from `server` every second for
/// that. A client that connected again (after a restart, or to another node) takes up the
/// unfinished games its `welcome` lists, as a player's client does. `seats` carries the
/// seats known so far from one call to the next. Returns the number of games played.
/// When [`direct`] stops: on an event, never on a time margin. The deadline of each is a
/// failure guard only (the test fails there), far beyond what a starved machine needs.
#[derive(Clone, Copy)]
enum Stop {
    /// As soon as this many games were played.
    Played(usize),
    /// When the arena's document says it is finished and no game of it is in play.
    Finished,
}

/// How long a phase may take before the test gives up on it.
const PHASE_GUARD: Duration = Duration::from_secs(60);

async fn direct(
    server: &Server,
    clients: &mut [Client],
    seats: &mut HashMap<String, Vec<usize>>,
    id: &str,
    stop: Stop,
    mut view: Option<&mut ArenaView>,
) -> usize {
    let guard = Instant::now() + PHASE_GUARD;
    let mut looked = Instant::now();
    let mut played = 0;
    let mut ready = Vec::new();
    for (k, client) in clients.iter().enumerate() {
        let unfinished: Vec<String> = client.welcome["games"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.as_str().map(String::from))
            .collect();
        for game in unfinished {
            let entry = seats.entry(game.clone()).or_default();
            if !entry.contains(&k) {
                entry.push(k);
                if entry.len() == 2 {
                    ready.push((game, [entry[0], entry[1]]));
                }
            }
        }
    }
    for (game, pair) in ready {
        play(clients, pair, &game).await;
        played += 1;
    }
    loop {
        if matches!(stop, Stop::Played(n) if played >= n) {
            break;
        }
        assert!(
            Instant::now() < guard,
            "the phase did not end within {PHASE_GUARD:?} ({played} games played)"
        );
        for k in 0..clients.len() {
            let started = recv_within(&mut clients[k], Duration::from_millis(15), |m| {
                m["t"] == "game.started"
            })
            .await;
            let Some(s) = started else { continue };
            assert_eq!(s["arena"], id, "{s}");
            let game = s["game_id"].as_str().expect("game_id").to_string();
            let entry = seats.entry(game.clone()).or_default();
            if entry.contains(&k) {
                continue;
            }
            entry.push(k);
            if entry.len() == 2 {
                let pair = [entry[0], entry[1]];
                play(clients, pair, &game).await;
                played += 1;
            }
        }
        if let Some(v) = view.as_deref_mut() {
            v.absorb(&mut clients[0]);
        }
        if looked.elapsed() > Duration::from_secs(1) {
            looked = Instant::now();
            let (status, doc) = server.http_get(&format!("/api/arenas/{id}"));
            let doc: Value = if status == 200 {
                serde_json::from_str(&doc).expect("JSON")
            } else {
                Value::Null
            };
            let in_play = doc["games"]
                .as_object()
                .into_iter()
                .flatten()
                .any(|(_, g)| g["status"] == "playing");
            if matches!(stop, Stop::Finished) && doc["status"] == "finished" && !in_play {
                break;
            }
            let paused: Vec<String> = doc["players"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["paused"] == true)
                .filter_map(|p| p["id"].as_str().map(String::from))
                .collect();
            for c in clients.iter_mut().filter(|c| paused.contains(&c.player_id)) {
                let again = c.request(json!({"t":"arena.join","id":id})).await;
                // Too late is fine: the arena may have ended meanwhile.
                assert!(again["t"] == "ok" || again["code"] == "conflict", "{again}");
            }
        }
    }
    played
}

/// The arena's final document, checked: finished; every game started before the cut-off
/// and followed its script; each player's line equals a recomputation from the games'
/// results (read from the games' own documents); the standings in order; nobody met the
/// same opponent twice in a row; each game's record names the arena.
async fn final_standings(
    server: &Server,
    id: &str,
    clients: &[Client],
    min_draw_plies: u64,
) -> Value {
    let index: HashMap<String, usize> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| (c.player_id.clone(), i))
        .collect();
    let mut clients_for_record = Client::with_token(server, &clients[0].token).await;
    // Every game ended (a game cut by a dead node is aborted within its first-action
    // window): the arena is finished and its document is final.
    let deadline = Instant::now() + Duration::from_secs(10);
    let fin = loop {
        let (status, fin) = server.http_get(&format!("/api/arenas/{id}"));
        assert_eq!(status, 200);
        let fin: Value = serde_json::from_str(&fin).expect("JSON");
        let playing = fin["games"]
            .as_object()
            .expect("games")
            .values()
            .any(|g| g["status"] == "playing");
        if !playing || Instant::now() > deadline {
            break fin;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(fin["status"], "finished", "{fin}");
    // The games' results, from the games themselves.
    let cutoff = fin["cutoff_at"].as_u64().unwrap();
    let mut games: Vec<(u64, String, Value)> = fin["games"]
        .as_object()
        .expect("games")
        .iter()
        .map(|(g, e)| (e["started_at"].as_u64().unwrap(), g.clone(), e.clone()))
        .collect();
    games.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut per_player: HashMap<String, Vec<(char, bool, u64, i64)>> = HashMap::new();
    let mut opponents: HashMap<String, Vec<String>> = HashMap::new();
    for (started_at, g, entry) in &games {
        assert!(*started_at < cutoff, "game {g} started after the cut-off");
        // Every pairing counts for "not the same opponent twice in a row", aborted or not.
        let (w, b) = (
            entry["white"].as_str().unwrap(),
            entry["black"].as_str().unwrap(),
        );
        opponents
            .entry(w.to_string())
            .or_default()
            .push(b.to_string());
        opponents
            .entry(b.to_string())
            .or_default()
            .push(w.to_string());
        if entry["status"] == "aborted" {
            // Not a result (a game cut by a restart): not on any sheet.
            continue;
        }
        assert_eq!(entry["status"], "ended", "{entry}");
        let (code, doc) = server.api_game(g, None);
        assert_eq!(code, 200);
        assert_eq!(doc["arena"]["id"], id, "{doc}");
        let white = entry["white"].as_str().unwrap().to_string();
        let black = entry["black"].as_str().unwrap().to_string();
        assert_eq!(doc["players"]["white"]["id"], white.as_str());
        let winner = doc["status"]["winner"]
            .as_str()
            .map(|side| doc["players"][side]["id"].as_str().unwrap().to_string());
        let plies = doc["moves"].as_array().unwrap().len() as u64;
        let (i, j) = (index[&white], index[&black]);
        // The script was followed.
        match script(i.min(j), i.max(j)) {
            Script::Win(w) => assert_eq!(winner.as_deref(), Some(clients[w].player_id.as_str())),
            Script::LongDraw => assert_eq!((winner.clone(), plies), (None, 2)),
            Script::EarlyDraw => assert_eq!((winner.clone(), plies), (None, 0)),
        }
        for (me, side, them) in [(&white, "white", &black), (&black, "black", &white)] {
            let outcome = match &winner {
                None => 'd',
                Some(w) if w == me => 'w',
                Some(_) => 'l',
            };
            let berserk = doc["arena"]["berserk"][side].as_bool().unwrap();
            assert_eq!(berserk, index[me.as_str()] <= 1, "{doc}");
            let opponent_rating = entry["ratings"][them.as_str()].as_i64().unwrap();
            per_player.entry(me.clone()).or_default().push((
                outcome,
                berserk,
                plies,
                opponent_rating,
            ));
        }
    }
    // Each game's record links the arena.
    let first = &games[0].1;
    let (_, full) = server.api_game_full(first, None);
    assert_eq!(full["record"]["arena"], id, "{full}");
    let rec = clients_for_record
        .request(json!({"t":"game.record","game_id":first}))
        .await;
    let _ = &rec;
    let text = rec["text"].as_str().expect("a record");
    assert!(text.contains(&format!("[Arena \"{id}\"]")), "{text}");
    // The standings: each player's line equals the recomputation, in the standings' order.
    let players = fin["players"].as_array().expect("players");
    assert_eq!(players.len(), clients.len());
    for p in players {
        let pid = p["id"].as_str().unwrap();
        let expected = score(per_player.get(pid).map_or(&[][..], |v| v), min_draw_plies);
        for key in [
            "sheet",
            "score",
            "fire",
            "wins",
            "draws",
            "losses",
            "games",
            "performance",
        ] {
            assert_eq!(p[key], expected[key], "{key} of {pid}: {p} vs {expected}");
        }
        assert_eq!(p["playing"], Value::Null);
    }
    for w in players.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let ka = (
            a["score"].as_i64().unwrap(),
            a["performance"].as_i64().unwrap(),
        );
        let kb = (
            b["score"].as_i64().unwrap(),
            b["performance"].as_i64().unwrap(),
        );
        assert!(ka >= kb, "standings out of order: {a} before {b}");
    }
    // Nobody met the same opponent twice in a row (six players, all active).
    for (pid, opp) in &opponents {
        for w in opp.windows(2) {
            assert_ne!(w[0], w[1], "{pid} met {} twice in a row: {games:?}", w[0]);
        }
    }
    fin
}

#[tokio::test]
async fn a_short_arena_scores_like_a_recomputation_from_its_games() {
    let server = server();
    let mut clients = Vec::new();
    for i in 0..6 {
        clients.push(Client::guest(&server, &format!("p{i}")).await);
    }
    let created = clients[0]
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":5000,"increment_ms":0},"rated":false,
            "starts_in_ms":1500,"duration_ms":14000,"visibility":"public","name":"Test arena",
            "berserk":true,"min_draw_plies":2}),
        )
        .await;
    let mut view = ArenaView::from_answer(&created);
    let id = view.id.clone();
    assert_eq!(view.doc["status"], "scheduled");
    assert_eq!(
        view.doc["cutoff_at"].as_u64().unwrap(),
        view.doc["ends_at"].as_u64().unwrap() - 5000
    );
    // The lobby lists it.
    let mut watcher = Client::guest(&server, "watcher").await;
    let mut lobby = LobbyView::watch(&mut watcher).await;
    lobby
        .until(&mut watcher, |d| {
            d["arenas"][id.as_str()]["name"] == "Test arena"
        })
        .await;
    for c in clients.iter_mut() {
        ok(&c.request(json!({"t":"arena.join","id":id})).await);
    }
    let played = direct(
        &server,
        &mut clients,
        &mut HashMap::new(),
        &id,
        Stop::Finished,
        Some(&mut view),
    )
    .await;
    assert!(played >= 6, "only {played} games were played");
    let fin = final_standings(&server, &id, &clients, 2).await;
    assert_eq!(
        fin["games"].as_object().unwrap().len(),
        played,
        "every paired game was played"
    );
    // The creator's document (snapshot + diffs) is the same.
    let deadline = Instant::now() + Duration::from_secs(3);
    while view.doc != fin && Instant::now() < deadline {
        if let Some(d) = recv_within(&mut clients[0], Duration::from_millis(200), |m| {
            m["t"] == "arena.diff"
        })
        .await
        {
            view.apply(&d);
        }
    }
    assert_eq!(view.doc, fin, "the watched document equals the served one");
    let players = fin["players"].as_array().expect("players");
    let streaks = players
        .iter()
        .filter(|p| {
            p["sheet"]
                .as_str()
                .unwrap()
                .split(' ')
                .any(|x| x == "4" || x == "5")
        })
        .count();
    assert!(streaks > 0, "no streak in {players:?}");
    assert!(
        players
            .iter()
            .any(|p| p["sheet"].as_str().unwrap().split(' ').any(|x| x == "5")),
        "no berserk win on fire (5 points) in {players:?}"
    );
    // The lobby no longer lists the finished arena.
    lobby
        .until(&mut watcher, |d| d["arenas"].get(id.as_str()).is_none())
        .await;
}

#[tokio::test]
async fn arena_requests_refuse_what_is_not_allowed() {
    let server = server();
    let mut a = Client::guest(&server, "ann").await;
    let mut b = Client::guest(&server, "bob").await;
    let base = json!({"t":"arena.create","kind":"unane","duration_ms":60000,
        "starts_in_ms":60000,"clock":{"kind":"fischer","initial_ms":60000,"increment_ms":0}});
    for (field, value) in [
        ("duration_ms", json!(5000)),
        ("kind", json!("chess")),
        ("clock", json!({"kind":"none"})),
    ] {
        let mut req = base.clone();
        req[field] = value;
        req["berserk"] = json!(true);
        let e = a.request(req).await;
        assert_eq!(e["code"], "invalid_options", "{e}");
    }
    let mut req = base.clone();
    req["bots"] = json!(true);
    req["rated"] = json!(true);
    assert_eq!(a.request(req).await["code"], "invalid_options");
    // Computer players join only arenas that take them.
    let mut bot = Client::connect(&server).await;
    let w = bot
        .request(json!({"t":"hello","protocol":1,"name":"botty","bot":true}))
        .await;
    assert_eq!(w["t"], "welcome", "{w}");
    let no_bots = ArenaView::from_answer(&a.request(base.clone()).await);
    let e = bot.request(json!({"t":"arena.join","id":no_bots.id})).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    let mut req = base.clone();
    req["bots"] = json!(true);
    let bots = ArenaView::from_answer(&a.request(req).await);
    assert_eq!(bots.doc["bots"], true);
    ok(&bot.request(json!({"t":"arena.join","id":bots.id})).await);
    let w = bot.request(json!({"t":"arena.watch","id":bots.id})).await;
    assert_eq!(w["doc"]["players"][0]["bot"], true, "{w}");
    // A private arena: seen by its code only.
    let mut req = base.clone();
    req["visibility"] = json!("private");
    let created = a.request(req).await;
    let view = ArenaView::from_answer(&created);
    let code = view.doc["code"]
        .as_str()
        .expect("a private arena's code")
        .to_string();
    let e = b.request(json!({"t":"arena.watch","id":view.id})).await;
    assert_eq!(e["code"], "not_found", "{e}");
    let (status, _) = server.http_get(&format!("/api/arenas/{}", view.id));
    assert_eq!(status, 404);
    let (status, _) = server.http_get(&format!("/api/arenas/{}?code={code}", view.id));
    assert_eq!(status, 200);
    let w = b
        .request(json!({"t":"arena.watch","code":code.to_lowercase()}))
        .await;
    assert_eq!(w["t"], "arena", "{w}");
    ok(&b.request(json!({"t":"arena.join","code":code})).await);
    // A player of the private arena watches it by id (a game record's link has no code),
    // and its page is served without the code; the page's websocket decides what it shows,
    // the API still wants the code, and an unknown id is a 404 page.
    let w = b.request(json!({"t":"arena.watch","id":view.id})).await;
    assert_eq!(w["t"], "arena", "{w}");
    let (status, page) = server.http_get(&format!("/t/{}", view.id));
    assert_eq!(status, 200, "{page}");
    assert!(
        !page.contains(&code),
        "the page itself tells nothing: {page}"
    );
    assert_eq!(server.http_get(&format!("/api/arenas/{}", view.id)).0, 404);
    let (status, page) = server.http_get("/t/anope00000000");
    assert_eq!(status, 404);
    assert!(page.contains("No such arena"), "{page}");
    // Only the creator cancels, before the start; then nobody joins.
    let e = b.request(json!({"t":"arena.cancel","id":view.id})).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    ok(&a.request(json!({"t":"arena.cancel","id":view.id})).await);
    let diff = b
        .recv_where(|m| m["t"] == "arena.diff" && m["patch"].to_string().contains("cancelled"))
        .await;
    assert_eq!(diff["id"], view.id.as_str());
    let e = b.request(json!({"t":"arena.join","id":view.id})).await;
    assert_eq!(e["code"], "conflict", "{e}");
    let e = a.request(json!({"t":"arena.cancel","id":view.id})).await;
    assert_eq!(e["code"], "conflict", "{e}");
    let e = b.request(json!({"t":"arena.pause","id":"anope"})).await;
    assert_eq!(e["code"], "not_found", "{e}");
    ok(&b.request(json!({"t":"arena.unwatch","id":view.id})).await);
    // Berserk outside arenas is refused and changes nothing.
    let room = a
        .request(
            json!({"t":"room.create","kind":"unane","visibility":"public",
            "clock":{"kind":"fischer","initial_ms":60000,"increment_ms":0}}),
        )
        .await;
    let code = room["room"]["code"].as_str().unwrap().to_string();
    b.request(json!({"t":"room.join","code":code})).await;
    let started = a.recv_where(|m| m["t"] == "game.started").await;
    assert!(started.get("arena").is_none(), "{started}");
    let game = started["game_id"].as_str().unwrap();
    let e = a.request(json!({"t":"game.berserk","game_id":game})).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    let (_, doc) = server.api_game(game, None);
    assert!(doc.get("arena").is_none(), "{doc}");
    assert_eq!(doc["clock"]["remaining_ms"]["white"], 60000);
}

/// A server over `redis` with fast pairing waves.
fn redis_server(redis: &stoa_tests::redis::RedisServer, extra: &[&str]) -> Server {
    let mut args = redis.server_args("arena");
    args.extend(["--queue-wave-ms", "200"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&refs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_goes_on_after_a_restart_over_redis() {
    let redis = stoa_tests::redis::RedisServer::start();
    let server = redis_server(&redis, &[]);
    let mut clients = Vec::new();
    for i in 0..4 {
        clients.push(Client::guest(&server, &format!("r{i}")).await);
    }
    let created = clients[0]
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":500,"duration_ms":14000,"berserk":true,"min_draw_plies":2}),
        )
        .await;
    let id = ArenaView::from_answer(&created).id;
    for c in clients.iter_mut() {
        ok(&c.request(json!({"t":"arena.join","id":id})).await);
    }
    let mut seats = HashMap::new();
    let before_kill = direct(
        &server,
        &mut clients,
        &mut seats,
        &id,
        Stop::Played(2),
        None,
    )
    .await;
    assert!(
        before_kill >= 2,
        "only {before_kill} games before the restart"
    );
    let (_, before) = server.http_get(&format!("/api/arenas/{id}"));
    let before: Value = serde_json::from_str(&before).expect("JSON");
    let tokens: Vec<String> = clients.iter().map(|c| c.token.clone()).collect();
    drop(clients);
    drop(server); // kill -9
    let server = redis_server(&redis, &[]);
    let (status, after) = server.http_get(&format!("/api/arenas/{id}"));
    assert_eq!(status, 200, "the arena is back");
    let after: Value = serde_json::from_str(&after).expect("JSON");
    let scores = |d: &Value| -> Vec<(Value, Value)> {
        let mut v: Vec<(Value, Value)> = d["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].clone(), p["sheet"].clone()))
            .collect();
        v.sort_by_key(|(id, _)| id.to_string());
        v
    };
    // The last game's end may be scored just after the snapshot before the kill: each
    // sheet after the restart goes on from the sheet before it, never loses a point.
    let (after_scores, before_scores) = (scores(&after), scores(&before));
    assert_eq!(after_scores.len(), before_scores.len());
    for ((id_a, a), (id_b, b)) in after_scores.iter().zip(&before_scores) {
        assert_eq!(id_a, id_b);
        let (a, b) = (a.as_str().unwrap(), b.as_str().unwrap());
        assert!(
            a == b || (b.is_empty() && !a.contains(' ')) || a.starts_with(&format!("{b} ")),
            "no point lost by the restart: {id_a} had {b:?}, has {a:?}"
        );
        assert!(
            a.split(' ').count() <= b.split(' ').count() + 1,
            "at most the game in flight: {id_a} had {b:?}, has {a:?}"
        );
    }
    let mut clients = Vec::new();
    for t in &tokens {
        clients.push(Client::with_token(&server, t).await);
    }
    let after_restart = direct(&server, &mut clients, &mut seats, &id, Stop::Finished, None).await;
    assert!(
        after_restart >= 2,
        "only {after_restart} games after the restart: {}",
        server.http_get(&format!("/api/arenas/{id}")).1
    );
    let fin = final_standings(&server, &id, &clients, 2).await;
    let total: u64 = fin["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["games"].as_u64().unwrap())
        .sum();
    assert!(
        total >= 2 * (before_kill + after_restart) as u64 - 4,
        "{fin}"
    );
}

/// A change answered with an error changed nothing: a pause that could not be stored
/// while Redis was down is not written later with the next player's join.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_refused_during_a_redis_outage_is_not_kept() {
    let mut redis = stoa_tests::redis::RedisServer::start();
    let server = redis_server(&redis, &[]);
    let mut clients = Vec::new();
    for i in 0..3 {
        clients.push(Client::guest(&server, &format!("o{i}")).await);
    }
    let created = clients[0]
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":600000,"duration_ms":600000}),
        )
        .await;
    let id = ArenaView::from_answer(&created).id;
    for c in clients.iter_mut().take(2) {
        ok(&c.request(json!({"t":"arena.join","id":id})).await);
    }
    redis.kill9();
    let refused = clients[1].request(json!({"t":"arena.pause","id":id})).await;
    assert_eq!(refused["t"], "error", "{refused}");
    redis.restart();
    stoa_tests::redis::wait_health(&server, 200, Duration::from_secs(20));
    let joined = settled(&mut clients[2], json!({"t":"arena.join","id":id})).await;
    ok(&joined.expect("an answer"));
    let (status, body) = server.http_get(&format!("/api/arenas/{id}"));
    assert_eq!(status, 200, "{body}");
    let doc: Value = serde_json::from_str(&body).expect("JSON");
    let mut players: Vec<(String, bool)> = doc["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["paused"].as_bool().unwrap(),
            )
        })
        .collect();
    players.sort();
    let expected = [("o0", false), ("o1", false), ("o2", false)].map(|(n, p)| (n.to_string(), p));
    assert_eq!(players, expected, "{doc}");
}

/// A cluster node over `redis` (short leases, fast pairing waves).
fn cluster_node(redis: &stoa_tests::redis::RedisServer, id: &str) -> Server {
    redis_server(redis, &["--cluster", "--node-id", id, "--lease-ms", "1500"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_players_on_two_nodes_and_the_pairing_node_dies() {
    let redis = stoa_tests::redis::RedisServer::start();
    let mut a = cluster_node(&redis, "na");
    let b = cluster_node(&redis, "nb");
    let mut clients = Vec::new();
    for i in 0..16 {
        let node = if i % 2 == 0 { &a } else { &b };
        clients.push(Client::guest(node, &format!("c{i}")).await);
    }
    let created = clients[0]
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":1000,"duration_ms":19000,"berserk":true,"min_draw_plies":2}),
        )
        .await;
    let id = ArenaView::from_answer(&created).id;
    for c in clients.iter_mut() {
        ok(&c.request(json!({"t":"arena.join","id":id})).await);
    }
    let mut seats = HashMap::new();
    let before = direct(&a, &mut clients, &mut seats, &id, Stop::Played(8), None).await;
    assert!(before >= 8, "only {before} games before the node died");
    // The node that created the arena (and paired on it) dies; its players come back on
    // the other node.
    a.kill9();
    for i in (0..16).step_by(2) {
        let token = clients[i].token.clone();
        clients[i] = Client::with_token(&b, &token).await;
    }
    let after = direct(&b, &mut clients, &mut seats, &id, Stop::Finished, None).await;
    assert!(after >= 8, "only {after} games after the node died");
    let fin = final_standings(&b, &id, &clients, 2).await;
    assert_eq!(fin["players"].as_array().unwrap().len(), 16);
}

/// A paired player whose first move never comes (away from the board, or connected to a
/// node that died) is taken out of the pool when the game aborts for it, so nobody waits
/// out a first-action window for them again; joining again puts them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_never_moves_is_paused_until_joining_again() {
    let server = server();
    let mut x = Client::guest(&server, "x").await;
    let mut y = Client::guest(&server, "y").await;
    let created = x
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":2000,"increment_ms":0},
            "starts_in_ms":300,"duration_ms":30000}),
        )
        .await;
    let id = ArenaView::from_answer(&created).id;
    for c in [&mut x, &mut y] {
        ok(&c.request(json!({"t":"arena.join","id":id})).await);
    }
    let started = |m: &Value| m["t"] == "game.started";
    let gx = recv_within(&mut x, Duration::from_secs(5), started)
        .await
        .expect("x paired");
    let gy = recv_within(&mut y, Duration::from_secs(5), started)
        .await
        .expect("y paired");
    assert_eq!(gx["game_id"], gy["game_id"]);
    let game = gx["game_id"].as_str().unwrap().to_string();
    // Whoever moves first does not (`game.legal` lists the position's moves to both).
    let snap = x.request(json!({"t":"game.watch","game_id":game})).await;
    assert_eq!(snap["t"], "game.snapshot", "{snap}");
    let to_act = snap["doc"]["to_act"].as_str().expect("to_act");
    let x_first = gx["side"] == to_act;
    let (absent, present) = if x_first {
        (&x.player_id, &y.player_id)
    } else {
        (&y.player_id, &x.player_id)
    };
    let (absent, present) = (absent.clone(), present.clone());
    // Aborted after the first-action window (the initial time, 2 s).
    let deadline = Instant::now() + Duration::from_secs(8);
    let doc = loop {
        let (status, doc) = server.http_get(&format!("/api/arenas/{id}"));
        assert_eq!(status, 200);
        let doc: Value = serde_json::from_str(&doc).expect("JSON");
        // The abort may be scored from the final document a moment before the live
        // report (which alone names the absent player) pauses them.
        let paused = doc["players"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["paused"] == true);
        if doc["games"][game.as_str()]["status"] == "aborted" && paused {
            break doc;
        }
        assert!(Instant::now() < deadline, "not aborted: {doc}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let entry = |pid: &str| {
        doc["players"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == pid)
            .cloned()
            .expect("in the arena")
    };
    assert_eq!(entry(&absent)["paused"], true, "{doc}");
    assert_eq!(entry(&present)["paused"], false, "{doc}");
    assert_eq!(
        entry(&absent)["sheet"],
        "",
        "an abort scores nothing: {doc}"
    );
    assert_eq!(
        doc["games"].as_object().unwrap().len(),
        1,
        "nobody to pair: {doc}"
    );
    // Back at the board: paired again.
    let back = if x_first { &mut x } else { &mut y };
    ok(&back.request(json!({"t":"arena.join","id":id})).await);
    let again = recv_within(back, Duration::from_secs(5), started)
        .await
        .expect("paired again");
    assert_ne!(again["game_id"], game.as_str());
}

/// An arena over (no game in progress) is dropped from memory and read again from the
/// store when next watched: its document comes back under the seq its watchers hold, never
/// a lower one (a client keeps the document with the higher seq, and would ignore it).
async fn a_dropped_arena_keeps_its_seq(server: &Server) {
    let mut c = Client::guest(server, "seqw").await;
    let created = c
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":0,"duration_ms":10000}),
        )
        .await;
    let mut view = ArenaView::from_answer(&created);
    let id = view.id.clone();
    // Followed to its end: scheduled or running, then finished.
    let deadline = Instant::now() + Duration::from_secs(15);
    while view.doc["status"] != "finished" {
        assert!(Instant::now() < deadline, "not finished: {}", view.doc);
        let diff = recv_within(&mut c, Duration::from_millis(500), |m| {
            m["t"] == "arena.diff" && m["id"] == id.as_str()
        })
        .await;
        if let Some(d) = diff {
            view.apply(&d);
        }
    }
    let held = view.seq;
    assert!(held > 0, "{}", view.doc);
    // Watched again until well after its task dropped it (at once after the end).
    let mut w = Client::guest(server, "seqw2").await;
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let again = w.request(json!({"t":"arena.watch","id":id})).await;
        let again = ArenaView::from_answer(&again);
        assert!(
            again.seq >= held,
            "the seq went back from {held} to {}: {}",
            again.seq,
            again.doc
        );
        assert_eq!(again.doc, view.doc, "the same final document");
        w.request(json!({"t":"arena.unwatch","id":id})).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn a_finished_arena_watched_again_keeps_its_seq() {
    a_dropped_arena_keeps_its_seq(&server()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_arena_watched_again_keeps_its_seq_over_redis() {
    let redis = stoa_tests::redis::RedisServer::start();
    a_dropped_arena_keeps_its_seq(&redis_server(&redis, &[])).await;
}
