// The Stoa web client: lobby, rooms and games over the same websocket protocol as the
// terminal client (protocol/docs/PROTOCOL.md). One module, no build step: the server embeds
// these files. Everything shown comes from the server's documents; the client knows no rules
// beyond the cell names a move mentions (to build a move from clicks).

import { applyPatch } from "./vendor/fast-json-patch/core.mjs";
import { renderBoard, boardFacts } from "./board.js";
import { setupDevices, deviceLabel } from "./devices.js";
import { setupAccount, drawAccount, accountStatus, keepPrevious, previousOf, takePrevious } from "./account.js";
import { KINDS, TITLES, showPlayer, showLeaderboard, playerLink, ratingChange, leavePage } from "./people.js";
import { showArena, watchArena, leaveArena, onArenaMessage, tickArena, drawLobbyArenas, tickLobbyArenas, arenaPanel, arenaPath } from "./arena.js";
const IDENTITY_KEY = "stoa.identity";

const $ = (sel, root = document) => root.querySelector(sel);
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
const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : s);

// ---------------------------------------------------------------------------------------
// Identity: the same token model as the terminal client, kept in this browser's storage
// under the deployment's id (`welcome.deployment`; the page names it in its
// `<meta name="stoa-deployment">`, since the token goes in the `hello` before any `welcome`):
// every node of a cluster, and the balancer in front of them, is one deployment and so one
// identity. The entry of earlier versions, per origin under `stoa.identity`, is still read
// when the deployment has none, and moves under the deployment once the server accepts it.

// The page's deployment, then each `welcome`'s: a server that restarted in memory is a new
// deployment, and the identity it gave is kept under its id (not the page's first one).
let DEPLOYMENT = (() => {
  const m = document.querySelector('meta[name="stoa-deployment"]');
  const id = m ? m.getAttribute("content") : "";
  return id && !id.includes("{") ? id : "";
})();

function readIdentity(key) {
  try {
    return JSON.parse(localStorage.getItem(key)) || null;
  } catch {
    return null;
  }
}
function identityKey(deployment) {
  return deployment ? `${IDENTITY_KEY}.${deployment}` : IDENTITY_KEY;
}
function loadIdentity() {
  return (DEPLOYMENT && readIdentity(identityKey(DEPLOYMENT))) || readIdentity(IDENTITY_KEY) || {};
}
function saveIdentity(id, deployment) {
  localStorage.setItem(identityKey(deployment), JSON.stringify(id));
  // The per-origin entry of earlier versions, now kept under the deployment.
  const legacy = readIdentity(IDENTITY_KEY);
  if (deployment && legacy && legacy.token === id.token) localStorage.removeItem(IDENTITY_KEY);
}
/** Forgets a token the server refused, wherever it was kept. */
function forgetToken(token) {
  for (const key of [identityKey(DEPLOYMENT), IDENTITY_KEY]) {
    const id = readIdentity(key);
    if (id && id.token === token) localStorage.removeItem(key);
  }
}

// ---------------------------------------------------------------------------------------
// The link: one websocket, hello/welcome, requests by rid, reconnects with backoff.

class Link {
  constructor(onMessage, onWelcome, onStatus) {
    this.onMessage = onMessage;
    this.onWelcome = onWelcome;
    this.onStatus = onStatus;
    this.rid = 0;
    this.pending = new Map();
    this.offset = 0; // server clock minus ours
    this.backoff = 500;
    this.ws = null;
    this.ready = false;
    // Requests and messages made while there is no open, welcomed socket: sent in order
    // after the next `welcome` (never into a closing socket, which the browser refuses).
    this.waiting = [];
  }

  /** Whether a frame may go out now: welcomed, on a socket that is still open. */
  get open() {
    return this.ready && !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Says hello again (a new name, another player's token): closes this socket, and the
   * reconnection says it. Until its `welcome`, requests wait.
   */
  reconnect() {
    this.ready = false;
    if (this.ws) this.ws.close();
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    this.ready = false;
    ws.onopen = () => this.hello();
    ws.onmessage = (ev) => this.receive(JSON.parse(ev.data));
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ready = false;
      pauseClocks("offline");
      for (const { reject } of this.pending.values()) reject({ code: "disconnected", message: "the connection dropped" });
      this.pending.clear();
      this.onStatus(false);
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 8000);
    };
  }

  /** Says hello; with `bare`, without the name field's name (the server refused it). */
  hello(bare = false) {
    const id = loadIdentity();
    const msg = { t: "hello", protocol: 1, rid: "hello", device: deviceLabel() };
    if (id.token) msg.token = id.token;
    this.sentToken = id.token;
    const name = $("#name").value.trim();
    if (name && !bare) msg.name = name;
    this.ws.send(JSON.stringify(msg));
  }

  receive(msg) {
    if (msg.rid === "hello") {
      if (msg.t === "welcome") {
        this.ready = true;
        this.backoff = 500;
        this.offset = msg.server_time - Date.now();
        // Back: what the server now sends is the truth again (a clock the server paused
        // arrives with its new `since`).
        if (state.pause && state.pause.why !== "storage") { state.pause = null; drawPause(); }
        if (state.shutdownNotice) { state.shutdownNotice = false; notice(""); }
        if (msg.deployment) DEPLOYMENT = msg.deployment;
        saveIdentity({ token: msg.token, id: msg.player.id, name: msg.player.name }, DEPLOYMENT);
        this.onWelcome(msg);
        this.bareHello = false;
        this.onStatus(true);
        this.flush();
      } else if (msg.code === "unauthorized" && this.sentToken) {
        // This server does not know our token (a server that restarted without storage, a
        // device signed out elsewhere): say so, keep the token (a server of its deployment
        // that knows it gives it back), and go on as a new guest who is asked for a name.
        lostIdentity(this.sentToken);
        this.hello(true);
      } else if (msg.code === "conflict" && !this.bareHello) {
        // The name is refused (a claimed account's): say why where the name is typed, and
        // say hello again without it (once: no loop of refusals).
        this.bareHello = true;
        nameRefused(msg.message);
        this.hello(true);
      } else {
        notice(`error ${msg.code}: ${msg.message}`);
      }
      return;
    }
    if (msg.t === "pong" && msg.server_time) this.offset = msg.server_time - Date.now();
    if (msg.rid !== undefined && this.pending.has(msg.rid)) {
      const { resolve, reject } = this.pending.get(msg.rid);
      this.pending.delete(msg.rid);
      // Pushed messages that also answer (a snapshot) go to the handler too.
      if (msg.t !== "error" && msg.t !== "ok") this.onMessage(msg);
      (msg.t === "error" ? reject : resolve)(msg);
      return;
    }
    this.onMessage(msg);
  }

  /**
   * Sends a request and answers its reply. Made while disconnected, it waits for the
   * reconnection; one in flight when the connection drops fails (`disconnected`: whether
   * the server acted on it is unknown).
   */
  request(msg) {
    return new Promise((resolve, reject) => {
      const out = { msg, resolve, reject };
      if (this.open) this.transmit(out);
      else this.waiting.push(out);
    });
  }

  transmit({ msg, resolve, reject }) {
    const rid = ++this.rid;
    this.pending.set(rid, { resolve, reject });
    this.ws.send(JSON.stringify({ ...msg, rid }));
  }

  /** Sends a message that wants no answer; while disconnected it waits, as requests do. */
  send(msg) {
    if (this.open) this.ws.send(JSON.stringify(msg));
    // The end of a subscription means nothing to the next connection, which has none.
    else if (!String(msg.t).endsWith(".unwatch")) this.waiting.push({ msg });
  }

  /** After a `welcome`: what waited goes out, in the order it was asked. */
  flush() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const out of waiting) {
      if (!this.open) { this.waiting.push(out); continue; }
      if (out.resolve) this.transmit(out);
      else this.ws.send(JSON.stringify(out.msg));
    }
  }

  serverNow() {
    return Date.now() + this.offset;
  }
}

// ---------------------------------------------------------------------------------------
// Words shared with the terminal client.

function clockLabel(c) {
  if (!c || c.kind === "none") return "no clock";
  const min = (ms) => {
    const m = ms / 60000;
    return Number.isInteger(m) ? `${m}` : `${ms / 1000}s`;
  };
  switch (c.kind) {
    case "fischer": return `${min(c.initial_ms)}+${c.increment_ms / 1000}`;
    case "delay": return `delay:${min(c.initial_ms)}m/${c.delay_ms / 1000}s`;
    case "byoyomi": return `byoyomi:${min(c.initial_ms)}m/${c.periods}x${c.period_ms / 1000}s`;
    case "correspondence": return `corr:${c.days_per_turn}d`;
    default: return c.kind;
  }
}

