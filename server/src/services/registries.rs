//! The node-local registries: live games, connected players, the matchmaking queues and
//! the metrics.
//!
//! Why apart from the services: the topology (a cluster's bus delivers game messages and
//! frames into them, and runs the queues while it holds the matchmaking) and the services
//! both hold them, so they are made first, by the composition root, and handed to both.

use std::sync::Arc;

use crate::config::Config;
use crate::game::games::Games;
use crate::game::players::Players;
use crate::game::queues::Matchmaker;
use crate::metrics::Metrics;

/// The node-local registries, made before the services and the topology because both hold
/// them (a cluster's bus delivers into the games and players registries).
#[derive(Clone)]
pub struct Registries {
    /// Live games.
    pub games: Arc<Games>,
    /// Connected players.
    pub players: Arc<Players>,
    /// The matchmaking queues (used while this node runs the matchmaking).
    pub queues: Arc<Matchmaker>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
}

impl Registries {
    /// Empty registries for `config`.
    pub fn new(config: &Config) -> Self {
        Registries {
            games: Arc::new(Games::default()),
            players: Arc::new(Players::default()),
            queues: Arc::new(Matchmaker::new(crate::game::queues::widening(config))),
            metrics: Arc::new(Metrics::default()),
        }
    }
}
