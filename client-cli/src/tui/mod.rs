//! The interactive terminal UI (ratatui + crossterm): the board, both clocks counting down,
//! whose turn, the move list, spectators, a status line and an input line where moves and
//! commands are typed, with completion from the server's legal moves.
//!
//! Why the same commands as plain mode: one grammar (`resign`, `draw accept`, a move …)
//! is easier to learn than key bindings, and the session implements it once.

pub(crate) mod ui;

use std::process::ExitCode;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tokio::sync::mpsc;

use crate::connection::ConnEvent;
use crate::present;
use crate::session::{Answer, Note, Session};

/// UI state that is not the session's: the input line, the note log, the lobby cursor,
/// the window of long output, a question waiting for its answer.
#[derive(Default)]
pub struct View {
    /// The line being typed.
    pub input: String,
    /// Recent notes, newest last.
    pub log: Vec<Note>,
    /// Selected lobby entry.
    pub lobby_selected: usize,
    /// Long output (legal moves, help, a guide) over the screen until closed.
    pub page: Option<Page>,
    /// A question that needs `y` before something that cannot be undone.
    pub confirm: Option<Confirm>,
    /// The newest error: shown in red under the board until the next line is sent, so a
    /// note arriving right after it cannot push it away.
    pub error: Option<String>,
}

/// A scrollable window of text.
pub struct Page {
    /// What it shows.
    pub title: String,
    /// The text, lines separated by `\n` (wrapped to the window when drawn).
    pub text: String,
    /// The first row shown.
    pub scroll: usize,
}

/// What a `y` would do.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Confirm {
    /// Resign the running game.
    Resign,
    /// Leave the client while our game runs on.
    Leave,
}

const LOG_KEEP: usize = 200;

/// Reads terminal events on a plain thread (crossterm's `read` blocks).
fn terminal_events() -> mpsc::UnboundedReceiver<Event> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || loop {
        match event::poll(Duration::from_millis(200)) {
            Ok(true) => match event::read() {
                Ok(ev) => {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {
                if tx.is_closed() {
                    return;
                }
            }
            Err(_) => return,
        }
    });
    rx
}

/// Runs the terminal UI until the user quits.
pub async fn run(
    mut session: Session,
    mut events: mpsc::UnboundedReceiver<ConnEvent>,
    mut answers: mpsc::UnboundedReceiver<Answer>,
) -> ExitCode {
    let mut terminal = ratatui::init();
    let mut keys = terminal_events();
    let mut view = View::default();
    // Redraw often enough for tenths of a second on a running clock.
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    session.begin();
    let result = loop {
        for n in session.take_notes() {
            match n {
                Note::Page { title, text } => {
                    view.page = Some(Page {
                        title,
                        text,
                        scroll: 0,
                    })
                }
                Note::Error(t) => {
                    view.error = Some(t.clone());
                    view.log.push(Note::Error(t));
                }
                Note::End { people, .. } => view.log.push(Note::Info(people)),
                info => view.log.push(info),
            }
        }
        if view.log.len() > LOG_KEEP {
            let excess = view.log.len() - LOG_KEEP;
            view.log.drain(..excess);
        }
        session.redraw.board = false;
        session.redraw.doc = false;
        session.redraw.lobby = false;
        session.redraw.arena = false;
        if let Err(e) = terminal.draw(|f| ui::draw(f, &session, &view)) {
            break Err(e.to_string());
        }
        if session.quitting() {
            break Ok(());
        }
        tokio::select! {
            ev = events.recv() => match ev {
                Some(ev) => session.on_event(ev),
                None => break Err("the connection task ended".into()),
            },
            Some(answer) = answers.recv() => session.on_answer(answer),
            key = keys.recv() => match key {
                Some(Event::Key(k)) if k.kind != KeyEventKind::Release => on_key(&mut session, &mut view, k),
                Some(_) => {}
                None => break Err("the terminal closed".into()),
            },
            _ = tick.tick() => session.on_tick(),
        }
    };
    ratatui::restore();
    if let Some(note) = session.leaving_note() {
        println!("{note}");
    }
    let failed = session.failed();
    for n in session
        .take_notes()
        .iter()
        .chain(view.log.iter().rev().take(1))
    {
        if let Note::Error(t) = n {
            eprintln!("{t}");
        }
    }
    match result {
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Ok(()) if failed => ExitCode::FAILURE,
        Ok(()) => ExitCode::SUCCESS,
    }
}

