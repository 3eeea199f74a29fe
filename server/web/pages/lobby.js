// @ts-check
// The lobby (`/`): who is online, one's own games, the live games, the open rooms and the
// arenas, all from the lobby's document (`lobby.watch`, then `lobby.diff` patches); and the
// forms that start a game: quick pairing, hosting a room, playing the computer, joining by
// code, creating an arena.

import { $, $form, el, formOf, none } from "../lib/dom.js";
import { link, session, go } from "../lib/session.js";
import { Versioned } from "../lib/versioned.js";
import { clockLabel, endingSentence, parseClock } from "../lib/words.js";
import { kindInfo, kindLabel } from "../lib/kinds.js";
import { playerLink, kindSelect, formError, formSays, optionsBox, fillOptions, readOptions } from "../lib/views.js";
import { drawHosted } from "./room.js";
import { arenaPanel, drawLobbyArenas, tickLobbyArenas } from "./arena.js";

/** @typedef {import("../lib/link.js").Incoming} Incoming */
/** @typedef {import("../lib/documents").LobbyDoc} LobbyDoc */

/** The lobby's document while the lobby is shown. @type {Versioned<LobbyDoc>} */
const lobby = new Versioned(() => watch());
/** The queue we wait in: the last `queue.status` (or the join's answer); null when in none. @type {import("../lib/link.js").Answer | null} */
let queued = null;

/** Opens the lobby and watches its document. */
export function show() {
  lobby.reset();
  // One's own games and the live ones first, each panel as tall as its lines (they are
  // what a returning player looks for, and must be in sight without scrolling); the forms
  // follow.
  $("#main").replaceChildren(
    el("h1", { text: "Stoa" }),
    el("p", { class: "muted", id: "online", text: "…" }),
    el("div", { class: "grid lists" },
      el("section", { class: "panel", id: "my-games-panel" }, el("h2", { text: "Your games" }),
        el("ul", { class: "list", id: "my-games" }), el("h2", { text: "Finished" }), el("ul", { class: "list", id: "my-history" })),
      el("section", { class: "panel", id: "games-panel" }, el("h2", { text: "Live games" }), el("ul", { class: "list", id: "games" })),
      el("section", { class: "panel", id: "rooms-panel" }, el("h2", { text: "Open rooms" }), el("ul", { class: "list", id: "rooms" }))),
    el("div", { class: "grid" },
      el("section", { class: "panel" },
        el("h2", { text: "Quick pairing" }),
        el("form", { class: "stack", id: "quick", onsubmit: quickPair },
          el("label", {}, "Game", kindSelect("kind")),
          el("label", {}, "Clock", el("input", { name: "clock", value: "5+3" })),
          optionsBox(),
          el("button", { class: "primary", type: "submit", text: "Find an opponent" }), formError()),
        el("p", { id: "queue", class: "muted", "aria-live": "polite" })),
      el("section", { class: "panel" },
        el("h2", { text: "Host a room" }),
        el("form", { class: "stack", id: "host", onsubmit: hostRoom },
          el("label", {}, "Game", kindSelect("kind")),
          el("label", {}, "Clock", el("input", { name: "clock", value: "5+3" })),
          optionsBox(),
          el("label", {}, "Your side", el("select", { name: "side" }, el("option", { value: "random", text: "random" }))),
          el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "public" }), " public (listed in the lobby)")),
          el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "rated" }), " rated")),
          el("button", { class: "primary", type: "submit", text: "Create the room" }), formError()),
        el("div", { id: "hosted", "aria-live": "polite" })),
      el("section", { class: "panel" },
        el("h2", { text: "Play the computer" }),
        el("form", { class: "stack", id: "computer", onsubmit: playComputer },
          el("label", {}, "Game", kindSelect("kind")),
          el("label", {}, "Level", el("select", { name: "level" },
            [1, 2, 3, 4, 5].map((l) => el("option", { value: l, text: `${l}${l === 1 ? " (makes mistakes)" : l === 5 ? " (strongest)" : ""}`, selected: l === 3 })))),
          el("label", {}, "Clock", el("input", { name: "clock", value: "5+3" })),
          optionsBox(),
          el("button", { class: "primary", type: "submit", text: "Play the computer" }), formError()),
        el("p", { id: "computer-status", class: "muted", "aria-live": "polite" })),
      el("section", { class: "panel" },
        el("h2", { text: "Join by code" }),
        el("form", { class: "stack", id: "joincode", onsubmit: (/** @type {SubmitEvent} */ e) => {
          e.preventDefault();
          const code = formOf(e).code.value.trim();
          if (code) go(`/r/${encodeURIComponent(code)}`);
        } },
          el("label", {}, "Room code", el("input", { name: "code", autocomplete: "off" })),
          el("button", { type: "submit", text: "Join" }))),
      arenaPanel()),
    el("p", { class: "error", id: "lobby-error", role: "alert" }),
  );
  for (const f of ["#quick", "#host", "#computer"].map($form)) {
    f.kind.addEventListener("change", () => fillOptions(f));
    fillOptions(f);
  }
  const hostForm = $form("#host");
  const fillSides = async () => {
    const kind = hostForm.kind.value;
    const info = await kindInfo(kind, {}).catch(none);
    hostForm.side.replaceChildren(el("option", { value: "random", text: "random" }),
      ...(info ? info.side_names : []).map((s) => el("option", { value: s, text: s })));
  };
  hostForm.kind.addEventListener("change", fillSides);
  fillSides();
  if (link.ready) watch();
}

