//! Arena scoring, lichess style: win 2, draw 1, loss 0; after two wins in a row a player is
//! "on fire" and wins count double (4) until the next non-win; a berserk win earns one
//! more point; a draw shorter than the arena's minimum number of plies scores nothing and
//! counts as a non-win. Aborted games are not results at all (they never reach a sheet).

/// One game's result from one player's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The player won.
    Win,
    /// A draw.
    Draw,
    /// The player lost.
    Loss,
}

/// What one finished arena game counts for one of its players.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PlayerResult {
    /// Won, drawn or lost.
    pub outcome: Outcome,
    /// The player berserked in this game.
    pub berserk: bool,
    /// Plies (moves) the game lasted.
    pub plies: u32,
    /// The opponent's rating when the game started (for the performance).
    pub opponent_rating: f64,
}

/// A player's score sheet: every game's points (oldest first) and the running totals.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sheet {
    /// Points of each game, oldest first.
    pub points: Vec<u32>,
    /// The sum of `points`.
    pub score: u32,
    /// Wins in a row at the end of the sheet (two or more: on fire).
    pub streak: u32,
    /// Games won.
    pub wins: u32,
    /// Games drawn (early draws included).
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
    /// Sum over the games of the performance term (see [`Sheet::performance`]).
    perf_sum: f64,
}

/// Points of a win while not on fire.
pub const WIN: u32 = 2;
/// Points of a draw (long enough to count).
pub const DRAW: u32 = 1;
/// Wins in a row after which wins count double.
pub const FIRE_AFTER: u32 = 2;
/// The performance term's bonus for a win (and malus for a loss).
pub const PERF_MARGIN: f64 = 500.0;

impl Sheet {
    /// Whether the player is on fire: the next win counts double.
    pub fn fire(&self) -> bool {
        self.streak >= FIRE_AFTER
    }

    /// Games played (and scored).
    pub fn games(&self) -> u32 {
        self.points.len() as u32
    }

    /// The points `result` is worth after the games already on the sheet.
    pub fn points_for(&self, result: &PlayerResult, min_draw_plies: u32) -> u32 {
        match result.outcome {
            Outcome::Win => {
                let base = if self.fire() { 2 * WIN } else { WIN };
                base + u32::from(result.berserk)
            }
            Outcome::Draw if result.plies < min_draw_plies => 0,
            Outcome::Draw => DRAW,
            Outcome::Loss => 0,
        }
    }

    /// Adds a game's result and returns the points it scored.
    pub fn add(&mut self, result: &PlayerResult, min_draw_plies: u32) -> u32 {
        let points = self.points_for(result, min_draw_plies);
        self.points.push(points);
        self.score += points;
        let delta = match result.outcome {
            Outcome::Win => {
                self.streak += 1;
                self.wins += 1;
                PERF_MARGIN
            }
            Outcome::Draw => {
                self.streak = 0;
                self.draws += 1;
                0.0
            }
            Outcome::Loss => {
                self.streak = 0;
                self.losses += 1;
                -PERF_MARGIN
            }
        };
        self.perf_sum += result.opponent_rating + delta;
        points
    }

    /// The performance rating: the mean over the games of the opponent's rating plus 500
    /// for a win, minus 500 for a loss, rounded to the nearest integer; 0 with no games.
    pub fn performance(&self) -> i64 {
        if self.points.is_empty() {
            return 0;
        }
        (self.perf_sum / self.points.len() as f64).round() as i64
    }

    /// The sheet as shown: each game's points, oldest first, separated by spaces.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self.points.iter().map(u32::to_string).collect();
        parts.join(" ")
    }

    /// A sheet from a player's results in order.
    pub fn of(results: &[PlayerResult], min_draw_plies: u32) -> Sheet {
        let mut sheet = Sheet::default();
        for r in results {
            sheet.add(r, min_draw_plies);
        }
        sheet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(outcome: Outcome) -> PlayerResult {
        PlayerResult {
            outcome,
            berserk: false,
            plies: 40,
            opponent_rating: 1500.0,
        }
    }

    fn berserk(outcome: Outcome) -> PlayerResult {
        PlayerResult {
            berserk: true,
            ..r(outcome)
        }
    }

    use Outcome::{Draw, Loss, Win};

    #[test]
    fn plain_results() {
        let s = Sheet::of(&[r(Win), r(Draw), r(Loss), r(Win)], 10);
        assert_eq!(s.points, vec![2, 1, 0, 2]);
        assert_eq!(s.score, 5);
        assert_eq!((s.wins, s.draws, s.losses), (2, 1, 1));
        assert_eq!(s.text(), "2 1 0 2");
        assert!(!s.fire());
    }

    #[test]
    fn streak_doubles_wins_after_two_until_a_non_win() {
        let s = Sheet::of(
            &[
                r(Win),
                r(Win),
                r(Win),
                r(Win),
                r(Draw),
                r(Win),
                r(Win),
                r(Win),
            ],
            0,
        );
        assert_eq!(s.points, vec![2, 2, 4, 4, 1, 2, 2, 4]);
        assert_eq!(s.score, 21);
        assert!(s.fire());
        assert_eq!(s.streak, 3);
        // A loss ends the fire too.
        let s = Sheet::of(&[r(Win), r(Win), r(Loss), r(Win)], 0);
        assert_eq!(s.points, vec![2, 2, 0, 2]);
        assert!(!s.fire());
    }

    #[test]
    fn a_draw_on_fire_scores_one_and_ends_the_streak() {
        let s = Sheet::of(&[r(Win), r(Win), r(Draw), r(Win)], 0);
        assert_eq!(s.points, vec![2, 2, 1, 2]);
    }

    #[test]
    fn berserk_adds_one_to_a_win_only() {
        let s = Sheet::of(
            &[
                berserk(Win),
                berserk(Win),
                berserk(Win),
                berserk(Loss),
                berserk(Draw),
            ],
            0,
        );
        assert_eq!(s.points, vec![3, 3, 5, 0, 1]);
        assert_eq!(s.score, 12);
    }

    #[test]
    fn early_draws_score_nothing_and_end_the_streak() {
        let short = PlayerResult {
            plies: 9,
            ..r(Draw)
        };
        let long_enough = PlayerResult {
            plies: 10,
            ..r(Draw)
        };
        let s = Sheet::of(&[r(Win), r(Win), short, r(Win), long_enough], 10);
        assert_eq!(s.points, vec![2, 2, 0, 2, 1]);
        assert_eq!(s.draws, 2);
        assert!(!s.fire());
    }

    #[test]
    fn performance_is_the_rounded_mean() {
        assert_eq!(Sheet::default().performance(), 0);
        let games = [
            PlayerResult {
                opponent_rating: 1600.0,
                ..r(Win)
            },
            PlayerResult {
                opponent_rating: 1400.0,
                ..r(Loss)
            },
            PlayerResult {
                opponent_rating: 1501.0,
                ..r(Draw)
            },
        ];
        // (2100 + 900 + 1501) / 3 = 1500.33
        assert_eq!(Sheet::of(&games, 0).performance(), 1500);
        let games = [
            PlayerResult {
                opponent_rating: 1500.0,
                ..r(Win)
            },
            PlayerResult {
                opponent_rating: 1501.0,
                ..r(Win)
            },
        ];
        // (2000 + 2001) / 2 = 2000.5, rounded away from zero
        assert_eq!(Sheet::of(&games, 0).performance(), 2001);
    }
}
