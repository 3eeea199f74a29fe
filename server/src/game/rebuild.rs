//! A game's core: made for a new game, or rebuilt from what the store holds (its record
//! and its action log).
//!
//! Why here, in the game layer: recovery (a restart, a takeover, a follower) builds a core
//! this way, and so does a live actor whose log turned out shorter than what it applied (a
//! Redis failover that lost acknowledged writes, [`super::actor`]'s repair): both fold the
//! same log through the same [`Core::apply`], checking each entry's stored position.

use stoa_protocol::wire::SeatPlayer;
use thiserror::Error;

use stoa_protocol::AnyGame;

use super::capabilities::Capabilities;
use super::clock_driver::ClockDriver;
use super::core::Core;
use super::NewGame;
use crate::domain::setup::GameSetup;
use crate::domain::start_position::StartPosition;
use crate::store::{ActionRecord, GameRecord};

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

/// Why a stored game does not rebuild (it is left in the store for an operator).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RebuildError {
    /// The kind or options are no longer accepted by the rules engine.
    #[error("the rules engine refuses the game: {0}")]
    Engine(String),
    /// A logged action was refused on replay.
    #[error("logged action seq {seq} does not replay: {reason}")]
    Replay {
        /// The action's seq.
        seq: u64,
        /// Why.
        reason: String,
    },
    /// A logged action replayed to another position than the one stored with it.
    #[error("after logged action seq {seq} the position is {got:?}, the log says {want:?}")]
    Mismatch {
        /// The action's seq.
        seq: u64,
        /// What the replay gives.
        got: String,
        /// What was stored.
        want: String,
    },
}

/// The game `record` describes, at seq 0 (created at its stored creation time, so every
/// node holds the same document at seq 0).
pub fn core_at_start(caps: &Capabilities, record: &GameRecord) -> Result<Core, RebuildError> {
    let kind =
        stoa_protocol::kind(&record.kind).map_err(|e| RebuildError::Engine(e.to_string()))?;
    let players = record.players.clone().map(|p| SeatPlayer {
        id: p.id.into_string(),
        name: p.name,
        rating: p.rating,
        bot: p.bot,
    });
    // The stored options as they are (checked when the game was made: the document must
    // come back byte for byte); a stored clock that no longer validates (the bounds
    // changed) plays without one rather than losing the game.
    let clock = crate::domain::clock_request::time_control(&record.clock).unwrap_or_else(|e| {
        tracing::error!(game = %record.id, error = %e, "invalid stored clock: playing without one");
        stoa_protocol::clock::TimeControl::None
    });
    let setup = GameSetup {
        kind,
        options: record.options.clone(),
        clock,
        start: record.start.clone().map(StartPosition::stored),
    };
    // From the game's own start: the kind's, or the position it was created from.
    let game = setup
        .new_game()
        .map_err(|e| RebuildError::Engine(e.to_string()))?;
    let new = NewGame {
        id: record.id.clone(),
        setup,
        rated: record.rated,
        visibility: record.visibility,
        code: record.code.clone(),
        players,
        rematch_of: record.rematch_of.clone(),
        arena: record.arena.clone(),
    };
    Ok(new_core(caps, new, game, record.created_ms))
}

/// The game `record` describes with its whole `log` applied.
pub fn core_from_log(
    caps: &Capabilities,
    record: &GameRecord,
    log: &[ActionRecord],
) -> Result<Core, RebuildError> {
    let mut core = core_at_start(caps, record)?;
    replay(&mut core, log)?;
    Ok(core)
}

/// Folds the log over the game through [`Core::apply`], checking each entry's stored
/// position.
pub fn replay(core: &mut Core, log: &[ActionRecord]) -> Result<(), RebuildError> {
    for action in log {
        core.apply(action).map_err(|e| RebuildError::Replay {
            seq: action.seq,
            reason: e.reason,
        })?;
        if let Some(want) = &action.position {
            if core.position() != want {
                return Err(RebuildError::Mismatch {
                    seq: action.seq,
                    got: core.position().to_string(),
                    want: want.clone(),
                });
            }
        }
    }
    Ok(())
}
