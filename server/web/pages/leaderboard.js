// @ts-check
// The leaderboards (`/leaderboard/<kind>`): the established players of each kind, read over
// HTTP (`GET /api/leaderboard/<kind>`). Names are set as text, never as markup.

import { $, el } from "../lib/dom.js";
import { KINDS, TITLES } from "../lib/words.js";
import { playerLink } from "../lib/views.js";
import { newPage, getJson, failed } from "../lib/api.js";

/**
 * The leaderboard of `kind`, with a tab for every kind.
 * @param {string} kind
 */
export async function show(kind) {
  const fresh = newPage();
  const main = $("#main");
  const title = TITLES[kind] || kind;
  document.title = `Leaderboard · ${title} · Stoa`;
  const tabs = el("nav", { class: "tabs", id: "kinds", "aria-label": "game kinds" },
    KINDS.map((k) => el("a", { href: `/leaderboard/${k}`, "data-nav": true, "data-kind": k, "aria-current": k === kind ? "page" : null, text: TITLES[k] })));
  main.replaceChildren(el("h1", { id: "leaderboard-title", text: `Leaderboard · ${title}` }), tabs, el("p", { class: "muted", text: "Loading…" }));
  const answer = await getJson(`/api/leaderboard/${encodeURIComponent(kind)}`);
  if (!fresh()) return;
  const { status, body } = answer;
  if (status !== 200 || !body) {
    failed(main, status === 404 ? "No such game" : "The leaderboard cannot be shown", status, body);
    main.insertBefore(tabs, main.children[1]);
    return;
  }
  /** @type {{id: string, name: string, rank: number, rating: number, games: number}[]} */
  const players = body.players || [];
  const table = players.length
    ? el("table", { class: "table", id: "leaderboard" },
      el("thead", {}, el("tr", {}, ["#", "Player", "Rating", "Rated games"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, players.map((p) => el("tr", { "data-player": p.id },
        el("td", { class: "rank", text: String(p.rank) }),
        el("td", { class: "name" }, playerLink(p)),
        el("td", { class: "rating", text: String(p.rating) }),
        el("td", { class: "games", text: String(p.games) })))))
    : el("p", { id: "leaderboard-empty", class: "muted", text: `No established players in ${title} yet.` });
  main.replaceChildren(main.firstChild, tabs,
    el("p", { class: "muted", text: "The top 100 players whose rating is established (not provisional: a deviation under 110, about a dozen rated games)." }),
    table);
}
