//! `stoa learn <kind>`: the lesson of a game, step by step, in the terminal: each step's
//! goal and board, a move read per line, a hint after a wrong try, the next step after a
//! right one. The steps are the lesson file the web page reads (`protocol/lessons/`,
//! embedded in the protocol crate), and every try is played by the same rules engines the
//! server runs ([`stoa_protocol::lessons::Step::attempt`]): this command needs no server.
//!
//! After a step is done, `play` plays on from there against the computer (the search of
//! `stoa bot`, run here). Progress is kept per terminal user, in `learn.json` of the config
//! directory: the ids of the steps done, by kind.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use stoa_protocol::akron::Akron;
use stoa_protocol::akunur::Akunur;
use stoa_protocol::lessons::{self, Lesson, Step};
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::AnyGame;

use crate::board::{self, Sides};
use crate::bot::knowledge::Knowledge;
use crate::bot::search::{self, Rng};
use crate::document::cells_in_move;
use crate::identity::config_dir;

/// Arguments of `stoa learn`.
#[derive(Clone, Debug, Args)]
pub struct LearnArgs {
    /// The game to learn: unane, staku, akron or akunur.
    kind: String,
    /// Start at this step (from 1) instead of the first one not done yet.
    #[arg(long)]
    step: Option<usize>,
    /// Forget this game's progress and start from the first step.
    #[arg(long)]
    again: bool,
    /// The computer's strength when playing on from a step (1-5).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=5))]
    level: u8,
}

/// What the learner typed at a step.
enum Said {
    /// Leave the lesson (or the input ended).
    Quit,
    /// Go on to the next step.
    Next,
}

impl LearnArgs {
    /// Runs the lesson on standard input and output.
    pub fn run(&self) -> ExitCode {
        let Some(lesson) = lessons::lesson(&self.kind) else {
            eprintln!(
                "error: no lesson for '{}' (one of: {})",
                self.kind,
                lessons::kinds().collect::<Vec<_>>().join(", ")
            );
            return ExitCode::from(2);
        };
        let mut progress = Progress::load();
        if self.again && progress.done.remove(&self.kind).is_some() {
            progress.save();
        }
        let n = lesson.steps.len();
        let first = match self.step {
            Some(s) if (1..=n).contains(&s) => s - 1,
            Some(s) => {
                eprintln!("error: the lesson has steps 1 to {n}, not {s}");
                return ExitCode::from(2);
            }
            None => match lesson
                .steps
                .iter()
                .position(|s| !progress.has(&self.kind, &s.id))
            {
                Some(s) => s,
                None => {
                    println!(
                        "Lesson complete: {n} of {n} steps done \
                         (--again starts over, --step N shows one step)."
                    );
                    return ExitCode::SUCCESS;
                }
            },
        };
        println!("== {} ==\n{}", lesson.title, lesson.intro);
        let mut input = std::io::stdin().lock().lines();
        for at in first..n {
            match self.step_through(&lesson, at, &mut progress, &mut input) {
                Said::Next => {}
                Said::Quit => return ExitCode::SUCCESS,
            }
        }
        let done = lesson
            .steps
            .iter()
            .filter(|s| progress.has(&self.kind, &s.id))
            .count();
        println!("Lesson complete: {done} of {n} steps done.");
        ExitCode::SUCCESS
    }

    /// One step: its text, goal and board, then tries until it is done (or skipped).
    fn step_through(
        &self,
        lesson: &Lesson,
        at: usize,
        progress: &mut Progress,
        input: &mut impl Iterator<Item = std::io::Result<String>>,
    ) -> Said {
        let step = &lesson.steps[at];
        let kind = lesson.kind.as_str();
        let game = match step.game(kind) {
            Ok(g) => g,
            Err(e) => {
                println!("This step cannot be shown: {e}");
                return Said::Next;
            }
        };
        let side = game.to_act().map(|s| game.side_name(s)).unwrap_or("?");
        println!(
            "\n== Step {} of {}: {} ==\n{}",
            at + 1,
            lesson.steps.len(),
            step.title,
            step.text
        );
        show(game.as_ref(), &[]);
        println!("Goal: {}", step.goal);
        println!("You play {side}. Type a move, or: hint, legal, skip, quit.");
        let mut tries = 0;
        loop {
            let Some(line) = prompt(input) else {
                return Said::Quit;
            };
            match line.as_str() {
                "" => continue,
                "quit" | "q" => return Said::Quit,
                "skip" => return Said::Next,
                "hint" => println!("hint: {}", hint(step, tries)),
                "legal" => println!("legal: {}", game.legal_notations().join(" ")),
                mv => match step.attempt(kind, mv) {
                    Err(e) => println!("not played: {}", e.error),
                    Ok(a) if a.done => {
                        progress.mark(kind, &step.id);
                        show(a.after.as_ref(), &cells_in_move(&a.notation));
                        println!("done: {} — {}", a.notation, step.success);
                        return self.after_step(a.after, input);
                    }
                    Ok(a) => {
                        println!(
                            "{} is legal, but it does not reach the goal. Try again.",
                            a.notation
                        );
                        println!("hint: {}", hint(step, tries));
                        tries += 1;
                    }
                },
            }
        }
    }

