//! Matchmaking in the running server: `queue.join` / `queue.leave`, the pairing task, and
//! starting the games it makes.
//!
//! The queues are [`crate::game::queues`]; this service validates joins, routes them to the node
//! that runs matchmaking ([`QueueRouting`]), and turns each pairing into a game through the
//! same path rooms and rematches use ([`Starter::start_game`]), so a paired player gets
//! `game.started` and a snapshot exactly as a room player does.
//!
//! Why a task with waves: pairing everyone at once per wave (every `--queue-wave-ms`, and
//! at once when a join makes a pair possible) lets rated queues choose the closest pairs
//! among all waiting players instead of first-come pairs, while nobody waits more than one
//! wave once a partner is acceptable. The widening schedule of the accepted rating gap is
//! configurable (`--queue-gap-*` flags) so operators can tune it and tests can speed it up.
//!
//! Decisions (documented in docs/server.md and protocol/docs/PROTOCOL.md, "Matchmaking"):
//! - A queue is (kind, options with defaults filled in, clock, rated); equal settings
//!   written differently (key order, omitted defaults, `9.0` for `9`) share a queue.
//! - Games made by matchmaking are public (they appear in the lobby and anyone may watch).
//! - A player is in at most one queue; joining another moves them; joining the same queue
//!   again (say from a second device) keeps their place. All of a player's connections share
//!   the entry, so a player is never paired with themself; the queue entry is dropped when
//!   the player's last connection closes.
//! - `queue.leave` answers `ok` even when the player was not queued (leaving is idempotent).
//! - While queued, the player's connections get `queue.status` (an addition) whenever their
//!   position or the number of others waiting changes, at most once per wave.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use stoa_protocol::wire::{Rid, SeatPlayer, ServerMessage, Visibility};
use tokio::sync::watch;
use tracing::Instrument;

use crate::domain::pairing::QueueKey;
use crate::domain::setup::GameSetup;
use crate::error::ApiError;
use crate::game::players::Players;
use crate::game::queues::{describe, Made, Matchmaker};
use crate::game::NewGame;
use crate::ids;
use crate::ids::PlayerId;
use crate::metrics::Metrics;
use crate::net::outbound::ConnHandle;
use crate::services::ratings::{self, Ratings};
use crate::services::starter::Starter;
use crate::services::topology::Topology;
use crate::store::PlayerRecord;

/// Matchmaking: what it takes to queue players and to start their games.
pub struct Matchmaking {
    /// This node's queues (used while it runs the matchmaking).
    pub queues: Arc<Matchmaker>,
    /// Where joins go and how a player elsewhere is told.
    pub topology: Arc<dyn Topology>,
    /// Players' ratings (the queue of a rated game pairs by them).
    pub ratings: Arc<Ratings>,
    /// Starts the games made.
    pub starter: Arc<Starter>,
    /// Connected players (queue statuses, re-queueing after a failed start).
    pub players: Arc<Players>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The period of pairing waves (`--queue-wave-ms`).
    pub wave: Duration,
    /// Flips to `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
}

impl std::fmt::Debug for Matchmaking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matchmaking").finish_non_exhaustive()
    }
}

/// Validates a queue's clock request and returns it normalised (only the fields of its
/// kind, so equal clocks written differently share a queue). Missing means no clock. The
/// rules are the rooms' ones: see [`crate::domain::clock_request::validate_clock`].
pub fn validate_clock(clock: Option<Value>) -> Result<Value, ApiError> {
    crate::domain::clock_request::validate_clock(clock.as_ref()).map(|(_, canonical)| canonical)
}

/// A `queue.join` request's settings, checked where the request came in.
#[derive(Clone, Debug)]
pub struct JoinRequest {
    /// The game's settings (kind, options with defaults filled in, clock).
    pub setup: GameSetup,
    /// Rated or casual.
    pub rated: bool,
}

