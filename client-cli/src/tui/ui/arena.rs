//! The arena pane: its settings, countdown and standings.

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::present;
use crate::session::Session;

/// The arena between its games: name, settings, countdown, where we stand, the standings
/// and the games in progress.
pub(super) fn draw_arena(f: &mut Frame, area: Rect, session: &Session) {
    let mut lines = Vec::new();
    let title = match session.arena() {
        None => {
            lines.push(Line::raw("loading the arena…"));
            " Arena ".to_string()
        }
        Some(doc) => {
            let dim = Style::default().fg(Color::DarkGray);
            lines.push(Line::styled(present::arena_heading(doc), dim));
            lines.push(Line::styled(
                present::arena_countdown(doc, session.server_now()),
                Style::default()
                    .fg(Color::LightYellow)
                    .add_modifier(Modifier::BOLD),
            ));
            lines.push(Line::styled(
                present::arena_me_line(doc, &session.me.id),
                Style::default().fg(Color::LightGreen),
            ));
            // A finished arena announces its winner first, then the whole table.
            for (i, l) in present::podium_lines(doc).into_iter().enumerate() {
                let mut style = Style::default().fg(Color::LightYellow);
                if i == 0 {
                    style = style.add_modifier(Modifier::BOLD);
                }
                lines.push(Line::styled(l, style));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "Standings",
                Style::default().add_modifier(Modifier::BOLD),
            ));
            for (i, l) in present::standings_lines(doc, &session.me.id)
                .into_iter()
                .enumerate()
            {
                let style = if l.contains("(you)") {
                    Style::default().add_modifier(Modifier::BOLD)
                } else if i == 0 {
                    dim
                } else {
                    Style::default()
                };
                lines.push(Line::styled(l, style));
            }
            let games = present::arena_games_lines(doc);
            if !games.is_empty() {
                lines.push(Line::raw(""));
                lines.push(Line::styled(
                    "Games in progress",
                    Style::default().add_modifier(Modifier::BOLD),
                ));
                lines.extend(games.into_iter().map(Line::raw));
            }
            format!(" Arena: {} ", doc["name"].as_str().unwrap_or("?"))
        }
    };
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        area,
    );
}
