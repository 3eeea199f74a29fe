// @ts-check
// The arena page of the web client (`/t/<id>`, `?code=` for a private arena) and the
// lobby's list of arenas with its "Create an arena" form. The page follows the arena's
// document live (`arena.watch`, then `arena.diff` patches with a seq, exactly as the lobby:
// protocol/docs/PROTOCOL.md, "Arenas"); joining, pausing and the pairings go over the same
// websocket as everything else. Names are set as text, never as markup.

import { $, el, cap, count, field, formOf } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, session, go } from "../lib/session.js";
import { Versioned } from "../lib/versioned.js";
import { clockLabel, formatMs, parseClock } from "../lib/words.js";
import { kindLabel } from "../lib/kinds.js";
import { playerLink, kindSelect, formError } from "../lib/views.js";

/** @typedef {import("../lib/link.js").Incoming} Incoming */
/** @typedef {import("../lib/documents").ArenaDoc} ArenaDoc */
/** @typedef {import("../lib/documents").LobbyDoc} LobbyDoc */
/** @typedef {import("../lib/messages").Request<"arena.create">} CreateArena */

/** The arena shown: its id, code and document; null on other pages. @type {{id: string, code: string | null, published: Versioned<ArenaDoc>} | null} */
let shown = null;

/**
 * The fire mark (two wins in a row: the next win counts double), drawn as an inline SVG
 * flame rather than an emoji, which a system without an emoji font shows as an empty box.
 * @param {string} title
 */
function fireMark(title) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 12 16");
  svg.setAttribute("width", "0.75em");
  svg.setAttribute("height", "1em");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "on fire");
  svg.setAttribute("style", "vertical-align: -0.125em");
  const t = document.createElementNS(ns, "title");
  t.textContent = title;
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", "M6 0C7 4 12 6 12 10.5A6 5.5 0 0 1 0 10.5C0 7.5 2 6 3 4C3.5 6 4.5 7 5.5 7C5 4.5 5 2 6 0Z");
  path.setAttribute("fill", "#e8590c");
  svg.append(t, path);
  return el("span", { class: "fire", title }, " ", svg);
}

/** The status of an arena in words. */
const STATUS = { scheduled: "starts soon", running: "running", finished: "finished", cancelled: "cancelled" };

/**
 * The arena's page link (with its code for a private arena).
 * @param {string} id
 * @param {string | null} [code]
 */
export function arenaPath(id, code) {
  return `/t/${encodeURIComponent(id)}${code ? `?code=${encodeURIComponent(code)}` : ""}`;
}

/**
 * Opens the page of arena `id` and watches it.
 * @param {string} id
 * @param {string | null} code
 */
export function show(id, code) {
  shown = { id, code, published: new Versioned(() => watch()) };
  $("#main").replaceChildren(
    el("div", { class: "arena" },
      el("h1", { id: "arena-title", text: "Loading the arena…" }),
      el("p", { id: "arena-heading", class: "muted" }),
      el("p", { id: "arena-countdown", class: "countdown", role: "timer" }),
      el("div", { class: "controls", id: "arena-controls" }),
      el("p", { class: "error", id: "arena-error", role: "alert" }),
      el("section", { class: "panel podium", id: "arena-podium", hidden: true }),
      el("div", { class: "grid" },
        el("section", { class: "panel" },
          el("h2", { text: "Standings" }),
          el("table", { class: "table standings", id: "standings" },
            el("thead", {}, el("tr", {}, ["#", "Player", "Score", "Sheet", "Performance"].map((h) => el("th", { text: h })))),
            el("tbody", {}))),
        el("section", { class: "panel" },
          el("h2", { text: "Games in progress" }),
          el("ul", { class: "list", id: "arena-games" }),
          el("p", { class: "muted", id: "arena-scoring" }, "Scoring: a win 2, a draw 1; after two wins in a row (",
            fireMark("on fire"), ") a win counts double; a berserk win one more.")))));
  if (link.ready) watch();
}

/** Asks for the arena's document again (on opening the page, after a gap, after reconnecting). */
export function watch() {
  if (!shown) return;
  const s = shown;
  /** @type {import("../lib/link.js").Outgoing} */
  const msg = { t: "arena.watch" };
  if (s.code) msg.code = s.code; else msg.id = s.id;
  link.request(msg).catch((e) => {
    if (e.code === "disconnected") return;
    arenaError(errorText(e));
    if (!s.published.doc) $("#arena-title").textContent = "No such arena";
  });
}

