//! The rules pages (issue 49): `/rules/<kind>` is a page for a browser, written from the
//! game's guide (`protocol/docs/games/<kind>.md`) with its positions drawn by the web
//! client's board renderer, and the guide's text for anything that asks for text;
//! `/rules/<kind>/developers` holds the guide's developers' section.
//!
//! The browser test (Debian's Chromium over chromedriver, skipped with a message where it
//! is not installed) checks that every diagram is drawn, and writes a screenshot of each
//! page to `$STOA_SCREENSHOT_DIR` (default `target/web-screenshots`) as `rules-<kind>.png`.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_tests::browser::{screenshot, Web};
use stoa_tests::Server;

/// What Chromium sends when it opens a page.
const BROWSER_ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,\
image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";

const KINDS: [&str; 4] = ["unane", "staku", "akron", "akunur"];

/// A GET with an optional `Accept`: (status, the head lower-cased, the body).
fn get(server: &Server, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15))).ok();
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {}\r\n{accept}Connection: close\r\n\r\n",
        server.addr
    )
    .expect("write");
    let mut buf = String::new();
    s.read_to_string(&mut buf).expect("read");
    let (head, body) = buf.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The guide file of a kind, as the repository holds it.
fn guide(kind: &str) -> String {
    let path = format!(
        "{}/../protocol/docs/games/{kind}.md",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).expect("guide file")
}

#[test]
fn a_browser_gets_each_guide_as_a_page_with_its_diagrams() {
    let server = Server::start();
    for kind in KINDS {
        let (status, head, page) = get(&server, &format!("/rules/{kind}"), Some(BROWSER_ACCEPT));
        assert_eq!(status, 200, "{kind}: {page}");
        assert!(head.contains("content-type: text/html"), "{kind}: {head}");
        assert!(head.contains("vary: accept"), "{kind}: {head}");
        let title = guide(kind).lines().next().expect("title")[2..].to_string();
        assert!(
            page.contains(&format!("<h1>{title}</h1>")),
            "{kind}: no title heading"
        );
        for section in [
            "the-board",
            "your-turn",
            "how-the-game-ends",
            "notation",
            "options",
        ] {
            assert!(
                page.contains(&format!("<h2 id=\"{section}\">")),
                "{kind}: no section {section}"
            );
        }
        // Diagrams, each with the view the board renderer draws and its script.
        assert!(
            page.contains("<figure class=\"diagram\""),
            "{kind}: no diagram"
        );
        assert!(page.contains(&format!("data-kind=\"{kind}\"")), "{kind}");
        assert!(page.contains("&quot;geometry&quot;"), "{kind}");
        assert!(page.contains("src=\"/assets/pages/rules.js\""), "{kind}");
        // No ASCII board is left where a position is shown: no fence marker reaches the page.
        assert!(!page.contains("```"), "{kind}: a fence shows");
        // The developers' part is a page of its own, linked from here.
        assert!(!page.contains("Reference counts (perft)"), "{kind}");
        assert!(
            page.contains(&format!("href=\"/rules/{kind}/developers\"")),
            "{kind}: no link to the developers' page"
        );
        // Every diagram's position string is under it.
        let figures = page.matches("<figure class=\"diagram\"").count();
        assert_eq!(page.matches("<code class=\"position\">").count(), figures);
    }
    let (status, _, index) = get(&server, "/rules", Some(BROWSER_ACCEPT));
    assert_eq!(status, 200);
    for kind in KINDS {
        assert!(
            index.contains(&format!("href=\"/rules/{kind}\"")),
            "{index}"
        );
    }
}

#[test]
fn text_is_there_for_who_asks_for_text() {
    let server = Server::start();
    for kind in KINDS {
        let file = guide(kind);
        let path = format!("/rules/{kind}");
        for (path, accept) in [
            (path.clone(), Some("text/plain")),
            (format!("{path}?format=text"), Some(BROWSER_ACCEPT)),
            // No Accept, or anything: the text, as before there were pages.
            (path.clone(), None),
            (path.clone(), Some("*/*")),
        ] {
            let (status, head, body) = get(&server, &path, accept);
            assert_eq!(status, 200, "{path} {accept:?}");
            assert!(
                head.contains("content-type: text/plain; charset=utf-8"),
                "{path} {accept:?}: {head}"
            );
            assert_eq!(body, file, "{path} {accept:?}: the guide's text");
        }
    }
}

