//! The operators' console in a real browser (issue 50): a player reports another's chat
//! line by clicking "Report" on it; the operator signs in at `/admin` by typing their
//! token, reads the report with the reported line highlighted among its neighbours, opens
//! the player and mutes them for 10 minutes with a reason — all by clicking; the muted
//! player (a websocket client) is told and their next line is refused with `forbidden`;
//! the audit log lists the mute; closing the report empties the open list. And `/admin`
//! answers exactly what any unknown path answers (status and bytes), so the console does
//! not announce itself.
//!
//! Screenshots `admin-reports.png` and `admin-player.png` go to `$STOA_SCREENSHOT_DIR`
//! (docs/web-client.md shows them). Skipped (with a message) without chromedriver.
#![forbid(unsafe_code)]

use fantoccini::{Client as Page, Locator};
use serde_json::{json, Value};
use stoa_tests::browser::{page_base, screenshot, until, Web};
use stoa_tests::temp_dir::TempDir;
use stoa_tests::{Client, LOOSE};

/// The operator's token (the file names `alice` with it).
const TOKEN: &str = "op-token-0123456789abcdefghijkl";

/// The line the reported player says, and the report's words.
const ABUSE: &str = "you play like a clown";
const WHY: &str = "insults after every move";

/// Clicks the element `css` of page `c` (a real click, over WebDriver).
async fn click(c: &Page, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("find {css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

/// Types `text` into the field `css` of page `c`.
async fn type_into(c: &Page, css: &str, text: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("find {css}: {e}"))
        .send_keys(text)
        .await
        .unwrap_or_else(|e| panic!("type into {css}: {e}"));
}

/// A private tiny Ūnane room hosted by `troll`, its invitation opened in browser `page`
/// (a newcomer, who gives the name `Reporter`): both seated; the game's id.
async fn seated(base: &str, troll: &mut Client, page: &Page) -> String {
    let room = troll
        .request(
            json!({"t":"room.create","kind":"unane","options":{"width":4,"height":3},
            "clock":{"kind":"none"},"rated":false,"visibility":"private","side":"black"}),
        )
        .await;
    assert_eq!(room["t"], "room", "{room}");
    let code = room["room"]["code"].as_str().expect("code").to_string();
    page.goto(&format!("{base}/r/{code}"))
        .await
        .expect("open the invitation");
    until(
        page,
        "the name form",
        "return document.querySelector('#join-name')",
    )
    .await;
    page.execute(
        "const f = document.querySelector('#join-name'); f.name.value = 'Reporter'; f.querySelector('button').click();",
        vec![],
    )
    .await
    .expect("give a name");
    let started = troll.recv_where(|m| m["t"] == "game.started").await;
    until(
        page,
        "the board",
        "return document.querySelector('#board svg')",
    )
    .await;
    started["game_id"].as_str().expect("game id").to_string()
}

/// The reporter clicks "Report" on the troll's line `ABUSE` and sends the report.
async fn report_the_line(page: &Page) {
    until(
        page,
        "the troll's line with its Report button",
        &format!(
            "const li = [...document.querySelectorAll('#chat-players .chat-line')]
               .find(l => l.querySelector('.chat-text').textContent === {});
             const b = li && li.querySelector('.chat-report');
             if (b) b.id = 'report-this';
             return !!b",
            json!(ABUSE)
        ),
    )
    .await;
    click(page, "#report-this").await;
    until(
        page,
        "the report dialog",
        "return document.querySelector('#report-dialog[open]')",
    )
    .await;
    let reason = page
        .execute(
            "return document.querySelector('#report-reason').value",
            vec![],
        )
        .await
        .expect("reason");
    assert_eq!(reason, "chat_abuse", "abuse in chat is the first reason");
    type_into(page, "#report-text", WHY).await;
    click(page, "#report-send").await;
    let said = until(
        page,
        "the report's answer",
        "const s = document.querySelector('#report-status'); return s && s.textContent",
    )
    .await;
    assert_eq!(said, "Reported — an operator will read it.");
}

/// The operator signs in at `/admin` by typing the token.
async fn sign_in(op: &Page, base: &str) {
    op.goto(&format!("{base}/admin"))
        .await
        .expect("open /admin");
    until(
        op,
        "the sign-in form",
        "return document.querySelector('#admin-token')",
    )
    .await;
    type_into(op, "#admin-token", "not-an-operator-token-at-all-xyz").await;
    click(op, "#admin-signin button[type=submit]").await;
    until(
        op,
        "the refusal of a wrong token",
        "return document.querySelector('#admin-signin-error').textContent === 'That is not an operator token.'",
    )
    .await;
    op.execute("document.querySelector('#admin-token').value = ''", vec![])
        .await
        .expect("clear");
    type_into(op, "#admin-token", TOKEN).await;
    click(op, "#admin-signin button[type=submit]").await;
    until(
        op,
        "the console",
        "return document.querySelector('#admin-operator') && document.querySelector('#admin-operator').textContent.includes('alice')",
    )
    .await;
}

/// The report the console shows: reason, target, text and its context lines
/// (`[name, text, reported]`).
async fn shown_report(op: &Page) -> Value {
    until(
        op,
        "the report with its context",
        "const r = document.querySelector('#admin-reports .admin-report');
         return r && r.querySelector('.report-context') && {
           reason: r.querySelector('.report-reason').textContent,
           target: r.querySelector('.report-target').textContent,
           reporter: r.querySelector('.report-reporter').textContent,
           text: r.querySelector('.report-text').textContent,
           context: [...r.querySelectorAll('.context-line')].map(l => [
             l.querySelector('.chat-name').textContent, l.querySelector('.context-text').textContent,
             l.classList.contains('reported')]),
         }",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_reads_a_report_and_mutes_the_player_by_clicking() {
    let dir = TempDir::new("admin-console");
    let file = dir.0.join("operators");
    std::fs::write(&file, format!("# operators\nalice {TOKEN}\n")).expect("write the admin file");
    let mut args: Vec<&str> = LOOSE.to_vec();
    let path = file.to_string_lossy().to_string();
    args.extend(["--admin-file", path.as_str()]);
    let Some((web, server)) = Web::with_server_args("admin-console", &args) else {
        return;
    };
    let base = page_base(&server);

    // The console does not announce itself: `/admin` is any unknown path's page, byte for
    // byte, and the API answers a request without a token as an unknown API path.
    let admin = server.http_get("/admin");
    assert_eq!(admin.0, 404);
    assert_eq!(admin, server.http_get("/nonexistent"));
    assert_eq!(
        server.http_get("/api/admin/me"),
        (404, r#"{"error":"not_found"}"#.to_string())
    );

    let [reporter, op] = web.pages(["reporter", "operator"]).await;
    let mut troll = Client::guest(&server, "Troll").await;
    let game_id = seated(&base, &mut troll, &reporter).await;
    for text in ["good luck", ABUSE, "bye"] {
        let ok = troll
            .request(json!({"t":"chat.say","game_id":game_id,"text":text}))
            .await;
        assert_eq!(ok["t"], "ok", "{ok}");
    }
    report_the_line(&reporter).await;

    sign_in(&op, &base).await;
    let report = shown_report(&op).await;
    assert_eq!(report["reason"], "Abuse in chat");
    assert_eq!(report["target"], "Troll");
    assert_eq!(report["reporter"], "Reporter");
    assert_eq!(report["text"], WHY);
    let context = report["context"].as_array().expect("context");
    assert!(
        context.contains(&json!(["Troll: ", ABUSE, true])),
        "the reported line is highlighted: {report}"
    );
    assert!(
        context.contains(&json!(["Troll: ", "good luck", false])),
        "the lines around it come along: {report}"
    );
    screenshot(&op, "admin-reports").await;

    // The player's page, and a 10-minute mute with a reason.
    click(&op, "#admin-reports .admin-report .report-target button").await;
    until(
        &op,
        "the player's page",
        "return document.querySelector('#admin-player-name').textContent === 'Troll' && document.querySelector('#admin-mute')",
    )
    .await;
    type_into(&op, "#admin-reason", "insulting the opponent").await;
    let ten = op
        .execute(
            "const s = document.querySelector('#admin-mute-duration'); return s.options[s.selectedIndex].textContent",
            vec![],
        )
        .await
        .expect("duration");
    assert_eq!(ten, "10 min");
    click(&op, "#admin-mute").await;
    until(
        &op,
        "the mute in force",
        "return document.querySelector('#admin-player-standing').textContent.includes('muted until')
           && document.querySelector('#admin-player-sanctions tr[data-kind=mute] .sanction-undo')",
    )
    .await;
    screenshot(&op, "admin-player").await;

    // The player is told, and their lines are refused.
    let notice = troll.recv_where(|m| m["t"] == "moderation").await;
    assert_eq!(notice["action"], "mute", "{notice}");
    assert_eq!(notice["reason"], "insulting the opponent", "{notice}");
    assert!(notice["until_ms"].as_u64().is_some(), "{notice}");
    let refused = troll
        .request(json!({"t":"chat.say","game_id":game_id,"text":"still here"}))
        .await;
    assert_eq!(refused["t"], "error", "{refused}");
    assert_eq!(refused["code"], "forbidden", "{refused}");

    // The audit log lists the mute.
    click(&op, "#admin-bar [data-view=audit]").await;
    let row = until(
        &op,
        "the mute in the audit log",
        "const r = document.querySelector('#admin-audit tr[data-action=mute]');
         return r && [r.querySelector('.audit-action').textContent, r.querySelector('.audit-reason').textContent]",
    )
    .await;
    assert_eq!(row, json!(["mute", "insulting the opponent"]));

    // Closing the report (with the action taken) empties the open list.
    click(&op, "#admin-bar [data-view=reports]").await;
    until(
        &op,
        "the open report",
        "return document.querySelector('#admin-reports .report-action')",
    )
    .await;
    type_into(&op, "#admin-reports .report-action", "muted 10 min").await;
    click(&op, "#admin-reports .report-close button[type=submit]").await;
    until(
        &op,
        "no open report",
        "return document.querySelector('#admin-no-reports')",
    )
    .await;
    op.execute(
        "const s = document.querySelector('#admin-report-status'); s.value = 'all'; s.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await
    .expect("all reports");
    let closed = until(
        &op,
        "the closed report",
        "const c = document.querySelector('#admin-reports .report-closed'); return c && c.textContent",
    )
    .await;
    assert!(
        closed.as_str().unwrap_or("").ends_with(": muted 10 min"),
        "{closed}"
    );
    for c in [reporter, op] {
        let _ = c.close().await;
    }
}
