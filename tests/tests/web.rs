//! The web client in a real browser: Debian's Chromium, headless, driven over WebDriver
//! (chromedriver, fantoccini) against the real `stoa-server`, which serves the pages itself.
//!
//! One test plays a full game of each kind by clicking the board: a host creates the room
//! from the lobby's form, a guest opens the invitation link, a third browser watches the game
//! it found in the lobby (which updates live), the guest reloads mid-game and plays on, and
//! every page shows the same end. Screenshots of the lobby and of each board are written to
//! `$STOA_SCREENSHOT_DIR` (default `target/web-screenshots`); docs/web-client.md shows them.
//!
//! Skipped (with a message) when `chromedriver` is not installed; `.ci/run` installs it.
#![forbid(unsafe_code)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::{json, Value};
use stoa_tests::browser::{page_base, screenshot, until, Web, WAIT};
use stoa_tests::clients::{ServingBot, CLIENT_LOOSE};
use stoa_tests::proxy::Proxy;
use stoa_tests::script::{scripted_game, Script};
use stoa_tests::Server;

/// The options of the tiny Ūnane game most tests host (4x3: a few moves end it).
const TINY_UNANE: &str = r#"{"width":4,"height":3}"#;

/// Waits until page `c` is connected (welcomed) to its server; `what` names the moment.
async fn connected(c: &Client, what: &str) {
    until(
        c,
        what,
        "return document.querySelector('#link').textContent.startsWith('connected as ')",
    )
    .await;
}

/// Types `name` into the top bar's name field, as a player renames itself.
async fn type_name(c: &Client, name: &str) {
    c.execute(
        "const n = document.querySelector('#name'); n.value = arguments[0]; n.dispatchEvent(new Event('change'));",
        vec![json!(name)],
    )
    .await
    .expect("type a name");
}

/// Waits until page `c` shows a game's board; the game's id (from the page's path).
async fn board_game_id(c: &Client) -> String {
    let id = until(
        c,
        "the game page",
        "const m = location.pathname.match(/^\\/g\\/(.+)$/); return document.querySelector('#board svg') && m && m[1]",
    )
    .await;
    id.as_str().expect("id").to_string()
}

/// Black (the host) and then white click the first two moves of the scripted Ūnane game
/// of `options` (seed 1), each seen by the other page; the script, for the moves after.
async fn both_act_once(host: &Client, guest: &Client, options: &Value) -> Script {
    let script = scripted_game("unane", options, 1, 40);
    click_move(host, &script.moves[0], 0).await;
    wait_moves(guest, 1).await;
    click_move(guest, &script.moves[1], 1).await;
    wait_moves(host, 2).await;
    script
}

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .expect("text")
}

async fn moves_shown(c: &Client) -> u64 {
    c.execute(
        "return document.querySelectorAll('#moves li').length",
        vec![],
    )
    .await
    .ok()
    .and_then(|v| v.as_u64())
    .unwrap_or(0)
}

async fn wait_moves(c: &Client, n: u64) {
    until(
        c,
        &format!("{n} moves in the list"),
        &format!("return document.querySelectorAll('#moves li').length >= {n}"),
    )
    .await;
}

/// Cell names a move mentions, as the client reads them (a letter, digits, apostrophes).
fn cells_in(mv: &str) -> Vec<String> {
    let chars: Vec<char> = mv.chars().collect();
    let mut out = Vec::new();
    let mut i = 1;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && chars[i - 1].is_ascii_alphabetic() {
            let start = i - 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            while i < chars.len() && chars[i] == '\'' {
                i += 1;
            }
            out.push(chars[start..i].iter().collect::<String>());
        } else {
            i += 1;
        }
    }
    out
}

