//! The lobby pane: rooms, games and arenas to pick.

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::super::View;
use crate::present;
use crate::session::Session;

pub(super) fn draw_lobby(f: &mut Frame, area: Rect, session: &Session, view: &View) {
    let mut lines = Vec::new();
    match session.lobby() {
        None => lines.push(Line::raw("loading the lobby…")),
        Some(l) => {
            lines.push(Line::raw(present::lobby_summary(&l.doc)));
            lines.push(Line::raw(""));
            let entries = present::lobby_entries(&l.doc, session.server_now());
            if entries.is_empty() {
                lines.push(Line::styled(
                    "no public rooms, games or arenas right now",
                    Style::default().fg(Color::DarkGray),
                ));
            }
            let selected = view.lobby_selected.min(entries.len().saturating_sub(1));
            for (i, e) in entries.iter().enumerate() {
                let style = if i == selected {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                lines.push(Line::styled(format!(" {} ", e.text), style));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "↑/↓ select, Enter watches a game, joins a room or opens an arena",
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Lobby ")),
        area,
    );
}
