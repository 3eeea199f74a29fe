// @ts-check
// Identity: the same token model as the terminal client, kept in this browser's storage
// under the deployment's id (`welcome.deployment`; the page names it in its
// `<meta name="stoa-deployment">`, since the token goes in the `hello` before any `welcome`):
// every node of a cluster, and the balancer in front of them, is one deployment and so one
// identity. The entry of earlier versions, per origin under `stoa.identity`, is still read
// when the deployment has none, and moves under the deployment once the server accepts it.
//
// Beside it, the identities this browser was before (`previous`), kept so that linking,
// signing in or a server that forgot us never loses a player for good.

/**
 * A player this browser is (or was) on a deployment.
 * @typedef {{token?: string, id?: string, name?: string}} Identity
 */

/**
 * An identity kept among the earlier ones, with why and when.
 * @typedef {Identity & {why?: string, kept_ms?: number}} Previous
 */

export const IDENTITY_KEY = "stoa.identity";

// The page's deployment, then each `welcome`'s: a server that restarted in memory is a new
// deployment, and the identity it gave is kept under its id (not the page's first one).
let current = (() => {
  const m = document.querySelector('meta[name="stoa-deployment"]');
  const id = m ? m.getAttribute("content") || "" : "";
  return id && !id.includes("{") ? id : "";
})();

/** The deployment this page is on ("" when unknown). */
export function deployment() {
  return current;
}

/**
 * A `welcome` named the deployment.
 * @param {string} id
 */
export function setDeployment(id) {
  current = id;
}

/**
 * @param {string} key
 * @returns {Identity | null}
 */
export function readIdentity(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null") || null;
  } catch {
    return null;
  }
}

/** @param {string} dep */
export function identityKey(dep) {
  return dep ? `${IDENTITY_KEY}.${dep}` : IDENTITY_KEY;
}

/** @returns {Identity} */
export function loadIdentity() {
  return (current && readIdentity(identityKey(current))) || readIdentity(IDENTITY_KEY) || {};
}

/**
 * @param {Identity} id
 * @param {string} dep
 */
export function saveIdentity(id, dep) {
  localStorage.setItem(identityKey(dep), JSON.stringify(id));
  // The per-origin entry of earlier versions, now kept under the deployment.
  const legacy = readIdentity(IDENTITY_KEY);
  if (dep && legacy && legacy.token === id.token) localStorage.removeItem(IDENTITY_KEY);
}

/**
 * Forgets a token the server refused, wherever it was kept.
 * @param {string} token
 */
export function forgetToken(token) {
  for (const key of [identityKey(current), IDENTITY_KEY]) {
    const id = readIdentity(key);
    if (id && id.token === token) localStorage.removeItem(key);
  }
}

/**
 * The key of a deployment's list of earlier identities in local storage.
 * @param {string} dep
 */
function previousKey(dep) {
  return dep ? `stoa.previous.${dep}` : "stoa.previous";
}

/**
 * The identities this browser was on `dep` before its current one, newest first.
 * @param {string} dep
 * @returns {Previous[]}
 */
export function previousOf(dep) {
  try {
    const list = JSON.parse(localStorage.getItem(previousKey(dep)) || "null");
    return Array.isArray(list) ? list.filter((p) => p && p.token) : [];
  } catch {
    return [];
  }
}

/**
 * Keeps `identity` among `dep`'s earlier identities (once per token, newest first): a
 * server of that deployment that knows it can give it back.
 * @param {string} dep
 * @param {Identity} identity
 * @param {string} why
 */
export function keepPrevious(dep, identity, why) {
  if (!identity || !identity.token) return;
  const list = previousOf(dep).filter((p) => p.token !== identity.token);
  list.unshift({ token: identity.token, id: identity.id, name: identity.name, why, kept_ms: Date.now() });
  // A bound on what a browser keeps; the oldest go first.
  localStorage.setItem(previousKey(dep), JSON.stringify(list.slice(0, 20)));
}

/**
 * Takes the identity with `token` out of `dep`'s earlier identities.
 * @param {string} dep
 * @param {string} token
 */
export function takePrevious(dep, token) {
  const list = previousOf(dep);
  const found = list.find((p) => p.token === token) || null;
  localStorage.setItem(previousKey(dep), JSON.stringify(list.filter((p) => p.token !== token)));
  return found;
}

/**
 * The headers that show this browser's token to the HTTP API (none for a guest without one).
 * @returns {Record<string, string>}
 */
export function authHeaders() {
  const token = loadIdentity().token;
  return token ? { Authorization: `Bearer ${token}` } : {};
}