/// Plays `mv` on page `c` by clicking: the cells it names in order, then (when several moves
/// fit those cells, or the move names no cell) its button.
async fn click_move(c: &Client, mv: &str, before: u64) {
    until(c, "our turn with the legal moves", "return document.querySelector('#board .cell.selectable') !== null || document.querySelector('#candidates [data-move]') !== null").await;
    for cell in cells_in(mv) {
        let css = format!("#board [data-cell=\"{cell}\" i]");
        let target = c
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("{mv}: no element for {cell}: {e}"));
        if target.click().await.is_err() {
            // Something drawn over the cell's centre took the click: click the cell itself.
            c.execute(
                "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                vec![serde_json::to_value(&target).expect("element")],
            )
            .await
            .expect("click by script");
        }
    }
    // A unique move was sent by its last cell; otherwise its button is there.
    let button = format!("#candidates [data-move=\"{mv}\"]");
    let deadline = Instant::now() + WAIT;
    loop {
        if moves_shown(c).await > before {
            return;
        }
        if let Ok(b) = c.find(Locator::Css(&button)).await {
            b.click().await.expect("click the move's button");
            return;
        }
        assert!(Instant::now() < deadline, "{mv}: neither sent nor offered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Fills the lobby's host form (no clock) and returns the invitation link.
async fn host_room(
    c: &Client,
    base: &str,
    kind: &str,
    options: &str,
    side: &str,
    public: bool,
) -> String {
    host_timed_room(c, base, kind, options, side, public, "none", false).await
}

/// Fills the lobby's host form and returns the invitation link.
// Each argument is one field of the form the test fills in.
#[allow(clippy::too_many_arguments)]
async fn host_timed_room(
    c: &Client,
    base: &str,
    kind: &str,
    options: &str,
    side: &str,
    public: bool,
    clock: &str,
    rated: bool,
) -> String {
    c.goto(&format!("{base}/")).await.expect("open the lobby");
    until(c, "the lobby", "return document.querySelector('#host') && document.querySelector('#link').textContent.startsWith('connected')").await;
    c.execute(
        "const f = document.querySelector('#host');
         f.kind.value = arguments[0]; f.kind.dispatchEvent(new Event('change'));
         f.clock.value = arguments[2]; f.public.checked = arguments[1];
         f.rated.checked = arguments[3];",
        vec![json!(kind), json!(public), json!(clock), json!(rated)],
    )
    .await
    .expect("fill the form");
    fill_options(c, "#host", kind, options).await;
    until(
        c,
        "the side list",
        &format!("return [...document.querySelector('#host').side.options].some(o => o.value === '{side}')"),
    )
    .await;
    c.execute(
        "document.querySelector('#host').side.value = arguments[0];",
        vec![json!(side)],
    )
    .await
    .expect("choose the side");
    c.find(Locator::Css("#host button[type=submit]"))
        .await
        .expect("create button")
        .click()
        .await
        .expect("click create");
    let link = until(
        c,
        "the invitation link",
        "const i = document.querySelector('#invite'); return i && i.textContent",
    )
    .await;
    link.as_str().expect("link text").to_string()
}

/// Sets the option fields of the lobby form `form` (for `kind`) to `options` (a JSON
/// object's text), once the form shows that kind's fields.
async fn fill_options(c: &Client, form: &str, kind: &str, options: &str) {
    until(
        c,
        "the kind's option fields",
        &format!(
            "return document.querySelector('{form} fieldset.options').dataset.kind === '{kind}'"
        ),
    )
    .await;
    c.execute(
        "const f = document.querySelector(arguments[0]);
         for (const [k, v] of Object.entries(JSON.parse(arguments[1]))) {
           const i = f.querySelector(`[data-option=\"${k}\"]`);
           if (i.type === 'checkbox') i.checked = v; else i.value = String(v);
         }",
        vec![json!(form), json!(options)],
    )
    .await
    .expect("fill the options");
}

/// Hosts a tiny untimed private Ūnane room from page `c` on `side`; the invitation link.
async fn host_tiny_unane(c: &Client, base: &str, side: &str) -> String {
    host_room(c, base, "unane", TINY_UNANE, side, false).await
}

/// Waits until each page shows a board.
async fn boards_shown(pages: &[&Client]) {
    for c in pages {
        until(
            c,
            "the board",
            "return document.querySelector('#board svg')",
        )
        .await;
    }
}

/// A host's and a guest's page at one tiny Ūnane game (the host on black, who opens), both
/// showing the board; with the invitation link.
async fn seated_tiny_unane(web: &Web, base: &str) -> ([Client; 2], String) {
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_tiny_unane(&host, base, "black").await;
    open_invitation(&guest, &invite).await;
    boards_shown(&[&host, &guest]).await;
    ([host, guest], invite)
}

/// Opens an invitation link as the invited player: a browser new to the server gives a
/// name first (`Guest`), then takes the seat.
async fn open_invitation(c: &Client, url: &str) {
    c.goto(url).await.expect("open the invitation");
    let form = until(
        c,
        "the game or the name form",
        "return location.pathname.startsWith('/g/') ? 'game' : (document.querySelector('#join-name') ? 'form' : (document.querySelector('#watch-game') ? 'started' : ''))",
    )
    .await;
    if form == "started" {
        // A started game's invitation offers to watch it (issue 47): a spectator clicks.
        c.execute("document.querySelector('#watch-game').click();", vec![])
            .await
            .expect("click Watch");
        until(c, "the game", "return location.pathname.startsWith('/g/')").await;
    }
    if form == "form" {
        c.execute(
            "const f = document.querySelector('#join-name'); f.name.value = 'Guest'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("give a name");
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// How one scripted game is set up and what else it exercises.
struct Setup {
    kind: &'static str,
    options: Value,
    seed: u64,
    /// Listed in the lobby (the watcher finds it there) or private (the watcher opens the
    /// invitation link once the game runs).
    public: bool,
    /// After this many moves the guest reloads its page.
    reload_at: Option<usize>,
    /// This move is typed into the move field instead of clicked.
    typed: Option<usize>,
}

/// Plays one scripted game between two browsers, watched by a third; returns the game id.
async fn full_game(base: &str, [host, guest, watcher]: [&Client; 3], setup: Setup) -> String {
    let Setup {
        kind,
        options,
        seed,
        public,
        reload_at,
        typed,
    } = setup;
    let gk = stoa_protocol::kind(kind).expect("kind");
    let script = scripted_game(kind, &options, seed, 40);
    let opts = options.to_string();
    // The watcher has the lobby open before the room exists: it must appear live.
    watcher.goto(&format!("{base}/")).await.expect("lobby");
    until(
        watcher,
        "the watcher's lobby",
        "return document.querySelector('#rooms')",
    )
    .await;
    let invite = host_room(host, base, kind, &opts, gk.side_names[0], public).await;
    let code = invite.rsplit('/').next().expect("code").to_string();
    if public {
        until(
            watcher,
            "the room in the lobby",
            &format!("return document.querySelector('#rooms [data-room=\"{code}\"]')"),
        )
        .await;
        if kind == "unane" {
            screenshot(watcher, "lobby").await;
        }
    }
    open_invitation(guest, &invite).await;
    let id = until(
        host,
        "the game page",
        "const m = location.pathname.match(/^\\/g\\/(.+)$/); return m && m[1]",
    )
    .await;
    let id = id.as_str().expect("id").to_string();
    until(
        guest,
        "the guest's game page",
        &format!("return location.pathname === '/g/{id}'"),
    )
    .await;
    if public {
        // The game replaces the room in the lobby; the watcher opens it from there.
        let link = format!("#games [data-game=\"{id}\"] a");
        until(
            watcher,
            "the game in the lobby",
            &format!("return document.querySelector('{link}')"),
        )
        .await;
        watcher
            .find(Locator::Css(&link))
            .await
            .expect("game link")
            .click()
            .await
            .expect("click the game");
    } else {
        // A private game: the invitation link shows it to a third person.
        open_invitation(watcher, &invite).await;
        until(
            watcher,
            "the private game",
            &format!("return location.pathname === '/g/{id}'"),
        )
        .await;
    }
    until(
        watcher,
        "the watcher's board",
        "return document.querySelector('#board svg')",
    )
    .await;

    let mut game = gk.start(&options).expect("options");
    for (i, mv) in script.moves.iter().enumerate() {
        let side = game.to_act().expect("to act");
        let page = if side.index() == 0 { host } else { guest };
        if Some(i) == typed {
            // Keyboard play: the move in notation, then Enter.
            until(
                page,
                "our turn",
                "return !document.querySelector('#move-input').disabled",
            )
            .await;
            let input = page
                .find(Locator::Css("#move-input"))
                .await
                .expect("move field");
            input
                .send_keys(&format!("{mv}\u{E007}"))
                .await
                .expect("type the move");
        } else {
            click_move(page, mv, i as u64).await;
        }
        game.play(mv).expect("scripted move");
        for c in [host, guest, watcher] {
            wait_moves(c, i as u64 + 1).await;
        }
        let shown = text_of(watcher, &format!("#moves li[data-ply=\"{}\"]", i + 1)).await;
        assert_eq!(shown, *mv, "the watcher's move list");
        if Some(i) == reload_at {
            // A reload resumes the game: same player, same board, and play goes on.
            guest.refresh().await.expect("reload");
            wait_moves(guest, i as u64 + 1).await;
            until(
                guest,
                "the player's seat after a reload",
                "return document.querySelector('#heading').textContent.includes('you play')",
            )
            .await;
        }
        if i == script.moves.len() / 2 {
            screenshot(watcher, &format!("board-{kind}")).await;
        }
    }
    if let Some(side) = &script.resign_side {
        let page = if side == gk.side_names[0] {
            host
        } else {
            guest
        };
        page.find(Locator::Css("[data-action=resign]"))
            .await
            .expect("resign button")
            .click()
            .await
            .expect("click resign");
        page.accept_alert().await.expect("confirm the resignation");
    }
    // "white wins by one_group" → "… — White wins"; draws say "Draw".
    let expected = match script.outcome.split_once(" wins by ") {
        Some((winner, _)) => format!("— {} wins", capitalized(winner)),
        None => "Draw".to_string(),
    };
    for c in [host, guest, watcher] {
        let banner = until(
            c,
            "the end banner",
            "const b = document.querySelector('#banner'); return b && !b.hidden && b.textContent",
        )
        .await;
        assert!(
            banner.as_str().unwrap_or("").contains(&expected),
            "{kind}: banner {banner} does not say {expected} ({})",
            script.outcome
        );
    }
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_host_join_watch_and_play_every_kind_by_clicking() {
    let Some((web, server)) = Web::with_server_args("web-browsers-host-join", CLIENT_LOOSE) else {
        return;
    };
    let base = page_base(&server);
    let [host, guest, watcher] = web.pages(["host", "guest", "watcher"]).await;
    let pages = [&host, &guest, &watcher];

    // A name typed in the page is the player's name (the server renames the identity).
    host.goto(&format!("{base}/")).await.expect("lobby");
    connected(&host, "connected").await;
    type_name(&host, "Alice").await;
    until(
        &host,
        "the new name",
        "return document.querySelector('#link').textContent === 'connected as Alice'",
    )
    .await;

    // Quick pairing: two browsers with the same settings are paired; the game can be aborted.
    for c in [&host, &guest] {
        c.goto(&format!("{base}/")).await.expect("lobby");
        until(c, "the lobby", "return document.querySelector('#quick') && document.querySelector('#link').textContent.startsWith('connected')").await;
        fill_options(c, "#quick", "unane", TINY_UNANE).await;
        c.execute(
            "const f = document.querySelector('#quick'); f.clock.value = 'none'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("quick pairing");
    }
    let paired = until(
        &host,
        "the paired game",
        "const m = location.pathname.match(/^\\/g\\/(.+)$/); return m && m[1]",
    )
    .await;
    let paired = paired.as_str().expect("id").to_string();
    until(
        &guest,
        "the same game",
        &format!("return location.pathname === '/g/{paired}'"),
    )
    .await;
    until(&guest, "the host's name", "return document.querySelector('#players') && document.querySelector('#players').textContent.includes('Alice')").await;
    until(
        &host,
        "the status",
        "return document.querySelector('#status').textContent",
    )
    .await;
    let aborter = if text_of(&host, "#status").await.starts_with("Your turn") {
        &host
    } else {
        &guest
    };
    until(
        aborter,
        "the abort button",
        "return document.querySelector('[data-action=abort]')",
    )
    .await;
    aborter
        .find(Locator::Css("[data-action=abort]"))
        .await
        .expect("abort")
        .click()
        .await
        .expect("click abort");
    for c in [&host, &guest] {
        let banner = until(
            c,
            "the abort banner",
            "const b = document.querySelector('#banner'); return b && !b.hidden && b.textContent",
        )
        .await;
        let banner = banner.as_str().expect("banner");
        if std::ptr::eq(c, aborter) {
            assert_eq!(banner, "Game aborted: you aborted it");
        } else {
            assert!(
                banner.starts_with("Game aborted: ") && banner.ends_with(" aborted it"),
                "the opponent reads who aborted: {banner}"
            );
        }
    }

    let games = [
        Setup {
            kind: "unane",
            options: json!({"width": 4, "height": 3}),
            seed: 1,
            public: true,
            reload_at: Some(3),
            typed: Some(1),
        },
        Setup {
            kind: "staku",
            options: json!({}),
            seed: 2,
            public: true,
            reload_at: None,
            typed: None,
        },
        Setup {
            kind: "akron",
            options: json!({"size": 4, "nodelay": true}),
            seed: 3,
            public: true,
            reload_at: None,
            typed: None,
        },
        Setup {
            kind: "akunur",
            options: json!({}),
            seed: 0,
            public: false,
            reload_at: None,
            typed: Some(0),
        },
    ];
    let mut last = String::new();
    for setup in games {
        last = full_game(&base, pages, setup).await;
    }

    // A rematch from the end of the game: both players move to the new game, and so does
    // the spectator.
    host.find(Locator::Css("[data-action=rematch]"))
        .await
        .expect("rematch")
        .click()
        .await
        .expect("click rematch");
    until(
        &guest,
        "the rematch offer",
        "return document.querySelector('[data-action=\"accept rematch\"]')",
    )
    .await;
    guest
        .find(Locator::Css("[data-action=\"accept rematch\"]"))
        .await
        .expect("accept")
        .click()
        .await
        .expect("click accept");
    for c in [&host, &guest, &watcher] {
        until(c, "the rematch", &format!("return location.pathname.startsWith('/g/') && location.pathname !== '/g/{last}' && document.querySelector('#board svg') !== null")).await;
    }

    // A phone-sized screen: everything fits the width, nothing scrolls sideways.
    watcher.set_window_size(390, 844).await.expect("phone size");
    until(
        &watcher,
        "a page as wide as the phone",
        "return document.documentElement.scrollWidth <= window.innerWidth + 1",
    )
    .await;
    screenshot(&watcher, "phone").await;

    for c in [host, guest, watcher] {
        let _ = c.close().await;
    }
}

/// A page whose network drops reconnects by itself as the same player, catches up on the
/// move it missed, and plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_page_reconnects_and_catches_up() {
    let Some((web, server)) = Web::with_server_args("web-a-dropped-page", CLIENT_LOOSE) else {
        return;
    };
    let base = page_base(&server);
    // The guest's page and its websocket go through a proxy the test can cut.
    let proxy = Proxy::start(server.addr);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_timed_room(
        &host, &base, "unane", TINY_UNANE, "black", false, "5+3", false,
    )
    .await;
    let code = invite.rsplit('/').next().expect("code");
    open_invitation(&guest, &format!("http://{}/r/{code}", proxy.addr)).await;
    until(
        &guest,
        "the guest's board",
        "return document.querySelector('#board svg')",
    )
    .await;
    let script = both_act_once(&host, &guest, &json!({"width":4,"height":3})).await;
    assert!(script.moves.len() >= 3, "a long enough game");

    // Both sides have moved: black's clock runs, and both pages count it down.
    for c in [&host, &guest] {
        let first = until(c, "black's running clock", "const e = document.querySelector('[data-clock=black].running'); return e && e.textContent").await;
        let first = first.as_str().expect("clock text").to_string();
        assert!(
            first.starts_with("4:5") || first.starts_with("5:0"),
            "{first}"
        );
        until(
            c,
            "the clock counting down",
            &format!(
                "return document.querySelector('[data-clock=black]').textContent !== '{first}'"
            ),
        )
        .await;
        let white = text_of(c, "[data-clock=white]").await;
        assert!(
            white.starts_with("5:0"),
            "white's clock stands, with its increment: {white}"
        );
    }

    // Cut the guest's link; the host moves while the guest is away.
    proxy.cut();
    click_move(&host, &script.moves[2], 2).await;
    wait_moves(&host, 3).await;
    // Back by itself, as the same player, with the missed move and the turn.
    wait_moves(&guest, 3).await;
    connected(&guest, "connected again").await;
    if script.moves.len() > 3 {
        until(
            &guest,
            "the guest's turn",
            "return document.querySelector('#status').textContent.startsWith('Your turn')",
        )
        .await;
        click_move(&guest, &script.moves[3], 3).await;
        wait_moves(&host, 4).await;
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// "Play the computer" from the lobby: a serving bot sits down, the game page shows it as
/// the computer, and a move clicked on the board gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_plays_the_computer() {
    let Some((web, server)) = Web::with_server_args("web-the-lobby-plays", CLIENT_LOOSE) else {
        return;
    };
    let base = page_base(&server);
    let _bot = ServingBot::start(&server.ws_url(), "web-bot");
    let page = web.page("page").await;
    page.goto(&format!("{base}/")).await.expect("lobby");
    until(&page, "the lobby", "return document.querySelector('#computer') && document.querySelector('#link').textContent.startsWith('connected')").await;
    // The bot may still be connecting: ask until the game starts.
    let deadline = Instant::now() + WAIT;
    fill_options(&page, "#computer", "unane", TINY_UNANE).await;
    loop {
        page.execute(
            "const f = document.querySelector('#computer'); f.level.value = '1'; f.clock.value = 'none'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("ask for the computer");
        let started = page
            .execute("return new Promise(r => setTimeout(() => r(location.pathname.startsWith('/g/')), 500))", vec![])
            .await
            .unwrap_or(Value::Null);
        if started == true {
            break;
        }
        assert!(Instant::now() < deadline, "no computer opponent sat down");
    }
    until(&page, "the computer's seat", "const p = document.querySelector('#players'); return p && p.textContent.includes('(computer)')").await;
    // Whoever starts, after one move of ours the computer answers.
    until(&page, "the first move or our turn", "return document.querySelector('#status').textContent.startsWith('Your turn') || document.querySelectorAll('#moves li').length > 0").await;
    let before = moves_shown(&page).await;
    until(
        &page,
        "our turn",
        "return document.querySelector('#status').textContent.startsWith('Your turn')",
    )
    .await;
    let mv = until(&page, "a legal move", "const o = document.querySelector('#legal-list option:not([value=swap])'); return o && o.value").await;
    let mv = mv.as_str().expect("move").to_string();
    click_move(&page, &mv, before).await;
    wait_moves(&page, before + 2).await;
    let _ = page.close().await;
}

/// The identity a page keeps for a deployment (`stoa.identity.<deployment>` in its local
/// storage), `Null` when it keeps none.
async fn stored_identity(c: &Client, deployment: &str) -> Value {
    let text = c
        .execute(
            "return localStorage.getItem('stoa.identity.' + arguments[0])",
            vec![json!(deployment)],
        )
        .await
        .expect("read local storage");
    text.as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null)
}

/// Under `deploy/run-local.sh 3`, two pages play through the balancer's one address; the node
/// holding the guest page's connection (and owning the game: the joiner's node creates it)
/// is killed with SIGKILL; the page reconnects through the same address as the same player
/// (its token is kept under the deployment the page names) and its next move is played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_node_dies_plays_on_through_the_balancer() {
    use stoa_tests::redis::health;
    let Some(web) = Web::start("web-a-page-whose") else {
        return;
    };
    if !stoa_tests::run_local::balancer_available() {
        return;
    }
    let mut cluster = stoa_tests::run_local::RunLocal::start(
        3,
        &[
            ("STOA_BOT", "0"),
            ("STOA_LEASE_MS", "1500"),
            ("STOA_RATE_LIMIT", "100000"),
            ("STOA_IP_CONN_LIMIT", "100000"),
        ],
    );
    let base = cluster.balancer_page();
    let deployment = health(&cluster.nodes[0]).1["deployment"]
        .as_str()
        .expect("deployment in /health")
        .to_string();
    let owned = |s: &Server| health(s).1["games_owned"].as_u64().unwrap_or(0);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_tiny_unane(&host, &base, "black").await;
    assert!(invite.starts_with(&base), "{invite}");
    let code = invite.rsplit('/').next().expect("code");
    open_invitation(&guest, &format!("{base}/r/{code}")).await;
    until(
        &guest,
        "the guest's board",
        "return document.querySelector('#board svg')",
    )
    .await;
    let before = stored_identity(&guest, &deployment).await;
    let guest_id = before["id"]
        .as_str()
        .expect("a stored identity")
        .to_string();
    let script = scripted_game("unane", &json!({"width":4,"height":3}), 1, 40);
    click_move(&host, &script.moves[0], 0).await;
    wait_moves(&guest, 1).await;

    let deadline = Instant::now() + WAIT;
    let owner = loop {
        if let Some(i) = cluster.nodes.iter().position(|n| owned(n) == 1) {
            break i;
        }
        assert!(Instant::now() < deadline, "no node owns the game");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        health(&cluster.nodes[owner]).1["players_online"]
            .as_u64()
            .unwrap_or(0)
            >= 1,
        "the owner holds the guest's connection"
    );
    cluster.nodes[owner].kill9();
    let deadline = Instant::now() + WAIT;
    while (0..3)
        .filter(|&i| i != owner)
        .map(|i| owned(&cluster.nodes[i]))
        .sum::<u64>()
        != 1
    {
        assert!(Instant::now() < deadline, "no survivor took the game");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Typed, and again while the game is still changing nodes (`unavailable` plays nothing).
    let mv = &script.moves[1];
    let mut played = false;
    for _ in 0..20 {
        until(
            &guest,
            "the guest connected, to move",
            "return document.querySelector('#link').textContent.startsWith('connected as ') && !document.querySelector('#move-input').disabled",
        )
        .await;
        guest
            .find(Locator::Css("#move-input"))
            .await
            .expect("move field")
            .send_keys(&format!("{mv}\u{E007}"))
            .await
            .expect("type the move");
        let until_at = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until_at && moves_shown(&host).await < 2 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if moves_shown(&host).await >= 2 {
            played = true;
            break;
        }
    }
    assert!(played, "the guest's move after the node died");
    wait_moves(&guest, 2).await;
    let after = stored_identity(&guest, &deployment).await;
    assert_eq!(after["id"], guest_id.as_str(), "the same player: {after}");
    assert_eq!(after["token"], before["token"]);
    for c in [host, guest] {
        let _ = c.close().await;
    }
    let (status, _) = cluster.stop();
    assert!(status.success(), "the script stops cleanly: {status:?}");
}

/// A long game's move list grows downwards: nothing hides behind a sideways scrollbar, every
/// move number shows whole, and the latest move is in view (issue 28, item 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_move_list_scrolls_down_and_shows_the_latest_move() {
    let Some((web, server)) = Web::with_server("web-a-long-move") else {
        return;
    };
    let base = page_base(&server);
    let mut table = stoa_tests::Table::open(&server, "unane", json!({}), "public").await;
    let mut played = Vec::new();
    while played.len() < 30 {
        let Some(mv) = table.step(7).await else { break };
        played.push(mv);
    }
    assert_eq!(played.len(), 30, "a game that lasts 30 plies: {played:?}");
    let page = web.page("page").await;
    page.goto(&format!("{base}/g/{}", table.game_id))
        .await
        .expect("open the game");
    wait_moves(&page, 30).await;
    // Let the layout settle after the last redraw.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let shape = page
        .execute(
            "const l = document.querySelector('#moves'); const r = l.getBoundingClientRect();
             const last = l.lastElementChild.getBoundingClientRect();
             const first = l.firstElementChild.getBoundingClientRect();
             return {scrollWidth: l.scrollWidth, clientWidth: l.clientWidth,
                     scrollHeight: l.scrollHeight, clientHeight: l.clientHeight,
                     lastTop: last.top - r.top, lastBottom: last.bottom - r.top,
                     firstLeft: first.left - r.left,
                     text: l.lastElementChild.textContent,
                     marker: getComputedStyle(l).listStylePosition};",
            vec![],
        )
        .await
        .expect("measure the move list");
    assert!(
        shape["scrollWidth"].as_f64() <= shape["clientWidth"].as_f64(),
        "no sideways scrolling: {shape}"
    );
    assert!(
        shape["scrollHeight"].as_f64() > shape["clientHeight"].as_f64(),
        "30 plies scroll downwards: {shape}"
    );
    let height = shape["clientHeight"].as_f64().expect("height");
    assert!(
        shape["lastTop"].as_f64().expect("top") >= 0.0
            && shape["lastBottom"].as_f64().expect("bottom") <= height + 1.0,
        "the latest move is in view: {shape}"
    );
    assert_eq!(shape["text"], played[29].as_str());
    // The numbers sit inside the list's box, so none is clipped at its left edge.
    assert_eq!(shape["marker"], "inside", "{shape}");
    assert!(shape["firstLeft"].as_f64().expect("left") >= 0.0, "{shape}");
    let _ = page.close().await;
}

/// Clicks the control button `action` (its `data-action`) on page `c`.
async fn click_action(c: &Client, action: &str) {
    let css = format!("[data-action=\"{action}\"]");
    until(
        c,
        &format!("the {action} button"),
        &format!("return document.querySelector('{css}')"),
    )
    .await;
    // The controls are drawn again on every update of the game: a button found just
    // before a redraw is gone by the click, so find it again then.
    let deadline = Instant::now() + WAIT;
    loop {
        let clicked = match c.find(Locator::Css(&css)).await {
            Ok(button) => button.click().await,
            Err(e) => Err(e),
        };
        match clicked {
            Ok(_) => return,
            Err(e) if Instant::now() < deadline && e.to_string().contains("stale element") => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("click {action}: {e}"),
        }
    }
}

/// Waits until the status line of page `c` is exactly `text`.
async fn status_is(c: &Client, text: &str) {
    let script = format!(
        "return document.querySelector('#status').textContent === {}",
        json!(text)
    );
    until(c, &format!("the status '{text}'"), &script).await;
}

/// Draw offers and rematch requests are said in words to both players: the offering side
/// reads that it offered (not "Black offers a draw" about itself), a declined offer says
/// so, and a rematch request is a sentence, not only a changed button (issue 28, item 5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draw_offers_declines_and_rematch_requests_are_said_in_words() {
    let Some((web, server)) = Web::with_server("web-draw-offers-declines") else {
        return;
    };
    let base = page_base(&server);
    let ([host, guest], _invite) = seated_tiny_unane(&web, &base).await;
    // Black (the host) moves first, and offers a draw first.
    click_action(&host, "offer draw").await;
    status_is(
        &host,
        "Your turn (black). You offered a draw; waiting for White's answer.",
    )
    .await;
    status_is(&guest, "Black to act. Black offers a draw.").await;
    click_action(&guest, "decline draw").await;
    status_is(&host, "Your turn (black). White declined your draw offer.").await;
    status_is(&guest, "Black to act. You declined the draw offer.").await;

    click_action(&host, "resign").await;
    host.accept_alert().await.expect("confirm the resignation");
    for c in [&host, &guest] {
        status_is(c, "The game is over.").await;
    }
    click_action(&host, "rematch").await;
    status_is(
        &host,
        "The game is over. You asked for a rematch; waiting for White.",
    )
    .await;
    status_is(
        &guest,
        "The game is over. Black asks for a rematch: accept it below.",
    )
    .await;
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// Before a side's first move the page counts down the first-move window from the
/// document's `first_action_deadline`, and when it runs out the banner says why the game
/// ended (issue 28, item 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_move_window_counts_down_and_its_abort_says_why() {
    let mut args = stoa_tests::LOOSE.to_vec();
    args.extend(["--first-action-ms", "6000"]);
    let Some((web, server)) = Web::with_server_args("web-the-first-move", &args) else {
        return;
    };
    let base = page_base(&server);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_tiny_unane(&host, &base, "black").await;
    open_invitation(&guest, &invite).await;
    // Black (the host) is to make the first move and does not.
    let host_line = until(
        &host,
        "the host's countdown",
        "const t = document.querySelector('#first-move'); return t && t.textContent",
    )
    .await;
    let guest_line = until(
        &guest,
        "the guest's countdown",
        "const t = document.querySelector('#first-move'); return t && t.textContent",
    )
    .await;
    let countdown = |text: &Value, who: &str| {
        let text = text.as_str().expect("text");
        let left = text
            .strip_prefix(who)
            .and_then(|t| t.strip_suffix(" to make a first move, or the game is aborted."))
            .unwrap_or_else(|| panic!("a countdown: {text}"));
        assert!(
            left.starts_with("0:0") && left.len() == 6,
            "seconds and tenths left: {text}"
        );
        left.to_string()
    };
    let first = countdown(&host_line, "You have ");
    countdown(&guest_line, "Black has ");
    until(
        &host,
        "the countdown moving",
        &format!("return !document.querySelector('#first-move').textContent.includes('{first}')"),
    )
    .await;
    for c in [&host, &guest] {
        let banner = until(
            c,
            "the abort banner",
            "const b = document.querySelector('#banner'); return b && !b.hidden && b.textContent",
        )
        .await;
        assert_eq!(
            banner,
            "Game aborted: Black did not make a first move within 6 s"
        );
        assert_eq!(text_of(c, "#first-move").await, "");
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// A public Fischer 5+3 game on `server` whose clocks run (both sides made their first
/// action), and a browser page watching it with black's clock counting down.
async fn watched_running_clock(web: &Web, server: &Server) -> (stoa_tests::Table, Client) {
    let clock = json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000});
    let mut table = stoa_tests::Table::open_with_clock(
        server,
        "unane",
        json!({"width":4,"height":3}),
        clock,
        "public",
    )
    .await;
    for _ in 0..2 {
        table.step(1).await.expect("a first action");
    }
    let page = web.page("page").await;
    page.goto(&format!("http://{}/g/{}", server.addr, table.game_id))
        .await
        .expect("open the game");
    let first = until(
        &page,
        "a running clock",
        "const e = document.querySelector('[data-clock].running'); return e && e.textContent",
    )
    .await;
    until(
        &page,
        "the clock counting down",
        &format!(
            "return document.querySelector('[data-clock].running').textContent !== {}",
            json!(first)
        ),
    )
    .await;
    (table, page)
}

/// The running clock's text on page `c`.
async fn running_clock(c: &Client) -> String {
    text_of(c, "[data-clock].running").await
}

/// While the server is away the page's clocks stand still (the server paused them), the
/// shutdown notice reads as one sentence, and both go once the page is back (issue 28,
/// item 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_stand_still_while_the_server_restarts() {
    let Some(web) = Web::start("web-clocks-stand-still") else {
        return;
    };
    let mut server = Server::start();
    let addr = server.addr;
    let (_table, page) = watched_running_clock(&web, &server).await;
    server.terminate();
    let notice = until(
        &page,
        "the shutdown notice",
        "const n = document.querySelector('#notice'); return !n.hidden && n.textContent",
    )
    .await;
    assert_eq!(notice, "The server is shutting down; reconnect later.");
    assert_eq!(
        text_of(&page, "#paused").await,
        "The server is restarting: the clocks stand still until it is back."
    );
    let stood = running_clock(&page).await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(running_clock(&page).await, stood, "the clock stood still");

    // A server on the same address: the page is back, and the notice and pause are gone.
    let mut again = Command::new(stoa_tests::binary("stoa-server"))
        .args(["--listen", &addr.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server again");
    connected(&page, "connected again").await;
    until(
        &page,
        "no notice",
        "return document.querySelector('#notice').hidden",
    )
    .await;
    assert_eq!(text_of(&page, "#paused").await, "");
    let _ = page.close().await;
    let _ = again.kill();
    let _ = again.wait();
}

/// During a Redis outage the page says the game is paused and its clocks stand still; when
/// Redis is back the clocks count again (issue 28, item 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_shows_the_game_paused() {
    let Some(web) = Web::start("web-a-store-outage") else {
        return;
    };
    let mut redis = stoa_tests::redis::RedisServer::start();
    let server = redis.start_server("web-outage");
    let (_table, page) = watched_running_clock(&web, &server).await;
    assert_eq!(text_of(&page, "#paused").await, "");
    redis.kill9();
    until(
        &page,
        "the pause",
        "return document.querySelector('#paused').textContent.startsWith('Paused: ')",
    )
    .await;
    assert_eq!(
        text_of(&page, "#paused").await,
        "Paused: the server cannot reach its storage; the clocks stand still and moves wait until it is back."
    );
    let stood = running_clock(&page).await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(running_clock(&page).await, stood, "the clock stood still");
    redis.restart();
    until(
        &page,
        "the end of the pause",
        "return document.querySelector('#paused').textContent === ''",
    )
    .await;
    let now = running_clock(&page).await;
    until(
        &page,
        "the clock counting again",
        &format!(
            "return document.querySelector('[data-clock].running').textContent !== {}",
            json!(now)
        ),
    )
    .await;
    let _ = page.close().await;
}

/// At the end of a rated game each player's page says how its rating changed (issue 28,
/// item 9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_ends_with_each_players_rating_change() {
    let Some((web, server)) = Web::with_server("web-a-rated-game") else {
        return;
    };
    let base = page_base(&server);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let options = json!({"width":4,"height":3});
    let invite = host_timed_room(
        &host,
        &base,
        "unane",
        &options.to_string(),
        "black",
        true,
        "none",
        true,
    )
    .await;
    open_invitation(&guest, &invite).await;
    let id = board_game_id(&guest).await;
    // Both sides act (a game ended before that is unrated); black (the host) resigns.
    both_act_once(&host, &guest, &options).await;
    click_action(&host, "resign").await;
    host.accept_alert().await.expect("confirm the resignation");
    let mut after = Value::Null;
    for _ in 0..100 {
        let (_, full) = server.api_game_full(&id, None);
        if full["record"]["ratings_after"].is_object() {
            after = full["record"]["ratings_after"].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rating = |side: &str| after[side].as_f64().expect("a rating after").round() as i64;
    let (black, white) = (rating("black"), rating("white"));
    assert!(black < 1500 && white > 1500, "{after}");
    for (c, now) in [(&host, black), (&guest, white)] {
        let line = until(
            c,
            "the rating change",
            "return document.querySelector('#rating-change').textContent",
        )
        .await;
        assert_eq!(
            line,
            format!("Your rating: 1500 → {now} ({:+})", now - 1500).as_str()
        );
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// Someone new who opens an invitation link gives a name before taking the seat, so the
/// game shows it; a player renamed after a game plays the rematch under the new name
/// (issue 28, item 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invitation_asks_a_newcomer_for_a_name_and_a_rematch_takes_new_names() {
    let Some((web, server)) = Web::with_server("web-an-invitation-asks") else {
        return;
    };
    let base = page_base(&server);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_tiny_unane(&host, &base, "black").await;
    guest.goto(&invite).await.expect("open the invitation");
    until(
        &guest,
        "the name form",
        "return document.querySelector('#join-name')",
    )
    .await;
    // Nobody sat down yet: the host still waits in the lobby.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(text_of(&host, "#hosted")
        .await
        .contains("is waiting for your opponent"));
    guest
        .execute(
            "const f = document.querySelector('#join-name'); f.name.value = 'Carol'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("give a name");
    for c in [&host, &guest] {
        until(
            c,
            "the game with Carol",
            "const p = document.querySelector('#players'); return p && p.textContent.includes('White: Carol')",
        )
        .await;
    }
    click_action(&host, "resign").await;
    host.accept_alert().await.expect("confirm the resignation");
    status_is(&host, "The game is over.").await;
    type_name(&host, "Alice2").await;
    until(
        &host,
        "the new name",
        "return document.querySelector('#link').textContent === 'connected as Alice2'",
    )
    .await;
    click_action(&host, "rematch").await;
    click_action(&guest, "accept rematch").await;
    for c in [&host, &guest] {
        until(
            c,
            "the rematch under the new name",
            "const p = document.querySelector('#players'); return p && p.textContent.includes('Alice2') && p.textContent.includes('Carol')",
        )
        .await;
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// Top of the element `css` on page `c`, in CSS pixels.
async fn top_of(c: &Client, css: &str) -> f64 {
    c.execute(
        "return document.querySelector(arguments[0]).getBoundingClientRect().top",
        vec![json!(css)],
    )
    .await
    .expect("measure")
    .as_f64()
    .unwrap_or_else(|| panic!("no {css}"))
}

/// Rough edges of the pages (issue 28, item 7): a form's error shows in that form, "Copy the
/// link" says what happened, Staku's board is turned for black, a spectator gets no move
/// box, and on a phone the clocks sit above the board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_links_boards_and_phones_read_well() {
    let Some((web, server)) = Web::with_server("web-forms-links-boards") else {
        return;
    };
    let base = page_base(&server);
    let [host, guest, watcher] = web.pages(["host", "guest", "watcher"]).await;

    host.goto(&format!("{base}/")).await.expect("lobby");
    until(&host, "the lobby", "return document.querySelector('#host') && document.querySelector('#link').textContent.startsWith('connected')").await;
    host.execute(
        "const f = document.querySelector('#host'); f.clock.value = '5+x'; f.querySelector('button[type=submit]').click();",
        vec![],
    )
    .await
    .expect("a bad clock");
    let error = until(
        &host,
        "the form's error",
        "const e = document.querySelector('#host .form-error'); return e && e.textContent",
    )
    .await;
    assert_eq!(
        error,
        "error input: clock '5+x': write 5+3, none, delay:5m/3s, byoyomi:10m/5x30s or corr:3d"
    );
    assert_eq!(text_of(&host, "#lobby-error").await, "");

    // Options are the game's own fields: Akron's size is a number, its delay a checkbox;
    // there is no key=value text field any more.
    host.execute(
        "const f = document.querySelector('#host'); f.kind.value = 'akron'; f.kind.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await
    .expect("choose Akron");
    until(
        &host,
        "Akron's option fields",
        "return document.querySelector('#host fieldset.options').dataset.kind === 'akron'",
    )
    .await;
    let fields = host
        .execute(
            "const f = document.querySelector('#host');
             return [f.querySelector('[data-option=size]').type, f.querySelector('[data-option=nodelay]').type, !!f.querySelector('[name=options]')];",
            vec![],
        )
        .await
        .expect("option fields");
    assert_eq!(fields, json!(["number", "checkbox", false]));

    let invite = host_room(&host, &base, "staku", "{}", "black", true).await;
    host.find(Locator::Css("#copy-link"))
        .await
        .expect("copy button")
        .click()
        .await
        .expect("click copy");
    let said = until(
        &host,
        "what copying did",
        "return document.querySelector('#copy-status').textContent",
    )
    .await;
    assert!(
        said == "Link copied."
            || said == "The link is selected: copy it with Ctrl+C (⌘C on a Mac).",
        "{said}"
    );

    open_invitation(&guest, &invite).await;
    let id = board_game_id(&guest).await;
    until(
        &host,
        "the host's board",
        "return document.querySelector('#board svg')",
    )
    .await;
    // Rows a (white's home) to g: black sees row a at the top, white at the bottom.
    let (a, g) = ("#board [data-cell^=\"a\"]", "#board [data-cell^=\"g\"]");
    assert!(
        top_of(&host, a).await < top_of(&host, g).await,
        "black's board is turned"
    );
    assert!(
        top_of(&guest, a).await > top_of(&guest, g).await,
        "white's board is not"
    );

    watcher
        .goto(&format!("{base}/g/{id}"))
        .await
        .expect("watch the game");
    until(
        &watcher,
        "the watcher's board",
        "return document.querySelector('#board svg')",
    )
    .await;
    let hidden = watcher
        .execute(
            "return document.querySelector('#move-form').offsetParent === null",
            vec![],
        )
        .await
        .expect("move form");
    assert_eq!(hidden, true, "a spectator gets no move box");
    let shown = host
        .execute(
            "return document.querySelector('#move-form').offsetParent !== null",
            vec![],
        )
        .await
        .expect("move form");
    assert_eq!(shown, true, "a player has one");

    guest.set_window_size(390, 844).await.expect("phone size");
    until(
        &guest,
        "a page as wide as the phone",
        "return document.documentElement.scrollWidth <= window.innerWidth + 1",
    )
    .await;
    assert!(
        top_of(&guest, "#players").await < top_of(&guest, "#board").await,
        "the clocks above the board"
    );
    for c in [host, guest, watcher] {
        let _ = c.close().await;
    }
}

/// An unknown path answers a page that says so (404), an unknown API path JSON, and the
/// icon browsers ask for is there (issue 28, item 7).
#[test]
fn unknown_paths_and_the_icon_are_answered() {
    let server = Server::start();
    let (status, body) = server.http_get("/favicon.ico");
    assert_eq!(status, 200);
    assert!(body.starts_with("<svg "), "{body}");
    let (status, body) = server.http_get("/no/such/page");
    assert_eq!(status, 404);
    assert!(body.contains("<h1>No such page</h1>"), "{body}");
    assert!(body.contains("<a href=\"/\">Go to the lobby</a>"), "{body}");
    let (status, body) = server.http_get("/api/nothing-here");
    assert_eq!(status, 404);
    assert_eq!(body, r#"{"error":"not_found"}"#);
}

/// The way back to one's games (issue 28, item 6): the lobby lists a player's unfinished
/// and finished games; a finished game's page steps through its positions, offers its
/// record and links the game's rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_leads_back_to_your_games_and_a_finished_game_replays() {
    let Some((web, server)) = Web::with_server("web-the-lobby-leads") else {
        return;
    };
    let base = page_base(&server);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let options = json!({"width":4,"height":3});
    let invite = host_room(&host, &base, "unane", &options.to_string(), "black", false).await;
    open_invitation(&guest, &invite).await;
    let id = board_game_id(&host).await;
    let script = both_act_once(&host, &guest, &options).await;
    let rules = until(
        &host,
        "the rules link",
        "const a = document.querySelector('#rules-link'); return a && a.getAttribute('href')",
    )
    .await;
    assert_eq!(rules, "/rules/unane");
    click_action(&host, "resign").await;
    host.accept_alert().await.expect("confirm the resignation");
    status_is(&host, "The game is over.").await;

    // A second game, left unfinished.
    let invite = host_room(&host, &base, "unane", &options.to_string(), "black", false).await;
    open_invitation(&guest, &invite).await;
    let open = until(
        &host,
        "the second game",
        &format!("const m = location.pathname.match(/^\\/g\\/(.+)$/); return m && m[1] !== '{id}' && m[1]"),
    )
    .await;
    let open = open.as_str().expect("id").to_string();
    host.goto(&format!("{base}/")).await.expect("lobby");
    until(
        &host,
        "the unfinished game listed",
        &format!("return document.querySelector('#my-games [data-game=\"{open}\"] a')"),
    )
    .await;
    let line = until(
        &host,
        "the finished game listed",
        &format!("const a = document.querySelector('#my-history [data-game=\"{id}\"] a'); return a && a.textContent"),
    )
    .await;
    assert!(
        line.as_str()
            .unwrap_or("")
            .ends_with("Black resigned — White wins"),
        "{line}"
    );
    host.find(Locator::Css(&format!("#my-history [data-game=\"{id}\"] a")))
        .await
        .expect("the finished game's link")
        .click()
        .await
        .expect("open it");
    let at = until(
        &host,
        "the replay bar",
        "const p = document.querySelector('#replay-ply'); return p && p.textContent",
    )
    .await;
    assert_eq!(at, "Position after 2 of 2 moves");
    host.find(Locator::Css("[data-replay=back]"))
        .await
        .expect("back")
        .click()
        .await
        .expect("click back");
    until(
        &host,
        "one move back",
        "return document.querySelector('#replay-ply').textContent === 'Position after 1 of 2 moves'",
    )
    .await;
    // The board shows the first move as the last one played.
    let last: Vec<String> = cells_in(&script.moves[0])
        .into_iter()
        .map(|c| c.to_lowercase())
        .collect();
    let shown = host
        .execute(
            "return [...document.querySelectorAll('#board .cell.last')].map(c => c.dataset.cell.toLowerCase())",
            vec![],
        )
        .await
        .expect("last cells");
    let mut shown: Vec<String> = serde_json::from_value(shown).expect("names");
    let mut want = last.clone();
    shown.sort();
    want.sort();
    assert_eq!(shown, want, "the board after one move");
    host.find(Locator::Css("#record-link"))
        .await
        .expect("record button")
        .click()
        .await
        .expect("download the record");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(text_of(&host, "#game-error").await, "");
    host.goto(&format!("{base}/rules/unane"))
        .await
        .expect("the rules");
    // The guide as a page, its positions drawn as boards (tests/tests/rules_pages.rs).
    let title = until(
        &host,
        "the guide",
        "const h = document.querySelector('main.rules h1'); \
         return document.querySelector('figure.diagram svg .cell') && h && h.textContent",
    )
    .await;
    assert_eq!(title, "Ūnane — a player's guide");
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// `GET /api/games/<id>/replay`: one state per position of a finished game, the first the
/// start (issue 28, item 6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_gives_every_position() {
    let server = Server::start();
    let mut t =
        stoa_tests::Table::open(&server, "unane", json!({"width":4,"height":3}), "public").await;
    let n = t.play_out(5, 6).await;
    let (status, body) = server.http_get(&format!("/api/games/{}/replay", t.game_id));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("json");
    let moves = v["moves"].as_array().expect("moves").len();
    assert!(moves >= n, "{v}");
    assert_eq!(v["states"].as_array().expect("states").len(), moves + 1);
    assert_eq!(
        v["states"][moves], t.host_doc.doc["state"],
        "the last is the end"
    );
    let (status, _) = server.http_get("/api/games/gnosuchgame00/replay");
    assert_eq!(status, 404);
}

/// Types `text` into the chat box `chat` of page `c` (`chat`: the game's beside the board,
/// `room-chat`: a waiting room's) and sends it.
async fn say_in(c: &Client, chat: &str, text: &str) {
    until(
        c,
        &format!("the {chat} box"),
        &format!("const i = document.querySelector('#{chat}-input'); return i && !i.disabled"),
    )
    .await;
    let input = c
        .find(Locator::Css(&format!("#{chat}-input")))
        .await
        .expect("chat input");
    input.send_keys(text).await.expect("type the line");
    c.find(Locator::Css(&format!("#{chat}-form button[type=submit]")))
        .await
        .expect("send button")
        .click()
        .await
        .expect("send");
}

/// The texts of the chat lines page `c` shows in `channel`'s list, as the page shows them.
async fn chat_texts(c: &Client, channel: &str) -> Value {
    c.execute(
        "return [...document.querySelectorAll(`#chat-${arguments[0]} .chat-text`)].map(e => e.textContent)",
        vec![json!(channel)],
    )
    .await
    .expect("read the chat")
}

/// Waits until page `c` shows `text` as a line of `channel`, visibly.
async fn chat_shows(c: &Client, channel: &str, text: &str) {
    until(
        c,
        &format!("the {channel} line {text:?}"),
        &format!(
            "const l = document.querySelector('#chat-{channel}');
             return l && !l.hidden && l.offsetParent !== null
               && [...l.querySelectorAll('.chat-text')].some(e => e.textContent === {} && e.offsetParent !== null)",
            json!(text)
        ),
    )
    .await;
}

/// Two players chat beside the board, a spectator chats in the spectators' chat (which
/// the players do not see while they play), markup and script in a line show as literal
/// text (no element made, no script run), and a player turning the spectators' chat off
/// disables the spectator's box with the reason said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_spectators_chat_and_markup_stays_text() {
    let Some((web, server)) = Web::with_server("web-players-and-spectators") else {
        return;
    };
    let base = page_base(&server);
    let ([host, guest], invite) = seated_tiny_unane(&web, &base).await;
    let watcher = web.page("watcher").await;
    // The game is full: the invitation lets a third browser watch.
    open_invitation(&watcher, &invite).await;
    until(
        &watcher,
        "the watched game",
        "return document.querySelector('#board svg') && document.querySelector('#heading').textContent.includes('watching')",
    )
    .await;
    assert_eq!(text_of(&watcher, "#chat-title").await, "Spectators' chat");
    assert_eq!(text_of(&host, "#chat-title").await, "Players' chat");

    say_in(&host, "chat", "good luck!").await;
    for c in [&host, &guest] {
        chat_shows(c, "players", "good luck!").await;
    }
    let evil =
        r#"<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> <b>bold</b>"#;
    say_in(&guest, "chat", evil).await;
    for c in [&host, &guest] {
        chat_shows(c, "players", evil).await;
    }
    say_in(&watcher, "chat", "nice <i>opening</i>").await;
    chat_shows(&watcher, "spectators", "nice <i>opening</i>").await;
    say_in(&guest, "chat", "thanks").await;
    chat_shows(&host, "players", "thanks").await;
    for c in [&host, &guest, &watcher] {
        // No markup of a line became an element, and no script ran.
        let made = c
            .execute(
                "return document.querySelectorAll('#chat img, #chat script, #chat b, #chat i').length",
                vec![],
            )
            .await
            .expect("count elements");
        assert_eq!(made, json!(0));
        let pwned = c
            .execute("return window.pwned === undefined", vec![])
            .await
            .expect("read window");
        assert_eq!(pwned, json!(true));
    }
    // Each side reads only its own channel while the game is on.
    assert_eq!(
        chat_texts(&host, "players").await,
        json!(["good luck!", evil, "thanks"])
    );
    assert_eq!(chat_texts(&host, "spectators").await, json!([]));
    assert_eq!(chat_texts(&watcher, "players").await, json!([]));
    assert_eq!(
        chat_texts(&watcher, "spectators").await,
        json!(["nice <i>opening</i>"])
    );
    screenshot(&guest, "chat").await;

    // The host turns the spectators' chat off: the spectator's box is disabled and says why.
    host.find(Locator::Css("#chat-spectators-on"))
        .await
        .expect("the switch")
        .click()
        .await
        .expect("turn spectators' chat off");
    until(
        &watcher,
        "the spectators' chat off",
        "return document.querySelector('#chat-input').disabled
           && document.querySelector('#chat-note').textContent.includes('The players turned the spectators\\' chat off.')",
    )
    .await;
    for c in [host, guest, watcher] {
        let _ = c.close().await;
    }
}

/// The rows of a table as the page shows them: each row's cells' text.
const TABLE_ROWS: &str = "const rows = [...document.querySelectorAll(arguments[0] + ' tbody tr')]; \
    return rows.length === arguments[1] && rows.map((r) => [...r.cells].map((c) => c.textContent.trim()))";

async fn table_rows(c: &Client, what: &str, css: &str, n: usize) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let v = c
            .execute(TABLE_ROWS, vec![json!(css), json!(n)])
            .await
            .unwrap_or(Value::Null);
        if v.is_array() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// After rated games, the leaderboard page lists the established players with the
/// figures the API gives, a name leads to the player's page (ratings per kind, the
/// provisional ones marked, recent games with their rating change), unknown players and
/// empty boards say so, and players' names link to their pages from a game and the lobby
/// (issue 28, "Ratings people can see").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_pages_and_leaderboards_show_the_ratings() {
    let Some((web, server)) = Web::with_server("web-player-pages-and") else {
        return;
    };
    let base = page_base(&server);
    let mut ann = stoa_tests::Client::guest(&server, "ann").await;
    let mut bob = stoa_tests::Client::guest(&server, "bob").await;
    let mut cy = stoa_tests::Client::guest(&server, "cy").await;
    stoa_tests::resigned_game(&server, &mut cy, &mut ann, true).await;
    let rated = stoa_tests::establish_ratings(&server, &mut ann, &mut bob).await;
    let casual = stoa_tests::resigned_game(&server, &mut ann, &mut bob, false).await;
    let live = stoa_tests::Table::open(
        &server,
        "unane",
        stoa_tests::quick_options("unane"),
        "public",
    )
    .await;
    let api = |path: String| {
        let (status, body) = server.http_get(&path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str::<Value>(&body).expect("json")
    };
    let ann_page = api(format!("/api/players/{}", ann.player_id));
    let board = api("/api/leaderboard/unane".into());
    assert_eq!(
        board["players"].as_array().map(Vec::len),
        Some(2),
        "{board}"
    );

    let page = web.page("page").await;
    page.goto(&format!("{base}/leaderboard/unane"))
        .await
        .expect("open the leaderboard");
    let rows = table_rows(&page, "the leaderboard", "#leaderboard", 2).await;
    let expected: Vec<Value> = board["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            json!([
                p["rank"].to_string(),
                p["name"],
                p["rating"].to_string(),
                p["games"].to_string()
            ])
        })
        .collect();
    assert_eq!(rows, Value::Array(expected));
    assert_eq!(rows[0][1], "ann", "two wins in three put ann first");
    let tab = until(
        &page,
        "the current kind's tab",
        "const a = document.querySelector('#kinds a[aria-current=\"page\"]'); return a && a.dataset.kind",
    )
    .await;
    assert_eq!(tab, "unane");
    screenshot(&page, "leaderboard").await;

    // A name leads to the player's page, inside the client.
    page.find(Locator::Css(&format!(
        "#leaderboard a[data-player=\"{}\"]",
        ann.player_id
    )))
    .await
    .expect("ann's name")
    .click()
    .await
    .expect("open ann's page");
    until(
        &page,
        "ann's page",
        &format!(
            "return location.pathname === '/p/{}' && document.querySelector('#ratings')",
            ann.player_id
        ),
    )
    .await;
    assert_eq!(text_of(&page, "#player-name").await, "ann");
    let ratings = table_rows(&page, "ann's ratings", "#ratings", 4).await;
    let r = &ann_page["ratings"];
    let mut expected = vec![json!([
        "Ūnane",
        r["unane"]["rating"].to_string(),
        format!("±{}", r["unane"]["deviation"]),
        r["unane"]["games"].to_string()
    ])];
    for title in ["Staku", "Akron", "Akunur"] {
        expected.push(json!([title, "1500?", "±350", "0"]));
    }
    assert_eq!(ratings, Value::Array(expected));
    // Her recent games, newest first: the casual one, then the last rated one with its
    // rating change, seen from her side.
    let recent = ann_page["recent"].as_array().expect("recent");
    let lines = until(
        &page,
        "ann's recent games",
        "const li = [...document.querySelectorAll('#recent li[data-game]')]; \
         return li.length === 10 && li.map((l) => [l.dataset.game, l.textContent])",
    )
    .await;
    assert_eq!(lines[0][0], casual.as_str());
    let g = &recent[1];
    assert_eq!(lines[1][0], rated.last().unwrap().as_str());
    let side = if g["players"]["white"]["id"] == ann.player_id.as_str() {
        "white"
    } else {
        "black"
    };
    let before = g["players"][side]["rating"]
        .as_i64()
        .expect("rating before");
    let after = g["ratings_after"][side].as_f64().expect("after").round() as i64;
    let result = if g["status"]["winner"] == side {
        "won"
    } else {
        "lost"
    };
    assert_eq!(
        lines[1][1],
        format!(
            "Ūnane as {side} vs bob · {result} by resignation · rated {before} → {after} ({:+}) · 2 moves · replay · record",
            after - before
        )
        .as_str()
    );
    let casual_line = lines[0][1].as_str().unwrap();
    assert!(casual_line.contains(" · casual · "), "{casual_line}");
    let hrefs = page
        .execute(
            "const li = document.querySelectorAll('#recent li[data-game]')[1]; \
             return [li.querySelector('a.player-link').getAttribute('href'), li.querySelector('a.game-link').getAttribute('href')]",
            vec![],
        )
        .await
        .expect("links");
    assert_eq!(
        hrefs,
        json!([
            format!("/p/{}", bob.player_id),
            format!("/g/{}", rated.last().unwrap())
        ])
    );
    screenshot(&page, "player-page").await;

    // A provisional rating is marked.
    page.goto(&format!("{base}/p/{}", cy.player_id))
        .await
        .expect("cy's page");
    let cy_rows = table_rows(&page, "cy's ratings", "#ratings", 4).await;
    let cy_rating = cy_rows[0][1].as_str().unwrap().to_string();
    assert!(
        cy_rating.ends_with('?') && cy_rating != "1500?",
        "{cy_rows}"
    );

    // What is not there says so.
    page.goto(&format!("{base}/p/nobody"))
        .await
        .expect("an unknown player");
    assert_eq!(text_of(&page, "h1").await, "No such player");
    page.goto(&format!("{base}/leaderboard/staku"))
        .await
        .expect("an empty board");
    let empty = until(
        &page,
        "the empty board",
        "const p = document.querySelector('#leaderboard-empty'); return p && p.textContent",
    )
    .await;
    assert_eq!(empty, "No established players in Staku yet.");

    // Players' names link to their pages from a game and from the lobby.
    let last = rated.last().unwrap();
    page.goto(&format!("{base}/g/{last}"))
        .await
        .expect("a finished game");
    let links = until(
        &page,
        "the players' links",
        "const a = [...document.querySelectorAll('#players a.player-link')]; \
         return a.length === 2 && a.map((l) => l.getAttribute('href')).sort()",
    )
    .await;
    let mut want = vec![
        format!("/p/{}", ann.player_id),
        format!("/p/{}", bob.player_id),
    ];
    want.sort();
    assert_eq!(links, json!(want));
    page.goto(&format!("{base}/")).await.expect("the lobby");
    let links = until(
        &page,
        "the live game's players",
        &format!(
            "const a = [...document.querySelectorAll('#games [data-game=\"{}\"] a.player-link')]; \
             return a.length === 2 && a.map((l) => l.getAttribute('href')).sort()",
            live.game_id
        ),
    )
    .await;
    let mut want = vec![
        format!("/p/{}", live.host.player_id),
        format!("/p/{}", live.guest.player_id),
    ];
    want.sort();
    assert_eq!(links, json!(want));
    let _ = page.close().await;
}

/// The player id a page keeps in its local storage (under whichever key it uses).
async fn page_player(c: &Client) -> String {
    until(
        c,
        "a stored identity",
        "for (const k of Object.keys(localStorage)) { \
           if (k.startsWith('stoa.identity')) { const id = JSON.parse(localStorage.getItem(k)); \
             if (id && id.id) return id.id; } } return null;",
    )
    .await
    .as_str()
    .expect("id")
    .to_string()
}

/// Opens (or closes and reopens, to refresh it) the Devices panel and waits for `n` devices.
async fn open_devices(c: &Client, n: usize) -> Vec<String> {
    c.execute(
        "const p = document.querySelector('#devices'); \
         if (!p.hidden) document.querySelector('#devices-button').click(); \
         document.querySelector('#device-list').replaceChildren(); \
         document.querySelector('#devices-button').click();",
        vec![],
    )
    .await
    .expect("open the devices panel");
    let rows = until(
        c,
        "the device list",
        &format!(
            "const rows = [...document.querySelectorAll('#device-list li')]; \
             return rows.length === {n} && rows.map((r) => r.innerText);"
        ),
    )
    .await;
    serde_json::from_value(rows).expect("rows")
}

/// Identity across devices (issue 28) in the browser: the Devices panel shows a one-time
/// code that a websocket client (another device) redeems to become the page's player, lists
/// both devices; and a code made by another device, typed into the panel, makes the page
/// that player (its name shows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_devices_panel_links_a_browser_and_another_device() {
    let Some((web, server)) = Web::with_server("web-the-devices-panel") else {
        return;
    };
    let base = page_base(&server);
    let page = web.page("page").await;
    page.goto(&base).await.expect("open the lobby");
    connected(&page, "connected").await;
    let page_id = page_player(&page).await;

    // The page shows a code; another device redeems it and is the page's player.
    assert_eq!(open_devices(&page, 1).await.len(), 1);
    page.find(Locator::Css("#link-show"))
        .await
        .expect("show-code button")
        .click()
        .await
        .expect("click");
    let code = until(
        &page,
        "a link code",
        "const t = document.querySelector('#link-code').textContent; return t.length === 8 && t;",
    )
    .await
    .as_str()
    .unwrap()
    .to_string();
    assert!(text_of(&page, "#devices-status")
        .await
        .starts_with("type this code on the other device within 5 min"));
    let mut other = stoa_tests::Client::guest(&server, "elsewhere").await;
    let got = other
        .request(json!({"t":"link.redeem","code":code,"device":"terminal"}))
        .await;
    assert_eq!(got["t"], "link.token", "{got}");
    assert_eq!(got["player_id"], page_id.as_str());
    let same = stoa_tests::Client::with_token(&server, got["token"].as_str().unwrap()).await;
    assert_eq!(same.player_id, page_id);
    let rows = open_devices(&page, 2).await;
    assert!(
        rows[0].starts_with("browser (Chrome) (this browser)"),
        "{rows:?}"
    );
    assert!(rows[1].starts_with("terminal "), "{rows:?}");
    screenshot(&page, "devices").await;

    // The other way: bea's device makes a code, typed into the page; the page becomes bea.
    let mut bea = stoa_tests::Client::guest(&server, "bea").await;
    let made = bea.request(json!({"t":"link.code"})).await;
    let code = made["code"].as_str().unwrap().to_lowercase();
    page.find(Locator::Css("#link-input"))
        .await
        .expect("code input")
        .send_keys(&code)
        .await
        .expect("type the code");
    page.find(Locator::Css("#link-form button[type=submit]"))
        .await
        .expect("use-code button")
        .click()
        .await
        .expect("click");
    // The page is a player already: it asks before becoming bea (issue 47).
    until(
        &page,
        "the question",
        "return document.querySelector('#link-confirm')",
    )
    .await;
    click(&page, "#link-confirm").await;
    until(
        &page,
        "the page to be bea",
        "return document.querySelector('#link').textContent === 'connected as bea' \
           && document.querySelector('#name').value === 'bea'",
    )
    .await;
    let said = text_of(&page, "#devices-status").await;
    assert!(
        said.starts_with("linked: this browser is now bea; guest-")
            && said.ends_with(" is kept under Previous identities"),
        "{said}"
    );
    assert_eq!(page_player(&page).await, bea.player_id);
    assert_ne!(bea.player_id, page_id);
    // Bea's list: her first device and this browser, which is the current one.
    let rows = open_devices(&page, 2).await;
    assert!(rows[0].starts_with("first device "), "{rows:?}");
    assert!(
        rows[1].starts_with("browser (Chrome) (this browser)"),
        "{rows:?}"
    );
    // A used code typed again is refused in words, and the page stays bea.
    page.find(Locator::Css("#link-input"))
        .await
        .expect("code input")
        .send_keys(&code)
        .await
        .expect("type the code");
    page.find(Locator::Css("#link-form button[type=submit]"))
        .await
        .expect("use-code button")
        .click()
        .await
        .expect("click");
    until(
        &page,
        "the refusal",
        "return document.querySelector('#devices-status').textContent === \
           'error not_found: unknown, expired or used link code'",
    )
    .await;
    assert_eq!(text_of(&page, "#link").await, "connected as bea");
    // Revoking bea's other device from the page: its token stops working.
    page.find(Locator::Css("#device-list li:first-child .device-revoke"))
        .await
        .expect("revoke button")
        .click()
        .await
        .expect("click");
    until(
        &page,
        "one device left",
        "return document.querySelector('#devices-status').textContent === 'revoked first device' \
           && document.querySelectorAll('#device-list li').length === 1",
    )
    .await;
    let mut c = stoa_tests::Client::connect(&server).await;
    let refused = c
        .request(json!({"t":"hello","protocol":1,"token":bea.token}))
        .await;
    assert_eq!(refused["code"], "unauthorized", "{refused}");
    let _ = page.close().await;
}

/// Waits until page `c` shows `text` as a visible line of the room chat.
async fn room_chat_shows(c: &Client, text: &str) {
    until(
        c,
        &format!("the room chat line {text:?}"),
        &format!(
            "const l = document.querySelector('#room-chat-lines');
             return l && l.offsetParent !== null
               && [...l.querySelectorAll('.chat-text')].some(e => e.textContent === {} && e.offsetParent !== null)",
            json!(text)
        ),
    )
    .await;
}

/// The host of a waiting room and a visitor who opened the invitation (and has not taken
/// the seat: the name form is still there) chat in the room; markup and script in a line
/// show as literal text; once the visitor gives a name the game starts as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_and_a_visitor_chat_in_the_waiting_room() {
    let Some((web, server)) = Web::with_server("web-the-host-and") else {
        return;
    };
    let base = page_base(&server);
    let [host, guest] = web.pages(["host", "guest"]).await;
    let invite = host_tiny_unane(&host, &base, "black").await;
    until(
        &host,
        "the host's room chat",
        "const n = document.querySelector('#room-chat-note'); return n && n.textContent === 'Nobody has said anything yet.'",
    )
    .await;
    guest.goto(&invite).await.expect("open the invitation");
    until(
        &guest,
        "the name form and the room chat",
        "return document.querySelector('#join-name') && document.querySelector('#room-chat')",
    )
    .await;

    let markup = r#"<img src=x onerror="window.__pwned=1"><b>bold</b>"#;
    say_in(&guest, "room-chat", markup).await;
    for c in [&host, &guest] {
        room_chat_shows(c, markup).await;
        let made = c
            .execute(
                "const l = document.querySelector('#room-chat-lines');
                 return [l.querySelectorAll('img, b, script').length, window.__pwned === undefined]",
                vec![],
            )
            .await
            .expect("inspect the chat");
        assert_eq!(made, json!([0, true]), "markup became elements");
    }
    say_in(&host, "room-chat", "welcome, sit down when ready").await;
    room_chat_shows(&guest, "welcome, sit down when ready").await;
    // Still nobody in the seat: the host waits, the visitor's form is there.
    assert!(text_of(&host, "#hosted")
        .await
        .contains("is waiting for your opponent"));
    screenshot(&guest, "room-chat").await;

    guest
        .execute(
            "const f = document.querySelector('#join-name'); f.name.value = 'Dora'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("give a name");
    for c in [&host, &guest] {
        until(
            c,
            "the game with Dora",
            "const p = document.querySelector('#players'); return p && p.textContent.includes('White: Dora')",
        )
        .await;
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
}

/// Issue 28 item 7: a tall stack never hides its cell's name. A Staku board with a stack
/// of 3 to 5 tokens on every cell (3 is the rules' tallest; taller ones show that the pile
/// gets thinner, not taller), drawn by the page's own board module, both ways up: each
/// cell's name is clear of every token and height figure on the board, and it is
/// what the page shows at the name's centre (with every shape made hittable, so nothing
/// drawn later covers it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tall_stacks_leave_every_cell_name_readable() {
    let Some((web, server)) = Web::with_server("web-tall-stacks-leave") else {
        return;
    };
    let base = page_base(&server);
    let c = web.page("c").await;
    c.goto(&format!("{base}/")).await.expect("open the lobby");
    until(&c, "the page", "return document.querySelector('#main')").await;
    for flip in [false, true] {
        let result = c
            .execute_async(
                "const [flip, done] = arguments;
                 (async () => {
                   const m = await import('/assets/board.js');
                   const geo = await (await fetch('/api/kinds/staku?options=' + encodeURIComponent('{\"max_stack\":3}'))).json();
                   const g = geo.geometry || geo;
                   const stacks = ['white', 'black', 'neutral'];
                   const state = { cells: g.cells.map((_, i) => ({ tokens: [...Array(3 + (i % 3)).keys()].map((j) => stacks[(i + j) % 3]) })) };
                   let box = document.querySelector('#stack-test');
                   if (!box) {
                     box = document.createElement('div');
                     box.id = 'stack-test';
                     box.style.cssText = 'position:fixed;left:0;top:0;width:520px;background:#fff;z-index:9999';
                     document.body.append(box);
                   }
                   m.renderBoard(box, { kind: 'staku', geometry: geo, state, sides: ['white', 'black'],
                     last: ['d4'], selected: ['c3'], selectable: ['e5'], flip });
                   const svg = box.querySelector('svg');
                   const hit = document.createElement('style');
                   hit.textContent = '#stack-test svg * { pointer-events: auto !important; }';
                   document.head.append(hit);
                   const cells = [...svg.querySelectorAll('g.cell')];
                   // A cell's name is its group's last text; tokens are rects, heights texts.
                   const names = cells.map((k) => [...k.querySelectorAll(':scope > text')].pop());
                   const others = cells.flatMap((k) => [...k.querySelectorAll(':scope > rect, :scope > text')])
                     .filter((e) => !names.includes(e));
                   const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
                     && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
                   const problems = [];
                   for (const [i, name] of names.entries()) {
                     const want = cells[i].dataset.cell;
                     if (!name || name.textContent !== want) { problems.push(`${want}: no name`); continue; }
                     const r = name.getBoundingClientRect();
                     for (const o of others) {
                       if (overlap(r, o.getBoundingClientRect())) {
                         problems.push(`${want} overlaps ${o.tagName} of ${o.closest('g.cell').dataset.cell}`);
                       }
                     }
                     const top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
                     if (top !== name) problems.push(`${want} covered by ${top && top.tagName} ${top && top.textContent}`);
                   }
                   hit.remove();
                   done({ cells: cells.length, problems });
                 })().catch((e) => done({ error: String(e) }));",
                vec![json!(flip)],
            )
            .await
            .expect("draw the board");
        assert_eq!(result["cells"], 49, "{result}");
        assert_eq!(result["problems"], json!([]), "flip {flip}: {result}");
    }
    let _ = c.close().await;
}

/// The text of the standings row of the player named `name` on an arena page: its cells
/// joined by `|` (rank|player|score|sheet|performance), or `Null` while there is none.
async fn standing_of(c: &Client, name: &str) -> Value {
    let script = format!(
        "const r = [...document.querySelectorAll('#standings tbody tr')].find(tr => tr.cells[1] && tr.cells[1].textContent.startsWith({})); \
         return r ? [...r.cells].map(td => td.textContent.trim()).join('|') : null",
        json!(name)
    );
    c.execute(&script, vec![]).await.unwrap_or(Value::Null)
}

/// An arena from the lobby's form to its standings (issue 29): one browser creates a short
/// public arena, which the lobby of a second browser lists with a link; both open its
/// page and press Join; when it starts they are paired and the game page opens for both
/// (with a way back to the arena and, before one's first move, a Berserk button); one
/// plays a move, the other goes berserk and resigns, and the winner's row on the arena
/// page shows the 2 points of the win, live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_page_joins_pairs_plays_and_shows_the_standings_move() {
    let Some((web, server)) = Web::with_server_args("web-an-arena-page", CLIENT_LOOSE) else {
        return;
    };
    let base = page_base(&server);
    let [ada, bob] = web.pages(["ada", "bob"]).await;
    for (page, name) in [(&ada, "ada"), (&bob, "bob")] {
        page.goto(&format!("{base}/")).await.expect("lobby");
        until(page, "the lobby", "return document.querySelector('#arena-form') && document.querySelector('#link').textContent.startsWith('connected')").await;
        type_name(page, name).await;
        until(
            page,
            "the new name",
            &format!(
                "return document.querySelector('#link').textContent === 'connected as {name}'"
            ),
        )
        .await;
    }
    // Starts in 3 s, lasts 30 s, 15 s a side: pairing goes on until 15 s before the end.
    ada.execute(
        "const f = document.querySelector('#arena-form'); f.kind.value = 'unane'; f.clock.value = '0.25+0'; \
         f.name.value = 'Web arena'; f.starts.value = '0.05'; f.duration.value = '0.5'; f.querySelector('button[type=submit]').click();",
        vec![],
    )
    .await
    .expect("create the arena");
    let path = until(
        &ada,
        "the arena page",
        "return location.pathname.startsWith('/t/') && location.pathname",
    )
    .await;
    let path = path.as_str().expect("path").to_string();
    until(
        &ada,
        "the arena's name",
        "return document.querySelector('#arena-title').textContent === 'Web arena'",
    )
    .await;
    until(
        &ada,
        "the countdown to the start",
        "return document.querySelector('#arena-countdown').textContent.startsWith('Starts in')",
    )
    .await;
    // The other lobby lists it, live, with a link to its page.
    let listed = until(&bob, "the arena in the lobby", "const a = document.querySelector('#arenas li[data-arena] a'); return a && a.textContent === 'Web arena' && a.getAttribute('href')").await;
    assert_eq!(listed, path.as_str(), "the lobby links the arena's page");
    bob.find(Locator::Css("#arenas li[data-arena] a"))
        .await
        .expect("the arena link")
        .click()
        .await
        .expect("open the arena");
    until(&bob, "the arena page", "return document.querySelector('#arena-title') && document.querySelector('#arena-title').textContent === 'Web arena'").await;
    for page in [&ada, &bob] {
        click_action(page, "join").await;
        until(
            page,
            "the pause button",
            "return document.querySelector('[data-action=pause]')",
        )
        .await;
    }
    for name in ["ada", "bob"] {
        until(&ada, "both players in the standings", &format!(
            "return [...document.querySelectorAll('#standings tbody tr')].some(tr => tr.cells[1] && tr.cells[1].textContent.startsWith('{name}'))"
        ))
        .await;
    }
    // At the start the two are paired: both pages open the game.
    for page in [&ada, &bob] {
        until(page, "the arena game", "return location.pathname.startsWith('/g/') && document.querySelector('#players') && document.querySelector('#heading').textContent.includes('you play')").await;
        until(
            page,
            "the way back to the arena",
            "return document.querySelector('#arena-link')",
        )
        .await;
        until(
            page,
            "the berserk button",
            "return document.querySelector('[data-action=berserk]')",
        )
        .await;
    }
    let game = ada.current_url().await.expect("url").path().to_string();
    assert_eq!(
        game,
        bob.current_url().await.expect("url").path(),
        "both play the same game"
    );
    // Whoever moves first will win. The other first pauses (from the arena page, while the
    // game goes on), so that the two are not paired again at once when it ends.
    let ada_moves = until(&ada, "whose turn it is", "const s = document.querySelector('#status').textContent; return s.startsWith('Your turn') ? 'yes' : (s ? 'no' : null)").await == "yes";
    let (winner, loser, winner_name) = if ada_moves {
        (&ada, &bob, "ada")
    } else {
        (&bob, &ada, "bob")
    };
    loser
        .find(Locator::Css("#arena-link"))
        .await
        .expect("the arena link")
        .click()
        .await
        .expect("to the arena");
    click_action(loser, "pause").await;
    until(loser, "the join button again", "return document.querySelector('[data-action=join]') && document.querySelector('#arena-me').textContent.includes('Paused')").await;
    until(loser, "the link to one's game", "return [...document.querySelectorAll('#arena-controls a')].find(a => a.textContent === 'Your game')").await;
    loser
        .execute("[...document.querySelectorAll('#arena-controls a')].find(a => a.textContent === 'Your game').click()", vec![])
        .await
        .expect("back to the game");
    until(
        loser,
        "the game again",
        &format!(
            "return location.pathname === {} && document.querySelector('[data-action=berserk]')",
            json!(game)
        ),
    )
    .await;
    until(
        winner,
        "our turn",
        "return document.querySelector('#status').textContent.startsWith('Your turn')",
    )
    .await;
    let mv = until(winner, "a legal move", "const o = document.querySelector('#legal-list option:not([value=swap])'); return o && o.value").await;
    let before = moves_shown(winner).await;
    winner
        .execute(
            "const f = document.querySelector('#move-form'); f.move.value = arguments[0]; f.querySelector('button[type=submit]').click();",
            vec![mv],
        )
        .await
        .expect("play a move");
    wait_moves(loser, before + 1).await;
    until(
        winner,
        "no berserk after one's first move",
        "return !document.querySelector('[data-action=berserk]')",
    )
    .await;
    click_action(loser, "berserk").await;
    until(loser, "the berserk taken", "return !document.querySelector('[data-action=berserk]') && document.querySelector('[data-action=resign]')").await;
    click_action(loser, "resign").await;
    loser.accept_alert().await.expect("confirm the resignation");
    until(
        winner,
        "the end of the game",
        "return document.querySelector('#status').textContent.startsWith('The game is over') && document.querySelector('#arena-link')",
    )
    .await;
    // Back on the arena page, the win counts: 2 points, on the sheet as "2".
    winner
        .find(Locator::Css("#arena-link"))
        .await
        .expect("the arena link")
        .click()
        .await
        .expect("back to the arena");
    until(
        winner,
        "the arena page again",
        "return document.querySelector('#standings')",
    )
    .await;
    let deadline = Instant::now() + WAIT;
    loop {
        let row = standing_of(winner, winner_name).await;
        if let Some(r) = row.as_str() {
            let cells: Vec<&str> = r.split('|').collect();
            if cells.len() == 5 && cells[2] == "2" && cells[3].starts_with('2') {
                assert_eq!(cells[0], "1", "the winner leads: {r}");
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the winner's standing never showed 2 points: {row}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let loser_name = if winner_name == "ada" { "bob" } else { "ada" };
    let row = standing_of(winner, loser_name).await;
    let row = row.as_str().expect("the loser's row").to_string();
    assert_eq!(
        row.split('|').nth(2),
        Some("0"),
        "the loss scores nothing: {row}"
    );
    until(winner, "the countdown to the end", "const t = document.querySelector('#arena-countdown').textContent; return t.startsWith('Ends in') || t.startsWith('Finished')").await;
    screenshot(winner, "arena").await;
    let _ = ada.close().await;
    let _ = bob.close().await;
}

/// The "Create an arena" form takes a start time of the browser's clock, the minimum plies
/// before a draw scores and whether computer players may join; a computer-players arena
/// that is also rated is refused in the form, and nothing is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_arena_form_sets_a_start_time_draw_plies_and_computer_players() {
    let Some((web, server)) = Web::with_server("web-the-arena-form") else {
        return;
    };
    let base = page_base(&server);
    let page = web.page("page").await;
    page.goto(&format!("{base}/")).await.expect("lobby");
    until(&page, "the lobby", "return document.querySelector('#arena-form') && document.querySelector('#link').textContent.startsWith('connected')").await;
    // Rated with computer players: refused in the form.
    let refused = page
        .execute(
            "const f = document.querySelector('#arena-form'); f.kind.value = 'staku'; f.clock.value = '3+2'; \
             f.name.value = 'Bots rated'; f.rated.checked = true; f.bots.checked = true; \
             f.querySelector('button[type=submit]').click(); return f.querySelector('.form-error').textContent;",
            vec![],
        )
        .await
        .expect("submit");
    assert_eq!(
        refused,
        json!("computer players may join casual arenas only: untick rated or computer players")
    );
    // Ten minutes ahead on the browser's clock, to the minute, as the input takes it.
    let at = page
        .execute(
            "const f = document.querySelector('#arena-form'); const t = new Date(Date.now() + 600000); \
             t.setSeconds(0, 0); const p = (n) => String(n).padStart(2, '0'); \
             f.at.value = `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}`; \
             f.rated.checked = false; f.name.value = 'Form arena'; f.min_draw.value = '6'; \
             f.querySelector('button[type=submit]').click(); return t.getTime();",
            vec![],
        )
        .await
        .expect("submit");
    let at = at.as_i64().expect("ms");
    let path = until(
        &page,
        "the arena page",
        "return location.pathname.startsWith('/t/') && location.pathname",
    )
    .await;
    let id = path
        .as_str()
        .expect("path")
        .trim_start_matches("/t/")
        .to_string();
    let (status, doc) = server.http_get(&format!("/api/arenas/{id}"));
    assert_eq!(status, 200, "{doc}");
    let doc: Value = serde_json::from_str(&doc).expect("JSON");
    assert_eq!(doc["name"], "Form arena");
    assert_eq!(doc["kind"], "staku");
    assert_eq!(doc["rated"], false);
    assert_eq!(doc["bots"], true, "{doc}");
    assert_eq!(doc["min_draw_plies"], 6, "{doc}");
    assert_eq!(doc["status"], "scheduled");
    // The browser and the server share this machine's clock.
    let starts = doc["starts_at"].as_i64().expect("starts_at");
    assert!(
        (starts - at).abs() < 2_000,
        "starts at {starts}, asked {at}"
    );
    // Only this one was created.
    let mut lobby = stoa_tests::Client::guest(&server, "look").await;
    let l = lobby.request(json!({"t":"lobby.watch"})).await;
    assert_eq!(
        l["doc"]["arenas"].as_object().map(|a| a.len()),
        Some(1),
        "{l}"
    );
}

/// A `404` page for people (issue 47, "Pages that never break"): the status, the words
/// `words`, the way back to the lobby, and none of the client (no board, no move box, no
/// chat: not even the script that would draw them).
fn assert_missing_page(path: &str, (status, body): (u16, String), words: &str) {
    assert_eq!(status, 404, "{path}: {body}");
    assert!(body.contains(words), "{path}: {body}");
    assert!(
        body.contains("<a href=\"/\">Go to the lobby</a>"),
        "{path}: {body}"
    );
    for markup in ["app.js", "board", "move", "chat"] {
        assert!(!body.contains(markup), "{path} has {markup}: {body}");
    }
}

/// Unknown games, rooms, arenas and players answer a `404` page that says what is not
/// there and leads back to the lobby; what exists is served the page; a private game with a
/// wrong code gets the very page an unknown id gets (issue 47, part 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_games_rooms_arenas_and_players_get_a_404_page() {
    let server = Server::start();
    let unknown = [
        (
            "/g/gzzzzzzzzzzzz",
            "<h1>No such game</h1>",
            "There is no game with the id &#39;gzzzzzzzzzzzz&#39;.",
        ),
        (
            "/r/NOPE",
            "<h1>No such room</h1>",
            "There is no room with the code &#39;NOPE&#39;.",
        ),
        (
            "/t/tzzzzzzzzzzzz",
            "<h1>No such arena</h1>",
            "There is no arena with the id &#39;tzzzzzzzzzzzz&#39;.",
        ),
        (
            "/p/pzzzzzzzzzzzz",
            "<h1>No such player</h1>",
            "There is no player with the id &#39;pzzzzzzzzzzzz&#39;.",
        ),
    ];
    for (path, heading, words) in unknown {
        let answer = server.http_get(path);
        assert_missing_page(path, answer.clone(), heading);
        assert_missing_page(path, answer, words);
    }

    // What exists: a private game (its players reload its page without the code; its code
    // opens it to anyone), its room (a started one, the code as typed in any case), its
    // players, an arena.
    let mut table =
        stoa_tests::Table::open(&server, "unane", json!({"width":4,"height":3}), "private").await;
    let arena = table
        .host
        .request(
            json!({"t":"arena.create","kind":"unane","duration_ms":60000,
            "starts_in_ms":60000,"clock":{"kind":"fischer","initial_ms":60000,"increment_ms":0}}),
        )
        .await;
    assert_eq!(arena["t"], "arena", "{arena}");
    let arena_id = arena["doc"]["id"].as_str().expect("arena id");
    let (id, code) = (table.game_id.clone(), table.code.clone());
    for path in [
        format!("/g/{id}"),
        format!("/g/{id}?code={code}"),
        format!("/g/{id}?code={}", code.to_lowercase()),
        format!("/r/{code}"),
        format!("/r/{}", code.to_lowercase()),
        format!("/p/{}", table.host.player_id),
        format!("/t/{arena_id}"),
    ] {
        let (status, body) = server.http_get(&path);
        assert_eq!(status, 200, "{path}: {body}");
        assert!(body.contains("/assets/app.js"), "{path}: {body}");
    }
    // A wrong code: exactly what an unknown id gets, so nothing says the game exists.
    let wrong = server.http_get(&format!("/g/{id}?code=WRONG2"));
    let (_, unknown_body) = server.http_get("/g/gzzzzzzzzzzzz");
    assert_eq!(wrong.0, 404);
    assert_eq!(wrong.1, unknown_body.replace("gzzzzzzzzzzzz", &id));
    // Still so once the game is over (a finished game is read from the store).
    table
        .host
        .request(json!({"t":"game.resign","game_id":id}))
        .await;
    let finished = server.http_get(&format!("/g/{id}?code=WRONG2"));
    assert_eq!(finished, wrong);
    assert_eq!(server.http_get(&format!("/g/{id}?code={code}")).0, 200);
    assert_eq!(server.http_get(&format!("/g/{id}")).0, 200);
}

/// An invitation to a room whose game has started offers to watch it, never to join; its
/// players go straight to their game; a code or game the page is sent to that does not
/// exist shows the same words as the server's `404` page (issue 47, part 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invitation_to_a_started_game_offers_to_watch_it() {
    let Some((web, server)) = Web::with_server("web-an-invitation-to") else {
        return;
    };
    let base = page_base(&server);
    let [host, stranger] = web.pages(["host", "stranger"]).await;
    let invite = host_tiny_unane(&host, &base, "white").await;
    let code = invite.rsplit('/').next().expect("code").to_string();
    let mut guest = stoa_tests::Client::guest(&server, "guest").await;
    let joined = guest.request(json!({"t":"room.join","code":code})).await;
    assert_eq!(joined["t"], "room", "{joined}");
    let started = guest.recv_where(|m| m["t"] == "game.started").await;
    let game_id = started["game_id"].as_str().expect("game id").to_string();
    until(
        &host,
        "the host's board",
        "return document.querySelector('#board svg')",
    )
    .await;

    // Someone new opens the invitation: no name form, no "Join the game".
    stranger.goto(&invite).await.expect("open the invitation");
    until(
        &stranger,
        "the started room",
        "const s = document.querySelector('#room-status'); return s && s.textContent === 'This game has started.'",
    )
    .await;
    let page = stranger
        .execute("return document.querySelector('#main').innerText", vec![])
        .await
        .expect("page text");
    let page = page.as_str().expect("text");
    assert!(!page.contains("Join the game"), "{page}");
    assert!(
        stranger.find(Locator::Css("#join-name")).await.is_err(),
        "no name form"
    );
    assert_eq!(text_of(&stranger, "#watch-game").await, "Watch");
    screenshot(&stranger, "started-room").await;
    stranger
        .find(Locator::Css("#watch-game"))
        .await
        .expect("watch button")
        .click()
        .await
        .expect("click watch");
    until(&stranger, "the game, watched", "return document.querySelector('#board svg') && document.querySelector('#heading').textContent.endsWith(' · watching')").await;
    let path = stranger
        .execute("return location.pathname + location.search", vec![])
        .await
        .expect("path");
    assert_eq!(path, format!("/g/{game_id}?code={code}"));

    // A player of the game goes straight back to it.
    host.goto(&invite)
        .await
        .expect("the host opens the invitation");
    until(
        &host,
        "the host's game",
        &format!(
            "return location.pathname === '/g/{game_id}' && document.querySelector('#board svg')"
        ),
    )
    .await;

    // Inside the page: a code typed in the lobby that is no room, a game that is no game.
    stranger.goto(&format!("{base}/")).await.expect("lobby");
    until(&stranger, "the lobby", "return document.querySelector('#joincode') && document.querySelector('#link').textContent.startsWith('connected')").await;
    stranger
        .execute(
            "const f = document.querySelector('#joincode'); f.code.value = 'NOPE'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("join by code");
    until(
        &stranger,
        "the missing room",
        "const h = document.querySelector('h1'); return h && h.textContent === 'No such room'",
    )
    .await;
    assert_eq!(
        text_of(&stranger, "#missing").await,
        "There is no room with the code 'NOPE'."
    );
    assert_eq!(
        text_of(&stranger, "#main a[href='/']").await,
        "Go to the lobby"
    );
    // The server's own page for an unknown game.
    stranger
        .goto(&format!("{base}/g/gzzzzzzzzzzzz"))
        .await
        .expect("an unknown game");
    assert_eq!(text_of(&stranger, "h1").await, "No such game");
    assert_eq!(
        text_of(&stranger, "#missing").await,
        "There is no game with the id 'gzzzzzzzzzzzz'."
    );
    let parts = stranger
        .execute(
            "return ['#board', '#move-form', '#chat', 'input'].filter(s => document.querySelector(s))",
            vec![],
        )
        .await
        .expect("parts");
    assert_eq!(parts, json!([]), "nothing of a game page");
    screenshot(&stranger, "no-such-game").await;
    stranger
        .find(Locator::Css("a[href='/']"))
        .await
        .expect("lobby link")
        .click()
        .await
        .expect("go to the lobby");
    until(
        &stranger,
        "the lobby",
        "return document.querySelector('#quick')",
    )
    .await;
    for c in [host, stranger] {
        let _ = c.close().await;
    }
}

/// The console entries that are errors of the page (not the browser's own lines about a
/// connection attempt failing while the server is down, which no page can prevent).
fn page_errors(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .filter(|m| {
            !(m.contains("net::ERR_CONNECTION_REFUSED")
                || (m.contains("WebSocket connection to") && m.contains("failed")))
        })
        .collect()
}

/// Across a server restart the page never sends into a closed socket: what it asks while
/// the server is away waits and goes out after the new `welcome`; the notice says what
/// happens in words; the console stays clean (issue 47, part 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_leaves_no_console_error_and_loses_no_request() {
    let Some(web) = Web::start("web-a-server-restart") else {
        return;
    };
    let redis = stoa_tests::redis::RedisServer::start();
    let args = redis.server_args("web-restart");
    let mut server = redis.start_server("web-restart");
    let addr = server.addr;
    let base = format!("http://{addr}");
    let [host, guest] = web.pages(["host", "guest"]).await;
    let hook = "window.__errors = window.__errors || [];
        window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
        window.addEventListener('unhandledrejection', (e) => window.__errors.push('unhandled: ' + JSON.stringify(e.reason)));";
    // The host plays black, which opens.
    let invite = host_tiny_unane(&host, &base, "black").await;
    // A newcomer gives a name (the page says hello again with it) and takes the seat.
    open_invitation(&guest, &invite).await;
    until(&guest, "the guest's board", "return document.querySelector('#board svg') && document.querySelector('#link').textContent.startsWith('connected as ')").await;
    for c in [&host, &guest] {
        c.execute(hook, vec![]).await.expect("hook errors");
    }
    let script = scripted_game("unane", &json!({"width":4,"height":3}), 1, 40);
    click_move(&host, &script.moves[0], 0).await;
    wait_moves(&guest, 1).await;

    server.kill9();
    until(
        &guest,
        "the reconnect notice",
        "return document.querySelector('#link').textContent === 'connection lost — reconnecting…'",
    )
    .await;
    // Asked while the server is away: a chat line, and a move.
    guest
        .execute(
            "const f = document.querySelector('#chat-form'); f.text.value = 'still here'; f.querySelector('button').click();",
            vec![],
        )
        .await
        .expect("say a line");
    let mv = script.moves[1].clone();
    guest
        .execute(
            "const f = document.querySelector('#move-form'); f.move.value = arguments[0]; f.querySelector('button').click();",
            vec![json!(mv)],
        )
        .await
        .expect("type a move");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut again = Command::new(stoa_tests::binary("stoa-server"))
        .args(["--listen", &addr.to_string()])
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server again");
    for c in [&host, &guest] {
        connected(c, "connected again").await;
    }
    // What waited went out: the line is said, the move played.
    chat_shows(&host, "players", "still here").await;
    wait_moves(&host, 2).await;
    assert_eq!(text_of(&guest, "#game-error").await, "");
    assert_eq!(text_of(&guest, "#chat-error").await, "");
    for c in [&host, &guest] {
        let log = web.driver.browser_log(c).await;
        // The log is read: it holds the browser's own lines about the reconnection
        // attempts made while the server was down.
        assert!(
            log.iter().any(|e| e["message"]
                .as_str()
                .is_some_and(|m| m.contains("WebSocket connection to"))),
            "{log:?}"
        );
        assert_eq!(page_errors(&log), Vec::<String>::new(), "{log:?}");
        let hooked = c
            .execute("return window.__errors", vec![])
            .await
            .expect("errors");
        assert_eq!(hooked, json!([]));
    }
    for c in [host, guest] {
        let _ = c.close().await;
    }
    let _ = again.kill();
    let _ = again.wait();
}

/// Each kind's move box shows an opening move in the kind's own notation, legal at the
/// start; once the game has ended, its page has no move box and no Play button (issue 47,
/// finding 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_boxes_speak_their_kind_and_an_ended_game_has_none() {
    let Some((web, server)) = Web::with_server("web-move-boxes-speak") else {
        return;
    };
    let base = page_base(&server);
    let page = web.page("page").await;
    let mut guest = stoa_tests::Client::guest(&server, "guest").await;
    let mut last = String::new();
    for kind in ["unane", "staku", "akron", "akunur"] {
        let invite = host_room(&page, &base, kind, "{}", "random", false).await;
        let code = invite.rsplit('/').next().expect("code");
        let joined = guest.request(json!({"t":"room.join","code":code})).await;
        assert_eq!(joined["t"], "room", "{joined}");
        let started = guest.recv_where(|m| m["t"] == "game.started").await;
        last = started["game_id"].as_str().expect("id").to_string();
        let placeholder = until(
            &page,
            "the move box",
            &format!("return location.pathname === '/g/{last}' && document.querySelector('#board svg') && !document.querySelector('#move-form').hidden && document.querySelector('#move-input').placeholder"),
        )
        .await;
        let placeholder = placeholder.as_str().expect("placeholder");
        let example = placeholder
            .strip_prefix("type a move, e.g. ")
            .unwrap_or_else(|| panic!("{kind}: {placeholder}"));
        let legal = stoa_protocol::kind(kind)
            .expect("kind")
            .start(&json!({}))
            .expect("start")
            .legal_notations();
        assert!(
            legal.iter().any(|m| m == example),
            "{kind}: {example} is not an opening move: {legal:?}"
        );
    }
    // The last game ends: the page of the ended game offers no move.
    let resigned = guest
        .request(json!({"t":"game.resign","game_id":last}))
        .await;
    assert_eq!(resigned["t"], "ok", "{resigned}");
    let no_move = "return !document.querySelector('#banner').hidden
        && document.querySelector('#move-form').offsetParent === null
        && ![...document.querySelectorAll('button')].some((b) => b.offsetParent !== null && /^(play|move)$/i.test(b.textContent.trim()))";
    until(&page, "the ended game without a move box", no_move).await;
    // As it is drawn from scratch, too.
    page.refresh().await.expect("reload");
    until(
        &page,
        "the board",
        "return document.querySelector('#board svg') && !document.querySelector('#banner').hidden",
    )
    .await;
    until(&page, "the reloaded ended game without a move box", no_move).await;
    screenshot(&page, "ended-game").await;
    let _ = page.close().await;
}

/// In a 1280x800 window the lobby shows "Your games" and "Live games" without scrolling,
/// each panel as tall as its lines (issue 47, finding 11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_shows_your_games_and_live_games_without_scrolling() {
    let Some((web, server)) = Web::with_server("web-the-lobby-shows") else {
        return;
    };
    let base = page_base(&server);
    // A live public game, so that "Live games" has a line.
    let _table =
        stoa_tests::Table::open(&server, "unane", json!({"width":4,"height":3}), "public").await;
    let page = web.page("page").await;
    page.set_window_size(1280, 800).await.expect("window size");
    page.goto(&format!("{base}/")).await.expect("lobby");
    until(&page, "the lobby with its live game", "return document.querySelector('#games li[data-game]') && document.querySelector('#link').textContent.startsWith('connected')").await;
    let boxes = page
        .execute(
            "const r = (s) => { const b = document.querySelector(s).closest('section').getBoundingClientRect(); return [b.top, b.bottom]; };
             return { mine: r('#my-games'), live: r('#games'), height: window.innerHeight, width: window.innerWidth };",
            vec![],
        )
        .await
        .expect("measure");
    let height = boxes["height"].as_f64().expect("height");
    assert!(
        height >= 600.0,
        "a 1280x800 window shows most of its height: {boxes}"
    );
    for panel in ["mine", "live"] {
        let (top, bottom) = (
            boxes[panel][0].as_f64().expect("top"),
            boxes[panel][1].as_f64().expect("bottom"),
        );
        assert!(
            top >= 0.0 && bottom <= height,
            "{panel} is in sight: {boxes}"
        );
        // Sized by its content: not stretched to a tall neighbour's height.
        assert!(
            bottom - top < 300.0,
            "{panel} is as tall as its lines: {boxes}"
        );
    }
    screenshot(&page, "lobby-1280x800").await;
    let _ = page.close().await;
}

/// Fills the fields of form `form` (css) from `fields` (`name` → value) and submits it.
async fn fill_and_submit(c: &Client, form: &str, fields: Value) {
    c.execute(
        "const f = document.querySelector(arguments[0]); \
         for (const [k, v] of Object.entries(arguments[1])) { \
           if (typeof v === 'boolean') f[k].checked = v; else f[k].value = v; } \
         f.querySelector('button[type=submit]').click();",
        vec![json!(form), fields],
    )
    .await
    .unwrap_or_else(|e| panic!("fill {form}: {e}"));
}

/// Clicks the element `css` of page `c`.
async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

/// Waits until `#link` says the page is connected as `name` (a prefix when it ends in `-`).
async fn connected_as(c: &Client, name: &str) {
    until(
        c,
        &format!("connected as {name}"),
        &format!(
            "const t = document.querySelector('#link').textContent; \
             return {} ;",
            if name.ends_with('-') {
                format!("t.startsWith('connected as {name}')")
            } else {
                format!("t === 'connected as {name}'")
            }
        ),
    )
    .await;
}

/// Accounts from the top bar (issue 47, item 1): a guest's own page says it is not claimed;
/// the claim form checks its two passwords in the page, then claims; the top bar shows the
/// account and the page says "Claimed account". A second browser (its own profile) is
/// refused a wrong password in words, signs in and is the same player (its guest is kept
/// under Previous identities); it changes the password, signs out (a new guest, no error)
/// and signs in again with the new password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_and_sign_in_from_the_top_bar() {
    let Some((web, server)) = Web::with_server("web-claim-and-sign") else {
        return;
    };
    let base = page_base(&server);
    let [a, b] = web.pages(["a", "b"]).await;
    a.goto(&base).await.expect("open the lobby");
    connected_as(&a, "guest-").await;
    let a_id = page_player(&a).await;
    assert_eq!(text_of(&a, "#sign-in-button").await, "Sign in");
    assert_eq!(text_of(&a, "#claim-button").await, "Claim your account");

    // One's own page, before the claim.
    click(&a, "#my-page").await;
    let line = until(
        &a,
        "the claim line",
        "const p = document.querySelector('#player-account'); return p && p.textContent;",
    )
    .await;
    assert_eq!(
        line,
        "Guest: not claimed yet — claim it so it cannot be lost. Claim your account"
    );

    // The claim form, opened from the page's own button; two different passwords are refused
    // by the page itself.
    click(&a, "#player-claim").await;
    fill_and_submit(
        &a,
        "#claim-form",
        json!({"name": "Alice", "password": "correct horse", "repeat": "correct hose"}),
    )
    .await;
    assert_eq!(
        text_of(&a, "#claim-form .form-error").await,
        "The two passwords differ: type the same password twice."
    );
    a.execute(
        "const f = document.querySelector('#claim-form'); f.repeat.value = 'correct horse';",
        vec![],
    )
    .await
    .expect("type the password again");
    screenshot(&a, "account-claim-form").await;
    a.execute(
        "document.querySelector('#claim-form button[type=submit]').click()",
        vec![],
    )
    .await
    .expect("claim");
    until(
        &a,
        "the account in the top bar",
        "return document.querySelector('#account-name').textContent === 'Account: Alice' \
           && !document.querySelector('#account-name').hidden \
           && document.querySelector('#account').hidden \
           && document.querySelector('#sign-in-button').hidden \
           && !document.querySelector('#sign-out-button').hidden \
           && document.querySelector('#name').readOnly \
           && document.querySelector('#name').value === 'Alice'",
    )
    .await;
    until(
        &a,
        "the page says claimed",
        "const p = document.querySelector('#player-account'); \
         return p && p.textContent === 'Claimed account' \
           && document.querySelector('#player-name').textContent === 'Alice';",
    )
    .await;
    assert_eq!(text_of(&a, "#link").await, "connected as Alice");
    screenshot(&a, "account-claimed").await;

    // A second browser: a wrong password, in words, in the form.
    b.goto(&base).await.expect("open the lobby");
    connected_as(&b, "guest-").await;
    let b_guest = page_player(&b).await;
    click(&b, "#sign-in-button").await;
    fill_and_submit(
        &b,
        "#sign-in-form",
        json!({"name": "alice", "password": "not the password"}),
    )
    .await;
    until(
        &b,
        "the refusal",
        "return document.querySelector('#sign-in-form .form-error').textContent === 'Wrong name or password.'",
    )
    .await;
    screenshot(&b, "account-sign-in-refused").await;
    assert_eq!(page_player(&b).await, b_guest);
    // The right password: the same player as the first browser.
    fill_and_submit(
        &b,
        "#sign-in-form",
        json!({"name": "alice", "password": "correct horse"}),
    )
    .await;
    connected_as(&b, "Alice").await;
    until(
        &b,
        "the same player",
        &format!(
            "const id = JSON.parse(localStorage.getItem('stoa.identity.' + \
               document.querySelector('meta[name=stoa-deployment]').content)); \
             return id && id.id === '{a_id}' \
               && document.querySelector('#account-name').textContent === 'Account: Alice';"
        ),
    )
    .await;
    // The guest it was is kept, with a way back.
    click(&b, "#devices-button").await;
    let kept = until(
        &b,
        "the previous identities",
        "const rows = [...document.querySelectorAll('#previous-list li')]; \
         return !document.querySelector('#previous-box').hidden && rows.length === 1 && rows[0].dataset.player;",
    )
    .await;
    assert_eq!(kept, b_guest.as_str());
    click(&b, "#devices-button").await;

    // A new password (other devices stay signed in), then signing out here.
    click(&b, "#password-button").await;
    fill_and_submit(
        &b,
        "#password-form",
        json!({"current": "correct horse", "new": "battery staple", "repeat": "battery staple", "others": false}),
    )
    .await;
    until(
        &b,
        "the password changed",
        "return document.querySelector('#account-status').textContent === 'Password changed.'",
    )
    .await;
    b.execute("window.confirm = () => true;", vec![])
        .await
        .expect("answer the confirmation");
    click(&b, "#sign-out-button").await;
    connected_as(&b, "guest-").await;
    until(
        &b,
        "signed out in words",
        "return document.querySelector('#account-status').textContent === \
           'Signed out: this browser is a new guest now; sign in to play as Alice again.' \
           && !document.querySelector('#sign-in-button').hidden \
           && !document.querySelector('#name').readOnly",
    )
    .await;
    let guest_again = page_player(&b).await;
    assert_ne!(guest_again, a_id);
    let shown = text_of(&b, "#notice").await;
    assert!(shown.is_empty(), "no error shown: {shown}");
    assert!(b
        .execute("return document.querySelector('#lost').hidden", vec![])
        .await
        .expect("lost notice")
        .as_bool()
        .unwrap());
    // The first browser is still Alice; the new password signs in.
    assert_eq!(text_of(&a, "#link").await, "connected as Alice");
    click(&b, "#sign-in-button").await;
    fill_and_submit(
        &b,
        "#sign-in-form",
        json!({"name": "Alice", "password": "battery staple"}),
    )
    .await;
    connected_as(&b, "Alice").await;
    assert_eq!(page_player(&b).await, a_id);
    let _ = a.close().await;
    let _ = b.close().await;
}

/// A guest who types the name of someone's claimed account is told so where the name is
/// typed, once (no loop), and stays connected under the name it had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_name_typed_by_a_guest_is_refused_in_words() {
    let Some((web, server)) = Web::with_server("web-a-claimed-name") else {
        return;
    };
    let base = page_base(&server);
    let mut alice = stoa_tests::Client::guest(&server, "alice").await;
    let got = alice
        .request(json!({"t":"account.claim","name":"Alice","password":"correct horse"}))
        .await;
    assert_eq!(got["name"], "Alice", "{got}");
    let page = web.page("page").await;
    page.goto(&base).await.expect("open the lobby");
    connected_as(&page, "guest-").await;
    let before = text_of(&page, "#link").await;
    type_name(&page, "ALICE").await;
    until(
        &page,
        "the refusal",
        "return document.querySelector('#account-status').textContent === \
           \"The name 'ALICE' belongs to a claimed account: sign in, or choose another name.\"",
    )
    .await;
    connected_as(&page, "guest-").await;
    assert_eq!(text_of(&page, "#link").await, before);
    assert!(text_of(&page, "#notice").await.is_empty());
    let _ = page.close().await;
}

