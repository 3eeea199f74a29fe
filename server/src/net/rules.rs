//! The rules pages: `/rules/<kind>` is a game's player's guide, and
//! `/rules/<kind>/developers` its developers' section (position strings, perft counts),
//! each as an HTML page for a browser and as the guide's own text for anything else.
//!
//! Why the pages are written here, on the server, and not by the web client: a guide shows
//! positions as position strings (a fenced block marked ```` ```position <kind> ````), and
//! only the rules engines can read those. Each such block becomes a `<figure>` carrying
//! what the game document would carry for that position (the engine's view and geometry),
//! and `pages/rules.js` draws it with the game page's own board renderer (`board.js`), so
//! a diagram looks exactly like a game. The guide stays one Markdown file per game
//! (`protocol/docs/games/<kind>.md`), the same text `stoa rules explain` prints.
//!
//! Nothing of a guide reaches the page unescaped: raw HTML in the Markdown is shown as
//! text, and links go only to this site or to `http(s)` addresses.

use std::sync::LazyLock;

use axum::extract::{Path, Query};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};
use stoa_protocol::KINDS;

use crate::net::web::{escape_html, missing_page};

/// The heading that starts a guide's developers' section, which runs to the guide's end.
const DEVELOPERS_HEADING: &str = "## For developers";

/// The word after the opening fence of a block that holds a position to draw.
const POSITION_FENCE: &str = "position";

/// One game's pages, built once from its guide.
struct Pages {
    kind: &'static str,
    /// The game's name as its guide's title says it (`Ūnane`).
    title: String,
    /// The whole guide, as `?format=text` serves it.
    text: &'static str,
    /// The developers' section on its own, as `/developers?format=text` serves it.
    developers_text: &'static str,
    /// `/rules/<kind>` for a browser.
    player_html: String,
    /// `/rules/<kind>/developers` for a browser.
    developers_html: String,
}

/// Every kind's pages, in the registry's order (the order of the tabs).
static PAGES: LazyLock<Vec<Pages>> = LazyLock::new(|| {
    let titles: Vec<(&str, String)> = KINDS
        .iter()
        .filter_map(|k| Some((k.id, title_of(stoa_protocol::guide(k.id)?))))
        .collect();
    KINDS
        .iter()
        .filter_map(|k| {
            let text = stoa_protocol::guide(k.id)?;
            Some(pages(k.id, text, &titles))
        })
        .collect()
});

/// The game's name from the guide's first line, `# Ūnane — a player's guide`.
fn title_of(guide: &str) -> String {
    let first = guide.lines().next().unwrap_or("");
    let name = first.trim_start_matches('#').trim();
    name.split(" — ").next().unwrap_or(name).to_string()
}

/// A guide cut where its developers' section starts: (the player's part, that section).
fn split(guide: &str) -> (&str, &str) {
    let at = guide
        .match_indices(DEVELOPERS_HEADING)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || guide.as_bytes()[i - 1] == b'\n');
    match at {
        Some(i) => guide.split_at(i),
        None => (guide, ""),
    }
}

fn pages(kind: &'static str, text: &'static str, titles: &[(&str, String)]) -> Pages {
    let title = title_of(text);
    let (player, developers) = split(text);
    let player_body = format!(
        "{}<article class=\"guide\">{}</article>\n\
<p class=\"guide-more\"><a href=\"/rules/{kind}/developers\">For developers: position strings \
and reference counts</a> · <a href=\"/rules/{kind}?format=text\">this guide as plain text</a></p>\n",
        tabs(kind, titles, false),
        markdown_html(player, kind)
    );
    // The section's own heading is the page's title; what follows it is the page.
    let (heading, rest) = developers.split_once('\n').unwrap_or((developers, ""));
    // `For developers: …` reads on after the game's name: `Akron — for developers: …`.
    let heading = heading.trim_start_matches('#').trim();
    let mut chars = heading.chars();
    let heading: String = chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    let developers_body = format!(
        "{}<p class=\"guide-back\"><a href=\"/rules/{kind}\">← {} — a player's guide</a></p>\n\
<article class=\"guide\"><h1>{} — {}</h1>\n{}</article>\n",
        tabs(kind, titles, true),
        escape_html(&title),
        escape_html(&title),
        escape_html(&heading),
        markdown_html(rest, kind)
    );
    Pages {
        kind,
        player_html: page(&format!("How to play {title}"), &player_body),
        developers_html: page(&format!("{title} for developers"), &developers_body),
        title,
        text,
        developers_text: developers,
    }
}

