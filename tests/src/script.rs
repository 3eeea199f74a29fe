//! Deterministic games computed with the rules engines, for tests whose clients know no
//! rules: the moves to type and the end the server must announce.

use serde_json::Value;
use stoa_protocol::kind;

/// A deterministic game: the moves to play and how the server must end it.
pub struct Script {
    /// Canonical moves in order.
    pub moves: Vec<String>,
    /// When the rules did not end the game within the cap: the side to act resigns.
    pub resign_side: Option<String>,
    /// `winner reason` as the client prints it after `game over: `.
    pub outcome: String,
}

/// Plays a game with the engine: a move that wins at once when there is one, otherwise a
/// pseudo-random legal move (fixed seed; seed 0 takes the first legal move in byte order;
/// never `swap`, so seats stay put). Stops at the
/// rules' end, or after `cap` actions with a resignation.
pub fn scripted_game(k: &str, options: &Value, seed: u64, cap: usize) -> Script {
    let gk = kind(k).expect("kind");
    let mut game = gk.start(options).expect("options");
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut moves = Vec::new();
    while game.outcome().is_none() && moves.len() < cap {
        let mover = game.to_act().expect("side to act");
        let legal: Vec<String> = game
            .legal_notations()
            .into_iter()
            .filter(|m| m != "swap")
            .collect();
        assert!(!legal.is_empty(), "no legal move");
        let winning = legal.iter().find(|m| {
            let mut g = game.clone();
            g.play(m).expect("legal");
            g.outcome().is_some_and(|o| o.winner == Some(mover))
        });
        let mv = match winning {
            Some(m) => m.clone(),
            None if seed == 0 => legal[0].clone(),
            None => {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                legal[((rng >> 33) as usize) % legal.len()].clone()
            }
        };
        game.play(&mv).expect("legal move");
        moves.push(mv);
    }
    match game.outcome() {
        Some(o) => {
            let outcome = match o.winner {
                Some(s) => format!("{} wins by {}", gk.side_names[s.index()], o.reason.as_str()),
                None => format!("draw by {}", o.reason.as_str()),
            };
            Script {
                moves,
                resign_side: None,
                outcome,
            }
        }
        None => {
            let side = game.to_act().expect("to act");
            Script {
                moves,
                resign_side: Some(gk.side_names[side.index()].to_string()),
                outcome: format!("{} wins by resign", gk.side_names[side.other().index()]),
            }
        }
    }
}
