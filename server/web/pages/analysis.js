// @ts-check
// The analysis board (`/analysis`): anyone plays out any legal line from any position, and
// every line played is kept as a tree of variations. It opens
//   `?kind=<kind>&position=<position string>&options=<JSON or k=v,…>` (no position: the start),
//   `?game=<id>&ply=<n>` (`&code=` for a private game): a finished game, its moves the main
//     line, with its engine review's graph and marks when there is one,
//   `?lesson=<kind>&step=<n>`: a lesson step's position,
// and without any of them a form to set up a position. The page knows no rules: every
// position, its legal moves and its board come from the server's engines
// (`position.explore`), asked for each node the first time it is shown. The address follows
// the position shown (`history.replaceState`), so it can be shared.

import { $, $input, el, cap, formOf } from "../lib/dom.js";
import { link, go } from "../lib/session.js";
import { TITLES, cellsIn, endingSentence } from "../lib/words.js";
import { newPage, getJson, failed } from "../lib/api.js";
import { loadIdentity } from "../lib/identity.js";
import { kindInfo } from "../lib/kinds.js";
import { MoveTree, movesBetween, lineEnd, pathTo } from "../lib/move-tree.js";
import { clickCell, selectionView } from "../lib/click-move.js";
import { renderBoard, boardFacts, boardLegend } from "../board.js";
import { fetchReview, evaluationGraph } from "./game-analysis.js";
import { treeView, setupForm, parseOptions } from "./analysis-view.js";

/** @typedef {import("../lib/messages").Msg<"position">} Explored */
/** @typedef {import("../lib/move-tree.js").TreeNode<Explored>} Node */
/** @typedef {import("../wire").AnalysisResult} AnalysisResult */
/** @typedef {import("../wire").JsonValue} JsonValue */

/** The most moves one `position.explore` plays (PROTOCOL.md). */
const MAX_LINE = 512;

/** How long the board rests on a position not known yet before the engines are asked. */
const SETTLE_MS = 120;

/**
 * Where the board came from: a finished game (its id, code and moves), a lesson step, or a
 * position string.
 * @typedef {{game?: {id: string, code: string | null, moves: string[], review: AnalysisResult | null},
 *   lesson?: {kind: string, step: number}}} Source
 */

/**
 * The board shown.
 * @typedef {object} Board
 * @property {string} kind
 * @property {Record<string, unknown>} options as given (the game's, the step's, the address's)
 * @property {MoveTree<Explored>} tree its root is the position the board opened on
 * @property {Node} at the node shown
 * @property {string[]} selected cells clicked towards a move
 * @property {string} message what the last try said
 * @property {string[]} sides the kind's side names
 * @property {Source} source
 * @property {() => boolean} fresh
 */

/** The board shown, or null (other pages, or the setup form alone). @type {Board | null} */
let shown = null;

/**
 * `/analysis?…`: the board the query asks for, or the setup form.
 * @param {URLSearchParams} q
 */
export async function show(q) {
  const fresh = newPage();
  shown = null;
  document.addEventListener("keydown", onKey);
  document.title = "Analysis board · Stoa";
  const main = $("#main");
  main.replaceChildren(el("h1", { text: "Analysis board" }), el("p", { class: "muted", text: "Loading…" }));
  const game = q.get("game"), lesson = q.get("lesson"), kind = q.get("kind");
  if (game) return openGame(game, q.get("code"), Number(q.get("ply") || "0"), fresh);
  if (lesson) return openLesson(lesson, Number(q.get("step") || "1"), fresh);
  if (!kind) return drawSetupOnly({ kind: "unane", position: "", options: "" }, "");
  const position = q.get("position") || "", optionsText = q.get("options") || "";
  /** @type {Record<string, unknown>} */
  let options;
  try { options = parseOptions(optionsText); } catch (e) {
    return drawSetupOnly({ kind, position, options: optionsText }, `The options cannot be read: ${String(/** @type {Error} */ (e).message)}.`);
  }
  const root = await explore(kind, options, position || null, []).catch((e) => refusal(e));
  if (!fresh()) return;
  if (typeof root === "string") return drawSetupOnly({ kind, position, options: optionsText }, root);
  start(kind, options, root, {}, fresh);
}

/** Leaves the board: the keys are no longer ours, answers on their way are dropped. */
export function leave() {
  shown = null;
  document.removeEventListener("keydown", onKey);
}

/**
 * A finished game: its moves the main line, the board at ply `ply`, its review if done.
 * @param {string} id
 * @param {string | null} code
 * @param {number} ply
 * @param {() => boolean} fresh
 */
