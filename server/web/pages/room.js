// @ts-check
// Rooms: an invitation link (`/r/<code>`) joins the room, or offers to watch its game when it
// has started; a host's waiting room (drawn in the lobby too) with the invitation to send;
// and the waiting room's chat (protocol/docs/PROTOCOL.md, "Chat"), where the host and
// whoever opened the invitation talk before the game starts. Lines are shown as text only.

import { $, $input, el, field, formOf, showMissing } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, session, go } from "../lib/session.js";
import { reportButton } from "../lib/report.js";

/** @typedef {import("../lib/link.js").Incoming} Incoming */
/** @typedef {import("../wire").RoomInfo} RoomInfo */
/** @typedef {{id: string, name: string, text: string, ts?: number}} RoomLine */

/** The room chat shown: its code, its lines, whether it is open. @type {{code: string, lines: RoomLine[], open: boolean} | null} */
let chat = null;
/** Which drawing of the room page this is; an answer for an earlier one is dropped. */
let shown = 0;

/**
 * A host's waiting room: the invitation link to send, and the room's chat.
 * @param {HTMLElement} box
 * @param {RoomInfo} room
 */
export function drawHosted(box, room) {
  const url = `${location.origin}/r/${room.code}`;
  box.replaceChildren(
    el("p", {}, "Room ", el("strong", { id: "room-code", text: room.code }), " is waiting for your opponent. Send them this link:"),
    el("p", { class: "invite", id: "invite", text: url }),
    el("button", { type: "button", id: "copy-link", onclick: () => copyLink(url), text: "Copy the link" }),
    " ",
    el("button", { type: "button", onclick: () => { link.send({ t: "room.leave", code: room.code }); closeChat(); box.textContent = "Room closed."; }, text: "Close the room" }),
    el("p", { id: "copy-status", class: "muted", role: "status" }),
    chatPanel(room.code));
}

/**
 * The room chat's panel; opens the room's chat on the server (again after reconnects).
 * @param {string} code
 */
function chatPanel(code) {
  closeChat();
  chat = { code, lines: [], open: true };
  const panel = el("section", { class: "panel chat room-chat", id: "room-chat", "aria-label": "room chat" },
    el("h2", { text: "Room chat" }),
    el("ol", { class: "chat-lines", id: "room-chat-lines", "aria-live": "polite" }),
    el("p", { class: "muted", id: "room-chat-note" }),
    el("form", { class: "chat-form", id: "room-chat-form", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); say(); } },
      el("input", { name: "text", id: "room-chat-input", maxlength: 300, autocomplete: "off", placeholder: "Say something", "aria-label": "room chat message" }),
      el("button", { type: "submit", text: "Send" })),
    el("p", { class: "error", id: "room-chat-error", role: "alert" }));
  // Drawn once the panel is in the page.
  setTimeout(openChat, 0);
  return panel;
}

/** Asks for the room's chat (its history, then its new lines). */
export function openChat() {
  const rc = chat;
  if (!rc || !link.ready) return;
  link.request({ t: "room.watch", code: rc.code }).then((h) => {
    if (chat !== rc) return;
    rc.lines = h.lines;
    rc.open = h.open;
    chatError("");
    drawChat();
  }).catch((e) => chatError(errorText(e)));
}

/** Leaves the room's chat we show, if any. */
export function closeChat() {
  if (chat) link.send({ t: "room.unwatch", code: chat.code });
  chat = null;
}

/** Whether a room chat is shown. */
export function chatShown() {
  return !!chat;
}

/** @param {string} text */
function chatError(text) {
  const p = $("#room-chat-error");
  if (p) p.textContent = text;
}

function say() {
  const rc = chat;
  const input = $input("#room-chat-input");
  if (!rc || !input || !input.value.trim()) return;
  link.request({ t: "room.say", code: rc.code, text: input.value }).then(() => { input.value = ""; chatError(""); })
    .catch((e) => chatError(errorText(e)));
}

/**
 * A `room.chat` push: a new line of the room chat shown.
 * @param {Incoming} msg
 */
export function onMessage(msg) {
  const rc = chat;
  if (msg.t !== "room.chat" || !rc || msg.code !== rc.code) return;
  rc.lines.push({ id: msg.id, name: msg.name, text: msg.text, ts: msg.ts });
  if (rc.lines.length > 100) rc.lines.shift();
  drawChat();
}

function drawChat() {
  const rc = chat;
  const list = $("#room-chat-lines");
  if (!rc || !list) return;
  list.replaceChildren(...rc.lines.map((l) => el("li", { class: "chat-line" },
    el("span", { class: "chat-name", text: `${l.name}:` }), " ",
    el("span", { class: "chat-text", text: l.text }),
    session.me && l.id !== session.me.id ? reportButton(l, { code: rc.code, ts: l.ts }, "chat-report") : null)));
  list.scrollTop = list.scrollHeight;
  $input("#room-chat-input").disabled = !rc.open;
  $("#room-chat-note").textContent = rc.open
    ? (rc.lines.length ? "" : "Nobody has said anything yet.")
    : "The game has started: this chat is read-only.";
}

