//! The scenarios: what each one sets up, drives and measures.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::measure::redis_info::{RedisProbe, RedisReading, RedisSpent};
use stoa_tests::measure::{
    cpu_busy_seconds, cpu_seconds, cpu_split, minor_faults, rss_kib, run_ns, Report,
};
use tokio::task::JoinSet;

use crate::conn::{is_type, seq_of, source, wall_now, Conn};
use crate::table::Table;
use crate::workers::{Link, Share, Workers};

/// What every scenario needs to know.
pub struct Ctx {
    /// The first node's address (where games are played unless spread over nodes).
    pub addr: SocketAddr,
    /// Game kind.
    pub kind: String,
    /// Game options.
    pub options: Value,
    /// The games' clock (as in `room.create`).
    pub clock: Value,
    /// Every node's address (one unless `--nodes` asked for a cluster).
    pub nodes: Vec<SocketAddr>,
    /// Every node's pid, to read; none in a child generator, which measures only itself.
    pub pids: Vec<u32>,
    /// The CPUs whose busy time this process reports: the generator's own, or with
    /// several generators the parent's reading of all of theirs (none when not pinned).
    pub load_cpus: Vec<usize>,
    /// The Redis under the server, to read (`None`: no Redis, or a child generator).
    pub redis: Option<RedisProbe>,
    /// Whether this process drives the scenario alone, through children, or as one.
    pub role: Role,
}

/// How this process takes part.
pub enum Role {
    /// One generator: this process drives everything.
    Alone,
    /// The parent of `--generators N`: it measures the servers and merges the children's
    /// figures (and makes `fanout`'s moves); the children drive the games and spectators.
    Parent(Workers),
    /// One of N children, with its share and its line to the parent.
    Child(Share, Link),
}

impl Ctx {
    /// The first node's pid (the idle scenarios, which one process drives, read it).
    pub fn pid(&self) -> u32 {
        self.pids.first().copied().unwrap_or(0)
    }

    /// CPU seconds used so far by every node.
    fn cpu(&self) -> f64 {
        self.pids.iter().map(|pid| cpu_seconds(*pid)).sum()
    }

    /// CPU seconds used so far by every node, from the scheduler's nanoseconds: exact
    /// where [`Ctx::cpu`] counts 10 ms ticks, for windows of a second or less.
    fn cpu_exact(&self) -> f64 {
        let ns: u64 = self.pids.iter().map(|pid| run_ns(*pid)).sum();
        ns as f64 / 1e9
    }

    /// CPU seconds used so far in user space by every node.
    fn user_cpu(&self) -> f64 {
        self.pids.iter().map(|pid| cpu_split(*pid).0).sum()
    }

    /// Resident memory of every node, KiB.
    fn rss(&self) -> u64 {
        self.pids.iter().map(|pid| rss_kib(*pid)).sum()
    }

    /// Minor page faults of every node so far.
    fn faults(&self) -> u64 {
        self.pids.iter().map(|pid| minor_faults(*pid)).sum()
    }

    /// Busy seconds of the generators' CPUs so far (0 when they are not pinned).
    fn load_busy(&self) -> f64 {
        self.load_cpus.iter().map(|c| cpu_busy_seconds(*c)).sum()
    }

    /// The share of the games or spectators this process drives.
    fn share(&self) -> Share {
        match &self.role {
            Role::Child(share, _) => *share,
            _ => Share::ALL,
        }
    }

    /// The children, when this process is the parent of several generators.
    fn workers(&mut self) -> Option<&mut Workers> {
        match &mut self.role {
            Role::Parent(w) => Some(w),
            _ => None,
        }
    }

    /// The line to the parent, when this process is a child generator.
    fn link(&mut self) -> Option<&mut Link> {
        match &mut self.role {
            Role::Child(_, link) => Some(link),
            _ => None,
        }
    }

    /// Starts a measured window: every reading taken now.
    fn window(&self) -> Window {
        Window {
            cpu: self.cpu_exact(),
            user: self.user_cpu(),
            faults: self.faults(),
            rss: self.rss(),
            busy: self.load_busy(),
            redis: self.redis.as_ref().map(RedisProbe::read),
        }
    }
}

