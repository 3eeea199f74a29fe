// @ts-check
// View pieces more than one page draws: a player's name as a link, and the parts of the
// forms that start a game (the kind, its options, the line for the form's errors).

import { el, none } from "./dom.js";
import { KINDS, TITLES } from "./words.js";
import { defaults, kindInfo } from "./kinds.js";

/**
 * A player's name as a link to their page (the text alone when the id is unknown).
 * @param {{id?: string, name?: string} | null | undefined} p
 * @param {string} [extra]
 */
export function playerLink(p, extra = "") {
  const name = `${(p && p.name) || "?"}${extra}`;
  if (!p || !p.id) return el("span", { text: name });
  return el("a", { href: `/p/${encodeURIComponent(p.id)}`, "data-nav": true, class: "player-link", "data-player": p.id, text: name });
}

/**
 * A select of the game kinds.
 * @param {string} name
 */
export function kindSelect(name) {
  return el("select", { name }, KINDS.map((k) => el("option", { value: k, text: TITLES[k] })));
}

/** A form's own line for its errors, right under its button (where the eye is). */
export function formError() {
  return el("p", { class: "error form-error", role: "alert" });
}

/**
 * Says a refusal (or a mistake in the form) on the form's own error line.
 * @param {HTMLFormElement} form
 * @param {string} text
 */
export function formSays(form, text) {
  const p = form.querySelector(".form-error");
  if (p) p.textContent = text;
}

/** The box a form's game options go in; [`fillOptions`] puts the kind's own fields in. */
export function optionsBox() {
  return el("fieldset", { class: "options" }, el("legend", { text: "Options" }));
}

/**
 * The options of the form's game kind as fields of their own, from the kind's defaults
 * (`/api/kinds/<kind>`): a checkbox for a yes/no option, a number field for a number, a
 * text field otherwise (an option without a default is left empty: the game's default).
 * @param {HTMLFormElement} form
 */
export async function fillOptions(form) {
  const kind = form.kind.value;
  const info = await kindInfo(kind, {}).catch(none);
  if (!info || form.kind.value !== kind) return;
  const box = /** @type {HTMLElement} */ (form.querySelector("fieldset.options"));
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

/**
 * The options a form's fields ask for: those that differ from the kind's defaults.
 * @param {HTMLFormElement} form
 * @returns {Record<string, import("../wire").JsonValue>}
 */
export function readOptions(form) {
  const kindDefaults = defaults[form.kind.value] || {};
  /** @type {Record<string, import("../wire").JsonValue>} */
  const out = {};
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (form.querySelectorAll("[data-option]"))) {
    const key = input.dataset.option || "";
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
    if (JSON.stringify(kindDefaults[key]) !== JSON.stringify(value)) out[key] = value;
  }
  return out;
}
