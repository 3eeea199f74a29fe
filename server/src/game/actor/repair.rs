//! When the store lost events of this game that were applied here: a Redis failover with
//! `--redis-min-replicas 0` promotes a replica that had not received the last writes, or
//! Redis restarted with less than it acknowledged.
//!
//! Why the owner logs them again: it acknowledged them, holds them (the last [`RECENT`]
//! events), and is the only node that writes the game (its lease): the log it finds is a
//! prefix of what it applied, and appending the missing events restores exactly that. Only
//! when it cannot (the log took other events, or lost more than it keeps) does the game
//! go back to what the log holds, and every watcher is sent that document whole.
//!
//! Without this, the owner's next append found the log one or more seqs short and every
//! later move of the game was refused (fault bench, `--min-replicas 0`, seed 601: 15 games
//! stuck, 8 of them until the end).

use super::*;
use crate::game::rebuild;
use crate::ids::GameId;

/// How many of its last events an actor keeps to log again: a failover loses what was
/// written in the moment before it (the replica's lag; writes a demoted primary took
/// before the nodes moved on: 0.2–1.1 s measured), a few events of a game at most.
pub const RECENT: usize = 32;

/// What checking the game's log against what was applied here found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum LogCheck {
    /// The log holds every event applied here.
    Intact,
    /// The log had lost this many events, logged again now.
    Relogged(u64),
    /// The log had lost events that could not be logged again: the game went back to
    /// what the log holds.
    WentBack,
    /// The log cannot be read or written now (the next check tries again).
    Unknown,
}

/// The entry of `seq` in a log (`log[i]` holds seq `i + 1`; searched otherwise).
fn logged_at(log: &[ActionRecord], seq: u64) -> Option<&ActionRecord> {
    let i = usize::try_from(seq.checked_sub(1)?).ok()?;
    match log.get(i) {
        Some(e) if e.seq == seq => Some(e),
        _ => log.iter().find(|e| e.seq == seq),
    }
}

impl Actor {
    /// Keeps an applied event among the last [`RECENT`].
    pub(super) fn remember(&mut self, event: &Arc<ActionRecord>) {
        if self.recent.back().is_some_and(|e| e.seq + 1 != event.seq) {
            // Not the next one (cannot happen: events apply in order): the kept run of
            // events must have no hole.
            self.recent.clear();
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(event.clone());
    }

    /// The event of `seq` applied here, while it is kept.
    pub(super) fn recent_at(&self, seq: u64) -> Option<&Arc<ActionRecord>> {
        let first = self.recent.front()?.seq;
        let i = usize::try_from(seq.checked_sub(first)?).ok()?;
        self.recent.get(i)
    }

    /// Whether `log` took other events than those applied here at the same seqs (it lost
    /// some, and others were logged since). A log that is only shorter does not diverge:
    /// its owner logs the missing events again.
    pub(super) fn diverges_from(&self, log: &[ActionRecord]) -> bool {
        self.recent
            .iter()
            .any(|ours| logged_at(log, ours.seq).is_some_and(|e| e != ours.as_ref()))
    }

    /// The owner makes sure the game's log holds every event applied here: missing events
    /// it still keeps are logged again (in order, each checked by the log's seq rule and
    /// the lease); otherwise the game goes back to what the log holds.
    pub(super) async fn check_log(&mut self) -> LogCheck {
        let id = self.core.id().clone();
        let log = match self
            .caps
            .store_call(self.caps.store.replicated_actions(&id))
            .await
        {
            Ok(log) => log,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the log to check it");
                return LogCheck::Unknown;
            }
        };
        let last = log.last().map_or(0, |e| e.seq);
        let seq = self.core.seq();
        if self.diverges_from(&log) {
            return self.go_back(&log).await;
        }
        // A game created just before the failover may have lost its record too.
        let restored = last == 0 && {
            match self.record_stored(&id).await {
                Some(restored) => restored,
                None => return LogCheck::Unknown,
            }
        };
        if last >= seq {
            if restored {
                return LogCheck::Relogged(0);
            }
            if last > seq {
                // Someone else logged in this game: follow the log.
                self.demote("another node logged in this game").await;
            }
            return LogCheck::Intact;
        }
        // The log is a prefix of what was applied here: the rest is logged again if it is
        // all kept, and the log's last entry is known to be ours.
        let covered =
            self.recent_at(last + 1).is_some() && (last == 0 || self.recent_at(last).is_some());
        if !covered {
            return self.go_back(&log).await;
        }
        let missing: Vec<Arc<ActionRecord>> = self
            .recent
            .iter()
            .filter(|e| e.seq > last)
            .cloned()
            .collect();
        for event in &missing {
            let mut appended = self.caps.store.append_action(&id, event).await;
            if matches!(appended, Err(StoreError::NotOwner(_))) {
                appended = match self.lease_back().await {
                    Ok(true) => self.caps.store.append_action(&id, event).await,
                    Ok(false) => appended,
                    Err(e) => Err(e),
                };
            }
            match appended {
                Ok(()) => {}
                Err(StoreError::NotOwner(_)) => {
                    self.demote("another node holds the lease").await;
                    return LogCheck::Unknown;
                }
                Err(e) => {
                    tracing::warn!(error = %e, seq = event.seq, "cannot log a lost event again yet");
                    return LogCheck::Unknown;
                }
            }
        }
        tracing::warn!(
            from = last + 1,
            to = seq,
            "the store had lost events of this game (a failover): logged them again"
        );
        self.caps.metrics.store_relogged.inc_by(seq - last);
        LogCheck::Relogged(seq - last)
    }