/** Parses "5+3", "none", "corr:3d" … into the clock request object. */
function parseClock(text) {
  const t = text.trim().toLowerCase();
  if (t === "none" || t === "") return { kind: "none" };
  let m = t.match(/^(\d+(?:\.\d+)?)\+(\d+)$/);
  if (m) return { kind: "fischer", initial_ms: Math.round(m[1] * 60000), increment_ms: m[2] * 1000 };
  m = t.match(/^corr:(\d+)d$/);
  if (m) return { kind: "correspondence", days_per_turn: Number(m[1]) };
  m = t.match(/^delay:(\d+)m\/(\d+)s$/);
  if (m) return { kind: "delay", initial_ms: m[1] * 60000, delay_ms: m[2] * 1000 };
  m = t.match(/^byoyomi:(\d+)m\/(\d+)x(\d+)s$/);
  if (m) return { kind: "byoyomi", initial_ms: m[1] * 60000, periods: Number(m[2]), period_ms: m[3] * 1000 };
  throw new Error(`clock '${text}': write 5+3, none, delay:5m/3s, byoyomi:10m/5x30s or corr:3d`);
}

/** The box a form's game options go in; [`fillOptions`] puts the kind's own fields in. */
function optionsBox() {
  return el("fieldset", { class: "options" }, el("legend", { text: "Options" }));
}

/**
 * The options of the form's game kind as fields of their own, from the kind's defaults
 * (`/api/kinds/<kind>`): a checkbox for a yes/no option, a number field for a number, a
 * text field otherwise (an option without a default is left empty: the game's default).
 */
async function fillOptions(form) {
  const kind = form.kind.value;
  const info = await kindInfo(kind, {}).catch(() => null);
  if (!info || form.kind.value !== kind) return;
  const box = form.querySelector("fieldset.options");
  const fields = Object.entries(info.options || {}).map(([key, value]) => {
    const name = `opt-${key}`;
    const words = key.replaceAll("_", " ");
    if (typeof value === "boolean") {
      return el("label", {}, el("span", {}, el("input", { type: "checkbox", name, "data-option": key, checked: value }), ` ${words}`));
    }
    const input = typeof value === "number"
      ? el("input", { type: "number", name, "data-option": key, value, step: 1, min: 0 })
      : el("input", { name, "data-option": key, value: value ?? "", placeholder: "the game's default" });
    return el("label", {}, words, input);
  });
  box.replaceChildren(el("legend", { text: `Options of ${TITLES[kind]}` }), ...fields);
  box.dataset.kind = kind;
}

/** The options a form's fields ask for: those that differ from the kind's defaults. */
function readOptions(form) {
  const defaults = state.defaults[form.kind.value] || {};
  const out = {};
  for (const input of form.querySelectorAll("[data-option]")) {
    const key = input.dataset.option;
    let value;
    if (input.type === "checkbox") value = input.checked;
    else if (input.type === "number") {
      if (input.value.trim() === "") continue;
      value = Number(input.value);
      if (!Number.isFinite(value)) throw new Error(`option ${key.replaceAll("_", " ")}: write a number`);
    } else {
      const t = input.value.trim();
      if (!t) continue;
      try { value = JSON.parse(t); } catch { value = t; }
    }
    if (JSON.stringify(defaults[key]) !== JSON.stringify(value)) out[key] = value;
  }
  return out;
}

function formatMs(ms) {
  ms = Math.max(0, ms);
  if (ms >= 86400000) return `${Math.floor(ms / 86400000)}d ${String(Math.floor(ms / 3600000) % 24).padStart(2, "0")}h`;
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  if (h) return `${h}:${String(m).padStart(2, "0")}:${String(sec).padStart(2, "0")}`;
  if (ms < 10000) return `${m}:${String(sec).padStart(2, "0")}.${Math.floor(ms / 100) % 10}`;
  return `${m}:${String(sec).padStart(2, "0")}`;
}

/** The end of a game as people say it (the terminal client says the same). */
function endingSentence(status, sides) {
  const reason = status.reason || "unknown";
  const w = status.winner;
  if (!w) {
    return ({
      aborted: "Game aborted", agreement: "Draw by agreement",
      repetition: "Draw: the same position came up three times",
      no_capture_limit: "Draw: 20 turns without a capture", passes: "Draw: both players passed",
    })[reason] || `Draw (${reason.replaceAll("_", " ")})`;
  }
  const W = cap(w), L = cap(sides.find((s) => s !== w) || "the opponent");
  const why = ({
    resign: `${L} resigned`, timeout: `${L} ran out of time`, abandoned: `${L} left the game`,
    no_moves: `${L} had no legal move`, one_group: `${W} connected their pieces into one group`,
    connection: `${W} connected their two edges`, palace: `${W} took a palace`,
    corners: `${W} holds enough corners`,
  })[reason] || reason.replaceAll("_", " ");
  return `${why} — ${W} wins`;
}

