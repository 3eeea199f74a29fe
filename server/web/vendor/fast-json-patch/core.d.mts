// Types of the part of fast-json-patch (core.mjs beside this file) the web client uses.

/** One RFC 6902 operation. */
export interface Operation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

/** Applies `patch` to `document` (in place unless `mutateDocument` is false). */
export function applyPatch<T>(
  document: T,
  patch: readonly Operation[],
  validateOperation?: boolean,
  mutateDocument?: boolean,
  banPrototypeModifications?: boolean,
): unknown;
