//! The side column: players, moves (or an arena's games) and messages.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use serde_json::Value;

use super::super::View;
use super::game::game_players;
use super::wrap;
use crate::document::GameDoc;
use crate::present;
use crate::session::{Note, Session};

/// Draws the side column: the players, the moves (between arena games, the arena's
/// games), the messages.
pub(super) fn draw_side(f: &mut Frame, area: Rect, session: &Session, view: &View) {
    // Between arena games the last game's document is kept, but it is not what is shown.
    let game = session.doc().filter(|_| !session.phase().is_arena());
    let arena = session.arena().filter(|_| session.phase().is_arena());
    let mut lines = Vec::new();
    if let Some(g) = game {
        lines = game_players(g, session, area.width.saturating_sub(2) as usize);
    }
    // The panel grows when a player's label takes two rows, so nothing of it is cut.
    let players_height = (lines.len() as u16 + 2).max(8);
    let [players, moves, log] = Layout::vertical([
        Constraint::Length(players_height),
        Constraint::Min(3),
        Constraint::Length(8),
    ])
    .areas(area);
    if game.is_none() {
        lines.push(Line::raw(format!("you: {}", session.me.name)));
        // Between arena games: the arena's players, best first (the standings pane has
        // the details).
        if let Some(doc) = arena {
            let inner = players.width.saturating_sub(2) as usize;
            lines.extend(
                present::arena_players_lines(doc, &session.me.id)
                    .into_iter()
                    .map(|l| Line::raw(l.chars().take(inner).collect::<String>())),
            );
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Players ")),
        players,
    );
    match (arena, game) {
        (Some(doc), _) => draw_arena_games(f, moves, doc),
        (None, game) => draw_moves(f, moves, game),
    }
    draw_messages(f, log, view);
}

/// Between arena games there are no moves to show: the arena's games instead, newest
/// first (the newest stay on screen).
fn draw_arena_games(f: &mut Frame, area: Rect, doc: &Value) {
    let inner = area.width.saturating_sub(2) as usize;
    let visible = area.height.saturating_sub(2) as usize;
    let mut rows: Vec<Line> = present::arena_results_lines(doc)
        .into_iter()
        .take(visible)
        .map(|l| Line::raw(l.chars().take(inner).collect::<String>()))
        .collect();
    if rows.is_empty() {
        rows.push(Line::styled(
            "no game yet",
            Style::default().fg(Color::DarkGray),
        ));
    }
    f.render_widget(
        Paragraph::new(rows).block(Block::bordered().title(" Arena games ")),
        area,
    );
}

/// The game's moves, two a row, the last ones on screen (empty without a game).
fn draw_moves(f: &mut Frame, area: Rect, game: Option<GameDoc>) {
    let mut move_lines: Vec<Line> = Vec::new();
    if let Some(g) = game {
        let numbered = present::numbered_moves(g);
        for pair in numbered.chunks(2) {
            move_lines.push(Line::raw(
                pair.iter()
                    .map(|m| format!("{m:<17}"))
                    .collect::<String>()
                    .trim_end()
                    .to_string(),
            ));
        }
    }
    let visible = area.height.saturating_sub(2) as usize;
    let skip = move_lines.len().saturating_sub(visible);
    f.render_widget(
        Paragraph::new(move_lines.split_off(skip)).block(Block::bordered().title(" Moves ")),
        area,
    );
}

/// The messages pane. The newest message is always on screen: notes are wrapped here, to
/// the pane's width, and the last rows shown (a paragraph wrapping by itself would push
/// them out below).
fn draw_messages(f: &mut Frame, area: Rect, view: &View) {
    let visible = area.height.saturating_sub(2) as usize;
    let width = area.width.saturating_sub(2).max(1) as usize;
    let mut rows: Vec<Line> = Vec::new();
    for n in view
        .log
        .iter()
        // Moves have their own panel and the turn is on the status line.
        .filter(|n| !n.text().starts_with("move ") && n.text() != "your turn")
    {
        let style = match n {
            Note::Error(_) => Style::default().fg(Color::LightRed),
            Note::Info(_) | Note::Page { .. } | Note::End { .. } => Style::default(),
        };
        for row in wrap(n.text(), width) {
            rows.push(Line::styled(row, style));
        }
    }
    let skip = rows.len().saturating_sub(visible);
    f.render_widget(
        Paragraph::new(rows.split_off(skip)).block(Block::bordered().title(" Messages ")),
        area,
    );
}
