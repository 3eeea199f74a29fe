//! The web client: a few static files built into the binary and served by `stoa-server`
//! itself, so one process (or one cluster) gives players a page to open — no separate web
//! server, no build step.
//!
//! Why one HTML shell for every page: the lobby (`/`), a game (`/g/<id>`), an invitation
//! (`/r/<code>`), a player (`/p/<id>`), a leaderboard (`/leaderboard/<kind>`) and the
//! analysis board (`/analysis`) are views of the same client (`assets/app.js`), which reads
//! the path; a reload or a shared link therefore lands on the right view. The client is
//! native ES modules, served as they are: `lib/` what the pages share, one module per page
//! under `pages/`, the header's panels under `panels/`.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// The page every client route serves.
const SHELL: &str = include_str!("../../web/index.html");

/// A JavaScript module of the client under `/assets/`, by its path below `server/web/`.
macro_rules! js {
    ($path:literal) => {
        (
            $path,
            "text/javascript; charset=utf-8",
            include_str!(concat!("../../web/", $path)),
        )
    };
}

/// The files under `/assets/`: name, content type, body. Every module the page imports is
/// here (a test checks it), each served as JavaScript: browsers refuse a module of another
/// type.
const ASSETS: &[(&str, &str, &str)] = &[
    js!("app.js"),
    js!("board.js"),
    js!("lib/admin-api.js"),
    js!("lib/api.js"),
    js!("lib/click-move.js"),
    js!("lib/dom.js"),
    js!("lib/identity.js"),
    js!("lib/kinds.js"),
    js!("lib/link.js"),
    js!("lib/move-tree.js"),
    js!("lib/report.js"),
    js!("lib/session.js"),
    js!("lib/versioned.js"),
    js!("lib/views.js"),
    js!("lib/words.js"),
    js!("missing.js"),
    js!("pages/admin.js"),
    js!("pages/admin-live.js"),
    js!("pages/admin-player.js"),
    js!("pages/analysis.js"),
    js!("pages/analysis-view.js"),
    js!("pages/arena.js"),
    js!("pages/game.js"),
    js!("pages/game-actions.js"),
    js!("pages/game-analysis.js"),
    js!("pages/game-chat.js"),
    js!("pages/game-clock.js"),
    js!("pages/learn.js"),
    js!("pages/leaderboard.js"),
    js!("pages/lobby.js"),
    js!("pages/play-on.js"),
    js!("pages/player.js"),
    js!("pages/room.js"),
    js!("pages/rules.js"),
    js!("panels/account.js"),
    js!("panels/devices.js"),
    js!("panels/identity.js"),
    js!("vendor/fast-json-patch/core.mjs"),
    js!("vendor/fast-json-patch/helpers.mjs"),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
    ("icon.svg", ICON_TYPE, ICON),
];

/// The site's icon (the page links it; browsers also ask `/favicon.ico` by themselves).
const ICON: &str = include_str!("../../web/icon.svg");
const ICON_TYPE: &str = "image/svg+xml";

/// The page for a path that is nothing here: a person who mistyped a link gets words and
/// a way to the lobby, not an empty answer. `/admin` answers these same bytes (the
/// operators' console does not announce itself); its script (`missing.js`) draws the
/// console's sign-in only in a browser at `/admin`.
const NOT_FOUND_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>No such page · Stoa</title><link rel=\"stylesheet\" href=\"/assets/style.css\">\
<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\"></head>\
<body><main><h1>No such page</h1><p>There is nothing at this address. \
<a href=\"/\">Go to the lobby</a> to find a game.</p></main>\
<script type=\"module\" src=\"/assets/missing.js\"></script></body></html>\n";

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

/// Text made safe to put between HTML tags or in a quoted attribute.
pub(crate) fn escape_html(s: &str) -> String {
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

    /// The module paths a JavaScript file names after `from` (imports and re-exports).
    fn imported(body: &str) -> Vec<&str> {
        body.split(" from ")
            .skip(1)
            .filter_map(|rest| {
                let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
                rest[1..].split(quote).next()
            })
            .collect()
    }

    #[test]
    fn every_module_the_client_imports_is_served() {
        let mut checked = 0;
        for (name, _, body) in ASSETS {
            for spec in imported(body) {
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
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} imports found");
    }

    #[test]
    fn every_script_of_the_client_is_served_as_javascript() {
        let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut stack = vec![web.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read server/web") {
                let path = entry.expect("entry").path();
                let rel = path.strip_prefix(&web).expect("below web");
                if path.is_dir() {
                    if rel != std::path::Path::new("node_modules") {
                        stack.push(path);
                    }
                    continue;
                }
                let name = rel.to_string_lossy().replace('\\', "/");
                if !(name.ends_with(".js") || name.ends_with(".mjs")) {
                    continue;
                }
                let served = ASSETS.iter().find(|(n, _, _)| *n == name);
                assert!(
                    served.is_some_and(|(_, kind, _)| kind.starts_with("text/javascript")),
                    "{name} is not served as JavaScript under /assets/"
                );
            }
        }
    }
}
