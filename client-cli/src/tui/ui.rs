//! Drawing the terminal UI from the session and the view state.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::{Confirm, View};
use crate::board::{self, Tone};
use crate::document::GameDoc;
use crate::present;
use crate::session::{Note, Phase, Session, Start, ARENA_HELP, HELP, LOBBY_HELP, WATCH_HELP};

fn tone_style(tone: Tone) -> Style {
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
const SIDE_WIDTH: u16 = 38;

/// Long output in a window over the screen, scrolled by the view.
fn draw_page(f: &mut Frame, area: Rect, page: &super::Page) {
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
fn wrap_keeping_indent(line: &str, width: usize) -> Vec<String> {
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

/// Draws the board pane; returns the size the pane needs to show all of it.
fn draw_board(f: &mut Frame, area: Rect, g: GameDoc) -> (u16, u16) {
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

fn draw_waiting(f: &mut Frame, area: Rect, session: &Session) {
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

fn draw_lobby(f: &mut Frame, area: Rect, session: &Session, view: &View) {
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

/// The arena between its games: name, settings, countdown, where we stand, the standings
/// and the games in progress.
fn draw_arena(f: &mut Frame, area: Rect, session: &Session) {
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

fn clock_style(g: GameDoc, side: &str, now: i64) -> Style {
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
fn game_players(g: GameDoc, session: &Session, width: usize) -> Vec<Line<'static>> {
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

fn draw_side(f: &mut Frame, area: Rect, session: &Session, view: &View) {
    // Between arena games the last game's document is kept, but it is not what is shown.
    let game = session.doc().filter(|_| !session.phase().is_arena());
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
        (Line::raw(format!("you: {}", session.me.name)));
        // Between arena games: the arena's players, best first (the standings pane has
        // the details).
        if let Some(doc) = session.arena().filter(|_| session.phase().is_arena()) {
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

    let mut move_lines: Vec<Line> = Vec::new();
    let arena = session.arena().filter(|_| session.phase().is_arena());
    if let Some(doc) = arena {
        // Between arena games there are no moves to show: the arena's games instead,
        // newest first (the newest stay on screen).
        let inner = moves.width.saturating_sub(2) as usize;
        let visible = moves.height.saturating_sub(2) as usize;
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
            moves,
        );
    } else if let Some(g) = game {
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
    if arena.is_none() {
        let visible = moves.height.saturating_sub(2) as usize;
        let skip = move_lines.len().saturating_sub(visible);
        f.render_widget(
            Paragraph::new(move_lines.split_off(skip)).block(Block::bordered().title(" Moves ")),
            moves,
        );
    }

    // The newest message is always on screen: notes are wrapped here, to the pane's width,
    // and the last rows shown (a paragraph wrapping by itself would push them out below).
    let visible = log.height.saturating_sub(2) as usize;
    let width = log.width.saturating_sub(2).max(1) as usize;
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
        log,
    );
}

/// Splits text into rows of at most `width` characters, at spaces where it can.
fn wrap(text: &str, width: usize) -> Vec<String> {
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

fn draw_status(
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
const MAX_HINT_ROWS: usize = 4;

/// What must be read under the board, with its style: the question asked, else the last
/// error. `None` when the row shows a hint.
fn urgent_hint(session: &Session, view: &View) -> Option<(String, Style)> {
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

fn draw_hint(f: &mut Frame, area: Rect, session: &Session, view: &View) {
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
fn moves_none(session: &Session) -> bool {
    session.phase().is_lobby()
        || session.phase().is_arena()
        || (matches!(session.phase(), Phase::Game) && session.spectating())
}

/// The opponent's side when we play and the opponent has no connection.
fn opponent_offline(session: &Session) -> Option<String> {
    let g = session.doc()?;
    let me = session.my_side()?;
    if g.status().ended {
        return None;
    }
    g.sides()
        .into_iter()
        .find(|s| *s != me && g.online(s) == Some(false))
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
