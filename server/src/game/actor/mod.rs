//! The game actor: one task per live game, a thin shell around its pure [`Core`].
//!
//! Why a shell: the core decides and applies; the actor does what needs I/O, in one order
//! for everyone — decide → append the event to the store → apply → publish the patch —
//! plus the reactions to an event that belong to the rest of the server (ratings at an
//! end, the rematch game, the final document). A diff is encoded once and the same bytes
//! go to every subscriber with `try_send` (a full subscriber queue kicks that subscriber,
//! never delays the game). The mover's diff is queued before the actor replies, so a
//! subscribed mover always sees the diff before its `ok`.
//!
//! The crowd (spectator count, players' online flags) lives here, outside the versioned
//! document: it goes out as unversioned `game.crowd` frames (protocol/docs/PROTOCOL.md version 2), so
//! people coming and going never move `seq` nor evict the replay buffer.

use hashbrown::{HashMap, HashSet};
use indexmap::IndexMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::net::frame::Frame;
use serde_json::{json, Value};
use stoa_protocol::wire::ErrorCode;
use stoa_protocol::{AnyGame, Reason, Side};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::capabilities::{ArenaGameEnd, Capabilities};
use super::clock_driver::ClockDriver;
use super::core::{Core, Decision};
use super::replay::Replay;
use super::{Act, Answer, Command, NewGame};
use crate::cluster::messages::{BusMessage, RemoteOp};
use crate::error::ApiError;
use crate::ids;
use crate::net::outbound::ConnHandle;
use crate::store::{ActionKind, ActionRecord, FinishedGame, StoreError};

mod chat;
mod crowd;
mod follower;
mod frames;
mod owner;
mod subscribers;
mod summary;

use follower::Follower;
use owner::{Doubt, Owner};

/// Whether this node decides for the game or follows the node that does (cluster mode),
/// with the state only that role needs: taking a game over or losing it swaps the variant,
/// so nothing of one role's bookkeeping outlives it.
enum Role {
    /// This node holds the game's lease: it decides, logs, runs the clock.
    Owner(Owner),
    /// Another node owns the game: commands go to it, its logged events come back over the
    /// bus and are applied here for this node's subscribers.
    Follower(Follower),
}

/// How many forwarded commands an actor remembers having played (see [`Actor::played`]):
/// a retry comes within seconds, a few dozen events at most.
const PLAYED_CMDS: usize = 64;

/// The state one actor owns besides its core, whatever its role.
struct Actor {
    role: Role,
    /// The last forwarded commands applied here, with their seq: a command sent again is
    /// answered from this instead of being played twice (kept by followers too, for the
    /// day they take the game over).
    played: std::collections::VecDeque<(String, u64)>,
    caps: Capabilities,
    core: Core,
    /// Players who presented the room code: they may watch again without it.
    code_viewers: HashSet<String>,
    /// When each side's player was last pinged as its clock started (see
    /// [`Actor::ping_runner`]).
    pinged_at: [Option<tokio::time::Instant>; 2],
    /// Why in arrival order: a broadcast walks every subscriber's connection state and
    /// socket, and connections that came one after another sit next to each other in
    /// memory (ours and the kernel's), so walking them in that order is walking memory
    /// forwards rather than in hash order.
    ///
    /// Hashed as the other maps here (`hashbrown`'s default, not std's SipHash): a move
    /// looks its players' connections up in it.
    subs: IndexMap<u64, Arc<ConnHandle>, hashbrown::DefaultHashBuilder>,
    /// The subscribers that are seated players' connections (a few at most), so a
    /// broadcast reaches them first without comparing every spectator's player id.
    player_subs: Vec<u64>,
    /// Subscribers that are not the seated players, counted as they come and go.
    watchers: u64,
    /// The spectator count last published in `game.crowd`.
    spectators: u64,
    /// Whether each player (by id) has a connection here.
    online: HashMap<String, bool>,
    /// When each offline player lost its last connection (server ms, the hub's time).
    offline_since: HashMap<String, u64>,
    replay: Replay,
    /// The document encoded at one seq, shared by every snapshot of that seq.
    snapshot: Option<(u64, Arc<str>)>,
    ended_at: Option<Instant>,
    /// When the game ended (server ms), kept for its record across later saves (rematch
    /// requests replace the final document).
    ended_ms: Option<u64>,
    /// A rated game's new ratings by side name, for its record.
    ratings_after: Option<Value>,
    /// A logged write whose answer was lost: the log decides whether it happened before
    /// anything else happens in this game, and only then is its request answered. It
    /// outlives a demotion: the new owner's log still tells whether it landed.
    in_doubt: Option<Doubt>,
    shutting_down: bool,
    /// The lobby's view of this game (public games while they are on).
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
    /// The game's chat (kept while the actor lives, never stored).
    chat: chat::Chat,
}

