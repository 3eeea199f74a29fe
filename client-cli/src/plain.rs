//! Plain mode: line-oriented, for scripts, tests and screen readers. Reads moves and commands
//! from stdin, prints the board as text after each change of the position, and one stable
//! line per event:
//!
//! ```text
//! connected as <name> (<id>)
//! room <code>                         (host)
//! share this line with your opponent: stoa [--server <addr>] join <code>
//! or this link: http(s)://<host>/r/<code>   (the same invitation for a browser)
//! game started <id> side <side>
//! move <n> <notation>
//! your turn
//! error <code>: <message>
//! draw offered by <side>               (once, ours too)
//! connection lost — reconnecting… (<why>) | reconnected
//! spectators <n> | <side> online | <side> offline
//! game over: <side> wins by <reason> | draw by <reason> | aborted
//! game <id> goes on without you and your clock runs; resume with: stoa watch <id>
//! arena <id> <name>: <kind> · <clock> · casual|rated · … (stoa arena, once)
//! arena starts in <t> | arena running, ends in <t> | arena finished: …   (on each change)
//! standings:                          (then the table, each time it changes)
//! winner: <name> with <n> points | 2nd: … | 3rd: …   (once, when the arena is finished)
//! ```
//!
//! Why stdin EOF does not quit a game: a script may pipe its moves and close stdin; the client
//! then plays on until the game ends. A watcher exits when the game ends; an arena's client
//! without input exits once the arena is over.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::board;
use crate::connection::ConnEvent;
use crate::present;
use crate::session::{Answer, Note, Session};

/// Reads stdin on a plain thread (a blocking read must not hold up the runtime), one line
/// per message; `None` marks EOF.
fn stdin_lines() -> mpsc::UnboundedReceiver<Option<String>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            match line {
                Ok(l) => {
                    if tx.send(Some(l)).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    rx
}

/// What plain mode last printed about things that are not the position.
#[derive(Default)]
struct Printed {
    /// The game whose legend was printed (once per game).
    legend_for: Option<String>,
    spectators: Option<u64>,
    online: Vec<(String, bool)>,
    /// The arena whose heading was printed.
    arena_heading: Option<String>,
    /// The arena's stage last said (`scheduled`, `running` …).
    arena_stage: Option<&'static str>,
    /// The standings last printed.
    standings: Vec<String>,
    /// The arena whose podium was printed (once, when it is finished).
    podium: Option<String>,
}

/// Runs plain mode until the session ends.
pub async fn run(
    mut session: Session,
    mut events: mpsc::UnboundedReceiver<ConnEvent>,
    mut answers: mpsc::UnboundedReceiver<Answer>,
) -> ExitCode {
    let mut input = stdin_lines();
    let mut stdin_open = true;
    let mut printed = Printed::default();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    session.begin();
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Some(ev) => session.on_event(ev),
                None => {
                    println!("error connection: the connection task ended");
                    return ExitCode::FAILURE;
                }
            },
            Some(answer) = answers.recv() => session.on_answer(answer),
            line = input.recv(), if stdin_open => match line {
                Some(Some(l)) => session.on_input(&l),
                _ => stdin_open = false,
            },
            _ = tick.tick() => session.on_tick(),
        }
        flush(&mut session, &mut printed);
        let done_with_game =
            session.game_over() && (session.spectating() || !stdin_open) && !session.in_arena();
        let done_with_lobby = session.phase().is_lobby() && !stdin_open;
        // Without input nobody can play: an arena's client stays to its end.
        let done_with_arena =
            session.in_arena() && !stdin_open && session.arena_over() && !session.in_running_game();
        if session.quitting() || done_with_game || done_with_lobby || done_with_arena {
            if session.quitting() {
                if let Some(note) = session.leaving_note() {
                    println!("{note}");
                }
            }
            let _ = std::io::stdout().flush();
            return if session.failed() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    }
}

