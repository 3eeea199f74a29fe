// @ts-check
// A game's chat: the players' chat and the spectators' chat (protocol/docs/PROTOCOL.md,
// "Chat"). Every name and text goes into the page as text (`textContent`), never as markup.

import { $, $input, el, formOf } from "../lib/dom.js";
import { errorText } from "../lib/link.js";
import { link, session } from "../lib/session.js";
import { reportButton } from "../lib/report.js";

/** @typedef {import("../lib/link.js").Incoming} Incoming */
/** @typedef {{channel: string, id: string, name: string, text: string, ts?: number}} ChatLine */

/** How many lines a page keeps. */
const KEEP = 200;

/** The chat of one game page: its lines, whether spectators may talk, whom we muted. */
export class Chat {
  /**
   * @param {string} gameId
   * @param {() => string | null} mySide the side we play, null for a spectator
   * @param {() => boolean} ended whether the game has ended
   */
  constructor(gameId, mySide, ended) {
    this.gameId = gameId;
    this.mySide = mySide;
    this.ended = ended;
    /** @type {ChatLine[]} */
    this.lines = [];
    this.spectators = true;
    /** @type {string[]} */
    this.muted = [];
  }

  /** The chat's panel, drawn empty; `redraw` fills it in. */
  panel() {
    return el("section", { class: "panel chat", id: "chat", "aria-label": "chat" },
      el("h2", { id: "chat-title", text: "Chat" }),
      el("ol", { class: "chat-lines", id: "chat-players", "data-channel": "players", "aria-live": "polite" }),
      el("h3", { id: "chat-spectators-title", text: "Spectators' chat" }),
      el("ol", { class: "chat-lines", id: "chat-spectators", "data-channel": "spectators", "aria-live": "polite" }),
      el("p", { class: "muted", id: "chat-note" }),
      el("form", { class: "chat-form", id: "chat-form", onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        const input = formOf(e).text;
        const text = input.value.trim();
        if (text) this.say(text, input);
      } },
        el("input", { name: "text", id: "chat-input", maxlength: 300, autocomplete: "off", placeholder: "Say something", "aria-label": "chat message" }),
        el("button", { type: "submit", text: "Send" })),
      el("label", { class: "chat-toggle", id: "chat-toggle" },
        el("input", { type: "checkbox", id: "chat-spectators-on", checked: true, onchange: (/** @type {Event} */ e) => {
          const on = /** @type {HTMLInputElement} */ (e.target).checked;
          link.request({ t: "chat.spectators", game_id: this.gameId, on })
            .then(() => chatError("")).catch((err) => chatError(errorText(err)));
        } }),
        " Spectators may chat"),
      el("p", { class: "error", id: "chat-error", role: "alert" }));
  }

  /**
   * @param {string} text
   * @param {HTMLInputElement} input
   */
  say(text, input) {
    link.request({ t: "chat.say", game_id: this.gameId, text }).then(() => { input.value = ""; chatError(""); })
      .catch((e) => chatError(errorText(e)));
  }

  /**
   * `chat`, `chat.history` and `chat.spectators` of this game.
   * @param {Incoming} msg
   */
  onMessage(msg) {
    if (msg.t === "chat") {
      this.lines.push({ channel: msg.channel, id: msg.id, name: msg.name, text: msg.text, ts: msg.ts });
      if (this.lines.length > KEEP) this.lines.splice(0, this.lines.length - KEEP);
    } else if (msg.t === "chat.history") {
      this.lines = msg.lines.slice(-KEEP);
      this.spectators = msg.spectators;
      this.muted = msg.muted;
    } else if (msg.t === "chat.spectators") {
      this.spectators = msg.on;
    }
    this.redraw();
  }

  /**
   * @param {string} id
   * @param {boolean} muted
   */
  mute(id, muted) {
    link.request({ t: "chat.mute", game_id: this.gameId, player_id: id, muted })
      .then(() => chatError("")).catch((e) => chatError(errorText(e)));
  }

  /** Draws the chat: the lines each reader may see, the notes, the toggle. */
  redraw() {
    if (!$("#chat")) return;
    const me = this.mySide();
    const ended = this.ended();
    /** @param {ChatLine} l */
    const line = (l) => el("li", { class: "chat-line" },
      el("span", { class: "chat-name", text: `${l.name}:` }), " ",
      el("span", { class: "chat-text", text: l.text }),
      session.me && l.id !== session.me.id
        ? [el("button", { type: "button", class: "chat-mute", "data-mute": l.id, title: `stop seeing ${l.name}'s lines`, onclick: () => this.mute(l.id, true), text: "mute" }),
          reportButton(l, { game_id: this.gameId, ts: l.ts }, "chat-report")]
        : null);
    for (const channel of ["players", "spectators"]) {
      const list = $(`#chat-${channel}`);
      list.replaceChildren(...this.lines.filter((l) => l.channel === channel).map(line));
      list.scrollTop = list.scrollHeight;
    }
    // A player sees the players' chat (and the spectators' once the game is over); a
    // spectator sees only the spectators'.
    $("#chat-title").textContent = me ? "Players' chat" : "Spectators' chat";
    $("#chat-players").hidden = !me;
    const showSpectators = !me || ended;
    $("#chat-spectators").hidden = !showSpectators;
    $("#chat-spectators-title").hidden = !me || !ended;
    const silenced = !me && !this.spectators;
    $input("#chat-input").disabled = silenced;
    const notes = [];
    if (!this.spectators) notes.push(me ? "Spectators cannot chat in this game." : "The players turned the spectators' chat off.");
    const muted = this.muted;
    if (muted.length) notes.push(`You muted ${muted.length} ${muted.length === 1 ? "person" : "people"} here.`);
    $("#chat-note").replaceChildren(notes.join(" "), ...(muted.length
      ? [" ", el("button", { type: "button", id: "chat-unmute", onclick: () => muted.forEach((id) => this.mute(id, false)), text: "unmute all" })] : []));
    $("#chat-toggle").hidden = !me;
    $input("#chat-spectators-on").checked = this.spectators;
  }
}

/** @param {string} text */
function chatError(text) {
  const p = $("#chat-error");
  if (p) p.textContent = text;
}
