// @ts-check
// The lessons (`/learn`, `/learn/<kind>`): a few short steps per game, each a position, a
// goal in words and hints. The steps are the lesson file the terminal client reads too
// (`GET /api/lessons/<kind>`, protocol/lessons/<kind>.json). The page knows no rules: the
// position, its legal moves, the board after a try and whether the game ended all come
// from the server's engines (`position.explore`, a practice position that is never a game);
// the page only compares that answer with the step's condition (the move the engine wrote,
// the winner it named, the position string it gave).
//
// Progress belongs to the player on the server (`lesson.done` when a step is done,
// `lessons.progress` to read it), so it follows the player, and the account, to every
// device. This browser keeps a copy in its localStorage, per player id: what the page shows
// until the server answers, and steps done here before the server kept them, which are
// told to the server once it answers.

import { $, $input, el, cap, formOf } from "../lib/dom.js";
import { link, session } from "../lib/session.js";
import { KINDS, TITLES, cellsIn } from "../lib/words.js";
import { newPage, getJson, failed } from "../lib/api.js";
import { renderBoard, boardFacts, boardLegend } from "../board.js";
import { playOnForm } from "./play-on.js";
import { clickCell, selectionView } from "../lib/click-move.js";

/**
 * A step of a lesson file.
 * @typedef {{id: string, title: string, text: string, goal: string, options?: Record<string, unknown>,
 *   position: string, done: "win" | {moves: string[]} | {position: string}, hints: string[], success: string}} Step
 * @typedef {{kind: string, title: string, intro: string, steps: Step[]}} Lesson
 * @typedef {import("../lib/messages").Msg<"position">} Explored
 */

/** The lesson shown, or null on other pages. */
let shown = /** @type {null | {
 *   lesson: Lesson, at: number, pos: Explored | null, selected: string[], tries: number,
 *   message: string, solved: boolean, last: string[], fresh: () => boolean }} */ (null);

const STORE = "stoa.learn";

/** The server's answer to `lessons.progress`, for the player it was asked as. */
let kept = /** @type {null | {who: string, done: Record<string, string[]>}} */ (null);

/** Who the page is now (the welcomed player's id). */
function who() {
  return (session.me && session.me.id) || "guest";
}

/**
 * This player's progress: kind → ids of the steps done; the server's once it answered,
 * this browser's copy until then.
 * @returns {Record<string, string[]>}
 */
function progress() {
  if (kept && kept.who === who()) return kept.done;
  return localProgress();
}

/** This browser's copy of the player's progress. @returns {Record<string, string[]>} */
function localProgress() {
  try {
    const all = JSON.parse(localStorage.getItem(STORE) || "{}");
    const mine = all[(session.me && session.me.id) || "guest"];
    return mine && typeof mine === "object" ? mine : {};
  } catch {
    return {};
  }
}

/**
 * Marks a step done for this player.
 * @param {string} kind
 * @param {string} id
 */
function remember(kind, id) {
  /** @type {Record<string, Record<string, string[]>>} */
  let all = {};
  try { all = JSON.parse(localStorage.getItem(STORE) || "{}") || {}; } catch { /* a fresh start */ }
  const mine = all[who()] || {};
  const done = new Set(mine[kind] || []);
  done.add(id);
  mine[kind] = [...done];
  all[who()] = mine;
  try { localStorage.setItem(STORE, JSON.stringify(all)); } catch { /* private mode: not kept */ }
  if (kept && kept.who === who() && !(kept.done[kind] || []).includes(id)) {
    kept.done[kind] = [...(kept.done[kind] || []), id];
  }
  tellServer(kind, id);
}

/**
 * Tells the server a step is done (it waits for the link's next `welcome` if need be).
 * @param {string} kind
 * @param {string} id
 */
function tellServer(kind, id) {
  link.request({ t: "lesson.done", kind, step: id }).catch(() => { /* kept here; told again next time */ });
}

/**
 * Asks the server for this player's progress, then draws again with it (`fresh` says the
 * page is still the one that asked). Steps this browser kept that the server does not have
 * (done before the server kept progress, or while a request was lost) are told to it.
 * @param {() => boolean} fresh
 * @param {() => void} draw
 */