impl Matchmaking {
    /// Handles `queue.join` (settings already checked): looks the player's
    /// rating up, queues the player and answers `queued` (the pairing task then makes the
    /// game).
    pub async fn join(
        &self,
        conn: &ConnHandle,
        player: &PlayerRecord,
        rid: Option<Rid>,
        request: JoinRequest,
    ) -> Result<(), ApiError> {
        let kind = request.setup.kind_id();
        let rating = self.ratings.of(&player.id, kind).await?;
        let key = QueueKey::of(&request.setup, request.rated);
        let seat = SeatPlayer {
            id: player.id.to_string(),
            name: player.name.clone(),
            rating: Some(ratings::seat_value(&rating)),
            bot: player.bot,
        };
        let position = self
            .topology
            .queue_join(key.clone(), seat, rating.rating)
            .await?;
        tracing::info!(player = %player.id, queue = %key, position, "queued");
        self.metrics.queues.joined();
        conn.send_msg(&ServerMessage::Queued {
            rid,
            queue: describe(&key),
            position,
        });
        Ok(())
    }

    /// Takes a player out of its queue (on whatever node the matchmaking runs).
    pub async fn leave(&self, player_id: &PlayerId) {
        self.topology.queue_leave(player_id).await;
    }

    /// Starts the pairing task: a wave every `--queue-wave-ms` and whenever a join makes a
    /// pair possible; stops at shutdown.
    pub fn spawn(self: Arc<Self>) {
        let span = tracing::info_span!(parent: None, "matchmaker");
        tokio::spawn(self.run().instrument(span));
    }

    async fn run(self: Arc<Self>) {
        let period = self
            .wave
            .clamp(Duration::from_millis(10), Duration::from_secs(60));
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut shutdown = self.shutdown.clone();
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = self.queues.pair_possible() => {}
                r = shutdown.changed() => {
                    if r.is_err() || *shutdown.borrow() {
                        break;
                    }
                }
            }
            let mm = &self.queues;
            let now = mm.now_ms();
            for made in mm.wave(now) {
                self.start(made).await;
            }
            for (player, msg) in mm.statuses(now) {
                let player = PlayerId::from(player);
                let conns = self.players.connections(&player);
                if conns.is_empty() {
                    // Queued from another node of the cluster.
                    self.topology.to_player(&player, msg.to_json()).await;
                }
                for conn in conns {
                    conn.send_msg(&msg);
                }
            }
            self.metrics.queues.set_waiting(&mm.counts());
        }
    }

    /// Creates the game of a pairing and tells both players ([`Starter::start_game`]); when
    /// the game cannot be created (store unavailable), puts the players back in the queue
    /// (they lose their waiting time).
    async fn start(&self, made: Made) {
        let desc = describe(&made.key);
        let started = match GameSetup::stored(&made.key.kind, &desc["options"], &desc["clock"]) {
            Ok(setup) => {
                let new = NewGame {
                    id: ids::game_id(),
                    setup,
                    rated: made.key.rated,
                    visibility: Visibility::Public,
                    code: None,
                    players: made.players.clone(),
                    rematch_of: None,
                    arena: None,
                };
                self.starter.start_game(new).await
            }
            Err(e) => Err(e),
        };
        match started {
            Ok(handle) => {
                self.metrics
                    .queues
                    .paired(&made.key.kind, made.waited_ms, made.rating_gap);
                tracing::info!(
                    game = %handle.id,
                    queue = %made.key,
                    gap = made.rating_gap,
                    waited_ms = ?made.waited_ms,
                    "paired"
                );
            }
            Err(e) => {
                tracing::warn!(error = %e, queue = %made.key, "could not start a paired game");
                let now = self.queues.now_ms();
                for (i, seat) in made.players.into_iter().enumerate() {
                    if self.players.is_online(&PlayerId::from(seat.id.as_str())) {
                        self.queues
                            .join(made.key.clone(), seat, made.ratings[i], now);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use stoa_protocol::wire::ErrorCode;

    #[test]
    fn clocks_are_validated_and_normalised() {
        assert_eq!(validate_clock(None).unwrap(), json!({"kind":"none"}));
        assert_eq!(
            validate_clock(Some(
                json!({"increment_ms":0,"kind":"fischer","initial_ms":60000,"x":1})
            ))
            .unwrap(),
            json!({"kind":"fischer","initial_ms":60000,"increment_ms":0})
        );
        for bad in [
            json!({"kind":"fischer","initial_ms":0,"increment_ms":0}),
            json!({"kind":"sundial"}),
            json!({"kind":"fischer"}),
            json!("5+3"),
            json!({"kind":"correspondence","days_per_turn":99}),
        ] {
            let e = validate_clock(Some(bad.clone())).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{bad}");
        }
    }
}
