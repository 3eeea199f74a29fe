//! Recovery at start-up: every unfinished game is rebuilt from its action log and served
//! again, so a crash or restart loses nothing a player was told succeeded.
//!
//! Why replay instead of a stored snapshot: the log is the one thing written before every
//! acknowledgement, so it is always complete; replaying it through the rules engine (and
//! the same actor code that applied it live) rebuilds exactly the acknowledged state, and
//! each entry's stored position checks the replay move by move. A game whose log does not
//! replay is left out (logged, and kept in the store for an operator) rather than served
//! wrong.
//!
//! Document seqs: every change of a document is one logged event and the fold goes through
//! the same [`Core::apply`] as the live game, so a rebuilt game continues at exactly the
//! seq it had, with the document the players saw at that seq (protocol/docs/PROTOCOL.md version 2). The
//! time the server was down is charged to nobody: the actor logs a `resume` event.
//!
//! Presence: nobody is connected after a restart, so both players start offline from the
//! moment of recovery (abandonment is counted from then, not from before the crash).
//!
//! Rooms: rooms still waiting for an opponent are reloaded; a started or closed room is
//! loaded on demand when someone joins it by code ([`stored_room`]).

use std::sync::Arc;

use stoa_protocol::wire::{RoomState, SeatPlayer};
use thiserror::Error;
use tokio::sync::mpsc;

use crate::domain::setup::GameSetup;
use crate::error::ApiError;
use crate::game::actor;
use crate::game::core::Core;
use crate::game::games::Games;
use crate::game::players::Players;
use crate::game::rebuild::{self, RebuildError};
use crate::game::{Command, GameHandle};
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::services::rooms::{Room, RoomStatus, Rooms};
use crate::services::starter::Starter;
use crate::services::topology::Topology;
use crate::store::{RoomRecord, Store, StoreError};

/// Why one game could not be rebuilt.
#[derive(Debug, Error)]
pub enum RecoveryError {
    /// The store failed (recovery as a whole stops).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The game is indexed as unfinished but has no record.
    #[error("no record for game {0}")]
    Missing(String),
    /// The stored game does not rebuild (its engine, a log entry or a stored position).
    #[error(transparent)]
    Rebuild(#[from] RebuildError),
}

/// A game rebuilt from the store, with what its actor needs to run.
struct Rebuilt {
    handle: GameHandle,
    rx: mpsc::Receiver<Command>,
    core: Core,
    /// Log entries replayed.
    actions: usize,
    /// What it was rebuilt from, for its actor to keep.
    stored: actor::Stored,
}

/// What recovery did.
#[derive(Debug, Default)]
pub struct RecoveryReport {
    /// Games rebuilt and running again.
    pub games: usize,
    /// Of those, games whose log already ended them (their final document is stored now).
    pub ended: usize,
    /// Actions replayed.
    pub actions: usize,
    /// Games left out, with the reason.
    pub failed: Vec<(GameId, String)>,
    /// Waiting rooms reloaded.
    pub rooms: usize,
}

/// Rebuilds games from their logs: at start-up, when this node takes a game over, and
/// when it follows a game another node owns.
pub struct Recovery {
    store: Arc<dyn Store>,
    games: Arc<Games>,
    players: Arc<Players>,
    metrics: Arc<Metrics>,
    rooms: Arc<Rooms>,
    starter: Arc<Starter>,
    topology: Arc<dyn Topology>,
    /// One follower start at a time: two requests for the same game must not start two.
    attaching: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recovery").finish_non_exhaustive()
    }
}

/// What recovery takes.
pub struct RecoveryParts {
    /// Where the logs are.
    pub store: Arc<dyn Store>,
    /// Live games (the rebuilt ones join them).
    pub games: Arc<Games>,
    /// Connected players (a follower's initial presence).
    pub players: Arc<Players>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Rooms (waiting ones are reloaded).
    pub rooms: Arc<Rooms>,
    /// The actors' capabilities.
    pub starter: Arc<Starter>,
    /// Leases and game channels.
    pub topology: Arc<dyn Topology>,
}

impl Recovery {
    /// Recovery over its parts.
    pub fn new(p: RecoveryParts) -> Self {
        Recovery {
            store: p.store,
            games: p.games,
            players: p.players,
            metrics: p.metrics,
            rooms: p.rooms,
            starter: p.starter,
            topology: p.topology,
            attaching: tokio::sync::Mutex::new(()),
        }
    }

