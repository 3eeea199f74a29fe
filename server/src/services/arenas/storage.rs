//! An arena in the store: taken up from it, settled against it, and every change written
//! to it as one conditional write.
//!
//! Why conditional writes: in a cluster every node holding an arena may change it (a join
//! here, a game's end there); a write that lost to another node's reads the arena again
//! and the change is tried on the fresher copy, so no change overwrites another.

use std::sync::Arc;
use std::time::Duration;

use stoa_protocol::wire::ErrorCode;

use super::state::ArenaState;
use super::{ends::end_of, Arenas, Cell, UNSTARTED_MS};
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::ids::{ArenaId, GameId};

impl Arenas {
    /// Takes up every open arena of the store that is not held here yet (at start-up, and
    /// in a cluster every few seconds, for arenas created on other nodes).
    pub async fn discover(&self) -> Result<(), ApiError> {
        let ids = timed_store_call(&self.parts.metrics, self.parts.store.open_arenas()).await?;
        for id in ids {
            if self.cells().contains_key(&id) {
                continue;
            }
            if let Some(cell) = self.cell(&id).await? {
                self.settle(&cell).await?;
            }
        }
        Ok(())
    }

    /// Settles an arena's games in progress as the store has them (for an arena taken up
    /// after a restart, and every few seconds while it has games in progress): a game that
    /// ended is scored from its final document (its end may have been reported to a node
    /// that died before it stored it), a game paired more than [`UNSTARTED_MS`] ago but
    /// never created (its node died between storing the pairing and creating the game)
    /// ends aborted, scoring nothing, and frees its players.
    pub(super) async fn settle(&self, cell: &Cell) -> Result<(), ApiError> {
        let now = self.now();
        let pending: Vec<(GameId, u64)> = cell
            .state()
            .games
            .iter()
            .filter(|g| g.ended.is_none())
            .map(|g| (g.id.clone(), g.started_at))
            .collect();
        let (store, metrics) = (&self.parts.store, &self.parts.metrics);
        for (game, started_at) in pending {
            if let Some(fin) = timed_store_call(metrics, store.finished_game(&game)).await? {
                if let Some(end) = end_of(&cell.id, &game, &fin.doc) {
                    if self.mutate(cell, |s| Ok(s.game_ended(&end))).await? {
                        cell.wake.notify_one();
                    }
                }
            } else if (now.saturating_sub(started_at) > UNSTARTED_MS
                || (!self.parts.topology.arena_may_change_elsewhere(&cell.id)
                    && started_at < self.born))
                && timed_store_call(metrics, store.game(&game))
                    .await?
                    .is_none()
            {
                // Watchers may have seen it `playing`: it stays in the document, aborted.
                self.mutate(cell, |s| Ok(s.abort_unstarted(&game))).await?;
            }
        }
        Ok(())
    }

    pub(super) async fn discover_forever(self: Arc<Self>) {
        let mut shutdown = self.parts.shutdown.clone();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                _ = shutdown.changed() => break,
            }
            if let Err(e) = self.discover().await {
                tracing::warn!(error = %e, "cannot look for arenas");
            }
        }
    }

    /// Writes an arena's current state as the next version. `Ok(false)` when another node
    /// wrote first: the arena is then read again from the store (what was changed here is
    /// gone, and the caller may apply its change again).
    pub(super) async fn persist(&self, cell: &Cell) -> Result<bool, ApiError> {
        let mut stored = cell.stored.lock().await;
        self.persist_locked(cell, &mut stored).await
    }

    /// [`Arenas::persist`] under the version lock the caller holds. A change is made and
    /// written under one hold of that lock: a reload in between (another node wrote) would
    /// replace the state with the store's, and the write that follows would then store it
    /// without the change and still succeed, an `ok` for a change that is gone.
    pub(super) async fn persist_locked(
        &self,
        cell: &Cell,
        stored: &mut u64,
    ) -> Result<bool, ApiError> {
        let now = self.now();
        let (state, open) = {
            let s = cell.state();
            // Stored with the seq this state's document is published under: the refresh
            // that follows a write publishes it one above the last when it changed.
            let doc = s.document(now);
            let seq = {
                let p = cell.published();
                p.seq() + u64::from(*p.doc() != doc)
            };
            (s.to_stored(seq), s.open(now))
        };
        let store = &self.parts.store;
        let saved = timed_store_call(
            &self.parts.metrics,
            store.save_arena(&ArenaId::from(cell.id.as_str()), *stored + 1, open, &state),
        )
        .await?;
        if saved {
            *stored += 1;
            return Ok(true);
        }
        self.reload(cell, stored).await?;
        Ok(false)
    }

    /// Reads an arena again from the store when the store has a newer version.
    pub(super) async fn reload(&self, cell: &Cell, stored: &mut u64) -> Result<(), ApiError> {
        let got = timed_store_call(
            &self.parts.metrics,
            self.parts.store.arena(&ArenaId::from(cell.id.as_str())),
        )
        .await?;
        if let Some((version, v)) = got {
            if version > *stored {
                if let Some(state) = ArenaState::from_stored(&v) {
                    *cell.state() = state;
                    *stored = version;
                }
            }
        }
        self.refresh(cell);
        Ok(())
    }

    /// Applies a change to an arena and stores it; applied again to a fresher copy when
    /// another node changed the arena meanwhile.
    pub(super) async fn mutate<R>(
        &self,
        cell: &Cell,
        change: impl Fn(&mut ArenaState) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let mut stored = cell.stored.lock().await;
        for _ in 0..8 {
            // An error answer must mean nothing changed: the state before this try is put
            // back when the change is refused or cannot be stored. (A conditional write
            // that lost to another node reloads the state instead, and the change is tried
            // again on the fresher copy.)
            let before = cell.state().clone();
            let changed = change(&mut cell.state());
            let tried = match changed {
                Ok(r) => self
                    .persist_locked(cell, &mut stored)
                    .await
                    .map(|saved| (r, saved)),
                Err(e) => Err(e),
            };
            match tried {
                Ok((r, true)) => {
                    drop(stored);
                    self.refresh(cell);
                    return Ok(r);
                }
                Ok((_, false)) => {}
                Err(e) => {
                    *cell.state() = before;
                    return Err(e);
                }
            }
        }
        Err(ApiError::new(
            ErrorCode::Unavailable,
            "the arena is busy: try again",
        ))
    }
}