/// The game's clock driver for its setup (whose time control was checked where it came
/// in: a request, or the store).
pub fn clock_for(caps: &Capabilities, new: &NewGame) -> ClockDriver {
    let players = [new.players[0].id.as_str(), new.players[1].id.as_str()];
    let first_action_ms = caps.settings.first_action_ms;
    ClockDriver::new(new.setup.clock, players, first_action_ms)
        .unwrap_or_else(|_| ClockDriver::untimed(players, first_action_ms))
}

/// The core of a game created now (or at `created_ms` when it is rebuilt from its log).
pub fn new_core(
    caps: &Capabilities,
    new: NewGame,
    game: Box<dyn AnyGame>,
    created_ms: u64,
) -> Core {
    let clock = clock_for(caps, &new);
    Core::new(
        new,
        game,
        clock,
        created_ms,
        caps.settings.abandon_timeout_ms,
    )
}

/// Starts the actor of a new game on its own task. `created_ms` is the creation time stored
/// with the game's record: a rebuild from the log (a follower on another node, a new owner)
/// starts its clock from the same instant, so every node holds the same document at seq 0.
pub fn spawn(
    caps: Capabilities,
    new: NewGame,
    game: Box<dyn AnyGame>,
    created_ms: u64,
    online: [bool; 2],
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let core = new_core(&caps, new, game, created_ms);
    let actor = Actor::new(caps, core, online, summary, now);
    actor.update_summary();
    actor.start(rx);
}

/// Starts the actor of a game rebuilt from its log (see [`crate::services::recovery`]). Nobody is
/// connected after a restart: both players count as offline from now. The clock stood
/// still since the last logged event; the actor logs that as a `resume` event as soon as
/// it runs. A game the log ended has its final document stored.
pub fn spawn_recovered(
    caps: Capabilities,
    mut core: Core,
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
    takeover: bool,
) {
    let now = caps.time.now_ms();
    if !takeover {
        // After a restart the clock stood still; a node taking over a dead node's game in
        // a running cluster lets it run on (the deadline may even have passed: it flags at
        // once).
        core.pause(core.last_ms());
    }
    if let Some(peers) = &caps.peers {
        peers.set_owned(core.id(), true);
    }
    let mut actor = Actor::new(caps, core, [false, false], summary, now);
    if actor.core.result().is_some() {
        actor.mark_ended();
        if let Role::Owner(o) = &mut actor.role {
            o.finish_unsaved = true;
        }
    }
    actor.update_summary();
    actor.start(rx);
}

/// Starts a follower of a game another node owns (cluster mode), from its log: it serves
/// this node's subscribers and forwards their commands. `online`: the seated players
/// connected to this node.
pub fn spawn_follower(
    caps: Capabilities,
    core: Core,
    online: [bool; 2],
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let mut actor = Actor::new(caps, core, online, summary, now);
    actor.role = Role::Follower(Follower::new(None, true));
    if actor.core.result().is_some() {
        actor.ended_at = Some(Instant::now());
    }
    actor.start(rx);
}

impl Actor {
    fn new(
        caps: Capabilities,
        core: Core,
        online: [bool; 2],
        summary: Arc<parking_lot::Mutex<Option<Value>>>,
        now: u64,
    ) -> Actor {
        let mut online_map = HashMap::new();
        let mut offline_since = HashMap::new();
        for (i, p) in core.player_ids().iter().enumerate() {
            online_map.insert(p.to_string(), online[i]);
            if !online[i] {
                offline_since.insert(p.to_string(), now);
            }
        }
        Actor {
            role: Role::Owner(Owner::default()),
            played: std::collections::VecDeque::new(),
            replay: Replay::new(caps.settings.replay_buffer),
            caps,
            core,
            code_viewers: HashSet::new(),
            pinged_at: [None; 2],
            subs: IndexMap::default(),
            player_subs: Vec::new(),
            watchers: 0,
            spectators: 0,
            online: online_map,
            offline_since,
            snapshot: None,
            ended_at: None,
            ended_ms: None,
            ratings_after: None,
            in_doubt: None,
            shutting_down: false,
            summary,
            chat: chat::Chat::default(),
        }
    }