async function fetchProgress(fresh, draw) {
  /** @type {import("../lib/messages").Msg<"lessons.progress">} */
  let answer;
  try {
    answer = /** @type {import("../lib/messages").Msg<"lessons.progress">} */ (/** @type {unknown} */ (await link.request({ t: "lessons.progress" })));
  } catch {
    return; // this browser's copy stays what the page shows
  }
  /** @type {Record<string, string[]>} */
  const done = {};
  for (const [k, ids] of Object.entries(answer.done)) done[k] = [...(ids || [])];
  for (const [k, ids] of Object.entries(localProgress())) {
    for (const id of Array.isArray(ids) ? ids : []) {
      if ((done[k] || []).includes(id)) continue;
      done[k] = [...(done[k] || []), id];
      tellServer(k, id);
    }
  }
  kept = { who: who(), done };
  if (fresh()) draw();
}

/**
 * `/learn` (no kind): the games with the steps done; `/learn/<kind>`: that lesson.
 * @param {string | null} kind
 * @param {number | null} step the step asked for in the address (`?step=3`, from 1)
 */
export async function show(kind, step) {
  const fresh = newPage();
  shown = null;
  const main = $("#main");
  if (!kind) {
    document.title = "Learn · Stoa";
    main.replaceChildren(el("h1", { text: "Learn to play" }), el("p", { class: "muted", text: "Loading…" }));
    const lessons = await Promise.all(KINDS.map((k) => getJson(`/api/lessons/${k}`)));
    if (!fresh()) return;
    const draw = () => drawList(main, lessons);
    draw();
    fetchProgress(fresh, draw);
    return;
  }
  document.title = `Learn ${TITLES[kind] || kind} · Stoa`;
  main.replaceChildren(el("h1", { text: `Learn ${TITLES[kind] || kind}` }), el("p", { class: "muted", text: "Loading…" }));
  const { status, body } = await getJson(`/api/lessons/${encodeURIComponent(kind)}`);
  if (!fresh()) return;
  if (status !== 200 || !body) {
    failed(main, "No such lesson", status, body);
    return;
  }
  /** @type {Lesson} */
  const lesson = body;
  const done = progress()[kind] || [];
  const first = lesson.steps.findIndex((s) => !done.includes(s.id));
  const at = step !== null && step >= 1 && step <= lesson.steps.length ? step - 1 : Math.max(first, 0);
  shown = { lesson, at, pos: null, selected: [], tries: 0, message: "", solved: false, last: [], fresh };
  const s = shown;
  fetchProgress(() => shown === s && fresh(), redraw);
  main.replaceChildren(
    el("div", { class: "game learn" },
      el("div", {},
        el("div", { class: "board", id: "board", "aria-live": "off" }),
        el("p", { class: "muted", id: "legend" }),
        el("ul", { class: "facts", id: "facts" })),
      el("div", {},
        el("h1", { id: "title", text: lesson.title }),
        el("p", { class: "muted", text: lesson.intro }),
        el("ol", { class: "steps", id: "steps" }),
        el("h2", { id: "step-title" }),
        el("p", { id: "step-text" }),
        el("p", { class: "goal", id: "goal" }),
        el("p", { class: "status", id: "status", "aria-live": "polite" }),
        el("p", { class: "hint", id: "hint", role: "status", "aria-live": "polite" }),
        el("div", { class: "candidates", id: "candidates", "aria-label": "moves that match your clicks" }),
        el("form", { class: "move", id: "move-form", onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          const input = formOf(e).move;
          const mv = input.value.trim();
          if (mv) { attempt(mv); input.value = ""; }
        } },
          el("input", { name: "move", id: "move-input", placeholder: "or type a move", autocomplete: "off", "aria-label": "move in the game's notation" }),
          el("button", { type: "submit", text: "Try" })),
        el("div", { class: "controls", id: "controls" }),
        playOnForm(stepShown),
        el("p", { class: "muted" }, el("a", { href: "/learn", "data-nav": true, text: "All lessons" }), " · ",
          el("a", { href: `/rules/${kind}`, text: `The rules of ${TITLES[kind] || kind}` })))));
  load();
}

