//! Player ratings: Glicko-2, one [`Rating`] per player and game kind.
//!
//! This module is pure: no I/O, no clock, no randomness. The server keeps a
//! `Rating` per (player, kind), shows it in `welcome`, game documents and the
//! lobby, and calls [`Glicko2::game`] when a *rated* game ends with a result
//! (never for an aborted game: an abort is not a result).
//!
//! Every game is treated as its own rating period, as lichess does: the
//! paper's batch form ([`Glicko2::update`]) is available for a period with
//! several games, but updating after each game keeps ratings live.

mod glicko2;

pub use glicko2::{update, Glicko2, GLICKO2_SCALE};

use serde::{Deserialize, Serialize};

/// The rating every new player starts with (Glickman's recommended default).
pub const DEFAULT_RATING: f64 = 1500.0;
/// The rating deviation every new player starts with: maximal uncertainty.
pub const DEFAULT_DEVIATION: f64 = 350.0;
/// The volatility every new player starts with (the paper's example value).
pub const DEFAULT_VOLATILITY: f64 = 0.06;
/// Above this deviation a rating is *provisional* (shown with a `?`).
///
/// 110 is lichess's threshold: a new player (350) drops below it after roughly
/// a dozen games against established opponents.
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// One player's Glicko-2 rating in one game kind, on the familiar Glicko scale
/// (1500-centred), as stored and as sent to clients.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rating itself (Glicko scale, 1500 for a newcomer).
    pub rating: f64,
    /// The rating deviation (RD): how uncertain `rating` is; 350 for a newcomer.
    pub deviation: f64,
    /// The volatility σ: how erratic the player's results are expected to be.
    pub volatility: f64,
    /// Rated games that went into this rating (for display and provisional
    /// logic elsewhere; the maths ignores it).
    #[serde(default)]
    pub games: u32,
}

impl Default for Rating {
    /// A newcomer: 1500 / 350 / 0.06, no games.
    fn default() -> Self {
        Rating {
            rating: DEFAULT_RATING,
            deviation: DEFAULT_DEVIATION,
            volatility: DEFAULT_VOLATILITY,
            games: 0,
        }
    }
}

impl Rating {
    /// A rating with the given rating and deviation, the default volatility and no games.
    pub fn new(rating: f64, deviation: f64) -> Self {
        Rating {
            rating,
            deviation,
            ..Rating::default()
        }
    }

    /// Whether this rating is still provisional: its deviation is above
    /// [`PROVISIONAL_DEVIATION`] (110), so the number says little yet.
    pub fn provisional(&self) -> bool {
        self.deviation > PROVISIONAL_DEVIATION
    }

    /// The rating rounded to an integer, as shown to people.
    pub fn display(&self) -> i64 {
        self.rating.round() as i64
    }
}

/// The result of one game from one player's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The player won.
    Win,
    /// The game was drawn.
    Draw,
    /// The player lost.
    Loss,
}

impl Outcome {
    /// The Glicko score: 1 for a win, ½ for a draw, 0 for a loss.
    pub fn score(self) -> f64 {
        match self {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.5,
            Outcome::Loss => 0.0,
        }
    }

    /// The same game seen from the opponent's side.
    pub fn reversed(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Draw => Outcome::Draw,
            Outcome::Loss => Outcome::Win,
        }
    }
}
