// @ts-check
// What the server says of each game kind (`GET /api/kinds/<kind>`: its geometry, side names
// and default options), asked once per kind and options, and the words built on it: a game's
// options said as only those that differ from the kind's defaults.

import { TITLES } from "./words.js";

/**
 * The server's answer for a kind.
 * @typedef {{side_names: string[], options: Record<string, unknown>, geometry: Record<string, any>}} KindInfo
 */

/** kind + options → the answer (a promise, shared by whoever asks the same). @type {Map<string, Promise<KindInfo>>} */
const asked = new Map();

/** kind → its default options, to name only the options a game changes. @type {Record<string, Record<string, unknown>>} */
export const defaults = {};

/**
 * @param {string} kind
 * @param {unknown} options
 * @returns {Promise<KindInfo>}
 */
export function kindInfo(kind, options) {
  const key = `${kind} ${JSON.stringify(options)}`;
  let p = asked.get(key);
  if (!p) {
    p = fetch(`/api/kinds/${kind}?options=${encodeURIComponent(JSON.stringify(options))}`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`kind ${kind}: HTTP ${r.status}`))));
    asked.set(key, p);
    p.catch(() => asked.delete(key));
  }
  return p;
}

/**
 * The options that differ from the kind's defaults, as key=value pairs ("" for none).
 * @param {string} kind
 * @param {Record<string, unknown> | null | undefined} options
 */
export function optionsText(kind, options) {
  const d = defaults[kind] || {};
  return Object.entries(options || {})
    .filter(([k, v]) => v !== null && JSON.stringify(d[k]) !== JSON.stringify(v))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(",");
}

/**
 * A game's kind with the options it changes: `Staku palaces=false`.
 * @param {{kind: string, options?: Record<string, unknown> | null}} entry
 */
export function kindLabel(entry) {
  const o = optionsText(entry.kind, entry.options);
  return `${TITLES[entry.kind] || entry.kind}${o ? ` ${o}` : ""}`;
}
