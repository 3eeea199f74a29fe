// @ts-check
// The Devices panel: one identity on several devices (see protocol/docs/PROTOCOL.md,
// "Devices"). Show a one-time code to type on another device, type a code shown on another
// device to become that player here, and list (and revoke) the devices holding this
// identity. Labels are chosen by clients: they are set as text, never as markup.

import { $, $input } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, session } from "../lib/session.js";

/** @typedef {import("../lib/identity.js").Previous} Previous */

/**
 * What the Devices panel asks of the page.
 * @typedef {object} DevicesHooks
 * @property {(token: string, player: {id: string, name: string}) => void} adopt makes this browser the given player (stores the token, keeps the player it was among the earlier identities, and says hello again)
 * @property {() => Previous[]} previous the earlier identities of this deployment
 * @property {(entry: Previous) => void} switchTo makes this browser one of them again
 * @property {(name?: string) => void} signedOut forgets this browser's token once its device is revoked here
 * @property {(on: boolean) => void} leaving this browser's own device is being revoked
 */

/** How this browser calls itself in a player's device list: "browser (Chrome)". */
export function deviceLabel() {
  const ua = navigator.userAgent;
  const name = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox"
    : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "";
  return name ? `browser (${name})` : "browser";
}

/** @param {number} ms */
function when(ms) {
  return new Date(ms).toLocaleString();
}

/**
 * Wires the header's Devices button and panel.
 * @param {DevicesHooks} more
 */
export function setupDevices(more) {
  const panel = $("#devices");
  const adopt = more.adopt;
  /** @param {import("../lib/link.js").Outgoing} msg */
  const request = (msg) => link.request(msg);
  /** @param {string} text */
  const status = (text) => { $("#devices-status").textContent = text; };
  const refresh = () => request({ t: "devices" }).then((msg) => drawList(msg.devices))
    .catch((e) => status(errorText(e)));

  /** @param {import("../wire").DeviceInfo[]} devices */
  function drawList(devices) {
    const list = $("#device-list");
    list.replaceChildren();
    for (const d of devices) {
      const li = document.createElement("li");
      li.dataset.device = d.id;
      const label = document.createElement("span");
      label.className = "device-label";
      label.textContent = d.current ? `${d.label} (this browser)` : d.label;
      const times = document.createElement("span");
      times.className = "device-times";
      times.textContent = ` linked ${when(d.created_ms)}, last seen ${when(d.last_seen_ms)} `;
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "device-revoke";
      revoke.textContent = d.current ? "Log out here" : "Revoke";
      revoke.addEventListener("click", () => {
        // The server's goodbye to this browser may come before the `ok`: expected.
        if (d.current) more.leaving(true);
        request({ t: "device.revoke", id: d.id })
          .then(() => {
            status(`revoked ${d.label}`);
            // This browser's own token stops working: forget it (the server closes this
            // connection; the next hello is a new guest's).
            if (d.current) more.signedOut(); else refresh();
          })
          .catch((e) => { if (d.current) more.leaving(false); status(errorText(e)); });
      });
      li.append(label, times, revoke);
      list.append(li);
    }
  }

  $("#devices-button").addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    $("#devices-button").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) { status(""); refresh(); drawPrevious(); }
  });

  /** The earlier identities of this deployment, each with a button to switch back. */
  function drawPrevious() {
    const list = more.previous();
    $("#previous-box").hidden = !list.length;
    $("#previous-list").replaceChildren(...list.map((p) => {
      const li = document.createElement("li");
      li.dataset.player = p.id || "";
      const label = document.createElement("span");
      label.className = "previous-label";
      label.textContent = `${p.name || "?"} (player ${p.id || "?"}) `;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "previous-switch";
      button.textContent = "Switch";
      button.addEventListener("click", () => {
        status(`switching to ${p.name}…`);
        more.switchTo(p);
        drawPrevious();
      });
      li.append(label, button);
      return li;
    }));
  }
  $("#link-show").addEventListener("click", () => {
    request({ t: "link.code" }).then((msg) => {
      $("#link-code").textContent = msg.code;
      const mins = Math.max(1, Math.round((msg.expires_ms - Date.now()) / 60000));
      status(`type this code on the other device within ${mins} min; it works once`);
    }).catch((e) => status(errorText(e)));
  });
  $("#link-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $input("#link-input");
    const code = input.value.trim();
    if (!code) { status("type the code shown on the other device"); return; }
    request({ t: "link.redeem", code, device: deviceLabel() }).then((msg) => {
      input.value = "";
      const me = session.me;
      if (!me || me.id === msg.player_id) {
        status(`linked: this browser is now ${msg.name}`);
        adopt(msg.token, { id: msg.player_id, name: msg.name });
        return;
      }
      // This browser is someone already: becoming another player leaves them. Ask first,
      // in words, as `stoa link` refuses without `--replace` (the token just made stays
      // unused if the answer is no; its device can be revoked from the other player's list).
      confirmLink(me, msg);
    }).catch((e) => status(errorText(e)));
  });

  /**
   * @param {import("../wire").PlayerInfo} me
   * @param {import("../lib/link.js").Answer} msg
   */
  function confirmLink(me, msg) {
    const box = $("#devices-status");
    const go = document.createElement("button");
    go.type = "button";
    go.id = "link-confirm";
    go.textContent = "Continue";
    const stay = document.createElement("button");
    stay.type = "button";
    stay.id = "link-cancel";
    stay.textContent = `Stay ${me.name}`;
    go.addEventListener("click", () => {
      status(`linked: this browser is now ${msg.name}; ${me.name} is kept under Previous identities`);
      adopt(msg.token, { id: msg.player_id, name: msg.name });
    });
    stay.addEventListener("click", () => status(`not linked: this browser stays ${me.name}`));
    box.replaceChildren(`This browser is ${me.name}. Linking makes it ${msg.name}; ${me.name} stays reachable only if ${me.name} has another device or a claimed account. Continue? `, go, " ", stay);
    go.focus();
  }
}