/// A server that restarted without storage (issue 47, item 1): the open page says in words
/// that the server does not know it any more, asks for a name (the old one offered), and
/// keeps the unknown token under its deployment's `previous` list; a page opened after
/// another such restart says the same. The old identity stays in the browser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forgot_its_players_says_so_and_the_old_identity_is_kept() {
    let Some(web) = Web::start("web-a-server-that") else {
        return;
    };
    let mut server = Server::start();
    let addr = server.addr;
    let base = format!("http://{addr}");
    let page = web.page("page").await;
    page.goto(&base).await.expect("open the lobby");
    connected_as(&page, "guest-").await;
    type_name(&page, "Bob").await;
    connected_as(&page, "Bob").await;
    let deployment = page
        .execute(
            "return document.querySelector('meta[name=stoa-deployment]').content",
            vec![],
        )
        .await
        .expect("deployment");
    let deployment = deployment.as_str().unwrap().to_string();
    let old = stored_identity(&page, &deployment).await;
    let old_token = old["token"].as_str().expect("a token").to_string();

    server.terminate();
    let restart = || {
        Command::new(stoa_tests::binary("stoa-server"))
            .args(["--listen", &addr.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server again")
    };
    let mut again = restart();
    let text = until(
        &page,
        "the notice",
        "const n = document.querySelector('#lost'); return !n.hidden && document.querySelector('#lost-text').textContent;",
    )
    .await;
    let text = text.as_str().unwrap();
    assert!(
        text.starts_with("This server does not know you any more: it forgot its players when it restarted without storage"),
        "{text}"
    );
    assert!(text.contains("You were Bob"), "{text}");
    until(
        &page,
        "the name asked, the old one offered",
        "const f = document.querySelector('#lost-form'); \
         return document.activeElement === f.name && f.name.value === 'Bob';",
    )
    .await;
    connected_as(&page, "guest-").await;
    screenshot(&page, "account-forgotten").await;
    // The unknown token is kept, under the deployment it belonged to.
    let kept = page
        .execute(
            "return JSON.parse(localStorage.getItem('stoa.previous.' + arguments[0]))",
            vec![json!(deployment)],
        )
        .await
        .expect("previous list");
    assert_eq!(kept[0]["token"], old_token.as_str(), "{kept}");
    assert_eq!(kept[0]["name"], "Bob", "{kept}");
    // The name given: the page goes on as Bob, the notice goes.
    page.execute(
        "document.querySelector('#lost-form button[type=submit]').click()",
        vec![],
    )
    .await
    .expect("use the name");
    connected_as(&page, "Bob").await;
    until(
        &page,
        "the notice gone",
        "return document.querySelector('#lost').hidden",
    )
    .await;
    assert!(text_of(&page, "#notice").await.is_empty());

    // Another restart while no page is open: the page opened afterwards says the same.
    page.goto("about:blank").await.expect("leave the page");
    let _ = Command::new("kill")
        .args(["-TERM", &again.id().to_string()])
        .status();
    let _ = again.wait();
    let mut third = restart();
    page.goto(&base).await.expect("open the lobby again");
    let text = until(
        &page,
        "the notice on load",
        "const n = document.querySelector('#lost'); return !n.hidden && document.querySelector('#lost-text').textContent;",
    )
    .await;
    assert!(
        text.as_str()
            .unwrap()
            .starts_with("This server does not know you any more"),
        "{text}"
    );
    connected_as(&page, "guest-").await;
    // Neither earlier identity was deleted.
    let kept = page
        .execute(
            "return JSON.parse(localStorage.getItem('stoa.previous.' + arguments[0]))",
            vec![json!(deployment)],
        )
        .await
        .expect("previous list");
    assert_eq!(kept[0]["token"], old_token.as_str(), "{kept}");
    let _ = page.close().await;
    let _ = third.kill();
    let _ = third.wait();
}

/// The device page's rule (issue 47, item 1): a code typed on a browser that already is a
/// player asks first, in words; "Stay" changes nothing; "Continue" makes the page the other
/// player and keeps the one it was under Previous identities, with a Switch back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linking_a_browser_that_is_someone_asks_first_and_can_switch_back() {
    let Some((web, server)) = Web::with_server("web-linking-a-browser") else {
        return;
    };
    let base = page_base(&server);
    let page = web.page("page").await;
    page.goto(&base).await.expect("open the lobby");
    connected_as(&page, "guest-").await;
    type_name(&page, "Bob").await;
    connected_as(&page, "Bob").await;
    let bob = page_player(&page).await;
    let mut alice = stoa_tests::Client::guest(&server, "Alice").await;
    let type_code = |code: String| {
        let page = &page;
        async move {
            page.execute(
                "document.querySelector('#link-input').value = arguments[0]; \
                 document.querySelector('#link-form button[type=submit]').click();",
                vec![json!(code)],
            )
            .await
            .expect("type the code");
        }
    };
    click(&page, "#devices-button").await;
    let made = alice.request(json!({"t":"link.code"})).await;
    type_code(made["code"].as_str().unwrap().to_string()).await;
    until(
        &page,
        "the question",
        "return document.querySelector('#devices-status').textContent === \
           'This browser is Bob. Linking makes it Alice; Bob stays reachable only if Bob has another device or a claimed account. Continue? Continue Stay Bob';",
    )
    .await;
    screenshot(&page, "account-link-confirm").await;
    click(&page, "#link-cancel").await;
    assert_eq!(
        text_of(&page, "#devices-status").await,
        "not linked: this browser stays Bob"
    );
    assert_eq!(text_of(&page, "#link").await, "connected as Bob");
    assert_eq!(page_player(&page).await, bob);

    let made = alice.request(json!({"t":"link.code"})).await;
    type_code(made["code"].as_str().unwrap().to_string()).await;
    until(
        &page,
        "the question again",
        "return document.querySelector('#link-confirm')",
    )
    .await;
    click(&page, "#link-confirm").await;
    connected_as(&page, "Alice").await;
    assert_eq!(page_player(&page).await, alice.player_id);
    // Bob is kept: the list shows him with a Switch button, which makes the page Bob again.
    click(&page, "#devices-button").await;
    click(&page, "#devices-button").await;
    let row = until(
        &page,
        "Bob among the previous identities",
        "const rows = [...document.querySelectorAll('#previous-list li')]; \
         return rows.length === 1 && rows[0].innerText;",
    )
    .await;
    assert_eq!(row, format!("Bob (player {bob}) Switch"));
    click(&page, "#previous-list li .previous-switch").await;
    connected_as(&page, "Bob").await;
    assert_eq!(page_player(&page).await, bob);
    // And Alice is kept in turn.
    let row = until(
        &page,
        "Alice among the previous identities",
        "const rows = [...document.querySelectorAll('#previous-list li')]; \
         return rows.length === 1 && rows[0].dataset.player;",
    )
    .await;
    assert_eq!(row, alice.player_id.as_str());
    let _ = page.close().await;
}