async function openGame(id, code, ply, fresh) {
  const query = code ? `?code=${encodeURIComponent(code)}` : "";
  const { status, body } = await getJson(`/api/games/${encodeURIComponent(id)}${query}`, loadIdentity().token);
  if (!fresh()) return;
  if (status !== 200 || !body) return failed($("#main"), "No such game", status, body);
  if (!body.status || body.status.state !== "ended") {
    return failed($("#main"), "The game is still being played", 409, { message: "the analysis board opens finished games; come back when this one has ended" });
  }
  const options = body.options || {};
  // A game played on from a position (`start` in its document) starts there.
  const root = await explore(body.kind, options, typeof body.start === "string" ? body.start : null, []).catch((e) => refusal(e));
  if (!fresh()) return;
  if (typeof root === "string") return failed($("#main"), "The game cannot be analysed", 400, { message: root });
  /** @type {string[]} */
  const moves = body.moves || [];
  const review = await fetchReview({ id, query });
  if (!fresh()) return;
  const source = { game: { id, code, moves, review: review && review.state === "done" && review.result ? review.result : null } };
  const b = start(body.kind, options, root, source, fresh, false);
  const end = b.tree.playLine(b.tree.root, moves);
  let at = end;
  while (at.parent && at.ply > ply) at = at.parent;
  goTo(b, at);
}

/**
 * A lesson step's position.
 * @param {string} kind
 * @param {number} step from 1
 * @param {() => boolean} fresh
 */
async function openLesson(kind, step, fresh) {
  const { status, body } = await getJson(`/api/lessons/${encodeURIComponent(kind)}`);
  if (!fresh()) return;
  if (status !== 200 || !body) return failed($("#main"), "No such lesson", status, body);
  const s = body.steps[Math.max(0, Math.min(body.steps.length - 1, step - 1))];
  const options = s.options || {};
  const root = await explore(kind, options, s.position, []).catch((e) => refusal(e));
  if (!fresh()) return;
  if (typeof root === "string") return failed($("#main"), "The step cannot be analysed", 400, { message: root });
  start(kind, options, root, { lesson: { kind, step } }, fresh);
}

/**
 * Draws the board on `root` and makes it the one shown.
 * @param {string} kind
 * @param {Record<string, unknown>} options
 * @param {Explored} root
 * @param {Source} source
 * @param {() => boolean} fresh
 * @param {boolean} [draw] show the root at once (a game goes to its ply itself)
 */
function start(kind, options, root, source, fresh, draw = true) {
  /** @type {Board} */
  const b = { kind, options, tree: new MoveTree(root), at: /** @type {Node} */ (/** @type {unknown} */ (null)), selected: [], message: "", sides: [], source, fresh };
  b.at = b.tree.root;
  shown = b;
  layout(b);
  kindInfo(kind, options).then((info) => { b.sides = info.side_names; if (shown === b) redraw(); }).catch(() => {});
  if (draw) goTo(b, b.tree.root);
  return b;
}

/**
 * The page's frame: the board on the left; the position, the moves and the tools on the right.
 * @param {Board} b
 */
