//! Game actors with clocks on tokio's paused, auto-advancing time: the default 30-second
//! first-action abort, flags decided by the server with nobody connected, turn accounting
//! across kinds (Akunur bonus placements, pie-rule swaps), abandonment claims, and the
//! shutdown pause. Time is virtual, so these tests take milliseconds and are exact.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use stoa_protocol::wire::{ErrorCode, SeatPlayer, Visibility};
use stoa_server::config::Config;
use stoa_server::domain::setup::GameSetup;
use stoa_server::game::{Act, Answer, Command, GameHandle, NewGame};
use stoa_server::net::outbound::ConnHandle;
use stoa_server::net::socket::RawSocket;
use stoa_server::services::hub::Hub;
use stoa_server::store::memory::MemoryStore;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

/// What the watching connection was sent.
enum Outbound {
    Text(String),
    Ping,
    Other,
}

/// A socket that takes every byte and hands on each frame written into it, decoded.
struct Capture {
    tx: mpsc::UnboundedSender<Outbound>,
    partial: std::sync::Mutex<Vec<u8>>,
}

impl RawSocket for Capture {
    fn try_write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        use tungstenite::protocol::frame::coding::{Control, Data, OpCode};
        use tungstenite::protocol::frame::FrameHeader;
        let mut buf = self.partial.lock().unwrap();
        let mut n = 0;
        for b in bufs {
            buf.extend_from_slice(b);
            n += b.len();
        }
        loop {
            let mut cursor = std::io::Cursor::new(&buf[..]);
            let Some((header, len)) = FrameHeader::parse(&mut cursor).unwrap() else {
                break;
            };
            let start = cursor.position() as usize;
            let end = start + len as usize;
            if buf.len() < end {
                break;
            }
            let frame = match header.opcode {
                OpCode::Data(Data::Text) => {
                    Outbound::Text(String::from_utf8(buf[start..end].to_vec()).unwrap())
                }
                OpCode::Control(Control::Ping) => Outbound::Ping,
                _ => Outbound::Other,
            };
            let _ = self.tx.send(frame);
            buf.drain(..end);
        }
        Ok(n)
    }
    fn poll_write_ready(
        &self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn try_read(&self, _buf: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::WouldBlock.into())
    }
    fn poll_read_ready(
        &self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }
}

const ALICE: &str = "p-alice";
const BOB: &str = "p-bob";

/// A hub on paused time, a game between Alice (first side) and Bob, and a subscriber
/// connection (a spectator with no player) receiving every frame.
struct Fixture {
    hub: Arc<Hub>,
    game: GameHandle,
    rx: mpsc::UnboundedReceiver<Outbound>,
    doc: Value,
    seq: u64,
    /// The last `game.crowd` received.
    crowd: Value,
    start: Instant,
    _shutdown: watch::Sender<bool>,
}

fn seat(id: &str) -> SeatPlayer {
    SeatPlayer {
        id: id.to_string(),
        name: id.to_string(),
        rating: None,
        bot: false,
    }
}

impl Fixture {
    async fn new(kind: &str, options: Value, clock: Value, config: Config) -> Fixture {
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let hub = Arc::new(Hub::new(config, Arc::new(MemoryStore::new()), shutdown_rx));
        Fixture::on_hub(hub, shutdown_tx, kind, options, clock).await
    }

