// @ts-check
// A move built from clicks on cells, for the pages that show a position of the engines
// (lessons, the analysis board): the legal moves come from the server, the page only
// matches the cells a move names (`cellsIn`) against the cells clicked so far.

import { cellsIn } from "./words.js";

/**
 * @param {string[]} cells
 * @param {string[]} prefix
 */
export function startsWith(cells, prefix) {
  return prefix.length <= cells.length && prefix.every((c, i) => cells[i] === c);
}

/**
 * What a click on `name` does with `selected` clicked before: play the one move it completes
 * (`play`), or go on selecting (`selected`), or nothing fits (`refused`: no legal move
 * starts there).
 * @param {string[]} legal
 * @param {string[]} selected
 * @param {string} name
 * @returns {{play: string} | {selected: string[]} | {refused: string}}
 */
export function clickCell(legal, selected, name) {
  const cell = name.toLowerCase();
  let sel = [...selected, cell];
  let cands = legal.filter((m) => startsWith(cellsIn(m), sel));
  if (!cands.length) {
    // A click that does not go on from the selection starts a new one there.
    sel = [cell];
    cands = legal.filter((m) => startsWith(cellsIn(m), sel));
  }
  if (!cands.length) return { refused: `No legal move starts at ${name}.` };
  const exact = cands.filter((m) => cellsIn(m).length === sel.length);
  if (cands.length === 1 && exact.length === 1) return { play: exact[0] };
  return { selected: sel };
}

/**
 * What the board marks and lists for a selection: the cells a click may add, the moves the
 * selection already names in full, and the moves that name no cell (a pass, a swap).
 * @param {string[]} legal
 * @param {string[]} selected
 */
export function selectionView(legal, selected) {
  const cands = legal.filter((m) => startsWith(cellsIn(m), selected));
  const selectable = new Set(cands.map((m) => cellsIn(m)[selected.length]).filter(Boolean));
  const exact = selected.length ? cands.filter((m) => cellsIn(m).length === selected.length) : [];
  const cellless = legal.filter((m) => cellsIn(m).length === 0);
  return { selectable, exact, cellless };
}
