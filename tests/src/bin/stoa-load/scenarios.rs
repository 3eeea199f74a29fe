//! The scenarios: what each one sets up, drives and measures.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::measure::{
    cpu_busy_seconds, cpu_seconds, cpu_split, minor_faults, rss_kib, run_ns, Report,
};
use tokio::task::JoinSet;

use crate::conn::{is_type, seq_of, source, wall_now, Conn};
use crate::table::Table;

/// What every scenario needs to know.
pub struct Ctx {
    /// The server's address.
    pub addr: SocketAddr,
    /// The server's pid.
    pub pid: u32,
    /// Game kind.
    pub kind: String,
    /// Game options.
    pub options: Value,
    /// The games' clock (as in `room.create`).
    pub clock: Value,
    /// Every node's address and pid (one entry unless `--nodes` asked for a cluster).
    pub nodes: Vec<(SocketAddr, u32)>,
    /// The CPU the generator is pinned to (`None` when not pinned).
    pub load_cpu: Option<usize>,
}

impl Ctx {
    /// CPU seconds used so far by every node.
    fn cpu(&self) -> f64 {
        self.nodes.iter().map(|(_, pid)| cpu_seconds(*pid)).sum()
    }

    /// CPU seconds used so far by every node, from the scheduler's nanoseconds: exact
    /// where [`Ctx::cpu`] counts 10 ms ticks, for windows of a second or less.
    fn cpu_exact(&self) -> f64 {
        let ns: u64 = self.nodes.iter().map(|(_, pid)| run_ns(*pid)).sum();
        ns as f64 / 1e9
    }

    /// CPU seconds used so far in user space by every node.
    fn user_cpu(&self) -> f64 {
        self.nodes.iter().map(|(_, pid)| cpu_split(*pid).0).sum()
    }

    /// Resident memory of every node, KiB.
    fn rss(&self) -> u64 {
        self.nodes.iter().map(|(_, pid)| rss_kib(*pid)).sum()
    }

    /// Minor page faults of every node so far.
    fn faults(&self) -> u64 {
        self.nodes.iter().map(|(_, pid)| minor_faults(*pid)).sum()
    }

    /// Busy seconds of the generator's CPU so far (0 when it is not pinned).
    fn load_busy(&self) -> f64 {
        self.load_cpu.map_or(0.0, cpu_busy_seconds)
    }
}

/// Opens `n` connections (hello each), `parallel` at a time; with `watch`, each then
/// watches that game (and is dropped unless it gets the snapshot).
async fn open_many(
    addr: SocketAddr,
    first: usize,
    n: usize,
    parallel: usize,
    watch: Option<&str>,
) -> Vec<Conn> {
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let mut set = JoinSet::new();
        for j in i..(i + parallel).min(n) {
            let watch = watch.map(str::to_string);
            set.spawn(async move {
                let mut c = Conn::open(addr, source(first + j)).await?;
                if let Some(game_id) = watch {
                    let answer = c.request(json!({"t":"game.watch","game_id":game_id})).await;
                    if answer["t"] != "game.snapshot" {
                        return Err(std::io::Error::other(format!("game.watch: {answer}")));
                    }
                }
                Ok(c)
            });
        }
        i = (i + parallel).min(n);
        while let Some(r) = set.join_next().await {
            match r {
                Ok(Ok(c)) => out.push(c),
                Ok(Err(e)) => eprintln!("connection failed: {e}"),
                Err(e) => eprintln!("connection task failed: {e}"),
            }
        }
    }
    out
}