    /// The owner's lease key was not its own at an append: taken back when nobody holds it
    /// (a Redis restart or failover lost it, or it lapsed unclaimed). Whether this node
    /// holds it now; an error when the store could not say (it failed again): the owner
    /// then stays the owner and refuses the command, as with the store down. Taken for
    /// "another node holds it", that error once made an owner give its game up with nobody
    /// holding it, and the game waited for a lease claim (classic fault bench, seed 703: a
    /// game without an answer for 4 s after a Redis restart).
    pub(super) async fn lease_back(&mut self) -> Result<bool, StoreError> {
        if !matches!(self.role, Role::Owner(_)) {
            return Ok(false);
        }
        let held = self.caps.peers.hold_lease(self.core.id()).await?;
        if held {
            tracing::info!("the game's lease key was gone: taken back");
            self.caps.peers.set_owned(self.core.id(), true);
        }
        Ok(held)
    }

    /// Makes sure the game's record is in the store (a failover may have lost it with a
    /// game created just before): stored again from the one this node created. Whether it
    /// had to be stored again; `None` when it is missing and cannot be stored now.
    async fn record_stored(&mut self, id: &GameId) -> Option<bool> {
        match self.caps.store_call(self.caps.store.game(id)).await {
            Ok(Some(record)) => {
                // A creation in doubt may have stopped after the record, before its
                // players listed the game (idempotent otherwise).
                let repaired = self.caps.store.repair_unfinished(id, Some(&record));
                return self.caps.store_call(repaired).await.ok().map(|()| false);
            }
            Ok(None) => {}
            Err(_) => return None,
        }
        let Some(record) = self.record.clone() else {
            tracing::error!("the store lost this game's record, and this node did not create it");
            return None;
        };
        // The lease first (it was written just before the record, and lost with it): once
        // the record lists the game again, another node's claim round would take a game
        // listed without a lease, and rebuild it from a log that lacks its events.
        match self.caps.peers.hold_lease(id).await {
            Ok(true) => {}
            Ok(false) => {
                self.demote("another node holds the lease").await;
                return None;
            }
            Err(_) => return None,
        }
        match self
            .caps
            .store_call(self.caps.store.create_game(&record))
            .await
        {
            Ok(()) => {
                tracing::warn!("the store had lost this game's record (a failover): stored again");
                Some(true)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot store the game's record again yet");
                None
            }
        }
    }

    /// The owner's game goes back to what `log` holds, and followers are told to do the
    /// same (they may hold the lost events too).
    async fn go_back(&mut self, log: &[ActionRecord]) -> LogCheck {
        if !self.went_back(log).await {
            return LogCheck::Unknown;
        }
        self.caps
            .peers
            .publish(&BusMessage::Rewound {
                game: self.core.id().clone(),
                seq: self.core.seq(),
            })
            .await;
        LogCheck::WentBack
    }

    /// The owner says it went back to what the log holds: so does this follower, when it
    /// holds more than the log or other events.
    pub(super) async fn rewound(&mut self, seq: u64) {
        if let Role::Owner(_) = self.role {
            return;
        }
        // Beyond the point the owner went back to, what was applied here is gone too.
        self.heal_from_log(self.core.seq() > seq).await;
    }

    /// Rebuilds the game from its record and `log` (the authority), and sends every watcher
    /// the document whole, with no `rid`: a client takes such a snapshot whatever seq it
    /// held. `false` when the record cannot be read or does not rebuild (nothing changed).
    pub(super) async fn went_back(&mut self, log: &[ActionRecord]) -> bool {
        let record = match self
            .caps
            .store_call(self.caps.store.game(self.core.id()))
            .await
        {
            Ok(Some(record)) => record,
            Ok(None) => match &self.record {
                Some(record) => GameRecord::clone(record),
                None => {
                    tracing::error!(
                        "the store lost this game's record: it cannot go back to its log"
                    );
                    return false;
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the game's record to rebuild it");
                return false;
            }
        };
        let mut core = match rebuild::core_from_log(&self.caps, &record, log) {
            Ok(core) => core,
            Err(e) => {
                tracing::error!(error = %e, "the game's log does not rebuild: kept as it is");
                return false;
            }
        };
        let before = self.core.seq();
        if self.core.paused() {
            // The store is unreachable or the server stops: the rebuilt clock stands still
            // from now too (the upkeep resumes it).
            core.pause(self.caps.time.now_ms());
        }
        let was_over = self.core.result().is_some();
        self.core = core;
        let over = self.core.result().is_some();
        tracing::warn!(
            from = before,
            to = self.core.seq(),
            "the store lost events of this game: went back to what its log holds"
        );
        let owner = matches!(self.role, Role::Owner(_));
        if owner {
            self.caps.metrics.store_rewinds.inc();
        }
        self.recent.clear();
        for event in log.iter().rev().take(RECENT).rev() {
            self.remember(&Arc::new(event.clone()));
        }
        self.played.clear();
        for event in log.iter().rev().take(PLAYED_CMDS).rev() {
            if let Some(cmd) = &event.cmd {
                self.played.push_back((cmd.clone(), event.seq));
            }
        }
        if was_over && !over {
            // The end was among the lost events: the game is live again.
            self.ended_at = None;
            self.ended_ms = None;
            self.ratings_after = None;
            if owner {
                self.caps.metrics.games_live(self.core.kind()).inc();
            }
        } else if over && !was_over {
            self.mark_ended();
        }
        let document = self.core.document().to_string();
        let dropped = self.published.rewind(self.core.seq(), |_| document);
        self.forget(dropped);
        self.update_summary();
        true
    }
}
