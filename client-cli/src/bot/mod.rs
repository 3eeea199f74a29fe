//! `stoa bot`: a computer opponent that connects like any player (same protocol, its own
//! identity, marked as a bot) and waits in quick pairing, hosts public rooms, or joins a room
//! by code — then plays every game it gets with the search in [`search`], within its clock.
//!
//! Why the search runs on a blocking thread: a level-5 search may think for seconds, and the
//! connection must keep answering pings and following the game meanwhile.

pub mod analyse;
pub mod knowledge;
mod play;
mod proof;
pub mod review;
pub mod search;
pub mod tournament;
mod tree;

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value};
use stoa_protocol::akron::Akron;
use stoa_protocol::akunur::Akunur;
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::wire::ClientMessage;

use crate::commands::{block_on, parse_options, resolved, Global};
use play::{Plan, Player};
use search::Rng;

/// Arguments of `stoa bot`.
#[derive(Clone, Debug, Args)]
pub struct BotArgs {
    /// Game kinds it plays, comma-separated (taken in turn, one game each).
    #[arg(long, default_value = "unane,staku,akron,akunur")]
    kinds: String,
    /// Strength, 1 (makes mistakes on purpose) to 5 (thinks as long as its clock allows).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=5))]
    level: u8,
    /// Time control it asks for when queueing or hosting (see `stoa play --help`).
    #[arg(long, default_value = "5+3")]
    clock: String,
    /// Game options when queueing or hosting (key=value pairs or JSON).
    #[arg(long)]
    options: Option<String>,
    /// Host public rooms (listed in the lobby) instead of queueing.
    #[arg(long, conflicts_with = "join")]
    host: bool,
    /// Join the room with this code (one game).
    #[arg(long)]
    join: Option<String>,
    /// Serve people who ask to play the computer (`stoa play <kind> --computer <level>`, the
    /// web page's "Play the computer"): wait for invitations, one game at a time.
    #[arg(long, conflicts_with_all = ["host", "join"])]
    serve: bool,
    /// With `--serve`: the levels offered, comma-separated (each game is played at the
    /// level the person asked for); default: `--level` only.
    #[arg(long, requires = "serve")]
    levels: Option<String>,
    /// Stop after this many games (0: play on until stopped).
    #[arg(long, default_value_t = 0)]
    games: u32,
    /// Seed of the search's random choices (reproducible games).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The action a level-`level` search picks for the side to act, in canonical notation,
/// after `moves` from the start of a `kind` game with `options`: `from` is the position the
/// game started from (`None`: the kind's start) and the moves played since.
pub fn think(
    kind: &str,
    options: &Value,
    from: (Option<&str>, &[String]),
    level: u8,
    budget: Duration,
    rng: &mut Rng,
) -> Result<Option<String>, String> {
    fn run<G: knowledge::Knowledge>(
        options: &Value,
        (start, moves): (Option<&str>, &[String]),
        level: u8,
        budget: Duration,
        rng: &mut Rng,
    ) -> Result<Option<String>, String> {
        let options: G::Options =
            serde_json::from_value(options.clone()).map_err(|e| e.to_string())?;
        // A game from a position (its document's `start`) is played on from there, never
        // from the kind's start.
        let mut game = match start {
            Some(position) => {
                G::from_position(&options, position).map_err(|e| format!("start: {e}"))?
            }
            None => G::start(&options),
        };
        for m in moves {
            let a = game.parse_action(m).map_err(|e| format!("{m}: {e}"))?;
            game.apply(a);
        }
        Ok(search::choose(&game, level, budget, rng).map(|a| game.format_action(a)))
    }
    match kind {
        "unane" => run::<Unane>(options, from, level, budget, rng),
        "staku" => run::<Staku>(options, from, level, budget, rng),
        "akron" => run::<Akron>(options, from, level, budget, rng),
        "akunur" => run::<Akunur>(options, from, level, budget, rng),
        other => Err(format!("no search for game kind '{other}'")),
    }
}

/// How long to think with `remaining_ms` on the clock and `increment_ms` per turn: a
/// slice of what is left plus most of the increment, less a margin for the network; a
/// game without a clock gets a few seconds.
pub fn budget(clock: &Value, remaining_ms: Option<i64>) -> Duration {
    let ms = match (clock["kind"].as_str(), remaining_ms) {
        (Some("none") | None, _) | (_, None) => 2_000,
        (Some("correspondence"), _) => 5_000,
        (_, Some(left)) => {
            let bonus = clock["increment_ms"]
                .as_i64()
                .or_else(|| clock["delay_ms"].as_i64())
                .unwrap_or(0);
            let period = clock["period_ms"].as_i64().unwrap_or(0);
            (left / 30 + bonus * 4 / 5 + period / 3 - 300).clamp(30, 8_000)
        }
    };
    Duration::from_millis(ms as u64)
}

/// How long a bot stays with a finished game for its opponent to ask for a rematch.
const REMATCH_WAIT: Duration = Duration::from_secs(10);

/// The name of a bot playing at `level` (unless `--name` gives one).
fn level_name(level: u8) -> String {
    format!("bot-level-{level}")
}

impl BotArgs {
    /// Runs the bot until its games are played (or forever).
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(self.play(global)).unwrap_or_else(|code| code)
    }

