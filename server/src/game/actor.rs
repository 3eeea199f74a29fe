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

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::Utf8Bytes;
use serde_json::{json, Map, Value};
use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{ErrorCode, Rid, ServerMessage, Visibility};
use stoa_protocol::{AnyGame, Reason};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::capabilities::Capabilities;
use super::clock_driver::ClockDriver;
use super::core::{Core, Decision, PatchOp};
use super::replay::Replay;
use super::{Act, Answer, Command, NewGame};
use crate::cluster::messages::{BusMessage, RemoteOp};
use crate::error::ApiError;
use crate::ids;
use crate::outbound::{ConnHandle, SendOutcome};
use crate::store::{ActionKind, ActionRecord, FinishedGame, StoreError};

/// A write whose outcome is unknown (the store's answer was lost or late), and the request
/// that made it, which is answered only once the log says what happened: an error answer
/// must mean nothing changed, and a write may still land after its call timed out.
struct Doubt {
    event: ActionRecord,
    /// The waiting request: its answer if the event is logged, and if it is not.
    waiting: Option<(super::Reply, Result<Answer, ApiError>, ApiError)>,
}

/// Why a commit did not happen (yet).
enum Committed {
    /// The store refused or was unreachable before the write was sent: nothing changed.
    Not(ApiError),
    /// The write was sent and its answer lost: the log will tell (see [`Doubt`]).
    InDoubt(ApiError),
    /// Another node holds the game's lease (this one was paused or cut off): nothing was
    /// written, and this actor follows the new owner now.
    Moved,
}

/// Whether this node decides for the game or follows the node that does (cluster mode).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Role {
    /// This node holds the game's lease: it decides, logs, runs the clock.
    Owner,
    /// Another node owns the game: commands go to it, its logged events come back over the
    /// bus and are applied here for this node's subscribers.
    Follower {
        /// The owner, when known.
        owner: Option<String>,
    },
}

/// A command a follower forwarded to the owner, waiting for the answer.
struct Forwarded {
    reply: super::Reply,
    at: Instant,
    /// The command's id, logged with the event it makes (see [`ActionRecord::cmd`]): when
    /// the answer is lost, the log says whether exactly this command was played.
    cmd: String,
    /// The owner it was sent to: once another node holds the lease, that one can no longer
    /// write, and the log tells what the command did.
    owner: String,
    /// The request as sent, to send again (marked a retry) while the owner is unchanged.
    op: RemoteOp,
}

/// How many forwarded commands an actor remembers having played (see [`Actor::played`]):
/// a retry comes within seconds, a few dozen events at most.
const PLAYED_CMDS: usize = 64;

/// How often a follower checks the log's end for an event the bus did not bring (pub/sub
/// delivers at most once: a publish lost with its owner would otherwise leave this node's
/// players one seq behind until the next event, which may never come).
const FRESHNESS_CHECK: Duration = Duration::from_secs(2);

/// How long a follower waits for the owner's answer to a forwarded command before it asks
/// Redis who holds the lease: an owner that still holds it gets the command again (pub/sub
/// may have lost the request or its answer; the owner never plays one command twice); one
/// that lost it can no longer write, and the log settles the command. Usually the new
/// owner's announcement settles it first.
const REMOTE_ANSWER: Duration = Duration::from_secs(1);

/// The state one actor owns besides its core.
struct Actor {
    role: Role,
    /// Players connected on other nodes, by player: the nodes (owner only).
    remote_online: HashMap<String, HashSet<String>>,
    /// Spectators on other nodes, by node (owner only).
    remote_watchers: HashMap<String, u64>,
    /// The spectator count last reported to the owner (follower only).
    reported_watchers: u64,
    /// The owner's last `game.crowd` frame (follower only).
    last_crowd: Option<Utf8Bytes>,
    /// Commands forwarded to the owner, waiting for its answer (follower only).
    pending: HashMap<u64, Forwarded>,
    /// The last forwarded commands applied here, with their seq: a command sent again is
    /// answered from this instead of being played twice.
    played: std::collections::VecDeque<(String, u64)>,
    /// This node holds the lease but has not read the log to its end yet (the read failed):
    /// it decides nothing until it has, so it never acts on a state behind the log.
    promoting: bool,
    /// When a follower last checked the log's end (see [`FRESHNESS_CHECK`]).
    checked_at: Instant,
    /// When the last local subscriber left (a follower nobody here needs stops).
    idle_since: Option<Instant>,
    caps: Capabilities,
    core: Core,
    /// Players who presented the room code: they may watch again without it.
    code_viewers: HashSet<String>,
    subs: HashMap<u64, Arc<ConnHandle>>,
    /// Subscribers that are not the seated players, counted as they come and go.
    watchers: u64,
    /// The spectator count last published in `game.crowd`.
    spectators: u64,
    /// Whether each player (by id) has a connection.
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
    /// anything else happens in this game, and only then is its request answered.
    in_doubt: Option<Doubt>,
    /// The final document could not be stored yet (retried on every tick).
    finish_unsaved: bool,
    /// The store is unreachable: the clock stands still (no move can be acknowledged, so
    /// nobody may lose time meanwhile).
    store_paused: bool,
    shutting_down: bool,
    /// The lobby's view of this game (public games while they are on).
    summary: Arc<std::sync::Mutex<Option<Value>>>,
}

/// The game's clock driver for its setup. `Hub::create_game` validated the clock request;
/// one that no longer validates (a stored game after the bounds changed) falls back to no
/// clock rather than losing the game.
pub fn clock_for(caps: &Capabilities, new: &NewGame) -> ClockDriver {
    let players = [new.players[0].id.as_str(), new.players[1].id.as_str()];
    let first_action_ms = caps.settings.first_action_ms;
    let tc = crate::clock_request::time_control(&new.clock).unwrap_or_else(|e| {
        tracing::error!(error = %e, "invalid stored clock: playing without one");
        TimeControl::None
    });
    ClockDriver::new(tc, players, first_action_ms)
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
    summary: Arc<std::sync::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let core = new_core(&caps, new, game, created_ms);
    let actor = Actor::new(caps, core, online, summary, now);
    actor.update_summary();
    actor.start(rx);
}

