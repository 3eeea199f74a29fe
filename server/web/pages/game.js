// @ts-check
// A game (`/g/<id>`, `?code=` for a private one): the board, the players and their clocks,
// the moves, the actions, the chat; and, once it has ended, its replay and record. The page
// follows the game's document (`game.watch`, then `game.diff` patches; after a gap or a
// reconnection it watches again `since` the seq it holds). Everything shown comes from the
// server's document; the page knows no rules beyond the cell names a move mentions (to build
// a move from clicks).

import { $, $input, el, cap, formOf, showMissing } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, session, go } from "../lib/session.js";
import { Versioned } from "../lib/versioned.js";
import { authHeaders } from "../lib/identity.js";
import { TITLES, cellsIn, clockLabel, endingSentence, ratingChange } from "../lib/words.js";
import { kindInfo } from "../lib/kinds.js";
import { playerLink } from "../lib/views.js";
import { renderBoard, boardFacts } from "../board.js";
import { drawAfterward, drawControls } from "./game-actions.js";
import { drawAnalysis, moveItem } from "./game-analysis.js";
import { tickClocks, drawPause, watchStorage } from "./game-clock.js";
export { pauseClocks, linkBack } from "./game-clock.js";
import { Chat } from "./game-chat.js";

/** @typedef {import("../lib/link.js").Incoming} Incoming */
/** @typedef {import("../lib/documents").GameDoc} GameDoc */
/** @typedef {import("../lib/kinds.js").KindInfo} KindInfo */

/** A game shown: its document and what the page learned around it. */
class Game {
  /**
   * @param {string} id
   * @param {string | null} code the room code a private game is opened with
   */
  constructor(id, code) {
    this.id = id;
    this.code = code;
    /** @type {Versioned<GameDoc>} */
    this.published = new Versioned(() => watch(true));
    /** `game.crowd`: who is online, how many watch. @type {{online?: Record<string, boolean>, spectators?: number} | null} */
    this.crowd = null;
    /** @type {KindInfo | null} */
    this.info = null;
    /** The legal moves when it is our turn. @type {string[] | null} */
    this.legal = null;
    /** The cells clicked so far towards a move. @type {string[]} */
    this.selected = [];
    this.error = "";
    this.drawNote = "";
    this.abortWhy = "";
    this.abortSent = false;
    /** The first-move window seen live: its deadline and length. @type {{deadline: number, seconds: number | null} | null} */
    this.window = null;
    this.ratingAsked = false;
    /** A finished game's positions and the one shown. @type {{states: Record<string, unknown>[], at: number} | null} */
    this.replay = null;
    /** Whether the game's arena allows berserk (undefined until asked). @type {boolean | undefined} */
    this.arenaBerserk = undefined;
    this.chat = new Chat(this.id, () => mySide(), () => !!this.doc && this.doc.status.state === "ended");
  }

  /** The game's document (null before the first snapshot). */
  get doc() {
    return this.published.doc;
  }

  /** The seq of the document held (null before the first snapshot). */
  get seq() {
    return this.published.seq;
  }

  /** `?code=…` for the API when the game was opened with a room code. */
  get query() {
    return this.code ? `?code=${encodeURIComponent(this.code)}` : "";
  }
}

/** The game shown, or null on other pages. @type {Game | null} */
let game = null;

/** What the actions under the game call back. @type {import("./game-actions.js").ActionHooks} */
const hooks = { error: (text) => gameError(text), redraw: () => redraw(), current: () => !!game };

/**
 * Opens the page of game `id` and watches it.
 * @param {string} id
 * @param {string | null} code
 */
export function show(id, code) {
  const g = game = new Game(id, code);
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
        el("form", { class: "move", id: "move-form", onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          const input = formOf(e).move;
          const mv = input.value.trim();
          if (mv) { play(mv); input.value = ""; }
        } },
          el("input", { name: "move", id: "move-input", placeholder: "type a move", autocomplete: "off", "aria-label": "move in the game's notation", list: "legal-list" }),
          el("datalist", { id: "legal-list" }),
          el("button", { type: "submit", text: "Play" })),
        el("p", { class: "error", id: "game-error", role: "alert" }),
        el("div", { class: "controls", id: "controls" }),
        el("div", { class: "controls", id: "afterward" }),
        el("section", { class: "analysis", id: "analysis" }),
        el("h2", { text: "Moves" }),
        el("ol", { class: "moves", id: "moves" }),
        g.chat.panel())));
  if (link.ready) watch(false);
}

/**
 * Asks for the game's document: whole, or (`resync`) since the seq held.
 * @param {boolean} resync
 */
