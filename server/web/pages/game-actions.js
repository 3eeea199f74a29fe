// @ts-check
// The actions under a game: the players' buttons (resign, draw, berserk, abort, claim,
// rematch, the way back), and once it has ended its replay, its record and its rules.

import { $, el, none } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, go } from "../lib/session.js";
import { authHeaders } from "../lib/identity.js";
import { TITLES } from "../lib/words.js";
import { arenaPath } from "./arena.js";

/** @typedef {import("../lib/documents").GameDoc} GameDoc */

/**
 * What the actions need of the game page.
 * @typedef {object} GameShown
 * @property {string} id
 * @property {string | null} code
 * @property {string} query `?code=…` for the API, or ""
 * @property {{online?: Record<string, boolean>} | null} crowd who of the sides is online (`game.crowd`)
 * @property {boolean | undefined} arenaBerserk whether the game's arena allows berserk
 * @property {boolean} abortSent we asked to abort
 * @property {{states: Record<string, unknown>[], at: number} | null} replay a finished game's positions and the one shown
 */

/**
 * What the actions call back.
 * @typedef {object} ActionHooks
 * @property {(text: string) => void} error says a refusal under the board
 * @property {() => void} redraw draws the page again
 * @property {() => boolean} current whether the game is still the one shown
 */

/**
 * Under a finished game: step through it (the positions come from the server, which has
 * the rules), download its record, and read the game's rules.
 * @param {GameShown} g
 * @param {GameDoc} doc
 * @param {ActionHooks} on
 */
export function drawAfterward(g, doc, on) {
  const box = $("#afterward");
  if (!box) return;
  const rules = el("a", { id: "rules-link", href: `/rules/${doc.kind}`, target: "_blank", text: `How to play ${TITLES[doc.kind] || doc.kind}` });
  if (doc.status.state !== "ended") { box.replaceChildren(rules); return; }
  const n = (doc.moves || []).length;
  const at = g.replay ? g.replay.at : n;
  /** @param {"first" | "back" | "forward" | "last"} to */
  const step = (to) => el("button", { type: "button", "data-replay": to, onclick: () => replayTo(g, doc, to, on), text: to });
  box.replaceChildren(
    el("span", { id: "replay-ply", text: `Position after ${at} of ${n} moves` }), " ",
    step("first"), step("back"), step("forward"), step("last"), " ",
    el("button", { type: "button", id: "record-link", onclick: () => downloadRecord(g, on), text: "Download the record" }), " ",
    el("a", { id: "analysis-board-link", href: analysisPath(g, at), "data-nav": true, text: "Analysis board" }), " ",
    rules);
}

/**
 * The analysis board at ply `at` of finished game `g` (with its room code when it has one).
 * @param {GameShown} g
 * @param {number} at
 */
export function analysisPath(g, at) {
  return `/analysis?game=${encodeURIComponent(g.id)}&ply=${at}${g.code ? `&code=${encodeURIComponent(g.code)}` : ""}`;
}

/**
 * Shows the finished game at another move.
 * @param {GameShown} g
 * @param {GameDoc} doc
 * @param {"first" | "back" | "forward" | "last"} where
 * @param {ActionHooks} on
 */
async function replayTo(g, doc, where, on) {
  const n = (doc.moves || []).length;
  if (!g.replay) {
    const r = await apiGet(g, "replay").catch((e) => { on.error(String(e.message || e)); return none(); });
    if (!r || !on.current()) return;
    g.replay = { states: r.states, at: n };
  }
  const at = g.replay.at;
  g.replay.at = { first: 0, back: Math.max(0, at - 1), forward: Math.min(n, at + 1), last: n }[where];
  on.redraw();
}

/**
 * Shows the finished game after `at` moves (an engine review's marked ply, say).
 * @param {GameShown} g
 * @param {GameDoc} doc
 * @param {number} at
 * @param {ActionHooks} on
 */
