// The Devices panel: one identity on several devices (see protocol/docs/PROTOCOL.md,
// "Devices"). Show a one-time code to type on another device, type a code shown on another
// device to become that player here, and list (and revoke) the devices holding this
// identity. Labels are chosen by clients: they are set as text, never as markup.

const $ = (sel) => document.querySelector(sel);

/** How this browser calls itself in a player's device list: "browser (Chrome)". */
export function deviceLabel() {
  const ua = navigator.userAgent;
  const name = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox"
    : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "";
  return name ? `browser (${name})` : "browser";
}

function when(ms) {
  return new Date(ms).toLocaleString();
}

/**
 * Wires the header's Devices button and panel. `request(msg)` sends a websocket request
 * and resolves with its answer; `adopt(token, player)` makes this browser the given player
 * (stores the token and says hello again).
 */
export function setupDevices(request, adopt) {
  const panel = $("#devices");
  const status = (text) => { $("#devices-status").textContent = text; };
  const refresh = () => request({ t: "devices" }).then((msg) => drawList(msg.devices))
    .catch((e) => status(`error ${e.code}: ${e.message}`));

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
        request({ t: "device.revoke", id: d.id })
          .then(() => { status(`revoked ${d.label}`); if (!d.current) refresh(); })
          .catch((e) => status(`error ${e.code}: ${e.message}`));
      });
      li.append(label, times, revoke);
      list.append(li);
    }
  }

  $("#devices-button").addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    $("#devices-button").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) { status(""); refresh(); }
  });
  $("#link-show").addEventListener("click", () => {
    request({ t: "link.code" }).then((msg) => {
      $("#link-code").textContent = msg.code;
      const mins = Math.max(1, Math.round((msg.expires_ms - Date.now()) / 60000));
      status(`type this code on the other device within ${mins} min; it works once`);
    }).catch((e) => status(`error ${e.code}: ${e.message}`));
  });
  $("#link-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const code = $("#link-input").value.trim();
    if (!code) { status("type the code shown on the other device"); return; }
    request({ t: "link.redeem", code, device: deviceLabel() }).then((msg) => {
      $("#link-input").value = "";
      status(`linked: this browser is now ${msg.name}`);
      adopt(msg.token, { id: msg.player_id, name: msg.name });
    }).catch((e) => status(`error ${e.code}: ${e.message}`));
  });
}