/** Cell names a move mentions, lower-cased: a letter followed by digits (and apostrophes). */
function cellsIn(move) {
  return (move.match(/[a-z]\d+'*/gi) || []).map((c) => c.toLowerCase());
}

// ---------------------------------------------------------------------------------------
// State and routing.

const state = {
  me: null,
  defaults: {}, // kind → its default options, to name only the options a game changes
  view: null, // "lobby" | "game" | "room"
  lobby: null, // {seq, doc}
  queued: null, // queue.status message, or {} once queued
  hosting: null, // room object while waiting as host
  roomChat: null, // {code, lines, open}: the waiting room chat shown (see roomChatPanel)
  game: null, // see showGame
  started: null, // the id of the game this page was last told has started
  pause: null, // {at, why}: the clocks shown stand still since server time `at`
  newcomer: false, // this browser had no identity here when the page loaded
  named: false, // the newcomer chose a name
  shutdownNotice: false, // the notice shows the server's shutdown message
  signingOut: false, // this browser signed out: the server's goodbye is no error
  nameRefusal: "", // why the server refused the name typed last ("" once one is taken)
  lostAnswered: false, // the person chose a name after "this server does not know you"
  geometry: new Map(), // kind + options → geometry answer
};

let link;

function notice(text) {
  const n = $("#notice");
  n.textContent = text;
  n.hidden = !text;
}

/** `text` as a sentence: a capital first letter and a full stop. */
function sentence(text) {
  const t = cap(text.trim());
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Why the clocks shown stand still, said under the players. */
const PAUSES = {
  offline: "Offline: the clocks stand as they were when the connection dropped.",
  shutdown: "The server is restarting: the clocks stand still until it is back.",
  storage: "Paused: the server cannot reach its storage; the clocks stand still and moves wait until it is back.",
};

/**
 * Stops the clocks on the page at this instant: the server paused them (it shuts down, or
 * its store is away), or we cannot hear from it (offline). Counting on would show time the
 * server may never charge; the document after the pause says where they stand.
 */
function pauseClocks(why) {
  if (!state.pause) state.pause = { at: link.serverNow(), why };
  else if (why !== "offline") state.pause.why = why;
  drawPause();
}

function drawPause() {
  const line = $("#paused");
  if (line) line.textContent = state.pause ? PAUSES[state.pause.why] : "";
  tickClocks();
}

/**
 * While a game is shown, asks `/health` now and then: a store outage changes no document
 * (the server only refuses actions), and `/health` is where the server says so.
 */
async function checkStorage() {
  if (state.view !== "game" || !link || !link.ready) return;
  let reasons = [];
  try {
    const r = await fetch("/health", { cache: "no-store" });
    reasons = (await r.json()).reasons || [];
  } catch {
    return;
  }
  const away = reasons.some((x) => x.startsWith("store"));
  if (away) pauseClocks("storage");
  else if (state.pause && state.pause.why === "storage") {
    state.pause = null;
    drawPause();
  }
}

function go(path) {
  if (location.pathname + location.search !== path) history.pushState({}, "", path);
  route();
}

function route() {
  notice("");
  leaveCurrent();
  const p = location.pathname;
  let m;
  if ((m = p.match(/^\/g\/([^/]+)$/))) {
    showGame(decodeURIComponent(m[1]), new URLSearchParams(location.search).get("code"));
  } else if ((m = p.match(/^\/r\/([^/]+)$/))) {
    showRoom(decodeURIComponent(m[1]));
  } else if ((m = p.match(/^\/p\/([^/]+)$/))) {
    state.view = "player";
    showPlayer($("#main"), decodeURIComponent(m[1]), loadIdentity().token, loadIdentity().id);
  } else if ((m = p.match(/^\/t\/([^/]+)$/))) {
    state.view = "arena";
    showArena($("#main"), decodeURIComponent(m[1]), new URLSearchParams(location.search).get("code"), arenaContext());
  } else if ((m = p.match(/^\/leaderboard(?:\/([^/]+))?$/))) {
    state.view = "leaderboard";
    showLeaderboard($("#main"), m[1] ? decodeURIComponent(m[1]) : KINDS[0]);
  } else {
    showLobby();
  }
}

/** Ends the subscriptions of the view we leave. */
function leaveCurrent() {
  leavePage();
  leaveArena();
  if (state.view === "lobby") link.send({ t: "lobby.unwatch" });
  if (state.view === "game" && state.game) link.send({ t: "game.unwatch", game_id: state.game.id });
  closeRoomChat();
  state.view = null;
  state.game = null;
}

/** After (re)connecting: ask again for what the current view shows. */
function resubscribe() {
  if (state.view === "lobby") watchLobby();
  if (state.view === "arena") watchArena();
  if (state.view === "game" && state.game) watchGame(true);
  // A newcomer's name form stays as typed in (a redraw would lose a half-typed line):
  // only its room chat is opened again.
  if (state.view === "room" && !($("#join-name") && state.roomChat)) route();
  else if (state.roomChat) openRoomChat();
}

function onMessage(msg) {
  switch (msg.t) {
    case "lobby":
      if (state.view !== "lobby") return;
      state.lobby = { seq: msg.seq, doc: msg.doc };
      drawLobbyLists();
      return;
    case "lobby.diff":
      if (state.view !== "lobby" || !state.lobby) return;
      if (msg.seq !== state.lobby.seq + 1) {
        if (msg.seq > state.lobby.seq) watchLobby();
        return;
      }
      applyPatch(state.lobby.doc, msg.patch, false, true);
      state.lobby.seq = msg.seq;
      drawLobbyLists();
      return;
    case "arena":
    case "arena.diff":
      if (state.view === "arena") onArenaMessage(msg);
      return;
    case "queue.status":
      state.queued = msg;
      drawQueue();
      return;
    case "game.started":
      state.started = msg.game_id;
      if (!(state.myGames || []).includes(msg.game_id)) state.myGames = [...(state.myGames || []), msg.game_id];
      state.queued = null;
      state.hosting = null;
      go(`/g/${encodeURIComponent(msg.game_id)}`);
      return;
    case "game.snapshot": onSnapshot(msg); return;
    case "chat":
    case "chat.history":
    case "chat.spectators":
      onChat(msg);
      return;
    case "room.chat": onRoomChat(msg); return;
    case "game.diff": onDiff(msg); return;
    case "game.crowd":
      if (state.game && msg.game_id === state.game.id) {
        state.game.crowd = msg;
        drawPlayers();
      }
      return;
    case "shutdown":
      // The message is a whole sentence already ("the server is shutting down; …").
      notice(sentence(msg.message || "the server is shutting down"));
      state.shutdownNotice = true;
      pauseClocks("shutdown");
      return;
    case "error":
      // The server's goodbye to a revoked device (this browser signed out, or was signed
      // out from another device): the next hello says what follows in words.
      if (msg.code === "unauthorized" && (state.signingOut || msg.rid === undefined)) return;
      notice(`error ${msg.code}: ${msg.message}`);
      return;
    default:
  }
}

// ---------------------------------------------------------------------------------------
// Lobby.

function kindSelect(name) {
  return el("select", { name }, KINDS.map((k) => el("option", { value: k, text: TITLES[k] })));
}

function showLobby() {
  state.view = "lobby";
  state.lobby = null;
  const main = $("#main");
  // One's own games and the live ones first, each panel as tall as its lines (they are
  // what a returning player looks for, and must be in sight without scrolling); the forms
  // follow.
  main.replaceChildren(
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
        el("form", { class: "stack", id: "joincode", onsubmit: (e) => {
          e.preventDefault();
          const code = e.target.code.value.trim();
          if (code) go(`/r/${encodeURIComponent(code)}`);
        } },
          el("label", {}, "Room code", el("input", { name: "code", autocomplete: "off" })),
          el("button", { type: "submit", text: "Join" }))),
      arenaPanel(arenaContext(), formError, kindSelect)),
    el("p", { class: "error", id: "lobby-error", role: "alert" }),
  );
  for (const f of ["#quick", "#host", "#computer"].map((id) => $(id))) {
    f.kind.addEventListener("change", () => fillOptions(f));
    fillOptions(f);
  }
  const hostForm = $("#host");
  const fillSides = async () => {
    const kind = hostForm.kind.value;
    const info = await kindInfo(kind, {}).catch(() => null);
    hostForm.side.replaceChildren(el("option", { value: "random", text: "random" }),
      ...(info ? info.side_names : []).map((s) => el("option", { value: s, text: s })));
  };
  hostForm.kind.addEventListener("change", fillSides);
  fillSides();
  if (link.ready) watchLobby();
}

function watchLobby() {
  link.request({ t: "lobby.watch" }).catch((e) => lobbyError(e));
  drawMyGames();
}

/**
 * The way back to one's games: the unfinished ones (`welcome.games`) and the last finished
 * ones (`history`), each a link to its page (a finished one replays there).
 */
async function drawMyGames() {
  const open = $("#my-games");
  if (!open) return;
  const ids = state.myGames || [];
  open.replaceChildren(...(ids.length ? ids.map((id) => el("li", { "data-game": id },
    el("a", { href: `/g/${encodeURIComponent(id)}`, "data-nav": true, text: `game ${id} (not finished)` })))
    : [el("li", { class: "muted", text: "No unfinished games." })]));
  const answer = await link.request({ t: "history", limit: 10 }).catch(() => null);
  const done = $("#my-history");
  if (!answer || !done) return;
  const games = answer.games || [];
  // A game that ended since we connected is no longer unfinished.
  const ended = new Set(games.map((g) => g.id));
  state.myGames = ids.filter((id) => !ended.has(id));
  open.replaceChildren(...(state.myGames.length ? state.myGames.map((id) => el("li", { "data-game": id },
    el("a", { href: `/g/${encodeURIComponent(id)}`, "data-nav": true, text: `game ${id} (not finished)` })))
    : [el("li", { class: "muted", text: "No unfinished games." })]));
  done.replaceChildren(...(games.length ? games.map((g) => el("li", { "data-game": g.id },
    el("a", { href: `/g/${encodeURIComponent(g.id)}`, "data-nav": true,
      text: `${kindLabel(g)} · ${Object.entries(g.players || {}).map(([s, p]) => `${p.name} (${s})`).join(" vs ")} · ${endingSentence(g.status, Object.keys(g.players || {}))}` })))
    : [el("li", { class: "muted", text: "No finished games yet." })]));
}

/** An error said at the bottom of the lobby, or inside `form` when it answers that form. */
function lobbyError(e, form) {
  const p = (form && form.querySelector(".form-error")) || $("#lobby-error");
  if (p) p.textContent = `error ${e.code}: ${e.message || e}`;
}

/** A form's own line for its errors, right under its button (where the eye is). */
function formError() {
  return el("p", { class: "error form-error", role: "alert" });
}

/** The options that differ from the kind's defaults, as key=value pairs ("" for none). */
function optionsText(kind, options) {
  const d = state.defaults[kind] || {};
  return Object.entries(options || {})
    .filter(([k, v]) => v !== null && JSON.stringify(d[k]) !== JSON.stringify(v))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(",");
}

function kindLabel(entry) {
  const o = optionsText(entry.kind, entry.options);
  return `${TITLES[entry.kind] || entry.kind}${o ? ` ${o}` : ""}`;
}

function drawLobbyLists() {
  const doc = state.lobby && state.lobby.doc;
  if (!doc || !$("#rooms")) return;
  const queues = Object.values(doc.queues || {}).filter((q) => q.waiting > 0)
    .map((q) => `${kindLabel(q)} ${clockLabel(q.clock)}: ${q.waiting}`);
  $("#online").textContent = `${doc.online} online` + (queues.length ? ` · waiting in queues: ${queues.join(", ")}` : "");
  const rooms = Object.entries(doc.rooms || {});
  $("#rooms").replaceChildren(...(rooms.length ? rooms.map(([code, r]) => el("li", { "data-room": code },
    el("span", { text: `${kindLabel(r)} · ${clockLabel(r.clock)}${r.rated ? " · rated" : ""} · by ` }), playerLink(r.host), " ",
    el("button", { type: "button", onclick: () => go(`/r/${encodeURIComponent(code)}`), text: "Join" }))) : [el("li", { class: "muted", text: "No open rooms right now." })]));
  drawLobbyArenas(doc, arenaContext());
  const games = Object.entries(doc.games || {});
  $("#games").replaceChildren(...(games.length ? games.map(([id, g]) => el("li", { "data-game": id },
    el("a", { href: `/g/${encodeURIComponent(id)}`, "data-nav": true, text: kindLabel(g) }), " · ",
    ...Object.entries(g.players || {}).flatMap(([s, p], i) => [i ? " vs " : "", playerLink(p, p.bot ? " (computer)" : ""), ` (${s})`]), " ",
    el("span", { class: "muted", text: `${clockLabel(g.time_control || { kind: g.clock })} · ${g.spectators} watching` }))) : [el("li", { class: "muted", text: "No live games right now." })]));
}

async function quickPair(e) {
  e.preventDefault();
  const f = e.target;
  try {
    const answer = await link.request({ t: "queue.join", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), rated: false });
    state.queued = answer;
    f.querySelector(".form-error").textContent = "";
    drawQueue();
  } catch (err) {
    lobbyError(err.code ? err : { code: "input", message: err.message }, f);
  }
}

/** What the arena page and the lobby's arena panel use of this module. */
function arenaContext() {
  return { link, go, me: () => state.me, clockLabel, kindLabel, formatMs, parseClock };
}

function drawQueue() {
  const q = $("#queue");
  if (!q || !state.queued) return;
  const s = state.queued;
  const others = s.same_queue === undefined ? "" : ` · ${s.same_queue ? `${s.same_queue} others wait for the same game` : "nobody else waits for the same game yet"} · ${s.other_queues || 0} in other queues`;
  q.replaceChildren(`In the queue (position ${s.position})${others}. `,
    el("button", { type: "button", onclick: () => { link.send({ t: "queue.leave" }); state.queued = null; q.textContent = "Left the queue."; }, text: "Leave the queue" }));
}