    /// After a step: the next one, or playing on from here against the computer.
    fn after_step(
        &self,
        game: Box<dyn AnyGame>,
        input: &mut impl Iterator<Item = std::io::Result<String>>,
    ) -> Said {
        println!("Enter: next step · play: play on from here against the computer · quit");
        loop {
            let Some(line) = prompt(input) else {
                return Said::Quit;
            };
            match line.as_str() {
                "" | "next" | "n" => return Said::Next,
                "quit" | "q" => return Said::Quit,
                "play" => {
                    if let Some(said) = self.play_on(game.clone_box(), input) {
                        return said;
                    }
                    println!("Enter: next step · quit");
                }
                other => println!("'{other}'? Enter for the next step, play, or quit."),
            }
        }
    }

    /// Plays on against the computer: the learner keeps the side that just moved. `None`
    /// when the game ended or the learner typed `stop` (back to the lesson).
    fn play_on(
        &self,
        mut game: Box<dyn AnyGame>,
        input: &mut impl Iterator<Item = std::io::Result<String>>,
    ) -> Option<Said> {
        let Some(computer) = game.to_act() else {
            println!("The game is over here: nothing to play on.");
            return None;
        };
        println!(
            "You play {} against the computer (level {}). Type moves; stop to go back.",
            game.side_name(computer.other()),
            self.level
        );
        let mut rng = Rng::new(1);
        let mut last = Vec::new();
        loop {
            if let Some(o) = game.outcome() {
                show(game.as_ref(), &last);
                match o.winner {
                    Some(w) => println!(
                        "The game is over: {} wins by {}.",
                        game.side_name(w),
                        o.reason.as_str()
                    ),
                    None => println!("The game is over: a draw by {}.", o.reason.as_str()),
                }
                return None;
            }
            if game.to_act() == Some(computer) {
                let mv = think(game.as_ref(), self.level, &mut rng)?;
                println!("computer plays {mv}");
                last = cells_in_move(&mv);
                if game.play(&mv).is_err() {
                    return None;
                }
                continue;
            }
            show(game.as_ref(), &last);
            let line = prompt(input)?;
            match line.as_str() {
                "" => {}
                "stop" => return None,
                "quit" | "q" => return Some(Said::Quit),
                "legal" => println!("legal: {}", game.legal_notations().join(" ")),
                mv => match game.play(mv) {
                    Ok(p) => last = cells_in_move(&p.notation),
                    Err(e) => println!("not played: {e}"),
                },
            }
        }
    }
}

/// Reads one trimmed line after a prompt; `None` at the end of input.
fn prompt(input: &mut impl Iterator<Item = std::io::Result<String>>) -> Option<String> {
    print!("> ");
    let _ = std::io::stdout().flush();
    let line = input.next()?.ok()?;
    Some(line.trim().to_string())
}

/// The hint for the `tries`-th wrong try (the last one repeats).
fn hint(step: &Step, tries: usize) -> &str {
    step.hints
        .get(tries.min(step.hints.len().saturating_sub(1)))
        .map_or("", String::as_str)
}

/// Prints the board of `game` (the same drawing as a game in plain mode).
fn show(game: &dyn AnyGame, last: &[String]) {
    let state = board::drawable_on(game.geometry(), &game.view());
    let sides = Sides(game.side_names().iter().map(|s| s.to_string()).collect());
    for line in board::plain_lines(&board::draw(game.kind(), &state, &sides, last)) {
        println!("{line}");
    }
    if let Some(side) = game.to_act() {
        println!("{} to act.", game.side_name(side));
    }
}

/// The computer's move for the side to act (a second at most).
fn think(game: &dyn AnyGame, level: u8, rng: &mut Rng) -> Option<String> {
    fn run<G: Knowledge>(game: &dyn AnyGame, level: u8, rng: &mut Rng) -> Option<String> {
        let options: G::Options = serde_json::from_value(game.options_json()).ok()?;
        let state = G::from_position(&options, &game.position()).ok()?;
        search::choose(&state, level, Duration::from_secs(1), rng).map(|a| state.format_action(a))
    }
    match game.kind() {
        "unane" => run::<Unane>(game, level, rng),
        "staku" => run::<Staku>(game, level, rng),
        "akron" => run::<Akron>(game, level, rng),
        "akunur" => run::<Akunur>(game, level, rng),
        _ => None,
    }
}

/// The steps done, by kind, kept in `learn.json` of the config directory.
struct Progress {
    done: BTreeMap<String, Vec<String>>,
    path: Option<PathBuf>,
}

impl Progress {
    fn load() -> Progress {
        let path = config_dir().map(|d| d.join("learn.json"));
        let done = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| serde_json::from_value(v["done"].clone()).ok())
            .unwrap_or_default();
        Progress { done, path }
    }

    fn has(&self, kind: &str, id: &str) -> bool {
        self.done
            .get(kind)
            .is_some_and(|ids| ids.iter().any(|i| i == id))
    }

    /// Marks a step done and writes the file.
    fn mark(&mut self, kind: &str, id: &str) {
        if self.has(kind, id) {
            return;
        }
        self.done
            .entry(kind.to_string())
            .or_default()
            .push(id.to_string());
        self.save();
    }

    /// Writes the file (a failure to write only loses the progress).
    fn save(&self) {
        if let Some(p) = &self.path {
            if let Some(dir) = p.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let text = serde_json::json!({ "done": self.done }).to_string();
            let _ = std::fs::write(p, text);
        }
    }
}
