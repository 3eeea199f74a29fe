//! `stoa replay <game-id|FILE>`: step through a finished game on the terminal board —
//! next, previous, first, last, or a jump to a move. The record comes from the server (a
//! game id) or from a file written by `stoa export`; the positions are computed here with
//! the rules engines, so a file replays offline and every move is checked.
//!
//! Plain mode (automatic when stdout is not a terminal) reads `next`, `prev`, `first`,
//! `last`, a move number or `quit` from stdin and prints `ply <n>/<total>: <move>` and the
//! board after each; the terminal UI takes the arrow keys, Home/End, digits + Enter and `q`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use serde_json::Value;
use stoa_protocol::record::Record;

use super::export::fetch_record;
use super::{block_on, Global};
use crate::board::{self, Drawing, Sides};
use crate::document::cells_in_move;

/// Arguments of `stoa replay`.
#[derive(Clone, Debug, Args)]
pub struct ReplayArgs {
    /// A finished game's id, or a record file (`stoa export` writes one).
    source: String,
    /// The room code of a private game you did not play.
    #[arg(long)]
    code: Option<String>,
}

/// A replayed game: every position from the start to the end.
struct Replay {
    title: String,
    moves: Vec<String>,
    /// `frames[i]`: the board after `i` moves.
    frames: Vec<Drawing>,
    /// How the record says the game ended.
    result: String,
}

impl ReplayArgs {
    /// Loads the record, replays it with the engine, then lets the user step through it.
    pub fn run(&self, global: &Global) -> ExitCode {
        let text = if std::path::Path::new(&self.source).is_file() {
            match std::fs::read_to_string(&self.source) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", self.source);
                    return ExitCode::from(2);
                }
            }
        } else if !self.source.chars().all(|c| c.is_ascii_alphanumeric()) {
            // Game ids are letters and digits: anything else was meant as a file.
            eprintln!("error: no such file: {}", self.source);
            return ExitCode::from(2);
        } else {
            match block_on(fetch_record(
                global,
                &self.source,
                self.code.as_deref(),
                "replay",
            )) {
                Ok(t) => t,
                Err(code) => return code,
            }
        };
        let replay = match replay(&text) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        if global.plain || !std::io::stdout().is_terminal() {
            plain(&replay)
        } else {
            tui(&replay)
        }
    }
}

/// Replays a record's moves with the rules engine; an unknown game, bad options or an
/// illegal move is an error naming the move.
fn replay(text: &str) -> Result<Replay, String> {
    let record = Record::parse(text).map_err(|e| e.to_string())?;
    let kind_id = record.kind().map_err(|e| e.to_string())?;
    let kind = stoa_protocol::kind(kind_id).map_err(|e| e.to_string())?;
    let options: Value = match record.tag("Options") {
        Some(o) => serde_json::from_str(o).map_err(|e| format!("the Options tag: {e}"))?,
        None => Value::Null,
    };
    let options = kind.validate_options(&options).map_err(|e| e.to_string())?;
    // A game from a position has a `Start` tag: its moves are played from there.
    let mut game = match record.tag("Start") {
        Some(start) => kind.from_position(&options, start),
        None => kind.start(&options),
    }
    .map_err(|e| e.to_string())?;
    let sides = Sides(kind.side_names.iter().map(|s| s.to_string()).collect());
    let frame = |game: &dyn stoa_protocol::AnyGame, last: Option<&String>| {
        let state = board::drawable(kind_id, &options, &game.view());
        let cells = last.map(|m| cells_in_move(m)).unwrap_or_default();
        board::draw(kind_id, &state, &sides, &cells)
    };
    let mut frames = vec![frame(game.as_ref(), None)];
    let mut moves = Vec::new();
    for (i, mv) in record.moves.iter().enumerate() {
        let played = game
            .play(mv)
            .map_err(|e| format!("move {} ('{mv}'): {e}", i + 1))?;
        moves.push(played.notation);
        frames.push(frame(game.as_ref(), moves.last()));
    }
    let names: Vec<String> = sides
        .0
        .iter()
        .map(|s| format!("{s} {}", record.tag(&capitalized(s)).unwrap_or("?")))
        .collect();
    let result = match (record.tag("Result"), record.tag("Reason")) {
        (Some("draw"), Some(r)) => format!("draw by {r}"),
        (Some("aborted"), _) => "aborted".to_string(),
        (Some(w), Some(r)) => format!("{w} wins by {r}"),
        _ => "result unknown".to_string(),
    };
    Ok(Replay {
        title: format!(
            "{kind_id} {} · {}",
            record.tag("Id").unwrap_or(""),
            names.join(" vs ")
        ),
        moves,
        frames,
        result,
    })
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Where a step command leads from `at` (of `last`), or `None` for an unknown command.
fn step(command: &str, at: usize, last: usize) -> Option<usize> {
    Some(match command.trim().to_ascii_lowercase().as_str() {
        "n" | "next" | "" => (at + 1).min(last),
        "p" | "prev" | "previous" => at.saturating_sub(1),
        "first" | "start" => 0,
        "last" | "end" => last,
        other => other.parse::<usize>().ok()?.min(last),
    })
}

fn describe(r: &Replay, at: usize) -> String {
    match at {
        0 => format!("ply 0/{}: start", r.moves.len()),
        n => format!("ply {n}/{}: {}", r.moves.len(), r.moves[n - 1]),
    }
}

fn plain(r: &Replay) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let show = |out: &mut std::io::StdoutLock, at: usize| {
        let _ = writeln!(out, "{}", describe(r, at));
        for l in board::plain_lines(&r.frames[at]) {
            let _ = writeln!(out, "{l}");
        }
        if at == r.moves.len() {
            let _ = writeln!(out, "end: {}", r.result);
        }
        let _ = out.flush();
    };
    let _ = writeln!(out, "replay {} ({} moves)", r.title, r.moves.len());
    let mut at = 0;
    show(&mut out, at);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if matches!(line.trim(), "q" | "quit" | "exit") {
            break;
        }
        match step(&line, at, r.moves.len()) {
            Some(next) => {
                at = next;
                show(&mut out, at);
            }
            None => {
                let _ = writeln!(
                    out,
                    "error input: '{}': type next, prev, first, last, a move number or quit",
                    line.trim()
                );
            }
        }
    }
    ExitCode::SUCCESS
}