/**
 * Where the step shown starts, for "Play on from here against the computer".
 * @returns {import("./play-on.js").From | null}
 */
function stepShown() {
  const s = shown;
  if (!s) return null;
  const step = s.lesson.steps[s.at];
  return { kind: s.lesson.kind, options: optionsOf(step), position: step.position };
}

/**
 * The list of lessons with this player's steps done.
 * @param {HTMLElement} main
 * @param {{status: number, body: any}[]} lessons the answers of `GET /api/lessons/<kind>`, in `KINDS` order
 */
function drawList(main, lessons) {
  const done = progress();
  main.replaceChildren(el("h1", { text: "Learn to play" }),
    el("p", { text: "A few short steps for each game, from how a piece moves to how a game is won. Every move is checked by the same rules the games are played with." }),
    el("ul", { class: "lessons", id: "lessons" }, lessons.map((a, i) => {
      const k = KINDS[i];
      const steps = a.status === 200 && a.body ? a.body.steps.length : 0;
      const n = (done[k] || []).filter((id) => a.body && a.body.steps.some((/** @type {Step} */ s) => s.id === id)).length;
      return el("li", { "data-kind": k },
        el("a", { href: `/learn/${k}`, "data-nav": true, text: TITLES[k] }),
        ` — ${n} of ${steps} steps done${steps && n === steps ? " ✓" : ""}`);
    })));
}

/** Leaves the lesson: answers still on their way are dropped. */
export function leave() {
  shown = null;
}

/** Asks the engines for the current step's position and draws it. */
async function load() {
  const s = shown;
  if (!s) return;
  const step = s.lesson.steps[s.at];
  s.pos = null;
  s.selected = [];
  s.last = [];
  s.solved = false;
  s.tries = 0;
  s.message = "";
  const hint = $("#hint");
  if (hint) hint.textContent = "";
  redraw();
  try {
    const answer = await link.request({ t: "position.explore", kind: s.lesson.kind, options: optionsOf(step), position: step.position, moves: [] });
    if (shown !== s || !s.fresh()) return;
    s.pos = /** @type {Explored} */ (/** @type {unknown} */ (answer));
  } catch (e) {
    if (shown !== s) return;
    s.message = `The position cannot be shown: ${refusal(e)}`;
  }
  redraw();
}

/** Draws the lesson: the steps, the current one, its board. */
function redraw() {
  const s = shown;
  if (!s || !$("#board")) return;
  const lesson = s.lesson;
  const step = lesson.steps[s.at];
  const done = progress()[lesson.kind] || [];
  $("#steps").replaceChildren(...lesson.steps.map((st, i) => el("li", { "data-step": st.id, class: `${done.includes(st.id) ? "done" : ""}${i === s.at ? " current" : ""}`.trim() },
    el("button", { type: "button", class: "link-button", "aria-current": i === s.at ? "step" : null, onclick: () => { s.at = i; load(); }, text: st.title }),
    done.includes(st.id) ? " ✓" : "")));
  $("#step-title").textContent = `Step ${s.at + 1} of ${lesson.steps.length}: ${step.title}`;
  $("#step-text").textContent = step.text;
  $("#goal").textContent = `Goal: ${step.goal}`;
  const pos = s.pos;
  const myTurn = !!pos && !s.solved && !!pos.to_act;
  $("#status").textContent = s.message || (pos && pos.to_act && !s.solved ? `You play ${pos.to_act}.` : "");
  /** @type {string[]} */
  const legal = myTurn && pos ? pos.legal : [];
  const { selectable, exact, cellless } = selectionView(legal, s.selected);
  const view = pos ? {
    kind: lesson.kind, geometry: pos.geometry, state: pos.view, last: s.last, selectable, selected: s.selected,
  } : null;
  renderBoard($("#board"), view, onCell);
  $("#legend").textContent = view ? boardLegend(view) : "";
  $("#facts").replaceChildren(...boardFacts(view).map((f) => el("li", { text: f })));
  $("#candidates").replaceChildren(
    ...(s.selected.length ? [el("span", { class: "muted", text: `selected ${s.selected.join(" ")}:` })] : []),
    ...[...exact, ...cellless].map((m) => el("button", { type: "button", "data-move": m, onclick: () => attempt(m), text: m })),
    ...(s.selected.length ? [el("button", { type: "button", onclick: () => { s.selected = []; redraw(); }, text: "clear" })] : []));
  $input("#move-input").disabled = !myTurn;
  const next = s.at + 1 < lesson.steps.length;
  $("#controls").replaceChildren(
    el("button", { type: "button", id: "restart", onclick: () => load(), text: "Start the step again" }),
    el("a", { href: `/analysis?lesson=${encodeURIComponent(lesson.kind)}&step=${s.at + 1}`, "data-nav": true, id: "analyse-step", text: "Analyse this position" }),
    ...(s.solved && next ? [el("button", { type: "button", class: "primary", id: "next-step", onclick: () => { s.at += 1; load(); }, text: "Next step" })] : []),
    ...(s.solved && !next ? [el("a", { href: "/learn", "data-nav": true, class: "primary", id: "lesson-done", text: "Lesson complete: all lessons" })] : []));
}

