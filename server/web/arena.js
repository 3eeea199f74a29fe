// The arena page of the web client (`/t/<id>`, `?code=` for a private arena) and the
// lobby's list of arenas with its "Create an arena" form. The page follows the arena's
// document live (`arena.watch`, then `arena.diff` patches with a seq, exactly as the lobby:
// protocol/docs/PROTOCOL.md, "Arenas"); joining, pausing and the pairings go over the same
// websocket as everything else. Names are set as text, never as markup.

import { applyPatch } from "./vendor/fast-json-patch/core.mjs";
import { playerLink } from "./people.js";

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
};
const $ = (sel) => document.querySelector(sel);

/** The arena shown: `{id, code, seq, doc, error}`, or null on other pages. */
let shown = null;
/** What the page needs of the client: `{link, go, me, clockLabel, kindLabel, formatMs}`. */
let ctx = null;

/** `n` and the noun, singular for one: "1 player", "3 players". */
export const count = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/**
 * The fire mark (two wins in a row: the next win counts double), drawn as an inline SVG
 * flame rather than an emoji, which a system without an emoji font shows as an empty box.
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

/** The arena's page link (with its code for a private arena). */
export function arenaPath(id, code) {
  return `/t/${encodeURIComponent(id)}${code ? `?code=${encodeURIComponent(code)}` : ""}`;
}