/** Leaves the page: the pushes stop. */
export function leave() {
  if (shown && link.ready) link.send({ t: "arena.unwatch", id: shown.id });
  shown = null;
}

/**
 * An `arena` answer or `arena.diff` push: applied when it is the page's arena (a missed diff
 * asks for the whole document again, as for the lobby).
 * @param {Incoming} msg
 */
export function onMessage(msg) {
  if (!shown) return;
  if (msg.t === "arena") {
    const doc = /** @type {ArenaDoc | null} */ (/** @type {unknown} */ (msg.doc));
    if (!doc || doc.id !== shown.id) return;
    if (shown.published.snapshot(msg.seq, doc)) redraw();
  } else if (msg.t === "arena.diff") {
    if (msg.id === shown.id && shown.published.diff(msg.seq, msg.patch)) redraw();
  }
}

/** @param {string} text */
function arenaError(text) {
  const p = $("#arena-error");
  if (p) p.textContent = text;
}

/** Our line of the standings, if we joined. */
function me() {
  const m = session.me;
  const doc = shown && shown.published.doc;
  return m && doc ? (doc.players || []).find((p) => p.id === m.id) : null;
}

/** Draws the arena page from its document. */
export function redraw() {
  const doc = shown && shown.published.doc;
  if (!doc || !$("#arena-title")) return;
  document.title = `${doc.name} · Stoa`;
  $("#arena-title").textContent = doc.name;
  $("#arena-heading").textContent = [kindLabel(doc), clockLabel(doc.clock), doc.rated ? "rated" : "casual",
    doc.berserk ? "berserk allowed" : null, count((doc.players || []).length, "player"), STATUS[doc.status] || doc.status,
    doc.code ? `code ${doc.code}` : null].filter(Boolean).join(" · ");
  drawControls(doc);
  tick();
  const tbody = $("#standings tbody");
  const mine = session.me && session.me.id;
  // Pausing means something only while the arena is open: no "(paused)" after its end.
  const open = doc.status === "scheduled" || doc.status === "running";
  tbody.replaceChildren(...(doc.players || []).map((p, i) => el("tr", { "data-player": p.id, class: p.id === mine ? "mine" : null },
    el("td", { text: `${i + 1}` }),
    el("td", {}, playerLink(p, p.bot ? " (computer)" : ""), open && p.paused ? el("span", { class: "muted", text: " (paused)" }) : null,
      p.playing ? el("span", { class: "muted", text: " (playing)" }) : null),
    el("td", { class: "score", text: `${p.score}` }),
    el("td", { class: "sheet" }, p.sheet || "", p.fire ? fireMark("on fire: the next win counts double") : null),
    el("td", { class: "performance", text: p.games ? `${p.performance}` : "–" }))));
  if (!(doc.players || []).length) tbody.replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted", text: "Nobody has joined yet." })));
  drawPodium(doc);
  const names = new Map((doc.players || []).map((p) => [p.id, p]));
  const playing = Object.entries(doc.games || {}).filter(([, g]) => g.status === "playing");
  $("#arena-games").replaceChildren(...(playing.length ? playing.map(([id, g]) => {
    const sides = Object.entries(g).filter(([k, v]) => typeof v === "string" && names.has(v) && k !== "winner");
    return el("li", { "data-game": id, class: id === doc.top_game ? "top-game" : null },
      el("a", { href: `/g/${encodeURIComponent(id)}${doc.code ? `?code=${encodeURIComponent(doc.code)}` : ""}`, "data-nav": true,
        text: sides.map(([s, pid]) => `${names.get(pid).name} (${s})`).join(" vs ") }),
      id === doc.top_game ? el("span", { class: "muted", text: " · top game" }) : null);
  }) : [el("li", { class: "muted", text: "No game in progress." })]));
}

/**
 * The podium of a finished arena, once its last game is played out: the winner, second
 * and third with their points, above the final standings. Nobody wins when no game was
 * played.
 * @param {ArenaDoc} doc
 */