#[test]
fn the_developers_page_has_the_position_strings_and_perft() {
    let server = Server::start();
    for kind in KINDS {
        let path = format!("/rules/{kind}/developers");
        let (status, head, page) = get(&server, &path, Some(BROWSER_ACCEPT));
        assert_eq!(status, 200, "{kind}: {page}");
        assert!(head.contains("content-type: text/html"), "{kind}");
        assert!(
            page.contains("— for developers: position strings and reference counts</h1>"),
            "{kind}: {page}"
        );
        assert!(page.contains("Reference counts (perft)"), "{kind}");
        assert!(page.contains(&format!("stoa rules perft {kind}")), "{kind}");
        assert!(
            page.contains(&format!("href=\"/rules/{kind}\"")),
            "{kind}: no way back"
        );
        // Only that section: the player's rules stay on the player's page.
        assert!(!page.contains("id=\"your-turn\""), "{kind}");
        let (status, head, text) = get(&server, &format!("{path}?format=text"), None);
        assert_eq!(status, 200);
        assert!(head.contains("content-type: text/plain"), "{kind}");
        assert!(
            text.starts_with("## For developers: position strings and reference counts"),
            "{kind}: {text}"
        );
        assert!(
            guide(kind).ends_with(&text),
            "{kind}: the guide's own section"
        );
    }
    // The conformance examples with positions are drawn there.
    for kind in ["unane", "akron", "akunur"] {
        let (_, _, page) = get(
            &server,
            &format!("/rules/{kind}/developers"),
            Some(BROWSER_ACCEPT),
        );
        assert!(page.contains("<figure class=\"diagram\""), "{kind}");
    }
}

#[test]
fn an_unknown_kind_is_the_sites_missing_page() {
    let server = Server::start();
    for path in ["/rules/chess", "/rules/chess/developers", "/rules/%3Cb%3E"] {
        let (status, head, page) = get(&server, path, Some(BROWSER_ACCEPT));
        assert_eq!(status, 404, "{path}");
        assert!(head.contains("content-type: text/html"), "{path}");
        assert!(page.contains("<h1>No such game</h1>"), "{path}: {page}");
        assert!(page.contains("href=\"/\""), "{path}");
        assert!(!page.contains("<b>"), "{path}: not escaped");
        let (status, _, text) = get(&server, path, Some("text/plain"));
        assert_eq!(status, 404, "{path}");
        assert!(text.starts_with("no game kind"), "{path}: {text}");
    }
}

// ---------------------------------------------------------------------------------------
// In a browser.

/// Each guide's page in Chromium: every diagram is a board drawn by `board.js` (an `<svg>`
/// with its cells, the position's pieces on them), none left empty, no script error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_diagram_of_the_guides_is_drawn_in_a_browser() {
    let Some(web) = Web::start("rules-pages") else {
        return;
    };
    let server = Server::start();
    // Tall and without scrollbars: a screenshot shows a diagram with the text around it.
    let c = web
        .page_with("browser", (1100, 1500), &["--hide-scrollbars"])
        .await;
    let base = format!("http://{}", server.addr);
    for (kind, path) in KINDS
        .iter()
        .map(|k| (*k, format!("/rules/{k}")))
        .chain(KINDS.iter().map(|k| (*k, format!("/rules/{k}/developers"))))
    {
        c.goto(&format!("{base}{path}"))
            .await
            .expect("open the page");
        // The figures are in the page as the server wrote it; the script then draws them.
        let figures = c
            .execute(
                "return document.querySelectorAll('figure.diagram').length",
                vec![],
            )
            .await
            .expect("count")
            .as_u64()
            .expect("a number");
        if kind == "staku" && path.ends_with("/developers") {
            // Its conformance examples are stacks in words, not positions.
            assert_eq!(figures, 0, "{path}");
            continue;
        }
        assert!(figures > 0, "{path}: no diagram");
        // Per figure: the cells drawn, the pieces on them (stones, balls, Staku's tokens,
        // Akunur's corner tokens) and the legend under it.
        let script = "const f = [...document.querySelectorAll('figure.diagram')]; \
            const drawn = f.map(x => [x.querySelectorAll('svg .cell').length, \
            x.querySelectorAll('svg .piece, svg .cell rect[rx=\"3\"], svg .token').length, \
            x.querySelector('.diagram-legend').textContent]); \
            return drawn.every(d => d[0] > 0) ? drawn : null;";
        let deadline = Instant::now() + Duration::from_secs(30);
        let drawn = loop {
            let v = c.execute(script, vec![]).await.unwrap_or(Value::Null);
            if let Value::Array(drawn) = v {
                break drawn;
            }
            assert!(
                Instant::now() < deadline,
                "{path}: the diagrams are not drawn"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(drawn.len() as u64, figures, "{path}");
        for d in &drawn {
            assert!(!d[2].as_str().unwrap_or("").is_empty(), "{path}: no legend");
        }
        assert!(
            drawn.iter().any(|d| d[1].as_u64().unwrap_or(0) > 0),
            "{path}: no diagram with pieces: {drawn:?}"
        );
        if !path.ends_with("/developers") {
            // The last diagram in the middle of the window, with the text around it (on
            // Akron's page the rule-4 example, with balls raised).
            c.execute(
                "const f = document.querySelectorAll('figure.diagram'); \
                 f[f.length - 1].scrollIntoView({block: 'center'})",
                vec![],
            )
            .await
            .expect("scroll");
            screenshot(&c, &format!("rules-{kind}")).await;
        }
    }
    // Akron's rule-4 example has its five horz and two vert balls on the board.
    c.goto(&format!("{base}/rules/akron")).await.expect("akron");
    let balls = c
        .execute(
            "const f = document.querySelectorAll('figure.diagram')[1]; \
             return f && [f.querySelectorAll('.piece-vert').length, f.querySelectorAll('.piece-horz').length]",
            vec![],
        )
        .await
        .expect("balls");
    assert_eq!(balls, json!([2, 5]));
    let _ = c.close().await;
}