/// A short Ūnane 4x3 arena (3 s a side, so pairing goes on until 3 s before its end)
/// created by `by`, starting in `starts_in_ms` and lasting 10 s: its id.
async fn short_arena(by: &mut stoa_tests::Client, name: &str, starts_in_ms: u64) -> String {
    let created = by
        .request(
            json!({"t":"arena.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"fischer","initial_ms":3000,"increment_ms":0},
            "starts_in_ms":starts_in_ms,"duration_ms":10000,"name":name}),
        )
        .await;
    assert_eq!(created["t"], "arena", "{created}");
    created["doc"]["id"].as_str().expect("id").to_string()
}

/// Waits for the arena game `c` is paired in: its id and `c`'s side.
async fn arena_game(c: &mut stoa_tests::Client) -> (String, String) {
    let started = c.recv_where(|m| m["t"] == "game.started").await;
    (
        started["game_id"].as_str().expect("game id").to_string(),
        started["side"].as_str().expect("side").to_string(),
    )
}

/// An arena's page through to its end (issue 47, finding 1): the heading says "1 player"
/// while one has joined; the fire mark (two wins in a row) is an inline SVG, not an emoji a
/// system without an emoji font cannot show; a paused player is marked paused while the
/// arena runs, never after its end; the final standings announce the winner, then second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_arena_announces_its_podium_and_draws_its_fire_mark() {
    let mut args = stoa_tests::LOOSE.to_vec();
    args.extend(["--queue-wave-ms", "200"]);
    let Some((web, server)) = Web::with_server_args("web-a-finished-arena", &args) else {
        return;
    };
    let base = page_base(&server);
    let mut bob = stoa_tests::Client::guest(&server, "bob").await;
    let mut cy = stoa_tests::Client::guest(&server, "cy").await;
    let id = short_arena(&mut bob, "Podium", 5000).await;
    let page = web.page("page").await;
    page.goto(&format!("{base}/t/{id}"))
        .await
        .expect("arena page");
    until(
        &page,
        "the arena page",
        "return document.querySelector('#arena-title').textContent === 'Podium'",
    )
    .await;
    let heading = "document.querySelector('#arena-heading').textContent";
    let ok = |a: Value| assert_eq!(a["t"], "ok", "{a}");
    ok(bob.request(json!({"t":"arena.join","id":id})).await);
    let one = until(
        &page,
        "one player",
        &format!("return {heading}.includes(' · 1 player · ') && {heading}"),
    )
    .await;
    assert!(!one.as_str().unwrap().contains("players"), "{one}");
    ok(cy.request(json!({"t":"arena.join","id":id})).await);
    until(
        &page,
        "two players",
        &format!("return {heading}.includes(' · 2 players · ')"),
    )
    .await;
    // bob wins two games (cy resigns each): on fire. cy leaves the pool during the second,
    // so that nobody is paired after it.
    for round in 0..2 {
        let (game, _) = arena_game(&mut bob).await;
        let (also, _) = arena_game(&mut cy).await;
        assert_eq!(game, also);
        if round == 1 {
            ok(cy.request(json!({"t":"arena.pause","id":id})).await);
        }
        ok(cy.request(json!({"t":"game.resign","game_id":game})).await);
    }
    let (bob_id, cy_id) = (bob.player_id.clone(), cy.player_id.clone());
    let fire = until(
        &page,
        "bob's fire mark",
        &format!(
            "const f = document.querySelector('#standings tr[data-player=\"{bob_id}\"] .fire svg'); \
             if (!f) return null; const r = f.getBoundingClientRect(); return [r.width, r.height]"
        ),
    )
    .await;
    assert!(
        fire[0].as_f64().unwrap() > 0.0 && fire[1].as_f64().unwrap() > 0.0,
        "drawn: {fire}"
    );
    let emoji = page
        .execute(
            "return document.body.textContent.includes('\u{1F525}')",
            vec![],
        )
        .await
        .expect("text");
    assert_eq!(emoji, json!(false), "no emoji anywhere on the page");
    until(
        &page,
        "cy paused while the arena runs",
        &format!("return document.querySelector('#standings tr[data-player=\"{cy_id}\"]').textContent.includes('(paused)')"),
    )
    .await;
    // The end: the podium, and nobody paused any more.
    let winner = until(
        &page,
        "the winner",
        "const w = document.querySelector('#arena-winner'); return w && w.textContent",
    )
    .await;
    assert_eq!(winner, "bob wins the arena");
    let places = page
        .execute(
            "return [...document.querySelectorAll('#arena-podium li')].map((li) => li.textContent)",
            vec![],
        )
        .await
        .expect("podium");
    assert_eq!(
        places,
        json!(["Winner: bob with 4 points", "2nd: cy with 0 points"])
    );
    let standings = text_of(&page, "#standings").await;
    assert!(!standings.contains("(paused)"), "{standings}");
    assert!(
        text_of(&page, "#arena-countdown")
            .await
            .starts_with("Finished"),
        "the final standings"
    );
    screenshot(&page, "arena-podium").await;
    let _ = page.close().await;
}