    async fn on_hub(
        hub: Arc<Hub>,
        shutdown: watch::Sender<bool>,
        kind: &str,
        options: Value,
        clock: Value,
    ) -> Fixture {
        let start = Instant::now();
        let game = hub
            .create_game(NewGame {
                id: format!("g-{kind}").into(),
                setup: GameSetup::stored(kind, &options, &clock).expect("valid settings"),
                rated: false,
                visibility: Visibility::Public,
                code: None,
                players: [seat(ALICE), seat(BOB)],
                rematch_of: None,
                arena: None,
            })
            .await
            .expect("game created");
        let (tx, rx) = mpsc::unbounded_channel();
        let socket = Arc::new(Capture {
            tx,
            partial: Default::default(),
        });
        let conn = Arc::new(ConnHandle::new(
            99,
            socket,
            4096,
            hub.metrics.clone(),
            hub.time.clone(),
        ));
        // A connection of Alice's (so it does not count as a spectator).
        conn.set_player(ALICE.into());
        game.tx
            .send(Command::Watch {
                conn,
                rid: None,
                since: None,
                code: None,
                reply: None,
            })
            .await
            .expect("actor alive");
        let mut f = Fixture {
            hub,
            game,
            rx,
            doc: Value::Null,
            seq: 0,
            crowd: Value::Null,
            start,
            _shutdown: shutdown,
        };
        let snap = f.raw().await;
        assert_eq!(snap["t"], "game.snapshot");
        f.doc = snap["doc"].clone();
        f.seq = snap["seq"].as_u64().expect("seq");
        // The crowd follows the snapshot at once (protocol/docs/PROTOCOL.md version 2).
        let crowd = f.raw().await;
        assert_eq!(crowd["t"], "game.crowd", "{crowd}");
        f.crowd = crowd;
        f
    }

    async fn raw(&mut self) -> Value {
        loop {
            match tokio::time::timeout(Duration::from_secs(3600), self.rx.recv()).await {
                Ok(Some(Outbound::Text(t))) => return serde_json::from_str(&t).unwrap(),
                Ok(Some(_)) => continue,
                Ok(None) => panic!("connection queue closed"),
                Err(_) => panic!("no frame within an hour of virtual time"),
            }
        }
    }

    /// The next frame that is not a `game.crowd` (kept in `crowd`: unversioned, beside the
    /// document these tests follow).
    async fn frame(&mut self) -> Value {
        loop {
            let v = self.raw().await;
            if v["t"] != "game.crowd" {
                return v;
            }
            self.crowd = v;
        }
    }

    /// Applies the next diff; returns it.
    async fn next_diff(&mut self) -> Value {
        let d = self.frame().await;
        assert_eq!(d["t"], "game.diff", "{d}");
        assert_eq!(d["seq"].as_u64(), Some(self.seq + 1));
        let patch: json_patch::Patch = serde_json::from_value(d["patch"].clone()).unwrap();
        json_patch::patch(&mut self.doc, &patch).unwrap();
        self.seq += 1;
        d
    }

    /// Applies diffs until the game has ended; returns the virtual time it took.
    async fn until_ended(&mut self) -> Duration {
        while self.doc["status"]["state"] != "ended" {
            self.next_diff().await;
        }
        self.start.elapsed()
    }

    async fn act(&self, player: &str, act: Act) -> Result<Answer, stoa_server::error::ApiError> {
        let (tx, rx) = oneshot::channel();
        self.game
            .tx
            .send(Command::Act {
                player_id: player.into(),
                act,
                reply: tx,
            })
            .await
            .expect("actor alive");
        rx.await.expect("reply")
    }

    async fn legal(&self) -> Vec<String> {
        let (tx, rx) = oneshot::channel();
        self.game
            .tx
            .send(Command::Legal {
                player_id: None,
                reply: tx,
            })
            .await
            .expect("actor alive");
        match rx.await.expect("reply") {
            Ok(Answer::Legal { moves, .. }) => moves,
            other => panic!("{other:?}"),
        }
    }

    /// Plays `mv` for `player` and applies diffs up to the answered seq.
    async fn play(&mut self, player: &str, mv: &str) {
        let seq = match self
            .act(
                player,
                Act::Move {
                    mv: mv.to_string(),
                    seq: None,
                },
            )
            .await
        {
            Ok(Answer::Ok { seq }) => seq,
            other => panic!("move {mv} by {player}: {other:?}"),
        };
        while self.seq < seq {
            self.next_diff().await;
        }
    }

    fn player_to_act(&self) -> Option<String> {
        let side = self.doc["to_act"].as_str()?;
        self.doc["players"][side]["id"].as_str().map(str::to_string)
    }