function drawPodium(doc) {
  const box = $("#arena-podium");
  if (!box) return;
  const over = doc.status === "finished" && !Object.values(doc.games || {}).some((g) => g.status === "playing");
  const ranked = (doc.players || []).filter((p) => p.games > 0).slice(0, 3);
  if (!over) { box.replaceChildren(); box.hidden = true; return; }
  box.hidden = false;
  if (!ranked.length) { box.replaceChildren(el("p", { class: "muted", text: "No game was played: nobody wins." })); return; }
  const places = ["Winner", "2nd", "3rd"];
  box.replaceChildren(
    el("h2", { id: "arena-winner", text: `${ranked[0].name} wins the arena` }),
    el("ol", { class: "podium", style: "list-style: none; padding-left: 0" }, ranked.map((p, i) => el("li", { "data-place": i + 1 },
      el("strong", { text: `${places[i]}: ` }), playerLink(p, ""), ` with ${count(p.score, "point")}`))));
}

/** @param {ArenaDoc} doc */
function drawControls(doc) {
  const box = $("#arena-controls");
  const mine = me();
  const open = doc.status === "scheduled" || doc.status === "running";
  /**
   * @param {string} label
   * @param {"arena.join" | "arena.pause" | "arena.cancel"} t
   */
  const act = (label, t) => el("button", { type: "button", class: label === "join" ? "primary" : null, "data-action": label, onclick: () => {
    link.request({ t, id: doc.id }).then(() => arenaError("")).catch((e) => arenaError(errorText(e)));
  }, text: cap(label) });
  const buttons = [];
  if (open && (!mine || mine.paused)) buttons.push(act("join", "arena.join"));
  if (open && mine && !mine.paused) buttons.push(act("pause", "arena.pause"));
  const creator = session.me && doc.creator && doc.creator.id === session.me.id;
  if (creator && doc.status === "scheduled") buttons.push(act("cancel", "arena.cancel"));
  if (mine && mine.playing) {
    buttons.push(el("a", { href: `/g/${encodeURIComponent(mine.playing)}${doc.code ? `?code=${encodeURIComponent(doc.code)}` : ""}`, "data-nav": true, text: "Your game" }));
  }
  let line = "";
  if (mine && open) line = mine.paused ? "Paused: you are not paired until you join again." : (doc.status === "running" ? "In the pool: you are paired as soon as an opponent is free." : "Joined: pairing starts at the start.");
  box.replaceChildren(...buttons, el("span", { class: "muted", id: "arena-me", text: line ? ` ${line}` : "" }));
}

/** The countdown to the start or to the end; called often (the page's clock tick). */
export function tick() {
  const doc = shown && shown.published.doc;
  const p = $("#arena-countdown");
  if (!doc || !p) return;
  const now = link.serverNow();
  let text;
  if (doc.status === "scheduled" || (doc.status !== "cancelled" && now < doc.starts_at)) text = `Starts in ${formatMs(doc.starts_at - now)}`;
  else if (doc.status === "running" && now < doc.ends_at) text = `Ends in ${formatMs(doc.ends_at - now)}`;
  else if (doc.status === "cancelled") text = "Cancelled by its creator.";
  else text = Object.values(doc.games || {}).some((g) => g.status === "playing") ? "Over: the last games are being played out." : "Finished: these are the final standings.";
  p.textContent = text;
}

/** The lobby's list of public arenas (the lobby document's `arenas`), drawn on its changes. */
/** @param {LobbyDoc} doc */
export function drawLobbyArenas(doc) {
  const list = $("#arenas");
  if (!list) return;
  const arenas = Object.entries((doc && doc.arenas) || {}).sort(([, a], [, b]) => a.starts_at - b.starts_at);
  list.replaceChildren(...(arenas.length ? arenas.map(([id, a]) => el("li", { "data-arena": id },
    el("a", { href: arenaPath(id), "data-nav": true, text: a.name }),
    el("span", { class: "muted", text: ` · ${kindLabel(a)} · ${clockLabel(a.clock)}${a.rated ? " · rated" : ""} · ${a.players} joined · ` }),
    el("span", { class: "muted arena-when", "data-starts": a.starts_at, "data-ends": a.ends_at })))
    : [el("li", { class: "muted", text: "No arenas right now." })]));
  tickLobbyArenas();
}