function layout(b) {
  const g = b.source.game;
  const back = g ? el("a", { id: "back-to-game", href: `/g/${encodeURIComponent(g.id)}${g.code ? `?code=${encodeURIComponent(g.code)}` : ""}`, "data-nav": true, text: "Back to the game" })
    : b.source.lesson ? el("a", { id: "back-to-lesson", href: `/learn/${b.source.lesson.kind}?step=${b.source.lesson.step}`, "data-nav": true, text: "Back to the lesson" }) : null;
  /**
   * @param {string} id
   * @param {string} label
   * @param {string} title
   * @param {() => void} act
   */
  const nav = (id, label, title, act) => el("button", { type: "button", id, title, "aria-label": title, onclick: act, text: label });
  $("#main").replaceChildren(
    el("div", { class: "game analysis-board" },
      el("div", {},
        el("div", { class: "board", id: "board", "aria-live": "off" }),
        el("p", { class: "muted", id: "legend" }),
        el("ul", { class: "facts", id: "facts" })),
      el("div", {},
        el("h1", { id: "title", text: `Analysis board · ${TITLES[b.kind] || b.kind}` }),
        el("p", { class: "muted", id: "heading", text: g ? `Game ${g.id}: its moves are the main line.` : b.source.lesson ? `Lesson step ${b.source.lesson.step}.` : "Play any legal move for either side." }),
        el("div", { class: "position-line" },
          el("input", { id: "position", readonly: true, "aria-label": "position string", spellcheck: "false" }),
          el("button", { type: "button", id: "copy-position", onclick: copyPosition, text: "Copy" })),
        el("p", { class: "status", id: "status", "aria-live": "polite" }),
        el("div", { class: "candidates", id: "candidates", "aria-label": "moves that match your clicks" }),
        el("form", { class: "move", id: "move-form", onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          const input = formOf(e).move;
          const mv = input.value.trim();
          if (mv) { play(mv); input.value = ""; }
        } },
          el("input", { name: "move", id: "move-input", placeholder: "or type a move", autocomplete: "off", "aria-label": "move in the game's notation" }),
          el("button", { type: "submit", text: "Play" })),
        el("div", { class: "controls", id: "tree-nav" },
          nav("nav-first", "|◀", "the start (↑ or Home)", () => step("first")),
          nav("nav-back", "◀", "one move back (←)", () => step("back")),
          nav("nav-forward", "▶", "one move on (→)", () => step("forward")),
          nav("nav-last", "▶|", "the end of the line (↓ or End)", () => step("last")),
          el("button", { type: "button", id: "promote", onclick: promote, text: "Make main line" }),
          el("button", { type: "button", id: "delete-variation", onclick: removeHere, text: "Delete from here" })),
        el("section", { class: "analysis", id: "analysis" }),
        el("h2", { text: "Moves" }),
        el("div", { id: "tree-box" }),
        el("p", { class: "muted" }, back, back ? " · " : "", el("a", { href: `/rules/${b.kind}`, target: "_blank", text: `The rules of ${TITLES[b.kind] || b.kind}` })),
        el("h2", { text: "Another position" }),
        setupForm({ kind: b.kind, position: "", options: "", submit: setUp }),
        el("p", { class: "error", id: "analysis-error", role: "alert" }))));
}

/**
 * `/analysis` alone, or a position that cannot be shown: the setup form (and why not).
 * @param {{kind: string, position: string, options: string}} start
 * @param {string} error
 */
function drawSetupOnly(start, error) {
  $("#main").replaceChildren(
    el("h1", { text: "Analysis board" }),
    el("p", { text: "Play out any line from any position: choose a game and give a position string in its notation (empty: the start position). Every move is checked by the same rules the games are played with." }),
    setupForm({ ...start, submit: setUp }),
    el("p", { class: "error", id: "analysis-error", role: "alert", text: error }),
    el("p", { class: "muted" }, "A finished game's page opens its board at the move shown, a lesson step (“Analyse this position”) its position; the lessons are under ", el("a", { href: "/learn", "data-nav": true, text: "Learn" }), "."));
}

/**
 * The setup form's submit: the engines read the position first; a refusal is said under the
 * form and nothing else changes, else the board opens on it.
 * @param {string} kind
 * @param {string} position
 * @param {string} optionsText
 */
async function setUp(kind, position, optionsText) {
  const said = (/** @type {string} */ text) => { const e = $("#analysis-error"); if (e) e.textContent = text; };
  /** @type {Record<string, unknown>} */
  let options;
  try { options = parseOptions(optionsText); } catch (e) {
    said(`The options cannot be read: ${String(/** @type {Error} */ (e).message)}.`);
    return;
  }
  const answer = await explore(kind, options, position || null, []).catch((e) => refusal(e));
  if (typeof answer === "string") { said(answer); return; }
  said("");
  go(addressOf(kind, options, position ? answer.position : null));
}

/**
 * The engines' answer for `moves` from `position` (null: the kind's start).
 * @param {string} kind
 * @param {Record<string, unknown>} options
 * @param {string | null} position
 * @param {string[]} moves
 * @returns {Promise<Explored>}
 */
async function explore(kind, options, position, moves) {
  const answer = await link.request({ t: "position.explore", kind, options: /** @type {JsonValue} */ (options), ...(position === null ? {} : { position }), moves });
  return /** @type {Explored} */ (/** @type {unknown} */ (answer));
}

/**
 * The words of a refused request (the server's `error`, or the link's `disconnected`).
 * @param {unknown} e
 */
function refusal(e) {
  const r = /** @type {import("../lib/messages").Refusal} */ (e);
  return r && r.message ? r.message : String(e);
}

/**
 * The engines' answer for `node`, asked once: from the root when the line is short enough,
 * else from the nearest node whose position is known.
 * @param {Board} b
 * @param {Node} node
 * @returns {Promise<Explored>}
 */