/**
 * Copies the invitation link and says whether it worked: the clipboard may be refused (no
 * permission, a page not served securely), and then the link is selected for the person to
 * copy by hand.
 * @param {string} url
 */
async function copyLink(url) {
  const status = $("#copy-status");
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(url);
    if (status) status.textContent = "Link copied.";
  } catch {
    const box = $("#invite");
    if (box) window.getSelection()?.selectAllChildren(box);
    if (status) status.textContent = "The link is selected: copy it with Ctrl+C (⌘C on a Mac).";
  }
}

/**
 * The invitation page of room `code`.
 * @param {string} code
 */
export async function show(code) {
  // This drawing of the page; an answer that comes after another one began is dropped.
  const mine = ++shown;
  const stale = () => session.view !== "room" || shown !== mine;
  const main = $("#main");
  if (!link.ready) {
    // resubscribe() calls us again once connected: what the room is decides what to show.
    main.replaceChildren(el("h1", { text: `Room ${code}` }), el("p", { id: "room-status", text: "Opening the invitation…" }));
    return;
  }
  // First what the room is (`room.watch` takes no seat): an invitation to a room whose game
  // has started, or that is closed, must not offer to join it.
  let room;
  try {
    room = await link.request({ t: "room.watch", code });
  } catch (/** @type {any} */ e) {
    if (stale()) return;
    if (e.code === "not_found") {
      closeChat();
      showMissing("No such room", `There is no room with the code '${code}'.`);
    } else if (e.code !== "disconnected") {
      main.replaceChildren(el("h1", { text: `Room ${code}` }),
        el("p", { class: "error", role: "alert", id: "room-error", text: errorText(e) }),
        el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
    }
    return;
  }
  if (stale()) return;
  if (room.status === "started" && room.game_id) {
    link.send({ t: "room.unwatch", code });
    const game = `/g/${encodeURIComponent(room.game_id)}`;
    // Its two players go back to their game; anyone else may watch it.
    if (session.myGames.includes(room.game_id)) { go(game); return; }
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("p", { id: "room-status", text: "This game has started." }),
      el("p", {}, el("button", { type: "button", class: "primary", id: "watch-game",
        onclick: () => go(`${game}?code=${encodeURIComponent(code)}`), text: "Watch" }), " ",
      el("a", { href: "/", "data-nav": true, text: "Go to the lobby" })));
    return;
  }
  if (room.status === "closed") {
    link.send({ t: "room.unwatch", code });
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("p", { id: "room-status", text: "This room is closed: its host left before anyone joined." }),
      el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" }), "."));
    return;
  }
  if (session.newcomer && !session.named) {
    // Someone new to this server: a name first, so the seat (and the game) carries it
    // rather than a made-up guest name.
    main.replaceChildren(el("h1", { text: `Room ${code}` }),
      el("form", { class: "stack", id: "join-name", onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        const name = field(formOf(e), "name").value.trim();
        if (!name) return;
        session.named = true;
        $input("#name").value = name;
        // The server takes a name with the hello: say it again, then join.
        link.reconnect();
        show(code);
      } },
        el("label", {}, "You are invited to a game. Your name", el("input", { name: "name", maxlength: 24, autocomplete: "nickname", required: true })),
        el("button", { class: "primary", type: "submit", text: "Join the game" }),
        el("p", { class: "error form-error", role: "alert", id: "join-name-error", text: session.nameRefusal || "" })),
      // The room's chat is open before the seat is taken: talk with the host first.
      chatPanel(code));
    return;
  }
  link.send({ t: "room.unwatch", code });
  main.replaceChildren(el("h1", { text: `Room ${code}` }), el("p", { id: "room-status", text: "Joining…" }),
    el("div", { id: "hosted" }), el("p", { class: "error", role: "alert", id: "room-error" }));
  try {
    const answer = await link.request({ t: "room.join", code });
    if (answer.t === "room") {
      if (answer.room.host && session.me && answer.room.host.id === session.me.id && answer.room.status === "waiting") {
        $("#room-status").textContent = "Your room is waiting for your opponent.";
        drawHosted($("#hosted"), answer.room);
      } else if (answer.game_id || answer.room.game_id) {
        go(`/g/${encodeURIComponent(answer.game_id || answer.room.game_id)}`);
      }
    } else if (answer.t === "game.snapshot") {
      go(`/g/${encodeURIComponent(answer.game_id)}?code=${encodeURIComponent(code)}`);
    }
  } catch (e) {
    if (stale()) return;
    $("#room-status").textContent = "";
    $("#room-error").textContent = errorText(e);
  }
}