/// Starts the actor of a game rebuilt from its log (see [`crate::recovery`]). Nobody is
/// connected after a restart: both players count as offline from now. The clock stood
/// still since the last logged event; the actor logs that as a `resume` event as soon as
/// it runs. A game the log ended has its final document stored.
pub fn spawn_recovered(
    caps: Capabilities,
    mut core: Core,
    rx: mpsc::Receiver<Command>,
    summary: Arc<std::sync::Mutex<Option<Value>>>,
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
        actor.finish_unsaved = true;
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
    summary: Arc<std::sync::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let mut actor = Actor::new(caps, core, online, summary, now);
    actor.role = Role::Follower { owner: None };
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
        summary: Arc<std::sync::Mutex<Option<Value>>>,
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
            role: Role::Owner,
            remote_online: HashMap::new(),
            remote_watchers: HashMap::new(),
            reported_watchers: 0,
            last_crowd: None,
            pending: HashMap::new(),
            played: std::collections::VecDeque::new(),
            promoting: false,
            checked_at: Instant::now(),
            idle_since: Some(Instant::now()),
            replay: Replay::new(caps.settings.replay_buffer),
            caps,
            core,
            code_viewers: HashSet::new(),
            subs: HashMap::new(),
            watchers: 0,
            spectators: 0,
            online: online_map,
            offline_since,
            snapshot: None,
            ended_at: None,
            ended_ms: None,
            ratings_after: None,
            in_doubt: None,
            finish_unsaved: false,
            store_paused: false,
            shutting_down: false,
            summary,
        }
    }

    fn start(self, rx: mpsc::Receiver<Command>) {
        let span = tracing::info_span!(parent: None, "game", id = %self.core.id(), kind = %self.core.kind());
        let directory = self.caps.directory.clone();
        let id = self.core.id().to_string();
        let task = tokio::spawn(self.run(rx).instrument(span));
        // Supervision: an actor that panics (a rules-engine bug) must not leave a dead handle
        // behind; its game is unregistered and requests get `not_found` instead of hanging.
        tokio::spawn(async move {
            if let Err(e) = task.await {
                if e.is_panic() {
                    tracing::error!(game = %id, "game actor panicked; game unregistered");
                    directory.remove(&id);
                }
            }
        });
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        tracing::info!(
            seq = self.core.seq(),
            follower = self.is_follower(),
            "game running"
        );
        if self.is_follower() {
            // Events logged before this follower was registered are in the log.
            self.heal().await;
            self.report_local_presence().await;
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
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let linger = Duration::from_millis(self.caps.settings.linger_ms);
        let mut shutdown = self.caps.shutdown.clone();
        self.shutting_down = *shutdown.borrow();
        loop {
            // The one clock timer: the first-action deadline or the running side's flag
            // (plus its lag grace), re-armed after every event. Off while a write is in
            // doubt: the log must say what happened first.
            let deadline = if self.in_doubt.is_some() || self.is_follower() {
                None
            } else {
                self.core.timer_deadline()
            };
            let wake =
                crate::time::instant_at(self.caps.time.as_ref(), deadline.unwrap_or(u64::MAX));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                _ = tokio::time::sleep_until(wake), if deadline.is_some() => {
                    self.on_timer().await;
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
                _ = tick.tick() => {
                    if self.is_follower() {
                        self.follower_upkeep().await;
                        // Nobody here needs a follower once its local subscribers left.
                        if self.subs.is_empty()
                            && self.pending.is_empty()
                            && !self.promoting
                            && self.in_doubt.is_none()
                            && self.idle_since.is_some_and(|t| t.elapsed() >= linger)
                        {
                            break;
                        }
                        continue;
                    }
                    self.upkeep().await;
                    self.flush_crowd().await;
                    if self.subs.is_empty()
                        && !self.finish_unsaved
                        && self.in_doubt.is_none()
                        && self.ended_at.is_some_and(|t| t.elapsed() >= linger)
                    {
                        break;
                    }
                }
            }
        }
        self.caps.directory.remove(self.core.id());
        if let Some(peers) = &self.caps.peers {
            if self.is_follower() {
                peers.unfollow(self.core.id());
            }
            // Also for a follower: a lease claimed for it just as it stopped (its promotion
            // still queued) is no longer renewed, so it lapses and the game is taken over
            // from the log rather than held by a node with no actor for it.
            peers.set_owned(self.core.id(), false);
        }
        tracing::info!("game actor stopped");
    }

    async fn handle(&mut self, cmd: Command) {
        if self.in_doubt.is_some() && matches!(cmd, Command::Watch { .. } | Command::Legal { .. }) {
            // Reads show what the log says happened, when the store can tell.
            let _ = self.settle().await;
        }
        match cmd {
            Command::Watch {
                conn,
                rid,
                since,
                code,
                reply,
            } => {
                if self.is_follower() {
                    // Never a snapshot behind what the owner acknowledged: the bus may have
                    // lost an event (a publish that died with its owner).
                    self.catch_up().await;
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
            Command::Act {
                player_id,
                act,
                reply,
            } => {
                if self.is_follower() {
                    let op = RemoteOp::Act {
                        player_id,
                        act,
                        cmd: None,
                        retry: false,
                    };
                    self.forward(op, Some(reply)).await;
                } else {
                    self.act(&player_id, act, reply).await;
                }
            }
            Command::Presence { player_id, online } => {
                if self.is_follower() {
                    if self.core.side_of(&player_id).is_some() {
                        self.online.insert(player_id.clone(), online);
                        self.forward(RemoteOp::Presence { player_id, online }, None)
                            .await;
                    }
                } else {
                    self.presence(&player_id, None, online).await;
                }
            }
            Command::Rtt { player_id, rtt_ms } => {
                if self.is_follower() {
                    self.forward(RemoteOp::Rtt { player_id, rtt_ms }, None)
                        .await;
                } else {
                    self.core.record_rtt(&player_id, rtt_ms);
                }
            }
            Command::Bus(msg) => self.bus(msg).await,
            Command::Promote => self.take_over().await,
            Command::Heal => {
                if self.is_follower() {
                    // Announcements of a new owner may have been lost with the bus too, and
                    // so may requests and answers: those still waiting are sent again (or
                    // settled from the log if their owner is gone).
                    self.role = Role::Follower { owner: None };
                    self.heal().await;
                    let waiting: Vec<u64> = self.pending.keys().copied().collect();
                    self.chase(waiting).await;
                }
            }
            Command::Demote => self.demote("the lease lapsed").await,
            Command::Snapshot { code, reply } => {
                let visible = self.may_see(None, code.as_deref());
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

    fn code_matches(&self, code: Option<&str>) -> bool {
        match (self.core.code(), code) {
            (Some(mine), Some(given)) => mine == ids::normalize_code(given),
            _ => false,
        }
    }

    /// The one rule for who may see this game (watch it, read its legal moves, fetch it):
    /// anyone when it is public; its players; whoever gives its room code, now or earlier
    /// on this game.
    fn may_see(&self, player_id: Option<&str>, code: Option<&str>) -> bool {
        self.core.visibility() == Visibility::Public
            || self.is_player(player_id)
            || self.code_matches(code)
            || player_id.is_some_and(|p| self.code_viewers.contains(p))
    }

    fn is_player(&self, player_id: Option<&str>) -> bool {
        player_id.is_some_and(|p| self.core.side_of(p).is_some())
    }

    /// Decides and commits a player's command, then answers it — or, when the store's
    /// answer is lost, leaves it waiting until the log settles what happened.
    async fn act(&mut self, player_id: &str, act: Act, reply: super::Reply) {
        self.act_from(player_id, act, reply, None).await;
    }

    /// [`Actor::act`]; `cmd`: the id of a command another node forwarded (`None`: from this
    /// node's session). A local command goes on to the new owner when this node turns out to
    /// have lost the game; a forwarded one is answered `unavailable` instead (nothing was
    /// written): its sender settles it, and must never see it played behind its back. The
    /// forwarded command's id is logged with its event, so its sender can settle a lost
    /// answer from the log.
    async fn act_from(
        &mut self,
        player_id: &str,
        act: Act,
        reply: super::Reply,
        cmd: Option<String>,
    ) {
        let local = cmd.is_none();
        let (event, answer) = match self.decide(player_id, act.clone()).await {
            Ok(Decision::Record(mut event)) => {
                let seq = event.seq;
                event.cmd = cmd;
                (event, Ok(Answer::Ok { seq }))
            }
            Ok(Decision::Unchanged) => {
                let _ = reply.send(Ok(Answer::Ok {
                    seq: self.core.seq(),
                }));
                return;
            }
            Ok(Decision::EndInstead(end, error)) => (end, Err(error)),
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        match self.commit(event).await {
            Ok(()) => {
                let _ = reply.send(answer);
            }
            Err(Committed::Not(e)) => {
                let _ = reply.send(Err(e));
            }
            Err(Committed::Moved) if local => {
                // Nothing was written here: the new owner decides on the same command.
                let op = RemoteOp::Act {
                    player_id: player_id.to_string(),
                    act,
                    cmd: None,
                    retry: false,
                };
                self.forward(op, Some(reply)).await;
            }
            Err(Committed::Moved) => {
                let _ = reply.send(Err(ApiError::new(
                    ErrorCode::Unavailable,
                    "this game moved to another server: try again",
                )));
            }
            Err(Committed::InDoubt(e)) => {
                if let Some(doubt) = &mut self.in_doubt {
                    doubt.waiting = Some((reply, answer, e));
                }
                // The log may already tell (a lost answer); otherwise upkeep asks again.
                let _ = self.settle().await;
            }
        }
    }

    async fn decide(&mut self, player_id: &str, act: Act) -> Result<Decision, ApiError> {
        self.settle().await?;
        if self.shutting_down && self.core.result().is_none() {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                "the server is shutting down: try again in a moment",
            ));
        }
        let now = self.caps.time.now_ms();
        let gone = self.opponent_gone_since(player_id, now);
        self.core.decide(player_id, act, now, gone)
    }

    /// When the acting player's opponent lost their last connection (`None`: connected).
    fn opponent_gone_since(&self, player_id: &str, now: u64) -> Option<u64> {
        let side = self.core.side_of(player_id)?;
        let opponent = self.core.player_ids()[side.other().index()];
        if self.is_online(opponent) {
            return None;
        }
        Some(self.offline_since.get(opponent).copied().unwrap_or(now))
    }

    /// Logs an event; only once the store accepted it is it applied and published. A
    /// failed write may still have landed (only its answer lost): it is settled from the
    /// log before this game does anything else.
    async fn commit(&mut self, event: ActionRecord) -> Result<(), Committed> {
        let start = Instant::now();
        let appended = self.caps.store.append_action(self.core.id(), &event).await;
        self.caps
            .metrics
            .store_call(start.elapsed(), appended.is_ok());
        match appended {
            Ok(()) => {
                self.apply(&event).await;
                Ok(())
            }
            Err(StoreError::NotOwner(_)) => {
                self.demote("another node holds the lease").await;
                Err(Committed::Moved)
            }
            Err(e @ StoreError::InDoubt(_)) => {
                tracing::warn!(error = %e, seq = event.seq, "a write's outcome is unknown");
                self.in_doubt = Some(Doubt {
                    event,
                    waiting: None,
                });
                Err(Committed::InDoubt(ApiError::store(e)))
            }
            Err(e) => {
                tracing::warn!(error = %e, "a write was refused");
                Err(Committed::Not(ApiError::store(e)))
            }
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
        let owner = !self.is_follower();
        if matches!(event.action, ActionKind::Move { .. }) && owner {
            self.caps.metrics.moved(self.core.kind());
        }
        let ended = !was_over && self.core.result().is_some();
        if ended && owner {
            self.rate().await;
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
        if lobby_visible {
            self.update_summary();
        }
        if swapped && owner {
            // The crowd is keyed by side and follows the person: after a swap its two
            // entries trade places.
            self.crowd_out().await;
        }
        if ended {
            self.mark_ended();
        }
        if !owner {
            return;
        }
        if !had_rematch {
            if let Some(game_id) = self.core.rematch_game() {
                self.start_rematch(game_id.to_string()).await;
            }
        }
        if ended || matches!(event.action, ActionKind::Rematch { .. }) {
            self.save_finished().await;
        }
    }

    /// Encodes the diff once (the `game.diff` message, written around the typed patch),
    /// buffers it for `since` and queues the same bytes for every subscriber.
    fn publish(&mut self, patch: Vec<PatchOp>) {
        let bytes = Utf8Bytes::from(diff_frame(self.core.id(), self.core.seq(), &patch));
        self.replay.push(self.core.seq(), bytes.clone());
        self.broadcast(bytes);
    }

    fn broadcast(&mut self, bytes: Utf8Bytes) {
        let mut gone = Vec::new();
        // The players first: their writers wake before thousands of spectators' do, so a
        // crowd never delays the opponent's diff.
        for players_pass in [true, false] {
            for (id, conn) in &self.subs {
                if self.is_player(conn.player_id()) != players_pass {
                    continue;
                }
                if conn.send(bytes.clone()) != SendOutcome::Sent {
                    gone.push(*id);
                }
            }
        }
        for id in gone {
            self.unsubscribe(id);
        }
    }

    fn unsubscribe(&mut self, conn_id: u64) {
        if let Some(conn) = self.subs.remove(&conn_id) {
            conn.remove_sub(self.core.id());
            if !self.is_player(conn.player_id()) {
                self.watchers -= 1;
            }
        }
        if self.subs.is_empty() && self.idle_since.is_none() {
            self.idle_since = Some(Instant::now());
        }
    }

    /// Updates both players' ratings for a rated result (a failure is logged: the game's
    /// result stands either way).
    async fn rate(&mut self) {
        let Some((winner, reason)) = self.core.result() else {
            return;
        };
        if !self.core.rated() || reason == Reason::Aborted {
            return;
        }
        let after = self
            .caps
            .reactions
            .rated_result(self.core.kind(), self.core.player_ids(), winner)
            .await;
        if let Some(after) = after {
            let names = self.core.side_names();
            self.ratings_after = Some(json!({names[0]: after[0], names[1]: after[1]}));
        }
    }

    fn mark_ended(&mut self) {
        self.ended_at = Some(Instant::now());
        self.caps.directory.ended(self.core.id());
        if !self.is_follower() {
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

    async fn start_rematch(&mut self, game_id: String) {
        let setup = self.core.rematch_setup(game_id);
        self.caps.reactions.rematch(setup).await;
    }

    async fn save_finished(&mut self) {
        let now = self.caps.time.now_ms();
        let finished = FinishedGame {
            seq: self.core.seq(),
            doc: self.core.document(),
            ended_ms: *self.ended_ms.get_or_insert(now),
            ratings_after: self.ratings_after.clone(),
        };
        match self
            .caps
            .store_call(self.caps.store.finish_game(self.core.id(), &finished))
            .await
        {
            Ok(()) => self.finish_unsaved = false,
            Err(e) => {
                tracing::error!(error = %e, "could not store the finished game: retrying");
                self.finish_unsaved = true;
            }
        }
    }

    /// Publishes the lobby summary: public games while they are on, nothing otherwise.
    fn update_summary(&self) {
        // Only the owner speaks for a game in the lobby (a follower's view may lag).
        let summary = (self.core.visibility() == Visibility::Public
            && self.core.result().is_none()
            && !self.is_follower())
        .then(|| {
            let doc_players = self.players_json();
            json!({
                "kind": self.core.kind(),
                "players": doc_players,
                "clock": self.core.clock().time_control().kind(),
                // Additions: the whole time control and the options, so a lobby line can
                // say `5+3` and the board size as rooms do.
                "time_control": self.core.clock().request_json(),
                "options": self.core.options(),
                "rated": self.core.rated(),
                "spectators": self.spectators,
            })
        });
        *self.summary.lock().unwrap_or_else(|e| e.into_inner()) = summary;
    }

    fn players_json(&self) -> Value {
        let names = self.core.side_names();
        let mut players = Map::new();
        for (i, p) in self.core.players().iter().enumerate() {
            players.insert(
                names[i].to_string(),
                serde_json::to_value(p).unwrap_or(Value::Null),
            );
        }
        Value::Object(players)
    }

    fn watch(
        &mut self,
        conn: Arc<ConnHandle>,
        rid: Option<Rid>,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<Answer, ApiError> {
        let seated = self.is_player(conn.player_id());
        let by_code = self.code_matches(code.as_deref());
        if !self.may_see(conn.player_id(), code.as_deref()) {
            return Err(ApiError::private_game());
        }
        if let (true, Some(p)) = (by_code, conn.player_id()) {
            // A spectator let in by the code may send `game.watch` again (a gap, a
            // reconnect) without it.
            self.code_viewers.insert(p.to_string());
        }
        if self.subs.insert(conn.id, conn.clone()).is_none() && !seated {
            self.watchers += 1;
        }
        self.idle_since = None;
        conn.add_sub(self.core.id());
        let seq = self.core.seq();
        let replayed = since.and_then(|since| self.replay.since(since, seq));
        let answer = match replayed {
            Some(diffs) => {
                for d in diffs {
                    if conn.send(d) != SendOutcome::Sent {
                        self.unsubscribe(conn.id);
                        return Ok(Answer::Sent);
                    }
                }
                Answer::Ok { seq }
            }
            None => {
                let frame = self.snapshot_frame(rid.as_ref());
                if conn.send(frame) != SendOutcome::Sent {
                    self.unsubscribe(conn.id);
                    return Ok(Answer::Sent);
                }
                Answer::Sent
            }
        };
        let crowd = match (&self.role, &self.last_crowd) {
            (Role::Follower { .. }, Some(frame)) => frame.clone(),
            _ => self.crowd_frame(self.total_watchers()),
        };
        if conn.send(crowd) != SendOutcome::Sent {
            self.unsubscribe(conn.id);
        }
        Ok(answer)
    }

    /// The `game.snapshot` frame: the document is encoded once per seq and shared by
    /// every watcher who asks for that seq; only the envelope (the rid) differs.
    fn snapshot_frame(&mut self, rid: Option<&Rid>) -> Utf8Bytes {
        let seq = self.core.seq();
        let doc = match &self.snapshot {
            Some((s, doc)) if *s == seq => doc.clone(),
            _ => {
                let doc: Arc<str> = self.core.document().to_string().into();
                self.snapshot = Some((seq, doc.clone()));
                doc
            }
        };
        let id = Value::from(self.core.id());
        let mut frame = String::with_capacity(doc.len() + 96);
        frame.push_str("{\"t\":\"game.snapshot\",");
        if let Some(rid) = rid {
            let rid = serde_json::to_string(rid).unwrap_or_else(|_| "null".into());
            let _ = write!(frame, "\"rid\":{rid},");
        }
        let _ = write!(frame, "\"game_id\":{id},\"seq\":{seq},\"doc\":{doc}}}");
        Utf8Bytes::from(frame)
    }

    fn crowd_frame(&self, spectators: u64) -> Utf8Bytes {
        let names = self.core.side_names();
        let mut online = Map::new();
        for (i, p) in self.core.player_ids().iter().enumerate() {
            online.insert(names[i].to_string(), Value::Bool(self.is_online(p)));
        }
        let msg = ServerMessage::GameCrowd {
            game_id: self.core.id().to_string(),
            spectators,
            online,
        };
        Utf8Bytes::from(msg.to_json())
    }

    /// Publishes a changed spectator count (batched: called on every tick).
    async fn flush_crowd(&mut self) {
        if self.total_watchers() != self.spectators {
            self.crowd_out().await;
            if self.core.visibility() == Visibility::Public && self.core.result().is_none() {
                self.update_summary();
            }
        }
    }

    /// Spectators here and, for an owner, on every other node.
    fn total_watchers(&self) -> u64 {
        self.watchers + self.remote_watchers.values().sum::<u64>()
    }

    /// Whether a player has a connection on this node or (as the owner knows) another.
    fn is_online(&self, player_id: &str) -> bool {
        self.online.get(player_id).copied().unwrap_or(false)
            || self
                .remote_online
                .get(player_id)
                .is_some_and(|nodes| !nodes.is_empty())
    }

    /// The crowd goes out: to this node's subscribers and, from an owner, to every
    /// follower's.
    async fn crowd_out(&mut self) {
        self.spectators = self.total_watchers();
        let frame = self.crowd_frame(self.spectators);
        self.broadcast(frame.clone());
        if let Some(peers) = &self.caps.peers {
            peers
                .publish(&BusMessage::Crowd {
                    game: self.core.id().to_string(),
                    frame: frame.as_str().to_string(),
                })
                .await;
        }
    }

    /// A seated player's first connection or last disconnection here (`node: None`) or on
    /// another node: published at once when it changes whether the player is online.
    async fn presence(&mut self, player_id: &str, node: Option<&str>, online: bool) {
        if self.core.side_of(player_id).is_none() {
            return;
        }
        let before = self.is_online(player_id);
        match node {
            None => {
                self.online.insert(player_id.to_string(), online);
            }
            Some(node) => {
                let nodes = self.remote_online.entry(player_id.to_string()).or_default();
                if online {
                    nodes.insert(node.to_string());
                } else {
                    nodes.remove(node);
                }
            }
        }
        let after = self.is_online(player_id);
        if before == after {
            return;
        }
        if after {
            self.offline_since.remove(player_id);
        } else {
            self.offline_since
                .insert(player_id.to_string(), self.caps.time.now_ms());
        }
        self.crowd_out().await;
    }

    fn is_follower(&self) -> bool {
        matches!(self.role, Role::Follower { .. })
    }

    /// A follower sends a command to the game's owner; `reply` waits for its answer (which
    /// comes back through this actor's queue, after the events it caused).
    async fn forward(&mut self, op: RemoteOp, reply: Option<super::Reply>) {
        let Some(peers) = self.caps.peers.clone() else {
            return;
        };
        let owner = match &self.role {
            Role::Follower { owner: Some(owner) } => Some(owner.clone()),
            _ => peers.owner_of(self.core.id()).await,
        };
        let unavailable = || {
            ApiError::new(
                ErrorCode::Unavailable,
                "this game is changing servers: try again in a moment",
            )
        };
        let Some(owner) = owner else {
            if let Some(reply) = reply {
                let _ = reply.send(Err(unavailable()));
            }
            return;
        };
        if owner == peers.node() {
            // The lease is ours but the promotion has not reached this actor yet.
            if let Some(reply) = reply {
                let _ = reply.send(Err(unavailable()));
            }
            return;
        }
        self.role = Role::Follower {
            owner: Some(owner.clone()),
        };
        let req = ids::request_number();
        let mut op = op;
        let forwarded = match (&mut op, reply) {
            (RemoteOp::Act { cmd, .. }, Some(reply)) => {
                let id = format!("{}:{req}", peers.node());
                *cmd = Some(id.clone());
                Some(Forwarded {
                    reply,
                    at: Instant::now(),
                    cmd: id,
                    owner: owner.clone(),
                    op: op.clone(),
                })
            }
            _ => None,
        };
        let message = BusMessage::Request {
            game: self.core.id().to_string(),
            from: peers.node().to_string(),
            req,
            op,
        };
        // Sent, or maybe sent (a publish whose answer was lost may still be delivered and
        // played): the command waits for its answer, or for the log to settle it.
        if peers.send_to(&owner, &message).await != Some(false) {
            if let Some(f) = forwarded {
                self.pending.insert(req, f);
            }
        } else {
            // Nobody listens there: the owner is gone; ask again next time.
            self.role = Role::Follower { owner: None };
            if let Some(f) = forwarded {
                let _ = f.reply.send(Err(unavailable()));
            }
        }
    }

    /// A message from another node about this game.
    async fn bus(&mut self, msg: BusMessage) {
        match msg {
            // Only a follower takes the owner's events and crowd.
            BusMessage::Event { event, .. } if self.is_follower() => self.follow(event).await,
            BusMessage::Crowd { frame, .. } if self.is_follower() => {
                let frame = Utf8Bytes::from(frame);
                self.last_crowd = Some(frame.clone());
                self.broadcast(frame);
            }
            BusMessage::Owner { node, .. } => {
                let me = self.caps.peers.as_ref().map(|p| p.node().to_string());
                if me.as_deref() == Some(node.as_str()) {
                    return;
                }
                if !self.is_follower() {
                    // Another node took the game: the log no longer takes our writes.
                    self.demote("another node took the game over").await;
                }
                self.promoting = false;
                self.role = Role::Follower {
                    owner: Some(node.clone()),
                };
                // The new owner read the log to its end before it said so: what the old
                // owner logged but never published is there, and commands sent to the old
                // owner are settled from it now rather than after a timeout.
                self.heal().await;
                let stale: Vec<u64> = self
                    .pending
                    .iter()
                    .filter(|(_, f)| f.owner != node)
                    .map(|(req, _)| *req)
                    .collect();
                self.settle_forwarded(stale).await;
                self.report_local_presence().await;
            }
            BusMessage::Request { from, req, op, .. } => self.remote(from, req, op).await,
            BusMessage::Reply { req, result, .. } => {
                if let Some(f) = self.pending.remove(&req) {
                    let result: Result<Answer, ApiError> = result.into();
                    // The owner is ahead of this node (an event the bus lost): catch up
                    // before the player hears of a seq this node cannot show.
                    let behind = match &result {
                        Ok(Answer::Ok { seq }) => *seq > self.core.seq(),
                        Err(e) => e.code == ErrorCode::StaleSeq,
                        _ => false,
                    };
                    if behind {
                        self.heal().await;
                    }
                    if matches!(&result, Err(e) if e.code == ErrorCode::Unavailable) {
                        // That node no longer decides (its announcement may have been lost
                        // with a bus connection): the next command asks Redis who does.
                        if let Role::Follower { owner } = &mut self.role {
                            *owner = None;
                        }
                    }
                    let _ = f.reply.send(result);
                }
            }
            _ => {}
        }
    }

    /// The owner serves a follower's request.
    async fn remote(&mut self, from: String, req: u64, op: RemoteOp) {
        let Some(peers) = self.caps.peers.clone() else {
            return;
        };
        if self.is_follower() {
            if let RemoteOp::Act { .. } = op {
                let reply = BusMessage::Reply {
                    game: self.core.id().to_string(),
                    req,
                    result: Err::<Answer, _>(ApiError::new(
                        ErrorCode::Unavailable,
                        "this game is changing servers: try again in a moment",
                    ))
                    .into(),
                };
                peers.send_to(&from, &reply).await;
            }
            return;
        }
        match op {
            RemoteOp::Act {
                player_id,
                act,
                cmd,
                retry,
            } => {
                // An older node sends no id: the command is still told apart from local ones.
                let cmd = cmd.unwrap_or_else(|| format!("{from}:{req}"));
                let game = self.core.id().to_string();
                // A command already played is answered with its seq, never played again (a
                // retry after a lost answer, or a duplicate delivery).
                let played = match self.played(&cmd, retry).await {
                    Ok(played) => played,
                    // Whether it was played cannot be told now: no answer (the sender asks
                    // again, or settles from the log).
                    Err(()) => return,
                };
                if let Some(seq) = played {
                    let reply = BusMessage::Reply {
                        game,
                        req,
                        result: Ok::<_, ApiError>(Answer::Ok { seq }).into(),
                    };
                    peers.send_to(&from, &reply).await;
                    return;
                }
                let (tx, rx) = tokio::sync::oneshot::channel();
                self.act_from(&player_id, act, tx, Some(cmd)).await;
                // The events went out before the answer: a follower sees the diff first.
                tokio::spawn(async move {
                    let result = rx.await.unwrap_or_else(|_| {
                        Err(ApiError::new(ErrorCode::Unavailable, "the game stopped"))
                    });
                    let reply = BusMessage::Reply {
                        game,
                        req,
                        result: result.into(),
                    };
                    peers.send_to(&from, &reply).await;
                });
            }
            RemoteOp::Presence { player_id, online } => {
                self.presence(&player_id, Some(&from), online).await;
            }
            RemoteOp::Spectators { count } => {
                self.remote_watchers.insert(from, count);
            }
            RemoteOp::Rtt { player_id, rtt_ms } => self.core.record_rtt(&player_id, rtt_ms),
        }
    }

    /// A follower applies the owner's next event; a gap is healed from the log.
    async fn follow(&mut self, event: ActionRecord) {
        if event.seq <= self.core.seq() {
            return;
        }
        if event.seq == self.core.seq() + 1 {
            self.apply(&event).await;
        } else {
            self.heal().await;
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
                return false;
            }
        };
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

    /// A follower makes sure it is not behind the log: one cheap read of the log's last
    /// entry, and the whole log only when it holds something this node has not applied.
    async fn catch_up(&mut self) {
        self.checked_at = Instant::now();
        let last = self
            .caps
            .store_call(self.caps.store.last_action(self.core.id()))
            .await;
        if let Ok(Some(last)) = last {
            if last.seq > self.core.seq() {
                self.heal().await;
            }
        }
    }

    /// This node acquired the game's lease: catch up from the log and decide from now on.
    /// The clock was never stopped: a deadline that passed meanwhile flags at once (and
    /// only once: the log takes one event per seq). Until the log has been read to its end
    /// the game stays as it was (retried every tick): deciding on a state behind the log
    /// could answer a stale `ok`.
    async fn take_over(&mut self) {
        if !self.is_follower() {
            return;
        }
        if !self.heal().await {
            self.promoting = true;
            return;
        }
        self.promoting = false;
        let waiting: Vec<u64> = self.pending.keys().copied().collect();
        self.settle_forwarded(waiting).await;
        self.role = Role::Owner;
        tracing::info!(seq = self.core.seq(), "took the game over");
        if self.core.result().is_some() {
            // The old owner may have died before storing the final document.
            self.finish_unsaved = true;
        } else {
            self.caps.metrics.games_live(self.core.kind()).inc();
            self.caps.metrics.lease_takeovers.inc();
        }
        if let Some(peers) = self.caps.peers.clone() {
            peers.set_owned(self.core.id(), true);
            peers
                .publish(&BusMessage::Owner {
                    game: self.core.id().to_string(),
                    node: peers.node().to_string(),
                })
                .await;
        }
        self.update_summary();
    }

    /// An owner forgets what dead nodes reported (their players are gone, their spectators
    /// too), so a dead node never keeps a player "online" and blocks an abandonment claim.
    async fn forget_dead_nodes(&mut self) {
        let Some(peers) = self.caps.peers.clone() else {
            return;
        };
        let mut dead: Vec<String> = self
            .remote_online
            .values()
            .flatten()
            .chain(self.remote_watchers.keys())
            .filter(|n| !peers.is_live(n))
            .cloned()
            .collect();
        if dead.is_empty() {
            return;
        }
        dead.sort();
        dead.dedup();
        for node in &dead {
            self.remote_watchers.remove(node);
            let players: Vec<String> = self.remote_online.keys().cloned().collect();
            for p in players {
                self.presence(&p, Some(node), false).await;
            }
        }
        self.flush_crowd().await;
    }

    /// This node no longer owns the game: it follows whoever does.
    async fn demote(&mut self, why: &str) {
        if self.is_follower() {
            // A takeover that never finished is off too: the lease is gone.
            self.promoting = false;
            return;
        }
        tracing::warn!(reason = why, "no longer the game's owner: following it");
        self.role = Role::Follower { owner: None };
        if self.core.result().is_none() {
            self.caps.metrics.games_live(self.core.kind()).dec();
        }
        // A write in doubt stays in doubt: the heal below (or a later one) reads in the log
        // whether it landed, and only then is its request answered.
        self.update_summary();
        if let Some(peers) = self.caps.peers.clone() {
            peers.set_owned(self.core.id(), false);
            peers.follow(self.core.id()).await;
        }
        // What the new owner logged before the subscription is in the log.
        self.heal().await;
    }

    /// A follower tells the owner who of the players is connected here, and how many
    /// watch here.
    async fn report_local_presence(&mut self) {
        let players: Vec<String> = self
            .core
            .player_ids()
            .iter()
            .map(|p| p.to_string())
            .collect();
        for p in players {
            let online = self.online.get(&p).copied().unwrap_or(false);
            if online {
                self.forward(
                    RemoteOp::Presence {
                        player_id: p,
                        online,
                    },
                    None,
                )
                .await;
            }
        }
        self.reported_watchers = self.watchers;
        if self.watchers > 0 {
            self.forward(
                RemoteOp::Spectators {
                    count: self.watchers,
                },
                None,
            )
            .await;
        }
    }

    /// A follower's periodic duties: finish a takeover whose log read failed, settle a
    /// write of its days as owner that was in doubt, check the log's end now and then, report
    /// its spectator count, give up on answers that never came.
    async fn follower_upkeep(&mut self) {
        if self.promoting {
            self.take_over().await;
            if !self.is_follower() {
                return;
            }
        }
        // A command whose sender left needs no answer any more (and must not keep this
        // follower alive).
        self.pending.retain(|_, f| !f.reply.is_closed());
        if self.in_doubt.is_some() {
            self.heal().await;
        } else if self.checked_at.elapsed() >= FRESHNESS_CHECK {
            self.catch_up().await;
        }
        if self.watchers != self.reported_watchers {
            self.reported_watchers = self.watchers;
            self.forward(
                RemoteOp::Spectators {
                    count: self.watchers,
                },
                None,
            )
            .await;
        }
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, f)| f.at.elapsed() >= REMOTE_ANSWER)
            .map(|(req, _)| *req)
            .collect();
        self.chase(late).await;
    }

    /// The seq of the event the forwarded command `cmd` made, if it was played (owner
    /// only). A write in doubt is settled first (it may be this command); a retry is also
    /// looked for in the whole log (an earlier run of this node may have played it). `Err`
    /// when that cannot be told now.
    async fn played(&mut self, cmd: &str, retry: bool) -> Result<Option<u64>, ()> {
        if self.in_doubt.is_some() && self.settle().await.is_err() {
            return Err(());
        }
        if let Some((_, seq)) = self.played.iter().find(|(c, _)| c == cmd) {
            return Ok(Some(*seq));
        }
        if !retry {
            return Ok(None);
        }
        let log = self
            .caps
            .store_call(self.caps.store.actions(self.core.id()))
            .await
            .map_err(|_| ())?;
        Ok(log
            .iter()
            .find(|e| e.cmd.as_deref() == Some(cmd))
            .map(|e| e.seq))
    }

    /// Forwarded commands that waited long for their answer: sent again to an owner that
    /// still holds the lease (it answers a command it already played from its record);
    /// settled from the log when another node holds it (the old owner can no longer write).
    async fn chase(&mut self, reqs: Vec<u64>) {
        if reqs.is_empty() {
            return;
        }
        let Some(peers) = self.caps.peers.clone() else {
            return;
        };
        let current = peers.owner_of(self.core.id()).await;
        let (again, settle): (Vec<u64>, Vec<u64>) = reqs
            .into_iter()
            .partition(|req| self.pending.get(req).map(|f| &f.owner) == current.as_ref());
        for req in again {
            let Some(f) = self.pending.get_mut(&req) else {
                continue;
            };
            f.at = Instant::now();
            let mut op = f.op.clone();
            if let RemoteOp::Act { retry, .. } = &mut op {
                *retry = true;
            }
            let owner = f.owner.clone();
            let message = BusMessage::Request {
                game: self.core.id().to_string(),
                from: peers.node().to_string(),
                req,
                op,
            };
            // Nobody listening there: the lease lapses soon and the log settles it.
            peers.send_to(&owner, &message).await;
        }
        if !settle.is_empty() {
            self.role = Role::Follower { owner: current };
            self.heal().await;
            self.settle_forwarded(settle).await;
        }
    }

    /// Answers forwarded commands whose answer will not come (the owner died or is silent)
    /// from the log, as the owner would have: success if the log holds the player's action
    /// after the command was sent, otherwise `unavailable` — and then nothing changed.
    async fn settle_forwarded(&mut self, reqs: Vec<u64>) {
        if reqs.is_empty() {
            return;
        }
        let log = self
            .caps
            .store_call(self.caps.store.actions(self.core.id()))
            .await;
        for req in reqs {
            let Some(f) = self.pending.remove(&req) else {
                continue;
            };
            let Ok(log) = &log else {
                // The log cannot tell now: the command waits (asked again next tick) rather
                // than get an answer that may be wrong.
                self.pending.insert(
                    req,
                    Forwarded {
                        at: Instant::now(),
                        ..f
                    },
                );
                continue;
            };
            let made = log
                .iter()
                .find(|e| e.cmd.as_deref() == Some(f.cmd.as_str()));
            let answer = match made {
                Some(e) => Ok(Answer::Ok { seq: e.seq }),
                None => Err(ApiError::new(
                    ErrorCode::Unavailable,
                    "this game changed servers and your command was not played: try again",
                )),
            };
            let _ = f.reply.send(answer);
        }
    }

    /// Settles a write whose answer was lost: if the log holds it, it happened (it is
    /// applied and published now, and its request answered as a success); otherwise it
    /// never did (its request gets the store's error). The read goes to the store after the
    /// write on the same connection, so a write still in flight lands (or not) before it.
    async fn settle(&mut self) -> Result<(), ApiError> {
        if self.in_doubt.is_none() {
            return Ok(());
        }
        if self.is_follower() {
            // Others may have logged after it since: only the whole log tells.
            return if self.heal().await {
                Ok(())
            } else {
                Err(ApiError::new(
                    ErrorCode::Unavailable,
                    "this game is changing servers: try again in a moment",
                ))
            };
        }
        let Some(doubt) = &self.in_doubt else {
            return Ok(());
        };
        let event = doubt.event.clone();
        // The whole log, not only its last entry: a node paused mid-write may find that
        // another node took the game and logged after its write meanwhile.
        let log = self
            .caps
            .store_call(self.caps.store.actions(self.core.id()))
            .await?;
        let Some(doubt) = self.in_doubt.take() else {
            return Ok(());
        };
        let logged = log.contains(&event);
        if logged {
            tracing::info!(
                seq = event.seq,
                "a write whose answer was lost is logged: applying it"
            );
            self.apply(&event).await;
        }
        if let Some((reply, if_logged, if_not)) = doubt.waiting {
            let _ = reply.send(if logged { if_logged } else { Err(if_not) });
        }
        if log.last().is_some_and(|e| e.seq > self.core.seq()) {
            // Someone else writes this game now: follow it (the heal applies the rest).
            self.demote("another node logged in this game").await;
        }
        Ok(())
    }

    /// Periodic duties: stop the clock while the store is unreachable, settle a lost
    /// write, log the resume of a stopped clock, store a final document that could not be
    /// stored.
    async fn upkeep(&mut self) {
        self.forget_dead_nodes().await;
        let available = self.caps.store.available();
        if !available && !self.store_paused && self.core.result().is_none() {
            tracing::warn!("store unreachable: moves are refused and the clock stands still");
            self.store_paused = true;
            self.core.pause(self.caps.time.now_ms());
        } else if available && self.store_paused {
            tracing::info!("store reachable again: the clock resumes");
            self.store_paused = false;
        }
        if self.in_doubt.is_some() && self.settle().await.is_err() {
            return;
        }
        if self.core.paused() && !self.store_paused && !self.shutting_down {
            if let Some(resume) = self.core.resume(self.caps.time.now_ms()) {
                let _ = self.commit(resume).await;
            }
        }
        if self.finish_unsaved {
            self.save_finished().await;
        }
    }
}

/// The `game.diff` frame, byte for byte what [`ServerMessage::GameDiff`] encodes.
fn diff_frame(game_id: &str, seq: u64, patch: &[PatchOp]) -> String {
    let patch = serde_json::to_string(patch).unwrap_or_else(|_| "[]".into());
    let id = Value::from(game_id);
    let mut frame = String::with_capacity(patch.len() + 64);
    let _ = write!(
        frame,
        "{{\"t\":\"game.diff\",\"game_id\":{id},\"seq\":{seq},\"patch\":{patch}}}"
    );
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_envelope_matches_the_wire_type() {
        let patch = vec![PatchOp {
            op: "add",
            path: "/moves/-".into(),
            value: json!("a\"1"),
        }];
        let msg = ServerMessage::GameDiff {
            game_id: "g1".into(),
            seq: 3,
            patch: json!(patch),
        };
        assert_eq!(diff_frame("g1", 3, &patch), msg.to_json());
    }

    #[test]
    fn snapshot_envelope_matches_the_wire_type() {
        let doc = json!({"a": [1, 2], "b": "x"});
        let msg = ServerMessage::GameSnapshot {
            rid: Some(Rid::Str("r\"1".into())),
            game_id: "g1".into(),
            seq: 7,
            doc: doc.clone(),
        };
        let mut frame = String::from("{\"t\":\"game.snapshot\",");
        let rid = serde_json::to_string(&Rid::Str("r\"1".into())).unwrap();
        let _ = write!(
            frame,
            "\"rid\":{rid},\"game_id\":{},\"seq\":7,\"doc\":{doc}}}",
            Value::from("g1")
        );
        assert_eq!(frame, msg.to_json());
    }
}
