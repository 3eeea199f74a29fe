//! Drawing the terminal UI from the session and the view state: the layout here, each
//! pane in the file named after it.

mod arena;
mod game;
mod lobby;
mod side;
mod status;
mod waiting;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::View;
use crate::board::{self, Tone};
use crate::session::{Phase, Session};
use arena::draw_arena;
use game::draw_board;
use lobby::draw_lobby;
use side::draw_side;
use status::{draw_hint, draw_status, moves_none, urgent_hint, MAX_HINT_ROWS};
use waiting::draw_waiting;

pub(super) fn tone_style(tone: Tone) -> Style {
    let s = Style::default();
    match tone {
        Tone::Plain => s,
        Tone::Dim => s.fg(Color::DarkGray),
        Tone::First => s.fg(Color::LightYellow).add_modifier(Modifier::BOLD),
        Tone::Second => s.fg(Color::LightCyan).add_modifier(Modifier::BOLD),
        Tone::Neutral => s.fg(Color::Gray),
        Tone::Special => s.fg(Color::Magenta),
        Tone::Cut => s.fg(Color::Red),
    }
}

/// A board row as styled text (the replay viewer draws with it too).
pub(crate) fn board_line(line: &board::Line) -> Line<'static> {
    Line::from(
        line.iter()
            .map(|sp| {
                let mut style = tone_style(sp.tone);
                if sp.mark {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                Span::styled(sp.text.clone(), style)
            })
            .collect::<Vec<_>>(),
    )
}

/// Draws everything.
pub fn draw(f: &mut Frame, session: &Session, view: &View) {
    // An error or a question under the board is wrapped to the screen's width, never cut.
    let hint_rows = urgent_hint(session, view)
        .map_or(1, |(text, _)| {
            wrap(&text, f.area().width.max(1) as usize).len()
        })
        .clamp(1, MAX_HINT_ROWS) as u16;
    let [main, status, hint, input] = Layout::vertical([
        Constraint::Min(8),
        Constraint::Length(1),
        Constraint::Length(hint_rows),
        Constraint::Length(3),
    ])
    .areas(f.area());
    let [left, right] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(SIDE_WIDTH)]).areas(main);
    let mut too_small = None;
    match (session.phase(), session.doc()) {
        (Phase::Lobby { .. }, _) => draw_lobby(f, left, session, view),
        (Phase::Arena, _) => draw_arena(f, left, session),
        (_, Some(g)) => {
            let (w, h) = draw_board(f, left, g);
            // What the whole screen needs for this board: its pane plus the side column
            // and the rows under it.
            let need = (w + SIDE_WIDTH, h + f.area().height - main.height);
            if w > left.width || h > left.height {
                too_small = Some(need);
            }
        }
        _ => draw_waiting(f, left, session),
    }
    draw_side(f, right, session, view);
    draw_status(f, status, session, too_small, f.area());
    draw_hint(f, hint, session, view);
    let prompt = Paragraph::new(Line::from(vec![
        Span::styled("> ", Style::default().fg(Color::Green)),
        Span::raw(view.input.clone()),
    ]))
    .block(Block::bordered().title(if moves_none(session) {
        " command (help, Ctrl-C quits) "
    } else {
        " move or command (help, Tab completes, Ctrl-C quits) "
    }));
    f.render_widget(prompt, input);
    f.set_cursor_position((input.x + 3 + view.input.chars().count() as u16, input.y + 1));
    if let Some(page) = &view.page {
        draw_page(f, main, page);
    }
}

/// Width of the column of players, moves and messages.
pub(super) const SIDE_WIDTH: u16 = 38;

/// Long output in a window over the screen, scrolled by the view.
pub(super) fn draw_page(f: &mut Frame, area: Rect, page: &super::Page) {
    let w = area.width.saturating_sub(4).clamp(20.min(area.width), 96);
    let h = area.height.saturating_sub(2).max(3.min(area.height));
    let x = area.x + (area.width - w) / 2;
    let y = area.y + (area.height - h) / 2;
    let window = Rect::new(x, y, w, h);
    let width = w.saturating_sub(2).max(1) as usize;
    let rows: Vec<String> = page
        .text
        .lines()
        .flat_map(|l| wrap_keeping_indent(l, width))
        .collect();
    let visible = h.saturating_sub(2).max(1) as usize;
    let top = page.scroll.min(rows.len().saturating_sub(visible));
    let shown: Vec<Line> = rows
        .iter()
        .skip(top)
        .take(visible)
        .map(|r| Line::raw(r.clone()))
        .collect();
    let end = (top + visible).min(rows.len());
    let footer = if rows.len() > visible {
        format!(
            " rows {}-{end} of {} · ↑/↓ PgUp/PgDn scroll · Esc closes ",
            top + 1,
            rows.len()
        )
    } else {
        " Esc closes ".to_string()
    };
    f.render_widget(Clear, window);
    f.render_widget(
        Paragraph::new(shown).block(
            Block::bordered()
                .title(format!(" {} ", page.title))
                .title_bottom(footer)
                .border_style(Style::default().fg(Color::LightBlue)),
        ),
        window,
    );
}

/// [`wrap`] for a line of a page: continuation rows keep the line's indentation.
pub(super) fn wrap_keeping_indent(line: &str, width: usize) -> Vec<String> {
    let indent = line.len() - line.trim_start().len();
    if indent == 0 || indent * 2 >= width {
        return wrap(line, width);
    }
    let pad = " ".repeat(indent);
    wrap(line.trim_start(), width - indent)
        .into_iter()
        .map(|r| format!("{pad}{r}"))
        .collect()
}

/// Splits text into rows of at most `width` characters, at spaces where it can.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut row = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let len = row.chars().count();
            let wlen = word.chars().count();
            let need = if len == 0 { wlen } else { len + 1 + wlen };
            if need <= width {
                if len > 0 {
                    row.push(' ');
                }
                row.push_str(&word);
                break;
            }
            if len > 0 {
                rows.push(std::mem::take(&mut row));
                continue;
            }
            // A word longer than a row is cut.
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            rows.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces_and_cuts_long_words() {
        assert_eq!(
            wrap("error illegal_move: no", 10),
            ["error", "illegal_mo", "ve: no"]
        );
        assert_eq!(wrap("a bc def", 4), ["a bc", "def"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
