// @ts-check
// Pages read over HTTP (a player's page, a leaderboard): looked up, not followed live. An
// answer that comes after the page was left is dropped.

import { el, sentence } from "./dom.js";

/** Which page the last lookup was for; an answer for a page left meanwhile is dropped. */
let current = 0;

/** The client leaves the page shown (for any view): an answer still on its way is dropped. */
export function leavePage() {
  current += 1;
}

/**
 * A lookup for a new page: `fresh()` says whether that page is still the one shown.
 * @returns {() => boolean}
 */
export function newPage() {
  const mine = ++current;
  return () => mine === current;
}

/**
 * `GET path` as JSON, with the reader's token when given; a server that cannot be reached
 * answers status 0 with words for the person.
 * @param {string} path
 * @param {string} [token]
 * @returns {Promise<{status: number, body: any}>}
 */
export async function getJson(path, token) {
  try {
    const r = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {}, cache: "no-store" });
    let body = null;
    try { body = await r.json(); } catch { /* said by the caller */ }
    return { status: r.status, body };
  } catch {
    return { status: 0, body: { message: "the server cannot be reached; reload the page to try again" } };
  }
}

/**
 * A page that could not be read: its title, what the server said, the way to the lobby.
 * @param {HTMLElement} main
 * @param {string} title
 * @param {number} status
 * @param {{message?: string} | null} body
 */
export function failed(main, title, status, body) {
  const text = (body && body.message) || (status === 404 ? "Nothing is here." : `The server answered ${status}; try again in a moment.`);
  main.replaceChildren(el("h1", { text: title }), el("p", { class: "error", id: "page-error", role: "alert", text: sentence(text) }),
    el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" })));
}