async function hostRoom(e) {
  e.preventDefault();
  const f = e.target;
  try {
    const answer = await link.request({ t: "room.create", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), rated: f.rated.checked, visibility: f.public.checked ? "public" : "private",
      side: f.side.value });
    state.hosting = answer.room;
    f.querySelector(".form-error").textContent = "";
    drawHosted($("#hosted"), answer.room);
  } catch (err) {
    lobbyError(err.code ? err : { code: "input", message: err.message }, f);
  }
}

async function playComputer(e) {
  e.preventDefault();
  const f = e.target;
  const status = $("#computer-status");
  try {
    await link.request({ t: "bot.play", kind: f.kind.value, options: readOptions(f),
      clock: parseClock(f.clock.value), level: Number(f.level.value), side: "random" });
    status.textContent = `Waiting for the computer (level ${f.level.value}) to sit down…`;
  } catch (err) {
    status.textContent = "";
    lobbyError(err.code ? err : { code: "input", message: err.message }, f);
  }
}

function drawHosted(box, room) {
  const url = `${location.origin}/r/${room.code}`;
  box.replaceChildren(
    el("p", {}, "Room ", el("strong", { id: "room-code", text: room.code }), " is waiting for your opponent. Send them this link:"),
    el("p", { class: "invite", id: "invite", text: url }),
    el("button", { type: "button", id: "copy-link", onclick: () => copyLink(url), text: "Copy the link" }),
    " ",
    el("button", { type: "button", onclick: () => { link.send({ t: "room.leave", code: room.code }); state.hosting = null; closeRoomChat(); box.textContent = "Room closed."; }, text: "Close the room" }),
    el("p", { id: "copy-status", class: "muted", role: "status" }),
    roomChatPanel(room.code));
}

// ---------------------------------------------------------------------------------------
// A waiting room's chat (protocol/docs/PROTOCOL.md, "Chat"): the host and whoever opened
// the invitation talk before the game starts. Lines are shown with textContent only.

/** The room chat's panel; opens the room's chat on the server (again after reconnects). */
function roomChatPanel(code) {
  closeRoomChat();
  state.roomChat = { code, lines: [], open: true };
  const panel = el("section", { class: "panel chat room-chat", id: "room-chat", "aria-label": "room chat" },
    el("h2", { text: "Room chat" }),
    el("ol", { class: "chat-lines", id: "room-chat-lines", "aria-live": "polite" }),
    el("p", { class: "muted", id: "room-chat-note" }),
    el("form", { class: "chat-form", id: "room-chat-form", onsubmit: (e) => { e.preventDefault(); sayInRoom(); } },
      el("input", { name: "text", id: "room-chat-input", maxlength: 300, autocomplete: "off", placeholder: "Say something", "aria-label": "room chat message" }),
      el("button", { type: "submit", text: "Send" })),
    el("p", { class: "error", id: "room-chat-error", role: "alert" }));
  // Drawn once the panel is in the page.
  setTimeout(openRoomChat, 0);
  return panel;
}

/** Asks for the room's chat (its history, then its new lines). */
function openRoomChat() {
  const rc = state.roomChat;
  if (!rc || !link.ready) return;
  link.request({ t: "room.watch", code: rc.code }).then((h) => {
    if (state.roomChat !== rc) return;
    rc.lines = h.lines;
    rc.open = h.open;
    roomChatError("");
    drawRoomChat();
  }).catch((e) => roomChatError(`error ${e.code}: ${e.message}`));
}

/** Leaves the room's chat we show, if any. */
function closeRoomChat() {
  if (state.roomChat) link.send({ t: "room.unwatch", code: state.roomChat.code });
  state.roomChat = null;
}

function roomChatError(text) {
  const p = $("#room-chat-error");
  if (p) p.textContent = text;
}

function sayInRoom() {
  const rc = state.roomChat;
  const input = $("#room-chat-input");
  if (!rc || !input || !input.value.trim()) return;
  link.request({ t: "room.say", code: rc.code, text: input.value }).then(() => { input.value = ""; roomChatError(""); })
    .catch((e) => roomChatError(`error ${e.code}: ${e.message}`));
}

function onRoomChat(msg) {
  const rc = state.roomChat;
  if (!rc || msg.code !== rc.code) return;
  rc.lines.push({ id: msg.id, name: msg.name, text: msg.text, ts: msg.ts });
  if (rc.lines.length > 100) rc.lines.shift();
  drawRoomChat();
}

function drawRoomChat() {
  const rc = state.roomChat;
  const list = $("#room-chat-lines");
  if (!rc || !list) return;
  list.replaceChildren(...rc.lines.map((l) => el("li", { class: "chat-line" },
    el("span", { class: "chat-name", text: `${l.name}:` }), " ",
    el("span", { class: "chat-text", text: l.text }))));
  list.scrollTop = list.scrollHeight;
  $("#room-chat-input").disabled = !rc.open;
  $("#room-chat-note").textContent = rc.open
    ? (rc.lines.length ? "" : "Nobody has said anything yet.")
    : "The game has started: this chat is read-only.";
}

/**
 * Copies the invitation link and says whether it worked: the clipboard may be refused (no
 * permission, a page not served securely), and then the link is selected for the person to
 * copy by hand.
 */
async function copyLink(url) {
  const status = $("#copy-status");
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(url);
    if (status) status.textContent = "Link copied.";
  } catch {
    const box = $("#invite");
    if (box) window.getSelection().selectAllChildren(box);
    if (status) status.textContent = "The link is selected: copy it with Ctrl+C (⌘C on a Mac).";
  }
}

// ---------------------------------------------------------------------------------------
// Invitation links: /r/<code> joins the room (or watches its game when it is full).

async function showRoom(code) {
  state.view = "room";
  // This drawing of the page; an answer that comes after another one began is dropped.
  const shown = state.roomShown = (state.roomShown || 0) + 1;
  const stale = () => state.view !== "room" || state.roomShown !== shown;
  const main = $("#main");
  if (!link.ready) {
    // resubscribe() calls us again once connected: what the room is decides what to show.
    main.replaceChildren(el("h1", { text: `Room ${code}` }), el("p", { id: "room-status", text: "Opening the invitation…" }));
    return;
  }
  // First what the room is (`room.watch` takes no seat): an invitation to a room whose game
  // has started, or that is closed, must not offer to join it.
  let room;
  try {
    room = await link.request({ t: "room.watch", code });
  } catch (e) {
    if (stale()) return;
    if (e.code === "not_found") showMissing("No such room", `There is no room with the code '${code}'.`);
    else if (e.code !== "disconnected") {
      main.replaceChildren(el("h1", { text: `Room ${code}` }),
        el("p", { class: "error", role: "alert", id: "room-error", text: `error ${e.code}: ${e.message}` }),
        el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
    }
    return;
  }
  if (stale()) return;
  if (room.status === "started" && room.game_id) {
    link.send({ t: "room.unwatch", code });
    const game = `/g/${encodeURIComponent(room.game_id)}`;
    // Its two players go back to their game; anyone else may watch it.
    if ((state.myGames || []).includes(room.game_id)) { go(game); return; }
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("p", { id: "room-status", text: "This game has started." }),
      el("p", {}, el("button", { type: "button", class: "primary", id: "watch-game",
        onclick: () => go(`${game}?code=${encodeURIComponent(code)}`), text: "Watch" }), " ",
      el("a", { href: "/", "data-nav": true, text: "Go to the lobby" })));
    return;
  }
  if (room.status === "closed") {
    link.send({ t: "room.unwatch", code });
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("p", { id: "room-status", text: "This room is closed: its host left before anyone joined." }),
      el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
    return;
  }
  if (state.newcomer && !state.named) {
    // Someone new to this server: a name first, so the seat (and the game) carries it
    // rather than a made-up guest name.
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("form", { class: "stack", id: "join-name", onsubmit: (e) => {
        e.preventDefault();
        const name = e.target.name.value.trim();
        if (!name) return;
        state.named = true;
        $("#name").value = name;
        // The server takes a name with the hello: say it again, then join.
        link.reconnect();
        showRoom(code);
      } },
        el("label", {}, "You are invited to a game. Your name", el("input", { name: "name", maxlength: 24, autocomplete: "nickname", required: true })),
        el("button", { class: "primary", type: "submit", text: "Join the game" }),
        el("p", { class: "error form-error", role: "alert", id: "join-name-error", text: state.nameRefusal || "" })),
      // The room's chat is open before the seat is taken: talk with the host first.
      roomChatPanel(code));
    return;
  }
  link.send({ t: "room.unwatch", code });
  main.replaceChildren(el("h1", { text: `Room ${code}` }), el("p", { id: "room-status", text: "Joining…" }),
    el("div", { id: "hosted" }), el("p", { class: "error", role: "alert", id: "room-error" }));
  try {
    const answer = await link.request({ t: "room.join", code });
    if (answer.t === "room") {
      if (answer.room.host && state.me && answer.room.host.id === state.me.id && answer.room.status === "waiting") {
        $("#room-status").textContent = "Your room is waiting for your opponent.";
        drawHosted($("#hosted"), answer.room);
      } else if (answer.game_id || answer.room.game_id) {
        go(`/g/${encodeURIComponent(answer.game_id || answer.room.game_id)}`);
      }
    } else if (answer.t === "game.snapshot") {
      go(`/g/${encodeURIComponent(answer.game_id)}?code=${encodeURIComponent(code)}`);
    }
  } catch (e) {
    if (stale()) return;
    $("#room-status").textContent = "";
    $("#room-error").textContent = `error ${e.code}: ${e.message}`;
  }
}

