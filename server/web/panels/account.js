// @ts-check
// Accounts in the web client (protocol/docs/PROTOCOL.md, "Accounts"): the top bar's "Sign
// in" and "Claim your account" for a guest, the account's name with "Change password" and
// "Sign out" once claimed. Passwords go only into `password` fields and into the request
// that needs them: they are never stored, logged or shown.

import { $, $form, $input, field, formOf, sentence } from "../lib/dom.js";
import { link, session } from "../lib/session.js";
import { deviceLabel } from "./devices.js";

/** @typedef {import("../wire").PlayerInfo} PlayerInfo */

/**
 * What the account forms ask of the page.
 * @typedef {object} AccountHooks
 * @property {(token: string, player: {id: string, name: string}) => void} adopt makes this browser that player, keeping the one it was among the earlier identities
 * @property {(name?: string) => void} signedOut forgets this browser's token once the server revoked it
 * @property {(on: boolean) => void} leaving a sign-out is under way (the server's goodbye is then no error)
 * @property {(name: string) => void} claimed the account is claimed under `name`
 */

/**
 * What the server said, as a sentence for the person.
 * @param {any} e
 */
const said = (e) => sentence((e && e.message) || e || "");

/**
 * Wires the top bar's account buttons and the Account panel's forms.
 * @param {AccountHooks} ctx
 */
export function setupAccount(ctx) {
  const panel = $("#account");
  const forms = ["#sign-in-form", "#claim-form", "#password-form"].map($form);
  /** @param {HTMLFormElement} form */
  const open = (form) => {
    for (const f of forms) {
      f.hidden = f !== form;
      fail(f, "");
    }
    panel.hidden = false;
    const first = form.querySelector("input");
    if (first) first.focus();
  };
  const close = () => {
    panel.hidden = true;
    // Nothing typed stays in the page once the form is put away.
    for (const f of forms) f.reset();
  };
  /**
   * @param {HTMLFormElement} form
   * @param {string} text
   */
  const fail = (form, text) => { /** @type {HTMLElement} */ (form.querySelector(".form-error")).textContent = text; };
  for (const b of panel.querySelectorAll("[data-close]")) b.addEventListener("click", close);
  $("#sign-in-button").addEventListener("click", () => open($form("#sign-in-form")));
  $("#claim-button").addEventListener("click", () => {
    const f = $form("#claim-form");
    open(f);
    // The name one plays under is the likeliest account name.
    const me = session.me;
    if (me && !/^guest-/.test(me.name)) field(f, "name").value = me.name;
  });
  $("#password-button").addEventListener("click", () => open($form("#password-form")));

  $("#sign-in-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = formOf(ev);
    const name = field(f, "name").value.trim();
    if (!name || !f.password.value) { fail(f, "Type the account's name and its password."); return; }
    fail(f, "Signing in…");
    link.request({ t: "account.login", name, password: f.password.value, device: deviceLabel() })
      .then((msg) => {
        close();
        ctx.adopt(msg.token, { id: msg.player_id, name: msg.name });
      })
      .catch((e) => fail(f, e.code === "rate_limited"
        ? `Too many attempts: ${said(e)} Wait a minute and try again.` : said(e)));
  });

  $("#claim-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = formOf(ev);
    const name = field(f, "name").value.trim();
    if (!name) { fail(f, "Choose the account's name."); return; }
    if (f.password.value !== f.repeat.value) { fail(f, "The two passwords differ: type the same password twice."); return; }
    fail(f, "Claiming…");
    link.request({ t: "account.claim", name, password: f.password.value })
      .then((msg) => {
        close();
        ctx.claimed(msg.name);
      })
      .catch((e) => fail(f, said(e)));
  });

  $("#password-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = formOf(ev);
    if (f.new.value !== f.repeat.value) { fail(f, "The two new passwords differ: type the same password twice."); return; }
    fail(f, "Changing the password…");
    link.request({ t: "account.password", current: f.current.value, new: f.new.value, revoke_others: f.others.checked })
      .then(() => {
        const others = f.others.checked;
        close();
        accountStatus(others ? "Password changed; your other devices are signed out." : "Password changed.");
      })
      .catch((e) => fail(f, said(e)));
  });

  $("#sign-out-button").addEventListener("click", () => {
    const me = session.me;
    if (!window.confirm(`Sign out ${me ? me.name : ""} here? Sign in again with the account's name and password.`)) return;
    // The server's goodbye (`unauthorized`, then the socket closes) may come before the
    // `ok`: it is expected from now on.
    ctx.leaving(true);
    link.request({ t: "account.logout" })
      .then(() => ctx.signedOut(me && me.name))
      .catch((e) => { ctx.leaving(false); accountStatus(`Not signed out: ${said(e)}`); });
  });
}

/**
 * A line under the top bar about the account (a change done, a refusal).
 * @param {string} text
 */
export function accountStatus(text) {
  const p = $("#account-status");
  if (!p) return;
  p.textContent = text;
  p.hidden = !text;
}

/**
 * The top bar for `player` (the `welcome`'s): a guest is offered to sign in or claim; a
 * claimed account shows its name, and its name field is read-only (a claimed account keeps
 * its name: a `hello` with another one is refused).
 * @param {PlayerInfo | null} player
 */
export function drawAccount(player) {
  const account = player && player.account;
  $("#sign-in-button").hidden = !!account;
  $("#claim-button").hidden = !!account;
  $("#password-button").hidden = !account;
  $("#sign-out-button").hidden = !account;
  const label = $("#account-name");
  label.hidden = !account;
  label.textContent = account ? `Account: ${account}` : "";
  const name = $input("#name");
  name.readOnly = !!account;
  name.title = account ? "A claimed account keeps its name." : "";
}
