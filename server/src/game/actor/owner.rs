//! What only the game's owner does: decide, log, apply and publish; serve other nodes'
//! requests; settle a write whose answer was lost; run the periodic duties of a live game.

use super::repair::LogCheck;
use super::*;
use crate::ids::PlayerId;

/// The state only an owner keeps.
#[derive(Default)]
pub(super) struct Owner {
    /// Players connected on other nodes, by player: the nodes.
    pub(super) remote_online: HashMap<PlayerId, HashSet<String>>,
    /// Spectators on other nodes, by node.
    pub(super) remote_watchers: HashMap<String, u64>,
    /// The final document could not be stored yet (retried on every tick).
    pub(super) finish_unsaved: bool,
    /// The store is unreachable: the clock stands still (no move can be acknowledged, so
    /// nobody may lose time meanwhile).
    pub(super) store_paused: bool,
}

/// A write whose outcome is unknown (the store's answer was lost or late), and the request
/// that made it, which is answered only once the log says what happened: an error answer
/// must mean nothing changed, and a write may still land after its call timed out.
pub(super) struct Doubt {
    pub(super) event: ActionRecord,
    /// The waiting request: its answer if the event is logged, and if it is not.
    pub(super) waiting: Option<(crate::game::Reply, Result<Answer, ApiError>, ApiError)>,
}

/// Why a commit did not happen (yet).
pub(super) enum Committed {
    /// The store refused or was unreachable before the write was sent: nothing changed.
    Not(ApiError),
    /// The write was sent and its answer lost: the log will tell (see [`Doubt`]).
    InDoubt(ApiError),
    /// Another node holds the game's lease (this one was paused or cut off): nothing was
    /// written, and this actor follows the new owner now.
    Moved,
}

impl Actor {
    /// A player's command, presence or round trip from this node's sessions, decided here.
    pub(super) async fn owner_command(&mut self, cmd: Command) {
        match cmd {
            Command::Act {
                player_id,
                act,
                reply,
            } => self.act(&player_id, act, reply).await,
            Command::Presence { player_id, online } => {
                self.presence(&player_id, None, online).await;
            }
            Command::Rtt { player_id, rtt_ms } => self.core.record_rtt(&player_id, rtt_ms),
            // The bus reconnected: nothing waits on it here (followers ask again).
            _ => {}
        }
    }

    /// Decides and commits a player's command, then answers it — or, when the store's
    /// answer is lost, leaves it waiting until the log settles what happened.
    pub(super) async fn act(&mut self, player_id: &PlayerId, act: Act, reply: crate::game::Reply) {
        self.act_from(player_id, act, reply, None).await;
    }