/// `idle`: N connections after hello; RSS per connection and CPU while they are held.
pub async fn idle(ctx: &Ctx, n: usize, hold_s: u64) -> Report {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss0 = rss_kib(ctx.pid);
    let conns = open_many(ctx.addr, 0, n, 200, None).await;
    // Let the server settle (first pings answered) before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss1 = rss_kib(ctx.pid);
    let cpu0 = ctx.cpu();
    // Hold them (`Conn::next` answers the server's pings).
    let held = conns.len();
    let mut set = JoinSet::new();
    for mut c in conns {
        set.spawn(async move { while c.next().await.is_some() {} });
    }
    tokio::time::sleep(Duration::from_secs(hold_s)).await;
    let cpu = ctx.cpu() - cpu0;
    let rss2 = rss_kib(ctx.pid);
    set.abort_all();
    let mut r = Report::default();
    r.add("connections held", held);
    r.add("server RSS before, KiB", rss0);
    r.add("server RSS with them, KiB", rss2);
    r.add(
        "RSS per idle connection, KiB",
        format!("{:.1}", (rss1.max(rss2) - rss0) as f64 / held.max(1) as f64),
    );
    r.add(
        "server CPU while idle, % of a core",
        format!("{:.2}", 100.0 * cpu / hold_s as f64),
    );
    r
}

/// `idle-games`: G games, each with its two players (a move each played, so the game is
/// under way) and two spectators, then held: RSS per connection and CPU while nothing
/// happens. A game nobody moves in should cost the server nothing but memory.
pub async fn idle_games(ctx: &Ctx, games: usize, hold_s: u64) -> Report {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss0 = rss_kib(ctx.pid);
    let mut set = JoinSet::new();
    let mut errors = 0u64;
    let mut held = 0usize;
    let mut g = 0;
    while g < games {
        let mut batch = JoinSet::new();
        for i in g..(g + 100).min(games) {
            let (addr, kind, options) = (ctx.addr, ctx.kind.clone(), ctx.options.clone());
            let clock = ctx.clock.clone();
            batch.spawn(async move {
                let mut t = Table::open(addr, i * 2, &kind, &options, &clock, "private").await?;
                // Both sides' first moves: a side that never moved is aborted after the
                // first-move window, and the game would not be idle but ending.
                for _ in 0..2 {
                    t.step(|_| {})
                        .await
                        .ok_or_else(|| std::io::Error::other("a first move was refused"))?;
                }
                let mut conns = Vec::with_capacity(4);
                for s in 0..2 {
                    let mut w = Conn::open(addr, source(i * 4 + 2 + s)).await?;
                    w.request(json!({"t":"game.watch","game_id":t.game_id,"code":t.code}))
                        .await;
                    conns.push(w);
                }
                let Table { seats, .. } = t;
                conns.extend(seats);
                Ok::<_, std::io::Error>(conns)
            });
        }
        g = (g + 100).min(games);
        while let Some(r) = batch.join_next().await {
            match r {
                Ok(Ok(conns)) => {
                    for mut c in conns {
                        held += 1;
                        // Held (`Conn::next` answers the server's pings).
                        set.spawn(async move { while c.next().await.is_some() {} });
                    }
                }
                Ok(Err(e)) => {
                    errors += 1;
                    eprintln!("game set-up failed: {e}");
                }
                Err(_) => errors += 1,
            }
        }
    }
    // Let the server settle (spectator counts published, first pings answered).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss1 = rss_kib(ctx.pid);
    let cpu0 = ctx.cpu();
    tokio::time::sleep(Duration::from_secs(hold_s)).await;
    let cpu = ctx.cpu() - cpu0;
    let rss2 = rss_kib(ctx.pid);
    set.abort_all();
    let mut r = Report::default();
    r.add("games (2 players + 2 spectators each)", games);
    r.add("connections held", held);
    r.add("set-up errors", errors);
    r.add(
        "RSS per connection in a game, KiB",
        format!("{:.1}", (rss1.max(rss2) - rss0) as f64 / held.max(1) as f64),
    );
    r.add(
        "server CPU while idle, % of a core",
        format!("{:.2}", 100.0 * cpu / hold_s as f64),
    );
    r
}