/** Asks for the lobby's document (on opening it, after a gap, after reconnecting). */
export function watch() {
  // Whatever node answers, its document is the one to follow from now on.
  lobby.reset();
  link.request({ t: "lobby.watch" }).catch((e) => lobbyError(e));
  drawMyGames();
}

/** Leaves the lobby: its pushes stop. */
export function leave() {
  link.send({ t: "lobby.unwatch" });
}

/**
 * The lobby's part of the server's messages.
 * @param {Incoming} msg
 */
export function onMessage(msg) {
  if (msg.t === "lobby") {
    lobby.reset();
    if (lobby.snapshot(msg.seq, msg.doc)) redraw();
  } else if (msg.t === "lobby.diff") {
    if (lobby.diff(msg.seq, msg.patch)) redraw();
  } else if (msg.t === "queue.status") {
    queued = msg;
    drawQueue();
  }
}

/** A game of ours started: we wait in no queue any more. */
export function gameStarted() {
  queued = null;
}

/** Draws the lobby's lists from its document. */
export function redraw() {
  const doc = lobby.doc;
  if (!doc || !$("#rooms")) return;
  const queues = Object.values(doc.queues || {}).filter((q) => q.waiting > 0)
    .map((q) => `${kindLabel(q)} ${clockLabel(q.clock)}: ${q.waiting}`);
  $("#online").textContent = `${doc.online} online` + (queues.length ? ` · waiting in queues: ${queues.join(", ")}` : "");
  const rooms = Object.entries(doc.rooms || {});
  $("#rooms").replaceChildren(...(rooms.length ? rooms.map(([code, r]) => el("li", { "data-room": code },
    el("span", { text: `${kindLabel(r)} · ${clockLabel(r.clock)}${r.rated ? " · rated" : ""} · by ` }), playerLink(r.host), " ",
    el("button", { type: "button", onclick: () => go(`/r/${encodeURIComponent(code)}`), text: "Join" }))) : [el("li", { class: "muted", text: "No open rooms right now." })]));
  drawLobbyArenas(doc);
  const games = Object.entries(doc.games || {});
  $("#games").replaceChildren(...(games.length ? games.map(([id, g]) => el("li", { "data-game": id },
    el("a", { href: `/g/${encodeURIComponent(id)}`, "data-nav": true, text: kindLabel(g) }), " · ",
    ...Object.entries(g.players || {}).flatMap(([s, p], i) => [i ? " vs " : "", playerLink(p, p.bot ? " (computer)" : ""), ` (${s})`]), " ",
    el("span", { class: "muted", text: `${clockLabel(g.time_control || { kind: g.clock })} · ${g.spectators} watching` }))) : [el("li", { class: "muted", text: "No live games right now." })]));
}

