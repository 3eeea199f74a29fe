// @ts-check
// The link: one websocket to the server, `hello`/`welcome`, requests by rid, pushed
// messages to the page, and reconnection with backoff (protocol/docs/PROTOCOL.md). What the
// page does with a message is its own business: the link calls the hooks it is given.

/**
 * A message from the server (generated from the Rust wire types: ../wire.d.ts).
 * @typedef {import("../wire").ServerMessage} Incoming
 */

/** The server's `welcome`. @typedef {Extract<Incoming, {t: "welcome"}>} Welcome */

/** A message to the server. @typedef {import("./messages").Outgoing} Outgoing */
/** A request's answer. @typedef {import("./messages").Answer} Answer */
/** A refusal. @typedef {import("./messages").Refusal} Refusal */

/**
 * What the link asks of the page.
 * @typedef {object} LinkHooks
 * @property {(msg: Incoming) => void} message a pushed message (or a push that also answers)
 * @property {(welcome: Welcome) => void} welcome the server took our hello
 * @property {(up: boolean) => void} status the link is up (welcomed) or down
 * @property {() => void} dropped the socket closed (before the status says so)
 * @property {() => {token?: string, name?: string, device: string}} hello what the next hello says
 * @property {(token: string) => void} unknownToken the server does not know the token we sent
 * @property {(message: string) => void} nameRefused the name we sent is refused
 * @property {(msg: Refusal) => void} helloFailed any other refusal of the hello
 * @property {(reason: string) => void} [ended] the server closed the link for good (a ban,
 *   close code 4403): the link does not reconnect
 */

/** The close code of a banned player's connections (the server's `BANNED_CLOSE`). */
export const BANNED_CLOSE = 4403;

/**
 * A request waiting for its answer (or for a socket to go out on).
 * @typedef {{msg: Outgoing | Record<string, unknown>, resolve?: (answer: Answer) => void, reject?: (error: Refusal) => void}} Out
 */

export class Link {
  /** @param {LinkHooks} hooks */
  constructor(hooks) {
    this.hooks = hooks;
    this.rid = 0;
    /** @type {Map<string | number, {resolve: (a: Answer) => void, reject: (e: Refusal) => void}>} */
    this.pending = new Map();
    this.offset = 0; // server clock minus ours
    this.backoff = 500;
    /** @type {WebSocket | null} */
    this.ws = null;
    this.ready = false;
    /** The token the last hello carried. @type {string | undefined} */
    this.sentToken = undefined;
    /** The server refused our hello because this player is banned: no reconnection. */
    this.banned = false;
    /** The last hello left the name out after the server refused it. */
    this.bareHello = false;
    // Requests and messages made while there is no open, welcomed socket: sent in order
    // after the next `welcome` (never into a closing socket, which the browser refuses).
    /** @type {Out[]} */
    this.waiting = [];
  }

  /** Whether a frame may go out now: welcomed, on a socket that is still open. */
  get open() {
    return this.ready && !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Says hello again (a new name, another player's token): closes this socket, and the
   * reconnection says it. Until its `welcome`, requests wait.
   */
  reconnect() {
    this.ready = false;
    if (this.ws) this.ws.close();
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    this.ready = false;
    ws.onopen = () => this.hello();
    ws.onmessage = (ev) => this.receive(JSON.parse(ev.data));
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ready = false;
      this.hooks.dropped();
      for (const { reject } of this.pending.values()) reject({ code: "disconnected", message: "the connection dropped" });
      this.pending.clear();
      this.hooks.status(false);
      // Banned: every hello would be refused; reconnecting would only knock on the door.
      if (ev.code === BANNED_CLOSE || this.banned) {
        this.hooks.ended?.(ev.reason || "banned");
        return;
      }
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 8000);
    };
  }

  /**
   * Says hello; with `bare`, without the name field's name (the server refused it).
   * @param {boolean} [bare]
   */
  hello(bare = false) {
    const said = this.hooks.hello();
    /** @type {Record<string, unknown>} */
    const msg = { t: "hello", protocol: 1, rid: "hello", device: said.device };
    if (said.token) msg.token = said.token;
    this.sentToken = said.token;
    if (said.name && !bare) msg.name = said.name;
    this.ws?.send(JSON.stringify(msg));
  }

