// @ts-check
// Who this browser is: becoming another player (a device code, a sign-in), switching back to
// an earlier identity, signing out, a server that does not know our token any more, a name
// the server refuses. The Devices and Account panels draw their forms; this module decides
// what the browser becomes and says it in words.

import { $, $form, $input, field, formOf, sentence } from "../lib/dom.js";
import { link, session, notice, redrawRoute } from "../lib/session.js";
import {
  IDENTITY_KEY, deployment, identityKey, readIdentity, loadIdentity, saveIdentity, forgetToken,
  previousOf, keepPrevious, takePrevious,
} from "../lib/identity.js";
import { setupAccount, drawAccount, accountStatus } from "./account.js";
import { setupDevices } from "./devices.js";

/** @typedef {import("../lib/identity.js").Identity} Identity */
/** @typedef {import("../lib/link.js").Welcome} Welcome */

/** This browser signed out: the server's goodbye is no error. */
let signingOut = false;
/** The person chose a name after "this server does not know you". */
let lostAnswered = false;

/** Whether a sign-out of this browser is under way (the server's goodbye is expected). */
export function isSigningOut() {
  return signingOut;
}

/**
 * Makes this browser `player` (its token), keeping the player it was among the earlier ones.
 * @param {string} token
 * @param {{id: string, name: string}} player
 */
function becomePlayer(token, player) {
  const current = loadIdentity();
  if (current.token && current.token !== token && current.id !== player.id) keepPrevious(deployment(), current, "replaced");
  saveIdentity({ token, id: player.id, name: player.name }, deployment());
  $input("#name").value = player.name;
  hideLost();
  link.reconnect();
}

/**
 * Makes this browser an earlier identity again; the current one is kept in its place.
 * @param {Identity} entry
 */
function switchTo(entry) {
  const current = loadIdentity();
  takePrevious(deployment(), entry.token || "");
  if (current.token && current.token !== entry.token) keepPrevious(deployment(), current, "switched");
  saveIdentity({ token: entry.token, id: entry.id, name: entry.name }, deployment());
  // No name with the hello: the player keeps the name the server has for it.
  $input("#name").value = "";
  hideLost();
  link.reconnect();
}

/**
 * A sign-out of this browser is under way (`on`) or failed: the server's goodbye is expected.
 * @param {boolean} on
 */
function leaving(on) {
  signingOut = on;
}

/**
 * This browser's token was revoked here (signed out): forget it and come back as a guest.
 * @param {string} [name]
 */
function signedOut(name) {
  // The server says `unauthorized` and closes the connection: expected, not an error.
  signingOut = true;
  notice("");
  const id = loadIdentity();
  if (id.token) forgetToken(id.token);
  $input("#name").value = "";
  accountStatus(name ? `Signed out: this browser is a new guest now; sign in to play as ${name} again.`
    : "Signed out: this browser is a new guest now.");
  link.reconnect();
}

/**
 * The server refused this browser's token: keep it among its deployment's earlier
 * identities (a server of that deployment that knows it gives it back), then say so.
 * @param {string} token
 */
export function lostIdentity(token) {
  /** @type {Identity | null} */
  let lost = null;
  for (const [key, dep] of [[identityKey(deployment()), deployment()], [IDENTITY_KEY, ""]]) {
    const id = readIdentity(key);
    if (!id || id.token !== token) continue;
    keepPrevious(dep, id, "unknown");
    localStorage.removeItem(key);
    lost = lost || id;
  }
  showLost(lost);
}

/**
 * Says in words that this server does not know us, and asks for a name.
 * @param {Identity | null} old
 */
function showLost(old) {
  const was = old && old.name ? `You were ${old.name}: that identity` : "Your old identity";
  $("#lost-text").textContent = "This server does not know you any more: it forgot its players when it restarted without storage, "
    + `or this browser was signed out from another device. ${was} stays kept in this browser, for a server that knows it. `
    + "Choose a name to play on as a new player, or sign in to your claimed account.";
  const form = $form("#lost-form");
  field(form, "name").value = old && old.name && !/^guest-/.test(old.name) ? old.name : "";
  $("#lost .form-error").textContent = "";
  $("#lost").hidden = false;
  field(form, "name").focus();
}

function hideLost() {
  $("#lost").hidden = true;
  lostAnswered = false;
}

/**
 * A name the server refused (a claimed account's): said where the name was typed.
 * @param {string} message
 */
export function nameRefused(message) {
  const text = sentence(message);
  session.named = false;
  session.nameRefusal = text;
  lostAnswered = false;
  if (!$("#lost").hidden) {
    $("#lost .form-error").textContent = text;
    field($form("#lost-form"), "name").focus();
  } else {
    accountStatus(text);
    $("#name").focus();
  }
  const join = $("#join-name-error");
  if (join) join.textContent = text;
}

/**
 * On a page load with no identity for this deployment, but identities of another one kept
 * on this site: the server is a new deployment (it restarted without storage): say so once.
 */
function lostOnLoad() {
  if (!deployment() || loadIdentity().token) return;
  const prefix = `${IDENTITY_KEY}.`;
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith(prefix) || key === identityKey(deployment())) continue;
    const id = readIdentity(key);
    if (id && id.token) { showLost(id); return; }
  }
}

/** Wires the Devices and Account panels and the "server does not know you" notice. */
export function setupIdentity() {
  // The linked player's token replaces ours (ours is kept among the earlier identities);
  // saying hello again with it makes us them.
  setupDevices({ adopt: becomePlayer, previous: () => previousOf(deployment()), switchTo, signedOut, leaving });
  setupAccount({
    adopt: becomePlayer,
    signedOut,
    leaving,
    claimed: (name) => {
      session.me = session.me && { ...session.me, name, account: name };
      $input("#name").value = name;
      drawAccount(session.me);
      const s = $("#link");
      if (link.open) s.textContent = `connected as ${name}`;
      accountStatus(`Claimed: you are ${name}. Sign in with this name and your password on any device.`);
      // The player's page says whether the account is claimed.
      if (session.view === "player") redrawRoute();
    },
  });
  $("#lost-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = field(formOf(e), "name").value.trim();
    if (!name) { $("#lost .form-error").textContent = "Type a name, or sign in."; return; }
    $input("#name").value = name;
    lostAnswered = true;
    link.reconnect();
  });
  $("#lost-sign-in").addEventListener("click", () => { hideLost(); $("#sign-in-button").click(); });
  $("#lost-dismiss").addEventListener("click", hideLost);
  lostOnLoad();
}

/**
 * After each `welcome`: the top bar's account part, and what the name questions became.
 * @param {Welcome} welcome
 */
export function welcomed(welcome) {
  signingOut = false;
  drawAccount(welcome.player);
  if (!link.bareHello) session.nameRefusal = "";
  if (lostAnswered) hideLost();
}
