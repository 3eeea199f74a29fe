// @ts-check
// The operators' console (issue 50; docs/web-client.md, "Operators' console"), loaded by
// missing.js at `/admin` once the operator's token is taken: open reports with their
// context, a player's page with the actions (pages/admin-player.js), live games and
// waiting rooms and address bans (pages/admin-live.js), the audit log. Every call carries
// the operator's bearer token; everything shown is set as text (players chose the names and
// wrote the lines).

import { el } from "../lib/dom.js";
import { admin, failure, playerButton, setPlayerOpener, setToken, when } from "../lib/admin-api.js";
import { showPlayer } from "./admin-player.js";
import { showLive } from "./admin-live.js";

/** @type {Record<string, string>} */
const REASONS = { chat_abuse: "Abuse in chat", cheating: "Cheating", offensive_name: "Offensive name", other: "Other" };

/** The views the console's bar leads to. */
const VIEWS = /** @type {const} */ ([["reports", "Reports"], ["live", "Live games and rooms"], ["audit", "Audit log"]]);

/**
 * Draws the console for `operator`.
 * @param {string} token
 * @param {string} operator
 * @param {() => void} signOut
 */
export function start(token, operator, signOut) {
  setToken(token);
  const view = el("div", { id: "admin-view" });
  setPlayerOpener((id) => showPlayer(view, id));
  const bar = el("nav", { class: "admin-bar", id: "admin-bar" },
    VIEWS.map(([name, words]) => el("button", { type: "button", "data-view": name, onclick: () => open(view, name), text: words })),
    el("span", { class: "muted", id: "admin-operator", text: ` signed in as ${operator} ` }),
    el("button", { type: "button", id: "admin-signout", onclick: signOut, text: "Sign out" }));
  document.body.replaceChildren(el("main", { id: "main", class: "admin" },
    el("h1", { text: "Operators' console" }), bar, view));
  open(view, "reports");
}

/**
 * Draws view `name` into `view`.
 * @param {HTMLElement} view
 * @param {string} name
 */
function open(view, name) {
  for (const b of document.querySelectorAll("#admin-bar [data-view]")) {
    b.setAttribute("aria-current", /** @type {HTMLElement} */ (b).dataset.view === name ? "page" : "false");
  }
  if (name === "live") showLive(view);
  else if (name === "audit") showAudit(view);
  else showReports(view, "open");
}

/**
 * The reports, newest first (`status`: open or all).
 * @param {HTMLElement} view
 * @param {string} status
 */
async function showReports(view, status) {
  const pick = el("select", { id: "admin-report-status", "aria-label": "which reports", onchange: () => showReports(view, pick.value) },
    el("option", { value: "open", text: "Open reports" }), el("option", { value: "all", text: "All reports" }));
  pick.value = status;
  const list = el("ol", { class: "admin-list", id: "admin-reports" });
  const error = el("p", { class: "error", id: "admin-reports-error", role: "alert" });
  view.replaceChildren(el("h2", { text: "Reports" }), el("p", {}, pick, " ",
    el("button", { type: "button", id: "admin-reports-refresh", onclick: () => showReports(view, pick.value), text: "Refresh" })), error, list);
  try {
    const { reports } = await admin("GET", `reports?status=${status}`);
    list.replaceChildren(...(reports.length ? reports.map((/** @type {any} */ r) => reportItem(r, () => showReports(view, pick.value)))
      : [el("li", { class: "muted", id: "admin-no-reports", text: status === "open" ? "No open reports." : "No reports." })]));
  } catch (e) {
    error.textContent = failure(e);
  }
}

/**
 * One report: who reported whom, why, their words, the chat lines around the reported
 * one (highlighted), and the form that closes it.
 * @param {any} r
 * @param {() => void} redraw
 */
function reportItem(r, redraw) {
  /** @type {any[]} */
  const context = r.context || [];
  const where = r.game_id ? `game ${r.game_id}` : r.room ? `room ${r.room}` : "";
  return el("li", { class: "panel admin-report", "data-report": r.id },
    el("p", { class: "report-head" },
      el("strong", { class: "report-reason", text: REASONS[r.reason] || r.reason }), " · ",
      el("span", { class: "muted", text: when(r.created_ms) }), " · about ",
      el("span", { class: "report-target" }, playerButton(r.target, r.target_name)), " · by ",
      el("span", { class: "report-reporter" }, playerButton(r.reporter, r.reporter_name)),
      where ? el("span", { class: "muted report-where", text: ` · ${where}` }) : null),
    r.text ? el("p", { class: "report-text", text: r.text }) : null,
    context.length ? el("ol", { class: "report-context" }, context.map((/** @type {any} */ l) =>
      el("li", { class: l.reported ? "context-line reported" : "context-line", "data-ts": l.ts },
        el("span", { class: "muted", text: `${when(l.ts).slice(11, 16)} ${l.channel ? `[${l.channel}] ` : ""}` }),
        el("span", { class: "chat-name", text: `${l.name}: ` }),
        el("span", { class: "context-text", text: l.text })))) : null,
    r.closed ? el("p", { class: "muted report-closed", text: `Closed by ${r.closed.by}, ${when(r.closed.at_ms)}: ${r.closed.action}` })
      : closeForm(r.id, redraw));
}

/**
 * The form that closes report `id` with the action taken.
 * @param {string} id
 * @param {() => void} redraw
 */
function closeForm(id, redraw) {
  const action = el("input", { name: "action", class: "report-action", maxlength: 500, placeholder: "action taken (e.g. muted 10 min)", "aria-label": "action taken" });
  const error = el("span", { class: "error report-close-error", role: "alert" });
  return el("form", { class: "report-close", onsubmit: async (/** @type {Event} */ e) => {
    e.preventDefault();
    try {
      await admin("POST", `reports/${encodeURIComponent(id)}/close`, { action: action.value.trim() });
      redraw();
    } catch (err) {
      error.textContent = failure(err);
    }
  } }, action, " ", el("button", { type: "submit", text: "Close the report" }), " ", error);
}

/**
 * The audit log, newest first.
 * @param {HTMLElement} view
 */
async function showAudit(view) {
  const body = el("tbody", {});
  const error = el("p", { class: "error", id: "admin-audit-error", role: "alert" });
  view.replaceChildren(el("h2", { text: "Audit log" }), error,
    el("table", { class: "table", id: "admin-audit" },
      el("thead", {}, el("tr", {}, ["When", "Operator", "Action", "Target", "Reason", "Detail"].map((h) => el("th", { scope: "col", text: h })))),
      body));
  try {
    const { entries } = await admin("GET", "audit?limit=200");
    body.replaceChildren(...entries.map((/** @type {any} */ a) => el("tr", { "data-action": a.action },
      el("td", { text: when(a.at_ms) }), el("td", { text: a.by }), el("td", { class: "audit-action", text: a.action }),
      el("td", { class: "audit-target", text: a.target }), el("td", { class: "audit-reason", text: a.reason }),
      el("td", { text: a.detail || "" }))));
  } catch (e) {
    error.textContent = failure(e);
  }
}
