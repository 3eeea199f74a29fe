// The messages as the pages handle them, built on the types generated from the Rust wire
// types (../wire.d.ts). Types only: nothing here is served or run.

import type { ClientMessage, ServerMessage } from "../wire";

/** A message the page sends: the link adds the `rid` of a request. */
export type Outgoing = ClientMessage extends infer M ? (M extends unknown ? Omit<M, "rid"> : never) : never;

/** The request of type `T` as the page writes it. */
export type Request<T extends Outgoing["t"]> = Extract<Outgoing, { t: T }>;

/** The server's message of type `T`. */
export type Msg<T extends ServerMessage["t"]> = Extract<ServerMessage, { t: T }>;

/**
 * A request's answer: the message the server answers it with (which one depends on the
 * request; the page reads the fields that request's answer has).
 */
export type Answer = ServerMessage & Record<string, any>;

/** A refusal: the server's `error`, or the link's own `disconnected`. */
export interface Refusal {
  code: string;
  message: string;
}
