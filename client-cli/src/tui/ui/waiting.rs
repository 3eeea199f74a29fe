//! The pane before a game: the waiting room, the queue, or the connection.

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::session::{Phase, Session, Start};

pub(super) fn draw_waiting(f: &mut Frame, area: Rect, session: &Session) {
    let mut lines = Vec::new();
    match (session.phase(), &session.room_code, &session.start) {
        (Phase::Hosting, _, Start::Computer { kind, level, .. }) => {
            lines.push(Line::raw(""));
            lines.push(Line::raw(format!(
                "  Waiting for the computer (level {level}) to sit down for {kind}…"
            )));
        }
        (Phase::Hosting, Some(code), _) => {
            lines.push(Line::raw(""));
            lines.push(Line::from(vec![
                Span::raw("  Room code: "),
                Span::styled(code.clone(), Style::default().add_modifier(Modifier::BOLD)),
            ]));
            lines.push(Line::raw(""));
            lines.push(Line::raw("  Share this line with your opponent:"));
            lines.push(Line::styled(
                format!("    {}", session.share_line(code)),
                Style::default().fg(Color::Green),
            ));
            lines.push(Line::raw(""));
            lines.push(Line::raw("  Waiting for an opponent…"));
        }
        (Phase::Queued { since, status }, _, Start::Queue { kind, clock, .. }) => {
            lines.push(Line::raw(""));
            lines.push(Line::raw(format!(
                "  In the queue for {kind} ({}); waiting for an opponent…",
                crate::clock_spec::label(clock)
            )));
            lines.push(Line::raw(""));
            if let Some(st) = status {
                let same = match st.same_queue {
                    0 => "nobody yet".to_string(),
                    k => k.to_string(),
                };
                lines.push(Line::raw(format!(
                    "  Your place in the queue:      {}",
                    st.position
                )));
                lines.push(Line::raw(format!(
                    "  Others with the same settings: {same}"
                )));
                lines.push(Line::raw(format!(
                    "  Players in other queues:      {}",
                    st.other_queues
                )));
            }
            let secs = since.elapsed().as_secs() as i64;
            lines.push(Line::styled(
                format!(
                    "  Waiting for {}",
                    crate::clock_spec::format_ms(secs * 1000)
                ),
                Style::default().fg(Color::DarkGray),
            ));
        }
        (_, _, Start::Arena { target, .. }) => {
            lines.push(Line::raw(""));
            lines.push(Line::raw(format!("  Opening arena {target}…")));
        }
        (_, _, Start::NewArena { .. }) => {
            lines.push(Line::raw(""));
            lines.push(Line::raw("  Creating the arena…"));
        }
        _ => {
            lines.push(Line::raw(""));
            lines.push(Line::raw("  Waiting for the game…"));
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Stoa ")),
        area,
    );
}