    fn now_ms(&self) -> u64 {
        self.hub.time.now_ms()
    }
}

fn fischer(initial_ms: u64, increment_ms: u64) -> Value {
    json!({"kind":"fischer","initial_ms":initial_ms,"increment_ms":increment_ms})
}

#[tokio::test(start_paused = true)]
async fn nobody_moves_the_game_aborts_at_the_default_thirty_seconds() {
    let mut f = Fixture::new("staku", json!({}), fischer(300_000, 0), Config::default()).await;
    let t0 = f.now_ms();
    assert_eq!(f.doc["clock"]["first_action_deadline"], t0 + 30_000);
    assert_eq!(f.doc["clock"]["running"], Value::Null);
    let took = f.until_ended().await;
    assert_eq!(took, Duration::from_secs(30));
    assert_eq!(
        f.doc["status"],
        json!({"state":"ended","winner":null,"reason":"aborted"})
    );
    assert_eq!(f.doc["clock"]["first_action_deadline"], Value::Null);
    assert_eq!(f.doc["rated"], false);
}

#[tokio::test(start_paused = true)]
async fn the_second_side_gets_its_own_window_and_an_untimed_game_aborts_too() {
    let mut f = Fixture::new(
        "staku",
        json!({}),
        json!({"kind":"none"}),
        Config::default(),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let mv = f.legal().await[0].clone();
    f.play(ALICE, &mv).await;
    assert_eq!(
        f.doc["clock"]["first_action_deadline"],
        f.now_ms() + 30_000,
        "{}",
        f.doc["clock"]
    );
    assert_eq!(f.until_ended().await, Duration::from_secs(50));
    assert_eq!(f.doc["status"]["reason"], "aborted");
}

#[tokio::test(start_paused = true)]
async fn a_side_that_stops_moving_loses_on_time_with_nobody_connected() {
    let mut f = Fixture::new("staku", json!({}), fischer(2_000, 1_000), Config::default()).await;
    assert_eq!(f.crowd["online"], json!({"white": false, "black": false}));
    assert!(
        f.doc.get("online").is_none(),
        "the crowd is not in the document"
    );
    let names = ["white", "black"];
    for (i, p) in [ALICE, BOB, ALICE].iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(f.player_to_act().as_deref(), Some(*p));
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
        let clock = &f.doc["clock"];
        if i == 0 {
            // No clock runs until each side has made its first action.
            assert_eq!(clock["running"], Value::Null, "{clock}");
            // Bob's window: 30 s, or his initial time (2 s) if shorter.
            assert_eq!(clock["first_action_deadline"], f.now_ms() + 2_000);
            continue;
        }
        let next = names[(i + 1) % 2];
        assert_eq!(clock["running"], next, "{clock}");
        assert_eq!(clock["since"], f.now_ms());
        assert_eq!(clock["first_action_deadline"], Value::Null);
        if i == 2 {
            // Alice's third action was her first timed turn: 500 ms used, +1000.
            assert_eq!(
                clock["remaining_ms"],
                json!({"white": 2_500, "black": 2_000})
            );
        }
    }
    // Bob never moves again: he flags 2000 ms after his turn started.
    let since = f.doc["clock"]["since"].as_u64().unwrap();
    let before = f.start.elapsed();
    let took = f.until_ended().await - before;
    assert_eq!(took, Duration::from_millis(2_000));
    assert_eq!(f.now_ms(), since + 2_000);
    assert_eq!(
        f.doc["status"],
        json!({"state":"ended","winner":"white","reason":"timeout"})
    );
    assert_eq!(f.doc["clock"]["remaining_ms"]["black"], 0);
    assert_eq!(f.doc["clock"]["running"], Value::Null);
    // A move after the flag gets game_over.
    let late = f
        .act(
            BOB,
            Act::Move {
                mv: "a1".into(),
                seq: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(late.code.as_str(), "game_over");
}

#[tokio::test(start_paused = true)]
async fn lag_grace_delays_the_flag_by_the_measured_transit() {
    let mut f = Fixture::new("staku", json!({}), fischer(2_000, 0), Config::default()).await;
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    // Alice's connection measured a 300 ms round trip: 150 ms of grace.
    f.game
        .tx
        .send(Command::Rtt {
            player_id: ALICE.into(),
            rtt_ms: 300,
        })
        .await
        .unwrap();
    let since = f.doc["clock"]["since"].as_u64().unwrap();
    f.until_ended().await;
    assert_eq!(f.now_ms(), since + 2_150);
    assert_eq!(f.doc["status"]["winner"], "black");
    assert_eq!(f.doc["status"]["reason"], "timeout");
}

/// An Akunur line of play that ends with a bonus placement: greedy play (take a token,
/// else capture, else occupy a corner, else a seeded choice) found by the rules engine.
fn akunur_line_to_a_bonus() -> Vec<String> {
    use stoa_protocol::akunur::{Akunur, Cell, Options};
    use stoa_protocol::{Game, Side};
    let stones = |g: &Akunur, side: Side| {
        (0..61)
            .filter_map(Cell::from_index)
            .filter(|&c| g.stone_at(c) == Some(side))
            .count()
    };
    let corners = |g: &Akunur, side: Side| {
        ["a1", "e1", "i5", "i9", "e9", "a5"]
            .iter()
            .filter_map(|c| Cell::parse(c))
            .filter(|&c| g.stone_at(c) == Some(side))
            .count()
    };
    for seed in 0u64..40 {
        let mut g = Akunur::start(&Options::default());
        let mut line = Vec::new();
        for ply in 0..1_000u64 {
            let Some(me) = g.to_act() else { break };
            let was_bonus = g.bonus_pending();
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            let pick = (seed.wrapping_mul(7_919) ^ ply.wrapping_mul(104_729)) as usize;
            let mut best = (0, legal[pick % legal.len()]);
            for &a in &legal {
                let mut next = g.clone();
                next.apply(a);
                let score = if next.bonus_pending() && next.to_act() == Some(me) {
                    3
                } else if stones(&next, me.other()) < stones(&g, me.other()) {
                    2
                } else if corners(&next, me) > corners(&g, me) {
                    1
                } else {
                    0
                };
                if score > best.0 {
                    best = (score, a);
                }
            }
            line.push(g.format_action(best.1));
            g.apply(best.1);
            if was_bonus {
                return line;
            }
        }
    }
    panic!("no bonus placement found");
}

/// The clock's turn changes exactly when the person to act changes: `since` moves then
/// and only then (Akunur: a capture on a corner owes a bonus placement by the same side;
/// Ūnane and Akron: the pie-rule swap keeps the colour to act but changes the person).
/// Plays `line` first, then seeded choices. Returns how many actions kept the same person
/// to act, and how many were swaps.
async fn turns_follow_the_person(
    kind: &str,
    options: Value,
    line: &[String],
    seed: u64,
    plies: usize,
) -> (usize, usize) {
    let mut f = Fixture::new(kind, options, fischer(600_000, 0), Config::default()).await;
    let mut same_person_again = 0;
    let mut swaps = 0;
    let mut ply = 0;
    while f.doc["status"]["state"] == "playing" && ply < plies {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let mover = f.player_to_act().unwrap();
        let legal = f.legal().await;
        let mv = match line.get(ply) {
            Some(mv) => mv.clone(),
            None => {
                legal[(seed as usize).wrapping_mul(31).wrapping_add(ply * 7) % legal.len()].clone()
            }
        };
        let since_before = f.doc["clock"]["since"].clone();
        let mover_side_before = f.doc["to_act"].clone();
        f.play(&mover, &mv).await;
        ply += 1;
        if f.doc["status"]["state"] != "playing" {
            break;
        }
        let next = f.player_to_act().unwrap();
        let clock = &f.doc["clock"];
        if next == mover {
            same_person_again += 1;
            assert_eq!(clock["since"], since_before, "{kind} {mv}: same turn");
        } else {
            if mv == "swap" {
                swaps += 1;
                assert_eq!(f.doc["to_act"], mover_side_before, "swap keeps the colour");
            }
            if ply >= 2 {
                assert_eq!(clock["since"], f.now_ms(), "{kind} {mv}: new turn");
                let running = clock["running"].as_str().unwrap();
                assert_eq!(f.doc["players"][running]["id"], next.as_str());
            }
        }
    }
    (same_person_again, swaps)
}

#[tokio::test(start_paused = true)]
async fn akunur_bonus_placements_are_part_of_the_turn() {
    let line = akunur_line_to_a_bonus();
    let (same, _) = turns_follow_the_person("akunur", json!({}), &line, 5, line.len()).await;
    assert!(same >= 1, "the line ends with a bonus placement");
}

#[tokio::test(start_paused = true)]
async fn unane_swap_is_a_turn() {
    let mut f = Fixture::new(
        "unane",
        json!({"width": 4, "height": 3}),
        fischer(5_000, 0),
        Config::default(),
    )
    .await;
    let first = f.legal().await[0].clone();
    f.play(ALICE, &first).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(f.legal().await.contains(&"swap".to_string()));
    f.play(BOB, "swap").await;
    // Alice made the first move and now plays white, to act; her clock runs.
    assert_eq!(f.doc["players"]["white"]["id"], ALICE);
    assert_eq!(f.doc["to_act"], "white");
    assert_eq!(f.doc["clock"]["running"], "white");
    assert_eq!(f.doc["clock"]["since"], f.now_ms());
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let mv = f.legal().await[0].clone();
    f.play(ALICE, &mv).await;
    assert_eq!(
        f.doc["clock"]["remaining_ms"],
        json!({"white": 3_800, "black": 5_000})
    );
    let swap_first = |kind: &str, options: &Value| {
        let mut g = stoa_protocol::kind(kind).unwrap().start(options).unwrap();
        let first = g.legal_notations()[0].clone();
        g.play(&first).unwrap();
        assert!(g.legal_notations().contains(&"swap".to_string()));
        vec![first, "swap".to_string()]
    };
    for (kind, options) in [
        ("unane", json!({"width": 4, "height": 3})),
        ("akron", json!({"size": 4})),
    ] {
        let line = swap_first(kind, &options);
        let (_, swaps) = turns_follow_the_person(kind, options, &line, 3, 100).await;
        assert_eq!(swaps, 1, "{kind}");
    }
}

#[tokio::test(start_paused = true)]
async fn claims_wait_for_the_abandonment_timeout_and_reconnection_cancels() {
    let mut f = Fixture::new("staku", json!({}), fischer(300_000, 0), Config::default()).await;
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    // Alice (to act) has never been connected; Bob is online from now.
    f.game
        .tx
        .send(Command::Presence {
            player_id: BOB.into(),
            online: true,
        })
        .await
        .unwrap();
    let offline_since = f.start;
    tokio::time::sleep_until(offline_since + Duration::from_secs(60)).await;
    let early = f.act(BOB, Act::Claim).await.unwrap_err();
    assert_eq!(early.code.as_str(), "conflict");
    assert!(
        early.message.contains("claim after 60.0 s"),
        "{}",
        early.message
    );
    // Alice comes back and leaves again: the wait starts over.
    for online in [true, false] {
        f.game
            .tx
            .send(Command::Presence {
                player_id: ALICE.into(),
                online,
            })
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_secs(61)).await;
    // The configured timeout (60 s) is shorter than Alice's remaining 300 - 121 s.
    match f.act(BOB, Act::Claim).await {
        Ok(Answer::Ok { .. }) => {}
        other => panic!("{other:?}"),
    }
    f.until_ended().await;
    assert_eq!(
        f.doc["status"],
        json!({"state":"ended","winner":"black","reason":"abandoned"})
    );
    // The clock stopped with Alice charged what she used (121 s).
    assert_eq!(f.doc["clock"]["remaining_ms"]["white"], 300_000 - 121_000);
}

#[tokio::test(start_paused = true)]
async fn the_claim_timeout_is_the_remaining_clock_when_shorter() {
    let mut f = Fixture::new("staku", json!({}), fischer(20_000, 0), Config::default()).await;
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    // Alice's 20 s run out before 60 s of absence: she flags (at 20 s) before any claim
    // could succeed; at 10 s the claim needs her remaining 10 s of absence.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let err = f.act(BOB, Act::Claim).await.unwrap_err();
    assert!(
        err.message.contains("claim after 10.0 s"),
        "{}",
        err.message
    );
    f.until_ended().await;
    assert_eq!(f.doc["status"]["reason"], "timeout");
}

#[tokio::test(start_paused = true)]
async fn shutdown_pauses_the_clock() {
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(
        Config::default(),
        Arc::new(MemoryStore::new()),
        shutdown_rx,
    ));
    let mut f = Fixture::on_hub(hub, shutdown_tx, "staku", json!({}), fischer(2_000, 0)).await;
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    assert_eq!(f.doc["clock"]["running"], "white");
    f.pings();
    f._shutdown.send(true).unwrap();
    // No flag falls while paused, and the pause itself is no document change (no event
    // is logged for it: a restart logs how long the clock stood still).
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(f.rx.try_recv().is_err());
    let mv = f.legal().await[0].clone();
    let refused = f.act(ALICE, Act::Move { mv, seq: None }).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unavailable);
    assert!(f.rx.try_recv().is_err());
    assert_eq!(f.doc["status"]["state"], "playing");
}