/// The readings at the start of a measured window.
struct Window {
    cpu: f64,
    user: f64,
    faults: u64,
    rss: u64,
    busy: f64,
    redis: Option<RedisReading>,
}

impl Window {
    /// Ends the window: what the servers, Redis and this generator's CPU spent in it goes
    /// into `p`.
    fn close(self, ctx: &Ctx, p: &mut Played) {
        p.cpu = ctx.cpu_exact() - self.cpu;
        p.faults = ctx.faults() - self.faults;
        p.rss_growth_kib = ctx.rss() as i64 - self.rss as i64;
        p.user_cpu = ctx.user_cpu() - self.user;
        p.load_busy += ctx.load_busy() - self.busy;
        if let (Some(before), Some(probe)) = (&self.redis, &ctx.redis) {
            p.redis = Some(before.until(&probe.read()));
        }
    }
}

/// Which spectators (global numbers `range` of `total`) go to which node: the nodes take
/// equal consecutive blocks, spectator `j` connecting from source number `2 + j` (the
/// game's players are 0 and 1). Returns (node, first source number, how many).
fn spectator_groups(
    nodes: &[SocketAddr],
    total: usize,
    range: std::ops::Range<usize>,
) -> Vec<(SocketAddr, usize, usize)> {
    let per_node = total.div_ceil(nodes.len().max(1)).max(1);
    let mut groups = Vec::new();
    let mut j = range.start;
    while j < range.end {
        let node = j / per_node;
        let end = ((node + 1) * per_node).min(range.end);
        groups.push((nodes[node.min(nodes.len() - 1)], 2 + j, end - j));
        j = end;
    }
    groups
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
    let rss0 = rss_kib(ctx.pid());
    let conns = open_many(ctx.addr, 0, n, 200, None).await;
    // Let the server settle (first pings answered) before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss1 = rss_kib(ctx.pid());
    let cpu0 = ctx.cpu();
    let redis0 = ctx.redis.as_ref().map(RedisProbe::read);
    // Hold them (`Conn::next` answers the server's pings).
    let held = conns.len();
    let mut set = JoinSet::new();
    for mut c in conns {
        set.spawn(async move { while c.next().await.is_some() {} });
    }
    tokio::time::sleep(Duration::from_secs(hold_s)).await;
    let cpu = ctx.cpu() - cpu0;
    let redis = redis_since(ctx, redis0);
    let rss2 = rss_kib(ctx.pid());
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
    report_redis_idle(&mut r, redis.as_ref(), hold_s);
    r
}

/// What Redis did since `before` (when there is a Redis).
fn redis_since(ctx: &Ctx, before: Option<RedisReading>) -> Option<RedisSpent> {
    Some(before?.until(&ctx.redis.as_ref()?.read()))
}

/// Redis's rows for a window where nothing moves: its CPU and commands per second.
fn report_redis_idle(r: &mut Report, redis: Option<&RedisSpent>, seconds: u64) {
    let Some(redis) = redis else {
        return;
    };
    let seconds = seconds.max(1) as f64;
    r.add(
        "Redis CPU while idle, % of a core",
        format!("{:.2}", 100.0 * redis.cpu_s / seconds),
    );
    r.add(
        "Redis commands per second",
        format!("{:.1}", redis.total_calls() as f64 / seconds),
    );
    r.add("Redis top commands, per second", redis.top(5, seconds));
}

/// Redis's rows for moves: its CPU, its commands and the commands called most, per move.
fn report_redis(r: &mut Report, redis: Option<&RedisSpent>, moves: u64) {
    let Some(redis) = redis else {
        return;
    };
    let moves = moves.max(1) as f64;
    r.add(
        "Redis CPU per move, µs",
        format!("{:.0}", 1e6 * redis.cpu_s / moves),
    );
    r.add(
        "Redis commands per move",
        format!("{:.2}", redis.total_calls() as f64 / moves),
    );
    r.add("Redis top commands, calls per move", redis.top(5, moves));
}

