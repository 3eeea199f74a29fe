//! `stoa tournament`: bots against each other, offline, with the same search the bot
//! process uses — the benchmark behind docs/bots.md's strength and speed figures (level 5
//! beats level 1, level 1 beats a random mover, playouts per second per game).
//!
//! Why offline: strength is a property of the search, not of the network; a tournament of
//! 40 games per kind would otherwise spend most of its time on sockets.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use stoa_protocol::akron::Akron;
use stoa_protocol::akunur::Akunur;
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::Side;

use super::knowledge::Knowledge;
use super::search::{choose, playout_rate, Rng};

/// Arguments of `stoa tournament`.
#[derive(Clone, Debug, Args)]
pub struct TournamentArgs {
    /// Game kinds, comma-separated.
    #[arg(long, default_value = "unane,staku,akron,akunur")]
    kinds: String,
    /// The first player's level (1-5).
    #[arg(long, default_value_t = 5)]
    a: u8,
    /// The second player's level (1-5), or 0 for a random mover.
    #[arg(long, default_value_t = 1)]
    b: u8,
    /// Games per kind (sides alternate).
    #[arg(long, default_value_t = 40)]
    games: u32,
    /// Thinking time per move of a level-5 player, in milliseconds.
    #[arg(long, default_value_t = 300)]
    ms: u64,
    /// Game options per kind, e.g. `unane=width=6,height=5` (repeatable).
    #[arg(long = "options")]
    options: Vec<String>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print every game's result, reason and length (to see why games end, or do not).
    #[arg(long)]
    verbose: bool,
}

/// The score of one match: wins of A, wins of B, draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    /// Games A won.
    pub a: u32,
    /// Games B won.
    pub b: u32,
    /// Drawn games.
    pub draws: u32,
}

/// Plays `games` games of `G` between level `a` and level `b` (0: random), sides
/// alternating; a game longer than `max_plies` counts as a draw.
pub fn play_match<G: Knowledge>(
    options: &G::Options,
    a: u8,
    b: u8,
    games: u32,
    think: Duration,
    verbose: bool,
    rng: &mut Rng,
) -> Score {
    let mut score = Score::default();
    let max_plies = 600;
    for i in 0..games {
        let mut g = G::start(options);
        // A plays the first side in even games.
        let mut a_side = if i % 2 == 0 {
            Side::First
        } else {
            Side::Second
        };
        let mut plies = 0;
        while g.outcome().is_none() && plies < max_plies {
            let side = g.to_act().expect("a side to act");
            let level = if side == a_side { a } else { b };
            let action = if level == 0 {
                let mut legal = Vec::new();
                g.legal_actions(&mut legal);
                legal[rng.below(legal.len())]
            } else {
                choose(&g, level, think, rng).expect("a move while the game is on")
            };
            let swap = g.is_swap(action);
            g.apply(action);
            if swap {
                // The pie rule: the players exchange colours, so A now plays the other side.
                a_side = a_side.other();
            }
            plies += 1;
        }
        if verbose {
            let result = match g.outcome() {
                Some(o) => match o.winner {
                    Some(w) if w == a_side => format!("A wins ({})", o.reason.as_str()),
                    Some(_) => format!("B wins ({})", o.reason.as_str()),
                    None => format!("draw ({})", o.reason.as_str()),
                },
                None => "cut at the ply cap".to_string(),
            };
            eprintln!("{} game {}: {result} after {plies} plies", G::KIND, i + 1);
        }
        match g.outcome().and_then(|o| o.winner) {
            Some(w) if w == a_side => score.a += 1,
            Some(_) => score.b += 1,
            None => score.draws += 1,
        }
    }
    score
}

impl TournamentArgs {
    /// Runs the matches and prints one line per kind.
    pub fn run(&self) -> ExitCode {
        let mut rng = Rng::new(self.seed);
        let think = Duration::from_millis(self.ms);
        for kind in self
            .kinds
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            let given = self
                .options
                .iter()
                .find_map(|o| o.strip_prefix(&format!("{kind}=")))
                .map(crate::commands::parse_options)
                .transpose();
            let options = match given {
                Ok(o) => o.unwrap_or(Value::Null),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let line = match kind {
                "unane" => run::<Unane>(&options, self, think, &mut rng),
                "staku" => run::<Staku>(&options, self, think, &mut rng),
                "akron" => run::<Akron>(&options, self, think, &mut rng),
                "akunur" => run::<Akunur>(&options, self, think, &mut rng),
                other => Err(format!("unknown game kind '{other}'")),
            };
            match line {
                Ok(l) => println!("{kind}: {l}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        ExitCode::SUCCESS
    }
}

fn run<G: Knowledge>(
    options: &Value,
    args: &TournamentArgs,
    think: Duration,
    rng: &mut Rng,
) -> Result<String, String> {
    let options: G::Options = serde_json::from_value(if options.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        options.clone()
    })
    .map_err(|e| e.to_string())?;
    let options = G::validate_options(options).map_err(|e| e.to_string())?;
    let rate = playout_rate(&G::start(&options), 1.0, rng);
    let s = play_match::<G>(
        &options,
        args.a,
        args.b,
        args.games,
        think,
        args.verbose,
        rng,
    );
    let name = |l: u8| {
        if l == 0 {
            "random".to_string()
        } else {
            format!("level {l}")
        }
    };
    Ok(format!(
        "{} {} – {} {} ({} draws; {:.0}% for {}); {:.0} playouts/s from the start",
        name(args.a),
        s.a,
        s.b,
        name(args.b),
        s.draws,
        100.0 * f64::from(s.a) / f64::from(args.games.max(1)),
        name(args.a),
        rate
    ))
}
