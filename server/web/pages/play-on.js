// @ts-check
// "Play on from here against the computer": a lesson step's position becomes a real game
// against a computer player. The form sends `bot.play` with the step's kind, options and
// position (protocol/docs/PROTOCOL.md, "Computer players"); the server answers with a private
// room, a bot joins it, and the `game.started` that follows takes the page to the game (as
// the lobby's "Play the computer" does: app.js follows every `game.started`). The person plays
// the side the lesson had them play: the side to act in the step's position.

import { el, formOf } from "../lib/dom.js";
import { link } from "../lib/session.js";

/**
 * Where a game from a lesson step starts.
 * @typedef {{kind: string, options: import("../wire").JsonValue, position: string}} From
 */

/** The level the form offers first. */
const DEFAULT_LEVEL = 2;

/**
 * The form: a level select and the button. `from` is asked at the click (the step shown
 * then).
 * @param {() => From | null} from
 */
export function playOnForm(from) {
  const status = el("p", { class: "muted", id: "play-on-status", "aria-live": "polite" });
  return el("form", { class: "play-on", id: "play-on", onsubmit: (/** @type {SubmitEvent} */ e) => {
    e.preventDefault();
    const start = from();
    if (start) playOn(start, Number(formOf(e).level.value), status);
  } },
  el("label", {}, "Level ", el("select", { name: "level", "aria-label": "the computer's level" },
    [1, 2, 3, 4, 5].map((l) => el("option", { value: l, text: `${l}${l === 1 ? " (makes mistakes)" : l === 5 ? " (strongest)" : ""}`, selected: l === DEFAULT_LEVEL })))),
  " ",
  el("button", { type: "submit", id: "play-on-button", text: "Play on from here against the computer" }),
  status);
}

/**
 * Asks for the game: the side to act in the position is the person's (the engines say
 * which), then `bot.play` from that position, untimed.
 * @param {From} start
 * @param {number} level
 * @param {HTMLElement} status
 */
async function playOn(start, level, status) {
  status.textContent = "Asking for a computer opponent…";
  try {
    const pos = await link.request({ t: "position.explore", kind: start.kind, options: start.options, position: start.position, moves: [] });
    const side = /** @type {{to_act: string | null}} */ (/** @type {unknown} */ (pos)).to_act || "random";
    await link.request({ t: "bot.play", kind: start.kind, options: start.options, clock: null, level, side, position: start.position });
    status.textContent = `Waiting for the computer (level ${level}) to sit down…`;
  } catch (err) {
    status.textContent = `No game: ${/** @type {import("../lib/messages").Refusal} */ (err).message}`;
  }
}