/// The tabs of the four games' guides, this one marked as the page shown.
fn tabs(kind: &str, titles: &[(&str, String)], developers: bool) -> String {
    let suffix = if developers { "/developers" } else { "" };
    let links: String = titles
        .iter()
        .map(|(k, t)| {
            let current = if *k == kind {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!(
                "<a href=\"/rules/{k}{suffix}\"{current}>{}</a>",
                escape_html(t)
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    format!("<nav class=\"tabs\" aria-label=\"Games\">{links}</nav>\n")
}

/// A whole page in the site's style: its header (the way to the lobby, the leaderboards
/// and the other guides) and `body` in its `<main>`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{} · Stoa</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\">\
<script type=\"module\" src=\"/assets/pages/rules.js\"></script></head>\n<body>\n\
<header class=\"top\"><a href=\"/\" class=\"brand\">Stoa</a>\
<nav class=\"nav\"><a href=\"/\">Lobby</a> <a href=\"/leaderboard\">Leaderboards</a> \
<a href=\"/rules\">Rules</a></nav></header>\n<main class=\"rules\">\n{body}</main>\n</body></html>\n",
        escape_html(title)
    )
}

/// `GET /rules`: the four games, each with its guide's opening paragraph and a link.
fn index_html() -> String {
    let mut body = String::from("<h1>How to play</h1>\n<ul class=\"rules-index\">\n");
    for p in PAGES.iter() {
        let intro = p.text.split("\n\n").nth(1).unwrap_or("");
        body.push_str(&format!(
            "<li><h2><a href=\"/rules/{}\">{}</a></h2>\n{}</li>\n",
            p.kind,
            escape_html(&p.title),
            markdown_html(intro, p.kind)
        ));
    }
    body.push_str("</ul>\n");
    page("How to play", &body)
}

static INDEX: LazyLock<String> = LazyLock::new(index_html);

/// Whether a request asks for a page: its `Accept` prefers `text/html` to `text/plain`
/// (a browser's does). No `Accept`, `*/*` or `text/plain` get the text, as before the
/// pages existed, so scripts and `curl` see what they always saw.
fn wants_html(headers: &HeaderMap, query: &RulesQuery) -> bool {
    match query.format.as_deref() {
        Some("text") => return false,
        Some("html") => return true,
        _ => {}
    }
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let (mut html, mut text) = (None::<(f32, usize)>, None::<(f32, usize)>);
    for (i, item) in accept.split(',').enumerate() {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|v| v.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "text/html" | "application/xhtml+xml" => &mut html,
            "text/plain" => &mut text,
            _ => continue,
        };
        if slot.is_none_or(|(best, _)| q > best) {
            *slot = Some((q, i));
        }
    }
    match (html, text) {
        (Some((hq, _)), None) => hq > 0.0,
        // Equally wanted: the one named first.
        (Some((hq, hi)), Some((tq, ti))) => hq > tq || (hq == tq && hq > 0.0 && hi < ti),
        _ => false,
    }
}

/// `?format=text` (or `html`): the form asked for whatever `Accept` says.
#[derive(Debug, Default, serde::Deserialize)]
pub struct RulesQuery {
    format: Option<String>,
}

/// A page or a text, with `Vary: Accept` (the same address answers both).
fn answer(html: bool, body: &str) -> Response {
    let kind = if html {
        "text/html; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::VARY, "Accept"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// What an unknown kind gets: the site's `404` page, or a line of text.
fn no_such_kind(html: bool, kind: &str) -> Response {
    if html {
        let known: Vec<&str> = KINDS.iter().map(|k| k.id).collect();
        return missing_page(
            "No such game",
            &format!(
                "There is no game called '{kind}' here. The games are {}.",
                known.join(", ")
            ),
        );
    }
    (StatusCode::NOT_FOUND, format!("no game kind '{kind}'\n")).into_response()
}

/// `GET /rules`: the list of the guides (a page; the text is per game).
pub async fn index() -> Response {
    answer(true, &INDEX)
}

/// `GET /rules/<kind>`: the game's guide, a page for a browser (diagrams drawn), the text
/// of `protocol/docs/games/<kind>.md` otherwise.
pub async fn guide(
    Path(kind): Path<String>,
    Query(query): Query<RulesQuery>,
    headers: HeaderMap,
) -> Response {
    negotiated(&kind, &query, &headers, |p| (&p.player_html, p.text))
}

/// `GET /rules/<kind>/developers`: the guide's developers' section: position strings,
/// perft counts, conformance examples.
pub async fn developers(
    Path(kind): Path<String>,
    Query(query): Query<RulesQuery>,
    headers: HeaderMap,
) -> Response {
    negotiated(&kind, &query, &headers, |p| {
        (&p.developers_html, p.developers_text)
    })
}

/// One form of `kind`'s pages as the request asks for it ([`wants_html`]): `forms` picks
/// the (page, text) pair of the address, an unknown kind gets [`no_such_kind`] in the same
/// form.
fn negotiated(
    kind: &str,
    query: &RulesQuery,
    headers: &HeaderMap,
    forms: fn(&Pages) -> (&str, &str),
) -> Response {
    let html = wants_html(headers, query);
    match PAGES.iter().find(|p| p.kind == kind) {
        Some(p) => {
            let (page, text) = forms(p);
            answer(html, if html { page } else { text })
        }
        None => no_such_kind(html, kind),
    }
}

/// The position string of a marked block: its lines, trimmed, joined by one space, except
/// after a line ending in `/` (a board's rows, one per line), which the next one continues.
/// So a block can show a board row by row and still be one string.
pub fn block_position(block: &str) -> String {
    let mut out = String::new();
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() && !out.ends_with('/') {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// The kind a fenced block's info string marks it for (`position akron` → `akron`).
fn marked_kind(info: &str) -> Option<&str> {
    let mut words = info.split_whitespace();
    (words.next() == Some(POSITION_FENCE)).then(|| words.next().unwrap_or(""))
}

/// A position as what the page draws: the engine's view and geometry, as a game document
/// carries them, with the sides and the side to act.
pub fn diagram_view(kind: &str, position: &str) -> Result<Value, String> {
    let k = stoa_protocol::kind(kind).map_err(|e| e.to_string())?;
    let game = k
        .from_position(&Value::Null, position)
        .map_err(|e| e.to_string())?;
    Ok(json!({
        "kind": k.id,
        "sides": k.side_names,
        "to_act": game.to_act().map(|s| game.side_name(s)),
        "geometry": game.geometry(),
        "state": game.view(),
    }))
}

/// The `<figure>` a marked block becomes: an empty board the page script fills from
/// `data-view`, and the position string under it (what shows without scripts).
fn diagram_html(kind: &str, block: &str) -> String {
    let position = block_position(block);
    match diagram_view(kind, &position) {
        Ok(view) => {
            let to_act = view["to_act"]
                .as_str()
                .map(|s| {
                    let mut c = s.chars();
                    let first = c.next().map(|f| f.to_uppercase().collect::<String>());
                    format!("{}{} to act. ", first.unwrap_or_default(), c.as_str())
                })
                .unwrap_or_default();
            format!(
                "<figure class=\"diagram\" data-kind=\"{}\" data-view=\"{}\">\
<div class=\"diagram-board board\"></div>\
<figcaption><span class=\"diagram-to-act\">{}</span><span class=\"diagram-legend\"></span> \
<code class=\"position\">{}</code></figcaption></figure>\n",
                escape_html(kind),
                escape_html(&view.to_string()),
                escape_html(&to_act),
                escape_html(&position)
            )
        }
        // A guide's positions are checked by a test; should one still not load, the page
        // shows it as the text it is rather than no page at all.
        Err(e) => {
            tracing::warn!(kind, position, error = %e, "rules page: a diagram's position does not load");
            format!("<pre><code>{}</code></pre>\n", escape_html(block))
        }
    }
}

/// Whether a link may be followed from a page: this site's own paths, anchors and web
/// addresses; anything else (`javascript:`, `data:`) is shown as its text.
fn safe_link(dest: &str) -> bool {
    let d = dest.trim_start().to_ascii_lowercase();
    (d.starts_with('/') && !d.starts_with("//"))
        || d.starts_with('#')
        || d.starts_with("https://")
        || d.starts_with("http://")
}

/// Markdown to HTML: tables on, raw HTML shown as text, marked position blocks as
/// diagrams of `kind`, headings with ids to link to.
fn markdown_html(markdown: &str, kind: &str) -> String {
    let mut events: Vec<Event> = Vec::new();
    let mut block: Option<String> = None;
    let mut dropped_links: Vec<bool> = Vec::new();
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if marked_kind(&info).is_some() =>
            {
                block = Some(String::new());
            }
            Event::Text(t) if block.is_some() => {
                if let Some(b) = block.as_mut() {
                    b.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) if block.is_some() => {
                let text = block.take().unwrap_or_default();
                events.push(Event::Html(diagram_html(kind, &text).into()));
            }
            Event::Html(t) | Event::InlineHtml(t) => events.push(Event::Text(t)),
            Event::Start(Tag::Link { ref dest_url, .. }) => {
                let keep = safe_link(dest_url);
                dropped_links.push(!keep);
                if keep {
                    events.push(event);
                }
            }
            Event::End(TagEnd::Link) => {
                if !dropped_links.pop().unwrap_or(false) {
                    events.push(event);
                }
            }
            // An image is its description (a guide's pictures are drawn, not linked).
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
            e => events.push(e),
        }
    }
    name_headings(&mut events);
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// Gives each section heading an id from its words (`## The board` → `the-board`), so a
/// section can be linked to.
fn name_headings(events: &mut [Event]) {
    let mut used: Vec<String> = Vec::new();
    for i in 0..events.len() {
        let Event::Start(Tag::Heading { level, .. }) = &events[i] else {
            continue;
        };
        if *level == HeadingLevel::H1 {
            continue;
        }
        let mut words = String::new();
        for e in &events[i + 1..] {
            match e {
                Event::Text(t) | Event::Code(t) => words.push_str(t),
                Event::End(TagEnd::Heading(_)) => break,
                _ => {}
            }
        }
        let mut slug = String::new();
        for c in words.chars().flat_map(char::to_lowercase) {
            if c.is_alphanumeric() {
                slug.push(c);
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let base = slug.trim_end_matches('-').to_string();
        let mut id = base.clone();
        let mut n = 1;
        while used.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        used.push(id.clone());
        if let Event::Start(Tag::Heading { id: slot, .. }) = &mut events[i] {
            *slot = Some(CowStr::from(id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every marked block of every guide, as (kind the guide is of, kind the block names,
    /// the block's text).
    fn blocks() -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        for k in KINDS {
            let guide = stoa_protocol::guide(k.id).expect("a guide");
            let mut current: Option<(String, String)> = None;
            for event in Parser::new_ext(guide, Options::ENABLE_TABLES) {
                match event {
                    Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                        current = marked_kind(&info).map(|m| (m.to_string(), String::new()));
                    }
                    Event::Text(t) => {
                        if let Some((_, text)) = current.as_mut() {
                            text.push_str(&t);
                        }
                    }
                    Event::End(TagEnd::CodeBlock) => {
                        if let Some((kind, text)) = current.take() {
                            out.push((k.id, kind, text));
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    #[test]
    fn every_marked_block_of_the_guides_is_a_position_of_its_game() {
        let blocks = blocks();
        for k in KINDS {
            assert!(
                blocks.iter().any(|(g, _, _)| *g == k.id),
                "{}: no diagram",
                k.id
            );
        }
        for (guide, kind, text) in &blocks {
            assert_eq!(
                kind, guide,
                "a block of the {guide} guide is marked for {kind}"
            );
            let position = block_position(text);
            let game = stoa_protocol::kind(kind)
                .and_then(|k| k.from_position(&Value::Null, &position))
                .unwrap_or_else(|e| panic!("{guide}: '{position}' does not load: {e}"));
            // Written as the engine writes it: the guide shows positions as they appear
            // everywhere else.
            assert_eq!(game.position(), position, "{guide}: not canonical");
        }
    }

    #[test]
    fn every_guide_page_has_its_diagrams_and_no_raw_position_block() {
        for p in PAGES.iter() {
            let (player, developers) = split(p.text);
            assert!(!developers.is_empty(), "{}: no developers' section", p.kind);
            for (text, html) in [(player, &p.player_html), (developers, &p.developers_html)] {
                let marked = text.matches("```position").count();
                assert_eq!(
                    html.matches("<figure class=\"diagram\"").count(),
                    marked,
                    "{}: a marked block is not a diagram",
                    p.kind
                );
            }
            assert!(
                p.player_html.contains("<figure class=\"diagram\""),
                "{}",
                p.kind
            );
            assert!(!p
                .player_html
                .contains("For developers: position strings and reference counts</h2>"));
            assert!(p.developers_html.contains("perft"), "{}", p.kind);
            assert!(!p.developers_html.contains("## Your turn"));
        }
    }

    #[test]
    fn raw_html_and_unsafe_links_are_text() {
        let html = markdown_html(
            "<script>alert(1)</script>\n\nA <b>bold</b> [link](javascript:alert(1)) and \
             [a page](/rules/akron).\n\n```position akron\n</code><script>\n```\n",
            "akron",
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(
            html.contains("<a href=\"/rules/akron\">a page</a>"),
            "{html}"
        );
        assert!(html.contains("&lt;/code&gt;&lt;script&gt;"), "{html}");
    }

    #[test]
    fn a_diagram_carries_the_engines_view_escaped() {
        let html = markdown_html(
            "```position akron\n4 v 6,3 9 B1,B2' C1,D1,B2,C2,D2\n```\n",
            "akron",
        );
        assert!(html.contains("data-view=\"{"), "{html}");
        // The apostrophes of raised points and the JSON's quotes never close the attribute.
        assert!(html.contains("B2&#39;"), "{html}");
        assert!(html.contains("&quot;state&quot;"), "{html}");
        assert!(html.contains("Vert to act."), "{html}");
    }

    #[test]
    fn block_lines_ending_in_a_slash_continue_the_rows() {
        assert_eq!(block_position("ab/\ncd/\nef b 0\n"), "ab/cd/ef b 0");
        assert_eq!(
            block_position("  ..../\n  .... l\n  0,0 1\n"),
            "..../.... l 0,0 1"
        );
    }

    #[test]
    fn a_browser_gets_the_page_and_anything_else_the_text() {
        let q = RulesQuery::default();
        let with = |accept: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, accept.parse().expect("header"));
            wants_html(&h, &q)
        };
        assert!(with(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        ));
        assert!(!with("text/plain"));
        assert!(!with("*/*"));
        assert!(!with("text/plain, text/html"));
        assert!(with("text/plain;q=0.5, text/html"));
        assert!(!with("text/html;q=0"));
        assert!(!wants_html(&HeaderMap::new(), &q));
        let text = RulesQuery {
            format: Some("text".into()),
        };
        let mut browser = HeaderMap::new();
        browser.insert(header::ACCEPT, "text/html".parse().expect("header"));
        assert!(!wants_html(&browser, &text));
    }
}