// ---------------------------------------------------------------------------------------
// A game.

async function kindInfo(kind, options) {
  const key = `${kind} ${JSON.stringify(options)}`;
  if (!state.geometry.has(key)) {
    const p = fetch(`/api/kinds/${kind}?options=${encodeURIComponent(JSON.stringify(options))}`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`kind ${kind}: HTTP ${r.status}`))));
    state.geometry.set(key, p);
    p.catch(() => state.geometry.delete(key));
  }
  return state.geometry.get(key);
}

function showGame(id, code) {
  state.view = "game";
  state.game = { id, code, seq: null, doc: null, crowd: null, info: null, legal: null, selected: [], error: "", drawNote: "", abortWhy: "", abortSent: false, window: null, ratingAsked: false, replay: null,
    chat: { lines: [], spectators: true, muted: [] } };
  $("#main").replaceChildren(
    el("div", { class: "game" },
      el("div", {},
        el("div", { id: "banner", class: "banner", hidden: true, role: "status" }),
        el("p", { id: "rating-change", class: "rating-change" }),
        el("div", { class: "board", id: "board", "aria-live": "off" }),
        el("ul", { class: "facts", id: "facts" })),
      el("div", {},
        el("h1", { id: "title", text: "Loading the game…" }),
        el("p", { id: "heading", class: "muted" }),
        el("section", { class: "panel players", id: "players" }),
        el("p", { class: "paused", id: "paused", role: "status" }),
        el("p", { class: "status", id: "status", "aria-live": "polite" }),
        el("p", { class: "first-move", id: "first-move" }),
        el("p", { class: "counter", id: "counter" }),
        el("div", { class: "candidates", id: "candidates", "aria-label": "moves that match your clicks" }),
        el("form", { class: "move", id: "move-form", onsubmit: (e) => {
          e.preventDefault();
          const input = e.target.move;
          const mv = input.value.trim();
          if (mv) { play(mv); input.value = ""; }
        } },
          el("input", { name: "move", id: "move-input", placeholder: "type a move", autocomplete: "off", "aria-label": "move in the game's notation", list: "legal-list" }),
          el("datalist", { id: "legal-list" }),
          el("button", { type: "submit", text: "Play" })),
        el("p", { class: "error", id: "game-error", role: "alert" }),
        el("div", { class: "controls", id: "controls" }),
        el("div", { class: "controls", id: "afterward" }),
        el("h2", { text: "Moves" }),
        el("ol", { class: "moves", id: "moves" }),
        chatPanel())));
  if (link.ready) watchGame(false);
}

function watchGame(resync) {
  const g = state.game;
  const msg = { t: "game.watch", game_id: g.id };
  if (resync && g.seq !== null) msg.since = g.seq;
  if (g.code) msg.code = g.code;
  link.request(msg).catch((e) => {
    if (state.game !== g) return;
    // Nothing to show: the page says so instead of an empty board (as the server's own
    // page for an unknown id does).
    if (!g.doc && e.code === "not_found") {
      showMissing("No such game", `There is no game with the id '${g.id}'.`);
    } else if (!g.doc && e.code === "forbidden") {
      showMissing("This game is private", "Open it with the invitation link its players were given (it holds the room's code).");
    } else if (e.code !== "disconnected") {
      gameError(`error ${e.code}: ${e.message}`);
    }
  });
}

/**
 * A page for what is not there (or not to be seen), drawn in place of the view: what the
 * server's `404` page says, for a link followed inside the page or a game or room that is
 * gone since — no board, no move box, no chat; the way back to the lobby.
 */
