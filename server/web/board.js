// @ts-check
// Stoa web client: the boards of the four games drawn as SVG, and the facts shown under them.
//
// A plain ES module with no dependencies. Each game has one renderer that builds a fresh
// <svg> from the kind's geometry (what never changes) and the game's state (what does);
// the shared helpers below give every cell the same markup, so the app, the stylesheet and
// browser automation can treat the four boards alike:
//
//   <g class="cell [last] [selectable] [selected]" data-cell="b3"><title>b3</title>…</g>
//
// Everything is styled with inline SVG attributes so a board is readable without the
// stylesheet; the classes are there for the stylesheet to add to. Every piece carries a
// letter (or, for tokens and marks, a distinct shape) so no fact depends on colour alone.

const SVG_NS = "http://www.w3.org/2000/svg";
const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

// Side colours: natural black and white for the games whose sides are called that (and grey
// for Staku's neutral tokens), else a warm first side and a cool second side. `ink` is the
// colour of the letter drawn on the piece.
/** @type {Record<string, {fill: string, stroke: string, ink: string}>} */
const NATURAL = {
  black: { fill: "#1f1f1f", stroke: "#000000", ink: "#f5f5f5" },
  white: { fill: "#f8f5ee", stroke: "#3b3b3b", ink: "#1f1f1f" },
  neutral: { fill: "#a3a3a3", stroke: "#4d4d4d", ink: "#111111" },
};
const FIRST = { fill: "#d9a441", stroke: "#7a4f0f", ink: "#2a1a04" };
const SECOND = { fill: "#3a7bd5", stroke: "#163c74", ink: "#ffffff" };
const OTHER = { fill: "#cccccc", stroke: "#555555", ink: "#111111" };
const HL = { last: "#e0a800", lastFill: "#ffe066", selectable: "#1f9d55", selected: "#0e6e30" };
const LABEL = "#6b5636"; // coordinates and cell names
/** @type {Record<string, string[]>} */
const DEFAULT_SIDES = {
  unane: ["black", "white"], staku: ["white", "black"],
  akron: ["vert", "horz"], akunur: ["light", "dark"],
};
/** @type {Record<string, string>} */
const TITLES = { unane: "Ūnane", staku: "Staku", akron: "Akron", akunur: "Akunur" };

/**
 * What a board is drawn from: the kind, its geometry (`/api/kinds`), the position, the sides
 * in order, and the cells to mark.
 * @typedef {object} BoardView
 * @property {string} kind
 * @property {Record<string, any> | null} [geometry]
 * @property {Record<string, any> | null} [state]
 * @property {unknown} [sides]
 * @property {Iterable<string>} [last] the cells the last move named
 * @property {Iterable<string>} [selectable] the cells a click may add to the move
 * @property {Iterable<string>} [selected] the cells clicked so far
 * @property {boolean} [flip] the second side at the bottom
 */

/**
 * What every renderer is handed.
 * @typedef {object} Ctx
 * @property {string} kind
 * @property {Record<string, any>} geometry
 * @property {Record<string, any>} state
 * @property {string[]} sides
 * @property {Set<string>} last
 * @property {Set<string>} selectable
 * @property {Set<string>} selected
 * @property {((name: string) => void) | null} onCell
 * @property {boolean} flip
 */

// ---------------------------------------------------------------------------------------
// Public API.

/**
 * Draws the board of `view` into `container`, replacing its contents. `onCell(name)` gets
 * the canonical name of a clicked cell. With no geometry (it may arrive after the first
 * snapshot) nothing is drawn; odd or missing state fields draw as empty.
 * @param {Element | null} container
 * @param {BoardView | null} view
 * @param {(name: string) => void} [onCell]
 */
export function renderBoard(container, view, onCell) {
  if (!container || !view) return;
  const geometry = geometryOf(view);
  const draw = RENDERERS[view.kind];
  if (!geometry || !draw) {
    container.replaceChildren();
    return;
  }
  const ctx = context(view, geometry, onCell);
  let svg;
  try {
    svg = draw(ctx);
  } catch (e) {
    // A malformed document must not take the page down with it: show nothing, say why.
    console.error("board: cannot draw", view.kind, e);
    svg = null;
  }
  container.replaceChildren(...(svg ? [svg] : []));
}

/**
 * Short facts under the board (counters, piles, scores), one string each.
 * @param {BoardView | null} view
 * @returns {string[]}
 */
