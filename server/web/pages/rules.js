// @ts-check
// The rules pages (`/rules/<kind>`, `/rules/<kind>/developers`): the server writes each
// guide as HTML and every position the guide names as a <figure class="diagram"> whose
// `data-view` holds what a game document would hold for it (the engine's view and the
// board's geometry). This draws each one with the game page's own renderer, so a diagram
// looks like the board a player will play on. The page needs no connection and no other
// module: without scripts the figure still shows the position string.

import { renderBoard, boardLegend } from "../board.js";

/**
 * What the server puts in a figure's `data-view`.
 * @typedef {{kind: string, sides: string[], to_act: string | null, geometry: Record<string, any>, state: Record<string, any>}} Diagram
 */

/**
 * Draws one figure's board and says its symbols under it.
 * @param {Element} figure
 */
function draw(figure) {
  /** @type {Diagram} */
  let d;
  try {
    d = JSON.parse(figure.getAttribute("data-view") || "");
  } catch (e) {
    console.error("rules: a diagram without its view", e);
    return;
  }
  const view = { kind: d.kind, geometry: d.geometry, state: d.state, sides: d.sides };
  const holder = figure.querySelector(".diagram-board");
  renderBoard(holder, view);
  // A small board drawn small: as wide as its drawing is at about its own scale (a 4 x 4
  // Akron needs half the width of a 9 x 9 one), never wider than the stylesheet allows.
  const svg = /** @type {SVGSVGElement | null} */ (holder && holder.querySelector("svg"));
  const width = svg && svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0;
  if (width > 0) /** @type {HTMLElement} */ (figure).style.maxWidth = `min(30rem, ${Math.round(width * 1.2)}px)`;
  const legend = figure.querySelector(".diagram-legend");
  if (legend) legend.textContent = boardLegend(view);
}

for (const figure of document.querySelectorAll("figure.diagram[data-view]")) draw(figure);
