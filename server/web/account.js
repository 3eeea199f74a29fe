// Accounts in the web client (protocol/docs/PROTOCOL.md, "Accounts"): the top bar's "Sign
// in" and "Claim your account" for a guest, the account's name with "Change password" and
// "Sign out" once claimed; and the identities this browser was before (`previous`), kept so
// that linking, signing in or a server that forgot us never loses a player for good.
// Passwords go only into `password` fields and into the request that needs them: they are
// never stored, logged or shown.

const $ = (sel) => document.querySelector(sel);

/** The key of a deployment's list of earlier identities in local storage. */
function previousKey(deployment) {
  return deployment ? `stoa.previous.${deployment}` : "stoa.previous";
}

/** The identities this browser was on `deployment` before its current one, newest first. */
export function previousOf(deployment) {
  try {
    const list = JSON.parse(localStorage.getItem(previousKey(deployment)));
    return Array.isArray(list) ? list.filter((p) => p && p.token) : [];
  } catch {
    return [];
  }
}

/**
 * Keeps `identity` ({token, id, name}) among `deployment`'s earlier identities (once per
 * token, newest first): a server of that deployment that knows it can give it back.
 */
export function keepPrevious(deployment, identity, why) {
  if (!identity || !identity.token) return;
  const list = previousOf(deployment).filter((p) => p.token !== identity.token);
  list.unshift({ token: identity.token, id: identity.id, name: identity.name, why, kept_ms: Date.now() });
  // A bound on what a browser keeps; the oldest go first.
  localStorage.setItem(previousKey(deployment), JSON.stringify(list.slice(0, 20)));
}

/** Takes the identity with `token` out of `deployment`'s earlier identities. */
export function takePrevious(deployment, token) {
  const list = previousOf(deployment);
  const found = list.find((p) => p.token === token) || null;
  localStorage.setItem(previousKey(deployment), JSON.stringify(list.filter((p) => p.token !== token)));
  return found;
}

/** What the server said, as a sentence for the person. */
function said(e) {
  const text = String((e && e.message) || e || "").trim();
  const t = text ? text[0].toUpperCase() + text.slice(1) : text;
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * Wires the top bar's account buttons and the Account panel's forms.
 * `ctx.request(msg)` sends a request (a promise of its answer); `ctx.me()` is the welcomed
 * player (with `account` once claimed); `ctx.adopt(token, player)` makes this browser that
 * player, keeping the one it was among the earlier identities; `ctx.signedOut()` forgets this
 * browser's token once the server revoked it; `ctx.leaving(on)` says a sign-out is under
 * way (the server's goodbye is then no error); `ctx.deviceLabel()` names this browser.
 */
export function setupAccount(ctx) {
  const panel = $("#account");
  const forms = ["#sign-in-form", "#claim-form", "#password-form"].map((s) => $(s));
  const open = (form) => {
    for (const f of forms) {
      f.hidden = f !== form;
      f.querySelector(".form-error").textContent = "";
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
  const fail = (form, text) => { form.querySelector(".form-error").textContent = text; };
  for (const b of panel.querySelectorAll("[data-close]")) b.addEventListener("click", close);
  $("#sign-in-button").addEventListener("click", () => open($("#sign-in-form")));
  $("#claim-button").addEventListener("click", () => {
    const f = $("#claim-form");
    open(f);
    // The name one plays under is the likeliest account name.
    const me = ctx.me();
    if (me && !/^guest-/.test(me.name)) f.name.value = me.name;
  });
  $("#password-button").addEventListener("click", () => open($("#password-form")));

  $("#sign-in-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = ev.target;
    const name = f.name.value.trim();
    if (!name || !f.password.value) { fail(f, "Type the account's name and its password."); return; }
    fail(f, "Signing in…");
    ctx.request({ t: "account.login", name, password: f.password.value, device: ctx.deviceLabel() })
      .then((msg) => {
        close();
        ctx.adopt(msg.token, { id: msg.player_id, name: msg.name });
      })
      .catch((e) => fail(f, e.code === "rate_limited"
        ? `Too many attempts: ${said(e)} Wait a minute and try again.` : said(e)));
  });

  $("#claim-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = ev.target;
    const name = f.name.value.trim();
    if (!name) { fail(f, "Choose the account's name."); return; }
    if (f.password.value !== f.repeat.value) { fail(f, "The two passwords differ: type the same password twice."); return; }
    fail(f, "Claiming…");
    ctx.request({ t: "account.claim", name, password: f.password.value })
      .then((msg) => {
        close();
        ctx.claimed(msg.name);
      })
      .catch((e) => fail(f, said(e)));
  });

  $("#password-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = ev.target;
    if (f.new.value !== f.repeat.value) { fail(f, "The two new passwords differ: type the same password twice."); return; }
    fail(f, "Changing the password…");
    ctx.request({ t: "account.password", current: f.current.value, new: f.new.value, revoke_others: f.others.checked })
      .then(() => {
        const others = f.others.checked;
        close();
        accountStatus(others ? "Password changed; your other devices are signed out." : "Password changed.");
      })
      .catch((e) => fail(f, said(e)));
  });

  $("#sign-out-button").addEventListener("click", () => {
    const me = ctx.me();
    if (!window.confirm(`Sign out ${me ? me.name : ""} here? Sign in again with the account's name and password.`)) return;
    // The server's goodbye (`unauthorized`, then the socket closes) may come before the
    // `ok`: it is expected from now on.
    ctx.leaving(true);
    ctx.request({ t: "account.logout" })
      .then(() => ctx.signedOut(me && me.name))
      .catch((e) => { ctx.leaving(false); accountStatus(`Not signed out: ${said(e)}`); });
  });
}

/** A line under the top bar about the account (a change done, a refusal). */
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
  const name = $("#name");
  name.readOnly = !!account;
  name.title = account ? "A claimed account keeps its name." : "";
}
