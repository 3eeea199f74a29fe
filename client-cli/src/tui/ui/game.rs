//! The game's panes: the board, and the players with their clocks.

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::{board_line, tone_style};
use crate::board::{self, Tone};
use crate::document::GameDoc;
use crate::present;
use crate::session::Session;

/// Draws the board pane; returns the size the pane needs to show all of it.
pub(super) fn draw_board(f: &mut Frame, area: Rect, g: GameDoc) -> (u16, u16) {
    let d = present::drawing(g);
    let mut lines: Vec<Line> = d.board.iter().map(board_line).collect();
    lines.push(Line::raw(""));
    if let Some(last) = g.moves().last() {
        lines.push(Line::from(vec![
            Span::raw("last move: "),
            Span::styled(
                last.to_string(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    for fact in &d.facts {
        lines.push(Line::raw(fact.clone()));
    }
    for l in d.legend.lines() {
        lines.push(Line::styled(
            l.to_string(),
            Style::default().fg(Color::DarkGray),
        ));
    }
    let title = format!(" {} ", present::heading(g));
    let need_w = d
        .board
        .iter()
        .map(|l| l.iter().map(|sp| sp.text.chars().count()).sum::<usize>())
        .max()
        .unwrap_or(0) as u16
        + 2;
    let need_h = d.board.len() as u16 + 2;
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        area,
    );
    (need_w, need_h)
}

pub(super) fn clock_style(g: GameDoc, side: &str, now: i64) -> Style {
    let running = g.clock()["running"].as_str() == Some(side) && !g.status().ended;
    let low = g.remaining_ms(side, now).is_some_and(|ms| ms < 10_000);
    let mut s = Style::default().add_modifier(Modifier::BOLD);
    if running {
        s = s.fg(if low {
            Color::LightRed
        } else {
            Color::LightGreen
        });
    }
    s
}

/// The players panel of a game: per side its label (marker, letter, side, name, then
/// computer, rating, you, offline), its clock, and the spectators. A label wider than the
/// panel goes on in a second row, indented, rather than being cut ("bot-level-2
/// (computer) (1500)" whole).
pub(super) fn game_players(g: GameDoc, session: &Session, width: usize) -> Vec<Line<'static>> {
    let now = session.server_now();
    let me = session.my_side();
    let sides = g.sides();
    let mut lines = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        let tone = if i == 0 { Tone::First } else { Tone::Second };
        let marker = if g.to_act() == Some(side.as_str()) {
            "▶ "
        } else {
            "  "
        };
        let head = vec![
            Span::raw(marker),
            Span::styled(format!("{} ", board::Sides::letter(side)), tone_style(tone)),
            Span::raw(side.clone()),
        ];
        // The label: the name and what is said of the player, kept whole on one row.
        let mut label = vec![Span::raw(g.player_name(side).to_string())];
        let p = g.player(side);
        if p["bot"] == true {
            label.push(Span::styled(
                " (computer)",
                Style::default().fg(Color::Cyan),
            ));
        }
        if let Some(r) = p["rating"].as_f64() {
            label.push(Span::raw(format!(" ({})", r.round())));
        }
        if me.as_deref() == Some(side.as_str()) {
            label.push(Span::styled(" (you)", Style::default().fg(Color::Green)));
        }
        if g.online(side) == Some(false) {
            label.push(Span::styled(" offline", Style::default().fg(Color::Red)));
        }
        let wide =
            |spans: &[Span]| -> usize { spans.iter().map(|s| s.content.chars().count()).sum() };
        if wide(&head) + 1 + wide(&label) <= width {
            let mut row = head;
            row.push(Span::raw(" "));
            row.extend(label);
            lines.push(Line::from(row));
        } else {
            // Too wide for one row: the label goes whole on the next one, indented.
            lines.push(Line::from(head));
            let mut row = vec![Span::raw("    ")];
            row.extend(label);
            lines.push(Line::from(row));
        }
        lines.push(Line::from(vec![
            Span::raw("    "),
            Span::styled(present::clock_text(g, side, now), clock_style(g, side, now)),
        ]));
        if i + 1 < sides.len() {
            lines.push(Line::raw(""));
        }
    }
    lines.push(Line::styled(
        format!("spectators: {}", g.spectators()),
        Style::default().fg(Color::DarkGray),
    ));
    lines
}