function showMissing(title, text) {
  closeRoomChat();
  document.title = `${title} · Stoa`;
  $("#main").replaceChildren(el("h1", { text: title }), el("p", { id: "missing", text }),
    el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
}

function gameError(text) {
  if (!state.game) return;
  state.game.error = text;
  const p = $("#game-error");
  if (p) p.textContent = text;
}

function onSnapshot(msg) {
  const g = state.game;
  if (!g || msg.game_id !== g.id) return;
  if (g.seq !== null && msg.seq < g.seq) return;
  g.seq = msg.seq;
  g.doc = msg.doc;
  // The snapshot of a game that has just started is as good as live.
  noteDeadline(msg.seq === 0 && state.started === g.id);
  afterChange();
}

function onDiff(msg) {
  const g = state.game;
  if (!g || msg.game_id !== g.id || g.seq === null) return;
  if (msg.seq <= g.seq) return;
  if (msg.seq !== g.seq + 1) { watchGame(true); return; }
  const offer = g.doc.draw_offer;
  const plies = (g.doc.moves || []).length;
  const before = { to_act: g.doc.to_act, deadline: g.doc.clock && g.doc.clock.first_action_deadline };
  applyPatch(g.doc, msg.patch, false, true);
  g.seq = msg.seq;
  noteDrawAnswer(offer, plies);
  noteAbort(before);
  noteDeadline(true);
  afterChange();
}

/**
 * A standing offer that is gone while the game goes on and no action was played was
 * declined (an offer also lapses when its side acts again, and ends with the game): say so,
 * since the document itself only clears `draw_offer`.
 */
function noteDrawAnswer(offer, plies) {
  const g = state.game;
  const doc = g.doc;
  if ((doc.moves || []).length !== plies || doc.status.state === "ended") g.drawNote = "";
  if (!offer || doc.draw_offer || doc.status.state === "ended" || (doc.moves || []).length !== plies) return;
  const me = mySide();
  const decliner = cap(otherSide(offer));
  g.drawNote = offer === me ? `${decliner} declined your draw offer.`
    : me ? "You declined the draw offer." : `${decliner} declined ${cap(offer)}'s draw offer.`;
}

/**
 * Why a game was aborted, which the document does not say (`status.reason` is `aborted`
 * either way): the first-move window ran out when the end came at its deadline; otherwise
 * a player aborted, and a player's page knows whether that was itself.
 */
function noteAbort(before) {
  const g = state.game;
  const st = g.doc.status;
  if (st.state !== "ended" || st.reason !== "aborted" || g.abortWhy) return;
  const me = mySide();
  if (before.deadline && before.to_act && link.serverNow() >= before.deadline - 1000) {
    const w = g.window && g.window.deadline === before.deadline ? g.window.seconds : null;
    g.abortWhy = `${cap(before.to_act)} did not make a first move ${w ? `within ${w} s` : "in time"}`;
    // The arena pauses a player whose first move never came (PROTOCOL.md, "Pairing").
    if (g.doc.arena && me && before.to_act === me) g.abortWhy += ". You are paused in the arena: go back to the arena and press Join to be paired again";
  } else if (me) {
    g.abortWhy = g.abortSent ? "you aborted it" : `${cap(otherSide(me))} aborted it`;
  } else {
    g.abortWhy = "a player aborted it";
  }
}

/**
 * Remembers how long the first-move window is when its deadline arrives live (a diff at the
 * moment the side became to act), to name it if it runs out; a deadline first seen in a
 * snapshot is already partly spent.
 */
function noteDeadline(live) {
  const g = state.game;
  const d = g.doc.clock && g.doc.clock.first_action_deadline;
  if (!d || (g.window && g.window.deadline === d)) return;
  g.window = { deadline: d, seconds: live ? Math.round((d - link.serverNow()) / 1000) : null };
}

/** The first-move countdown while a side has yet to make its first action. */
function firstMoveLine(doc, now) {
  const d = doc.clock && doc.clock.first_action_deadline;
  if (!d || doc.status.state === "ended" || !doc.to_act) return "";
  const who = doc.to_act === mySide() ? "You have" : `${cap(doc.to_act)} has`;
  return `${who} ${formatMs(d - now)} to make a first move, or the game is aborted.`;
}

function otherSide(side) {
  return sides().find((s) => s !== side) || "the opponent";
}

/**
 * The ratings a rated game changed, from the game's record (`record.ratings_after`); the
 * record is written just after the end, so it is asked again a few times until it is there.
 */
async function fetchRatingChange(g, attempt) {
  if (state.game !== g || attempt > 10) return;
  const token = loadIdentity().token;
  let full = null;
  try {
    const r = await fetch(`/api/games/${encodeURIComponent(g.id)}${g.code ? `?code=${encodeURIComponent(g.code)}` : ""}`,
      { headers: token ? { Authorization: `Bearer ${token}` } : {}, cache: "no-store" });
    if (r.ok) full = await r.json();
  } catch { /* asked again below */ }
  if (!full || !full.record) {
    setTimeout(() => fetchRatingChange(g, attempt + 1), 500);
    return;
  }
  const after = full.record.ratings_after;
  if (!after || state.game !== g) return;
  const change = (side) => ratingChange((g.doc.players[side] || {}).rating, after[side]);
  const me = mySide();
  const line = me ? `Your rating: ${change(me)}`
    : `Ratings: ${sides().map((s) => `${cap(s)} ${change(s)}`).join(", ")}`;
  const p = $("#rating-change");
  if (p) p.textContent = line;
}

function mySide() {
  const g = state.game;
  if (!g || !g.doc || !state.me) return null;
  for (const [side, p] of Object.entries(g.doc.players || {})) if (p && p.id === state.me.id) return side;
  return null;
}

function myTurn() {
  const g = state.game;
  return !!(g && g.doc && g.doc.status.state !== "ended" && g.doc.to_act && g.doc.to_act === mySide());
}

async function afterChange() {
  const g = state.game;
  const doc = g.doc;
  if (!g.info) {
    try { g.info = await kindInfo(doc.kind, doc.options); } catch (e) { gameError(String(e.message || e)); }
    if (state.game !== g) return;
  }
  // A spectator follows the players into their rematch.
  if (doc.status.state === "ended" && doc.rematch && doc.rematch.game_id && !mySide()) {
    const next = doc.rematch.game_id;
    setTimeout(() => { if (state.game === g) go(`/g/${encodeURIComponent(next)}${g.code ? `?code=${encodeURIComponent(g.code)}` : ""}`); }, 300);
  }
  // Whether the game's arena allows berserk is in the arena's document, asked once.
  if (doc.arena && g.arenaBerserk === undefined) {
    g.arenaBerserk = false;
    fetch(`/api/arenas/${encodeURIComponent(doc.arena.id)}${g.code ? `?code=${encodeURIComponent(g.code)}` : ""}`)
      .then((r) => (r.ok ? r.json() : null))
      .then((a) => { if (a && state.game === g) { g.arenaBerserk = !!a.berserk; drawGame(); } })
      .catch(() => {});
  }
  if (doc.status.state === "ended" && doc.rated && !g.ratingAsked) {
    g.ratingAsked = true;
    fetchRatingChange(g, 0);
  }
  g.selected = [];
  g.legal = null;
  if (myTurn()) {
    const seq = g.seq;
    link.request({ t: "game.legal", game_id: g.id }).then((a) => {
      if (state.game === g && g.seq === seq) { g.legal = a.moves; drawGame(); }
    }).catch(() => {});
  }
  drawGame();
}

function sides() {
  const g = state.game;
  return (g.info && g.info.side_names) || Object.keys(g.doc.players || {});
}

/**
 * An opening move of each kind in its own notation (protocol/docs/games/<kind>.md), shown
 * in the move box: legal as the first move of a game with the default options.
 */
const MOVE_EXAMPLES = { unane: "d4xd5", staku: "b2-c2", akron: "E5", akunur: "g7" };

function drawGame() {
  const g = state.game;
  if (!g || !g.doc || !$("#board")) return;
  const doc = g.doc;
  const me = mySide();
  const ended = doc.status.state === "ended";
  document.title = `${TITLES[doc.kind]} · Stoa`;
  $("#title").textContent = `${TITLES[doc.kind] || doc.kind}`;
  $("#heading").textContent = `game ${doc.id} · ${clockLabel(doc.clock)} · ${doc.rated ? "rated" : "casual"}${me ? ` · you play ${me}` : " · watching"}`;
  drawPlayers();
  drawPause();
  const banner = $("#banner");
  banner.hidden = !ended;
  if (ended) banner.textContent = endingSentence(doc.status, sides()) + (g.abortWhy ? `: ${g.abortWhy}` : "") + (me && doc.status.winner ? (doc.status.winner === me ? " (you won)" : " (you lost)") : "");
  let status;
  if (ended) status = "The game is over.";
  else if (myTurn()) status = `Your turn (${me}).`;
  else status = doc.to_act ? `${cap(doc.to_act)} to act.` : "Waiting.";
  if (!ended && doc.draw_offer) {
    status += doc.draw_offer === me ? ` You offered a draw; waiting for ${cap(otherSide(me))}'s answer.`
      : ` ${cap(doc.draw_offer)} offers a draw.`;
  } else if (!ended && g.drawNote) {
    status += ` ${g.drawNote}`;
  }
  if (ended) status += rematchSentence(doc, me);
  $("#status").textContent = status;
  const st = doc.state || {};
  $("#counter").textContent = typeof st.no_capture_counter === "number"
    ? `No-capture counter: ${st.no_capture_counter} of ${(g.info && g.info.geometry.no_capture_limit) || 20} turns left (a draw at 0)` : "";
  // The board, with what the clicks so far allow.
  const legal = g.legal || [];
  const cands = legal.filter((m) => startsWith(cellsIn(m), g.selected));
  const selectable = new Set(cands.map((m) => cellsIn(m)[g.selected.length]).filter(Boolean));
  const moves = doc.moves || [];
  // Stepping through a finished game: the board after `replay.at` moves.
  const r = ended && g.replay && g.replay.at < moves.length ? g.replay : null;
  const shownMoves = r ? moves.slice(0, r.at) : moves;
  const view = {
    kind: doc.kind, geometry: g.info && g.info.geometry, state: r ? r.states[r.at] || {} : st, sides: sides(),
    last: shownMoves.length ? cellsIn(shownMoves[shownMoves.length - 1]) : [], selectable, selected: g.selected,
    // Staku's second side sees its own pieces at the bottom of the board.
    flip: doc.kind === "staku" && !!me && me === sides()[1],
  };
  renderBoard($("#board"), view, onCell);
  drawAfterward();
  // The no-capture counter has its own line above.
  $("#facts").replaceChildren(...boardFacts(view).filter((f) => !f.startsWith("no-capture"))
    .map((f) => el("li", { text: f })));
  // Moves that match the clicks (or need no cell: swap, pass) as buttons.
  const exact = g.selected.length ? cands.filter((m) => cellsIn(m).length === g.selected.length) : [];
  const cellless = legal.filter((m) => cellsIn(m).length === 0);
  $("#candidates").replaceChildren(
    ...(g.selected.length ? [el("span", { class: "muted", text: `selected ${g.selected.join(" ")}:` })] : []),
    ...[...exact, ...cellless].map((m) => el("button", { type: "button", "data-move": m, onclick: () => play(m), text: m })),
    ...(g.selected.length ? [el("button", { type: "button", onclick: () => { g.selected = []; drawGame(); }, text: "clear" })] : []));
  $("#legal-list").replaceChildren(...legal.map((m) => el("option", { value: m })));
  $("#move-input").disabled = !myTurn();
  $("#move-input").placeholder = MOVE_EXAMPLES[doc.kind] ? `type a move, e.g. ${MOVE_EXAMPLES[doc.kind]}` : "type a move";
  // Only players move, and only while the game is on: a spectator, and everyone once it
  // has ended, gets no move box.
  $("#move-form").hidden = !me || ended;
  $("#moves").replaceChildren(...moves.map((m, i) => el("li", { "data-ply": i + 1, text: m })));
  const list = $("#moves");
  list.scrollTop = list.scrollHeight;
  drawControls();
  drawChat();
  const err = $("#game-error");
  if (err) err.textContent = g.error;
}

/** Who asked for a rematch, said in words (the buttons alone changed only their label). */
function rematchSentence(doc, me) {
  const r = doc.rematch;
  if (!r || !(r.requested || []).length) return "";
  if (r.game_id) return " The rematch has started.";
  const asker = r.requested[0];
  if (asker === me) return ` You asked for a rematch; waiting for ${cap(otherSide(me))}.`;
  return ` ${cap(asker)} asks for a rematch${me ? ": accept it below." : "."}`;
}

function drawPlayers() {
  const g = state.game;
  if (!g || !g.doc || !$("#players")) return;
  const doc = g.doc;
  const me = mySide();
  const online = (g.crowd && g.crowd.online) || {};
  $("#players").replaceChildren(
    ...sides().map((side) => {
      const p = (doc.players || {})[side] || {};
      const rating = typeof p.rating === "number" ? ` (${Math.round(p.rating)})` : "";
      return el("div", { class: `player${doc.to_act === side && doc.status.state !== "ended" ? " to-act" : ""}`, "data-side": side },
        el("span", {}, `${cap(side)}: `, playerLink(p, p.bot ? " (computer)" : ""), `${rating}${side === me ? " (you)" : ""} `,
          el("span", { class: `presence${online[side] === false ? " offline" : ""}`, text: online[side] === false ? "offline" : online[side] ? "online" : "" })),
        el("span", { class: "clock", "data-clock": side }));
    }),
    el("div", { class: "muted", id: "spectators", text: `${(g.crowd && g.crowd.spectators) || 0} watching` }));
  tickClocks();
}

function clockReading(doc, side, now) {
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

function tickClocks() {
  const g = state.game;
  if (!g || !g.doc) return;
  const now = state.pause ? state.pause.at : link.serverNow();
  const line = $("#first-move");
  if (line) line.textContent = firstMoveLine(g.doc, now);
  for (const e of document.querySelectorAll("[data-clock]")) {
    const r = clockReading(g.doc, e.dataset.clock, now);
    e.textContent = r ? r.text : "–";
    e.classList.toggle("running", !!(r && r.running));
    e.classList.toggle("low", !!(r && r.running && r.low));
  }
}

/**
 * Under a finished game: step through it (the positions come from the server, which has
 * the rules), download its record, and read the game's rules.
 */
function drawAfterward() {
  const g = state.game;
  const box = $("#afterward");
  if (!box) return;
  const doc = g.doc;
  const rules = el("a", { id: "rules-link", href: `/rules/${doc.kind}`, target: "_blank", text: `How to play ${TITLES[doc.kind] || doc.kind}` });
  if (doc.status.state !== "ended") { box.replaceChildren(rules); return; }
  const n = (doc.moves || []).length;
  const at = g.replay ? g.replay.at : n;
  const step = (to) => el("button", { type: "button", "data-replay": to, onclick: () => replayTo(to), text: to });
  box.replaceChildren(
    el("span", { id: "replay-ply", text: `Position after ${at} of ${n} moves` }), " ",
    step("first"), step("back"), step("forward"), step("last"), " ",
    el("button", { type: "button", id: "record-link", onclick: downloadRecord, text: "Download the record" }), " ",
    rules);
}

/** Shows the finished game at another move (`first`, `back`, `forward`, `last`). */
async function replayTo(where) {
  const g = state.game;
  const n = (g.doc.moves || []).length;
  if (!g.replay) {
    const r = await apiGet(g, "replay").catch((e) => { gameError(String(e.message || e)); return null; });
    if (!r || state.game !== g) return;
    g.replay = { states: r.states, at: n };
  }
  const at = g.replay.at;
  g.replay.at = { first: 0, back: Math.max(0, at - 1), forward: Math.min(n, at + 1), last: n }[where];
  drawGame();
}

/** `/api/games/<id>/<what>` for this player (its token) or the room code it came with. */
async function apiGet(g, what, asText = false) {
  const token = loadIdentity().token;
  const r = await fetch(`/api/games/${encodeURIComponent(g.id)}/${what}${g.code ? `?code=${encodeURIComponent(g.code)}` : ""}`,
    { headers: token ? { Authorization: `Bearer ${token}` } : {}, cache: "no-store" });
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status}`);
  return asText ? r.text() : r.json();
}

/** Saves the game's text record as `<id>.txt`. */
async function downloadRecord() {
  const g = state.game;
  const text = await apiGet(g, "record", true).catch((e) => { gameError(String(e.message || e)); return null; });
  if (text === null) return;
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/plain" })), download: `${g.id}.txt` });
  a.click();
}

function drawControls() {
  const g = state.game;
  const doc = g.doc;
  const me = mySide();
  const box = $("#controls");
  const arenaLink = doc.arena ? el("a", { href: arenaPath(doc.arena.id, g.code), "data-nav": true, id: "arena-link", text: "back to the arena" }) : null;
  if (!me) { box.replaceChildren(...(arenaLink ? [arenaLink] : [])); return; }
  const ended = doc.status.state === "ended";
  const act = (label, msg, confirmText) => el("button", { type: "button", "data-action": label, onclick: () => {
    if (confirmText && !window.confirm(confirmText)) return;
    link.request({ ...msg, game_id: g.id }).then(() => gameError("")).catch((e) => gameError(`error ${e.code}: ${e.message}`));
  }, text: label });
  const buttons = [];
  if (!ended) {
    buttons.push(act("resign", { t: "game.resign" }, "Resign this game?"));
    if (doc.draw_offer && doc.draw_offer !== me) {
      buttons.push(act("accept draw", { t: "game.draw", action: "accept" }));
      buttons.push(act("decline draw", { t: "game.draw", action: "decline" }));
    } else if (!doc.draw_offer) {
      buttons.push(act("offer draw", { t: "game.draw", action: "offer" }));
    }
    const plies = (doc.moves || []).length;
    // Berserk: in an arena that allows it, before one's own first move (the server checks).
    if (doc.arena && g.arenaBerserk && !(doc.arena.berserk || {})[me] && (plies === 0 || (plies === 1 && doc.to_act === me))) {
      buttons.push(act("berserk", { t: "game.berserk" }));
    }
    if ((doc.moves || []).length < 2) {
      const abort = act("abort", { t: "game.abort" });
      abort.addEventListener("click", () => { g.abortSent = true; });
      buttons.push(abort);
    }
    const online = (g.crowd && g.crowd.online) || {};
    if (Object.entries(online).some(([s, on]) => s !== me && on === false)) buttons.push(act("claim win", { t: "game.claim" }));
  } else {
    const asked = (doc.rematch && doc.rematch.requested) || [];
    // The arena pairs its players again itself: no rematch there.
    if (!doc.arena) buttons.push(act(asked.includes(me) ? "rematch asked" : (asked.length ? "accept rematch" : "rematch"), { t: "game.rematch" }));
    buttons.push(el("button", { type: "button", onclick: () => go("/"), text: "back to the lobby" }));
  }
  if (arenaLink) buttons.push(arenaLink);
  box.replaceChildren(...buttons);
}

// ---------------------------------------------------------------------------------------
// Chat: the players' chat and the spectators' chat of a game (protocol/docs/PROTOCOL.md,
// "Chat"). Every name and text goes into the page as text (`textContent`), never as markup.

const CHAT_KEEP = 200;

function chatPanel() {
  return el("section", { class: "panel chat", id: "chat", "aria-label": "chat" },
    el("h2", { id: "chat-title", text: "Chat" }),
    el("ol", { class: "chat-lines", id: "chat-players", "data-channel": "players", "aria-live": "polite" }),
    el("h3", { id: "chat-spectators-title", text: "Spectators' chat" }),
    el("ol", { class: "chat-lines", id: "chat-spectators", "data-channel": "spectators", "aria-live": "polite" }),
    el("p", { class: "muted", id: "chat-note" }),
    el("form", { class: "chat-form", id: "chat-form", onsubmit: (e) => {
      e.preventDefault();
      const input = e.target.text;
      const text = input.value.trim();
      if (text) sendChat(text, input);
    } },
      el("input", { name: "text", id: "chat-input", maxlength: 300, autocomplete: "off", placeholder: "Say something", "aria-label": "chat message" }),
      el("button", { type: "submit", text: "Send" })),
    el("label", { class: "chat-toggle", id: "chat-toggle" },
      el("input", { type: "checkbox", id: "chat-spectators-on", checked: true, onchange: (e) => {
        const g = state.game;
        link.request({ t: "chat.spectators", game_id: g.id, on: e.target.checked })
          .then(() => chatError("")).catch((err) => chatError(`error ${err.code}: ${err.message}`));
      } }),
      " Spectators may chat"),
    el("p", { class: "error", id: "chat-error", role: "alert" }));
}

function chatError(text) {
  const p = $("#chat-error");
  if (p) p.textContent = text;
}

function sendChat(text, input) {
  const g = state.game;
  if (!g) return;
  link.request({ t: "chat.say", game_id: g.id, text }).then(() => { input.value = ""; chatError(""); })
    .catch((e) => chatError(`error ${e.code}: ${e.message}`));
}

function onChat(msg) {
  const g = state.game;
  if (!g || msg.game_id !== g.id) return;
  const c = g.chat;
  if (msg.t === "chat") {
    c.lines.push({ channel: msg.channel, id: msg.id, name: msg.name, text: msg.text, ts: msg.ts });
    if (c.lines.length > CHAT_KEEP) c.lines.splice(0, c.lines.length - CHAT_KEEP);
  } else if (msg.t === "chat.history") {
    c.lines = msg.lines.slice(-CHAT_KEEP);
    c.spectators = msg.spectators;
    c.muted = msg.muted;
  } else {
    c.spectators = msg.on;
  }
  drawChat();
}

function mute(id, muted) {
  const g = state.game;
  link.request({ t: "chat.mute", game_id: g.id, player_id: id, muted })
    .then(() => chatError("")).catch((e) => chatError(`error ${e.code}: ${e.message}`));
}

function drawChat() {
  const g = state.game;
  if (!g || !$("#chat")) return;
  const c = g.chat;
  const me = g.doc ? mySide() : null;
  const ended = !!g.doc && g.doc.status.state === "ended";
  const line = (l) => el("li", { class: "chat-line" },
    el("span", { class: "chat-name", text: `${l.name}:` }), " ",
    el("span", { class: "chat-text", text: l.text }),
    state.me && l.id !== state.me.id
      ? el("button", { type: "button", class: "chat-mute", "data-mute": l.id, title: `stop seeing ${l.name}'s lines`, onclick: () => mute(l.id, true), text: "mute" })
      : null);
  for (const channel of ["players", "spectators"]) {
    const list = $(`#chat-${channel}`);
    list.replaceChildren(...c.lines.filter((l) => l.channel === channel).map(line));
    list.scrollTop = list.scrollHeight;
  }
  // A player sees the players' chat (and the spectators' once the game is over); a
  // spectator sees only the spectators'.
  $("#chat-title").textContent = me ? "Players' chat" : "Spectators' chat";
  $("#chat-players").hidden = !me;
  const showSpectators = !me || ended;
  $("#chat-spectators").hidden = !showSpectators;
  $("#chat-spectators-title").hidden = !me || !ended;
  const silenced = !me && !c.spectators;
  $("#chat-input").disabled = silenced;
  const notes = [];
  if (!c.spectators) notes.push(me ? "Spectators cannot chat in this game." : "The players turned the spectators' chat off.");
  if (c.muted.length) notes.push(`You muted ${c.muted.length} ${c.muted.length === 1 ? "person" : "people"} here.`);
  const note = $("#chat-note");
  note.replaceChildren(notes.join(" "), ...(c.muted.length
    ? [" ", el("button", { type: "button", id: "chat-unmute", onclick: () => c.muted.forEach((id) => mute(id, false)), text: "unmute all" })] : []));
  $("#chat-toggle").hidden = !me;
  $("#chat-spectators-on").checked = c.spectators;
}

