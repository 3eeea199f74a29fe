//! An arena's life and its pairing rounds: its task sleeps until the start, pairs its free
//! players in waves until the cut-off, then sleeps until the end.
//!
//! Why only in the arena's task: one arena's rounds never overlap, so a player is never
//! paired twice at once; in a cluster the node holding the arena's pairing lease pairs,
//! and the conditional write of a round lets one node's through, never two.

use std::sync::Arc;
use std::time::Duration;

use stoa_protocol::wire::{ErrorCode, SeatPlayer};

use super::state::{Pairing, Settings};
use super::{Arenas, Cell, PAIRING_LEASE_MS, SETTLE_EVERY};
use crate::domain::arena::ArenaStatus;
use crate::error::ApiError;
use crate::game::NewGame;
use crate::ids;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
use crate::store::ArenaLink;

/// A round chosen and stored: its pairings, the arena's settings and each game's seats.
struct Round {
    pairings: Vec<Pairing>,
    settings: Settings,
    seats: Vec<[SeatPlayer; 2]>,
}

impl Arenas {
    /// An arena's life: wait for the start, pair in waves until the cut-off, wait for the
    /// end; the document is refreshed at each step. In a cluster every node holding the
    /// arena runs this, and reads the arena again from the store each wave: the
    /// conditional writes let one node's pairing round through, never two.
    pub(super) async fn run(self: Arc<Self>, cell: Arc<Cell>) {
        let mut shutdown = self.parts.shutdown.clone();
        let wave = self
            .parts
            .wave
            .clamp(Duration::from_millis(10), Duration::from_secs(60));
        let mut settled = tokio::time::Instant::now();
        let mut last_status = None;
        loop {
            if settled.elapsed() >= SETTLE_EVERY {
                settled = tokio::time::Instant::now();
                if let Err(e) = self.settle(&cell).await {
                    tracing::warn!(error = %e, "cannot settle the arena's games");
                }
            }
            let Some(pause) = self.wave(&cell, &mut last_status, wave).await else {
                break;
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = cell.wake.notified() => {}
                r = shutdown.changed() => {
                    if r.is_err() || *shutdown.borrow() {
                        return;
                    }
                }
            }
        }
        // Over: stored as such (no longer open once its last game ended), and no longer
        // held here: the store answers for it from now on (its document, a late end).
        match self.persist(&cell).await {
            Ok(true) => {
                self.cells().remove(&cell.id);
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "cannot store the arena's end"),
        }
        tracing::info!("arena over");
    }

    /// One step of an arena's life: the arena brought up to date (and its document), a
    /// round paired while it runs before the cut-off; how long to sleep before the next,
    /// `None` when the arena is over. `last_status`: the status the last step saw.
    async fn wave(
        &self,
        cell: &Cell,
        last_status: &mut Option<ArenaStatus>,
        wave: Duration,
    ) -> Option<Duration> {
        let shared = self.parts.topology.arena_may_change_elsewhere(&cell.id);
        if shared {
            let mut stored = cell.stored.lock().await;
            if let Err(e) = self.reload(cell, &mut stored).await {
                tracing::warn!(error = %e, "cannot read the arena");
            }
        }
        let now = self.now();
        let (status, starts_at, ends_at, cutoff, open) = {
            let s = cell.state();
            (
                s.status(now),
                s.settings.starts_at,
                s.settings.ends_at,
                s.cutoff_at(),
                s.open(now),
            )
        };
        // A status changed by the time alone (started, finished) changes the document
        // with no write: it is stored, so the seq stored with the arena stays that of
        // its published document (an arena read again goes on from it).
        if last_status.is_some_and(|last| last != status) {
            if let Err(e) = self.persist(cell).await {
                tracing::warn!(error = %e, "cannot store the arena's status");
            }
        }
        *last_status = Some(status);
        self.refresh(cell);
        let until = |at: u64| Duration::from_millis(at.saturating_sub(now));
        let pause = match status {
            ArenaStatus::Cancelled => return None,
            // Over, but games still run: their ends are awaited (and settled).
            ArenaStatus::Finished if open => SETTLE_EVERY,
            ArenaStatus::Finished => return None,
            ArenaStatus::Scheduled => until(starts_at),
            ArenaStatus::Running if now < cutoff => {
                if self.pairing_lease(cell).await {
                    self.pair_round(cell).await;
                }
                wave.min(until(cutoff))
            }
            ArenaStatus::Running => until(ends_at),
        };
        // Another node's change shows here only when the store is read again: each wave.
        Some(match shared {
            true => pause.min(wave),
            false => pause,
        })
    }