export function boardFacts(view) {
  if (!view || !isObj(view.state)) return [];
  try {
    const facts = FACTS[view.kind];
    return facts ? facts(view.state, geometryOf(view) || {}, sidesOf(view)) : [];
  } catch (e) {
    console.error("board: cannot list facts", view.kind, e);
    return [];
  }
}

/**
 * One line explaining the symbols of the board (for a caption or a help text).
 * @param {BoardView | null} view
 */
export function boardLegend(view) {
  const [a, b] = sidesOf(view || { kind: "" });
  switch (view && view.kind) {
    case "unane": return `${letter(a)} ${a}, ${letter(b)} ${b}; one group wins`;
    case "staku": return "W white, B black, N neutral; stacks drawn bottom to top, height at the right; double border: palace";
    case "akron": return `${letter(a)} ${a} joins the top and bottom edges, ${letter(b)} ${b} the left and right edges; ' per level raised; dashed link or struck ball: cut`;
    case "akunur": return `${letter(a)} ${a}, ${letter(b)} ${b}; double border: corner, diamond: its token; ◎ the Still Point; darker cells: ring 1`;
    default: return "";
  }
}

// ---------------------------------------------------------------------------------------
// Shared helpers.

/**
 * @param {unknown} v
 * @returns {v is Record<string, any>}
 */
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/**
 * @param {unknown} v
 * @returns {any[]}
 */
const arr = (v) => (Array.isArray(v) ? v : []);
/**
 * @param {unknown} v
 * @param {number} [d]
 * @returns {number}
 */
const num = (v, d = 0) => (typeof v === "number" && Number.isFinite(v) ? v : d);
/**
 * @param {unknown} v
 * @returns {string}
 */
const str = (v) => (typeof v === "string" ? v : "");
/**
 * @param {unknown} side
 */
const letter = (side) => (str(side)[0] || "?").toUpperCase();
/**
 * @param {number} i
 */
const colLetter = (i) => String.fromCharCode(65 + i); // A, B, … (no letter skipped)

/**
 * The geometry of a view; tolerates being handed the whole /api/kinds answer.
 * @param {BoardView} view
 * @returns {Record<string, any> | null}
 */
function geometryOf(view) {
  const g = view && view.geometry;
  if (!isObj(g)) return null;
  return isObj(g.geometry) ? g.geometry : g;
}

/**
 * @param {BoardView} view
 * @returns {string[]}
 */
function sidesOf(view) {
  const s = arr(view.sides).filter((x) => typeof x === "string");
  return s.length >= 2 ? s : DEFAULT_SIDES[view.kind] || ["first", "second"];
}

/**
 * Lower-cased set of names from a Set, an array or nothing.
 * @param {unknown} v
 */
function nameSet(v) {
  const out = new Set();
  if (v && typeof (/** @type {any} */ (v))[Symbol.iterator] === "function" && typeof v !== "string") {
    for (const x of /** @type {Iterable<unknown>} */ (v)) if (typeof x === "string") out.add(x.toLowerCase());
  }
  return out;
}

/**
 * What every renderer needs: state, geometry, sides, highlight sets and the callback.
 * @param {BoardView} view
 * @param {Record<string, any>} geometry
 * @param {((name: string) => void) | undefined} onCell
 * @returns {Ctx}
 */
function context(view, geometry, onCell) {
  return {
    kind: view.kind,
    geometry,
    state: isObj(view.state) ? view.state : {},
    sides: sidesOf(view),
    last: nameSet(view.last),
    selectable: nameSet(view.selectable),
    selected: nameSet(view.selected),
    onCell: typeof onCell === "function" ? onCell : null,
    flip: !!view.flip,
  };
}

/**
 * The colours of a side's pieces: natural for black/white/neutral, else by turn order.
 * @param {string} side
 * @param {string[]} sides
 */
function pieceStyle(side, sides) {
  if (Object.hasOwn(NATURAL, side)) return NATURAL[side];
  if (side === sides[0]) return FIRST;
  if (side === sides[1]) return SECOND;
  return OTHER;
}

/**
 * Creates an SVG element with attributes (null/undefined skipped) and children.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | null | undefined | false)} children
 * @returns {SVGElement}
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

/**
 * Centred text that never takes clicks (it sits over cells or outside them).
 * @param {number} x
 * @param {number} y
 * @param {string} text
 * @param {number} size
 * @param {string} [fill]
 * @param {Record<string, unknown>} [extra]
 */
function label(x, y, text, size, fill = LABEL, extra = {}) {
  const t = el("text", {
    x: r2(x), y: r2(y), "font-size": size, fill, "text-anchor": "middle",
    "dominant-baseline": "central", "pointer-events": "none", ...extra,
  });
  t.textContent = text;
  return t;
}

