// @ts-check
// A finished game's engine review on its page: an "Analyse" button that asks for it
// (`analysis.request`), what it waits for (a worker, its turn in the queue), and once done
// the evaluation graph (the first side's win probability, ply by ply, as an SVG polyline)
// and the marked moves with the engine's preferred move. The move list shows the marks too
// (`markOf`).

import { $, el } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link } from "../lib/session.js";
import { authHeaders } from "../lib/identity.js";
import { replayAt } from "./game-actions.js";

/** @typedef {import("../lib/documents").GameDoc} GameDoc */
/** @typedef {import("../wire").AnalysisResult} AnalysisResult */
/** @typedef {import("../wire").AnalysisState} AnalysisState */
/** @typedef {import("../wire").AnalysisPly} AnalysisPly */

/**
 * A game's review as last heard, by game id.
 * @type {Map<string, {state: AnalysisState, result?: AnalysisResult | null, polling?: boolean}>}
 */
const reviews = new Map();

/** How long between two looks at a review not done yet. */
const POLL_MS = 1000;

/** Words for a review not done yet. */
const WAITING = {
  none: "",
  queued: "Queued: an analysis worker will review the game.",
  waiting_for_worker: "The review is waiting for an analysis worker (none is connected).",
  running: "An analysis worker is reviewing the game…",
  done: "",
};

/** The signs of the marks, as on move lists elsewhere. */
export const SIGNS = { inaccuracy: "?!", mistake: "?", blunder: "??" };

/**
 * The mark of ply `ply` (from 1) of game `id`, when its review is done and marks it.
 * @param {string} id
 * @param {number} ply
 * @returns {AnalysisPly | null}
 */
export function markOf(id, ply) {
  const r = reviews.get(id);
  const p = r && r.result && r.result.plies[ply - 1];
  return p && p.mark ? p : null;
}

/**
 * A move list entry: the move, and its mark with the engine's move when there is one.
 * @param {string} id
 * @param {string} move
 * @param {number} ply
 */
export function moveItem(id, move, ply) {
  const p = markOf(id, ply);
  if (!p || !p.mark) return el("li", { "data-ply": ply, text: move });
  return el("li", { "data-ply": ply, "data-mark": p.mark, class: `mark-${p.mark}`, title: `${p.mark}; the engine preferred ${p.best || "?"}` },
    move, el("span", { class: "mark", text: ` ${SIGNS[p.mark]}` }));
}

/**
 * Under a finished game: the review, or the button asking for it. A marked move's "show"
 * puts the board where it was played, so the engine's move can be seen there.
 * @param {import("./game-actions.js").GameShown} g
 * @param {GameDoc} doc
 * @param {import("./game-actions.js").ActionHooks} on
 */
export function drawAnalysis(g, doc, on) {
  const box = $("#analysis");
  if (!box) return;
  if (doc.status.state !== "ended") { box.replaceChildren(); return; }
  const r = reviews.get(g.id);
  if (!r) {
    reviews.set(g.id, { state: "none" });
    fetchReview(g).then((got) => { if (got && on.current()) { reviews.set(g.id, got); follow(g, on); on.redraw(); } });
    box.replaceChildren();
    return;
  }
  if (r.state === "none") {
    const ask = el("button", { type: "button", id: "analyse", onclick: () => {
      /** @type {import("../lib/link.js").Outgoing} */
      const msg = { t: "analysis.request", game_id: g.id, ...(g.code ? { code: g.code } : {}) };
      link.request(msg).then((a) => {
        if (a.t !== "analysis") return;
        reviews.set(g.id, { state: a.state, result: a.result });
        follow(g, on);
        on.redraw();
      }).catch((e) => { box.replaceChildren(ask, el("span", { class: "error", text: ` ${errorText(e)}` })); });
    }, text: "Analyse" });
    box.replaceChildren(ask);
    return;
  }
  if (r.state !== "done" || !r.result) {
    box.replaceChildren(el("p", { id: "analysis-state", "data-state": r.state, class: "muted", text: WAITING[r.state] }));
    return;
  }
  const marked = r.result.plies.filter((p) => p.mark);
  box.replaceChildren(
    el("h2", { text: "Engine review" }),
    evaluationGraph(r.result),
    el("p", { class: "muted", text: `${r.result.plies[0] ? r.result.plies[0].side : "first side"}'s win probability, move by move (${r.result.engine})` }),
    el("ul", { id: "analysis-marks", class: "marks" }, ...marked.map((p) => el("li", { "data-ply": p.ply, "data-mark": p.mark },
      `${p.ply}. ${p.side} ${p.move}: ${p.mark}`, p.best ? ` (best: ${p.best})` : "",
      ` ${Math.round(p.eval * 100)}% → ${Math.round(p.after * 100)}% `,
      el("button", { type: "button", "data-show": p.ply, onclick: () => replayAt(g, doc, p.ply - 1, on), text: "show" })))),
    marked.length ? null : el("p", { class: "muted", text: "No move lost much: no marks." }));
}