/** The lobby's arena countdowns, counted on between the lobby's changes. */
export function tickLobbyArenas() {
  const now = link.serverNow();
  for (const span of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#arenas .arena-when"))) {
    const starts = Number(span.dataset.starts), ends = Number(span.dataset.ends);
    span.textContent = now < starts ? `starts in ${formatMs(starts - now)}` : `ends in ${formatMs(ends - now)}`;
  }
}

/** The lobby's "Create an arena" panel. */
export function arenaPanel() {
  return el("section", { class: "panel" },
    el("h2", { text: "Arenas" }),
    el("ul", { class: "list", id: "arenas" }),
    el("h2", { text: "Create an arena" }),
    el("form", { class: "stack", id: "arena-form", onsubmit: createArena },
      el("label", {}, "Game", kindSelect("kind")),
      el("label", {}, "Clock", el("input", { name: "clock", value: "3+2" })),
      el("label", {}, "Name", el("input", { name: "name", maxlength: 40, placeholder: "the game's arena" })),
      el("label", {}, "Starts in (minutes)", el("input", { name: "starts", type: "number", min: 0, step: "any", value: 5 })),
      el("label", {}, "or starts at (your time)", el("input", { name: "at", type: "datetime-local" })),
      el("label", {}, "Lasts (minutes)", el("input", { name: "duration", type: "number", min: 0.2, step: "any", value: 30 })),
      el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "rated" }), " rated")),
      el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "berserk", checked: true }), " berserk allowed (with a running clock)")),
      el("label", {}, "No points for a draw before ply", el("input", { name: "min_draw", type: "number", min: 0, max: 500, step: 1, value: 0 })),
      el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "bots" }), " computer players may join (casual only)")),
      el("label", {}, el("span", {}, el("input", { type: "checkbox", name: "private" }), " private (joined by its code)")),
      el("button", { class: "primary", type: "submit", text: "Create the arena" }), formError()));
}

/** @param {SubmitEvent} e */
async function createArena(e) {
  e.preventDefault();
  const f = formOf(e);
  const err = /** @type {HTMLElement} */ (f.querySelector(".form-error"));
  try {
    const starts = Number(f.starts.value);
    const duration = Number(f.duration.value);
    if (!Number.isFinite(starts) || starts < 0) throw new Error("starts in: write a number of minutes");
    if (!Number.isFinite(duration) || duration <= 0) throw new Error("lasts: write a number of minutes");
    const minDraw = Number(f.min_draw.value || 0);
    if (!Number.isInteger(minDraw) || minDraw < 0 || minDraw > 500) throw new Error("no points for a draw before ply: write a whole number from 0 to 500");
    const clock = parseClock(f.clock.value);
    // `bots` and `berserk` default to false on the server: the request names them when set.
    /** @type {Omit<CreateArena, "bots" | "berserk"> & Partial<Pick<CreateArena, "bots" | "berserk">>} */
    const msg = { t: "arena.create", kind: f.kind.value, options: {}, clock,
      rated: f.rated.checked, duration_ms: Math.round(duration * 60000),
      visibility: f.private.checked ? "private" : "public", min_draw_plies: minDraw };
    if (f.at.value) {
      // A start time of one's own clock, told to the server on its clock.
      const at = new Date(f.at.value).getTime();
      if (!Number.isFinite(at)) throw new Error("starts at: pick a date and time");
      msg.starts_at_ms = Math.round(at + (link.offset || 0));
    } else {
      msg.starts_in_ms = Math.round(starts * 60000);
    }
    if (f.bots.checked) {
      if (msg.rated) throw new Error("computer players may join casual arenas only: untick rated or computer players");
      msg.bots = true;
    }
    // Berserk halves a running clock: there is none to halve without one or by the day.
    msg.berserk = f.berserk.checked && !["none", "correspondence"].includes(clock.kind);
    if (field(f, "name").value.trim()) msg.name = field(f, "name").value.trim();
    const answer = await link.request(/** @type {CreateArena} */ (msg));
    err.textContent = "";
    go(arenaPath(answer.doc.id, answer.doc.code));
  } catch (/** @type {any} */ x) {
    err.textContent = x.code ? `error ${x.code}: ${x.message}` : String(x.message || x);
  }
}
