//! What a node does for a game another node owns: forward its players' commands to the
//! owner, apply the owner's events, and never stay behind the log (pub/sub delivers at most
//! once, and an owner may die between logging and publishing).

use super::*;

/// The state only a follower keeps.
pub(super) struct Follower {
    /// The owner, when known.
    pub(super) owner: Option<String>,
    /// Commands forwarded to the owner, waiting for its answer.
    pub(super) pending: HashMap<u64, Forwarded>,
    /// The spectator count last reported to the owner.
    pub(super) reported_watchers: u64,
    /// The owner's last `game.crowd` frame.
    pub(super) last_crowd: Option<Frame>,
    /// This node holds the lease but has not read the log to its end yet (the read failed):
    /// it decides nothing until it has, so it never acts on a state behind the log.
    pub(super) promoting: bool,
    /// When the log's end was last checked (see [`FRESHNESS_CHECK`]).
    pub(super) checked_at: Instant,
    /// The last read of the log failed (the store was down): the next upkeep reads it
    /// again, and that upkeep runs as soon as the store answers. Without it, a node whose
    /// bus came back before its store (both lost in one cut) showed its players the moves
    /// made meanwhile only a freshness period later (fault bench, seed 402, lease 600 ms).
    pub(super) behind: bool,
    /// When the last local subscriber left (a follower nobody here needs stops).
    pub(super) idle_since: Option<Instant>,
}

impl Follower {
    /// A follower of `owner` (`None`: ask Redis at the first command); `idle`: nobody
    /// here watches the game.
    pub(super) fn new(owner: Option<String>, idle: bool) -> Follower {
        Follower {
            owner,
            pending: HashMap::new(),
            reported_watchers: 0,
            last_crowd: None,
            promoting: false,
            checked_at: Instant::now(),
            behind: false,
            idle_since: idle.then(Instant::now),
        }
    }

    /// Forwarded commands that cannot be answered yet wait a whole answer time again
    /// before they are chased (an answer that may be wrong is worse than a late one).
    fn wait_again(&mut self, reqs: Vec<u64>) {
        for req in reqs {
            if let Some(w) = self.pending.get_mut(&req) {
                w.at = Instant::now();
            }
        }
    }
}

/// A command a follower forwarded to the owner, waiting for the answer.
pub(super) struct Forwarded {
    reply: crate::game::Reply,
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

impl Actor {
    /// A player's command, presence or round trip from this node's sessions: it goes to
    /// the owner. `Heal`: the bus reconnected.
    pub(super) async fn follower_command(&mut self, cmd: Command) {
        match cmd {
            Command::Act {
                player_id,
                act,
                reply,
            } => {
                let op = RemoteOp::Act {
                    player_id,
                    act,
                    cmd: None,
                    retry: false,
                };
                self.forward(op, Some(reply)).await;
            }
            Command::Presence { player_id, online } if self.core.side_of(&player_id).is_some() => {
                self.online.insert(player_id.clone(), online);
                self.forward(RemoteOp::Presence { player_id, online }, None)
                    .await;
            }
            Command::Rtt { player_id, rtt_ms } => {
                self.forward(RemoteOp::Rtt { player_id, rtt_ms }, None)
                    .await;
            }
            Command::Heal => {
                // Announcements of a new owner may have been lost with the bus too, and so
                // may requests and answers: those still waiting are sent again (or settled
                // from the log if their owner is gone).
                if let Role::Follower(f) = &mut self.role {
                    f.owner = None;
                }
                self.heal().await;
                let waiting = self.pending_requests();
                self.chase(waiting).await;
            }
            _ => {}
        }
    }

    /// The requests of the commands waiting for the owner's answer.
    pub(super) fn pending_requests(&self) -> Vec<u64> {
        match &self.role {
            Role::Follower(f) => f.pending.keys().copied().collect(),
            Role::Owner(_) => Vec::new(),
        }
    }