/// `fanout`: one game, `spectators` watchers; move → last spectator.
pub async fn fanout(ctx: &Ctx, spectators: usize, moves: usize, interval_ms: u64) -> Report {
    let mut table = Table::open(ctx.addr, 0, &ctx.kind, &ctx.options, &ctx.clock, "public")
        .await
        .expect("a game");
    let game_id = table.game_id.clone();
    // Spectators spread over the nodes (the game is owned by the first).
    let mut watchers = Vec::with_capacity(spectators);
    let per_node = spectators.div_ceil(ctx.nodes.len().max(1));
    for (i, (addr, _)) in ctx.nodes.iter().enumerate() {
        let n = per_node.min(spectators - watchers.len());
        watchers.extend(open_many(*addr, 2 + i * per_node, n, 200, Some(&game_id)).await);
    }
    // Per move seq: when it was sent, when the last spectator read it, when the server's
    // write to the last spectator reached the wire (kernel stamp), how many got it.
    let slots = moves + 16;
    let counters = |init: u64| -> Arc<Vec<AtomicU64>> {
        Arc::new((0..slots).map(|_| AtomicU64::new(init)).collect())
    };
    let (last, got, on_wire) = (counters(0), counters(0), counters(0));
    // The first spectator's stamp: the broadcast's own duration is last − first.
    let first_on_wire = counters(u64::MAX);
    let bytes = Arc::new(AtomicU64::new(0));
    let unstamped = Arc::new(AtomicU64::new(0));
    let (epoch, epoch_wall) = (Instant::now(), wall_now());
    let mut set = JoinSet::new();
    for mut w in watchers {
        let (last, got, on_wire, first_on_wire, bytes, unstamped) = (
            last.clone(),
            got.clone(),
            on_wire.clone(),
            first_on_wire.clone(),
            bytes.clone(),
            unstamped.clone(),
        );
        set.spawn(async move {
            while let Some(t) = w.next().await {
                if !is_type(&t, "game.diff") {
                    continue;
                }
                bytes.fetch_add(t.len() as u64, Ordering::Relaxed);
                let Some(seq) = seq_of(&t).map(|s| s as usize) else {
                    continue;
                };
                let Some(slot) = last.get(seq) else {
                    continue;
                };
                slot.fetch_max(epoch.elapsed().as_micros() as u64, Ordering::Relaxed);
                got[seq].fetch_add(1, Ordering::Relaxed);
                match w.stamp() {
                    Some(at) => {
                        let at = at.saturating_sub(epoch_wall).as_micros() as u64;
                        on_wire[seq].fetch_max(at, Ordering::Relaxed);
                        first_on_wire[seq].fetch_min(at, Ordering::Relaxed);
                    }
                    None => {
                        unstamped.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
    }
    // Everyone subscribed before the first move.
    tokio::time::sleep(Duration::from_millis(500 + spectators as u64 / 5)).await;
    let cpu0 = ctx.cpu();
    let busy0 = ctx.load_busy();
    let mut sent = vec![0u64; slots];
    let mut played = 0;
    let mut opp = Vec::new();
    for _ in 0..moves {
        let mut at = None;
        let Some(m) = table.step(|t| at = Some(t)).await else {
            break;
        };
        if let (Some(at), Some(slot)) = (at, sent.get_mut(m.seq as usize)) {
            *slot = at.duration_since(epoch).as_micros() as u64;
        }
        opp.push(m.to_opponent.as_micros() as u64);
        played += 1;
        tokio::time::sleep(Duration::from_millis(interval_ms)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cpu = ctx.cpu() - cpu0;
    let load_busy = ctx.load_busy() - busy0;
    set.abort_all();
    let mut to_last = Vec::new();
    let mut to_wire = Vec::new();
    let mut spread = Vec::new();
    let mut complete = 0;
    for (s, &t0) in sent.iter().enumerate() {
        if t0 == 0 {
            continue;
        }
        if got[s].load(Ordering::Relaxed) as usize == spectators {
            complete += 1;
        }
        to_last.push(last[s].load(Ordering::Relaxed).saturating_sub(t0));
        let last_on_wire = on_wire[s].load(Ordering::Relaxed);
        to_wire.push(last_on_wire.saturating_sub(t0));
        spread.push(last_on_wire.saturating_sub(first_on_wire[s].load(Ordering::Relaxed)));
    }
    to_last.sort_unstable();
    to_wire.sort_unstable();
    spread.sort_unstable();
    opp.sort_unstable();
    let recipients = (spectators + 2) as u64;
    let all_bytes =
        bytes.load(Ordering::Relaxed) + table.seats.iter().map(|c| c.diff_bytes).sum::<u64>();
    let mut r = Report::default();
    r.add("spectators", spectators);
    r.add("moves", played);
    r.add("moves every spectator received", complete);
    r.add_ms("p50 move → last spectator, ms", &to_last, 0.5);
    r.add_ms("p99 move → last spectator, ms", &to_last, 0.99);
    // The kernel's stamp of the server's write: what the server took, whatever the
    // generator's core was busy with meanwhile (see `conn`).
    match unstamped.load(Ordering::Relaxed) {
        0 => {
            r.add_ms(
                "p50 move → on the wire to the last spectator, ms",
                &to_wire,
                0.5,
            );
            r.add_ms(
                "p99 move → on the wire to the last spectator, ms",
                &to_wire,
                0.99,
            );
            // Without the request's way in: how long the broadcast itself took.
            r.add_ms("p99 first → last spectator on the wire, ms", &spread, 0.99);
        }
        n => r.add("diffs without a kernel timestamp", n),
    }
    r.add_ms("p99 move → opponent, ms", &opp, 0.99);
    r.add(
        "bytes per move per recipient",
        format!(
            "{:.0}",
            all_bytes as f64 / (played.max(1) as u64 * recipients) as f64
        ),
    );
    r.add(
        "server CPU per move, µs",
        format!("{:.0}", 1e6 * cpu / played.max(1) as f64),
    );
    if ctx.load_cpu.is_some() {
        // When this is above the server's figure, the latency to the last spectator
        // measures the generator's core (its own reading, and with `--steer-receive` the
        // receivers' TCP work too) more than the server.
        r.add(
            "generator's CPU busy per move, µs",
            format!("{:.0}", 1e6 * load_busy / played.max(1) as f64),
        );
    }
    r
}

/// What a set of games measured.
#[derive(Default)]
struct Played {
    /// Move → opponent's diff, µs.
    latencies_us: Vec<u64>,
    /// Move → the opponent's diff on the wire (kernel stamp), µs.
    wire_us: Vec<u64>,
    /// Busy seconds of the generator's core while the moves were played (0: not pinned).
    load_busy: f64,
    /// Diff bytes the players received.
    bytes: u64,
    /// Moves played.
    moves: u64,
    /// Refused moves, error frames, failed set-ups.
    errors: u64,
    /// Server CPU seconds while the moves were played (set-up excluded).
    cpu: f64,
    /// Of `cpu`, the seconds in user space.
    user_cpu: f64,
    /// Seconds the moves took.
    seconds: f64,
    /// The server's minor page faults while the moves were played.
    faults: u64,
    /// Games set up and played.
    games: u64,
    /// How much the server's resident memory grew while the moves were played, KiB.
    rss_growth_kib: i64,
}

/// Sets up `games` games (each with `spectators_per_game` watchers), then plays up to
/// `budget` moves over them, `pace` apart per game when given; a game that ends stops.
/// Only the playing phase is measured.
async fn play_games(
    ctx: &Ctx,
    games: usize,
    budget: u64,
    pace: Option<Duration>,
    spectators_per_game: usize,
) -> Played {
    let initial = budget;
    let budget = Arc::new(AtomicU64::new(budget));
    let active = Arc::new(AtomicU64::new(games as u64));
    let go = Arc::new(tokio::sync::Barrier::new(games + 1));
    let mut set = JoinSet::new();
    let per_game = 2 + spectators_per_game;
    for g in 0..games {
        let (addr, kind, options) = (ctx.addr, ctx.kind.clone(), ctx.options.clone());
        let clock = ctx.clock.clone();
        let (budget, go) = (budget.clone(), go.clone());
        let active = active.clone();
        set.spawn(async move {
            let mut out = Played::default();
            let _active = Active(active);
            let table =
                Table::open(addr, g * per_game / 2, &kind, &options, &clock, "private").await;
            let mut watchers = Vec::new();
            if let Ok(t) = &table {
                for s in 0..spectators_per_game {
                    let Ok(mut w) = Conn::open(addr, source(g * per_game + 2 + s)).await else {
                        out.errors += 1;
                        continue;
                    };
                    w.request(json!({"t":"game.watch","game_id":t.game_id,"code":t.code}))
                        .await;
                    watchers.push(tokio::spawn(
                        async move { while w.next().await.is_some() {} },
                    ));
                }
            }
            go.wait().await;
            let Ok(mut t) = table else {
                out.errors += 1;
                return out;
            };
            out.games = 1;
            if let Some(p) = pace {
                // Spread the games over the period.
                tokio::time::sleep(p.mul_f64((g % 997) as f64 / 997.0)).await;
            }
            while t.on()
                && budget
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
                    .is_ok()
            {
                let started = Instant::now();
                match t.step(|_| {}).await {
                    Some(m) => {
                        out.latencies_us.push(m.to_opponent.as_micros() as u64);
                        if let Some(w) = m.to_opponent_on_wire {
                            out.wire_us.push(w.as_micros() as u64);
                        }
                        out.moves += 1;
                    }
                    None => {
                        out.errors += 1;
                        break;
                    }
                }
                if let Some(p) = pace {
                    tokio::time::sleep(p.saturating_sub(started.elapsed())).await;
                }
            }
            out.bytes = t.seats.iter().map(|c| c.diff_bytes).sum();
            out.errors += t.seats.iter().map(|c| c.errors).sum::<u64>();
            for w in watchers {
                w.abort();
            }
            out
        });
    }
    go.wait().await;
    let series = std::env::var_os("STOA_LOAD_SERIES").map(|_| {
        let (budget, active) = (budget.clone(), active.clone());
        let pids: Vec<u32> = ctx.nodes.iter().map(|n| n.1).collect();
        tokio::spawn(async move {
            let start = Instant::now();
            let ns = || pids.iter().map(|p| run_ns(*p)).sum::<u64>();
            let (mut last_ns, mut last_moves) = (ns(), 0u64);
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let (now_ns, moves) = (ns(), initial - budget.load(Ordering::Relaxed));
                let dm = (moves - last_moves).max(1);
                eprintln!(
                    "{:6.2} s  moves {moves:7}  games {:4}  server busy {:3.0} %  {:5.1} µs/move",
                    start.elapsed().as_secs_f64(),
                    active.load(Ordering::Relaxed),
                    (now_ns - last_ns) as f64 / 1e6,
                    (now_ns - last_ns) as f64 / 1e3 / dm as f64,
                );
                (last_ns, last_moves) = (now_ns, moves);
            }
        })
    });
    let cpu0 = ctx.cpu_exact();
    let faults0 = ctx.faults();
    let rss0 = ctx.rss();
    let user0 = ctx.user_cpu();
    let busy0 = ctx.load_busy();
    let start = Instant::now();
    let mut all = Played::default();
    while let Some(r) = set.join_next().await {
        if let Ok(p) = r {
            all.latencies_us.extend(p.latencies_us);
            all.wire_us.extend(p.wire_us);
            all.bytes += p.bytes;
            all.moves += p.moves;
            all.errors += p.errors;
            all.games += p.games;
        }
    }
    if let Some(s) = series {
        s.abort();
    }
    all.seconds = start.elapsed().as_secs_f64();
    all.cpu = ctx.cpu_exact() - cpu0;
    all.faults = ctx.faults() - faults0;
    all.rss_growth_kib = ctx.rss() as i64 - rss0 as i64;
    all.user_cpu = ctx.user_cpu() - user0;
    all.load_busy = ctx.load_busy() - busy0;
    all.latencies_us.sort_unstable();
    all.wire_us.sort_unstable();
    all
}

/// Counts a game as playing until its task ends.
struct Active(Arc<AtomicU64>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Played {
    /// Adds another round's figures to these.
    fn merge(&mut self, other: Played) {
        self.latencies_us.extend(other.latencies_us);
        self.wire_us.extend(other.wire_us);
        self.latencies_us.sort_unstable();
        self.wire_us.sort_unstable();
        self.load_busy += other.load_busy;
        self.bytes += other.bytes;
        self.moves += other.moves;
        self.errors += other.errors;
        self.cpu += other.cpu;
        self.user_cpu += other.user_cpu;
        self.seconds += other.seconds;
        self.faults += other.faults;
        self.games += other.games;
        self.rss_growth_kib += other.rss_growth_kib;
    }
}

/// `throughput`: G games as fast as answers come, no spectators, `rounds` times over on
/// the same server (each round's games set up anew, only their play measured).
///
/// Why rounds: 200 games of 8x7 end after about 10,000 moves, a quarter of a second,
/// where one run's figure moved by a fifth from run to run; several rounds measure
/// several times as many moves, and a server that has played before (its memory grown
/// once), as one that has run for a while is.
pub async fn throughput(ctx: &Ctx, games: usize, moves: usize, rounds: usize) -> Report {
    let mut p = Played::default();
    for _ in 0..rounds.max(1) {
        p.merge(play_games(ctx, games, moves as u64, None, 0).await);
    }
    let mut r = Report::default();
    r.add("concurrent games", games);
    r.add("rounds (games set up anew each)", rounds.max(1));
    r.add("games played", p.games);
    report_moves(&mut r, &p, 2);
    r
}

/// `mixed`: G games, two players and two spectators each, one move per second per game.
pub async fn mixed(ctx: &Ctx, games: usize, seconds: u64) -> Report {
    let p = play_games(
        ctx,
        games,
        games as u64 * seconds,
        Some(Duration::from_secs(1)),
        2,
    )
    .await;
    let mut r = Report::default();
    r.add("games (2 players + 2 spectators each)", games);
    report_moves(&mut r, &p, 2);
    r
}

fn report_moves(r: &mut Report, p: &Played, players: u64) {
    let moves = p.moves.max(1) as f64;
    r.add("moves", p.moves);
    r.add(
        "moves/s",
        format!("{:.0}", p.moves as f64 / p.seconds.max(1e-9)),
    );
    r.add(
        "server CPU s per 1,000 moves",
        format!("{:.3}", 1000.0 * p.cpu / moves),
    );
    r.add(
        "server CPU per move, µs",
        format!("{:.0}", 1e6 * p.cpu / moves),
    );
    r.add(
        "of which in user space, µs",
        format!("{:.0}", 1e6 * p.user_cpu / moves),
    );
    r.add(
        "server page faults per 1,000 moves",
        format!("{:.1}", 1000.0 * p.faults as f64 / moves),
    );
    r.add(
        "server memory growth per move while playing, bytes",
        format!("{:.0}", 1024.0 * p.rss_growth_kib as f64 / moves),
    );
    r.add_ms("p50 move → opponent, ms", &p.latencies_us, 0.5);
    r.add_ms("p99 move → opponent, ms", &p.latencies_us, 0.99);
    // The server's side of the same latency (see `conn`): the opponent's diff on the wire.
    if p.wire_us.len() as u64 == p.moves {
        r.add_ms(
            "p50 move → opponent's diff on the wire, ms",
            &p.wire_us,
            0.5,
        );
        r.add_ms(
            "p99 move → opponent's diff on the wire, ms",
            &p.wire_us,
            0.99,
        );
    } else {
        r.add(
            "moves without a kernel timestamp",
            p.moves - p.wire_us.len() as u64,
        );
    }
    if p.load_busy > 0.0 {
        r.add(
            "generator's CPU busy per move, µs",
            format!("{:.0}", 1e6 * p.load_busy / moves),
        );
    }
    r.add(
        "bytes per move per player",
        format!("{:.0}", p.bytes as f64 / (players as f64 * moves)),
    );
    r.add("errors", p.errors);
}