/**
 * Polls a review not done yet until it is (while the page shows the game).
 * @param {{id: string, query: string}} g
 * @param {{redraw: () => void, current: () => boolean}} on
 */
function follow(g, on) {
  const r = reviews.get(g.id);
  if (!r || r.state === "done" || r.state === "none" || r.polling) return;
  r.polling = true;
  setTimeout(async () => {
    r.polling = false;
    if (!on.current()) return;
    const got = await fetchReview(g);
    if (!got) return;
    reviews.set(g.id, got);
    on.redraw();
    follow(g, on);
  }, POLL_MS);
}

/**
 * `GET /api/games/<id>/analysis`, or null when it fails.
 * @param {{id: string, query: string}} g
 * @returns {Promise<{state: AnalysisState, result?: AnalysisResult | null} | null>}
 */
export async function fetchReview(g) {
  try {
    const r = await fetch(`/api/games/${encodeURIComponent(g.id)}/analysis${g.query}`, { headers: authHeaders(), cache: "no-store" });
    if (!r.ok) return null;
    return await r.json();
  } catch {
    return null;
  }
}

/** The graph's size in SVG units. */
const W = 300;
const H = 100;

/**
 * The evaluation graph: the first side's win probability from the start through every
 * ply, a line over a middle rule, with a dot on every marked ply. The analysis board draws
 * it too, with the ply it shows (`at`) as an upright rule.
 * @param {AnalysisResult} result
 * @param {number | null} [at]
 */
export function evaluationGraph(result, at = null) {
  const values = [result.start, ...result.plies.map((p) => p.first)];
  const x = (/** @type {number} */ i) => (values.length > 1 ? (i * W) / (values.length - 1) : 0);
  const y = (/** @type {number} */ v) => H - v * H;
  const svg = svgEl("svg", { id: "analysis-graph", viewBox: `0 0 ${W} ${H}`, width: "100%", height: "120", role: "img", "aria-label": "evaluation graph" });
  svg.append(svgEl("rect", { x: 0, y: 0, width: W, height: H, fill: "none", stroke: "currentColor", "stroke-opacity": "0.3" }));
  svg.append(svgEl("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, stroke: "currentColor", "stroke-opacity": "0.3", "stroke-dasharray": "4 4" }));
  svg.append(svgEl("polyline", { points: values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" "), fill: "none", stroke: "currentColor", "stroke-width": "2" }));
  result.plies.forEach((p, i) => {
    if (!p.mark) return;
    svg.append(svgEl("circle", { class: `mark-${p.mark}`, "data-ply": p.ply, cx: x(i + 1).toFixed(1), cy: y(p.first).toFixed(1), r: 3.5 }));
  });
  if (at !== null && at >= 0 && at < values.length) {
    svg.append(svgEl("line", { id: "analysis-graph-at", "data-ply": at, x1: x(at).toFixed(1), y1: 0, x2: x(at).toFixed(1), y2: H, stroke: "currentColor", "stroke-opacity": "0.6" }));
  }
  return svg;
}

/**
 * An SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 */
function svgEl(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}