/// A browser player whose first move in an arena game never came (issue 47, finding 1):
/// the game's banner says the arena paused them and how to come back (Join on the arena's
/// page), as the server did; the arena page then offers Join.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_player_without_a_first_move_is_told_they_are_paused() {
    let mut args = stoa_tests::LOOSE.to_vec();
    args.extend(["--queue-wave-ms", "200", "--first-action-ms", "2000"]);
    let Some((web, server)) = Web::with_server_args("web-an-arena-player", &args) else {
        return;
    };
    let base = page_base(&server);
    let mut bob = stoa_tests::Client::guest(&server, "bob").await;
    let id = short_arena(&mut bob, "Absent", 4000).await;
    let page = web.page("page").await;
    page.goto(&format!("{base}/t/{id}"))
        .await
        .expect("arena page");
    until(&page, "the arena page", "return document.querySelector('#arena-title').textContent === 'Absent' && document.querySelector('[data-action=join]')").await;
    click_action(&page, "join").await;
    until(
        &page,
        "joined",
        "return document.querySelector('[data-action=pause]')",
    )
    .await;
    let joined = bob.request(json!({"t":"arena.join","id":id})).await;
    assert_eq!(joined["t"], "ok", "{joined}");
    let (game, bob_side) = arena_game(&mut bob).await;
    // bob makes his first move when he is first (`game.legal` lists the side to act's
    // moves, whoever asks); the browser never moves.
    let snap = bob
        .recv_where(|m| m["t"] == "game.snapshot" && m["game_id"] == game.as_str())
        .await;
    let bob_first = snap["doc"]["to_act"] == bob_side.as_str();
    let legal = bob.request(json!({"t":"game.legal","game_id":game})).await;
    if let Some(mv) = legal["moves"][0].as_str().filter(|_| bob_first) {
        let moved = bob
            .request(json!({"t":"game.move","game_id":game,"move":mv}))
            .await;
        assert_eq!(moved["t"], "ok", "{moved}");
    }
    let absent = if bob_side == "white" {
        "Black"
    } else {
        "White"
    };
    let banner = until(&page, "the abort banner", "const b = document.querySelector('#banner'); return b && !b.hidden && b.textContent.startsWith('Game aborted') && b.textContent").await;
    assert_eq!(
        banner,
        format!("Game aborted: {absent} did not make a first move within 2 s. You are paused in the arena: go back to the arena and press Join to be paired again").as_str()
    );
    page.find(Locator::Css("#arena-link"))
        .await
        .expect("the arena link")
        .click()
        .await
        .expect("to the arena");
    until(&page, "the join button again", "return document.querySelector('[data-action=join]') && document.querySelector('#arena-me').textContent.includes('Paused')").await;
    let _ = page.close().await;
}

