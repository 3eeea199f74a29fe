// Players' pages (`/p/<id>`) and the leaderboards (`/leaderboard/<kind>`) of the web client.
// Both are read over HTTP (`GET /api/players/<id>`, `GET /api/leaderboard/<kind>`, see
// protocol/docs/PROTOCOL.md): they are looked up, not followed live, so they need no
// subscription on the websocket. Everything shown is set as text, never as markup (names
// are chosen by players).

/** The game kinds, in the order the server lists them. */
export const KINDS = ["unane", "staku", "akron", "akunur"];
/** Each kind's name for people. */
export const TITLES = { unane: "Ūnane", staku: "Staku", akron: "Akron", akunur: "Akunur" };

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
};

/** A player's name as a link to their page (the text alone when the id is unknown). */
export function playerLink(p, extra = "") {
  const name = `${(p && p.name) || "?"}${extra}`;
  if (!p || !p.id) return el("span", { text: name });
  return el("a", { href: `/p/${encodeURIComponent(p.id)}`, "data-nav": true, class: "player-link", "data-player": p.id, text: name });
}

/** A rating change in words: `1500 → 1523 (+23)`. */
export function ratingChange(before, after) {
  const b = Math.round(before);
  const a = Math.round(after);
  const d = a - b;
  return `${b} → ${a} (${d >= 0 ? "+" : ""}${d})`;
}

/** What the last fetch for `main` was; an answer for a page left meanwhile is dropped. */
let current = 0;

/** The client leaves the page shown (for any view): an answer still on its way is dropped. */
export function leavePage() {
  current += 1;
}

async function getJson(path, token) {
  const r = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {}, cache: "no-store" });
  let body = null;
  try { body = await r.json(); } catch { /* said below */ }
  return { status: r.status, body };
}

function failed(main, title, status, body) {
  const text = (body && body.message) || (status === 404 ? "Nothing is here." : `The server answered ${status}; try again in a moment.`);
  main.replaceChildren(el("h1", { text: title }), el("p", { class: "error", id: "page-error", role: "alert", text: sentence(text) }),
    el("p", {}, el("a", { href: "/", "data-nav": true, text: "Go to the lobby" })));
}

function sentence(text) {
  const s = String(text);
  const t = s ? s[0].toUpperCase() + s.slice(1) : s;
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

const REASONS = {
  resign: "by resignation", timeout: "on time", agreement: "by agreement", repetition: "by repetition",
  abandoned: "as abandoned", no_capture_limit: "by the no-capture limit", no_moves: "with no moves left",
  one_group: "by joining one group", passes: "by passes", palace: "in the palace", corners: "by the corners",
  connection: "by connection",
};

/** How a finished game ended for `side`: "won by resignation", "drawn by agreement", "aborted". */
function outcome(status, side) {
  const reason = status && status.reason;
  if (reason === "aborted") return "aborted";
  const how = REASONS[reason] || (reason ? `by ${String(reason).replace(/_/g, " ")}` : "");
  const word = !status.winner ? "drawn" : status.winner === side ? "won" : "lost";
  return how ? `${word} ${how}` : word;
}

/** One line of a player's recent games, seen from that player. */
function recentGame(g, playerId) {
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
 */
export async function showPlayer(main, id, token, myId) {
  const mine = ++current;
  main.replaceChildren(el("h1", { id: "player-name", text: "Loading the player…" }));
  let answer;
  try {
    answer = await getJson(`/api/players/${encodeURIComponent(id)}`, token);
  } catch (e) {
    answer = { status: 0, body: { message: "the server cannot be reached; reload the page to try again" } };
  }
  if (mine !== current) return;
  const { status, body } = answer;
  if (status !== 200 || !body) {
    document.title = "No such player · Stoa";
    failed(main, status === 404 ? "No such player" : "The player cannot be shown", status, body);
    return;
  }
  document.title = `${body.name} · Stoa`;
  const rows = KINDS.filter((k) => body.ratings && body.ratings[k]).map((k) => {
    const r = body.ratings[k];
    return el("tr", { "data-kind": k, "data-provisional": r.provisional ? "yes" : "no" },
      el("th", { scope: "row" }, el("a", { href: `/leaderboard/${k}`, "data-nav": true, text: TITLES[k] })),
      el("td", { class: "rating", title: r.provisional ? "provisional: too few rated games to be sure" : null, text: `${r.rating}${r.provisional ? "?" : ""}` }),
      el("td", { class: "deviation", text: `±${r.deviation}` }),
      el("td", { class: "games", text: String(r.games) }));
  });
  const recent = body.recent || [];
  main.replaceChildren(
    el("h1", { id: "player-name", text: `${body.name}${body.bot ? " (computer)" : ""}` }),
    el("p", { class: "muted", text: `player ${body.id}` }),
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
 */
function claimLine(body, myId) {
  if (body.claimed) return el("p", { id: "player-account", "data-claimed": "yes", text: "Claimed account" });
  if (body.id !== myId) return el("p", { id: "player-account", class: "muted", "data-claimed": "no", text: "Guest: not claimed yet" });
  const claim = el("button", { type: "button", id: "player-claim", text: "Claim your account" });
  claim.addEventListener("click", () => document.querySelector("#claim-button").click());
  return el("p", { id: "player-account", class: "warn", "data-claimed": "no" },
    "Guest: not claimed yet — claim it so it cannot be lost. ", claim);
}

/** The leaderboard of `kind` into `main`, with a tab for every kind. */
export async function showLeaderboard(main, kind) {
  const mine = ++current;
  const title = TITLES[kind] || kind;
  document.title = `Leaderboard · ${title} · Stoa`;
  const tabs = el("nav", { class: "tabs", id: "kinds", "aria-label": "game kinds" },
    KINDS.map((k) => el("a", { href: `/leaderboard/${k}`, "data-nav": true, "data-kind": k, "aria-current": k === kind ? "page" : null, text: TITLES[k] })));
  main.replaceChildren(el("h1", { id: "leaderboard-title", text: `Leaderboard · ${title}` }), tabs, el("p", { class: "muted", text: "Loading…" }));
  let answer;
  try {
    answer = await getJson(`/api/leaderboard/${encodeURIComponent(kind)}`);
  } catch (e) {
    answer = { status: 0, body: { message: "the server cannot be reached; reload the page to try again" } };
  }
  if (mine !== current) return;
  const { status, body } = answer;
  if (status !== 200 || !body) {
    failed(main, status === 404 ? "No such game" : "The leaderboard cannot be shown", status, body);
    main.insertBefore(tabs, main.children[1]);
    return;
  }
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