/// A key: answers the question asked, scrolls the page shown, or edits and sends the
/// input line.
fn on_key(session: &mut Session, view: &mut View, k: KeyEvent) {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    let quit_key = ctrl && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('d'));
    if let Some(question) = view.confirm.take() {
        let yes = matches!(k.code, KeyCode::Char('y') | KeyCode::Char('Y'))
            || (quit_key && question == Confirm::Leave);
        on_confirm(session, question, yes);
        return;
    }
    if view.page.is_some() {
        on_page_key(session, view, k);
        return;
    }
    match k.code {
        KeyCode::Char('c') | KeyCode::Char('d') if ctrl => {
            if session.in_running_game() {
                view.confirm = Some(Confirm::Leave);
            } else {
                session.leave();
                session.quit();
            }
        }
        KeyCode::Char('u') if ctrl => view.input.clear(),
        KeyCode::Char(c) if !ctrl => view.input.push(c),
        KeyCode::Backspace => {
            view.input.pop();
        }
        KeyCode::Esc => view.input.clear(),
        KeyCode::Tab => complete(session, view),
        KeyCode::Up if session.phase().is_lobby() => {
            view.lobby_selected = view.lobby_selected.saturating_sub(1);
        }
        KeyCode::Down if session.phase().is_lobby() => {
            view.lobby_selected += 1;
        }
        KeyCode::Enter => on_enter(session, view),
        _ => {}
    }
}

/// The answer to the question asked (resign? leave?).
fn on_confirm(session: &mut Session, question: Confirm, yes: bool) {
    match (question, yes) {
        (Confirm::Resign, true) => session.on_input("resign"),
        (Confirm::Leave, true) => {
            session.leave();
            session.quit();
        }
        (Confirm::Resign, false) => session.note_info("not resigned: the game goes on"),
        (Confirm::Leave, false) => session.note_info("still here: the game goes on"),
    }
}

/// A key while a page is shown: scrolls it, or closes it.
fn on_page_key(session: &mut Session, view: &mut View, k: KeyEvent) {
    let Some(page) = view.page.as_mut() else {
        return;
    };
    match k.code {
        KeyCode::Up => page.scroll = page.scroll.saturating_sub(1),
        KeyCode::Down => page.scroll += 1,
        KeyCode::PageUp => page.scroll = page.scroll.saturating_sub(10),
        KeyCode::PageDown | KeyCode::Char(' ') => page.scroll += 10,
        KeyCode::Home => page.scroll = 0,
        KeyCode::End => page.scroll = usize::MAX,
        KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => view.page = None,
        // Anything else closes the window and does what it does.
        _ => {
            view.page = None;
            on_key(session, view, k);
        }
    }
}

/// Tab: completes the input to the longest common prefix of every candidate.
fn complete(session: &Session, view: &mut View) {
    let options = session.completions(&view.input);
    let Some(first) = options.first() else {
        return;
    };
    let mut common = first.clone();
    for o in &options[1..] {
        while !o
            .to_ascii_lowercase()
            .starts_with(&common.to_ascii_lowercase())
        {
            common.pop();
        }
    }
    if common.len() >= view.input.trim().len() {
        view.input = common;
    }
}

/// Enter: asks before resigning or leaving a game in play; in the lobby an empty line
/// opens the entry selected; anything else goes to the session.
fn on_enter(session: &mut Session, view: &mut View) {
    let line = std::mem::take(&mut view.input);
    view.error = None;
    let word = line.trim().to_ascii_lowercase();
    if word == "resign" && session.in_running_game() {
        view.confirm = Some(Confirm::Resign);
    } else if matches!(word.as_str(), "quit" | "exit" | "/quit" | "/q") && session.in_running_game()
    {
        view.confirm = Some(Confirm::Leave);
    } else if line.trim().is_empty() && session.phase().is_lobby() {
        let entries = session
            .lobby()
            .map(|l| present::lobby_entries(&l.doc, session.server_now()))
            .unwrap_or_default();
        if let Some(e) = entries.get(view.lobby_selected.min(entries.len().saturating_sub(1))) {
            let cmd = match e.what {
                "room" => "join",
                "arena" => "arena",
                _ => "watch",
            };
            session.on_input(&format!("{cmd} {}", e.key));
        }
    } else {
        session.on_input(&line);
    }
}