export function watch(resync) {
  const g = game;
  if (!g) return;
  /** @type {import("../lib/link.js").Outgoing} */
  const msg = { t: "game.watch", game_id: g.id };
  if (resync && g.seq !== null) msg.since = g.seq;
  if (g.code) msg.code = g.code;
  link.request(msg).catch((e) => {
    if (game !== g) return;
    // Nothing to show: the page says so instead of an empty board (as the server's own
    // page for an unknown id does).
    if (!g.doc && e.code === "not_found") {
      showMissing("No such game", `There is no game with the id '${g.id}'.`);
    } else if (!g.doc && e.code === "forbidden") {
      showMissing("This game is private", "Open it with the invitation link its players were given (it holds the room's code).");
    } else if (e.code !== "disconnected") {
      gameError(errorText(e));
    }
  });
}

/** Leaves the game: its pushes stop. */
export function leave() {
  if (game) link.send({ t: "game.unwatch", game_id: game.id });
  game = null;
}

/**
 * The game's part of the server's messages.
 * @param {Incoming} msg
 */
export function onMessage(msg) {
  const g = game;
  // Every message handed here names its game.
  if (!g || /** @type {{game_id?: string}} */ (msg).game_id !== g.id) return;
  switch (msg.t) {
    case "game.snapshot":
      if (!g.published.snapshot(msg.seq, msg.doc, msg.rid === undefined)) return;
      // The snapshot of a game that has just started is as good as live.
      noteDeadline(g, msg.seq === 0 && session.started === g.id);
      afterChange(g);
      return;
    case "game.diff": {
      const doc = g.doc;
      if (!doc) return;
      const offer = doc.draw_offer;
      const plies = (doc.moves || []).length;
      const before = { to_act: doc.to_act, deadline: doc.clock && doc.clock.first_action_deadline };
      if (!g.published.diff(msg.seq, msg.patch)) return;
      noteDrawAnswer(g, offer, plies);
      noteAbort(g, before);
      noteDeadline(g, true);
      afterChange(g);
      return;
    }
    case "game.crowd":
      g.crowd = /** @type {{online?: Record<string, boolean>, spectators?: number}} */ (msg);
      drawPlayers(g);
      return;
    case "chat":
    case "chat.history":
    case "chat.spectators":
      g.chat.onMessage(msg);
      return;
    default:
  }
}

/** @param {string} text */
function gameError(text) {
  if (!game) return;
  game.error = text;
  const p = $("#game-error");
  if (p) p.textContent = text;
}

/**
 * A standing offer that is gone while the game goes on and no action was played was
 * declined (an offer also lapses when its side acts again, and ends with the game): say so,
 * since the document itself only clears `draw_offer`.
 * @param {Game} g
 * @param {string | null | undefined} offer
 * @param {number} plies
 */