/// Prints what changed: the board (when the position changed), then the notes.
fn flush(session: &mut Session, printed: &mut Printed) {
    let mut out = String::new();
    let notes = session.take_notes();
    // Notes about the start come before the board; notes about the new position after it.
    // Everything said before the last note about a start stays before it too, so the lines
    // keep the order things happened in (a rematch's request, then its `game started`).
    let starts = |n: &Note| {
        let t = n.text();
        t.starts_with("joined room")
            || t.starts_with("game started")
            || t.starts_with("moves so far")
            || t.starts_with("watching")
    };
    let split = notes.iter().rposition(starts).map_or(0, |i| i + 1);
    let (before, after) = notes.split_at(split);
    for n in before {
        out.push_str(n.text());
        out.push('\n');
    }
    if std::mem::take(&mut session.redraw.board) {
        board_lines(session, printed, &mut out);
    }
    if std::mem::take(&mut session.redraw.doc) {
        crowd_lines(session, printed, &mut out);
    }
    if std::mem::take(&mut session.redraw.lobby) {
        lobby_lines(session, &mut out);
    }
    for n in after {
        out.push_str(n.text());
        out.push('\n');
        if n.text().starts_with("game over") && !session.spectating() && !session.in_arena() {
            out.push_str("type rematch, or quit\n");
        }
    }
    if session.redraw.arena {
        session.redraw.arena = false;
        arena_lines(session, printed, &mut out);
    }
    if !out.is_empty() {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

/// The game's board with its heading, players, legend (once a game), last move and
/// status.
fn board_lines(session: &Session, printed: &mut Printed, out: &mut String) {
    let Some(g) = session.doc() else { return };
    let me = session.my_side();
    let now = session.server_now();
    out.push_str(&format!("== {} ==\n", present::heading(g)));
    let d = present::drawing(g);
    for line in board::plain_lines(&d) {
        out.push_str(&line);
        out.push('\n');
    }
    for side in g.sides() {
        out.push_str(&present::player_line(g, &side, me.as_deref(), now));
        out.push('\n');
    }
    if printed.legend_for.as_deref() != Some(g.id()) {
        printed.legend_for = Some(g.id().to_string());
        for l in d.legend.lines() {
            out.push_str(&format!("legend: {l}\n"));
        }
    }
    if let Some(last) = g.moves().last() {
        out.push_str(&format!("last move: {last}\n"));
    }
    out.push_str(&format!(
        "status: {}\n",
        present::status_sentence(g, me.as_deref())
    ));
    printed.spectators = Some(g.spectators());
    printed.online = g
        .sides()
        .into_iter()
        .map(|s| {
            let on = g.online(&s).unwrap_or(true);
            (s, on)
        })
        .collect();
}

/// What changed in the game's crowd since it was last printed: spectators, players
/// online or offline.
fn crowd_lines(session: &Session, printed: &mut Printed, out: &mut String) {
    let Some(g) = session.doc() else { return };
    if printed.spectators != Some(g.spectators()) {
        printed.spectators = Some(g.spectators());
        out.push_str(&format!("spectators {}\n", g.spectators()));
    }
    for side in g.sides() {
        let on = g.online(&side).unwrap_or(true);
        match printed.online.iter_mut().find(|(s, _)| *s == side) {
            Some(entry) if entry.1 != on => {
                entry.1 = on;
                out.push_str(&format!(
                    "{side} {}\n",
                    if on { "online" } else { "offline" }
                ));
            }
            Some(_) => {}
            None => printed.online.push((side, on)),
        }
    }
}

/// The lobby: its summary, its entries, and what to type.
fn lobby_lines(session: &Session, out: &mut String) {
    let Some(l) = session.lobby() else { return };
    out.push_str(&format!("{}\n", present::lobby_summary(&l.doc)));
    let entries = present::lobby_entries(&l.doc, session.server_now());
    if entries.is_empty() {
        out.push_str("no public rooms, games or arenas\n");
    }
    for e in entries {
        out.push_str(&format!("  {}\n", e.text));
    }
    out.push_str("type: watch <game-id> | join <room-code> | arena <arena-id>\n");
}

/// What changed in the arena: its heading (once), its stage with the countdown, the
/// standings (whenever the table changes).
fn arena_lines(session: &Session, printed: &mut Printed, out: &mut String) {
    let Some(doc) = session.arena() else { return };
    let id = doc["id"].as_str().unwrap_or_default();
    if printed.arena_heading.as_deref() != Some(id) {
        printed.arena_heading = Some(id.to_string());
        out.push_str(&format!(
            "arena {id} {}: {}\n",
            doc["name"].as_str().unwrap_or_default(),
            present::arena_heading(doc)
        ));
    }
    let stage = present::arena_stage(doc);
    if printed.arena_stage != Some(stage) {
        printed.arena_stage = Some(stage);
        out.push_str(&format!(
            "arena {}\n",
            present::arena_countdown(doc, session.server_now())
        ));
    }
    let standings = present::standings_lines(doc, &session.me.id);
    if standings != printed.standings {
        out.push_str("standings:\n");
        for l in &standings {
            out.push_str(&format!("  {l}\n"));
        }
        printed.standings = standings;
    }
    let podium = present::podium_lines(doc);
    if !podium.is_empty() && printed.podium.as_deref() != Some(id) {
        printed.podium = Some(id.to_string());
        for l in podium {
            out.push_str(&format!("{l}\n"));
        }
    }
}