    /// The live game `id`: its actor here, or a follower of the node that owns it (started on
    /// demand from the log). `Ok(None)` when it is not live anywhere (unknown or finished);
    /// `unavailable` when the store cannot tell now (a live game is never reported missing
    /// because a read timed out).
    pub async fn live(&self, id: &GameId) -> Result<Option<GameHandle>, ApiError> {
        if let Some(h) = self.games.get(id) {
            return Ok(Some(h));
        }
        if !self.topology.may_live_elsewhere(id) {
            return Ok(None);
        }
        // Boxed: following a game of another node is rare, and inline its state would sit
        // in every request's future (each move's among them).
        Box::pin(self.attach(id)).await.map_err(ApiError::store)
    }

    async fn attach(&self, id: &GameId) -> Result<Option<GameHandle>, StoreError> {
        let _one = self.attaching.lock().await;
        if let Some(h) = self.games.get(id) {
            return Ok(Some(h));
        }
        if self.store.finished_game(id).await?.is_some() || self.store.game(id).await?.is_none() {
            return Ok(None);
        }
        // Subscribed before the log is read: an event logged after the read arrives on the
        // channel; one logged before is in the log (the follower heals at its start).
        self.topology.subscribe_game(id).await?;
        match self.follow(id).await {
            Ok(h) => Ok(Some(h)),
            Err(e) => {
                tracing::warn!(game = %id, error = %e, "cannot follow the game");
                self.topology.unsubscribe_game(id);
                match e {
                    RecoveryError::Store(e) => Err(e),
                    _ => Ok(None),
                }
            }
        }
    }

    /// Reloads every unfinished game and waiting room. Fails only when the store fails.
    pub async fn recover(&self) -> Result<RecoveryReport, StoreError> {
        let mut report = RecoveryReport::default();
        let ids = self.store.all_unfinished_games().await?;
        for id in ids {
            // Another live node owns it (it stays there), or its lease has not lapsed yet (a
            // node of the cluster takes it over once it has).
            if !self.topology.acquire(&id).await? {
                continue;
            }
            match self.restore_game(&GameId::from(id.as_str())).await {
                Ok((ended, actions)) => {
                    report.games += 1;
                    report.actions += actions;
                    if ended {
                        report.ended += 1;
                    }
                }
                Err(RecoveryError::Store(e)) => return Err(e),
                Err(RecoveryError::Missing(_)) => {
                    // A crash inside its creation, before the record: nothing was ever
                    // played, and its index entry is gone now.
                    tracing::info!(game = %id, "an unfinished entry for a game never created: dropped");
                }
                Err(e) => {
                    tracing::error!(game = %id, error = %e, "game not recovered: left in the store");
                    report.failed.push((id, e.to_string()));
                }
            }
        }
        for record in self.store.waiting_rooms().await? {
            if let Some(room) = self.room_from_record(record).await? {
                self.rooms.restore(room);
                report.rooms += 1;
            }
        }
        tracing::info!(
            games = report.games,
            ended = report.ended,
            actions = report.actions,
            failed = report.failed.len(),
            rooms = report.rooms,
            "recovery done"
        );
        Ok(report)
    }

    /// Rebuilds one game and starts its actor. Returns whether its log ended it, and the
    /// number of actions replayed.
    async fn restore_game(&self, id: &GameId) -> Result<(bool, usize), RecoveryError> {
        let Rebuilt {
            handle,
            rx,
            core,
            actions,
            stored,
        } = self.rebuild(id, true).await?;
        let ended = core.result().is_some();
        // Registered and counted live as a new game would be: an end reached in the log
        // unregisters it the same way (the actor marks it ended).
        self.metrics.games_live(core.kind()).inc();
        let summary = handle.summary.clone();
        self.games.insert(handle);
        tracing::info!(game = %id, actions, moves = core.moves(), seq = core.seq(), ended, "game recovered");
        actor::spawn_recovered(
            self.starter.capabilities(),
            core,
            stored,
            rx,
            summary,
            false,
        );
        Ok((ended, actions))
    }

    /// Takes over a game whose owner died (cluster mode; this node just acquired its lease):
    /// rebuilt from the log, its clock running on.
    /// An actor started for the game meanwhile (a follower for a `game.watch`) is promoted
    /// instead: one node never runs two actors for one game.
    pub async fn take_over(&self, id: &GameId) -> Result<(), RecoveryError> {
        let Rebuilt {
            handle,
            rx,
            core,
            stored,
            ..
        } = self.rebuild(id, true).await?;
        let summary = handle.summary.clone();
        if let Some(existing) = self.games.insert_if_absent(handle.clone()) {
            if existing.tx.send(Command::Promote).await.is_ok() {
                return Ok(());
            }
            // It stopped just now: this one serves the game.
            self.games.insert(handle);
        }
        self.metrics.games_live(core.kind()).inc();
        self.metrics.lease_takeovers.inc();
        actor::spawn_recovered(self.starter.capabilities(), core, stored, rx, summary, true);
        Ok(())
    }