function startsWith(cells, prefix) {
  return prefix.length <= cells.length && prefix.every((c, i) => cells[i] === c);
}

/** A click on a cell: extend the move being built; play it once only one move fits. */
function onCell(name) {
  const g = state.game;
  if (!g || !myTurn() || !g.legal) return;
  const cell = name.toLowerCase();
  let sel = [...g.selected, cell];
  let cands = g.legal.filter((m) => startsWith(cellsIn(m), sel));
  if (!cands.length) {
    // Start again from this cell.
    sel = [cell];
    cands = g.legal.filter((m) => startsWith(cellsIn(m), sel));
  }
  if (!cands.length) {
    g.selected = [];
    gameError(`no legal move starts at ${name}`);
    drawGame();
    return;
  }
  const exact = cands.filter((m) => cellsIn(m).length === sel.length);
  if (cands.length === 1 && exact.length === 1) {
    play(exact[0]);
    return;
  }
  g.selected = sel;
  gameError("");
  drawGame();
}

function play(mv) {
  const g = state.game;
  if (!g) return;
  g.selected = [];
  link.request({ t: "game.move", game_id: g.id, move: mv }).then(() => gameError(""))
    .catch((e) => { gameError(`error ${e.code}: ${mv} not played: ${e.message}`); drawGame(); });
}

