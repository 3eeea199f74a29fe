// @ts-check
// The analysis board's move tree (lichess style): every node is a position reached by one
// move from its parent; a node's first child is its main continuation, the others are
// variations. Playing a move that a node already has goes to that child; any other move adds
// a new variation. Nothing here knows a game's rules or the page: moves are the canonical
// strings the server's engines wrote, and what a node shows (its explored position) is kept
// in `data` for the page.

/**
 * One node of the tree: the root (no move) or the position after `move`.
 * @template T
 * @typedef {object} TreeNode
 * @property {number} id unique in its tree, stable while the node lives
 * @property {string | null} move the move that reached it (null for the root)
 * @property {TreeNode<T> | null} parent
 * @property {TreeNode<T>[]} children the first is the main continuation
 * @property {number} ply moves from the root
 * @property {T | null} data what the page learned of the position (null until asked)
 */

/**
 * A token of the tree written out in reading order: a move, or the start or end of a
 * variation (in parentheses, one level deeper).
 * @template T
 * @typedef {{t: "move", node: TreeNode<T>, depth: number} | {t: "open", depth: number} | {t: "close", depth: number}} Token
 */

/**
 * A tree of moves from one root position.
 * @template T
 */
export class MoveTree {
  /** @param {T | null} [rootData] */
  constructor(rootData = null) {
    this.next = 1;
    /** @type {TreeNode<T>} */
    this.root = { id: 0, move: null, parent: null, children: [], ply: 0, data: rootData };
  }

  /**
   * The child of `node` reached by `move`: the existing one, or a new last child (a new
   * variation, or the main continuation when there was none).
   * @param {TreeNode<T>} node
   * @param {string} move canonical
   * @param {T | null} [data]
   * @returns {TreeNode<T>}
   */
  play(node, move, data = null) {
    const known = node.children.find((c) => c.move === move);
    if (known) {
      if (data && !known.data) known.data = data;
      return known;
    }
    /** @type {TreeNode<T>} */
    const child = { id: this.next++, move, parent: node, children: [], ply: node.ply + 1, data };
    node.children.push(child);
    return child;
  }

  /**
   * Plays `moves` one after the other from `node` along main continuations (a game's
   * moves); the last node reached.
   * @param {TreeNode<T>} node
   * @param {string[]} moves
   */
  playLine(node, moves) {
    let at = node;
    for (const m of moves) at = this.play(at, m);
    return at;
  }

  /**
   * The node with id `id`, or null.
   * @param {number} id
   * @returns {TreeNode<T> | null}
   */
  find(id) {
    /** @type {TreeNode<T>[]} */
    const stack = [this.root];
    while (stack.length) {
      const n = /** @type {TreeNode<T>} */ (stack.pop());
      if (n.id === id) return n;
      stack.push(...n.children);
    }
    return null;
  }

  /**
   * Removes `node` and everything after it (not the root). Returns its parent, where the
   * board goes, or null when nothing was removed.
   * @param {TreeNode<T>} node
   */
  remove(node) {
    const p = node.parent;
    if (!p) return null;
    p.children = p.children.filter((c) => c !== node);
    return p;
  }

  /**
   * Makes the line through `node` the main line: at `node` and every ancestor, the child
   * on the way becomes the first one. The order of the other variations is kept.
   * @param {TreeNode<T>} node
   */
  promote(node) {
    for (let n = node; n.parent; n = n.parent) {
      const p = n.parent;
      p.children = [n, ...p.children.filter((c) => c !== n)];
    }
  }
}

/**
 * The nodes from the root to `node`, both included.
 * @template T
 * @param {TreeNode<T>} node
 * @returns {TreeNode<T>[]}
 */
export function pathTo(node) {
  /** @type {TreeNode<T>[]} */
  const out = [];
  for (let n = /** @type {TreeNode<T> | null} */ (node); n; n = n.parent) out.push(n);
  return out.reverse();
}

/**
 * The moves from `from` (an ancestor of `node`, or `node` itself) down to `node`.
 * @template T
 * @param {TreeNode<T>} from
 * @param {TreeNode<T>} node
 * @returns {string[]}
 */
export function movesBetween(from, node) {
  /** @type {string[]} */
  const out = [];
  for (let n = /** @type {TreeNode<T> | null} */ (node); n && n !== from; n = n.parent) {
    if (n.move !== null) out.push(n.move);
  }
  return out.reverse();
}

/**
 * The last node of the line going on from `node` by main continuations.
 * @template T
 * @param {TreeNode<T>} node
 */
export function lineEnd(node) {
  let n = node;
  while (n.children.length) n = n.children[0];
  return n;
}

/**
 * Whether `node` is on the tree's main line (the first child all the way from the root).
 * @template T
 * @param {TreeNode<T>} node
 */
export function onMainLine(node) {
  for (let n = node; n.parent; n = n.parent) {
    if (n.parent.children[0] !== n) return false;
  }
  return true;
}

/**
 * The tree in reading order, as lichess writes it: a move, then the variations that
 * branch off where it was played (each in parentheses, its own line written the same way),
 * then the main line goes on.
 * @template T
 * @param {TreeNode<T>} root
 * @returns {Token<T>[]}
 */
export function tokens(root) {
  /** @type {Token<T>[]} */
  const out = [];
  line(root, 0, out);
  return out;
}

/**
 * Writes the line going on from `node` (its moves after it) at `depth`.
 * @template T
 * @param {TreeNode<T>} node
 * @param {number} depth
 * @param {Token<T>[]} out
 */
function line(node, depth, out) {
  let n = node;
  while (n.children.length) {
    const [main, ...others] = n.children;
    out.push({ t: "move", node: main, depth });
    for (const v of others) {
      out.push({ t: "open", depth: depth + 1 });
      out.push({ t: "move", node: v, depth: depth + 1 });
      line(v, depth + 1, out);
      out.push({ t: "close", depth: depth + 1 });
    }
    n = main;
  }
}