    /// [`Actor::act`]; `cmd`: the id of a command another node forwarded (`None`: from this
    /// node's session). A local command goes on to the new owner when this node turns out to
    /// have lost the game; a forwarded one is answered `unavailable` instead (nothing was
    /// written): its sender settles it, and must never see it played behind its back. The
    /// forwarded command's id is logged with its event, so its sender can settle a lost
    /// answer from the log.
    pub(super) async fn act_from(
        &mut self,
        player_id: &PlayerId,
        act: Act,
        reply: crate::game::Reply,
        cmd: Option<String>,
    ) {
        let local = cmd.is_none();
        let (event, answer) = match self.decide(player_id, &act).await {
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
                    player_id: player_id.clone(),
                    act,
                    cmd: None,
                    retry: false,
                };
                // Boxed: rare (the game moved), and large.
                Box::pin(self.forward(op, Some(reply))).await;
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

    pub(super) async fn decide(
        &mut self,
        player_id: &PlayerId,
        act: &Act,
    ) -> Result<Decision, ApiError> {
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
    pub(super) fn opponent_gone_since(&self, player_id: &PlayerId, now: u64) -> Option<u64> {
        let side = self.core.side_of(player_id)?;
        let opponent = &PlayerId::from(self.core.player_ids()[side.other().index()]);
        if self.is_online(opponent) {
            return None;
        }
        Some(self.offline_since.get(opponent).copied().unwrap_or(now))
    }

    /// Logs an event; only once the store accepted it is it applied and published. A
    /// failed write may still have landed (only its answer lost): it is settled from the
    /// log before this game does anything else.
    pub(super) async fn commit(&mut self, event: ActionRecord) -> Result<(), Committed> {
        let start = Instant::now();
        let event = Arc::new(event);
        let mut appended = self.caps.store.append_action(self.core.id(), &event).await;
        self.caps
            .metrics
            .store_call(start.elapsed(), appended.is_ok());
        if let Err(StoreError::NotOwner(_)) = &appended {
            // The lease key may be gone with nobody else holding it (Redis restarted, or
            // failed over without it): taken back, the event goes in (the log's seq rule
            // still refuses it if another node wrote meanwhile). Boxed: rare.
            match Box::pin(self.lease_back()).await {
                Ok(true) => {
                    appended = self.caps.store.append_action(self.core.id(), &event).await;
                }
                Ok(false) => {}
                // Nothing was logged (the append was refused): refused as with the store
                // down, the game still this node's.
                Err(e) => {
                    appended = Err(StoreError::Unavailable(format!(
                        "cannot check the game's lease: {e}"
                    )));
                }
            }
        }
        if let Err(StoreError::Conflict(_)) = &appended {
            // The log does not take the next seq: it lost events applied here, or the
            // game's record (a Redis failover). Boxed: rare, and large.
            match Box::pin(self.check_log()).await {
                LogCheck::Relogged(_) if event.seq == self.core.seq() + 1 => {
                    // The log is whole again: the event goes after it (once).
                    appended = self.caps.store.append_action(self.core.id(), &event).await;
                }
                LogCheck::WentBack => {
                    return Err(Committed::Not(ApiError::new(
                        ErrorCode::Unavailable,
                        "the server's storage failed over and lost this game's last moves: \
                         the game went back to the last one it kept (sent again); play from there",
                    )));
                }
                _ => {}
            }
        }
        match appended {
            Ok(()) => {
                self.apply(&event).await;
                Ok(())
            }
            Err(StoreError::NotOwner(_)) => {
                // Boxed, as every rare path of a command: it would sit in each move's future.
                Box::pin(self.demote("another node holds the lease")).await;
                Err(Committed::Moved)
            }
            Err(e @ StoreError::InDoubt(_)) => {
                tracing::warn!(error = %e, seq = event.seq, "a write's outcome is unknown");
                self.in_doubt = Some(Doubt {
                    event: Arc::unwrap_or_clone(event),
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

    /// Updates both players' ratings for a rated result (a failure is logged: the game's
    /// result stands either way).
    pub(super) async fn rate(&mut self) {
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

    pub(super) async fn start_rematch(&mut self, game_id: String) {
        let setup = self.core.rematch_setup(game_id.into());
        self.caps.reactions.rematch(setup).await;
    }

    pub(super) async fn save_finished(&mut self) {
        let now = self.caps.time.now_ms();
        let finished = FinishedGame {
            seq: self.core.seq(),
            doc: self.core.document(),
            ended_ms: *self.ended_ms.get_or_insert(now),
            ratings_after: self.ratings_after.clone(),
        };
        let stored = self
            .caps
            .store_call(self.caps.store.finish_game(self.core.id(), finished))
            .await;
        let saved = match stored {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, "could not store the finished game: retrying");
                false
            }
        };
        if let Role::Owner(o) = &mut self.role {
            o.finish_unsaved = !saved;
        }
    }

    /// The owner serves a follower's request.
    pub(super) async fn remote(&mut self, from: String, req: u64, op: RemoteOp) {
        if let Role::Follower(_) = self.role {
            if let RemoteOp::Act { .. } | RemoteOp::Chat { .. } = op {
                let refused = Err::<Answer, _>(ApiError::new(
                    ErrorCode::Unavailable,
                    "this game is changing servers: try again in a moment",
                ));
                self.reply_to(&from, req, refused).await;
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
                self.remote_act(from, req, &player_id, act, cmd, retry)
                    .await;
            }
            RemoteOp::Presence { player_id, online } => {
                self.presence(&player_id, Some(&from), online).await;
            }
            RemoteOp::Spectators { count } => {
                if let Role::Owner(o) = &mut self.role {
                    o.remote_watchers.insert(from, count);
                }
            }
            RemoteOp::Rtt { player_id, rtt_ms } => self.core.record_rtt(&player_id, rtt_ms),
            RemoteOp::Chat {
                player_id,
                name,
                request,
                cmd,
            } => {
                let cmd = cmd.unwrap_or_else(|| format!("{from}:{req}"));
                let result = self.remote_chat(&player_id, &name, request, cmd).await;
                self.reply_to(&from, req, result).await;
            }
            RemoteOp::ChatSync => self.chat_publish_state().await,
        }
    }

    /// Answers the request `req` of the node `from`.
    async fn reply_to(&self, from: &str, req: u64, result: Result<Answer, ApiError>) {
        let reply = BusMessage::Reply {
            game: self.core.id().clone(),
            req,
            result: result.into(),
        };
        self.caps.peers.send_to(from, &reply).await;
    }

    /// A command another node forwarded (`cmd`: its id), played once: a command already
    /// played is answered with its seq (a retry after a lost answer, or a duplicate
    /// delivery), never played again.
    async fn remote_act(
        &mut self,
        from: String,
        req: u64,
        player_id: &PlayerId,
        act: Act,
        cmd: String,
        retry: bool,
    ) {
        let played = match self.played(&cmd, retry).await {
            Ok(played) => played,
            // Whether it was played cannot be told now: no answer (the sender asks again,
            // or settles from the log).
            Err(()) => return,
        };
        if let Some(seq) = played {
            self.reply_to(&from, req, Ok(Answer::Ok { seq })).await;
            return;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.act_from(player_id, act, tx, Some(cmd)).await;
        // The events went out before the answer: a follower sees the diff first.
        let game = self.core.id().clone();
        let peers = self.caps.peers.clone();
        tokio::spawn(async move {
            let result = rx
                .await
                .unwrap_or_else(|_| Err(ApiError::new(ErrorCode::Unavailable, "the game stopped")));
            let reply = BusMessage::Reply {
                game,
                req,
                result: result.into(),
            };
            peers.send_to(&from, &reply).await;
        });
    }

    /// This node acquired the game's lease: catch up from the log and decide from now on.
    /// The clock was never stopped: a deadline that passed meanwhile flags at once (and
    /// only once: the log takes one event per seq). Until the log has been read to its end
    /// the game stays as it was (retried every tick): deciding on a state behind the log
    /// could answer a stale `ok`.
    pub(super) async fn take_over(&mut self) {
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        f.promoting = true;
        if !self.heal().await {
            return;
        }
        let waiting = self.pending_requests();
        self.settle_forwarded(waiting).await;
        self.role = Role::Owner(Owner {
            // The old owner may have died before storing the final document.
            finish_unsaved: self.core.result().is_some(),
            ..Owner::default()
        });
        tracing::info!(seq = self.core.seq(), "took the game over");
        if self.core.result().is_none() {
            self.caps.metrics.games_live(self.core.kind()).inc();
            self.caps.metrics.lease_takeovers.inc();
        }
        let peers = &self.caps.peers;
        peers.set_owned(self.core.id(), true);
        peers
            .publish(&BusMessage::Owner {
                game: self.core.id().clone(),
                node: peers.node().to_string(),
            })
            .await;
        self.update_summary();
        // Events this node applied as a follower that a failover lost with the old owner
        // are logged again (or the game goes back to the log).
        if self.recent.back().is_some_and(|e| e.seq == self.core.seq()) {
            let _ = Box::pin(self.check_log()).await;
        }
    }

    /// An owner forgets what dead nodes reported (their players are gone, their spectators
    /// too), so a dead node never keeps a player "online" and blocks an abandonment claim.
    pub(super) async fn forget_dead_nodes(&mut self) {
        let peers = self.caps.peers.clone();
        let Role::Owner(o) = &mut self.role else {
            return;
        };
        let mut dead: Vec<String> = o
            .remote_online
            .values()
            .flatten()
            .chain(o.remote_watchers.keys())
            .filter(|n| !peers.is_live(n))
            .cloned()
            .collect();
        if dead.is_empty() {
            return;
        }
        dead.sort();
        dead.dedup();
        let players: Vec<PlayerId> = o.remote_online.keys().cloned().collect();
        for node in &dead {
            if let Role::Owner(o) = &mut self.role {
                o.remote_watchers.remove(node);
            }
            for p in &players {
                self.presence(p, Some(node), false).await;
            }
        }
        self.flush_crowd().await;
    }

    /// The seq of the event the forwarded command `cmd` made, if it was played (owner
    /// only). A write in doubt is settled first (it may be this command); a retry is also
    /// looked for in the whole log (an earlier run of this node may have played it). `Err`
    /// when that cannot be told now.
    pub(super) async fn played(&mut self, cmd: &str, retry: bool) -> Result<Option<u64>, ()> {
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
            .store_call(self.caps.store.replicated_actions(self.core.id()))
            .await
            .map_err(|_| ())?;
        Ok(log
            .iter()
            .find(|e| e.cmd.as_deref() == Some(cmd))
            .map(|e| e.seq))
    }

    /// Settles a write whose answer was lost: if the log holds it, it happened (it is
    /// applied and published now, and its request answered as a success); otherwise it
    /// never did (its request gets the store's error). The read goes to the store after the
    /// write on the same connection, so a write still in flight lands (or not) before it.
    pub(super) async fn settle(&mut self) -> Result<(), ApiError> {
        if self.in_doubt.is_none() {
            return Ok(());
        }
        // Boxed: a lost answer is rare, and its reads would otherwise sit in every
        // command's future (each move's is boxed and copied whole).
        Box::pin(self.settle_doubt()).await
    }

    /// [`Actor::settle`] with a write in doubt.
    async fn settle_doubt(&mut self) -> Result<(), ApiError> {
        if let Role::Follower(_) = self.role {
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
            .store_call(self.caps.store.replicated_actions(self.core.id()))
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
            self.apply(&Arc::new(event)).await;
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
    pub(super) async fn upkeep(&mut self) {
        self.forget_dead_nodes().await;
        let available = self.caps.store.available();
        let over = self.core.result().is_some();
        let Role::Owner(o) = &mut self.role else {
            return;
        };
        if !available && !o.store_paused && !over {
            tracing::warn!("store unreachable: moves are refused and the clock stands still");
            o.store_paused = true;
            self.core.pause(self.caps.time.now_ms());
        } else if available && o.store_paused {
            tracing::info!("store reachable again: the clock resumes");
            o.store_paused = false;
        }
        let store_paused = o.store_paused;
        if self.in_doubt.is_some() && self.settle().await.is_err() {
            return;
        }
        let generation = self.caps.store.generation();
        if self.log_checked != generation && !store_paused {
            // The store may have lost events it acknowledged (a failover, a restart): the
            // log must hold the game as applied here before anything else is logged.
            if Box::pin(self.check_log()).await != LogCheck::Unknown {
                self.log_checked = generation;
            }
            if !matches!(self.role, Role::Owner(_)) {
                return;
            }
        }
        if self.core.paused() && !store_paused && !self.shutting_down {
            if let Some(resume) = self.core.resume(self.caps.time.now_ms()) {
                let _ = self.commit(resume).await;
            }
        }
        if matches!(&self.role, Role::Owner(o) if o.finish_unsaved) {
            self.save_finished().await;
        }
    }
}
