// The shapes of the three documents the server publishes (protocol/docs/PROTOCOL.md,
// "Documents"): the lobby, a game and an arena. On the wire they are JSON values inside the
// generated message types (../wire.d.ts); what the pages read of them is typed here. Types
// only: nothing here is served or run.

/** A player as a document names them. */
export interface Seat {
  id: string;
  name: string;
  rating?: number;
  bot?: boolean;
}

/** A game's clock in its document: the time control and, once it runs, where it stands. */
export type GameClock = {
  kind: string;
  initial_ms?: number;
  increment_ms?: number;
  delay_ms?: number;
  periods?: number;
  period_ms?: number;
  days_per_turn?: number;
  remaining_ms?: Record<string, number>;
  periods_left?: Record<string, number>;
  /** The side whose clock runs. */
  running?: string | null;
  /** Server time the running clock runs from. */
  since?: number | null;
  /** Server time the first move is due by. */
  first_action_deadline?: number | null;
};

/** A game's document (`game.snapshot`, `game.diff`). */
export interface GameDoc {
  id: string;
  kind: string;
  options?: Record<string, unknown>;
  rated: boolean;
  clock?: GameClock;
  players: Record<string, Seat>;
  to_act?: string | null;
  status: { state: string; reason?: string | null; winner?: string | null };
  moves?: string[];
  draw_offer?: string | null;
  rematch?: { requested: string[]; game_id?: string | null } | null;
  arena?: { id: string; berserk?: Record<string, boolean> } | null;
  /** The position, as the kind's rules write it. */
  state?: Record<string, unknown>;
}

/** The lobby's document (`lobby`, `lobby.diff`). */
export interface LobbyDoc {
  online: number;
  queues?: Record<string, { kind: string; options?: Record<string, unknown>; clock: GameClock; waiting: number }>;
  rooms?: Record<string, { kind: string; options?: Record<string, unknown>; clock: GameClock; rated?: boolean; host: Seat }>;
  games?: Record<string, {
    kind: string;
    options?: Record<string, unknown>;
    clock?: string;
    time_control?: GameClock;
    players: Record<string, Seat>;
    spectators: number;
  }>;
  arenas?: Record<string, {
    name: string;
    kind: string;
    options?: Record<string, unknown>;
    clock: GameClock;
    rated?: boolean;
    players: number;
    starts_at: number;
    ends_at: number;
  }>;
}

/** One line of an arena's standings. */
export interface ArenaPlayer {
  id: string;
  name: string;
  bot?: boolean;
  score: number;
  sheet?: string;
  fire?: boolean;
  games: number;
  performance?: number;
  paused?: boolean;
  /** The game the player is in now. */
  playing?: string | null;
}

/** An arena's document (`arena`, `arena.diff`). */
export interface ArenaDoc {
  id: string;
  name: string;
  kind: string;
  options?: Record<string, unknown>;
  clock: GameClock;
  rated: boolean;
  berserk?: boolean;
  code?: string | null;
  status: "scheduled" | "running" | "finished" | "cancelled";
  starts_at: number;
  ends_at: number;
  creator?: Seat | null;
  players: ArenaPlayer[];
  /** Each game: its status, and each side's player id. */
  games?: Record<string, { status: string; [side: string]: string | null }>;
  top_game?: string | null;
}
