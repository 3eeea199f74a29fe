//! The rows under the board: the status line and the hint (or the question asked, or the
//! last error).

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::{Confirm, View};
use super::wrap;
use crate::present;
use crate::session::{Phase, Session, ARENA_HELP, HELP, LOBBY_HELP, WATCH_HELP};

pub(super) fn draw_status(
    f: &mut Frame,
    area: Rect,
    session: &Session,
    too_small: Option<(u16, u16)>,
    screen: Rect,
) {
    let mut spans = Vec::new();
    if let Some((w, h)) = too_small {
        spans.push(Span::styled(
            format!(
                "terminal too small for the board: needs {w}x{h}, has {}x{}; enlarge it · ",
                screen.width, screen.height
            ),
            Style::default()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ));
    }
    if !session.connected {
        spans.push(Span::styled(
            "reconnecting… ",
            Style::default().fg(Color::Black).bg(Color::Yellow),
        ));
    }
    match session.doc().filter(|_| !session.phase().is_arena()) {
        Some(g) => {
            let me = session.my_side();
            let sentence = present::status_sentence(g, me.as_deref());
            let style = if session.my_turn() {
                Style::default()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD)
            } else if g.status().ended {
                Style::default()
                    .fg(Color::LightMagenta)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            spans.push(Span::styled(sentence, style));
            if let Some(c) = g.state()["no_capture_counter"].as_i64() {
                spans.push(Span::raw(format!(
                    " · no-capture {c}/{}",
                    g.state()["no_capture_limit"].as_i64().unwrap_or(20)
                )));
            }
            let n = g.moves().len();
            spans.push(Span::raw(format!(
                " · {n} move{}",
                if n == 1 { "" } else { "s" }
            )));
            if let Some(t) = present::first_action_text(g, session.server_now()) {
                spans.push(Span::styled(
                    format!(" · {t}"),
                    Style::default().fg(Color::Yellow),
                ));
            }
            if session.spectating() {
                spans.push(Span::styled(
                    " · watching",
                    Style::default().fg(Color::DarkGray),
                ));
            }
        }
        None => spans.push(Span::raw(match session.phase() {
            Phase::Queued { .. } => "in the queue",
            Phase::Hosting => "waiting for an opponent",
            Phase::Lobby { .. } => "lobby",
            Phase::Arena => "arena",
            _ => "connecting",
        })),
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The most rows an error or question under the board takes.
pub(super) const MAX_HINT_ROWS: usize = 4;

/// What must be read under the board, with its style: the question asked, else the last
/// error. `None` when the row shows a hint.
pub(super) fn urgent_hint(session: &Session, view: &View) -> Option<(String, Style)> {
    if let Some(question) = view.confirm {
        let text = match question {
            Confirm::Resign => {
                "Resign this game? Press y to resign, any other key to keep playing.".to_string()
            }
            Confirm::Leave => format!(
                "Leave? The game goes on and your clock runs (come back with: stoa watch {}). \
                 Press y to leave, any other key to stay.",
                session.game_id.as_deref().unwrap_or("<id>")
            ),
        };
        let style = Style::default()
            .fg(Color::Black)
            .bg(Color::LightYellow)
            .add_modifier(Modifier::BOLD);
        return Some((text, style));
    }
    view.error
        .as_ref()
        .map(|t| (t.clone(), Style::default().fg(Color::LightRed)))
}

pub(super) fn draw_hint(f: &mut Frame, area: Rect, session: &Session, view: &View) {
    if let Some((text, style)) = urgent_hint(session, view) {
        let rows: Vec<Line> = wrap(&text, area.width.max(1) as usize)
            .into_iter()
            .map(|r| Line::styled(r, style))
            .collect();
        return f.render_widget(Paragraph::new(rows), area);
    }
    let text = if !view.input.trim().is_empty() {
        let c = session.completions(&view.input);
        if c.is_empty() {
            String::new()
        } else {
            format!(
                "legal: {}",
                c.iter().take(12).cloned().collect::<Vec<_>>().join(" ")
            )
        }
    } else if session.phase().is_queued() {
        "waiting for an opponent with the same settings: Ctrl-C leaves the queue".to_string()
    } else if matches!(session.phase(), Phase::Hosting) {
        "waiting for your opponent to join: Ctrl-C closes the room".to_string()
    } else if session.phase().is_arena() {
        ARENA_HELP.to_string()
    } else if session.game_over() && !session.spectating() {
        "game over: type rematch, or quit".to_string()
    } else if let Some(side) = opponent_offline(session) {
        format!("{side} is offline: once gone past the abandonment timeout you may type claim")
    } else if session.my_turn() {
        "your turn: type a move (Tab completes), or resign / draw offer".to_string()
    } else if session.phase().is_lobby() {
        LOBBY_HELP.to_string()
    } else if moves_none(session) {
        WATCH_HELP.to_string()
    } else {
        HELP.to_string()
    };
    f.render_widget(
        Paragraph::new(Line::styled(text, Style::default().fg(Color::DarkGray))),
        area,
    );
}

/// Whether nothing typed here can be a move: in the lobby, or watching a game.
pub(super) fn moves_none(session: &Session) -> bool {
    session.phase().is_lobby()
        || session.phase().is_arena()
        || (matches!(session.phase(), Phase::Game) && session.spectating())
}

/// The opponent's side when we play and the opponent has no connection.
pub(super) fn opponent_offline(session: &Session) -> Option<String> {
    let g = session.doc()?;
    let me = session.my_side()?;
    if g.status().ended {
        return None;
    }
    g.sides()
        .into_iter()
        .find(|s| *s != me && g.online(s) == Some(false))
}
