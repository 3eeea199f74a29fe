// @ts-check
// The script of the server's `404` page. Every unknown path answers the same bytes, `/admin`
// too, so the operators' console does not announce itself (issue 50); only in a browser at
// `/admin` does this script draw the console's sign-in (an operator token, kept in this
// tab's session storage only) and, once `/api/admin/me` takes the token, load the console
// (pages/admin.js). Anywhere else it does nothing: the page stays the plain `404`.

import { el } from "./lib/dom.js";

/** Where this tab keeps the operator's token (session storage: gone with the tab). */
const KEY = "stoa-operator-token";

if (location.pathname === "/admin") begin();

function begin() {
  document.title = "Operators · Stoa";
  const saved = sessionStorage.getItem(KEY);
  if (saved) check(saved, null);
  else signIn("");
}

/**
 * The sign-in form, with `error` under it.
 * @param {string} error
 */
function signIn(error) {
  const token = el("input", { type: "password", name: "token", id: "admin-token", autocomplete: "off", required: true, "aria-label": "operator token" });
  const status = el("p", { class: "error", id: "admin-signin-error", role: "alert", text: error });
  const form = el("form", { id: "admin-signin", class: "panel", onsubmit: (/** @type {Event} */ e) => {
    e.preventDefault();
    const t = token.value.trim();
    if (t) check(t, status);
  } },
    el("h1", { text: "Operators" }),
    el("label", {}, "Operator token ", token), " ",
    el("button", { type: "submit", text: "Sign in" }),
    status);
  document.body.replaceChildren(el("main", { id: "main", class: "admin" }, form));
  token.focus();
}

/**
 * Asks the server whether `token` is an operator's: a `404` means it is not (the API
 * answers everyone else as an unknown path).
 * @param {string} token
 * @param {HTMLElement | null} status where a failure is said (null: draw the form)
 */
async function check(token, status) {
  let r;
  try {
    r = await fetch("/api/admin/me", { headers: { Authorization: `Bearer ${token}` }, cache: "no-store" });
  } catch {
    const words = "The server cannot be reached; try again in a moment.";
    if (status) status.textContent = words; else signIn(words);
    return;
  }
  if (r.status !== 200) {
    sessionStorage.removeItem(KEY);
    const words = r.status === 404 ? "That is not an operator token." : `The server answered ${r.status}; try again in a moment.`;
    if (status) status.textContent = words; else signIn(words);
    return;
  }
  const body = await r.json();
  sessionStorage.setItem(KEY, token);
  const admin = await import("./pages/admin.js");
  admin.start(token, String(body.operator), () => {
    sessionStorage.removeItem(KEY);
    signIn("");
  });
}