/**
 * A click on a cell: extend the move being built; try it once only one move fits (as on the
 * game page).
 * @param {string} name
 */
function onCell(name) {
  const s = shown;
  if (!s || !s.pos || s.solved || !s.pos.to_act) return;
  const click = clickCell(s.pos.legal, s.selected, name);
  if ("play" in click) {
    attempt(click.play);
    return;
  }
  s.selected = "selected" in click ? click.selected : [];
  s.message = "refused" in click ? click.refused : "";
  redraw();
}

/**
 * Plays `mv` on the step's position through the server's engines and says whether it
 * reached the goal: done, a hint, or why the move is not legal.
 * @param {string} mv
 */
async function attempt(mv) {
  const s = shown;
  if (!s || !s.pos || s.solved) return;
  const step = s.lesson.steps[s.at];
  const mover = s.pos.to_act;
  s.selected = [];
  /** @type {Explored} */
  let after;
  try {
    after = /** @type {Explored} */ (/** @type {unknown} */ (await link.request({ t: "position.explore", kind: s.lesson.kind, options: optionsOf(step), position: step.position, moves: [mv] })));
  } catch (e) {
    if (shown !== s) return;
    s.message = `${mv} is not played: ${refusal(e)}.`;
    redraw();
    return;
  }
  if (shown !== s) return;
  const played = after.moves[0];
  const d = step.done;
  const reached = d === "win" ? after.status.winner === mover
    : "moves" in d ? d.moves.includes(played)
      : after.position === d.position;
  if (reached) {
    s.solved = true;
    s.pos = after;
    s.last = cellsIn(played);
    s.message = `${played}: ${step.success}`;
    $("#hint").textContent = "";
    remember(s.lesson.kind, step.id);
  } else {
    const hint = step.hints[Math.min(s.tries, step.hints.length - 1)];
    s.tries += 1;
    s.message = `${played} is legal, but it does not reach the goal${after.status.state === "ended" ? ` (the game would end: ${endWords(after)})` : ""}. Try again.`;
    $("#hint").textContent = `Hint: ${hint}`;
  }
  redraw();
}

/**
 * A step's options as the request carries them (none: the kind's defaults).
 * @param {Step} step
 * @returns {import("../wire").JsonValue}
 */
function optionsOf(step) {
  return /** @type {import("../wire").JsonValue} */ (step.options || {});
}

/**
 * The words of a refused request (the server's `error`, or the link's `disconnected`).
 * @param {unknown} e
 */
function refusal(e) {
  return /** @type {import("../lib/messages").Refusal} */ (e).message;
}

/**
 * How a practice position ended, in words.
 * @param {Explored} e
 */
function endWords(e) {
  const reason = (e.status.reason || "").replace(/_/g, " ");
  return e.status.winner ? `${cap(e.status.winner)} wins by ${reason}` : `a draw by ${reason}`;
}
