// @ts-check
// What the operators' console shares: its calls to `/api/admin/*` (each with the
// operator's bearer token; protocol/docs/PROTOCOL.md, "Operators' API"), the way to a
// player's page from any view, durations and times in words.

import { el } from "./dom.js";

/** The operator's token, set once signed in. */
let token = "";

/** What opens a player's page (the console's own router sets it). @type {(id: string) => void} */
let playerOpener = () => {};

/**
 * Sets the token every call carries.
 * @param {string} t
 */
export function setToken(t) {
  token = t;
}

/**
 * Sets what `openPlayer` does.
 * @param {(id: string) => void} f
 */
export function setPlayerOpener(f) {
  playerOpener = f;
}

/**
 * Opens the console's page of player `id`.
 * @param {string} id
 */
export const openPlayer = (id) => playerOpener(id);

/** A failed call: the server's message, for a person. */
export class AdminError extends Error {}

/**
 * Calls the operators' API: the JSON answer, or an `AdminError` with the server's message
 * (a `404` without one: the token is no longer an operator's, or the thing is gone).
 * @param {string} method
 * @param {string} path below `/api/admin/`
 * @param {Record<string, unknown>} [body]
 * @returns {Promise<any>}
 */
export async function admin(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { Authorization: `Bearer ${token}` };
  if (body) headers["Content-Type"] = "application/json";
  let r;
  try {
    r = await fetch(`/api/admin/${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined, cache: "no-store" });
  } catch {
    throw new AdminError("The server cannot be reached; try again in a moment.");
  }
  let answer = null;
  try { answer = await r.json(); } catch { /* said below */ }
  if (r.ok) return answer;
  const message = answer && answer.message;
  if (message) throw new AdminError(String(message));
  throw new AdminError(r.status === 404 ? "Not found (or this token is no longer an operator's)." : `The server answered ${r.status}.`);
}

/**
 * The words of a failure.
 * @param {unknown} e
 */
export const failure = (e) => (e instanceof Error ? e.message : String(e));

/** Durations offered for mutes, bans and address bans: [milliseconds, words]. */
export const DURATIONS = /** @type {const} */ ([
  [600000, "10 min"],
  [3600000, "1 h"],
  [86400000, "24 h"],
  [604800000, "7 d"],
]);

/**
 * A select of `DURATIONS` (and "for good" when `forGood`), named `name`.
 * @param {string} id
 * @param {boolean} forGood
 */
export function durationSelect(id, forGood) {
  return el("select", { id, name: "duration", "aria-label": "duration" },
    DURATIONS.map(([ms, words]) => el("option", { value: String(ms), text: words })),
    forGood ? el("option", { value: "", text: "for good" }) : null);
}

/**
 * A select's duration: milliseconds, or undefined for good.
 * @param {HTMLSelectElement} select
 */
export const durationOf = (select) => (select.value ? Number(select.value) : undefined);

/**
 * A time as the console shows it: `2026-11-29 05:12 UTC`.
 * @param {number | undefined | null} ms
 */
export const when = (ms) => (typeof ms === "number" ? `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC` : "");

/**
 * A button naming a player that opens their console page.
 * @param {string} id
 * @param {string} name
 */
export const playerButton = (id, name) =>
  el("button", { type: "button", class: "link-button admin-player-link", "data-player": id, title: `player ${id}`, onclick: () => openPlayer(id), text: name || id });
