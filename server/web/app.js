// @ts-check
// The Stoa web client: lobby, rooms, games, arenas, players' pages and leaderboards over the
// same websocket protocol as the terminal client (protocol/docs/PROTOCOL.md). Native ES
// modules, no build step: the server embeds these files. This root connects the link, reads
// the path and hands the page to one module under pages/, each with its controller, its
// views and its socket handlers; lib/ holds what they share.

import { $, $input, sentence } from "./lib/dom.js";
import { link, session, notice, setRouter, go } from "./lib/session.js";
import { deployment, setDeployment, loadIdentity, saveIdentity } from "./lib/identity.js";
import { KINDS } from "./lib/words.js";
import { defaults, kindInfo } from "./lib/kinds.js";
import { leavePage } from "./lib/api.js";
import { showModeration } from "./lib/report.js";
import { deviceLabel } from "./panels/devices.js";
import { accountStatus } from "./panels/account.js";
import { setupIdentity, lostIdentity, nameRefused, welcomed, isSigningOut } from "./panels/identity.js";
import * as lobby from "./pages/lobby.js";
import * as room from "./pages/room.js";
import * as game from "./pages/game.js";
import * as arena from "./pages/arena.js";
import * as player from "./pages/player.js";
import * as leaderboard from "./pages/leaderboard.js";
import * as learn from "./pages/learn.js";
import * as analysis from "./pages/analysis.js";

/** @typedef {import("./lib/link.js").Incoming} Incoming */

/** The notice shows the server's shutdown message. */
let shutdownNotice = false;

/** Draws the page the address names. */
function route() {
  notice("");
  leaveCurrent();
  const p = location.pathname;
  const code = new URLSearchParams(location.search).get("code");
  let m;
  if ((m = p.match(/^\/g\/([^/]+)$/))) {
    session.view = "game";
    game.show(decodeURIComponent(m[1]), code);
  } else if ((m = p.match(/^\/r\/([^/]+)$/))) {
    session.view = "room";
    room.show(decodeURIComponent(m[1]));
  } else if ((m = p.match(/^\/p\/([^/]+)$/))) {
    session.view = "player";
    player.show(decodeURIComponent(m[1]), loadIdentity().token, loadIdentity().id);
  } else if ((m = p.match(/^\/t\/([^/]+)$/))) {
    session.view = "arena";
    arena.show(decodeURIComponent(m[1]), code);
  } else if ((m = p.match(/^\/learn(?:\/([^/]+))?$/))) {
    session.view = "learn";
    const step = new URLSearchParams(location.search).get("step");
    learn.show(m[1] ? decodeURIComponent(m[1]) : null, step ? Number(step) : null);
  } else if (p === "/analysis") {
    session.view = "analysis";
    analysis.show(new URLSearchParams(location.search));
  } else if ((m = p.match(/^\/leaderboard(?:\/([^/]+))?$/))) {
    session.view = "leaderboard";
    leaderboard.show(m[1] ? decodeURIComponent(m[1]) : KINDS[0]);
  } else {
    session.view = "lobby";
    lobby.show();
  }
}

/** Ends the subscriptions of the view we leave. */
function leaveCurrent() {
  leavePage();
  arena.leave();
  learn.leave();
  analysis.leave();
  if (session.view === "lobby") lobby.leave();
  game.leave();
  room.closeChat();
  session.view = null;
}

/** After (re)connecting: ask again for what the current view shows. */
function resubscribe() {
  if (session.view === "lobby") lobby.watch();
  if (session.view === "arena") arena.watch();
  if (session.view === "game") game.watch(true);
  // A newcomer's name form stays as typed in (a redraw would lose a half-typed line):
  // only its room chat is opened again.
  if (session.view === "room" && !($("#join-name") && room.chatShown())) route();
  else if (room.chatShown()) room.openChat();
}

/**
 * A message the server pushed: to the page it concerns.
 * @param {Incoming} msg
 */