/// `idle-games`: G games, each with its two players (a move each played, so the game is
/// under way) and two spectators, then held: RSS per connection and CPU while nothing
/// happens. A game nobody moves in should cost the server nothing but memory.
pub async fn idle_games(ctx: &Ctx, games: usize, hold_s: u64) -> Report {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss0 = rss_kib(ctx.pid());
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
    let rss1 = rss_kib(ctx.pid());
    let cpu0 = ctx.cpu();
    let redis0 = ctx.redis.as_ref().map(RedisProbe::read);
    tokio::time::sleep(Duration::from_secs(hold_s)).await;
    let cpu = ctx.cpu() - cpu0;
    let redis = redis_since(ctx, redis0);
    let rss2 = rss_kib(ctx.pid());
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
    report_redis_idle(&mut r, redis.as_ref(), hold_s);
    r
}

/// What spectators saw, move seq by move seq: the wall-clock µs (since the Unix epoch) at
/// which the last of them read each diff, how many read it, the kernel's stamps of the
/// server's writes to the last and the first of them; several generators' add up.
#[derive(Default)]
struct Spectated {
    last: Vec<u64>,
    got: Vec<u64>,
    on_wire: Vec<u64>,
    first_on_wire: Vec<u64>,
    bytes: u64,
    unstamped: u64,
}

impl Spectated {
    /// Another generator's spectators joined to these: the latest last read and stamp,
    /// the earliest first stamp, the counts summed.
    fn merge(&mut self, other: Spectated) {
        let slots = self.last.len().max(other.last.len());
        for v in [&mut self.last, &mut self.got, &mut self.on_wire] {
            v.resize(slots, 0);
        }
        self.first_on_wire.resize(slots, u64::MAX);
        for s in 0..other.last.len() {
            self.last[s] = self.last[s].max(other.last[s]);
            self.got[s] += other.got[s];
            self.on_wire[s] = self.on_wire[s].max(other.on_wire[s]);
            self.first_on_wire[s] = self.first_on_wire[s].min(other.first_on_wire[s]);
        }
        self.bytes += other.bytes;
        self.unstamped += other.unstamped;
    }

    /// As a child sends it to the parent.
    fn to_json(&self) -> Value {
        json!({"last": self.last, "got": self.got, "on_wire": self.on_wire,
            "first_on_wire": self.first_on_wire, "bytes": self.bytes,
            "unstamped": self.unstamped})
    }

    /// As the parent reads a child's.
    fn from_json(v: &Value) -> Spectated {
        let list = |k: &str| -> Vec<u64> {
            v[k].as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default()
        };
        Spectated {
            last: list("last"),
            got: list("got"),
            on_wire: list("on_wire"),
            first_on_wire: list("first_on_wire"),
            bytes: v["bytes"].as_u64().unwrap_or(0),
            unstamped: v["unstamped"].as_u64().unwrap_or(0),
        }
    }
}

/// Spectators reading in their own tasks, each diff noted in shared per-seq counters.
struct Watching {
    set: JoinSet<()>,
    last: Arc<Vec<AtomicU64>>,
    got: Arc<Vec<AtomicU64>>,
    on_wire: Arc<Vec<AtomicU64>>,
    first_on_wire: Arc<Vec<AtomicU64>>,
    bytes: Arc<AtomicU64>,
    unstamped: Arc<AtomicU64>,
}