    async fn play(&self, global: &Global) -> Result<ExitCode, ExitCode> {
        let plan = self.plan()?;
        let global = resolved(global)?;
        Player::connect(self, plan, global).await?.run().await
    }

    /// The command line checked: the kinds, options, clock and levels offered.
    fn plan(&self) -> Result<Plan, ExitCode> {
        let usage = |e: String| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        };
        let kinds: Vec<String> = self
            .kinds
            .split(',')
            .map(|k| k.trim().to_ascii_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        if let Some(k) = kinds.iter().find(|k| stoa_protocol::kind(k).is_err()) {
            return Err(usage(format!("unknown game kind '{k}'")));
        }
        let options = match &self.options {
            Some(o) => parse_options(o).map_err(usage)?,
            None => Value::Object(Map::new()),
        };
        let clock = crate::clock_spec::parse(&self.clock).map_err(usage)?;
        let levels: Vec<u8> = match &self.levels {
            None => vec![self.level],
            Some(list) => list
                .split(',')
                .map(|l| l.trim().parse::<u8>())
                .collect::<Result<Vec<u8>, _>>()
                .ok()
                .filter(|v| !v.is_empty() && v.iter().all(|l| (1..=5).contains(l)))
                .ok_or_else(|| usage("--levels takes levels 1-5, comma-separated".into()))?,
        };
        let serve = ClientMessage::BotServe {
            rid: None,
            kinds: kinds.clone(),
            levels,
        };
        Ok(Plan {
            kinds,
            options,
            clock,
            serve,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn budgets_follow_the_clock() {
        let fischer = json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000});
        assert_eq!(
            budget(&fischer, Some(300_000)),
            Duration::from_millis(8_000)
        );
        assert_eq!(budget(&fischer, Some(3_000)), Duration::from_millis(2_200));
        let sudden = json!({"kind":"fischer","initial_ms":60_000,"increment_ms":0});
        assert_eq!(budget(&sudden, Some(600)), Duration::from_millis(30));
        assert_eq!(
            budget(&json!({"kind":"none"}), None),
            Duration::from_millis(2_000)
        );
    }

    #[test]
    fn thinks_for_every_kind_from_a_move_list() {
        let mut rng = Rng::new(3);
        for kind in ["unane", "staku", "akron", "akunur"] {
            let k = stoa_protocol::kind(kind).unwrap();
            let options = k.validate_options(&Value::Null).unwrap();
            let mut game = k.start(&options).unwrap();
            let first = game.legal_notations()[0].clone();
            game.play(&first).unwrap();
            let mv = think(
                kind,
                &options,
                (None, &[first]),
                1,
                Duration::from_millis(20),
                &mut rng,
            )
            .unwrap()
            .expect("a move");
            assert!(game.legal_notations().contains(&mv), "{kind}: {mv}");
        }
        assert!(think(
            "chess",
            &json!({}),
            (None, &[]),
            1,
            Duration::ZERO,
            &mut rng
        )
        .is_err());
    }

    /// A game from a position (every lesson step's, as "play on from here" starts them) is
    /// thought over from that position and the moves since, never from the kind's start.
    #[test]
    fn thinks_from_a_start_position() {
        let mut rng = Rng::new(5);
        for kind in stoa_protocol::lessons::kinds() {
            let k = stoa_protocol::kind(kind).unwrap();
            for step in stoa_protocol::lessons::lesson(kind).unwrap().steps {
                let options = k.validate_options(&step.options).unwrap();
                let mut game = k.from_position(&options, &step.position).unwrap();
                if game.outcome().is_some() {
                    continue;
                }
                let first = game.legal_notations()[0].clone();
                game.play(&first).unwrap();
                if game.outcome().is_some() {
                    continue;
                }
                let from = (Some(step.position.as_str()), std::slice::from_ref(&first));
                let mv = think(kind, &options, from, 1, Duration::from_millis(20), &mut rng)
                    .unwrap()
                    .expect("a move");
                assert!(
                    game.legal_notations().contains(&mv),
                    "{kind} {}: {mv}",
                    step.id
                );
            }
        }
    }
}
