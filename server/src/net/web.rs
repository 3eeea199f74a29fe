//! The web client: a few static files built into the binary and served by `stoa-server`
//! itself, so one process (or one cluster) gives players a page to open — no separate web
//! server, no build step.
//!
//! Why one HTML shell for every page: the lobby (`/`), a game (`/g/<id>`), an invitation
//! (`/r/<code>`), a player (`/p/<id>`) and a leaderboard (`/leaderboard/<kind>`) are views
//! of the same client (`assets/app.js`), which reads the path; a reload or a shared link
//! therefore lands on the right view.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// The page every client route serves.
const SHELL: &str = include_str!("../../web/index.html");

/// The files under `/assets/`: name, content type, body.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/app.js"),
    ),
    (
        "account.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/account.js"),
    ),
    (
        "arena.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/arena.js"),
    ),
    (
        "board.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/board.js"),
    ),
    (
        "devices.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/devices.js"),
    ),
    (
        "people.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/people.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
    ("icon.svg", ICON_TYPE, ICON),
    (
        "vendor/fast-json-patch/core.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../web/vendor/fast-json-patch/core.mjs"),
    ),
    (
        "vendor/fast-json-patch/helpers.mjs",
        "text/javascript; charset=utf-8",
        include_str!("../../web/vendor/fast-json-patch/helpers.mjs"),
    ),
];

/// The site's icon (the page links it; browsers also ask `/favicon.ico` by themselves).
const ICON: &str = include_str!("../../web/icon.svg");
const ICON_TYPE: &str = "image/svg+xml";

/// The page for a path that is nothing here: a person who mistyped a link gets words and
/// a way to the lobby, not an empty answer.
const NOT_FOUND_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>No such page · Stoa</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\"></head>\
<body><main><h1>No such page</h1><p>There is nothing at this address. \
<a href=\"/\">Go to the lobby</a> to find a game.</p></main></body></html>\n";

/// A `404` page for people: `title` as its heading, `text` under it, then the way to the
/// lobby. Both are text (escaped here): a path's own words may be in them.
pub fn missing_page(title: &str, text: &str) -> Response {
    let (title, text) = (escape_html(title), escape_html(text));
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · Stoa</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\"></head>\
<body><main><h1>{title}</h1><p id=\"missing\">{text}</p>\
<p><a href=\"/\">Go to the lobby</a>.</p></main></body></html>\n"
    );
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response()
}

/// Text made safe to put between HTML tags.
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `GET /favicon.ico`: the site's icon.
pub async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, ICON_TYPE),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        ICON,
    )
        .into_response()
}

/// Any other path: `404`, as a page for people, or as JSON under `/api/` (what the API's
/// own answers look like).
pub async fn not_found(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({"error": "not_found"})),
        )
            .into_response();
    }
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        NOT_FOUND_PAGE,
    )
        .into_response()
}

/// How to play each game: the guides of `protocol/docs/games/`, by kind.
const RULES: &[(&str, &str)] = &[
    (
        "unane",
        include_str!("../../../protocol/docs/games/unane.md"),
    ),
    (
        "staku",
        include_str!("../../../protocol/docs/games/staku.md"),
    ),
    (
        "akron",
        include_str!("../../../protocol/docs/games/akron.md"),
    ),
    (
        "akunur",
        include_str!("../../../protocol/docs/games/akunur.md"),
    ),
];

/// `GET /rules/<kind>`: the game's guide as text (the game page links it).
pub async fn rules(Path(kind): Path<String>) -> Response {
    match RULES.iter().find(|(k, _)| *k == kind) {
        Some((_, text)) => {
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], *text).into_response()
        }
        None => (StatusCode::NOT_FOUND, format!("no game kind '{kind}'\n")).into_response(),
    }
}

/// Where the shell names the deployment (`<meta name="stoa-deployment">`).
const DEPLOYMENT_SLOT: &str = "{{deployment}}";

/// `GET /`, `GET /g/<id>`, `GET /r/<code>`: the client's HTML shell, naming the deployment
/// (the page keeps its token under that id; it must know it before its `hello`).
pub fn shell(deployment: &str) -> Response {
    // The id is ours (lower-case base32); whatever else a store held stays out of the HTML.
    let escaped: String = deployment
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SHELL.replace(DEPLOYMENT_SLOT, &escaped),
    )
        .into_response()
}

/// `GET /assets/<path>`: one of the built-in files, `404` otherwise.
pub async fn asset(Path(path): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == path) {
        // The files change only with the binary; `no-cache` makes browsers revalidate, so
        // an upgraded server never runs with an old client.
        Some((_, kind, body)) => (
            [
                (header::CONTENT_TYPE, *kind),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::{escape_html, ASSETS, DEPLOYMENT_SLOT, SHELL};

    #[test]
    fn page_text_is_escaped() {
        assert_eq!(
            escape_html("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn the_shell_has_one_deployment_slot() {
        assert_eq!(SHELL.matches(DEPLOYMENT_SLOT).count(), 1);
    }

    #[test]
    fn every_module_the_client_imports_is_served() {
        for (name, _, body) in ASSETS {
            for line in body
                .lines()
                .filter(|l| l.trim_start().starts_with("import "))
            {
                let Some(spec) = line.split(['"', '\'']).nth(1) else {
                    continue;
                };
                let base = name.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
                for seg in spec.split('/') {
                    match seg {
                        "." => {}
                        ".." => {
                            parts.pop();
                        }
                        s => parts.push(s),
                    }
                }
                let target = parts.join("/");
                assert!(
                    ASSETS.iter().any(|(n, _, _)| *n == target),
                    "{name} imports {spec} ({target}), which is not served"
                );
            }
        }
    }
}
