// @ts-check
// Reporting a player to the server's operators (protocol/docs/PROTOCOL.md, "Moderation"):
// a small dialog (reason, optional words) that sends `report` over the page's websocket,
// pointing at a chat line (its game or room and `ts`) or a game when there is one; and the
// notices of what an operator decided about this player (`moderation`).
//
// Why a dialog on the body: chat lists are redrawn at every line; a form inside one would
// lose what the person was typing.

import { el, sentence } from "./dom.js";
import { errorText } from "./link.js";
import { link } from "./session.js";

/** The reasons a report gives, in the order offered (the wire's `ReportReason`). */
export const REPORT_REASONS = /** @type {const} */ ([
  ["chat_abuse", "Abuse in chat"],
  ["cheating", "Cheating"],
  ["offensive_name", "Offensive name"],
  ["other", "Something else"],
]);

/** The most characters a report's text may have. */
const MAX_TEXT = 500;

/**
 * What a report points at: a chat line of a game (`game_id` + `ts`) or of a waiting room
 * (`code` + `ts`), or a game (`game_id`), or nothing (the player themselves).
 * @typedef {{game_id?: string, code?: string, ts?: number}} ReportPlace
 */

/**
 * A small "Report" button that opens the report dialog for player `target`.
 * @param {{id: string, name: string}} target
 * @param {ReportPlace} place
 * @param {string} [cls] its class
 */
export function reportButton(target, place, cls = "report-button") {
  return el("button", { type: "button", class: cls, "data-report": target.id, title: `report ${target.name} to the operators`,
    onclick: () => openReport(target, place), text: "Report" });
}

/**
 * Opens the report dialog for `target` (any one open before is closed).
 * @param {{id: string, name: string}} target
 * @param {ReportPlace} place
 */
export function openReport(target, place) {
  document.getElementById("report-dialog")?.remove();
  const status = el("p", { class: "error", id: "report-status", role: "alert" });
  const reason = el("select", { name: "reason", id: "report-reason", "aria-label": "reason" },
    REPORT_REASONS.map(([v, words]) => el("option", { value: v, text: words })));
  const text = el("textarea", { name: "text", id: "report-text", maxlength: MAX_TEXT, rows: 3, placeholder: "What happened (optional)", "aria-label": "what happened" });
  const send = el("button", { type: "submit", id: "report-send", text: "Send the report" });
  const dialog = el("dialog", { id: "report-dialog", class: "report-dialog", "aria-label": "report a player" },
    el("form", { method: "dialog", id: "report-form", onsubmit: (/** @type {Event} */ e) => {
      e.preventDefault();
      send.disabled = true;
      submit(target, place, reason.value, text.value.trim(), status).finally(() => { send.disabled = false; });
    } },
      el("h2", { text: `Report ${target.name}` }),
      place.ts !== undefined ? el("p", { class: "muted", text: "The line you chose and the lines around it go with the report." }) : null,
      el("label", {}, "Reason ", reason),
      el("label", { class: "report-text" }, text),
      el("p", {}, send, " ", el("button", { type: "button", id: "report-cancel", onclick: () => dialog.close(), text: "Close" })),
      status));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

/**
 * Sends the report; says the outcome in `status`.
 * @param {{id: string}} target
 * @param {ReportPlace} place
 * @param {string} reason
 * @param {string} text
 * @param {HTMLElement} status
 */
async function submit(target, place, reason, text, status) {
  /** @type {import("./messages").Request<"report">} */
  const msg = { t: "report", player_id: target.id, reason: /** @type {any} */ (reason) };
  if (text) msg.text = text.slice(0, MAX_TEXT);
  if (place.game_id) msg.game_id = place.game_id;
  if (place.code) msg.code = place.code;
  if (place.ts !== undefined) msg.ts = place.ts;
  try {
    await link.request(msg);
    status.className = "ok";
    status.textContent = "Reported — an operator will read it.";
  } catch (e) {
    status.className = "error";
    status.textContent = errorText(/** @type {any} */ (e));
  }
}

/**
 * A `moderation` push: what an operator decided about this player, in a dialog the
 * person closes (a ban's connection closes right after; the page does not reconnect).
 * @param {Extract<import("./link.js").Incoming, {t: "moderation"}>} msg
 */
export function showModeration(msg) {
  document.getElementById("moderation-dialog")?.remove();
  const titles = { warn: "A warning from the operators", mute: "You are muted", unmute: "You may chat again",
    rename: "Your name was reset", ban: "You are banned" };
  const dialog = el("dialog", { id: "moderation-dialog", class: "moderation-dialog", "data-action": msg.action, role: "alertdialog" },
    el("h2", { text: titles[msg.action] || "From the operators" }),
    el("p", { id: "moderation-message", text: sentence(msg.message) }),
    el("form", { method: "dialog" }, el("button", { type: "submit", text: "OK" })));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