async function explored(b, node) {
  if (node.data) return node.data;
  let from = /** @type {Node} */ (node.parent);
  while (from.parent && (!from.data || node.ply - from.ply > MAX_LINE)) from = from.parent;
  if (!from.data) throw { code: "internal", message: "no known position above this move" };
  const base = /** @type {Explored} */ (from.data);
  const answer = await explore(b.kind, b.options, base.position, movesBetween(from, node));
  node.data = answer;
  return answer;
}

/**
 * Shows `node`: asks the engines for it when its position is not known yet.
 * @param {Board} b
 * @param {Node} node
 */
async function goTo(b, node) {
  b.at = node;
  b.selected = [];
  b.message = "";
  if (!node.data) {
    redraw();
    // A key held down passes many positions: only the one it stops at is asked for (each
    // request counts towards the connection's rate limit).
    await new Promise((done) => setTimeout(done, SETTLE_MS));
    if (shown !== b || b.at !== node) return;
    try {
      await explored(b, node);
    } catch (e) {
      if (shown !== b || !b.fresh()) return;
      b.message = `This position cannot be shown: ${refusal(e)}`;
    }
  }
  if (shown !== b || !b.fresh() || b.at !== node) return;
  history.replaceState(null, "", addressAt(b, node));
  redraw();
}

/**
 * The address of `node`: the game's ply while on the game's own moves, the lesson step at
 * its position, else the kind, the position string and the options.
 * @param {Board} b
 * @param {Node} node
 */
function addressAt(b, node) {
  const g = b.source.game;
  const line = movesBetween(b.tree.root, node);
  if (g && line.every((m, i) => g.moves[i] === m)) {
    return `/analysis?game=${encodeURIComponent(g.id)}&ply=${node.ply}${g.code ? `&code=${encodeURIComponent(g.code)}` : ""}`;
  }
  const l = b.source.lesson;
  if (l && node === b.tree.root) return `/analysis?lesson=${encodeURIComponent(l.kind)}&step=${l.step}`;
  return addressOf(b.kind, b.options, node.data ? node.data.position : null);
}

/**
 * `/analysis?kind=…&position=…&options=…` (no position: the start; no options: none).
 * @param {string} kind
 * @param {Record<string, unknown>} options
 * @param {string | null} position
 */
function addressOf(kind, options, position) {
  const q = new URLSearchParams({ kind });
  if (position !== null) q.set("position", position);
  if (Object.keys(options).length) q.set("options", JSON.stringify(options));
  return `/analysis?${q}`;
}

/**
 * Plays `mv` (any form the engines accept) where the board is: the node's child for it,
 * a new variation when the node goes on otherwise.
 * @param {string} mv
 */
async function play(mv) {
  const b = shown;
  if (!b || !b.at.data || !b.at.data.to_act) return;
  const at = b.at;
  b.selected = [];
  /** @type {Explored} */
  let after;
  try {
    after = await explore(b.kind, b.options, at.data.position, [mv]);
  } catch (e) {
    if (shown !== b) return;
    b.message = `${mv} is not played: ${refusal(e)}.`;
    redraw();
    return;
  }
  if (shown !== b || b.at !== at) return;
  goTo(b, b.tree.play(at, after.moves[0], after));
}

/**
 * A click on a cell: extends the move being built; plays it once only one move fits.
 * @param {string} name
 */
function onCell(name) {
  const b = shown;
  if (!b || !b.at.data || !b.at.data.to_act) return;
  const click = clickCell(b.at.data.legal, b.selected, name);
  if ("play" in click) { play(click.play); return; }
  b.selected = "selected" in click ? click.selected : [];
  b.message = "refused" in click ? click.refused : "";
  redraw();
}

/**
 * Moves along the current line.
 * @param {"first" | "back" | "forward" | "last"} where
 */
function step(where) {
  const b = shown;
  if (!b) return;
  const n = b.at;
  const to = where === "first" ? b.tree.root : where === "back" ? n.parent || n
    : where === "forward" ? n.children[0] || n : lineEnd(n);
  if (to !== n) goTo(b, to);
}

/**
 * The keys of the board: ← → along the line, ↑/Home the start, ↓/End the end. Keys typed
 * into a field stay the field's.
 * @param {KeyboardEvent} e
 */
function onKey(e) {
  const t = /** @type {HTMLElement | null} */ (e.target);
  if (!shown || e.altKey || e.ctrlKey || e.metaKey || (t && t.closest && t.closest("input, textarea, select"))) return;
  /** @type {Record<string, "first" | "back" | "forward" | "last">} */
  const keys = { ArrowLeft: "back", ArrowRight: "forward", ArrowUp: "first", Home: "first", ArrowDown: "last", End: "last" };
  const where = keys[e.key];
  if (!where) return;
  e.preventDefault();
  step(where);
}