/** The lobby's countdowns, counted on between its changes. */
export function tick() {
  tickLobbyArenas();
}

/**
 * The way back to one's games: the unfinished ones (`welcome.games`) and the last finished
 * ones (`history`), each a link to its page (a finished one replays there).
 */
async function drawMyGames() {
  const open = $("#my-games");
  if (!open) return;
  /** @param {string[]} ids */
  const unfinished = (ids) => open.replaceChildren(...(ids.length ? ids.map((id) => el("li", { "data-game": id },
    el("a", { href: `/g/${encodeURIComponent(id)}`, "data-nav": true, text: `game ${id} (not finished)` })))
    : [el("li", { class: "muted", text: "No unfinished games." })]));
  const ids = session.myGames;
  unfinished(ids);
  const answer = await link.request({ t: "history", limit: 10 }).catch(none);
  const done = $("#my-history");
  if (!answer || !done) return;
  /** @type {{id: string, kind: string, options?: Record<string, unknown>, players?: Record<string, {name: string}>, status: {reason?: string, winner?: string}}[]} */
  const games = answer.games || [];
  // A game that ended since we connected is no longer unfinished.
  const ended = new Set(games.map((g) => g.id));
  session.myGames = ids.filter((id) => !ended.has(id));
  unfinished(session.myGames);
  done.replaceChildren(...(games.length ? games.map((g) => el("li", { "data-game": g.id },
    el("a", { href: `/g/${encodeURIComponent(g.id)}`, "data-nav": true,
      text: `${kindLabel(g)} · ${Object.entries(g.players || {}).map(([s, p]) => `${p.name} (${s})`).join(" vs ")} · ${endingSentence(g.status, Object.keys(g.players || {}))}` })))
    : [el("li", { class: "muted", text: "No finished games yet." })]));
}

/**
 * An error said at the bottom of the lobby, or inside `form` when it answers that form.
 * @param {{code?: string, message?: string}} e
 * @param {HTMLFormElement} [form]
 */
function lobbyError(e, form) {
  const p = (form && form.querySelector(".form-error")) || $("#lobby-error");
  if (p) p.textContent = `error ${e.code}: ${e.message || e}`;
}

/**
 * A refusal or a mistake in the form, said in the form.
 * @param {any} err
 * @param {HTMLFormElement} f
 */
const formFailed = (err, f) => lobbyError(err.code ? err : { code: "input", message: err.message }, f);

/** @param {SubmitEvent} e */
async function quickPair(e) {
  e.preventDefault();
  const f = formOf(e);
  try {
    queued = await link.request({ t: "queue.join", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), rated: false });
    formSays(f, "");
    drawQueue();
  } catch (err) {
    formFailed(err, f);
  }
}

function drawQueue() {
  const q = $("#queue");
  if (!q || !queued) return;
  const s = queued;
  const others = s.same_queue === undefined ? "" : ` · ${s.same_queue ? `${s.same_queue} others wait for the same game` : "nobody else waits for the same game yet"} · ${s.other_queues || 0} in other queues`;
  q.replaceChildren(`In the queue (position ${s.position})${others}. `,
    el("button", { type: "button", onclick: () => { link.send({ t: "queue.leave" }); queued = null; q.textContent = "Left the queue."; }, text: "Leave the queue" }));
}

/** @param {SubmitEvent} e */
async function hostRoom(e) {
  e.preventDefault();
  const f = formOf(e);
  try {
    const answer = await link.request({ t: "room.create", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), rated: f.rated.checked, visibility: f.public.checked ? "public" : "private",
      side: f.side.value });
    formSays(f, "");
    drawHosted($("#hosted"), answer.room);
  } catch (err) {
    formFailed(err, f);
  }
}

/** @param {SubmitEvent} e */
async function playComputer(e) {
  e.preventDefault();
  const f = formOf(e);
  const status = $("#computer-status");
  try {
    await link.request({ t: "bot.play", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), level: Number(f.level.value), side: "random" });
    status.textContent = `Waiting for the computer (level ${f.level.value}) to sit down…`;
  } catch (err) {
    status.textContent = "";
    formFailed(err, f);
  }
}
