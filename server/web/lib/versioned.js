// @ts-check
// One versioned document as the server publishes it (protocol/docs/PROTOCOL.md, "Documents"):
// a snapshot `{seq, doc}`, then diffs, each an RFC 6902 patch one `seq` further on. The
// lobby, a game and an arena are all followed the same way: a diff that is not the next one
// is a gap (the page missed something), and the page watches again — with `since` where the
// server can replay from there (a game), for the whole document otherwise.

import { applyPatch } from "../vendor/fast-json-patch/core.mjs";

/**
 * @template D
 */
export class Versioned {
  /**
   * @param {(seq: number) => void} onGap asks for the document again; `seq` is the last one held
   */
  constructor(onGap) {
    this.onGap = onGap;
    /** The seq of the document held, null before the first snapshot. @type {number | null} */
    this.seq = null;
    /** The document held. @type {D | null} */
    this.doc = null;
  }

  /** Forgets the document: the next snapshot is taken whatever its seq (another node's). */
  reset() {
    this.seq = null;
    this.doc = null;
  }

  /**
   * Takes a snapshot, unless it is older than what is held (an answer overtaken by diffs).
   * One the server pushed on its own (no `rid`) is taken whatever its seq: a game that
   * went back after its storage lost its last events (protocol/docs/PROTOCOL.md).
   * The document is the JSON of the wire; its shape is `D` (lib/documents.d.ts).
   * @param {number} seq
   * @param {unknown} doc
   * @param {boolean} [pushed] sent without a `rid`
   * @returns {boolean} whether the document changed
   */
  snapshot(seq, doc, pushed = false) {
    if (!pushed && this.seq !== null && seq < this.seq) return false;
    this.seq = seq;
    this.doc = /** @type {D} */ (doc);
    return true;
  }

  /**
   * Applies a diff when it is the next one; an old one is dropped, and a gap asks for the
   * document again.
   * @param {number} seq
   * @param {unknown} patch an RFC 6902 patch, as the wire carries it
   * @returns {boolean} whether the document changed
   */
  diff(seq, patch) {
    if (this.seq === null || this.doc === null || seq <= this.seq) return false;
    if (seq !== this.seq + 1) {
      this.onGap(this.seq);
      return false;
    }
    applyPatch(this.doc, /** @type {import("../vendor/fast-json-patch/core.mjs").Operation[]} */ (patch), false, true);
    this.seq = seq;
    return true;
  }
}