  /** @param {Answer} msg */
  receive(msg) {
    if (msg.rid === "hello") {
      if (msg.t === "welcome") {
        this.ready = true;
        this.backoff = 500;
        this.offset = msg.server_time - Date.now();
        this.hooks.welcome(/** @type {Welcome} */ (/** @type {unknown} */ (msg)));
        this.bareHello = false;
        this.hooks.status(true);
        this.flush();
      } else if (msg.code === "unauthorized" && String(msg.message || "").startsWith("this account is banned")) {
        // Banned: going on as a new guest would only get round the ban. Say it, and stop
        // knocking (the server closes this socket; no reconnection follows).
        this.banned = true;
        this.hooks.helloFailed(/** @type {Refusal} */ (/** @type {unknown} */ (msg)));
      } else if (msg.code === "unauthorized" && this.sentToken) {
        // This server does not know our token (a server that restarted without storage, a
        // device signed out elsewhere): say so, keep the token (a server of its deployment
        // that knows it gives it back), and go on as a new guest who is asked for a name.
        this.hooks.unknownToken(this.sentToken);
        this.hello(true);
      } else if (msg.code === "conflict" && !this.bareHello) {
        // The name is refused (a claimed account's): say why where the name is typed, and
        // say hello again without it (once: no loop of refusals).
        this.bareHello = true;
        this.hooks.nameRefused(msg.message);
        this.hello(true);
      } else {
        this.hooks.helloFailed(/** @type {Refusal} */ (/** @type {unknown} */ (msg)));
      }
      return;
    }
    if (msg.t === "pong" && msg.server_time) this.offset = msg.server_time - Date.now();
    const waiter = msg.rid !== undefined ? this.pending.get(msg.rid) : undefined;
    if (msg.rid !== undefined && waiter) {
      this.pending.delete(msg.rid);
      // Pushed messages that also answer (a snapshot) go to the handler too.
      if (msg.t !== "error" && msg.t !== "ok") this.hooks.message(msg);
      if (msg.t === "error") waiter.reject(msg);
      else waiter.resolve(msg);
      return;
    }
    this.hooks.message(msg);
  }

  /**
   * Sends a request and answers its reply. Made while disconnected, it waits for the
   * reconnection; one in flight when the connection drops fails (`disconnected`: whether
   * the server acted on it is unknown).
   * @param {Outgoing} msg
   * @returns {Promise<Answer>}
   */
  request(msg) {
    return new Promise((resolve, reject) => {
      const out = { msg, resolve, reject };
      if (this.open) this.transmit(out);
      else this.waiting.push(out);
    });
  }

  /** @param {Out} out */
  transmit({ msg, resolve, reject }) {
    const rid = ++this.rid;
    if (resolve && reject) this.pending.set(rid, { resolve, reject });
    this.ws?.send(JSON.stringify({ ...msg, rid }));
  }

  /**
   * Sends a message that wants no answer; while disconnected it waits, as requests do.
   * @param {Outgoing} msg
   */
  send(msg) {
    if (this.open) this.ws?.send(JSON.stringify(msg));
    // The end of a subscription means nothing to the next connection, which has none.
    else if (!String(msg.t).endsWith(".unwatch")) this.waiting.push({ msg });
  }

  /** After a `welcome`: what waited goes out, in the order it was asked. */
  flush() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const out of waiting) {
      if (!this.open) { this.waiting.push(out); continue; }
      if (out.resolve) this.transmit(out);
      else this.ws?.send(JSON.stringify(out.msg));
    }
  }

  /** The server's clock now, as far as the last welcome or pong tells. */
  serverNow() {
    return Date.now() + this.offset;
  }
}

/**
 * A refusal as the pages say it: `error <code>: <message>`.
 * @param {{code?: string, message?: string}} e
 */
export const errorText = (e) => `error ${e.code}: ${e.message}`;