/// Clicks the cells of `mv` on a lesson's board, then its button when several moves fit
/// those cells (or it names none); the try is sent either way.
async fn click_lesson_move(c: &Client, mv: &str) {
    until(c, "the step's legal moves", "return document.querySelector('#board .cell.selectable') !== null || document.querySelector('#candidates [data-move]') !== null").await;
    let before = text_of(c, "#status").await;
    for cell in cells_in(mv) {
        let css = format!("#board [data-cell=\"{cell}\" i]");
        let target = c
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("{mv}: no element for {cell}: {e}"));
        c.execute(
            "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
            vec![serde_json::to_value(&target).expect("element")],
        )
        .await
        .expect("click by script");
    }
    let button = format!("#candidates [data-move=\"{mv}\"]");
    let deadline = Instant::now() + WAIT;
    loop {
        if text_of(c, "#status").await != before {
            return;
        }
        if let Ok(b) = c.find(Locator::Css(&button)).await {
            b.click().await.expect("click the move's button");
            return;
        }
        assert!(Instant::now() < deadline, "{mv}: neither sent nor offered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every lesson learnt by clicking: each step's right move (found with the engines, as the
/// page's server finds it) moves on, and a wrong first try shows the step's first hint.
/// The lesson list then shows every step done; `learn-<kind>.png` is a step of each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lesson_is_learnt_by_clicking_and_a_wrong_try_gets_a_hint() {
    let Some((web, server)) = Web::with_server("web-lessons") else {
        return;
    };
    let base = page_base(&server);
    let c = web.page("learner").await;
    for kind in stoa_protocol::lessons::kinds() {
        let lesson = stoa_protocol::lessons::lesson(kind).expect("lesson");
        c.goto(&format!("{base}/learn/{kind}"))
            .await
            .expect("lesson page");
        connected(&c, "the lesson page").await;
        let n = lesson.steps.len();
        for (i, step) in lesson.steps.iter().enumerate() {
            let title = format!("Step {} of {n}: {}", i + 1, step.title);
            let script = format!(
                "return document.querySelector('#step-title').textContent === {}",
                json!(title)
            );
            until(&c, &title, &script).await;
            let legal = step.game(kind).expect("step").legal_notations();
            let right = legal
                .iter()
                .find(|m| step.attempt(kind, m).expect("legal").done)
                .expect("a right move");
            if i == 0 {
                let wrong = legal
                    .iter()
                    .find(|m| !step.attempt(kind, m).expect("legal").done)
                    .expect("a wrong move");
                click_lesson_move(&c, wrong).await;
                let hint = format!(
                    "return document.querySelector('#hint').textContent === {}",
                    json!(format!("Hint: {}", step.hints[0]))
                );
                until(&c, "the first hint", &hint).await;
            }
            click_lesson_move(&c, right).await;
            let done = format!(
                "return document.querySelector('#status').textContent.includes({})",
                json!(step.success)
            );
            until(&c, "the step done", &done).await;
            if i == 2 {
                screenshot(&c, &format!("learn-{kind}")).await;
            }
            let next = if i + 1 < n {
                "#next-step"
            } else {
                "#lesson-done"
            };
            c.wait()
                .at_most(WAIT)
                .for_element(Locator::Css(next))
                .await
                .unwrap_or_else(|e| panic!("{kind} step {}: no {next}: {e}", i + 1))
                .click()
                .await
                .expect("click on");
        }
        let line = format!(
            "const li = document.querySelector('#lessons li[data-kind={kind}]'); return li && li.textContent.includes('{n} of {n} steps done')"
        );
        until(&c, "the lesson list with every step done", &line).await;
    }
    // The steps are the player's on the server, not this browser's alone: the page's token
    // reads them all over the websocket, in lesson order, and a second browser (a profile of
    // its own, no local copy) with the same identity lists every lesson done.
    let deployment = c
        .execute(
            "return document.querySelector('meta[name=stoa-deployment]').content",
            vec![],
        )
        .await
        .expect("deployment");
    let deployment = deployment.as_str().expect("a deployment").to_string();
    let identity = stored_identity(&c, &deployment).await;
    let token = identity["token"].as_str().expect("a token").to_string();
    let mut ws = stoa_tests::Client::with_token(&server, &token).await;
    let progress = ws.request(json!({"t":"lessons.progress"})).await;
    for kind in stoa_protocol::lessons::kinds() {
        let lesson = stoa_protocol::lessons::lesson(kind).expect("lesson");
        let ids: Vec<&str> = lesson.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(progress["done"][kind], json!(ids), "{progress}");
    }
    let second = web.page("second").await;
    second.goto(&base).await.expect("lobby");
    connected(&second, "the second browser").await;
    second
        .execute(
            "localStorage.setItem('stoa.identity.' + arguments[0], arguments[1]); \
             localStorage.removeItem('stoa.learn');",
            vec![json!(deployment), json!(identity.to_string())],
        )
        .await
        .expect("the same identity");
    second
        .goto(&format!("{base}/learn"))
        .await
        .expect("the lessons");
    for kind in stoa_protocol::lessons::kinds() {
        let n = stoa_protocol::lessons::lesson(kind)
            .expect("lesson")
            .steps
            .len();
        let line = format!(
            "const li = document.querySelector('#lessons li[data-kind={kind}]'); return li && li.textContent.includes('{n} of {n} steps done')"
        );
        until(&second, "every step done, from the server", &line).await;
    }
    let _ = second.close().await;
    let _ = c.close().await;
}
