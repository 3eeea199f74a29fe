// @ts-check
// The operators' live view (`GET /api/admin/live`): every node's live games (abort, with a
// reason) and the waiting rooms (close, with a reason); and the address-ban form (a network
// in CIDR, a duration, a reason) with the address bans in force.

import { el } from "../lib/dom.js";
import { admin, durationOf, durationSelect, failure, playerButton, when } from "../lib/admin-api.js";

/**
 * Draws the live view into `view`.
 * @param {HTMLElement} view
 */
export async function showLive(view) {
  const error = el("p", { class: "error", id: "admin-live-error", role: "alert" });
  const games = el("tbody", {});
  const rooms = el("tbody", {});
  const bans = el("ul", { class: "list", id: "admin-address-bans" });
  const redraw = () => showLive(view);
  view.replaceChildren(el("h2", { text: "Live games" }), error,
    el("table", { class: "table", id: "admin-games" }, head(["Game", "Kind", "Players", "Started", ""]), games),
    el("h2", { text: "Waiting rooms" }),
    el("table", { class: "table", id: "admin-rooms" }, head(["Room", "Kind", "Host", ""]), rooms),
    el("h2", { text: "Address bans" }), addressForm(redraw), bans);
  try {
    const live = await admin("GET", "live");
    games.replaceChildren(...live.games.map((/** @type {any} */ g) => el("tr", { "data-game": g.id },
      el("td", {}, el("a", { href: `/g/${encodeURIComponent(g.id)}`, target: "_blank", rel: "noopener", text: g.id })),
      el("td", { text: `${g.kind}${g.rated ? " · rated" : ""} · ${g.visibility}` }),
      el("td", {}, ...g.players.flatMap((/** @type {any} */ p, /** @type {number} */ i) => [i ? " vs " : "", playerButton(p.id, p.name)])),
      el("td", { text: when(g.created_ms) }),
      el("td", {}, withReason("Abort", `games/${encodeURIComponent(g.id)}/abort`, redraw)))));
    rooms.replaceChildren(...live.rooms.map((/** @type {any} */ r) => el("tr", { "data-room": r.code },
      el("td", { text: r.code }), el("td", { text: `${r.kind} · ${r.visibility}` }),
      el("td", {}, playerButton(r.host, r.host)),
      el("td", {}, withReason("Close", `rooms/${encodeURIComponent(r.code)}/close`, redraw)))));
    const { sanctions } = await admin("GET", "sanctions");
    const address = sanctions.filter((/** @type {any} */ s) => s.kind === "address_ban");
    bans.replaceChildren(...(address.length ? address.map((/** @type {any} */ s) => el("li", { "data-sanction": s.id },
      `${s.network} · ${s.until_ms ? `until ${when(s.until_ms)}` : "for good"} · by ${s.by}: ${s.reason}`))
      : [el("li", { class: "muted", text: "No address bans in force." })]));
  } catch (e) {
    error.textContent = failure(e);
  }
}

/** @param {string[]} names */
const head = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col", text: h }))));

/**
 * A reason field and a button that posts `{reason}` to `path`.
 * @param {string} label
 * @param {string} path
 * @param {() => void} redraw
 */
function withReason(label, path, redraw) {
  const reason = el("input", { name: "reason", maxlength: 500, placeholder: "reason", "aria-label": "reason" });
  const error = el("span", { class: "error", role: "alert" });
  return el("form", { class: "inline-form", onsubmit: async (/** @type {Event} */ e) => {
    e.preventDefault();
    try {
      await admin("POST", path, { reason: reason.value.trim() });
      redraw();
    } catch (err) {
      error.textContent = failure(err);
    }
  } }, reason, " ", el("button", { type: "submit", text: label }), " ", error);
}

/**
 * The address-ban form: network, duration, reason.
 * @param {() => void} redraw
 */
function addressForm(redraw) {
  const network = el("input", { name: "network", id: "admin-network", placeholder: "203.0.113.0/24", "aria-label": "address or network" });
  const duration = durationSelect("admin-network-duration", true);
  const reason = el("input", { name: "reason", id: "admin-network-reason", maxlength: 500, placeholder: "reason", "aria-label": "reason" });
  const error = el("p", { class: "error", id: "admin-network-error", role: "alert" });
  return el("form", { class: "panel", id: "admin-address-ban", onsubmit: async (/** @type {Event} */ e) => {
    e.preventDefault();
    /** @type {Record<string, unknown>} */
    const body = { network: network.value.trim(), reason: reason.value.trim() };
    const ms = durationOf(duration);
    if (ms !== undefined) body.duration_ms = ms;
    try {
      await admin("POST", "addresses/ban", body);
      redraw();
    } catch (err) {
      error.textContent = failure(err);
    }
  } }, network, " ", duration, " ", reason, " ", el("button", { type: "submit", text: "Ban the network" }), error);
}