/// The replay in the terminal UI: the board at a move, the move list, keys to step.
fn tui(r: &Replay) -> ExitCode {
    let mut terminal = ratatui::init();
    let mut at = 0;
    let mut typed = String::new();
    let result = loop {
        if let Err(e) = terminal.draw(|f| draw(f, r, at, &typed)) {
            break Err(e.to_string());
        }
        match event::read() {
            Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                if !on_key(k, r.moves.len(), &mut at, &mut typed) {
                    break Ok(());
                }
            }
            Ok(_) => {}
            Err(e) => break Err(e.to_string()),
        }
    };
    ratatui::restore();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A key of the replay: steps to another move (`at`, of `last`), or gathers the digits of
/// a move number (`typed`); `false` when it quits.
fn on_key(k: event::KeyEvent, last: usize, at: &mut usize, typed: &mut String) -> bool {
    match k.code {
        KeyCode::Char('q') | KeyCode::Esc => return false,
        KeyCode::Char('c') if k.modifiers.contains(event::KeyModifiers::CONTROL) => return false,
        KeyCode::Right | KeyCode::Char('n') | KeyCode::Char(' ') => *at = (*at + 1).min(last),
        KeyCode::Left | KeyCode::Char('p') | KeyCode::Backspace if typed.is_empty() => {
            *at = at.saturating_sub(1)
        }
        KeyCode::Backspace => {
            typed.pop();
        }
        KeyCode::Home => *at = 0,
        KeyCode::End => *at = last,
        KeyCode::Char(c) if c.is_ascii_digit() => typed.push(c),
        KeyCode::Enter => {
            if let Some(n) = step(typed, *at, last) {
                *at = n;
            }
            typed.clear();
        }
        _ => {}
    }
    true
}

/// Draws the replay at move `at`: the board, the move list around it, the keys.
fn draw(f: &mut Frame, r: &Replay, at: usize, typed: &str) {
    let [main, help] =
        Layout::vertical([Constraint::Min(5), Constraint::Length(1)]).areas(f.area());
    let [left, right] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(30)]).areas(main);
    let mut lines: Vec<Line> = r.frames[at]
        .board
        .iter()
        .map(crate::tui::ui::board_line)
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::raw(describe(r, at)));
    if at == r.moves.len() {
        lines.push(Line::raw(format!("end: {}", r.result)));
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(format!(" {} ", r.title))),
        left,
    );
    let visible = right.height.saturating_sub(2) as usize;
    let first = at
        .saturating_sub(visible / 2)
        .min(r.moves.len().saturating_sub(visible));
    let list: Vec<Line> = r
        .moves
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .map(|(i, m)| {
            let text = format!("{:>3}. {m}", i + 1);
            if i + 1 == at {
                Line::styled(
                    text,
                    Style::default().fg(Color::Black).bg(Color::LightGreen),
                )
            } else {
                Line::raw(text)
            }
        })
        .collect();
    f.render_widget(
        Paragraph::new(list).block(Block::bordered().title(" Moves ")),
        right,
    );
    let to = if typed.is_empty() {
        String::new()
    } else {
        format!(" (to {typed})")
    };
    f.render_widget(
        Paragraph::new(Line::styled(
            format!("←/→ previous/next · Home/End first/last · digits + Enter jump{to} · q quits"),
            Style::default().fg(Color::DarkGray),
        )),
        help,
    );
}

#[cfg(test)]
mod tests {
    use super::{replay, step};

    #[test]
    fn steps_stay_within_the_game() {
        assert_eq!(step("next", 3, 3), Some(3));
        assert_eq!(step("prev", 0, 3), Some(0));
        assert_eq!(step("last", 0, 7), Some(7));
        assert_eq!(step("2", 5, 7), Some(2));
        assert_eq!(step("99", 5, 7), Some(7));
        assert_eq!(step("sideways", 5, 7), None);
    }

    #[test]
    fn a_record_replays_and_an_illegal_move_is_named() {
        let r = replay("[Game \"unane\"]\n[Options \"{\\\"width\\\":4,\\\"height\\\":3}\"]\n\n1. a3xb3 2. d3xc3\n")
            .unwrap();
        assert_eq!(r.frames.len(), 3);
        assert_eq!(r.moves, ["a3xb3", "d3xc3"]);
        let e = replay("[Game \"unane\"]\n[Options \"{\\\"width\\\":4,\\\"height\\\":3}\"]\n\n1. a3xb3 2. a1xa2\n")
            .err()
            .unwrap();
        assert!(e.starts_with("move 2 ('a1xa2')"), "{e}");
    }
}
