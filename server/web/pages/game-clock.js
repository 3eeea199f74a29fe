// @ts-check
// A game's clocks on the page: what each side's clock reads between the server's documents
// (counted on from the document's `since`), the first-move countdown, and the clocks standing
// still while the server is away (offline, restarting, or without its store).

import { $, cap } from "../lib/dom.js";
import { link } from "../lib/session.js";
import { formatMs } from "../lib/words.js";

/** @typedef {import("../lib/documents").GameDoc} GameDoc */

/** Why the clocks shown stand still, said under the players. @type {Record<string, string>} */
const PAUSES = {
  offline: "Offline: the clocks stand as they were when the connection dropped.",
  shutdown: "The server is restarting: the clocks stand still until it is back.",
  storage: "Paused: the server cannot reach its storage; the clocks stand still and moves wait until it is back.",
};

/** The clocks shown stand still since server time `at`, and why. @type {{at: number, why: string} | null} */
let pause = null;

/**
 * Stops the clocks on the page at this instant: the server paused them (it shuts down, or
 * its store is away), or we cannot hear from it (offline). Counting on would show time the
 * server may never charge; the document after the pause says where they stand.
 * @param {string} why
 */
export function pauseClocks(why) {
  if (!pause) pause = { at: link.serverNow(), why };
  else if (why !== "offline") pause.why = why;
  drawPause(ticker);
}

/** Back: what the server now sends is the truth again (a paused clock arrives with its new `since`). */
export function linkBack() {
  if (pause && pause.why !== "storage") { pause = null; drawPause(ticker); }
}

/** What counts the clocks on: the game page's tick, given with each drawing. */
let ticker = () => {};

/**
 * The line that says why the clocks stand still, and the clocks.
 * @param {() => void} tick
 */
export function drawPause(tick) {
  ticker = tick;
  const line = $("#paused");
  if (line) line.textContent = pause ? PAUSES[pause.why] : "";
  tick();
}

/**
 * While a game is shown, asks `/health` now and then: a store outage changes no document
 * (the server only refuses actions), and `/health` is where the server says so.
 * @param {() => void} tick
 */
export async function watchStorage(tick) {
  /** @type {string[]} */
  let reasons = [];
  try {
    const r = await fetch("/health", { cache: "no-store" });
    reasons = (await r.json()).reasons || [];
  } catch {
    return;
  }
  const away = reasons.some((x) => x.startsWith("store"));
  if (away) pauseClocks("storage");
  else if (pause && pause.why === "storage") {
    pause = null;
    drawPause(tick);
  }
}

/**
 * The first-move countdown while a side has yet to make its first action.
 * @param {GameDoc} doc
 * @param {number} now
 * @param {string | null} me
 */
function firstMoveLine(doc, now, me) {
  const d = doc.clock && doc.clock.first_action_deadline;
  if (!d || doc.status.state === "ended" || !doc.to_act) return "";
  const who = doc.to_act === me ? "You have" : `${cap(doc.to_act)} has`;
  return `${who} ${formatMs(d - now)} to make a first move, or the game is aborted.`;
}

/**
 * What side's clock reads at server time `now`, and whether it runs.
 * @param {GameDoc} doc
 * @param {string} side
 * @param {number} now
 */
function clockReading(doc, side, now) {
  /** @type {Record<string, any>} */
  const c = doc.clock || {};
  if (!c.kind || c.kind === "none") return null;
  const base = (c.remaining_ms && typeof c.remaining_ms[side] === "number") ? c.remaining_ms[side]
    : c.initial_ms !== undefined ? c.initial_ms : (c.days_per_turn || 0) * 86400000;
  const running = doc.status.state !== "ended" && c.running === side;
  let elapsed = running ? Math.max(0, now - (c.since || now)) : 0;
  if (c.kind === "delay") elapsed = Math.max(0, elapsed - (c.delay_ms || 0));
  let text = formatMs(base - elapsed);
  const periods = c.periods_left && typeof c.periods_left[side] === "number" ? c.periods_left[side] : c.periods;
  if (c.kind === "byoyomi") text += ` +${periods}×${c.period_ms / 1000}s`;
  return { text, running, low: base - elapsed < 10000 };
}

/**
 * The clocks and the first-move countdown of `doc`, counted on to now (or to the pause).
 * @param {GameDoc} doc
 * @param {string | null} me
 */
export function tickClocks(doc, me) {
  const now = pause ? pause.at : link.serverNow();
  const line = $("#first-move");
  if (line) line.textContent = firstMoveLine(doc, now, me);
  for (const e of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-clock]"))) {
    const r = clockReading(doc, e.dataset.clock || "", now);
    e.textContent = r ? r.text : "–";
    e.classList.toggle("running", !!(r && r.running));
    e.classList.toggle("low", !!(r && r.running && r.low));
  }
}

