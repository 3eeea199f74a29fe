// @ts-check
// A player as operators see them (`GET /api/admin/players/<id>`): online, muted, banned;
// the actions (warn, mute, ban, rename — each with a reason); the reports about them; their
// sanctions, each with Undo; their devices and recent games.

import { el } from "../lib/dom.js";
import { admin, durationOf, durationSelect, failure, playerButton, when } from "../lib/admin-api.js";

/**
 * Draws player `id` into `view`.
 * @param {HTMLElement} view
 * @param {string} id
 */
export async function showPlayer(view, id) {
  view.replaceChildren(el("h2", { id: "admin-player-name", text: "Loading the player…" }));
  let p;
  try {
    p = await admin("GET", `players/${encodeURIComponent(id)}`);
  } catch (e) {
    view.replaceChildren(el("h2", { id: "admin-player-name", text: "The player cannot be shown" }),
      el("p", { class: "error", role: "alert", text: failure(e) }));
    return;
  }
  const redraw = () => showPlayer(view, id);
  view.replaceChildren(
    el("h2", { id: "admin-player-name", "data-player": p.id, text: `${p.name}${p.bot ? " (computer)" : ""}` }),
    el("p", { class: "muted", id: "admin-player-standing", text: standing(p) }),
    actions(p.id, redraw),
    el("section", { class: "panel" }, el("h3", { text: "Sanctions" }), sanctions(p.sanctions || [], redraw)),
    el("section", { class: "panel" }, el("h3", { text: "Reports about them" }),
      list("admin-player-reports", p.reports || [], (/** @type {any} */ r) =>
        el("li", { "data-report": r.id }, `${when(r.created_ms)} · ${r.reason} · by `, playerButton(r.reporter, r.reporter_name),
          r.text ? ` · “${r.text}”` : "", r.closed ? ` · closed: ${r.closed.action}` : " · open"))),
    el("section", { class: "panel" }, el("h3", { text: "Devices" }),
      list("admin-player-devices", p.devices || [], (/** @type {any} */ d) =>
        el("li", { text: `${d.label} · linked ${when(d.created_ms)} · last seen ${when(d.last_seen_ms)}` }))),
    el("section", { class: "panel" }, el("h3", { text: "Recent games" }),
      list("admin-player-games", Array.isArray(p.recent) ? p.recent : [], (/** @type {any} */ g) =>
        el("li", {}, el("a", { href: `/g/${encodeURIComponent(g.id)}`, target: "_blank", rel: "noopener", text: g.id }),
          ` · ${g.kind} · ${g.rated ? "rated" : "casual"} · ${g.moves ?? "?"} moves`))));
}

/**
 * What the player's standing is, in words.
 * @param {any} p
 */
function standing(p) {
  const words = [`player ${p.id}`, p.online ? "online" : "offline", p.account ? `account ${p.account}` : "guest"];
  if (p.muted) words.push(p.muted.until_ms ? `muted until ${when(p.muted.until_ms)}` : "muted");
  if (p.banned) words.push(p.banned.until_ms ? `banned until ${when(p.banned.until_ms)}` : "banned for good");
  return words.join(" · ");
}

/**
 * The action form: a reason, then warn, mute (for a time), ban (for a time or for good),
 * rename.
 * @param {string} id
 * @param {() => void} redraw
 */
function actions(id, redraw) {
  const reason = el("input", { id: "admin-reason", name: "reason", maxlength: 500, placeholder: "reason (the player reads it)", "aria-label": "reason" });
  const muteFor = durationSelect("admin-mute-duration", false);
  const banFor = durationSelect("admin-ban-duration", true);
  const status = el("p", { class: "error", id: "admin-action-status", role: "alert" });
  /**
   * @param {string} action
   * @param {HTMLSelectElement | null} duration
   */
  const act = async (action, duration) => {
    if (!reason.value.trim()) { status.className = "error"; status.textContent = "Write a reason first."; return; }
    /** @type {Record<string, unknown>} */
    const body = { reason: reason.value.trim() };
    const ms = duration ? durationOf(duration) : undefined;
    if (ms !== undefined) body.duration_ms = ms;
    try {
      await admin("POST", `players/${encodeURIComponent(id)}/${action}`, body);
      redraw();
    } catch (e) {
      status.className = "error";
      status.textContent = failure(e);
    }
  };
  return el("section", { class: "panel admin-actions", id: "admin-actions" },
    el("h3", { text: "Act" }),
    el("p", {}, el("label", {}, "Reason ", reason)),
    el("p", {},
      el("button", { type: "button", id: "admin-warn", onclick: () => act("warn", null), text: "Warn" }), " ",
      muteFor, el("button", { type: "button", id: "admin-mute", onclick: () => act("mute", muteFor), text: "Mute" }), " ",
      banFor, el("button", { type: "button", id: "admin-ban", onclick: () => act("ban", banFor), text: "Ban" }), " ",
      el("button", { type: "button", id: "admin-rename", onclick: () => act("rename", null), text: "Reset the name" })),
    status);
}

/**
 * The player's sanctions, newest first, each in force with Undo (the reason above is the
 * undo's reason).
 * @param {any[]} all
 * @param {() => void} redraw
 */
function sanctions(all, redraw) {
  const rows = [...all].sort((a, b) => b.at_ms - a.at_ms).map((s) => {
    const error = el("span", { class: "error", role: "alert" });
    const undo = async () => {
      const reason = /** @type {HTMLInputElement} */ (document.getElementById("admin-reason")).value.trim();
      if (!reason) { error.textContent = "Write a reason above first."; return; }
      try {
        await admin("POST", `sanctions/${encodeURIComponent(s.id)}/undo`, { reason });
        redraw();
      } catch (e) {
        error.textContent = failure(e);
      }
    };
    return el("tr", { "data-sanction": s.id, "data-kind": s.kind },
      el("td", { text: s.kind }), el("td", { text: when(s.at_ms) }),
      el("td", { text: s.until_ms ? `until ${when(s.until_ms)}` : "" }),
      el("td", { text: s.by }), el("td", { class: "sanction-reason", text: s.reason }),
      el("td", {}, s.undone ? `undone by ${s.undone.by}: ${s.undone.reason}`
        : el("button", { type: "button", class: "sanction-undo", onclick: undo, text: "Undo" }), " ", error));
  });
  if (!rows.length) return el("p", { class: "muted", id: "admin-player-sanctions", text: "None." });
  return el("table", { class: "table", id: "admin-player-sanctions" },
    el("thead", {}, el("tr", {}, ["Kind", "When", "Until", "Operator", "Reason", ""].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows));
}

/**
 * A list of `items` drawn by `line`, or "None.".
 * @param {string} id
 * @param {any[]} items
 * @param {(item: any) => HTMLElement} line
 */
function list(id, items, line) {
  return el("ul", { class: "list", id }, items.length ? items.map(line) : [el("li", { class: "muted", text: "None." })]);
}