    /// Whether this node pairs the arena now: always on a single node; in a cluster while
    /// it holds the arena's pairing lease, kept in the arena's own record (taken when free
    /// or expired, renewed when half of it is left, each a conditional write), so one node
    /// pairs and a dead one's arena is taken over within [`PAIRING_LEASE_MS`].
    async fn pairing_lease(&self, cell: &Cell) -> bool {
        if !self.parts.topology.arena_may_change_elsewhere(&cell.id) {
            return true;
        }
        let now = self.now();
        let me = self.parts.node.as_str();
        let fresh = cell.state().pairer.as_ref().is_some_and(|(holder, until)| {
            holder == me && until.saturating_sub(now) > PAIRING_LEASE_MS / 2
        });
        if fresh {
            return true;
        }
        let until = now + PAIRING_LEASE_MS;
        let taken = self
            .mutate(cell, |s| {
                if s.take_lease(me, now, until) {
                    Ok(())
                } else {
                    Err(ApiError::new(ErrorCode::Conflict, "another node pairs"))
                }
            })
            .await;
        taken.is_ok()
    }

    /// One pairing round: the free players' ratings brought up to date, the pairs chosen
    /// and stored (one conditional write: a round another node made first is dropped
    /// here), then their games started.
    async fn pair_round(&self, cell: &Cell) {
        let Some(ratings) = self.free_ratings(cell).await else {
            return;
        };
        let Some(round) = self.choose_round(cell, ratings).await else {
            return;
        };
        self.refresh(cell);
        self.start_round(cell, round).await;
    }

    /// The free players (in the pool, not playing) with their current ratings; `None`
    /// when fewer than two are free.
    async fn free_ratings(&self, cell: &Cell) -> Option<Vec<(PlayerId, i64)>> {
        let (kind, free) = {
            let s = cell.state();
            let free: Vec<PlayerId> = s
                .players
                .iter()
                .filter(|p| !p.paused && p.playing.is_none())
                .map(|p| p.id.clone())
                .collect();
            (s.settings.setup.kind_id(), free)
        };
        if free.len() < 2 {
            return None;
        }
        let mut ratings = Vec::new();
        for pid in free {
            if let Ok(r) = self.parts.ratings.of(&pid, kind).await {
                ratings.push((pid, r.display()));
            }
        }
        Some(ratings)
    }

    /// Chooses the round with these ratings and stores it; `None` when nobody is paired or
    /// the round could not be stored (another node's came first, or the store failed: it
    /// is then undone here).
    async fn choose_round(&self, cell: &Cell, ratings: Vec<(PlayerId, i64)>) -> Option<Round> {
        let now = self.now();
        let players = &self.parts.players;
        // A player who may be connected to another node is not known absent here: nobody
        // is left out for it.
        let topology = &self.parts.topology;
        let online = |p: &PlayerId| players.is_online(p) || topology.may_be_connected_elsewhere(p);
        // The round is chosen and written under one hold of the version lock (see
        // `persist_locked`): a reload in between would drop it from the state written.
        let mut stored = cell.stored.lock().await;
        let round = {
            let mut s = cell.state();
            for (pid, r) in ratings {
                if let Some(e) = s.players.iter_mut().find(|p| p.id == pid) {
                    e.rating = r;
                }
            }
            let pairings = s.pair_round(now, &online, &mut ids::game_id);
            let seats = pairings
                .iter()
                .map(|pairing| {
                    pairing.players.clone().map(|pid| {
                        let e = s.entrant(&pid);
                        SeatPlayer {
                            name: e.map_or_else(|| pid.to_string(), |e| e.name.clone()),
                            bot: e.is_some_and(|e| e.bot),
                            id: pid.into_string(),
                            rating: None,
                        }
                    })
                })
                .collect();
            Round {
                pairings,
                settings: s.settings.clone(),
                seats,
            }
        };
        if round.pairings.is_empty() {
            return None;
        }
        let persisted = self.persist_locked(cell, &mut stored).await;
        drop(stored);
        match persisted {
            Ok(true) => Some(round),
            Ok(false) => {
                tracing::info!("another node paired this round first");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot store a pairing round: dropped");
                let mut s = cell.state();
                for p in &round.pairings {
                    s.unpair(&p.game_id);
                }
                None
            }
        }
    }

    /// Starts a stored round's games; one that cannot start ends aborted (it was
    /// published as `playing` already: aborted, not removed).
    async fn start_round(&self, cell: &Cell, round: Round) {
        let Round {
            pairings,
            settings,
            seats,
        } = round;
        let mut failed = Vec::new();
        for (pairing, seats) in pairings.into_iter().zip(seats) {
            let new = NewGame {
                id: GameId::from(pairing.game_id.as_str()),
                setup: settings.setup.clone(),
                rated: settings.rated,
                visibility: settings.visibility,
                code: settings.code.as_deref().map(RoomCode::from),
                players: seats,
                rematch_of: None,
                arena: Some(ArenaLink {
                    id: ArenaId::from(settings.id.as_str()),
                    berserk: settings.berserk,
                }),
            };
            match self.parts.starter.start_game(new).await {
                Ok(_) => {
                    tracing::info!(game = %pairing.game_id, players = ?pairing.players, "arena pairing")
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not start an arena game");
                    failed.push(pairing.game_id);
                }
            }
        }
        if !failed.is_empty() {
            let _ = self
                .mutate(cell, |s| {
                    for g in &failed {
                        s.abort_unstarted(g);
                    }
                    Ok(())
                })
                .await;
        }
    }
}
