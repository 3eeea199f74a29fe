// @ts-check
// What the analysis board draws besides the board: the move tree (the main line with its
// variations in parentheses, lichess style), and the form that sets up a position (a kind,
// a position string, options). The controller is pages/analysis.js.

import { el } from "../lib/dom.js";
import { KINDS, TITLES } from "../lib/words.js";
import { tokens } from "../lib/move-tree.js";
import { SIGNS } from "./game-analysis.js";

/** @typedef {import("../lib/messages").Msg<"position">} Explored */
/** @typedef {import("../lib/move-tree.js").TreeNode<Explored>} Node */
/** @typedef {import("../wire").AnalysisPly} AnalysisPly */

/**
 * What the tree view needs of the page.
 * @typedef {object} TreeHooks
 * @property {Node} at the node shown
 * @property {(node: Node) => AnalysisPly | null} markOf the engine review's mark of a node
 * @property {(node: Node) => void} go shows a node
 */

/**
 * The move tree as buttons: each move a `button.move` (`data-node`, `data-ply`,
 * `data-move`, `data-depth`: 0 on the main line), a variation a `div.variation` in
 * parentheses holding its moves and its own variations.
 * @param {Node} root
 * @param {TreeHooks} on
 */
export function treeView(root, on) {
  const box = el("div", { class: "move-tree", id: "tree", "aria-label": "moves and variations" });
  /** @type {HTMLElement[]} */
  const open = [box];
  for (const tok of tokens(root)) {
    const here = open[open.length - 1];
    if (tok.t === "open") {
      const v = el("div", { class: "variation", "data-depth": tok.depth }, el("span", { class: "paren", text: "(" }));
      here.append(v);
      open.push(v);
    } else if (tok.t === "close") {
      here.append(el("span", { class: "paren", text: ")" }));
      open.pop();
    } else {
      here.append(moveButton(tok.node, tok.depth, on), " ");
    }
  }
  if (!root.children.length) box.append(el("span", { class: "muted", text: "No moves yet: play one on the board." }));
  return box;
}

/**
 * One move of the tree.
 * @param {Node} node
 * @param {number} depth
 * @param {TreeHooks} on
 */
function moveButton(node, depth, on) {
  const mark = on.markOf(node);
  const current = node === on.at;
  return el("button", {
    type: "button", class: `move${current ? " current" : ""}${mark && mark.mark ? ` mark-${mark.mark}` : ""}`,
    "data-node": node.id, "data-ply": node.ply, "data-move": node.move, "data-depth": depth,
    "data-mark": mark ? mark.mark : null, "aria-current": current ? "true" : null,
    title: mark && mark.mark ? `${mark.mark}; the engine preferred ${mark.best || "?"}` : null,
    onclick: () => on.go(node),
  }, el("span", { class: "ply", text: `${node.ply}.` }), ` ${node.move}`,
  mark && mark.mark ? el("span", { class: "mark", text: SIGNS[mark.mark] }) : null);
}

/**
 * What a setup form starts with, and what it does.
 * @typedef {object} SetupHooks
 * @property {string} kind
 * @property {string} position
 * @property {string} options as typed: JSON or `k=v,k=v`
 * @property {(kind: string, position: string, options: string) => void} submit
 */

/**
 * The form that sets up a position: a kind, a position string (empty: the start) and
 * options. Its errors go to `#analysis-error`, which the page fills.
 * @param {SetupHooks} on
 */
export function setupForm(on) {
  const kind = el("select", { id: "setup-kind", name: "kind", "aria-label": "game" },
    ...KINDS.map((k) => el("option", { value: k, text: TITLES[k], selected: k === on.kind ? true : null })));
  const position = el("input", { id: "setup-position", name: "position", value: on.position, autocomplete: "off", spellcheck: "false",
    placeholder: "position string (empty: the start position)", "aria-label": "position string" });
  const options = el("input", { id: "setup-options", name: "options", value: on.options, autocomplete: "off", spellcheck: "false",
    placeholder: "options: {\"width\":4} or width=4,height=3", "aria-label": "options" });
  return el("form", { id: "setup", class: "setup", onsubmit: (/** @type {Event} */ e) => {
    e.preventDefault();
    on.submit(/** @type {HTMLSelectElement} */ (kind).value, /** @type {HTMLInputElement} */ (position).value.trim(),
      /** @type {HTMLInputElement} */ (options).value.trim());
  } }, kind, position, options, el("button", { type: "submit", class: "primary", id: "setup-go", text: "Analyse" }));
}

/**
 * Options as an address or the form carries them: a JSON object, or `k=v` pairs separated
 * by commas (a value that reads as JSON, such as `4` or `true`, is that value; anything else
 * a string). Empty: none. Throws on a JSON text that is not an object.
 * @param {string} text
 * @returns {Record<string, unknown>}
 */
export function parseOptions(text) {
  const t = text.trim();
  if (!t) return {};
  if (t.startsWith("{")) {
    const v = JSON.parse(t);
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("options must be a JSON object");
    return v;
  }
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const pair of t.split(",")) {
    const [k, ...rest] = pair.split("=");
    if (!k.trim() || !rest.length) throw new Error(`'${pair.trim()}' is not key=value`);
    const raw = rest.join("=").trim();
    try { out[k.trim()] = JSON.parse(raw); } catch { out[k.trim()] = raw; }
  }
  return out;
}