    fn start(self, rx: mpsc::Receiver<Command>) {
        let span = tracing::info_span!(parent: None, "game", id = %self.core.id(), kind = %self.core.kind());
        let directory = self.caps.directory.clone();
        let id = self.core.id().to_string();
        let summary = self.summary.clone();
        // Boxed: an `async fn` taking the actor by value keeps it twice in its state (the
        // argument and the local it moves into), several KiB per idle game.
        let task = tokio::spawn(Box::new(self).run(rx).instrument(span));
        // Supervision: an actor that panics (a rules-engine bug) must not leave a dead handle
        // behind; its game is unregistered and requests get `not_found` instead of hanging.
        tokio::spawn(async move {
            if let Err(e) = task.await {
                if e.is_panic() {
                    tracing::error!(game = %id, "game actor panicked; game unregistered");
                    directory.remove_actor(&id, &summary);
                }
            }
        });
    }

    async fn run(mut self: Box<Self>, mut rx: mpsc::Receiver<Command>) {
        let following = matches!(self.role, Role::Follower(_));
        tracing::info!(seq = self.core.seq(), follower = following, "game running");
        if following {
            // Events logged before this follower was registered are in the log.
            Box::pin(self.heal()).await;
            Box::pin(self.report_local_presence()).await;
        } else if let Some(peers) = self.caps.peers.clone() {
            // Followers elsewhere (a takeover, a restart) learn who decides now.
            peers
                .publish(&BusMessage::Owner {
                    game: self.core.id().to_string(),
                    node: peers.node().to_string(),
                })
                .await;
        }
        let period = Duration::from_millis(self.caps.settings.batch_ms.clamp(10, 60_000));
        // The upkeep runs only while it has something to do (see `upkeep_due`), `period`
        // after it became due: an idle game sets no timer and is never woken.
        // The first runs at once, as the actor starts: a game recovered after a restart
        // resumes its paused clock before the first move arrives.
        let mut upkeep_at = Some(tokio::time::Instant::now());
        let linger = Duration::from_millis(self.caps.settings.linger_ms);
        let mut shutdown = self.caps.shutdown.clone();
        self.shutting_down = *shutdown.borrow();
        let mut availability = self.caps.store.availability();
        loop {
            upkeep_at = match upkeep_at {
                _ if !self.upkeep_due() => None,
                None => Some(tokio::time::Instant::now() + period),
                due => due,
            };
            // The one clock timer: the first-action deadline or the running side's flag
            // (plus its lag grace), re-armed after every event. Off while a write is in
            // doubt: the log must say what happened first.
            let deadline = match self.role {
                Role::Owner(_) if self.in_doubt.is_none() => self.core.timer_deadline(),
                _ => None,
            };
            let wake =
                crate::time::instant_at(self.caps.time.as_ref(), deadline.unwrap_or(u64::MAX));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    // Boxed: the future of a command's handling is several KiB, and kept
                    // inline it would be part of every idle game's task for its whole life.
                    Some(cmd) => Box::pin(self.handle(cmd)).await,
                    None => break,
                },
                _ = tokio::time::sleep_until(wake), if deadline.is_some() => {
                    Box::pin(self.on_timer()).await;
                }
                changed = shutdown.changed(), if !self.shutting_down => {
                    // Commands are refused while the server shuts down: nobody may lose on
                    // time meanwhile (the restart logs how long the clock stood still). A
                    // dropped sender only disables this branch.
                    self.shutting_down = true;
                    if changed.is_ok() && *shutdown.borrow() {
                        self.core.pause(self.caps.time.now_ms());
                    }
                }
                changed = async { availability.as_mut()?.changed().await.ok() },
                    if availability.is_some() =>
                {
                    // The store went down or came back: the upkeep pauses or resumes the
                    // clock now, not at some later check.
                    if changed.is_none() {
                        availability = None;
                    }
                    upkeep_at = Some(tokio::time::Instant::now());
                }
                _ = tokio::time::sleep_until(upkeep_at.unwrap_or_else(tokio::time::Instant::now)),
                    if upkeep_at.is_some() =>
                {
                    upkeep_at = None;
                    match self.role {
                        Role::Follower(_) => Box::pin(self.follower_upkeep()).await,
                        Role::Owner(_) => {
                            Box::pin(self.upkeep()).await;
                            Box::pin(self.flush_crowd()).await;
                        }
                    }
                    if self.may_stop(linger) {
                        break;
                    }
                }
            }
        }
        self.caps
            .directory
            .remove_actor(self.core.id(), &self.summary);
        if let Some(peers) = &self.caps.peers {
            if let Role::Follower(_) = self.role {
                peers.unfollow(self.core.id());
            }
            // Also for a follower: a lease claimed for it just as it stopped (its promotion
            // still queued) is no longer renewed, so it lapses and the game is taken over
            // from the log rather than held by a node with no actor for it.
            peers.set_owned(self.core.id(), false);
        }
        tracing::info!("game actor stopped");
    }

    /// Whether the periodic upkeep has work: a follower's (answers it waits for, the
    /// owner's freshness); an owner's only with a write in doubt, the store down, a paused
    /// clock to resume, an unsaved final document, players or spectators on other nodes
    /// (whose nodes may die), a changed spectator count to publish, or an ended game to
    /// stop once nobody watches it.
    fn upkeep_due(&self) -> bool {
        let Role::Owner(o) = &self.role else {
            return true;
        };
        self.in_doubt.is_some()
            || o.store_paused
            || o.finish_unsaved
            || !o.remote_online.is_empty()
            || !o.remote_watchers.is_empty()
            || !self.caps.store.available()
            || (self.core.paused() && !self.shutting_down)
            || self.total_watchers() != self.spectators
            || (self.ended_at.is_some() && self.subs.is_empty())
    }

    /// Whether nobody needs this actor any more: an owner's game ended `linger` ago with
    /// its record stored; a follower's last local subscriber left `linger` ago with no
    /// command of theirs waiting. Never with a write in doubt.
    fn may_stop(&self, linger: Duration) -> bool {
        if !self.subs.is_empty() || self.in_doubt.is_some() {
            return false;
        }
        match &self.role {
            Role::Owner(o) => {
                !o.finish_unsaved && self.ended_at.is_some_and(|t| t.elapsed() >= linger)
            }
            Role::Follower(f) => {
                f.pending.is_empty()
                    && !f.promoting
                    && f.idle_since.is_some_and(|t| t.elapsed() >= linger)
            }
        }
    }

    async fn handle(&mut self, cmd: Command) {
        if self.in_doubt.is_some() && matches!(cmd, Command::Watch { .. } | Command::Legal { .. }) {
            // Reads show what the log says happened, when the store can tell.
            let _ = Box::pin(self.settle()).await;
        }
        match cmd {
            Command::Watch {
                conn,
                rid,
                since,
                code,
                reply,
            } => {
                if let Role::Follower(_) = self.role {
                    // Never a snapshot behind what the owner acknowledged: the bus may have
                    // lost an event (a publish that died with its owner).
                    Box::pin(self.catch_up()).await;
                }
                let r = self.watch(conn, rid, since, code);
                if let Some(reply) = reply {
                    let _ = reply.send(r);
                }
            }
            Command::Unwatch { conn_id } => self.unsubscribe(conn_id),
            Command::Legal { player_id, reply } => {
                let answer = if self.may_see(player_id.as_deref(), None) {
                    Ok(Answer::Legal {
                        seq: self.core.seq(),
                        moves: self.core.legal(),
                    })
                } else {
                    Err(ApiError::private_game())
                };
                let _ = reply.send(answer);
            }
            Command::Bus(msg) => Box::pin(self.bus(*msg)).await,
            Command::Chat(req) => Box::pin(self.chat_request(*req)).await,
            Command::Promote => Box::pin(self.take_over()).await,
            Command::Demote => Box::pin(self.demote("the lease lapsed")).await,
            Command::Act { .. }
            | Command::Presence { .. }
            | Command::Rtt { .. }
            | Command::Heal => match self.role {
                Role::Owner(_) => self.owner_command(cmd).await,
                Role::Follower(_) => Box::pin(self.follower_command(cmd)).await,
            },
            Command::Snapshot {
                viewer,
                code,
                reply,
            } => {
                let visible = self.may_see(viewer.as_deref(), code.as_deref());
                let _ = reply.send(visible.then(|| (self.core.seq(), self.core.document())));
            }
        }
    }

    /// The clock timer fired: log the server-decided end if a deadline passed (even with
    /// nobody connected); otherwise the loop re-arms it.
    async fn on_timer(&mut self) {
        if let Some(end) = self.core.due(self.caps.time.now_ms()) {
            tracing::info!(action = ?end.action, "deadline passed");
            let _ = self.commit(end).await;
        }
    }

    /// Applies a logged event, publishes its patch, and runs the reactions that belong
    /// outside the core: ratings at a rated end (before the end's diff, so a player who
    /// sees the end finds the new ratings stored), the final document, the rematch game.
    async fn apply(&mut self, event: &ActionRecord) {
        let was_over = self.core.result().is_some();
        let had_rematch = self.core.rematch_game().is_some();
        let patch = match self.core.apply(event) {
            Ok(patch) => patch,
            Err(e) => {
                tracing::error!(error = %e, "a logged event does not apply");
                return;
            }
        };
        if let Some(cmd) = &event.cmd {
            if self.played.len() == PLAYED_CMDS {
                self.played.pop_front();
            }
            self.played.push_back((cmd.clone(), event.seq));
        }
        let owner = matches!(self.role, Role::Owner(_));
        if matches!(event.action, ActionKind::Move { .. }) && owner {
            self.caps.metrics.moved(self.core.kind());
        }
        let ended = !was_over && self.core.result().is_some();
        if ended && owner {
            Box::pin(self.rate()).await;
            Box::pin(self.arena_end()).await;
        }
        if let (true, Some(peers)) = (owner, &self.caps.peers) {
            peers
                .publish(&BusMessage::Event {
                    game: self.core.id().to_string(),
                    event: event.clone(),
                })
                .await;
        }
        let touches = |prefix: &str| patch.iter().any(|op| op.path.starts_with(prefix));
        let swapped = touches("/players");
        let lobby_visible = swapped || touches("/status");
        self.publish(patch);
        self.ping_runner();
        if lobby_visible {
            self.update_summary();
        }
        if swapped && owner {
            // The crowd is keyed by side and follows the person: after a swap its two
            // entries trade places.
            Box::pin(self.crowd_out()).await;
        }
        if ended {
            self.mark_ended();
        }
        if !owner {
            return;
        }
        if !had_rematch {
            if let Some(game_id) = self.core.rematch_game() {
                Box::pin(self.start_rematch(game_id.to_string())).await;
            }
        }
        if ended || matches!(event.action, ActionKind::Rematch { .. }) {
            Box::pin(self.save_finished()).await;
        }
    }

    /// Tells an arena game's arena how it ended.
    async fn arena_end(&self) {
        let (Some(link), Some((winner, reason))) = (self.core.arena(), self.core.result()) else {
            return;
        };
        let end = ArenaGameEnd {
            game_id: self.core.id().to_string(),
            arena: link.id.to_string(),
            players: self.core.player_ids().map(str::to_string),
            winner: winner.map(Side::index),
            aborted: reason == Reason::Aborted,
            plies: u32::try_from(self.core.moves()).unwrap_or(u32::MAX),
            berserk: [
                self.core.berserk(Side::First),
                self.core.berserk(Side::Second),
            ],
            absent: self.core.absent().map(Side::index),
        };
        self.caps.reactions.arena_game_ended(end).await;
    }

    fn mark_ended(&mut self) {
        self.ended_at = Some(Instant::now());
        self.chat_at_end();
        self.caps.directory.ended(self.core.id());
        if let Role::Owner(_) = self.role {
            self.caps.metrics.games_live(self.core.kind()).dec();
            if let Some((_, reason)) = self.core.result() {
                self.caps.metrics.game_ended(self.core.kind(), reason);
            }
        }
        self.update_summary();
        if let Some((winner, reason)) = self.core.result() {
            let names = self.core.side_names();
            tracing::info!(
                reason = reason.as_str(),
                winner = winner.map_or("draw", |s| names[s.index()]),
                rated = self.core.rated(),
                moves = self.core.moves(),
                "game ended"
            );
        }
    }

    /// A message from another node about this game.
    async fn bus(&mut self, msg: BusMessage) {
        match msg {
            BusMessage::Request { from, req, op, .. } => self.remote(from, req, op).await,
            BusMessage::Owner { node, .. } => self.new_owner(node).await,
            // Only a follower takes the owner's events, crowd and answers.
            msg => {
                if let Role::Follower(_) = self.role {
                    self.owner_says(msg).await;
                }
            }
        }
    }

    /// Applies every logged event this node has not seen (the log is the authority), and
    /// settles a write of this node's whose answer was lost when it lost the game (the log
    /// says whether it landed). `false` when the log cannot be read now.
    async fn heal(&mut self) -> bool {
        let log = match self
            .caps
            .store_call(self.caps.store.actions(self.core.id()))
            .await
        {
            Ok(log) => log,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the log to catch up");
                self.set_behind(true);
                return false;
            }
        };
        self.set_behind(false);
        for event in &log {
            if event.seq == self.core.seq() + 1 {
                self.apply(event).await;
            }
        }
        if let Some(doubt) = self.in_doubt.take() {
            let logged = log.contains(&doubt.event);
            if let Some((reply, if_logged, if_not)) = doubt.waiting {
                let _ = reply.send(if logged { if_logged } else { Err(if_not) });
            }
        }
        true
    }
}