    /// Starts a follower of a game another node owns (cluster mode), rebuilt from the log.
    pub async fn follow(&self, id: &GameId) -> Result<GameHandle, RecoveryError> {
        let Rebuilt {
            handle,
            rx,
            core,
            stored,
            ..
        } = self.rebuild(id, false).await?;
        let online = [
            self.players.is_online(&handle.players[0]),
            self.players.is_online(&handle.players[1]),
        ];
        let summary = handle.summary.clone();
        // An actor that started for the game meanwhile (a takeover) serves it.
        if let Some(existing) = self.games.insert_if_absent(handle.clone()) {
            return Ok(existing);
        }
        if core.result().is_some() {
            self.games.ended(id);
        }
        actor::spawn_follower(
            self.starter.capabilities(),
            core,
            stored,
            online,
            rx,
            summary,
        );
        Ok(handle)
    }

    /// A game's core folded from its stored log, with the handle and queue of its actor-to-be.
    /// `leased`: this node holds the game's lease (it recovers or takes over the game), so it
    /// also repairs what a crash inside the game's creation left
    /// ([`crate::store::Store::repair_unfinished`]).
    async fn rebuild(&self, id: &GameId, leased: bool) -> Result<Rebuilt, RecoveryError> {
        let record = self.store.game(id).await?;
        if leased {
            self.store.repair_unfinished(id, record.as_ref()).await?;
        }
        let record = record.ok_or_else(|| RecoveryError::Missing(id.to_string()))?;
        let log = self.store.actions(id).await?;
        let caps = self.starter.capabilities();
        let core = rebuild::core_from_log(&caps, &record, &log)?;
        let (tx, rx) = mpsc::channel(self.starter.game_queue());
        // The route names the seats as created (a swap later exchanges them in the core).
        let kind =
            stoa_protocol::kind(&record.kind).map_err(|e| RebuildError::Engine(e.to_string()))?;
        let players = &record.players;
        let handle = GameHandle::new(crate::game::GameRoute {
            id: record.id.as_str().into(),
            kind,
            tx,
            players: [players[0].id.as_str().into(), players[1].id.as_str().into()],
            arena: record.arena.as_ref().map(|a| a.id.to_string()),
            summary: Arc::new(parking_lot::Mutex::new(None)),
        });
        Ok(Rebuilt {
            handle,
            rx,
            core,
            actions: log.len(),
            stored: actor::Stored {
                record: Arc::new(record),
                tail: log[log.len().saturating_sub(actor::RECENT)..].to_vec(),
            },
        })
    }
}

impl Recovery {
    /// A room from the store, for a code not in memory (a started or closed room after a
    /// restart). `None` when there is no such room.
    pub async fn stored_room(&self, code: &RoomCode) -> Result<Option<Room>, StoreError> {
        match self.store.room(code).await? {
            Some(record) => self.room_from_record(record).await,
            None => Ok(None),
        }
    }

    async fn room_from_record(&self, record: RoomRecord) -> Result<Option<Room>, StoreError> {
        let terms = record.terms;
        let Ok(kind) = stoa_protocol::kind(&terms.kind) else {
            tracing::warn!(room = %record.code, kind = %terms.kind, "stored room of an unknown kind");
            return Ok(None);
        };
        let Some(host) = self.seat(&record.host).await? else {
            return Ok(None);
        };
        let mut seats = [None, None];
        for (i, id) in record.seats.iter().enumerate() {
            if let Some(id) = id {
                seats[i] = self.seat(id).await?;
            }
        }
        let status = match (record.status, &record.game_id) {
            (RoomState::Waiting, _) => RoomStatus::Waiting,
            (RoomState::Started, Some(game_id)) => RoomStatus::Started(game_id.clone()),
            _ => RoomStatus::Closed,
        };
        // As stored, not checked again here: the room must show what it was created with;
        // its settings are checked again when its game is made.
        let Some(setup) = GameSetup::unchecked(kind, terms.options, &terms.clock, terms.start)
        else {
            tracing::warn!(room = %record.code, clock = %terms.clock, "stored room with no clock object");
            return Ok(None);
        };
        Ok(Some(Room {
            code: record.code,
            setup,
            rated: terms.rated,
            visibility: terms.visibility,
            host,
            seats,
            status,
        }))
    }

    async fn seat(&self, player_id: &PlayerId) -> Result<Option<SeatPlayer>, StoreError> {
        Ok(self.store.player(player_id).await?.map(|p| SeatPlayer {
            id: p.id.into_string(),
            name: p.name,
            rating: None,
            bot: p.bot,
        }))
    }
}

#[cfg(test)]
mod tests;