export async function replayAt(g, doc, at, on) {
  const n = (doc.moves || []).length;
  if (!g.replay) {
    const r = await apiGet(g, "replay").catch((e) => { on.error(String(e.message || e)); return none(); });
    if (!r || !on.current()) return;
    g.replay = { states: r.states, at: n };
  }
  g.replay.at = Math.max(0, Math.min(n, at));
  on.redraw();
}

/**
 * `/api/games/<id>/<what>` for this player (its token) or the room code it came with.
 * @param {GameShown} g
 * @param {string} what
 * @param {boolean} [asText]
 */
async function apiGet(g, what, asText = false) {
  const r = await fetch(`/api/games/${encodeURIComponent(g.id)}/${what}${g.query}`, { headers: authHeaders(), cache: "no-store" });
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status}`);
  return asText ? r.text() : r.json();
}

/**
 * Saves the game's text record as `<id>.txt`.
 * @param {GameShown} g
 * @param {ActionHooks} on
 */
async function downloadRecord(g, on) {
  const text = await apiGet(g, "record", true).catch((e) => { on.error(String(e.message || e)); return none(); });
  if (text === null) return;
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/plain" })), download: `${g.id}.txt` });
  a.click();
}

/**
 * The players' actions: resign, draw, berserk, abort, claim, rematch, and the way back.
 * @param {GameShown} g
 * @param {GameDoc} doc
 * @param {string | null} me the side we play, null for a spectator
 * @param {ActionHooks} on
 */
export function drawControls(g, doc, me, on) {
  const box = $("#controls");
  const arenaLink = doc.arena ? el("a", { href: arenaPath(doc.arena.id, g.code), "data-nav": true, id: "arena-link", text: "back to the arena" }) : null;
  if (!me) { box.replaceChildren(...(arenaLink ? [arenaLink] : [])); return; }
  const ended = doc.status.state === "ended";
  /**
   * @param {string} label
   * @param {import("../lib/link.js").Outgoing} msg
   * @param {string} [confirmText]
   */
  const act = (label, msg, confirmText) => el("button", { type: "button", "data-action": label, onclick: () => {
    if (confirmText && !window.confirm(confirmText)) return;
    link.request(msg).then(() => on.error("")).catch((e) => on.error(errorText(e)));
  }, text: label });
  const buttons = [];
  if (!ended) {
    buttons.push(act("resign", { t: "game.resign", game_id: g.id }, "Resign this game?"));
    if (doc.draw_offer && doc.draw_offer !== me) {
      buttons.push(act("accept draw", { t: "game.draw", game_id: g.id, action: "accept" }));
      buttons.push(act("decline draw", { t: "game.draw", game_id: g.id, action: "decline" }));
    } else if (!doc.draw_offer) {
      buttons.push(act("offer draw", { t: "game.draw", game_id: g.id, action: "offer" }));
    }
    const plies = (doc.moves || []).length;
    // Berserk: in an arena that allows it, before one's own first move (the server checks).
    if (doc.arena && g.arenaBerserk && !(doc.arena.berserk || {})[me] && (plies === 0 || (plies === 1 && doc.to_act === me))) {
      buttons.push(act("berserk", { t: "game.berserk", game_id: g.id }));
    }
    if ((doc.moves || []).length < 2) {
      const abort = act("abort", { t: "game.abort", game_id: g.id });
      abort.addEventListener("click", () => { g.abortSent = true; });
      buttons.push(abort);
    }
    /** @type {Record<string, boolean>} */
    const online = (g.crowd && g.crowd.online) || {};
    if (Object.entries(online).some(([s, on]) => s !== me && on === false)) buttons.push(act("claim win", { t: "game.claim", game_id: g.id }));
  } else {
    const asked = (doc.rematch && doc.rematch.requested) || [];
    // The arena pairs its players again itself: no rematch there.
    if (!doc.arena) buttons.push(act(asked.includes(me) ? "rematch asked" : (asked.length ? "accept rematch" : "rematch"), { t: "game.rematch", game_id: g.id }));
    buttons.push(el("button", { type: "button", onclick: () => go("/"), text: "back to the lobby" }));
  }
  if (arenaLink) buttons.push(arenaLink);
  box.replaceChildren(...buttons);
}

