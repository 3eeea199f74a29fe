// @ts-check
// Words shared with the terminal client: clocks, times, how a game ended, the cells a move
// names, rating changes. Plain functions of their arguments: no page, no state.

import { cap } from "./dom.js";

/** @typedef {import("./documents").GameClock} TimeControl */

/** The game kinds, in the order the server lists them. */
export const KINDS = ["unane", "staku", "akron", "akunur"];

/** Each kind's name for people. @type {Record<string, string>} */
export const TITLES = { unane: "Ūnane", staku: "Staku", akron: "Akron", akunur: "Akunur" };

/**
 * A clock as the lobby and the terminal client write it: `5+3`, `corr:3d`, `no clock`.
 * @param {Partial<TimeControl> & {kind?: string} | null | undefined} c
 */
export function clockLabel(c) {
  if (!c || c.kind === "none") return "no clock";
  /** @param {number} ms */
  const min = (ms) => {
    const m = ms / 60000;
    return Number.isInteger(m) ? `${m}` : `${ms / 1000}s`;
  };
  const k = /** @type {any} */ (c);
  switch (c.kind) {
    case "fischer": return `${min(k.initial_ms)}+${k.increment_ms / 1000}`;
    case "delay": return `delay:${min(k.initial_ms)}m/${k.delay_ms / 1000}s`;
    case "byoyomi": return `byoyomi:${min(k.initial_ms)}m/${k.periods}x${k.period_ms / 1000}s`;
    case "correspondence": return `corr:${k.days_per_turn}d`;
    default: return String(c.kind);
  }
}

/**
 * Parses "5+3", "none", "corr:3d" … into the clock request object.
 * @param {string} text
 * @returns {TimeControl}
 */
export function parseClock(text) {
  const t = text.trim().toLowerCase();
  if (t === "none" || t === "") return { kind: "none" };
  let m = t.match(/^(\d+(?:\.\d+)?)\+(\d+)$/);
  if (m) return { kind: "fischer", initial_ms: Math.round(Number(m[1]) * 60000), increment_ms: Number(m[2]) * 1000 };
  m = t.match(/^corr:(\d+)d$/);
  if (m) return { kind: "correspondence", days_per_turn: Number(m[1]) };
  m = t.match(/^delay:(\d+)m\/(\d+)s$/);
  if (m) return { kind: "delay", initial_ms: Number(m[1]) * 60000, delay_ms: Number(m[2]) * 1000 };
  m = t.match(/^byoyomi:(\d+)m\/(\d+)x(\d+)s$/);
  if (m) return { kind: "byoyomi", initial_ms: Number(m[1]) * 60000, periods: Number(m[2]), period_ms: Number(m[3]) * 1000 };
  throw new Error(`clock '${text}': write 5+3, none, delay:5m/3s, byoyomi:10m/5x30s or corr:3d`);
}

/**
 * A time left as a clock shows it: `4:59`, `0:09.5`, `1:02:03`, `2d 03h`.
 * @param {number} ms
 */
export function formatMs(ms) {
  ms = Math.max(0, ms);
  if (ms >= 86400000) return `${Math.floor(ms / 86400000)}d ${String(Math.floor(ms / 3600000) % 24).padStart(2, "0")}h`;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  if (h) return `${h}:${String(m).padStart(2, "0")}:${String(sec).padStart(2, "0")}`;
  if (ms < 10000) return `${m}:${String(sec).padStart(2, "0")}.${Math.floor(ms / 100) % 10}`;
  return `${m}:${String(sec).padStart(2, "0")}`;
}

/**
 * The end of a game as people say it (the terminal client says the same).
 * @param {{reason?: string | null, winner?: string | null}} status
 * @param {string[]} sides
 */
export function endingSentence(status, sides) {
  const reason = status.reason || "unknown";
  const w = status.winner;
  if (!w) {
    return /** @type {Record<string, string>} */ ({
      aborted: "Game aborted", agreement: "Draw by agreement",
      repetition: "Draw: the same position came up three times",
      no_capture_limit: "Draw: 20 turns without a capture", passes: "Draw: both players passed",
    })[reason] || `Draw (${reason.replaceAll("_", " ")})`;
  }
  const W = cap(w), L = cap(sides.find((s) => s !== w) || "the opponent");
  const why = /** @type {Record<string, string>} */ ({
    resign: `${L} resigned`, timeout: `${L} ran out of time`, abandoned: `${L} left the game`,
    no_moves: `${L} had no legal move`, one_group: `${W} connected their pieces into one group`,
    connection: `${W} connected their two edges`, palace: `${W} took a palace`,
    corners: `${W} holds enough corners`,
  })[reason] || reason.replaceAll("_", " ");
  return `${why} — ${W} wins`;
}

/**
 * Cell names a move mentions, lower-cased: a letter followed by digits (and apostrophes).
 * @param {string} move
 */
export function cellsIn(move) {
  return (move.match(/[a-z]\d+'*/gi) || []).map((c) => c.toLowerCase());
}

/**
 * A rating change in words: `1500 → 1523 (+23)`.
 * @param {number} before
 * @param {number} after
 */
export function ratingChange(before, after) {
  const b = Math.round(before);
  const a = Math.round(after);
  const d = a - b;
  return `${b} → ${a} (${d >= 0 ? "+" : ""}${d})`;
}
