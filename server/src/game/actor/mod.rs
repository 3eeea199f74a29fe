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
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::net::frame::Frame;
use serde_json::{json, Value};
use stoa_protocol::wire::ErrorCode;
use stoa_protocol::{AnyGame, Reason, Side};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::capabilities::{ArenaGameEnd, Capabilities};
use super::core::{Core, Decision};
use super::published::Published;
use super::{Act, Answer, Command, NewGame};
use crate::cluster::messages::{BusMessage, RemoteOp};
use crate::error::ApiError;
use crate::ids::{self, PlayerId};
use crate::store::{ActionKind, ActionRecord, FinishedGame, GameRecord, StoreError};

mod apply;
mod chat;
mod crowd;
mod follower;
mod owner;
mod repair;
mod spawn;
mod subscribers;
mod summary;

pub use crate::game::rebuild::{clock_for, new_core};
use follower::Follower;
use owner::{Doubt, Owner};
pub use repair::RECENT;
pub use spawn::{spawn, spawn_follower, spawn_recovered, Created, Stored};

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
    code_viewers: HashSet<PlayerId>,
    /// When each side's player was last pinged as its clock started (see
    /// [`Actor::ping_runner`]).
    pinged_at: [Option<tokio::time::Instant>; 2],
    /// The document's seq as published, its subscribers (the seated players' connections
    /// served first, the others counted as spectators) and its last diffs. The document
    /// itself lives in the core.
    published: Published<()>,
    /// The spectator count last published in `game.crowd`.
    spectators: u64,
    /// Whether each player (by id) has a connection here.
    online: HashMap<PlayerId, bool>,
    /// When each offline player lost its last connection (server ms, the hub's time).
    offline_since: HashMap<PlayerId, u64>,
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
    /// The last events applied, oldest first (see [`repair::RECENT`]): what an owner logs
    /// again when a Redis failover lost them, and what tells a log that took other events
    /// from one that is only short.
    recent: std::collections::VecDeque<Arc<ActionRecord>>,
    /// The store's [`crate::store::Store::generation`] when this game's log was last found
    /// to hold what was applied here: an owner checks again when it moves.
    log_checked: u64,
    /// The game's record, as created or read: stored again when a Redis failover lost it
    /// (a game created just before the failover). Always set once the actor runs.
    record: Option<Arc<GameRecord>>,
}

impl Actor {
    async fn run(mut self: Box<Self>, mut rx: mpsc::Receiver<Command>) {
        self.begin().await;
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
            let deadline = self.clock_deadline();
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
                    self.upkeep_round().await;
                    if self.may_stop(linger) {
                        break;
                    }
                }
            }
        }
        self.stopped();
    }

    /// The actor starts: a follower catches up from the log and tells the owner who is
    /// here; an owner tells followers elsewhere (after a takeover, a restart) who decides.
    async fn begin(&mut self) {
        let following = matches!(self.role, Role::Follower(_));
        tracing::info!(seq = self.core.seq(), follower = following, "game running");
        if following {
            // Events logged before this follower was registered are in the log.
            Box::pin(self.heal()).await;
            Box::pin(self.report_local_presence()).await;
        } else {
            let peers = &self.caps.peers;
            peers
                .publish(&BusMessage::Owner {
                    game: self.core.id().clone(),
                    node: peers.node().to_string(),
                })
                .await;
        }
    }

    /// The one clock timer: the first-action deadline or the running side's flag (plus its
    /// lag grace), re-armed after every event. An owner's only, and off while a write is
    /// in doubt: the log must say what happened first.
    fn clock_deadline(&self) -> Option<u64> {
        match self.role {
            Role::Owner(_) if self.in_doubt.is_none() => self.core.timer_deadline(),
            _ => None,
        }
    }

    /// One round of the periodic upkeep, the role's.
    async fn upkeep_round(&mut self) {
        match self.role {
            Role::Follower(_) => Box::pin(self.follower_upkeep()).await,
            Role::Owner(_) => {
                Box::pin(self.upkeep()).await;
                Box::pin(self.flush_crowd()).await;
            }
        }
    }

    /// The actor stopped: its game is unregistered here, and neither followed nor owned.
    fn stopped(&self) {
        self.caps
            .directory
            .remove_actor(self.core.id(), &self.summary);
        if let Role::Follower(_) = self.role {
            self.caps.peers.unfollow(self.core.id());
        }
        // Also for a follower: a lease claimed for it just as it stopped (its promotion
        // still queued) is no longer renewed, so it lapses and the game is taken over
        // from the log rather than held by a node with no actor for it.
        self.caps.peers.set_owned(self.core.id(), false);
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
            || self.log_checked != self.caps.store.generation()
            || o.store_paused
            || o.finish_unsaved
            || !o.remote_online.is_empty()
            || !o.remote_watchers.is_empty()
            || !self.caps.store.available()
            || (self.core.paused() && !self.shutting_down)
            || self.total_watchers() != self.spectators
            || (self.ended_at.is_some() && self.published.is_empty())
    }

    /// Whether nobody needs this actor any more: an owner's game ended `linger` ago with
    /// its record stored; a follower's last local subscriber left `linger` ago with no
    /// command of theirs waiting. Never with a write in doubt.
    fn may_stop(&self, linger: Duration) -> bool {
        if !self.published.is_empty() || self.in_doubt.is_some() {
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
                let answer = if self.may_see(player_id.as_ref(), None) {
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
            Command::ChatContext {
                reporter,
                author,
                ts,
                reply,
            } => {
                let _ = reply.send(self.chat_context(&reporter, &author, ts));
            }
            Command::Snapshot {
                viewer,
                code,
                reply,
            } => {
                let visible = self.may_see(viewer.as_ref(), code.as_deref());
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

    /// A message from another node about this game.
    async fn bus(&mut self, msg: BusMessage) {
        match msg {
            BusMessage::Request { from, req, op, .. } => self.remote(from, req, op).await,
            BusMessage::Owner { node, .. } => self.new_owner(node).await,
            BusMessage::Rewound { seq, .. } => Box::pin(self.rewound(seq)).await,
            // Only a follower takes the owner's events, crowd and answers.
            msg => {
                if let Role::Follower(_) = self.role {
                    self.owner_says(msg).await;
                }
            }
        }
    }
}