function noteDrawAnswer(g, offer, plies) {
  const doc = /** @type {GameDoc} */ (g.doc);
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
 * @param {Game} g
 * @param {{to_act?: string | null, deadline?: number | null}} before
 */
function noteAbort(g, before) {
  const doc = /** @type {GameDoc} */ (g.doc);
  const st = doc.status;
  if (st.state !== "ended" || st.reason !== "aborted" || g.abortWhy) return;
  const me = mySide();
  if (before.deadline && before.to_act && link.serverNow() >= before.deadline - 1000) {
    const w = g.window && g.window.deadline === before.deadline ? g.window.seconds : null;
    g.abortWhy = `${cap(before.to_act)} did not make a first move ${w ? `within ${w} s` : "in time"}`;
    // The arena pauses a player whose first move never came (PROTOCOL.md, "Pairing").
    if (doc.arena && me && before.to_act === me) g.abortWhy += ". You are paused in the arena: go back to the arena and press Join to be paired again";
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
 * @param {Game} g
 * @param {boolean} live
 */
function noteDeadline(g, live) {
  const doc = /** @type {GameDoc} */ (g.doc);
  const d = doc.clock && doc.clock.first_action_deadline;
  if (!d || (g.window && g.window.deadline === d)) return;
  g.window = { deadline: d, seconds: live ? Math.round((d - link.serverNow()) / 1000) : null };
}

/** The clocks and the first-move countdown, counted on (the page's clock tick). */
export function tick() {
  const g = game;
  if (g && g.doc) tickClocks(g.doc, mySide());
}

/**
 * While a game is shown, whether its server can reach its store (see `watchStorage`).
 */
export function checkStorage() {
  if (game && link.ready) watchStorage(tick);
}

/** @param {string} side */
function otherSide(side) {
  return sides().find((s) => s !== side) || "the opponent";
}

/**
 * The ratings a rated game changed, from the game's record (`record.ratings_after`); the
 * record is written just after the end, so it is asked again a few times until it is there.
 * @param {Game} g
 * @param {number} attempt
 */
async function fetchRatingChange(g, attempt) {
  if (game !== g || attempt > 10) return;
  let full = null;
  try {
    const r = await fetch(`/api/games/${encodeURIComponent(g.id)}${g.query}`, { headers: authHeaders(), cache: "no-store" });
    if (r.ok) full = await r.json();
  } catch { /* asked again below */ }
  if (!full || !full.record) {
    setTimeout(() => fetchRatingChange(g, attempt + 1), 500);
    return;
  }
  const after = full.record.ratings_after;
  const doc = g.doc;
  if (!after || game !== g || !doc) return;
  /** @param {string} side */
  const change = (side) => ratingChange(/** @type {number} */ ((doc.players[side] || {}).rating), after[side]);
  const me = mySide();
  const line = me ? `Your rating: ${change(me)}`
    : `Ratings: ${sides().map((s) => `${cap(s)} ${change(s)}`).join(", ")}`;
  const p = $("#rating-change");
  if (p) p.textContent = line;
}

/** The side we play in the game shown, or null for a spectator. */
function mySide() {
  const g = game;
  if (!g || !g.doc || !session.me) return null;
  for (const [side, p] of Object.entries(g.doc.players || {})) if (p && p.id === session.me.id) return side;
  return null;
}

function myTurn() {
  const g = game;
  return !!(g && g.doc && g.doc.status.state !== "ended" && g.doc.to_act && g.doc.to_act === mySide());
}

/**
 * After the document changed: what it asks for (the kind's geometry, the legal moves, the
 * arena's berserk rule, the rating change), then a redraw.
 * @param {Game} g
 */
async function afterChange(g) {
  const doc = /** @type {GameDoc} */ (g.doc);
  if (!g.info) {
    try { g.info = await kindInfo(doc.kind, doc.options); } catch (e) { gameError(String(/** @type {Error} */ (e).message || e)); }
    if (game !== g) return;
  }
  // A spectator follows the players into their rematch.
  if (doc.status.state === "ended" && doc.rematch && doc.rematch.game_id && !mySide()) {
    const next = doc.rematch.game_id;
    setTimeout(() => { if (game === g) go(`/g/${encodeURIComponent(next)}${g.query}`); }, 300);
  }
  // Whether the game's arena allows berserk is in the arena's document, asked once.
  if (doc.arena && g.arenaBerserk === undefined) {
    g.arenaBerserk = false;
    fetch(`/api/arenas/${encodeURIComponent(doc.arena.id)}${g.query}`)
      .then((r) => (r.ok ? r.json() : null))
      .then((a) => { if (a && game === g) { g.arenaBerserk = !!a.berserk; redraw(); } })
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
      if (game === g && g.seq === seq) { g.legal = a.moves; redraw(); }
    }).catch(() => {});
  }
  redraw();
}

/** The game's sides in order (the kind's names once known). */
function sides() {
  const g = /** @type {Game} */ (game);
  return (g.info && g.info.side_names) || Object.keys((g.doc && g.doc.players) || {});
}

/**
 * An opening move of each kind in its own notation (protocol/docs/games/<kind>.md), shown
 * in the move box: legal as the first move of a game with the default options.
 * @type {Record<string, string>}
 */
const MOVE_EXAMPLES = { unane: "d4xd5", staku: "b2-c2", akron: "E5", akunur: "g7" };

/**
 * @param {string[]} cells
 * @param {string[]} prefix
 */
function startsWith(cells, prefix) {
  return prefix.length <= cells.length && prefix.every((c, i) => cells[i] === c);
}

/** Draws the game page from its document. */
export function redraw() {
  const g = game;
  if (!g || !g.doc || !$("#board")) return;
  const doc = g.doc;
  const me = mySide();
  const ended = doc.status.state === "ended";
  document.title = `${TITLES[doc.kind]} · Stoa`;
  $("#title").textContent = `${TITLES[doc.kind] || doc.kind}`;
  $("#heading").textContent = `game ${doc.id} · ${clockLabel(doc.clock)} · ${doc.rated ? "rated" : "casual"}${me ? ` · you play ${me}` : " · watching"}`;
  drawPlayers(g);
  drawPause(tick);
  const banner = $("#banner");
  banner.hidden = !ended;
  if (ended) banner.textContent = endingSentence(doc.status, sides()) + (g.abortWhy ? `: ${g.abortWhy}` : "") + (me && doc.status.winner ? (doc.status.winner === me ? " (you won)" : " (you lost)") : "");
  let status;
  if (ended) status = "The game is over.";
  else if (myTurn()) status = `Your turn (${me}).`;
  else status = doc.to_act ? `${cap(doc.to_act)} to act.` : "Waiting.";
  if (!ended && doc.draw_offer) {
    status += doc.draw_offer === me ? ` You offered a draw; waiting for ${cap(otherSide(/** @type {string} */ (me)))}'s answer.`
      : ` ${cap(doc.draw_offer)} offers a draw.`;
  } else if (!ended && g.drawNote) {
    status += ` ${g.drawNote}`;
  }
  if (ended) status += rematchSentence(doc, me);
  $("#status").textContent = status;
  /** @type {Record<string, any>} */
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
  drawAfterward(g, doc, hooks);
  drawAnalysis(g, doc, hooks);
  // The no-capture counter has its own line above.
  $("#facts").replaceChildren(...boardFacts(view).filter((f) => !f.startsWith("no-capture"))
    .map((f) => el("li", { text: f })));
  // Moves that match the clicks (or need no cell: swap, pass) as buttons.
  const exact = g.selected.length ? cands.filter((m) => cellsIn(m).length === g.selected.length) : [];
  const cellless = legal.filter((m) => cellsIn(m).length === 0);
  $("#candidates").replaceChildren(
    ...(g.selected.length ? [el("span", { class: "muted", text: `selected ${g.selected.join(" ")}:` })] : []),
    ...[...exact, ...cellless].map((m) => el("button", { type: "button", "data-move": m, onclick: () => play(m), text: m })),
    ...(g.selected.length ? [el("button", { type: "button", onclick: () => { g.selected = []; redraw(); }, text: "clear" })] : []));
  $("#legal-list").replaceChildren(...legal.map((m) => el("option", { value: m })));
  const input = $input("#move-input");
  input.disabled = !myTurn();
  input.placeholder = MOVE_EXAMPLES[doc.kind] ? `type a move, e.g. ${MOVE_EXAMPLES[doc.kind]}` : "type a move";
  // Only players move, and only while the game is on: a spectator, and everyone once it
  // has ended, gets no move box.
  $("#move-form").hidden = !me || ended;
  const list = $("#moves");
  list.replaceChildren(...moves.map((m, i) => moveItem(g.id, m, i + 1)));
  list.scrollTop = list.scrollHeight;
  drawControls(g, doc, me, hooks);
  g.chat.redraw();
  const err = $("#game-error");
  if (err) err.textContent = g.error;
}

/**
 * Who asked for a rematch, said in words (the buttons alone changed only their label).
 * @param {GameDoc} doc
 * @param {string | null} me
 */
function rematchSentence(doc, me) {
  const r = doc.rematch;
  if (!r || !(r.requested || []).length) return "";
  if (r.game_id) return " The rematch has started.";
  const asker = r.requested[0];
  if (asker === me) return ` You asked for a rematch; waiting for ${cap(otherSide(asker))}.`;
  return ` ${cap(asker)} asks for a rematch${me ? ": accept it below." : "."}`;
}

/** @param {Game} g */
function drawPlayers(g) {
  const doc = g.doc;
  if (!doc || !$("#players")) return;
  const me = mySide();
  /** @type {Record<string, boolean>} */
  const online = (g.crowd && g.crowd.online) || {};
  $("#players").replaceChildren(
    ...sides().map((side) => {
      /** @type {import("../lib/documents").Seat} */
      const p = (doc.players || {})[side] || { id: "", name: "?" };
      const rating = typeof p.rating === "number" ? ` (${Math.round(p.rating)})` : "";
      return el("div", { class: `player${doc.to_act === side && doc.status.state !== "ended" ? " to-act" : ""}`, "data-side": side },
        el("span", {}, `${cap(side)}: `, playerLink(p, p.bot ? " (computer)" : ""), `${rating}${side === me ? " (you)" : ""} `,
          el("span", { class: `presence${online[side] === false ? " offline" : ""}`, text: online[side] === false ? "offline" : online[side] ? "online" : "" })),
        el("span", { class: "clock", "data-clock": side }));
    }),
    el("div", { class: "muted", id: "spectators", text: `${(g.crowd && g.crowd.spectators) || 0} watching` }));
  tick();
}

/**
 * A click on a cell: extend the move being built; play it once only one move fits.
 * @param {string} name
 */
function onCell(name) {
  const g = game;
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
    redraw();
    return;
  }
  const exact = cands.filter((m) => cellsIn(m).length === sel.length);
  if (cands.length === 1 && exact.length === 1) {
    play(exact[0]);
    return;
  }
  g.selected = sel;
  gameError("");
  redraw();
}

/** @param {string} mv */
function play(mv) {
  const g = game;
  if (!g) return;
  g.selected = [];
  link.request({ t: "game.move", game_id: g.id, move: mv }).then(() => gameError(""))
    .catch((e) => { gameError(`error ${e.code}: ${mv} not played: ${e.message}`); redraw(); });
}