/** Opens the page of arena `id` in `main` and watches it. */
export function showArena(main, id, code, context) {
  ctx = context;
  shown = { id, code, seq: null, doc: null, error: "" };
  main.replaceChildren(
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
  if (ctx.link.ready) watchArena();
}

/** Asks for the arena's document again (on opening the page and after reconnecting). */
export function watchArena() {
  if (!shown) return;
  const s = shown;
  const msg = { t: "arena.watch" };
  if (s.code) msg.code = s.code; else msg.id = s.id;
  ctx.link.request(msg).catch((e) => {
    if (e.code === "disconnected") return;
    arenaError(`error ${e.code}: ${e.message}`);
    if (!s.doc) $("#arena-title").textContent = "No such arena";
  });
}

/** Leaves the page: the pushes stop. */
export function leaveArena() {
  if (shown && ctx && ctx.link.ready) ctx.link.send({ t: "arena.unwatch", id: shown.id });
  shown = null;
}

/** An `arena` answer or `arena.diff` push: applied when it is the page's arena. */
export function onArenaMessage(msg) {
  if (!shown) return;
  if (msg.t === "arena") {
    if (!msg.doc || msg.doc.id !== shown.id) return;
    if (shown.seq !== null && msg.seq < shown.seq) return;
    shown.seq = msg.seq;
    shown.doc = msg.doc;
    drawArena();
    return;
  }
  if (msg.t === "arena.diff") {
    if (msg.id !== shown.id || shown.seq === null || msg.seq <= shown.seq) return;
    // A missed diff: the whole document again, as for the lobby.
    if (msg.seq !== shown.seq + 1) { watchArena(); return; }
    applyPatch(shown.doc, msg.patch, false, true);
    shown.seq = msg.seq;
    drawArena();
  }
}

function arenaError(text) {
  const p = $("#arena-error");
  if (p) p.textContent = text;
}

function me() {
  const m = ctx.me();
  return m && shown && shown.doc ? (shown.doc.players || []).find((p) => p.id === m.id) : null;
}

function drawArena() {
  const doc = shown && shown.doc;
  if (!doc || !$("#arena-title")) return;
  document.title = `${doc.name} · Stoa`;
  $("#arena-title").textContent = doc.name;
  $("#arena-heading").textContent = [ctx.kindLabel(doc), ctx.clockLabel(doc.clock), doc.rated ? "rated" : "casual",
    doc.berserk ? "berserk allowed" : null, count((doc.players || []).length, "player"), STATUS[doc.status] || doc.status,
    doc.code ? `code ${doc.code}` : null].filter(Boolean).join(" · ");
  drawControls();
  tickArena();
  const tbody = $("#standings tbody");
  const mine = ctx.me() && ctx.me().id;
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

function drawControls() {
  const doc = shown.doc;
  const box = $("#arena-controls");
  const mine = me();
  const open = doc.status === "scheduled" || doc.status === "running";
  const act = (label, t) => el("button", { type: "button", class: label === "join" ? "primary" : null, "data-action": label, onclick: () => {
    ctx.link.request({ t, id: doc.id }).then(() => arenaError("")).catch((e) => arenaError(`error ${e.code}: ${e.message}`));
  }, text: cap(label) });
  const buttons = [];
  if (open && (!mine || mine.paused)) buttons.push(act("join", "arena.join"));
  if (open && mine && !mine.paused) buttons.push(act("pause", "arena.pause"));
  const creator = ctx.me() && doc.creator && doc.creator.id === ctx.me().id;
  if (creator && doc.status === "scheduled") buttons.push(act("cancel", "arena.cancel"));
  if (mine && mine.playing) {
    buttons.push(el("a", { href: `/g/${encodeURIComponent(mine.playing)}${doc.code ? `?code=${encodeURIComponent(doc.code)}` : ""}`, "data-nav": true, text: "Your game" }));
  }
  let line = "";
  if (mine && open) line = mine.paused ? "Paused: you are not paired until you join again." : (doc.status === "running" ? "In the pool: you are paired as soon as an opponent is free." : "Joined: pairing starts at the start.");
  box.replaceChildren(...buttons, el("span", { class: "muted", id: "arena-me", text: line ? ` ${line}` : "" }));
}

const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : s);

/** The countdown to the start or to the end; called often (the page's clock tick). */
export function tickArena() {
  const doc = shown && shown.doc;
  const p = $("#arena-countdown");
  if (!doc || !p) return;
  const now = ctx.link.serverNow();
  let text;
  if (doc.status === "scheduled" || (doc.status !== "cancelled" && now < doc.starts_at)) text = `Starts in ${ctx.formatMs(doc.starts_at - now)}`;
  else if (doc.status === "running" && now < doc.ends_at) text = `Ends in ${ctx.formatMs(doc.ends_at - now)}`;
  else if (doc.status === "cancelled") text = "Cancelled by its creator.";
  else text = Object.values(doc.games || {}).some((g) => g.status === "playing") ? "Over: the last games are being played out." : "Finished: these are the final standings.";
  p.textContent = text;
}

/** The lobby's list of public arenas (the lobby document's `arenas`), drawn on its changes. */
export function drawLobbyArenas(doc, context) {
  ctx = context;
  const list = $("#arenas");
  if (!list) return;
  const arenas = Object.entries((doc && doc.arenas) || {}).sort(([, a], [, b]) => a.starts_at - b.starts_at);
  list.replaceChildren(...(arenas.length ? arenas.map(([id, a]) => el("li", { "data-arena": id },
    el("a", { href: arenaPath(id), "data-nav": true, text: a.name }),
    el("span", { class: "muted", text: ` · ${ctx.kindLabel(a)} · ${ctx.clockLabel(a.clock)}${a.rated ? " · rated" : ""} · ${a.players} joined · ` }),
    el("span", { class: "muted arena-when", "data-starts": a.starts_at, "data-ends": a.ends_at })))
    : [el("li", { class: "muted", text: "No arenas right now." })]));
  tickLobbyArenas();
}

/** The lobby's arena countdowns, counted on between the lobby's changes. */
export function tickLobbyArenas() {
  if (!ctx) return;
  const now = ctx.link.serverNow();
  for (const span of document.querySelectorAll("#arenas .arena-when")) {
    const starts = Number(span.dataset.starts), ends = Number(span.dataset.ends);
    span.textContent = now < starts ? `starts in ${ctx.formatMs(starts - now)}` : `ends in ${ctx.formatMs(ends - now)}`;
  }
}

/** The lobby's "Create an arena" panel. */
export function arenaPanel(context, formError, kindSelect) {
  ctx = context;
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

async function createArena(e) {
  e.preventDefault();
  const f = e.target;
  const err = f.querySelector(".form-error");
  try {
    const starts = Number(f.starts.value);
    const duration = Number(f.duration.value);
    if (!Number.isFinite(starts) || starts < 0) throw new Error("starts in: write a number of minutes");
    if (!Number.isFinite(duration) || duration <= 0) throw new Error("lasts: write a number of minutes");
    const minDraw = Number(f.min_draw.value || 0);
    if (!Number.isInteger(minDraw) || minDraw < 0 || minDraw > 500) throw new Error("no points for a draw before ply: write a whole number from 0 to 500");
    const msg = { t: "arena.create", kind: f.kind.value, options: {}, clock: ctx.parseClock(f.clock.value),
      rated: f.rated.checked, duration_ms: Math.round(duration * 60000),
      visibility: f.private.checked ? "private" : "public", min_draw_plies: minDraw };
    if (f.at.value) {
      // A start time of one's own clock, told to the server on its clock.
      const at = new Date(f.at.value).getTime();
      if (!Number.isFinite(at)) throw new Error("starts at: pick a date and time");
      msg.starts_at_ms = Math.round(at + (ctx.link.offset || 0));
    } else {
      msg.starts_in_ms = Math.round(starts * 60000);
    }
    if (f.bots.checked) {
      if (msg.rated) throw new Error("computer players may join casual arenas only: untick rated or computer players");
      msg.bots = true;
    }
    // Berserk halves a running clock: there is none to halve without one or by the day.
    msg.berserk = f.berserk.checked && !["none", "correspondence"].includes(msg.clock.kind);
    if (f.name.value.trim()) msg.name = f.name.value.trim();
    const answer = await ctx.link.request(msg);
    err.textContent = "";
    ctx.go(arenaPath(answer.doc.id, answer.doc.code));
  } catch (x) {
    err.textContent = x.code ? `error ${x.code}: ${x.message}` : String(x.message || x);
  }
}