/** Makes the line through the node shown the main line. */
function promote() {
  const b = shown;
  if (!b) return;
  b.tree.promote(b.at);
  goTo(b, b.at);
}

/** Deletes the node shown and what follows it (never the game's own moves); shows its parent. */
function removeHere() {
  const b = shown;
  if (!b || onGameLine(b, b.at)) return;
  const parent = b.tree.remove(b.at);
  if (parent) goTo(b, parent);
}

/**
 * Whether `node` is on the finished game's own moves.
 * @param {Board} b
 * @param {Node} node
 */
function onGameLine(b, node) {
  const g = b.source.game;
  return !!g && movesBetween(b.tree.root, node).every((m, i) => g.moves[i] === m);
}

/**
 * The engine review's mark of a node on the game's own moves.
 * @param {Board} b
 * @param {Node} node
 */
function markOf(b, node) {
  const g = b.source.game;
  if (!g || !g.review || !onGameLine(b, node)) return null;
  const p = g.review.plies[node.ply - 1];
  return p && p.mark ? p : null;
}

/** Puts the position string on the clipboard (selected in its field where that is refused). */
function copyPosition() {
  const input = $input("#position");
  input.select();
  if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(() => {});
}

/** Draws the board shown, its position, the tree and the review. */
function redraw() {
  const b = shown;
  if (!b || !$("#board")) return;
  const pos = b.at.data;
  $input("#position").value = pos ? pos.position : "…";
  $("#status").textContent = b.message || (pos ? statusWords(b, pos) : "Asking the engines…");
  const legal = pos && pos.to_act ? pos.legal : [];
  const { selectable, exact, cellless } = selectionView(legal, b.selected);
  const view = pos ? {
    kind: b.kind, geometry: pos.geometry, state: pos.view, last: b.at.move ? cellsIn(b.at.move) : [], selectable, selected: b.selected,
  } : null;
  if (view) renderBoard($("#board"), view, onCell);
  $("#legend").textContent = view ? boardLegend(view) : "";
  $("#facts").replaceChildren(...boardFacts(view).map((f) => el("li", { text: f })));
  $("#candidates").replaceChildren(
    ...(b.selected.length ? [el("span", { class: "muted", text: `selected ${b.selected.join(" ")}:` })] : []),
    ...[...exact, ...cellless].map((m) => el("button", { type: "button", "data-move": m, onclick: () => play(m), text: m })),
    ...(b.selected.length ? [el("button", { type: "button", onclick: () => { b.selected = []; redraw(); }, text: "clear" })] : []));
  $input("#move-input").disabled = !legal.length;
  const off = !onGameLine(b, b.at) && b.at !== b.tree.root;
  /** @type {HTMLButtonElement} */ ($("#delete-variation")).disabled = !off;
  /** @type {HTMLButtonElement} */ ($("#promote")).disabled = pathTo(b.at).every((n) => !n.parent || n.parent.children[0] === n);
  $("#tree-box").replaceChildren(treeView(b.tree.root, { at: b.at, markOf: (n) => markOf(b, n), go: (n) => goTo(b, n) }));
  const cur = $("#tree .move.current");
  if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
  drawReview(b);
}

/**
 * The position's state in words: who plays, or how it ended.
 * @param {Board} b
 * @param {Explored} pos
 */
function statusWords(b, pos) {
  if (pos.status.state === "ended") return `${endingSentence(pos.status, b.sides)}.`;
  return `${cap(pos.to_act || "")} to play${b.at.ply ? ` (after ${b.at.ply} moves from the start position)` : ""}.`;
}

/**
 * A finished game's engine review: its graph, with the ply shown when it is on the game's
 * moves.
 * @param {Board} b
 */
function drawReview(b) {
  const box = $("#analysis");
  const g = b.source.game;
  if (!box || !g) return;
  if (!g.review) {
    box.replaceChildren(el("p", { class: "muted", id: "no-review", text: "No engine review of this game yet (ask for one on the game's page)." }));
    return;
  }
  box.replaceChildren(
    evaluationGraph(g.review, onGameLine(b, b.at) ? b.at.ply : null),
    el("p", { class: "muted", text: `${g.review.plies[0] ? g.review.plies[0].side : "first side"}'s win probability, move by move (${g.review.engine}); marked moves carry ?!, ? or ??` }));
}