/**
 * @param {number} v
 */
const r2 = (v) => Math.round(v * 100) / 100;

/**
 * A cell's name, drawn after its rings with a halo of the cell colour so rings never hide it.
 * @param {number} x
 * @param {number} y
 * @param {string} text
 * @param {number} size
 * @param {string} fill
 * @param {string} halo
 */
function nameLabel(x, y, text, size, fill, halo) {
  return label(x, y, text, size, fill, { stroke: halo, "stroke-width": 2.5, "stroke-opacity": 0.85, "paint-order": "stroke" });
}

/**
 * The root <svg>: scales to its container's width and keeps its aspect ratio.
 * @param {string} kind
 * @param {number} x0
 * @param {number} y0
 * @param {number} w
 * @param {number} h
 */
function svgRoot(kind, x0, y0, w, h) {
  const title = `${TITLES[kind] || kind} board`;
  const svg = el("svg", {
    viewBox: `${r2(x0)} ${r2(y0)} ${r2(w)} ${r2(h)}`, width: "100%",
    preserveAspectRatio: "xMidYMid meet", role: "img", "aria-label": title,
    class: `board-svg board-${kind}`, "font-family": FONT,
    style: "display:block;max-width:100%;height:auto;user-select:none;-webkit-user-select:none",
  });
  return svg;
}

/**
 * The clickable group of one cell. `shape(scale)` makes the cell's outline (hexagon,
 * square, circle) scaled about its centre; the highlights reuse it, so they follow the
 * cell's form and stay centred on it. The renderer appends the cell's background, calls
 * `under()` (the last-move tint, beneath the pieces), appends the pieces, then calls
 * `over()` (the last-move outline and the selectable/selected rings, above the pieces).
 * Everything drawn over the cell is inside the group, so any click on it is the cell's.
 * @param {Ctx} ctx
 * @param {string} name
 * @param {(scale: number) => SVGElement} shape
 * @param {string} [extraClass]
 */
function cell(ctx, name, shape, extraClass = "") {
  const key = name.toLowerCase();
  /** @type {Record<string, boolean>} */
  const flags = {
    last: ctx.last.has(key), selectable: ctx.selectable.has(key), selected: ctx.selected.has(key),
  };
  const classes = ["cell", extraClass, ...Object.keys(flags).filter((f) => flags[f])];
  const g = el("g", {
    class: classes.filter(Boolean).join(" "), "data-cell": name,
    style: flags.selectable || flags.selected ? "cursor:pointer" : null,
    tabindex: flags.selectable ? 0 : null, role: flags.selectable ? "button" : null,
    "aria-label": flags.selectable ? name : null,
  });
  const title = el("title");
  title.textContent = name;
  g.append(title);
  if (ctx.onCell) {
    const fire = () => ctx.onCell(name);
    g.addEventListener("click", fire);
    // Keyboard players reach the selectable cells with Tab and play them with Enter/Space.
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); fire(); }
    });
  }
  const under = () => {
    if (flags.last) g.append(style(shape(0.94), { fill: HL.lastFill, "fill-opacity": 0.55, stroke: "none" }));
  };
  const over = () => {
    if (flags.last) g.append(style(shape(0.94), { fill: "none", stroke: HL.last, "stroke-width": 3 }));
    if (flags.selected) {
      g.append(style(shape(0.84), { fill: "none", stroke: HL.selected, "stroke-width": 5 }));
    } else if (flags.selectable) {
      g.append(style(shape(0.84), {
        fill: "none", stroke: HL.selectable, "stroke-width": 2.5, "stroke-dasharray": "5 3",
      }));
    }
  };
  return { g, flags, under, over };
}

/**
 * @param {SVGElement} node
 * @param {Record<string, unknown>} attrs
 */