impl Watching {
    /// Opens this generator's share of the `total` spectators of `game_id` (spread over
    /// the nodes) and starts reading them, `slots` move seqs noted.
    async fn start(
        ctx: &Ctx,
        game_id: &str,
        total: usize,
        range: std::ops::Range<usize>,
        slots: usize,
    ) -> Watching {
        let mut watchers = Vec::with_capacity(range.len());
        for (addr, first, n) in spectator_groups(&ctx.nodes, total, range) {
            watchers.extend(open_many(addr, first, n, 200, Some(game_id)).await);
        }
        let counters = |init: u64| -> Arc<Vec<AtomicU64>> {
            Arc::new((0..slots).map(|_| AtomicU64::new(init)).collect())
        };
        let mut w = Watching {
            set: JoinSet::new(),
            last: counters(0),
            got: counters(0),
            on_wire: counters(0),
            first_on_wire: counters(u64::MAX),
            bytes: Arc::new(AtomicU64::new(0)),
            unstamped: Arc::new(AtomicU64::new(0)),
        };
        for mut c in watchers {
            let (last, got, on_wire, first_on_wire, bytes, unstamped) = (
                w.last.clone(),
                w.got.clone(),
                w.on_wire.clone(),
                w.first_on_wire.clone(),
                w.bytes.clone(),
                w.unstamped.clone(),
            );
            w.set.spawn(async move {
                while let Some(t) = c.next().await {
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
                    // Wall-clock time: several generators' readings compare with the
                    // parent's send times and with the kernel's stamps.
                    slot.fetch_max(wall_now().as_micros() as u64, Ordering::Relaxed);
                    got[seq].fetch_add(1, Ordering::Relaxed);
                    match c.stamp() {
                        Some(at) => {
                            let at = at.as_micros() as u64;
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
        w
    }

    /// Stops reading; what was seen.
    fn finish(mut self) -> Spectated {
        self.set.abort_all();
        let take = |v: &Arc<Vec<AtomicU64>>| -> Vec<u64> {
            v.iter().map(|a| a.load(Ordering::Relaxed)).collect()
        };
        Spectated {
            last: take(&self.last),
            got: take(&self.got),
            on_wire: take(&self.on_wire),
            first_on_wire: take(&self.first_on_wire),
            bytes: self.bytes.load(Ordering::Relaxed),
            unstamped: self.unstamped.load(Ordering::Relaxed),
        }
    }
}

/// `fanout`: one game, `spectators` watchers; move → last spectator. With several
/// generators the parent makes the moves and each child holds its share of the watchers;
/// the latency to the last spectator is then the latest read over all of them.
pub async fn fanout(ctx: &mut Ctx, spectators: usize, moves: usize, interval_ms: u64) -> Report {
    let slots = moves + 16;
    if let Role::Child(share, _) = &ctx.role {
        let range = share.range(spectators);
        let link = ctx.link().expect("a child's link");
        let game_id = link.hear("watch").await;
        let watching = Watching::start(ctx, &game_id, spectators, range, slots).await;
        let link = ctx.link().expect("a child's link");
        link.say("ready");
        link.hear("go").await;
        link.hear("stop").await;
        let seen = watching.finish();
        ctx.link()
            .expect("a child's link")
            .say(&format!("result {}", seen.to_json()));
        return Report::default();
    }
    let mut table = Table::open(ctx.addr, 0, &ctx.kind, &ctx.options, &ctx.clock, "public")
        .await
        .expect("a game");
    let game_id = table.game_id.clone();
    let watching = match ctx.workers() {
        Some(w) => {
            w.tell(&format!("watch {game_id}")).await;
            w.expect("ready").await;
            None
        }
        None => Some(Watching::start(ctx, &game_id, spectators, 0..spectators, slots).await),
    };
    // Everyone subscribed before the first move.
    tokio::time::sleep(Duration::from_millis(500 + spectators as u64 / 5)).await;
    let cpu0 = ctx.cpu();
    let busy0 = ctx.load_busy();
    let redis0 = ctx.redis.as_ref().map(RedisProbe::read);
    if let Some(w) = ctx.workers() {
        w.tell("go").await;
    }
    // When each move seq was sent, wall-clock µs since the Unix epoch.
    let mut sent = vec![0u64; slots];
    let mut played = 0;
    let mut opp = Vec::new();
    for _ in 0..moves {
        let mut at = None;
        let Some(m) = table
            .step(|t| at = Some(wall_now().saturating_sub(t.elapsed())))
            .await
        else {
            break;
        };
        if let (Some(at), Some(slot)) = (at, sent.get_mut(m.seq as usize)) {
            *slot = at.as_micros() as u64;
        }
        opp.push(m.to_opponent.as_micros() as u64);
        played += 1;
        tokio::time::sleep(Duration::from_millis(interval_ms)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cpu = ctx.cpu() - cpu0;
    let redis = redis_since(ctx, redis0);
    let load_busy = ctx.load_busy() - busy0;
    let seen = match (watching, ctx.workers()) {
        (Some(w), _) => w.finish(),
        (None, Some(w)) => {
            w.tell("stop").await;
            let mut seen = Spectated::default();
            for r in w.results().await {
                seen.merge(Spectated::from_json(&r));
            }
            seen
        }
        (None, None) => Spectated::default(),
    };
    let mut to_last = Vec::new();
    let mut to_wire = Vec::new();
    let mut spread = Vec::new();
    let mut complete = 0;
    for (s, &t0) in sent.iter().enumerate() {
        if t0 == 0 || s >= seen.last.len() {
            continue;
        }
        if seen.got[s] as usize == spectators {
            complete += 1;
        }
        to_last.push(seen.last[s].saturating_sub(t0));
        to_wire.push(seen.on_wire[s].saturating_sub(t0));
        spread.push(seen.on_wire[s].saturating_sub(seen.first_on_wire[s]));
    }
    if std::env::var_os("STOA_LOAD_SERIES").is_some() {
        // Each move's broadcast in order, to tell a slow tail from a slow run.
        let ms: Vec<String> = to_wire
            .iter()
            .map(|us| format!("{:.1}", *us as f64 / 1e3))
            .collect();
        eprintln!(
            "move → on the wire to the last spectator, ms, in order: {}",
            ms.join(" ")
        );
    }
    to_last.sort_unstable();
    to_wire.sort_unstable();
    spread.sort_unstable();
    opp.sort_unstable();
    let recipients = (spectators + 2) as u64;
    let all_bytes = seen.bytes + table.seats.iter().map(|c| c.diff_bytes).sum::<u64>();
    let mut r = Report::default();
    r.add("spectators", spectators);
    r.add("moves", played);
    r.add("moves every spectator received", complete);
    r.add_ms("p50 move → last spectator, ms", &to_last, 0.5);
    r.add_ms("p99 move → last spectator, ms", &to_last, 0.99);
    // The kernel's stamp of the server's write: what the server took, whatever the
    // generator's core was busy with meanwhile (see `conn`).
    match seen.unstamped {
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
    report_redis(&mut r, redis.as_ref(), played as u64);
    if !ctx.load_cpus.is_empty() {
        // When this is above the server's figure, the latency to the last spectator
        // measures the generator's core (its own reading, and with `--steer-receive` the
        // receivers' TCP work too) more than the server.
        r.add(
            busy_label(ctx),
            format!("{:.0}", 1e6 * load_busy / played.max(1) as f64),
        );
    }
    r
}

/// The generators' busy-CPU row's name: several generators' CPUs are summed.
fn busy_label(ctx: &Ctx) -> &'static str {
    match ctx.role {
        Role::Parent(_) => "generators' CPUs busy per move (each CPU once), µs",
        _ => "generator's CPU busy per move, µs",
    }
}

/// What a set of games measured.
#[derive(Default)]
struct Played {
    /// Move → opponent's diff, µs.
    latencies_us: Vec<u64>,
    /// Move → the opponent's diff on the wire (kernel stamp), µs.
    wire_us: Vec<u64>,
    /// Busy seconds of the generators' cores while the moves were played (0: not pinned).
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
    /// What Redis did while the moves were played.
    redis: Option<RedisSpent>,
    /// Moves by generator process, when there are several.
    by_generator: Vec<u64>,
}

/// Games set up and waiting at the barrier for the word to play.
struct Ready {
    set: JoinSet<Played>,
    go: Arc<tokio::sync::Barrier>,
    budget: Arc<AtomicU64>,
    active: Arc<AtomicU64>,
}

/// Sets up the games numbered `games` (each with `spectators_per_game` watchers), which
/// will play up to `budget` moves over them, `pace` apart per game when given; a game that
/// ends stops. Game `g` is played on node `g % nodes`, from the same source addresses and
/// with the same moves whichever generator drives it.
async fn set_up(
    ctx: &Ctx,
    games: std::ops::Range<usize>,
    budget: u64,
    pace: Option<Duration>,
    spectators_per_game: usize,
) -> Ready {
    let budget = Arc::new(AtomicU64::new(budget));
    let active = Arc::new(AtomicU64::new(games.len() as u64));
    // Passed once every game is set up, then once more to let them play: the window
    // measured opens between the two.
    let all_set = Arc::new(tokio::sync::Barrier::new(games.len() + 1));
    let go = Arc::new(tokio::sync::Barrier::new(games.len() + 1));
    let mut set = JoinSet::new();
    let per_game = 2 + spectators_per_game;
    for g in games {
        let addr = ctx.nodes[g % ctx.nodes.len()];
        let (kind, options) = (ctx.kind.clone(), ctx.options.clone());
        let clock = ctx.clock.clone();
        let (budget, go, all_set) = (budget.clone(), go.clone(), all_set.clone());
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
            all_set.wait().await;
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
    all_set.wait().await;
    Ready {
        set,
        go,
        budget,
        active,
    }
}

impl Ready {
    /// Lets the games play and gathers what the players saw (the servers' readings are
    /// the caller's window).
    async fn play(mut self) -> Played {
        self.go.wait().await;
        let start = Instant::now();
        let mut all = Played::default();
        while let Some(r) = self.set.join_next().await {
            if let Ok(p) = r {
                all.latencies_us.extend(p.latencies_us);
                all.wire_us.extend(p.wire_us);
                all.bytes += p.bytes;
                all.moves += p.moves;
                all.errors += p.errors;
                all.games += p.games;
            }
        }
        all.seconds = start.elapsed().as_secs_f64();
        all.latencies_us.sort_unstable();
        all.wire_us.sort_unstable();
        all
    }
}

/// `STOA_LOAD_SERIES=1`: every 100 ms of play, the moves so far, the games still on, how
/// busy the servers were and their CPU per move in that tenth of a second.
fn series(ctx: &Ctx, ready: &Ready, initial: u64) -> Option<tokio::task::JoinHandle<()>> {
    std::env::var_os("STOA_LOAD_SERIES")?;
    let (budget, active) = (ready.budget.clone(), ready.active.clone());
    let pids = ctx.pids.clone();
    Some(tokio::spawn(async move {
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
    }))
}

/// Plays `games` games (each with `spectators_per_game` watchers), up to `budget` moves
/// over them, `pace` apart per game when given; a game that ends stops. Only the playing
/// phase is measured. With several generators each child sets up and plays its share of
/// the games and of the budget, the parent measures the servers around all of them.
async fn play_games(
    ctx: &mut Ctx,
    games: usize,
    budget: u64,
    pace: Option<Duration>,
    spectators_per_game: usize,
) -> Played {
    if let Some(w) = ctx.workers() {
        w.expect("ready").await;
        let window = ctx.window();
        let start = Instant::now();
        let w = ctx.workers().expect("the children");
        w.tell("go").await;
        let mut all = Played::default();
        for r in w.results().await {
            let child = Played::from_json(&r);
            all.by_generator.push(child.moves);
            all.add_players(child);
        }
        all.seconds = start.elapsed().as_secs_f64();
        all.latencies_us.sort_unstable();
        all.wire_us.sort_unstable();
        window.close(ctx, &mut all);
        return all;
    }
    let share = ctx.share();
    let ready = set_up(
        ctx,
        share.range(games),
        share.of(budget),
        pace,
        spectators_per_game,
    )
    .await;
    if let Some(link) = ctx.link() {
        link.say("ready");
        link.hear("go").await;
    }
    let series = series(ctx, &ready, budget);
    let window = ctx.window();
    let mut p = ready.play().await;
    window.close(ctx, &mut p);
    if let Some(s) = series {
        s.abort();
    }
    if let Some(link) = ctx.link() {
        link.say(&format!("result {}", p.players_json()));
    }
    p
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
    fn merge(&mut self, mut other: Played) {
        self.cpu += other.cpu;
        self.user_cpu += other.user_cpu;
        self.seconds += other.seconds;
        self.faults += other.faults;
        self.rss_growth_kib += other.rss_growth_kib;
        match (&mut self.redis, other.redis.take()) {
            (Some(mine), Some(theirs)) => mine.merge(&theirs),
            (mine, theirs) => *mine = mine.take().or(theirs),
        }
        // The same generators play every round: their moves add up one by one.
        let by = std::mem::take(&mut other.by_generator);
        if self.by_generator.len() < by.len() {
            self.by_generator.resize(by.len(), 0);
        }
        for (mine, theirs) in self.by_generator.iter_mut().zip(by) {
            *mine += theirs;
        }
        self.add_players(other);
        self.latencies_us.sort_unstable();
        self.wire_us.sort_unstable();
    }

    /// Adds what another set of players saw (a child generator's, or another round's):
    /// every latency sample, not their percentiles.
    fn add_players(&mut self, other: Played) {
        self.latencies_us.extend(other.latencies_us);
        self.wire_us.extend(other.wire_us);
        self.load_busy += other.load_busy;
        self.bytes += other.bytes;
        self.moves += other.moves;
        self.errors += other.errors;
        self.games += other.games;
    }

    /// What a child generator's players saw, as it sends it to the parent.
    fn players_json(&self) -> Value {
        json!({"latencies_us": self.latencies_us, "wire_us": self.wire_us,
            "bytes": self.bytes, "moves": self.moves,
            "errors": self.errors, "games": self.games})
    }

    /// As the parent reads a child's.
    fn from_json(v: &Value) -> Played {
        let list = |k: &str| -> Vec<u64> {
            v[k].as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default()
        };
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        Played {
            latencies_us: list("latencies_us"),
            wire_us: list("wire_us"),
            bytes: n("bytes"),
            moves: n("moves"),
            errors: n("errors"),
            games: n("games"),
            ..Played::default()
        }
    }
}

/// `throughput`: G games as fast as answers come, no spectators, `rounds` times over on
/// the same server (each round's games set up anew, only their play measured).
///
/// Why rounds: 200 games of 8x7 end after about 10,000 moves, a quarter of a second,
/// where one run's figure moved by a fifth from run to run; several rounds measure
/// several times as many moves, and a server that has played before (its memory grown
/// once), as one that has run for a while is.
pub async fn throughput(ctx: &mut Ctx, games: usize, moves: usize, rounds: usize) -> Report {
    let mut p = Played::default();
    for _ in 0..rounds.max(1) {
        p.merge(play_games(ctx, games, moves as u64, None, 0).await);
    }
    let mut r = Report::default();
    r.add("concurrent games", games);
    r.add("rounds (games set up anew each)", rounds.max(1));
    r.add("games played", p.games);
    report_moves(ctx, &mut r, &p, 2);
    r
}

/// `mixed`: G games, two players and two spectators each, one move per second per game.
pub async fn mixed(ctx: &mut Ctx, games: usize, seconds: u64) -> Report {
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
    report_moves(ctx, &mut r, &p, 2);
    r
}

fn report_moves(ctx: &Ctx, r: &mut Report, p: &Played, players: u64) {
    let moves = p.moves.max(1) as f64;
    r.add("moves", p.moves);
    if !p.by_generator.is_empty() {
        let each: Vec<String> = p.by_generator.iter().map(u64::to_string).collect();
        r.add("moves by generator", each.join(", "));
    }
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
    report_redis(r, p.redis.as_ref(), p.moves);
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
        r.add(busy_label(ctx), format!("{:.0}", 1e6 * p.load_busy / moves));
    }
    r.add(
        "bytes per move per player",
        format!("{:.0}", p.bytes as f64 / (players as f64 * moves)),
    );
    r.add("errors", p.errors);
}
