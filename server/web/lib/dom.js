// @ts-check
// The page's one DOM helper: `$` finds an element, `el` builds one. Every page module builds
// its markup with `el`, which sets text as text (`textContent`), never as markup: names and
// chat lines are chosen by players.

/**
 * The first element matching `sel` (under `root`), or null.
 * @param {string} sel
 * @param {ParentNode} [root]
 * @returns {HTMLElement}
 */
export const $ = (sel, root = document) => /** @type {HTMLElement} */ (root.querySelector(sel));

/**
 * The form matching `sel`; its named fields are reached as properties (`form.kind.value`).
 * @param {string} sel
 * @returns {HTMLFormElement}
 */
export const $form = (sel) => /** @type {HTMLFormElement} */ (document.querySelector(sel));

/**
 * The input matching `sel`.
 * @param {string} sel
 * @returns {HTMLInputElement}
 */
export const $input = (sel) => /** @type {HTMLInputElement} */ (document.querySelector(sel));

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, unknown>} Attrs */

/**
 * A new element: `attrs` set as attributes (`on…` as listeners, `text` as its text; a value
 * of `true` as an empty attribute; `undefined`, `null` and `false` left out), then
 * `children` appended (strings as text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === "text") e.textContent = String(v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

/**
 * A form's field by its name (`form.name` is the form's own name, not its field's).
 * @param {HTMLFormElement} form
 * @param {string} name
 * @returns {HTMLInputElement}
 */
export const field = (form, name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name));

/**
 * The form an event came from (a submit's target).
 * @param {Event} e
 * @returns {HTMLFormElement}
 */
export const formOf = (e) => /** @type {HTMLFormElement} */ (e.target);

/**
 * Nothing: what a failed lookup whose failure needs no words gives (`.catch(none)`).
 * @returns {null}
 */
export const none = () => null;

/**
 * `s` with a capital first letter.
 * @param {string} s
 * @returns {string}
 */
export const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : s);

/**
 * `text` as a sentence: a capital first letter and a full stop.
 * @param {unknown} text
 * @returns {string}
 */
export function sentence(text) {
  const t = cap(String(text ?? "").trim());
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * `n` and the noun, singular for one: "1 player", "3 players".
 * @param {number} n
 * @param {string} noun
 */
export const count = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/**
 * A page for what is not there (or not to be seen), drawn in place of the view: what the
 * server's `404` page says, for a link followed inside the page or a game or room that is
 * gone since — the way back to the lobby.
 * @param {string} title
 * @param {string} text
 */
export function showMissing(title, text) {
  document.title = `${title} · Stoa`;
  $("#main").replaceChildren(el("h1", { text: title }), el("p", { id: "missing", text }),
    el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
}