function style(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/**
 * Points of a pointy-top hexagon of circumradius r (rows of such hexes interlock).
 * @param {number} cx
 * @param {number} cy
 * @param {number} r
 */
function hexPoints(cx, cy, r) {
  const pts = [];
  for (let i = 0; i < 6; i++) {
    const a = (Math.PI / 180) * (60 * i - 90);
    pts.push(`${r2(cx + r * Math.cos(a))},${r2(cy + r * Math.sin(a))}`);
  }
  return pts.join(" ");
}

/**
 * A round piece with its letter: stones, balls.
 * @param {number} cx
 * @param {number} cy
 * @param {number} r
 * @param {string} side
 * @param {string[]} sides
 * @param {string} [text]
 * @param {number} [strokeWidth]
 */
function disc(cx, cy, r, side, sides, text = letter(side), strokeWidth = 1.5) {
  const s = pieceStyle(side, sides);
  const g = el("g", { class: `piece piece-${side}` });
  g.append(
    el("circle", { cx: r2(cx), cy: r2(cy), r: r2(r), fill: s.fill, stroke: s.stroke, "stroke-width": strokeWidth }),
    label(cx, cy, text, r2(r * 0.95), s.ink, { "font-weight": 700 }),
  );
  return g;
}

/**
 * "black 9, white 9" from a per-side object.
 * @param {unknown} obj
 * @param {string[]} sides
 */
function perSide(obj, sides) {
  const o = isObj(obj) ? obj : {};
  return sides.map((s) => `${s} ${num(o[s])}`).join(", ");
}

/**
 * The bounding box of hex cell centres, grown by the cell size and a margin.
 * @param {{cx: number, cy: number}[]} centres
 * @param {number} r
 * @param {number} margin
 */
function hexBounds(centres, r, margin) {
  const xs = centres.map((c) => c.cx), ys = centres.map((c) => c.cy);
  const hw = (r * Math.sqrt(3)) / 2;
  const x0 = Math.min(...xs) - hw - margin, x1 = Math.max(...xs) + hw + margin;
  const y0 = Math.min(...ys) - r - margin, y1 = Math.max(...ys) + r + margin;
  return [x0, y0, x1 - x0, y1 - y0];
}

// ---------------------------------------------------------------------------------------
// Ūnane: a rectangle of square cells, rows[0] the top rank, files a.. left to right.

/**
 * @param {Ctx} ctx
 */
function renderUnane(ctx) {
  const geo = ctx.geometry, rows = arr(ctx.state.rows);
  let names = arr(geo.names);
  const height = names.length || num(geo.height, rows.length);
  const width = arr(names[0]).length || num(geo.width, arr(rows[0]).length);
  if (!width || !height) return null;
  if (!names.length) {
    // Older geometry without names: files a.. left to right, rank 1 at the bottom.
    names = Array.from({ length: height }, (_, r) =>
      Array.from({ length: width }, (_, f) => `${colLetter(f).toLowerCase()}${height - r}`));
  }
  const S = 44, M = 24; // cell size; margin for the coordinates
  const svg = svgRoot("unane", 0, 0, width * S + 2 * M, height * S + 2 * M);
  svg.append(el("rect", { x: M - 3, y: M - 3, width: width * S + 6, height: height * S + 6, rx: 4, fill: "#8c6a3f" }));
  for (let r = 0; r < height; r++) {
    for (let f = 0; f < width; f++) {
      const name = str(arr(names[r])[f]) || `${colLetter(f).toLowerCase()}${height - r}`;
      const x = M + f * S, y = M + r * S, cx = x + S / 2, cy = y + S / 2;
      const square = (/** @type {number} */ s) => el("rect", {
        x: r2(cx - (S * s) / 2), y: r2(cy - (S * s) / 2), width: r2(S * s), height: r2(S * s), rx: s < 1 ? 3 : 0,
      });
      const c = cell(ctx, name, square);
      // A light checker makes long rows easy to follow by eye.
      c.g.append(style(square(1), { fill: (r + f) % 2 ? "#e2c794" : "#ecd6aa", stroke: "#a9854f", "stroke-width": 1 }));
      c.under();
      const side = arr(rows[r])[f];
      if (typeof side === "string") c.g.append(disc(cx, cy, S * 0.37, side, ctx.sides));
      c.over();
      svg.append(c.g);
    }
  }
  // Files above and below, ranks left and right, as the notation writes them.
  for (let f = 0; f < width; f++) {
    const file = (str(arr(names[0])[f]).match(/^[a-z]+/i) || [colLetter(f).toLowerCase()])[0];
    svg.append(label(M + f * S + S / 2, M / 2 - 2, file, 12), label(M + f * S + S / 2, M + height * S + M / 2 + 2, file, 12));
  }
  for (let r = 0; r < height; r++) {
    const rank = (str(arr(names[r])[0]).match(/\d+/) || [String(height - r)])[0];
    svg.append(label(M / 2 - 2, M + r * S + S / 2, rank, 12), label(M + width * S + M / 2 + 2, M + r * S + S / 2, rank, 12));
  }
  return svg;
}

// ---------------------------------------------------------------------------------------
// Staku: 49 hexagonal cells in rows a (bottom) to g (top). A cell's x counts half cells
// and y rows, so its centre is (x * half width, -y * 1.5 r) for pointy-top hexagons.

/**
 * @param {Ctx} ctx
 */
function renderStaku(ctx) {
  const R = 30, HW = (R * Math.sqrt(3)) / 2, NAME_SIZE = 10;
  const cells = arr(ctx.geometry.cells).filter((c) => isObj(c) && typeof c.name === "string");
  if (!cells.length) return null;
  const stacks = arr(ctx.state.cells);
  // Turned half a circle for the player of the second side, whose pieces then sit at the
  // bottom as the first player's do.
  const turn = ctx.flip ? -1 : 1;
  const placed = cells.map((c) => ({ c, cx: turn * num(c.x) * HW, cy: -turn * num(c.y) * 1.5 * R }));
  const [bx, by, bw, bh] = hexBounds(placed, R, 6);
  const svg = svgRoot("staku", bx, by, bw, bh);
  for (const [i, { c, cx, cy }] of placed.entries()) {
    const palace = str(c.palace);
    const hex = (/** @type {number} */ s) => el("polygon", { points: hexPoints(cx, cy, R * s) });
    const k = cell(ctx, c.name, hex, palace ? `palace palace-${palace}` : "");
    const bg = palace ? "#dcc596" : "#ead9b4";
    k.g.append(style(hex(1), { fill: bg, stroke: "#8c7049", "stroke-width": 1.2 }));
    if (palace) {
      // A palace has a second, inner border in its owner's colour (light or dark: the
      // difference is in brightness, not hue, so it survives colour blindness).
      const p = pieceStyle(palace, ctx.sides);
      k.g.append(style(hex(0.86), { fill: "none", stroke: p.fill, "stroke-width": 3 }),
        style(hex(0.86 + 0.06), { fill: "none", stroke: p.stroke, "stroke-width": 0.8 }));
    }
    k.under();
    const nameY = cy - R * 0.62;
    const tokens = arr(isObj(stacks[i]) ? stacks[i].tokens : null).filter((t) => typeof t === "string");
    // The stack bottom to top: flat tokens piled upwards in the band between the cell's
    // name and the hexagon's lower edge, centred in it. However tall the stack, its tokens
    // get thinner rather than taller, so the name above always stays clear.
    const n = tokens.length, w = 28;
    const top = nameY + NAME_SIZE / 2 + 2, bottom = cy + R * 0.72;
    const h = Math.min(11, (bottom - top) / Math.max(n, 1)), mid = (top + bottom) / 2;
    tokens.forEach((t, j) => {
      const s = pieceStyle(t, ctx.sides), ty = mid + ((n - 1) / 2 - j) * h;
      k.g.append(
        el("rect", { x: r2(cx - w / 2), y: r2(ty - h / 2), width: w, height: r2(h), rx: 3, fill: s.fill, stroke: s.stroke, "stroke-width": 1 }),
        label(cx, ty + 0.5, letter(t), r2(h * 0.85), s.ink, { "font-weight": 700 }),
      );
    });
    // The height of stacks of two or more, to the right (single tokens speak for themselves).
    if (n >= 2) k.g.append(label(cx + HW * 0.78, mid, String(n), 10, "#3d2f18", { "font-weight": 700 }));
    k.over();
    k.g.append(nameLabel(cx, nameY, c.name, NAME_SIZE, LABEL, bg));
    svg.append(k.g);
  }
  return svg;
}

// ---------------------------------------------------------------------------------------
// Akron: a plan view of the pyramid. Holes on a square grid, row 1 at the bottom; a point
// (k, i, j) sits at plan (2i+k, 2j+k), the centre of the four points it rests on.

/**
 * @param {Ctx} ctx
 */
function renderAkron(ctx) {
  const geo = ctx.geometry, st = ctx.state;
  const stLevels = arr(st.levels);
  const n = num(geo.size, arr(isObj(stLevels[0]) ? stLevels[0].rows : null).length);
  if (n < 1) return null;
  const U = 20, O = 62; // plan unit (holes are 2 units apart); offset for edges and labels
  const span = 2 * (n - 1) * U;
  const sx = (/** @type {number} */ px) => O + px * U, sy = (/** @type {number} */ py) => O + span - py * U;
  const size = span + 2 * O;
  const svg = svgRoot("akron", 0, 0, size, size);
  const [vert, horz] = ctx.sides;
  // The board, and each side's edges as bands in its colour and with its name: vert joins
  // top and bottom, horz left and right.
  svg.append(el("rect", { x: O - 26, y: O - 26, width: span + 52, height: span + 52, rx: 6, fill: "#d8bf8e", stroke: "#8c6a3f", "stroke-width": 1.5 }));
  const v = pieceStyle(vert, ctx.sides), h = pieceStyle(horz, ctx.sides), B = 12, far = O + span + 28;
  for (const y of [O - 28 - B, far]) {
    svg.append(el("rect", { x: O - 20, y, width: span + 40, height: B, rx: 4, fill: v.fill, stroke: v.stroke, "stroke-width": 0.8, "pointer-events": "none" }),
      label(O + span / 2, y + B / 2, vert, 9, v.ink, { "font-weight": 700 }));
  }
  for (const x of [O - 28 - B, far]) {
    const cx = x + B / 2, cy = O + span / 2;
    svg.append(el("rect", { x, y: O - 20, width: B, height: span + 40, rx: 4, fill: h.fill, stroke: h.stroke, "stroke-width": 0.8, "pointer-events": "none" }),
      label(cx, cy, horz, 9, h.ink, { "font-weight": 700, transform: `rotate(-90 ${r2(cx)} ${r2(cy)})` }));
  }
  for (let i = 0; i < n; i++) {
    svg.append(label(sx(2 * i), O - 52, colLetter(i), 11), label(sx(2 * i), far + B + 12, colLetter(i), 11));
    svg.append(label(O - 52, sy(2 * i), String(i + 1), 11), label(far + B + 12, sy(2 * i), String(i + 1), 11));
  }

  // Who holds each point: the state's levels, or its balls when levels are missing.
  /** @type {(k: number, i: number, j: number) => string} */
  const name = (k, i, j) => `${colLetter(i)}${j + k + 1}${"'".repeat(k)}`;
  const balls = new Map(); // upper-case name -> {side, cut}
  for (const b of arr(st.balls)) {
    if (isObj(b) && typeof b.point === "string") balls.set(b.point.toUpperCase(), { side: str(b.side), cut: b.cut === true });
  }
  /** @type {(k: number, i: number, j: number) => any} */
  const sideAt = (k, i, j) => {
    const rows = isObj(stLevels[k]) ? arr(stLevels[k].rows) : null;
    if (rows && rows.length) {
      const s = arr(rows[j])[i];
      return typeof s === "string" ? s : null;
    }
    const b = balls.get(name(k, i, j));
    return b ? b.side : null;
  };
  const links = arr(st.links).filter(isObj);
  /** @param {string} pointName */
  const planOf = (pointName) => {
    const m = /^([A-Z])(\d+)('*)$/.exec(str(pointName).toUpperCase());
    if (!m) return null;
    const k = m[3].length, i = m[1].charCodeAt(0) - 65, j = Number(m[2]) - k - 1;
    return [2 * i + k, 2 * j + k];
  };

  for (let k = 0; k < n; k++) {
    // Links of this level go over the balls below and under the balls of this level, so a
    // link between two raised balls shows where it crosses a pair underneath.
    for (const l of links) {
      if (num(l.level, -1) !== k) continue;
      const a = planOf(l.a), b = planOf(l.b);
      if (!a || !b) continue;
      const s = pieceStyle(str(l.side), ctx.sides), cut = l.cut === true;
      svg.append(el("line", {
        x1: sx(a[0]), y1: sy(a[1]), x2: sx(b[0]), y2: sy(b[1]), stroke: cut ? "#c62828" : s.stroke,
        "stroke-width": cut ? 3 : 5, "stroke-dasharray": cut ? "4 3" : null, "stroke-linecap": "round",
        "pointer-events": "none", class: cut ? "link cut" : "link",
      }));
    }
    const rBall = Math.max(16 - 2 * k, 8);
    for (let j = 0; j < n - k; j++) {
      for (let i = 0; i < n - k; i++) {
        const nm = name(k, i, j), key = nm.toLowerCase();
        const side = sideAt(k, i, j);
        const cx = sx(2 * i + k), cy = sy(2 * j + k);
        if (k > 0 && !side && !ctx.selectable.has(key) && !ctx.selected.has(key)) {
          // An empty raised point the last move left: a faint mark, not a target.
          if (ctx.last.has(key)) svg.append(el("circle", { cx, cy, r: rBall, fill: "none", stroke: HL.last, "stroke-width": 2, "stroke-dasharray": "3 2", "pointer-events": "none" }));
          continue;
        }
        // Holes answer clicks over a wide disc; raised points over their ball.
        const hitR = k === 0 ? 19 : rBall + 2;
        const ring = (/** @type {number} */ s) => el("circle", { cx, cy, r: r2(hitR * (s < 1 ? s + 0.12 : 1)) });
        const c = cell(ctx, nm, ring, k === 0 ? "hole" : `raised level-${k}`);
        c.g.append(style(ring(1), { fill: "#000", "fill-opacity": 0, stroke: "none" }));
        c.under();
        if (k === 0) c.g.append(el("circle", { cx, cy, r: 6, fill: "#6e5330", stroke: "#4a361c", "stroke-width": 1 }));
        if (side) {
          if (k > 0) {
            // Raised: a shadow below and right, a light rim, and one apostrophe per level.
            c.g.append(el("circle", { cx: cx + Math.min(1.5 + k, 4), cy: cy + Math.min(1.5 + k, 4), r: rBall, fill: "#000", "fill-opacity": 0.3 }),
              el("circle", { cx, cy, r: rBall + 1.8, fill: "#fffbe8" }));
          }
          const piece = disc(cx, cy, rBall, side, ctx.sides, letter(side) + "'".repeat(k), 1.5);
          // Higher levels are lighter, like balls nearer the light.
          if (k > 0) /** @type {Element} */ (piece.firstChild).setAttribute("fill", lighten(pieceStyle(side, ctx.sides).fill, Math.min(0.12 * k, 0.5)));
          c.g.append(piece);
          const info = balls.get(nm);
          if (info && info.cut) {
            // A cut ball (column rule): struck through, with a dashed red rim.
            c.g.classList.add("cut");
            const d = rBall * 0.72;
            c.g.append(el("line", { x1: cx - d, y1: cy + d, x2: cx + d, y2: cy - d, stroke: "#c62828", "stroke-width": 2.5, "stroke-linecap": "round" }),
              el("circle", { cx, cy, r: rBall, fill: "none", stroke: "#c62828", "stroke-width": 1.5, "stroke-dasharray": "3 2" }));
          }
        } else if (k > 0) {
          // An empty raised point that may be clicked: a pale disc showing where it is.
          c.g.append(el("circle", { cx, cy, r: rBall, fill: HL.selectable, "fill-opacity": 0.18 }));
        }
        c.over();
        svg.append(c.g);
      }
    }
  }
  return svg;
}

/**
 * Mixes a #rrggbb colour with white by `t` (0..1).
 * @param {string} hex
 * @param {number} t
 */
function lighten(hex, t) {
  const m = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!m) return hex;
  const v = parseInt(m[1], 16);
  const ch = (/** @type {number} */ s) => Math.round(((v >> s) & 255) + (255 - ((v >> s) & 255)) * t);
  return `rgb(${ch(16)},${ch(8)},${ch(0)})`;
}

// ---------------------------------------------------------------------------------------
// Akunur: the 61-cell hexagon. Cell (x, y) is drawn at half-cell column 2x - y, row y
// upwards, so row 9 is at the top and row 5 is the widest.

/**
 * @param {Ctx} ctx
 */
function renderAkunur(ctx) {
  const R = 27, HW = (R * Math.sqrt(3)) / 2;
  const cells = arr(ctx.geometry.cells).filter((c) => isObj(c) && typeof c.name === "string");
  if (!cells.length) return null;
  const st = arr(ctx.state.cells);
  const tokensLeft = new Set(arr(ctx.state.tokens).filter((t) => typeof t === "string").map((t) => t.toLowerCase()));
  const placed = cells.map((c) => ({ c, cx: (2 * num(c.x) - num(c.y)) * HW, cy: -num(c.y) * 1.5 * R }));
  const [bx, by, bw, bh] = hexBounds(placed, R, 6);
  const svg = svgRoot("akunur", bx, by, bw, bh);
  /** @type {Record<string, string>} */
  const FILL = { corner: "#ddd0b2", placement: "#ecdcba", inner: "#cfbb92", still_point: "#bfa778" };
  for (const [i, { c, cx, cy }] of placed.entries()) {
    const kind = str(c.kind) || "placement";
    const hex = (/** @type {number} */ s) => el("polygon", { points: hexPoints(cx, cy, R * s) });
    const k = cell(ctx, c.name, hex, `kind-${kind}`);
    const bg = FILL[kind] || FILL.placement;
    k.g.append(style(hex(1), { fill: bg, stroke: "#8c7049", "stroke-width": 1.2 }));
    const py = cy + R * 0.12; // pieces sit a little low, under the cell's name
    if (kind === "corner") {
      // Corners: a second border, like a frame.
      k.g.append(style(hex(0.84), { fill: "none", stroke: "#8a6a14", "stroke-width": 2 }));
    }
    k.under();
    if (kind === "still_point") {
      k.g.append(el("circle", { cx, cy: py, r: R * 0.5, fill: "none", stroke: "#5b4320", "stroke-width": 1.5 }),
        el("circle", { cx, cy: py, r: R * 0.2, fill: "#5b4320" }));
    }
    const data = isObj(st[i]) ? st[i] : {};
    // A token still on its corner: a white diamond whose points show around any stone (not
    // gold: that would read as a light stone).
    const token = data.token === true || (data.token === undefined && kind === "corner" && tokensLeft.has(c.name.toLowerCase()));
    if (token) {
      const d = R * 0.58;
      k.g.append(el("polygon", {
        points: `${r2(cx)},${r2(py - d)} ${r2(cx + d)},${r2(py)} ${r2(cx)},${r2(py + d)} ${r2(cx - d)},${r2(py)}`,
        fill: "#fffdf4", stroke: "#5b4320", "stroke-width": 1.6, class: "token",
      }));
    }
    if (typeof data.stone === "string") {
      const s = pieceStyle(data.stone, ctx.sides);
      // The second side's stones get a doubled rim, so the two differ in shape as well.
      const stone = disc(cx, py, R * 0.46, data.stone, ctx.sides);
      if (data.stone === ctx.sides[1]) stone.append(el("circle", { cx, cy: py, r: R * 0.35, fill: "none", stroke: s.ink, "stroke-width": 0.8, "stroke-opacity": 0.6 }));
      k.g.append(stone);
    }
    k.over();
    k.g.append(nameLabel(cx, cy - R * 0.62, c.name, 9.5, kind === "placement" ? LABEL : "#3f2f12", bg));
    svg.append(k.g);
  }
  return svg;
}

/** @type {Record<string, (ctx: Ctx) => SVGElement | null>} */
const RENDERERS = { unane: renderUnane, staku: renderStaku, akron: renderAkron, akunur: renderAkunur };

// ---------------------------------------------------------------------------------------
// Facts: what the terminal client prints under its board.

/** @type {Record<string, (st: Record<string, any>, geo: Record<string, any>, sides: string[]) => string[]>} */
const FACTS = {
  unane(st, _geo, sides) {
    const out = [`stones: ${perSide(st.stones, sides)}`, `groups: ${perSide(st.groups, sides)}`];
    if (st.swap_available === true) out.push("swap available");
    return out;
  },
  staku(st, geo, sides) {
    const tob = isObj(st.tokens_on_board) ? st.tokens_on_board : {};
    return [
      `no-capture counter ${num(st.no_capture_counter)}/${num(geo.no_capture_limit, 20)} (draw at 0)`,
      `tokens on board: ${perSide(tob, sides)}, neutral ${num(tob.neutral)}`,
      `max stack ${num(geo.max_stack, 3)}`,
    ];
  },
  akron(st, _geo, sides) {
    const conn = isObj(st.connected) ? st.connected : {};
    const joined = sides.filter((s) => conn[s] === true);
    const out = [`piles: ${perSide(st.piles, sides)}`, `connected: ${joined.length ? joined.join(", ") : "nobody"}`];
    // A cut link can be hidden under the pair that cuts it: name them.
    const cut = arr(st.links).filter((l) => isObj(l) && l.cut === true)
      .map((l) => `${str(l.a)}-${str(l.b)} (${str(l.side)})`);
    if (cut.length) out.push(`cut links: ${cut.join(", ")}`);
    if (st.swap_available === true) out.push("swap available");
    return out;
  },
  akunur(st, geo, sides) {
    const tokens = arr(st.tokens).filter((t) => typeof t === "string");
    const out = [
      `phase: ${str(st.phase) || "?"}`,
      `corners held: ${perSide(st.corners_held, sides)} (${num(geo.corners_to_win, 3)} to win)`,
      `scores: ${perSide(st.scores, sides)}`,
      `supply: ${perSide(st.supply, sides)}; on board: ${perSide(st.on_board, sides)}`,
      `corner tokens left: ${tokens.length ? tokens.join(" ") : "none"}`,
    ];
    if (st.bonus_pending === true) out.push("bonus placement pending");
    if (num(st.passes) > 0) out.push(`passes in a row: ${num(st.passes)}`);
    return out;
  },
};