// ---------------------------------------------------------------------------------------
// Accounts and the identities this browser was before (account.js draws the forms).

/** Makes this browser `player` (its token), keeping the player it was among the earlier ones. */
function becomePlayer(token, player) {
  const current = loadIdentity();
  if (current.token && current.token !== token && current.id !== player.id) keepPrevious(DEPLOYMENT, current, "replaced");
  saveIdentity({ token, id: player.id, name: player.name }, DEPLOYMENT);
  $("#name").value = player.name;
  hideLost();
  link.reconnect();
}

/** Makes this browser an earlier identity again; the current one is kept in its place. */
function switchTo(entry) {
  const current = loadIdentity();
  takePrevious(DEPLOYMENT, entry.token);
  if (current.token && current.token !== entry.token) keepPrevious(DEPLOYMENT, current, "switched");
  saveIdentity({ token: entry.token, id: entry.id, name: entry.name }, DEPLOYMENT);
  // No name with the hello: the player keeps the name the server has for it.
  $("#name").value = "";
  hideLost();
  link.reconnect();
}

/** A sign-out of this browser is under way (`on`) or failed: the server's goodbye is expected. */
function leaving(on) {
  state.signingOut = on;
}

/** This browser's token was revoked here (signed out): forget it and come back as a guest. */
function signedOut(name) {
  // The server says `unauthorized` and closes the connection: expected, not an error.
  state.signingOut = true;
  notice("");
  const id = loadIdentity();
  if (id.token) forgetToken(id.token);
  $("#name").value = "";
  accountStatus(name ? `Signed out: this browser is a new guest now; sign in to play as ${name} again.`
    : "Signed out: this browser is a new guest now.");
  link.reconnect();
}

/**
 * The server refused this browser's token: keep it among its deployment's earlier
 * identities (a server of that deployment that knows it gives it back), then say so.
 */
function lostIdentity(token) {
  let lost = null;
  for (const [key, deployment] of [[identityKey(DEPLOYMENT), DEPLOYMENT], [IDENTITY_KEY, ""]]) {
    const id = readIdentity(key);
    if (!id || id.token !== token) continue;
    keepPrevious(deployment, id, "unknown");
    localStorage.removeItem(key);
    lost = lost || id;
  }
  showLost(lost);
}

/** Says in words that this server does not know us, and asks for a name. */
function showLost(old) {
  const was = old && old.name ? `You were ${old.name}: that identity` : "Your old identity";
  $("#lost-text").textContent = "This server does not know you any more: it forgot its players when it restarted without storage, "
    + `or this browser was signed out from another device. ${was} stays kept in this browser, for a server that knows it. `
    + "Choose a name to play on as a new player, or sign in to your claimed account.";
  const form = $("#lost-form");
  form.name.value = old && old.name && !/^guest-/.test(old.name) ? old.name : "";
  $("#lost .form-error").textContent = "";
  $("#lost").hidden = false;
  form.name.focus();
}

function hideLost() {
  $("#lost").hidden = true;
  state.lostAnswered = false;
}

/** A name the server refused (a claimed account's): said where the name was typed. */
function nameRefused(message) {
  const text = sentence(message);
  state.named = false;
  state.nameRefusal = text;
  state.lostAnswered = false;
  if (!$("#lost").hidden) {
    $("#lost .form-error").textContent = text;
    $("#lost-form").name.focus();
  } else {
    accountStatus(text);
    $("#name").focus();
  }
  const join = $("#join-name-error");
  if (join) join.textContent = text;
}

/**
 * On a page load with no identity for this deployment, but identities of another one kept
 * on this site: the server is a new deployment (it restarted without storage): say so once.
 */
function lostOnLoad() {
  if (!DEPLOYMENT || loadIdentity().token) return;
  const prefix = `${IDENTITY_KEY}.`;
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith(prefix) || key === identityKey(DEPLOYMENT)) continue;
    const id = readIdentity(key);
    if (id && id.token) { showLost(id); return; }
  }
}

function setupAccountUi() {
  setupAccount({
    request: (msg) => link.request(msg),
    me: () => state.me,
    adopt: becomePlayer,
    signedOut,
    leaving,
    deviceLabel,
    claimed: (name) => {
      state.me = { ...state.me, name, account: name };
      $("#name").value = name;
      drawAccount(state.me);
      const s = $("#link");
      if (link.open) s.textContent = `connected as ${name}`;
      accountStatus(`Claimed: you are ${name}. Sign in with this name and your password on any device.`);
      // The player's page says whether the account is claimed.
      if (state.view === "player") route();
    },
  });
  $("#lost-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = e.target.name.value.trim();
    if (!name) { $("#lost .form-error").textContent = "Type a name, or sign in."; return; }
    $("#name").value = name;
    state.lostAnswered = true;
    link.reconnect();
  });
  $("#lost-sign-in").addEventListener("click", () => { hideLost(); $("#sign-in-button").click(); });
  $("#lost-dismiss").addEventListener("click", hideLost);
}

/** After each `welcome`: the top bar's account part, and what the name questions became. */
function welcomedAccount(welcome) {
  state.signingOut = false;
  drawAccount(welcome.player);
  if (!link.bareHello) state.nameRefusal = "";
  if (state.lostAnswered) hideLost();
}

// ---------------------------------------------------------------------------------------
// Start.

function start() {
  const nameInput = $("#name");
  nameInput.value = loadIdentity().name || "";
  state.newcomer = !loadIdentity().token;
  nameInput.addEventListener("change", () => {
    // The server takes a new name on the next hello: reconnect to say it.
    accountStatus("");
    link.reconnect();
  });
  link = new Link(onMessage, (welcome) => {
    state.me = welcome.player;
    state.myGames = welcome.games || [];
    const mine = $("#my-page");
    if (mine) { mine.href = `/p/${encodeURIComponent(welcome.player.id)}`; mine.hidden = false; }
    nameInput.value = welcome.player.name;
    welcomedAccount(welcome);
    resubscribe();
  }, (up) => {
    const s = $("#link");
    s.textContent = up ? `connected as ${state.me ? state.me.name : "…"}` : "connection lost — reconnecting…";
    s.classList.toggle("offline", !up);
  });
  // The linked player's token replaces ours (ours is kept among the earlier identities);
  // saying hello again with it makes us them.
  setupDevices((msg) => link.request(msg), becomePlayer, {
    me: () => state.me, previous: () => previousOf(DEPLOYMENT), switchTo, signedOut, leaving,
  });
  setupAccountUi();
  lostOnLoad();
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-nav]");
    if (a && a.origin === location.origin && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      go(a.pathname + a.search);
    }
  });
  window.addEventListener("popstate", route);
  setInterval(tickClocks, 100);
  setInterval(() => {
    if (state.view === "arena") tickArena();
    if (state.view === "lobby") tickLobbyArenas();
  }, 500);
  setInterval(checkStorage, 2000);
  // Default options of each kind, so lobby lines name only what a game changes.
  for (const k of KINDS) {
    kindInfo(k, {}).then((info) => {
      state.defaults[k] = info.options;
      if (state.view === "lobby") drawLobbyLists();
    }).catch(() => {});
  }
  link.connect();
  route();
}

start();
