//! A logged event applied: its patch published, and the reactions that belong outside the
//! core (ratings and the arena at an end, the rematch game, the final document); and the
//! log read again when this node may have missed events in it.

use super::*;

impl Actor {
    /// Applies a logged event, publishes its patch, and runs the reactions that belong
    /// outside the core: ratings at a rated end (before the end's diff, so a player who
    /// sees the end finds the new ratings stored), the final document, the rematch game.
    pub(super) async fn apply(&mut self, event: &Arc<ActionRecord>) {
        let was_over = self.core.result().is_some();
        let had_rematch = self.core.rematch_game().is_some();
        let patch = match self.core.apply(event) {
            Ok(patch) => patch,
            Err(e) => {
                tracing::error!(error = %e, "a logged event does not apply");
                return;
            }
        };
        self.remember(event);
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
        if owner {
            self.caps
                .peers
                .publish(&BusMessage::Event {
                    game: self.core.id().clone(),
                    event: ActionRecord::clone(event),
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
    pub(super) async fn arena_end(&self) {
        let (Some(link), Some((winner, reason))) = (self.core.arena(), self.core.result()) else {
            return;
        };
        let end = ArenaGameEnd {
            game_id: self.core.id().clone(),
            arena: link.id.clone(),
            players: self.core.player_ids().map(PlayerId::from),
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

    pub(super) fn mark_ended(&mut self) {
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

    /// Applies every logged event this node has not seen (the log is the authority), and
    /// settles a write of this node's whose answer was lost when it lost the game (the log
    /// says whether it landed). `false` when the log cannot be read now.
    pub(super) async fn heal(&mut self) -> bool {
        self.heal_from_log(false).await
    }

    /// [`Actor::heal`]; `shorter_goes_back`: the owner said it went back to its log, so a
    /// log shorter than what was applied here is gone back to too (otherwise its owner logs
    /// the missing events again, and a shorter log is waited on).
    pub(super) async fn heal_from_log(&mut self, shorter_goes_back: bool) -> bool {
        let log = match self
            .caps
            .store_call(self.caps.store.replicated_actions(self.core.id()))
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
        let shorter = self.core.seq() > log.last().map_or(0, |e| e.seq);
        if self.diverges_from(&log) || (shorter_goes_back && shorter) {
            // Boxed: rare (a failover lost events), and large.
            if !Box::pin(self.went_back(&log)).await {
                return false;
            }
        }
        for event in &log {
            if event.seq == self.core.seq() + 1 {
                self.apply(&Arc::new(event.clone())).await;
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