function onMessage(msg) {
  switch (msg.t) {
    case "lobby":
    case "lobby.diff":
      if (session.view === "lobby") lobby.onMessage(msg);
      return;
    case "queue.status":
      lobby.onMessage(msg);
      return;
    case "arena":
    case "arena.diff":
      if (session.view === "arena") arena.onMessage(msg);
      return;
    case "game.started":
      session.started = msg.game_id;
      if (!session.myGames.includes(msg.game_id)) session.myGames = [...session.myGames, msg.game_id];
      lobby.gameStarted();
      go(`/g/${encodeURIComponent(msg.game_id)}`);
      return;
    case "game.snapshot":
    case "game.diff":
    case "game.crowd":
    case "chat":
    case "chat.history":
    case "chat.spectators":
      game.onMessage(msg);
      return;
    case "room.chat":
      room.onMessage(msg);
      return;
    case "moderation":
      showModeration(msg);
      return;
    case "shutdown":
      // The message is a whole sentence already ("the server is shutting down; …").
      notice(sentence(msg.message || "the server is shutting down"));
      shutdownNotice = true;
      game.pauseClocks("shutdown");
      return;
    case "error":
      // The server's goodbye to a revoked device (this browser signed out, or was signed
      // out from another device): the next hello says what follows in words.
      if (msg.code === "unauthorized" && (isSigningOut() || msg.rid === undefined)) return;
      notice(`error ${msg.code}: ${msg.message}`);
      return;
    default:
  }
}

function start() {
  const nameInput = $input("#name");
  nameInput.value = loadIdentity().name || "";
  session.newcomer = !loadIdentity().token;
  nameInput.addEventListener("change", () => {
    // The server takes a new name on the next hello: reconnect to say it.
    accountStatus("");
    link.reconnect();
  });
  link.hooks = {
    message: onMessage,
    hello: () => ({ token: loadIdentity().token, name: nameInput.value.trim(), device: deviceLabel() }),
    welcome: (welcome) => {
      // Back: what the server now sends is the truth again.
      game.linkBack();
      if (shutdownNotice) { shutdownNotice = false; notice(""); }
      if (welcome.deployment) setDeployment(welcome.deployment);
      saveIdentity({ token: welcome.token, id: welcome.player.id, name: welcome.player.name }, deployment());
      session.me = welcome.player;
      session.myGames = welcome.games || [];
      const mine = /** @type {HTMLAnchorElement} */ ($("#my-page"));
      if (mine) { mine.href = `/p/${encodeURIComponent(welcome.player.id)}`; mine.hidden = false; }
      nameInput.value = welcome.player.name;
      welcomed(welcome);
      resubscribe();
    },
    status: (up) => {
      const s = $("#link");
      s.textContent = up ? `connected as ${session.me ? session.me.name : "…"}` : "connection lost — reconnecting…";
      s.classList.toggle("offline", !up);
    },
    dropped: () => game.pauseClocks("offline"),
    unknownToken: lostIdentity,
    nameRefused,
    helloFailed: (msg) => notice(`error ${msg.code}: ${msg.message}`),
    ended: () => {
      // The ban's notice (a dialog) said why; the status line says the page stays offline.
      const s = $("#link");
      s.textContent = "disconnected: this player is banned";
      s.classList.add("offline");
    },
  };
  setupIdentity();
  setRouter(route);
  document.addEventListener("click", (e) => {
    const a = /** @type {HTMLAnchorElement | null} */ (/** @type {Element} */ (e.target).closest("a[data-nav]"));
    if (a && a.origin === location.origin && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      go(a.pathname + a.search);
    }
  });
  window.addEventListener("popstate", route);
  setInterval(game.tick, 100);
  setInterval(() => {
    if (session.view === "arena") arena.tick();
    if (session.view === "lobby") lobby.tick();
  }, 500);
  setInterval(() => { if (session.view === "game") game.checkStorage(); }, 2000);
  // Default options of each kind, so lobby lines name only what a game changes.
  for (const k of KINDS) {
    kindInfo(k, {}).then((info) => {
      defaults[k] = info.options;
      if (session.view === "lobby") lobby.redraw();
    }).catch(() => {});
  }
  link.connect();
  route();
}

start();
