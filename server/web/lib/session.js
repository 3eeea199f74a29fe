// @ts-check
// What every page shares: the link to the server, who we are, where the page is, and the
// notice line. The root (app.js) fills it in; a page reads it and calls `go` to move on.

import { Link } from "./link.js";
import { $ } from "./dom.js";

/** @typedef {import("../wire").PlayerInfo} PlayerInfo */

/** The one websocket of the page; app.js gives it its hooks before it connects. */
export const link = new Link(/** @type {import("./link.js").LinkHooks} */ (/** @type {unknown} */ (null)));

/**
 * The page's shared state (each page keeps its own in its module).
 * @type {{
 *   me: PlayerInfo | null,
 *   myGames: string[],
 *   view: string | null,
 *   started: string | null,
 *   newcomer: boolean,
 *   named: boolean,
 *   nameRefusal: string,
 * }}
 */
export const session = {
  me: null, // the welcomed player
  myGames: [], // this player's unfinished games (`welcome.games`, then what the lobby learns)
  view: null, // "lobby" | "game" | "room" | "player" | "arena" | "leaderboard"
  started: null, // the id of the game this page was last told has started
  newcomer: false, // this browser had no identity here when the page loaded
  named: false, // the newcomer chose a name
  nameRefusal: "", // why the server refused the name typed last ("" once one is taken)
};

/** What moving to another path draws (the root's router). @type {() => void} */
let router = () => {};

/**
 * Sets what `go` calls once the address changed.
 * @param {() => void} route
 */
export function setRouter(route) {
  router = route;
}

/**
 * Moves the page to `path` (a history entry) and draws it.
 * @param {string} path
 */
export function go(path) {
  if (location.pathname + location.search !== path) history.pushState({}, "", path);
  router();
}

/** Draws the current path again (after a change that alters what it shows). */
export function redrawRoute() {
  router();
}

/**
 * The notice line under the top bar ("" hides it).
 * @param {string} text
 */
export function notice(text) {
  const n = $("#notice");
  n.textContent = text;
  n.hidden = !text;
}