impl Fixture {
    /// Pings queued to the watching connection (Alice's) since the last look; other
    /// frames left queued are crowd updates, skipped.
    fn pings(&mut self) -> usize {
        let mut n = 0;
        while let Ok(frame) = self.rx.try_recv() {
            match frame {
                Outbound::Ping => n += 1,
                Outbound::Text(t) => assert!(t.contains("game.crowd"), "{t}"),
                Outbound::Other => {}
            }
        }
        n
    }
}

#[tokio::test(start_paused = true)]
async fn the_player_whose_clock_starts_is_pinged_at_most_once_per_interval() {
    let mut f = Fixture::new("staku", json!({}), fischer(600_000, 0), Config::default()).await;
    let ping_interval = Duration::from_millis(Config::default().ping_interval_ms);
    // First actions: no clock runs yet, nobody is measured.
    let mv = f.legal().await[0].clone();
    f.play(ALICE, &mv).await;
    assert_eq!(
        f.pings(),
        0,
        "no clock runs after the first side's first action"
    );
    let mv = f.legal().await[0].clone();
    f.play(BOB, &mv).await;
    assert_eq!(f.doc["clock"]["running"], "white");
    assert_eq!(
        f.pings(),
        1,
        "Alice's clock started: her connection is pinged"
    );
    // A quick exchange: her clock starts again within the interval, no second ping.
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    assert_eq!(f.pings(), 0, "pinged at most once per interval");
    // Nothing happens while she thinks: no ping, whatever the time.
    tokio::time::sleep(ping_interval * 3).await;
    assert_eq!(f.pings(), 0, "a game nobody moves in sends nothing");
    for p in [ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    assert_eq!(
        f.pings(),
        1,
        "her next turn after the interval: pinged again"
    );
}

#[tokio::test(start_paused = true)]
async fn an_untimed_game_pings_nobody() {
    let mut f = Fixture::new(
        "staku",
        json!({}),
        json!({"kind":"none"}),
        Config::default(),
    )
    .await;
    for p in [ALICE, BOB, ALICE, BOB] {
        let mv = f.legal().await[0].clone();
        f.play(p, &mv).await;
    }
    assert_eq!(f.pings(), 0, "no clock, no lag compensation to measure for");
}