    /// A follower sends a command to the game's owner; `reply` waits for its answer (which
    /// comes back through this actor's queue, after the events it caused).
    pub(super) async fn forward(&mut self, op: RemoteOp, reply: Option<crate::game::Reply>) {
        let peers = self.caps.peers.clone();
        let unavailable = || {
            ApiError::new(
                ErrorCode::Unavailable,
                "this game is changing servers: try again in a moment",
            )
        };
        let known = match &self.role {
            Role::Follower(f) => f.owner.clone(),
            Role::Owner(_) => {
                // Only a follower forwards (an owner decides itself).
                if let Some(reply) = reply {
                    let _ = reply.send(Err(unavailable()));
                }
                return;
            }
        };
        let owner = match known {
            Some(owner) => Some(owner),
            None => peers.owner_of(self.core.id()).await.ok().flatten(),
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
        self.set_owner(Some(owner.clone()));
        let req = ids::request_number();
        let mut op = op;
        let forwarded = match (&mut op, reply) {
            (RemoteOp::Act { cmd, .. } | RemoteOp::Chat { cmd, .. }, Some(reply)) => {
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
            game: self.core.id().clone(),
            from: peers.node().to_string(),
            req,
            op,
        };
        // Sent, or maybe sent (a publish whose answer was lost may still be delivered and
        // played): the command waits for its answer, or for the log to settle it.
        let sent = peers.send_to(&owner, &message).await != Some(false);
        match (forwarded, &mut self.role) {
            (Some(w), Role::Follower(f)) if sent => {
                f.pending.insert(req, w);
            }
            (Some(w), _) => {
                let _ = w.reply.send(Err(unavailable()));
            }
            (None, _) => {}
        }
        if !sent {
            // Nobody listens there: the owner is gone; ask again next time.
            self.set_owner(None);
        }
    }

    /// Who this follower believes owns the game (`None`: ask Redis at the next command).
    pub(super) fn set_owner(&mut self, owner: Option<String>) {
        if let Role::Follower(f) = &mut self.role {
            f.owner = owner;
        }
    }

    /// A follower applies the owner's next event; a gap is healed from the log.
    pub(super) async fn follow(&mut self, event: ActionRecord) {
        if event.seq <= self.core.seq() {
            if self.recent_at(event.seq).is_some_and(|e| **e != event) {
                // Another event at a seq applied here: the log lost what this node applied
                // and took other events (a failover); the heal goes back to it.
                self.heal().await;
            }
            return;
        }
        if event.seq == self.core.seq() + 1 {
            self.apply(&Arc::new(event)).await;
        } else {
            self.heal().await;
        }
    }

    /// A follower makes sure it is not behind the log: one cheap read of the log's last
    /// entry, and the whole log only when it holds something this node has not applied.
    pub(super) async fn catch_up(&mut self) {
        if let Role::Follower(f) = &mut self.role {
            f.checked_at = Instant::now();
        }
        let last = self
            .caps
            .store_call(self.caps.store.last_action(self.core.id()))
            .await;
        match last {
            Ok(Some(last))
                if last.seq > self.core.seq()
                    || self.recent_at(last.seq).is_some_and(|e| **e != last) =>
            {
                // Behind the log, or the log took another event at a seq applied here (a
                // failover lost what this node applied): the heal catches up or goes back.
                self.heal().await;
            }
            Ok(_) => self.set_behind(false),
            Err(_) => self.set_behind(true),
        }
    }

    /// Notes whether this follower's last read of the log failed (see [`Follower::behind`]).
    pub(super) fn set_behind(&mut self, behind: bool) {
        if let Role::Follower(f) = &mut self.role {
            f.behind = behind;
        }
    }

    /// This node no longer owns the game: it follows whoever does.
    pub(super) async fn demote(&mut self, why: &str) {
        if let Role::Follower(f) = &mut self.role {
            // A takeover that never finished is off too: the lease is gone.
            f.promoting = false;
            return;
        }
        tracing::warn!(reason = why, "no longer the game's owner: following it");
        self.role = Role::Follower(Follower::new(None, self.published.is_empty()));
        if self.core.result().is_none() {
            self.caps.metrics.games_live(self.core.kind()).dec();
        }
        // A write in doubt stays in doubt: the heal below (or a later one) reads in the log
        // whether it landed, and only then is its request answered.
        self.update_summary();
        self.caps.peers.set_owned(self.core.id(), false);
        self.caps.peers.follow(self.core.id()).await;
        // What the new owner logged before the subscription is in the log.
        self.heal().await;
    }

    /// A follower tells the owner who of the players is connected here, and how many
    /// watch here.
    pub(super) async fn report_local_presence(&mut self) {
        let players: Vec<PlayerId> = self
            .core
            .player_ids()
            .iter()
            .map(|p| PlayerId::from(*p))
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
        if let Role::Follower(f) = &mut self.role {
            f.reported_watchers = self.published.others();
        }
        self.chat_sync().await;
        if self.published.others() > 0 {
            self.forward(
                RemoteOp::Spectators {
                    count: self.published.others(),
                },
                None,
            )
            .await;
        }
    }

    /// A follower's periodic duties: finish a takeover whose log read failed, settle a
    /// write of its days as owner that was in doubt, check the log's end now and then, report
    /// its spectator count, chase answers that never came.
    pub(super) async fn follower_upkeep(&mut self) {
        if matches!(&self.role, Role::Follower(f) if f.promoting) {
            self.take_over().await;
        }
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        // A command whose sender left needs no answer any more (and must not keep this
        // follower alive).
        f.pending.retain(|_, w| !w.reply.is_closed());
        let check = f.behind || f.checked_at.elapsed() >= FRESHNESS_CHECK;
        let report =
            (self.published.others() != f.reported_watchers).then_some(self.published.others());
        if let Some(count) = report {
            f.reported_watchers = count;
        }
        let late: Vec<u64> = f
            .pending
            .iter()
            .filter(|(_, w)| w.at.elapsed() >= REMOTE_ANSWER)
            .map(|(req, _)| *req)
            .collect();
        if self.in_doubt.is_some() {
            self.heal().await;
        } else if check {
            self.catch_up().await;
        }
        if let Some(count) = report {
            self.forward(RemoteOp::Spectators { count }, None).await;
        }
        self.chase(late).await;
    }

    /// Forwarded commands that waited long for their answer: sent again to an owner that
    /// still holds the lease (it answers a command it already played from its record);
    /// settled from the log when another node holds it (the old owner can no longer write).
    pub(super) async fn chase(&mut self, reqs: Vec<u64>) {
        if reqs.is_empty() {
            return;
        }
        let peers = self.caps.peers.clone();
        // Redis cannot tell who holds the lease, or nobody does yet (the old owner may
        // take it back and play the command): the commands wait, asked again next round. Only
        // once another node holds the lease can the old owner no longer write, and the log
        // tell what was played.
        let current = match peers.owner_of(self.core.id()).await {
            Ok(Some(owner)) => owner,
            Ok(None) | Err(_) => {
                if let Role::Follower(f) = &mut self.role {
                    f.wait_again(reqs);
                }
                return;
            }
        };
        let game = self.core.id().clone();
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        let (again, settle): (Vec<u64>, Vec<u64>) = reqs
            .into_iter()
            .partition(|req| f.pending.get(req).map(|w| &w.owner) == Some(&current));
        let mut resend = Vec::new();
        for req in again {
            let Some(w) = f.pending.get_mut(&req) else {
                continue;
            };
            w.at = Instant::now();
            let mut op = w.op.clone();
            if let RemoteOp::Act { retry, .. } = &mut op {
                *retry = true;
            }
            let message = BusMessage::Request {
                game: game.clone(),
                from: peers.node().to_string(),
                req,
                op,
            };
            resend.push((w.owner.clone(), message));
        }
        for (owner, message) in resend {
            // Nobody listening there: the lease lapses soon and the log settles it.
            peers.send_to(&owner, &message).await;
        }
        if !settle.is_empty() {
            f.owner = Some(current);
            self.heal().await;
            self.settle_forwarded(settle).await;
        }
    }

    /// Answers forwarded commands whose answer will not come (the owner died or is silent)
    /// from the log, as the owner would have: success if the log holds exactly this
    /// command, otherwise `unavailable` — and then nothing changed.
    pub(super) async fn settle_forwarded(&mut self, reqs: Vec<u64>) {
        if reqs.is_empty() {
            return;
        }
        let log = self
            .caps
            .store_call(self.caps.store.replicated_actions(self.core.id()))
            .await;
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        // The log cannot tell now: the commands wait (asked again next tick) rather than
        // get an answer that may be wrong.
        let Ok(log) = &log else {
            f.wait_again(reqs);
            return;
        };
        for req in reqs {
            let Some(w) = f.pending.remove(&req) else {
                continue;
            };
            let made = log
                .iter()
                .find(|e| e.cmd.as_deref() == Some(w.cmd.as_str()));
            let answer = match made {
                Some(e) => Ok(Answer::Ok { seq: e.seq }),
                // A chat line is not logged: this node's copy of the chat tells.
                None if self.chat.posted(&w.cmd) => Ok(Answer::Ok {
                    seq: self.core.seq(),
                }),
                None => Err(ApiError::new(
                    ErrorCode::Unavailable,
                    "this game changed servers and your command was not played: try again",
                )),
            };
            let _ = w.reply.send(answer);
        }
    }

    /// Another node says it owns the game now (it read the log to its end first).
    pub(super) async fn new_owner(&mut self, node: String) {
        if self.caps.peers.node() == node {
            return;
        }
        if let Role::Owner(_) = self.role {
            // Another node took the game: the log no longer takes our writes.
            self.demote("another node took the game over").await;
        }
        if let Role::Follower(f) = &mut self.role {
            f.promoting = false;
            f.owner = Some(node.clone());
        }
        // What the old owner logged but never published is in the log, and commands sent
        // to the old owner are settled from it now rather than after a timeout.
        self.heal().await;
        let stale: Vec<u64> = match &self.role {
            Role::Follower(f) => f
                .pending
                .iter()
                .filter(|(_, w)| w.owner != node)
                .map(|(req, _)| *req)
                .collect(),
            Role::Owner(_) => Vec::new(),
        };
        self.settle_forwarded(stale).await;
        self.report_local_presence().await;
    }

    /// The owner's event, crowd or answer to a forwarded command.
    pub(super) async fn owner_says(&mut self, msg: BusMessage) {
        match msg {
            BusMessage::Event { event, .. } => self.follow(event).await,
            BusMessage::Chat { change, .. } => self.chat_change(Some(change)).await,
            BusMessage::Crowd { frame, .. } => {
                let frame = Frame::text(frame);
                if let Role::Follower(f) = &mut self.role {
                    f.last_crowd = Some(frame.clone());
                }
                self.broadcast(frame);
            }
            BusMessage::Reply { req, result, .. } => {
                let Role::Follower(f) = &mut self.role else {
                    return;
                };
                let Some(waiting) = f.pending.remove(&req) else {
                    return;
                };
                let result: Result<Answer, ApiError> = result.into();
                if matches!(&result, Err(e) if e.code == ErrorCode::Unavailable) {
                    // That node no longer decides (its announcement may have been lost with
                    // a bus connection): the next command asks Redis who does.
                    f.owner = None;
                }
                // The owner is ahead of this node (an event the bus lost): catch up before
                // the player hears of a seq this node cannot show.
                let behind = match &result {
                    Ok(Answer::Ok { seq }) => *seq > self.core.seq(),
                    Err(e) => e.code == ErrorCode::StaleSeq,
                    _ => false,
                };
                if behind {
                    self.heal().await;
                }
                let _ = waiting.reply.send(result);
            }
            _ => {}
        }
    }
}
