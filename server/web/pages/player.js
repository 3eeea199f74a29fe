// @ts-check
// A player's page (`/p/<id>`): name, rating in every kind (provisional ones marked), the
// recent finished games, and whether the account is claimed. Read over HTTP
// (`GET /api/players/<id>`, see protocol/docs/PROTOCOL.md); everything shown is set as text,
// never as markup (names are chosen by players).

import { $, el } from "../lib/dom.js";
import { KINDS, TITLES, ratingChange } from "../lib/words.js";
import { playerLink } from "../lib/views.js";
import { newPage, getJson, failed } from "../lib/api.js";
import { reportButton } from "../lib/report.js";

/** @type {Record<string, string>} */
const REASONS = {
  resign: "by resignation", timeout: "on time", agreement: "by agreement", repetition: "by repetition",
  abandoned: "as abandoned", no_capture_limit: "by the no-capture limit", no_moves: "with no moves left",
  one_group: "by joining one group", passes: "by passes", palace: "in the palace", corners: "by the corners",
  connection: "by connection",
};

/**
 * How a finished game ended for `side`: "won by resignation", "drawn by agreement", "aborted".
 * @param {{reason?: string | null, winner?: string | null}} status
 * @param {string | null} side
 */
function outcome(status, side) {
  const reason = status && status.reason;
  if (reason === "aborted") return "aborted";
  const how = (reason && REASONS[reason]) || (reason ? `by ${String(reason).replace(/_/g, " ")}` : "");
  const word = !status.winner ? "drawn" : status.winner === side ? "won" : "lost";
  return how ? `${word} ${how}` : word;
}

/**
 * One line of a player's recent games, seen from that player.
 * @param {any} g
 * @param {string} playerId
 */
function recentGame(g, playerId) {
  /** @type {[string, any][]} */
  const seats = Object.entries(g.players || {});
  const mine = seats.find(([, p]) => p.id === playerId);
  const side = mine ? mine[0] : null;
  const opponent = seats.find(([s]) => s !== side);
  let rating = "casual";
  if (g.rated) {
    const before = mine && mine[1].rating;
    const after = g.ratings_after && side ? g.ratings_after[side] : undefined;
    rating = typeof before === "number" && typeof after === "number" ? `rated ${ratingChange(before, after)}` : "rated";
  }
  /** @type {(HTMLElement | string)[]} */
  const links = [el("a", { href: `/g/${encodeURIComponent(g.id)}`, "data-nav": true, class: "game-link", text: "replay" })];
  // A private game's record needs the reader's token: its game page downloads it.
  if (g.visibility !== "private") {
    links.push(" · ", el("a", { href: `/api/games/${encodeURIComponent(g.id)}/record`, class: "record-link", download: `${g.id}.txt`, text: "record" }));
  }
  return el("li", { "data-game": g.id, "data-rated": g.rated ? "yes" : "no" },
    el("span", { class: "kind", text: `${TITLES[g.kind] || g.kind}${side ? ` as ${side}` : ""} vs ` }),
    opponent ? playerLink(opponent[1], opponent[1].bot ? " (computer)" : "") : el("span", { text: "?" }),
    el("span", { class: "result", text: ` · ${outcome(g.status || {}, side)}` }),
    el("span", { class: "rated", text: ` · ${rating}` }),
    el("span", { class: "muted", text: ` · ${g.moves} move${g.moves === 1 ? "" : "s"} · ` }),
    ...links);
}

/**
 * The page of player `id` into `main`: name, rating in every kind (provisional ones
 * marked), the recent finished games. `token` (the reader's) lets the player see their own
 * private games too; `myId` (the reader's player id) tells whether this page is their own.
 * @param {string} id
 * @param {string | undefined} token
 * @param {string | undefined} myId
 */
export async function show(id, token, myId) {
  const fresh = newPage();
  const main = $("#main");
  main.replaceChildren(el("h1", { id: "player-name", text: "Loading the player…" }));
  const answer = await getJson(`/api/players/${encodeURIComponent(id)}`, token);
  if (!fresh()) return;
  const { status, body } = answer;
  if (status !== 200 || !body) {
    document.title = "No such player · Stoa";
    failed(main, status === 404 ? "No such player" : "The player cannot be shown", status, body);
    return;
  }
  document.title = `${body.name} · Stoa`;
  /** @type {Record<string, {rating: number, deviation: number, games: number, provisional: boolean}>} */
  const ratings = body.ratings || {};
  const rows = KINDS.filter((k) => ratings[k]).map((k) => {
    const r = ratings[k];
    return el("tr", { "data-kind": k, "data-provisional": r.provisional ? "yes" : "no" },
      el("th", { scope: "row" }, el("a", { href: `/leaderboard/${k}`, "data-nav": true, text: TITLES[k] })),
      el("td", { class: "rating", title: r.provisional ? "provisional: too few rated games to be sure" : null, text: `${r.rating}${r.provisional ? "?" : ""}` }),
      el("td", { class: "deviation", text: `±${r.deviation}` }),
      el("td", { class: "games", text: String(r.games) }));
  });
  /** @type {any[]} */
  const recent = body.recent || [];
  main.replaceChildren(
    el("h1", { id: "player-name", text: `${body.name}${body.bot ? " (computer)" : ""}` }),
    el("p", { class: "muted" }, `player ${body.id}`, ...(myId && body.id !== myId && !body.bot ? [" ", reportButton(body, {}, "player-report")] : [])),
    ...(body.bot ? [] : [claimLine(body, myId)]),
    el("section", { class: "panel" },
      el("h2", { text: "Ratings" }),
      el("table", { class: "table", id: "ratings" },
        el("thead", {}, el("tr", {}, ["Game", "Rating", "Deviation", "Rated games"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, rows)),
      el("p", { class: "muted", text: "A ? marks a provisional rating: it counts on the leaderboard once its deviation is under 110 (about a dozen rated games)." })),
    el("section", { class: "panel" },
      el("h2", { text: "Recent games" }),
      el("ul", { class: "list", id: "recent" },
        recent.length ? recent.map((g) => recentGame(g, body.id)) : [el("li", { class: "muted", text: "No finished games yet." })])));
}

/**
 * Whether the player's account is claimed (a name and password sign it in anywhere); on
 * one's own guest page, the way to claim it.
 * @param {{id: string, claimed?: boolean}} body
 * @param {string | undefined} myId
 */
function claimLine(body, myId) {
  if (body.claimed) return el("p", { id: "player-account", "data-claimed": "yes", text: "Claimed account" });
  if (body.id !== myId) return el("p", { id: "player-account", class: "muted", "data-claimed": "no", text: "Guest: not claimed yet" });
  const claim = el("button", { type: "button", id: "player-claim", text: "Claim your account" });
  claim.addEventListener("click", () => $("#claim-button").click());
  return el("p", { id: "player-account", class: "warn", "data-claimed": "no" },
    "Guest: not claimed yet — claim it so it cannot be lost. ", claim);
}

