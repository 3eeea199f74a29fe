// The wire messages of protocol/docs/PROTOCOL.md as TypeScript types, generated from the
// Rust types of protocol/src/wire/ by `stoa_protocol::typescript`. Do not edit: write it anew
// with `STOA_BLESS=1 cargo test -p stoa-tests --test web_types`.

/**
 * Addition: the engine's view of one ply of a finished game.
 */
export type AnalysisPly = { 
/**
 * The ply, from 1.
 */
ply: number, 
/**
 * The side that played it (its colour name).
 */
side: string, 
/**
 * The move played, canonical notation.
 */
move: string, 
/**
 * The win probability (0 to 1) of the side to act before the move: the side that
 * played it.
 */
eval: number, 
/**
 * That side's win probability after the move (1 or 0 when the move ended the game
 * with a win or a loss, 0.5 with a draw).
 */
after: number, 
/**
 * The first-acting side's win probability after the move: the evaluation graph.
 */
first: number, 
/**
 * The engine's preferred move before this ply.
 */
best?: string | null, 
/**
 * The mark, when the move lost enough (see [`Mark::of`]).
 */
mark?: Mark | null, };

/**
 * `analysis.request`: the engine review of a finished game (see `analysis`): queued for an
 * analysis worker once per game, one pending request per player at a time.
 */
export type AnalysisRequestBody = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The finished game.
 */
game_id: string, 
/**
 * The room code of a private game.
 */
code?: string | null, };

/**
 * Addition: a finished game's engine review.
 */
export type AnalysisResult = { 
/**
 * The first-acting side's win probability at the start.
 */
start: number, 
/**
 * One entry per move of the game, in order.
 */
plies: Array<AnalysisPly>, 
/**
 * What searched (the worker's engine and its budget), for the reader.
 */
engine: string, };

/**
 * `analysis.result`: a worker's review of the job it was given (`analysis.job`).
 */
export type AnalysisResultBody = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The job, as `analysis.job` named it.
 */
job: string, 
/**
 * The review.
 */
result: AnalysisResult, };

/**
 * `analysis.serve`: an analysis worker (`stoa analyse --serve`) is free for a job (games of
 * `kinds`, every kind when empty); it gets `analysis.job`, one at a time, and says this
 * again when free.
 */
export type AnalysisServeBody = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kinds reviewed (empty: all).
 */
kinds: Array<string>, 
/**
 * The worker's key, where the server requires one (`--analysis-keys`): a key it does
 * not know, or none, is `forbidden`.
 */
key?: string | null, };

/**
 * Addition: where a game's review stands.
 */
export type AnalysisState = "none" | "queued" | "waiting_for_worker" | "running" | "done";

/**
 * Addition: a game's two chats. The players' chat is read by the two seated players only;
 * the spectators' chat by everyone else watching, and by the players too once the game
 * has ended (as on lichess: players are not distracted by the crowd while they play).
 */
export type ChatChannel = "players" | "spectators";

/**
 * Addition: one chat line as `chat` and `chat.history` carry it.
 */
export type ChatEntry = { 
/**
 * Its channel.
 */
channel: ChatChannel, 
/**
 * The author's public id.
 */
id: string, 
/**
 * The author's display name when they wrote it.
 */
name: string, 
/**
 * The text (plain text: clients must never interpret it as markup).
 */
text: string, 
/**
 * When the server took it, ms since the epoch.
 */
ts: number, };

/**
 * Every message a client may send, tagged by `t`.
 *
 * Why `Option<Rid>` everywhere: any request may carry a rid, and the answer echoes it.
 * Unknown fields are ignored (forward compatibility); wrong types are `bad_request`.
 */
export type ClientMessage = { "t": "hello", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Protocol version (1; missing means 1).
 */
protocol: number, 
/**
 * A token from an earlier `welcome`, to be the same player again.
 */
token?: string | null, 
/**
 * Display name for a new guest (1-24 characters).
 */
name?: string | null, 
/**
 * Addition: a new guest created by this hello is a computer player (`stoa bot`);
 * its seats carry `"bot": true` and its games are unrated.
 */
bot?: boolean, 
/**
 * Addition: a label for the device saying hello ("browser (Chrome)", "terminal"),
 * shown in `devices`; kept from the device's first `hello`.
 */
device?: string | null, 
/**
 * Addition: sign in to a claimed account instead of presenting a token: the
 * `welcome` carries a new token for this device (no guest is made on the way).
 */
login?: Credentials | null, } | { "t": "ping", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "game.watch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The last seq the client has; the server replays later diffs when it can.
 */
since?: number | null, 
/**
 * Addition: the room code, to watch a private game directly.
 */
code?: string | null, } | { "t": "game.unwatch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "game.legal", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "game.move", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The action in the game's notation.
 */
move: string, 
/**
 * The seq the client last saw; a different current seq gets `stale_seq`.
 */
seq?: number | null, } | { "t": "game.resign", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "game.draw", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * What to do.
 */
action: DrawAction, } | { "t": "game.abort", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "game.claim", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "game.rematch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "room.create", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kind (`unane`, `staku`, `akron`, `akunur`).
 */
kind: string, 
/**
 * Game options (validated by the game; missing means defaults).
 */
options: JsonValue, 
/**
 * Clock request object; missing means `{"kind":"none"}`.
 */
clock?: JsonValue | null, 
/**
 * Rated game.
 */
rated: boolean, 
/**
 * Public or private (default private).
 */
visibility: Visibility, 
/**
 * `random` or a side name: the host's side.
 */
side: string, } | { "t": "room.join", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Room code.
 */
code: string, } | { "t": "room.leave", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Room code.
 */
code: string, } | { "t": "queue.join", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * Game options.
 */
options: JsonValue, 
/**
 * Clock request object.
 */
clock?: JsonValue | null, 
/**
 * Rated pairing.
 */
rated: boolean, } | { "t": "queue.leave", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "lobby.watch", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "lobby.unwatch", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "game.record", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The room code of a private game.
 */
code?: string | null, } | { "t": "bot.serve", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kinds.
 */
kinds: Array<string>, 
/**
 * Levels (1-5).
 */
levels: Array<number>, } | { "t": "analysis.request" } & AnalysisRequestBody | { "t": "analysis.serve" } & AnalysisServeBody | { "t": "analysis.result" } & AnalysisResultBody | { "t": "bot.play", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * Options.
 */
options: JsonValue, 
/**
 * Clock request.
 */
clock: JsonValue | null, 
/**
 * Strength, 1-5.
 */
level: number, 
/**
 * The caller's side, or `random` (default).
 */
side: string, 
/**
 * Addition: a position string to start from instead of the kind's start ("play
 * on from here against the computer"); absent: the start position.
 */
position?: string | null, } | { "t": "chat.say", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game (the connection must be watching it).
 */
game_id: string, 
/**
 * The channel; missing means the sender's own (players for a seated player,
 * spectators for everyone else).
 */
channel?: ChatChannel | null, 
/**
 * The line: at most [`MAX_CHAT_CHARS`] characters once trimmed, not empty, no
 * control characters.
 */
text: string, } | { "t": "chat.mute", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The person's public id.
 */
player_id: string, 
/**
 * `true` (default) mutes, `false` unmutes.
 */
muted: boolean, } | { "t": "chat.spectators", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * Whether spectators may post.
 */
on: boolean, } | { "t": "history", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Whose games (another player's shows only their public games).
 */
player_id?: string | null, 
/**
 * Only games that ended before this time (ms since the epoch): the next page.
 */
before?: number | null, 
/**
 * At most this many (1-100, default 20).
 */
limit?: number | null, } | { "t": "player", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Whose page (another player's lists only their public games).
 */
player_id?: string | null, } | { "t": "leaderboard", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game kind.
 */
kind: string, } | { "t": "link.code", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "link.redeem", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The code as typed (case, dashes and look-alikes are forgiven).
 */
code: string, 
/**
 * A label for the redeeming device.
 */
device?: string | null, } | { "t": "devices", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "device.revoke", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The device's id from `devices`.
 */
id: string, } | { "t": "room.watch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The room's code (read forgivingly, as in `room.join`).
 */
code: string, } | { "t": "room.unwatch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The room's code.
 */
code: string, } | { "t": "room.say", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The room's code.
 */
code: string, 
/**
 * The line: the game chat's rules ([`MAX_CHAT_CHARS`] characters once trimmed,
 * not empty, no control characters).
 */
text: string, } | { "t": "arena.create", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * Game options (missing: defaults).
 */
options: JsonValue, 
/**
 * Clock request object (missing: no clock).
 */
clock?: JsonValue | null, 
/**
 * Rated games.
 */
rated: boolean, 
/**
 * Start in this many ms (or give `starts_at_ms`; neither: at once).
 */
starts_in_ms?: number | null, 
/**
 * Start at this server time, ms since the epoch.
 */
starts_at_ms?: number | null, 
/**
 * How long the arena runs, ms (10 s to 24 h).
 */
duration_ms: number, 
/**
 * `public` (default: listed in the lobby) or `private` (joined by code).
 */
visibility?: Visibility | null, 
/**
 * A name (1-40 printable characters; default from the kind and clock).
 */
name?: string | null, 
/**
 * Computer players may join (casual arenas only).
 */
bots: boolean, 
/**
 * Players may go berserk (timed arenas only, not correspondence).
 */
berserk: boolean, 
/**
 * Draws with fewer plies score nothing (default 0).
 */
min_draw_plies: number, } | { "t": "arena.watch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The arena's id (or give `code`).
 */
id?: string | null, 
/**
 * A private arena's code.
 */
code?: string | null, } | { "t": "arena.unwatch", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The arena.
 */
id: string, } | { "t": "arena.join", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The arena's id (or give `code`).
 */
id?: string | null, 
/**
 * A private arena's code.
 */
code?: string | null, } | { "t": "arena.pause", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The arena.
 */
id: string, } | { "t": "arena.cancel", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The arena.
 */
id: string, } | { "t": "game.berserk", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, } | { "t": "account", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "account.claim", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The account's name (2-24 letters, digits, `-`, `_`; unique ignoring case).
 */
name: string, 
/**
 * The password (8-256 characters).
 */
password: string, } | { "t": "account.login", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The account's name, as typed (case and Unicode forms are forgiven).
 */
name: string, 
/**
 * The password.
 */
password: string, 
/**
 * A label for the device signing in (as in `hello`).
 */
device?: string | null, } | { "t": "account.password", 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The password now.
 */
current: string, 
/**
 * The new password (8-256 characters).
 */
new: string, 
/**
 * Also revoke every other device of the player.
 */
revoke_others?: boolean, } | { "t": "account.logout", 
/**
 * Request id.
 */
rid?: Rid | null, } | { "t": "position.explore" } & ExploreRequest | { "t": "lesson.done" } & LessonDone | { "t": "lessons.progress" } & LessonsProgressRequest | { "t": "report" } & ReportRequest;

/**
 * Addition: an account's name and password, to sign in with (`hello.login`).
 */
export type Credentials = { 
/**
 * The account's name, as typed.
 */
name: string, 
/**
 * The password.
 */
password: string, };

/**
 * One device holding a player's token, as `devices` lists it.
 */
export type DeviceInfo = { 
/**
 * The device's id (for `device.revoke`).
 */
id: string, 
/**
 * The label the device gave.
 */
label: string, 
/**
 * When the device was linked (its token made), ms since the epoch.
 */
created_ms: number, 
/**
 * The device's last `hello`, ms since the epoch.
 */
last_seen_ms: number, 
/**
 * Whether this is the asking connection's device.
 */
current: boolean, };

/**
 * `game.draw` actions.
 */
export type DrawAction = "offer" | "accept" | "decline";

/**
 * Error codes of protocol/docs/PROTOCOL.md's Errors section, serialised as the exact code strings.
 */
export type ErrorCode = "bad_request" | "unknown_type" | "unauthorized" | "not_found" | "forbidden" | "not_your_turn" | "illegal_move" | "stale_seq" | "game_over" | "conflict" | "rate_limited" | "unavailable" | "invalid_options";

/**
 * `position.explore`: the position (or the kind's start) after a line of moves. Its
 * fields are the message's own (`{"t":"position.explore","kind":...}`).
 */
export type ExploreRequest = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * Game options (validated by the game; missing means defaults).
 */
options: JsonValue, 
/**
 * A position string of the kind's notation; missing means the start position.
 */
position?: string | null, 
/**
 * Moves to play from there, in order (any accepted input form).
 */
moves: Array<string>, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/**
 * `lesson.done`: a step of a kind's lesson (`protocol/lessons/<kind>.json`) is done.
 * Answered by `ok`; saying it again changes nothing.
 */
export type LessonDone = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The game kind whose lesson it is.
 */
kind: string, 
/**
 * The step's id in the lesson file.
 */
step: string, };

/**
 * `lessons.progress`: asks for the steps this player has done, answered by
 * [`super::ServerMessage::LessonsProgress`].
 */
export type LessonsProgressRequest = { 
/**
 * Request id.
 */
rid?: Rid | null, };

/**
 * How bad a move was, from the drop of its player's win probability (see [`Mark::of`]).
 */
export type Mark = "inaccuracy" | "mistake" | "blunder";

/**
 * What an operator did that the player concerned is told (`{"t":"moderation",…}`).
 */
export type ModerationAction = "warn" | "mute" | "unmute" | "rename" | "ban";

/**
 * A player as shown in `welcome` (with all ratings).
 */
export type PlayerInfo = { 
/**
 * Public id.
 */
id: string, 
/**
 * Display name.
 */
name: string, 
/**
 * Ratings by game kind (empty until ratings exist).
 */
ratings: { [key in string]: JsonValue }, 
/**
 * Addition: the account this player claimed (its name), absent for a guest.
 */
account?: string | null, };

/**
 * Why a player is reported: a fixed list, so operators can sort and count reports.
 */
export type ReportReason = "chat_abuse" | "cheating" | "offensive_name" | "other";

/**
 * `report`: a player reports another, optionally pointing at a chat line (of a game's
 * chat or a waiting room's, by its author and `ts`) or at a game. Its fields are the
 * message's own (`{"t":"report","player_id":…}`).
 */
export type ReportRequest = { 
/**
 * Request id.
 */
rid?: Rid | null, 
/**
 * The reported player.
 */
player_id: string, 
/**
 * Why.
 */
reason: ReportReason, 
/**
 * The reporter's words (at most 500 characters).
 */
text?: string | null, 
/**
 * The game concerned (its chat, with `ts`, or the game itself).
 */
game_id?: string | null, 
/**
 * The waiting room whose chat line is reported (with `ts`).
 */
code?: string | null, 
/**
 * The reported chat line's `ts` (a line of the reported player in that chat).
 */
ts?: number, };

/**
 * A request id chosen by the client: an integer or a string of at most 64 characters.
 *
 * Why its own type: the answer must echo it exactly (an integer stays an integer), and an
 * over-long string must be rejected as `bad_request` at parse time.
 */
export type Rid = number | string;

/**
 * Addition: one line of a waiting room's chat, as `room.chat.history` carries it (the
 * room has one channel: everyone who opened the room reads it).
 */
export type RoomChatLine = { 
/**
 * The author's public id.
 */
id: string, 
/**
 * The author's display name when they wrote it.
 */
name: string, 
/**
 * The text (plain text: clients must never interpret it as markup).
 */
text: string, 
/**
 * When the server took it, ms since the epoch.
 */
ts: number, };

/**
 * A room as answered by `room.create` / `room.join`.
 */
export type RoomInfo = { 
/**
 * The room code.
 */
code: string, 
/**
 * The host.
 */
host: SeatPlayer, 
/**
 * Seats by side name; `null` when free.
 */
seats: { [key in string]: JsonValue }, 
/**
 * `waiting`, `started` or `closed`.
 */
status: RoomState, 
/**
 * Addition: the game id once started.
 */
game_id?: string | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * Validated options.
 */
options: JsonValue, 
/**
 * Clock request object.
 */
clock: JsonValue, 
/**
 * Rated flag.
 */
rated: boolean, 
/**
 * Visibility.
 */
visibility: Visibility, 
/**
 * Addition: the position the game starts from, when not the kind's start (`bot.play`
 * with a `position`); absent otherwise.
 */
start?: string | null, };

/**
 * Where a room is in its life, as the wire and the store write it.
 */
export type RoomState = "waiting" | "started" | "closed";

/**
 * A player as shown in a game document's `players` and in rooms.
 */
export type SeatPlayer = { 
/**
 * Public id.
 */
id: string, 
/**
 * Display name.
 */
name: string, 
/**
 * Rating for this game kind, `null` until ratings exist.
 */
rating: JsonValue | null, 
/**
 * Addition: a computer player (absent for people).
 */
bot?: boolean, };

/**
 * Every message the server sends, tagged by `t`.
 */
export type ServerMessage = { "t": "welcome", 
/**
 * Echoed rid, if the hello had one.
 */
rid?: Rid | null, 
/**
 * Protocol version (1).
 */
protocol: number, 
/**
 * Who this session is.
 */
player: PlayerInfo, 
/**
 * The secret token to be this player again.
 */
token: string, 
/**
 * Ids of unfinished games this player sits in.
 */
games: Array<string>, 
/**
 * Server time, ms since the epoch.
 */
server_time: number, 
/**
 * Addition: the deployment this server belongs to, a stable id shared by every
 * node of a cluster (kept in the store). Tokens are valid across a deployment, so
 * clients keep them under this id rather than under a server address. Empty when
 * read from a server that does not send it.
 */
deployment: string, } | { "t": "pong", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * Server time, ms since the epoch.
 */
server_time: number, } | { "t": "ok", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The game's new seq (after an action) or current seq (after a diff replay).
 */
seq?: number | null, 
/**
 * Addition: the game this answer concerns, when there is one.
 */
game_id?: string | null, } | { "t": "error", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * Machine-readable code.
 */
code: ErrorCode, 
/**
 * Text for a person.
 */
message: string, } | { "t": "game.snapshot", 
/**
 * Echoed rid (absent on automatic snapshots after `game.started`).
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The document's seq.
 */
seq: number, 
/**
 * The document.
 */
doc: JsonValue, } | { "t": "game.diff", 
/**
 * The game.
 */
game_id: string, 
/**
 * The new seq.
 */
seq: number, 
/**
 * The JSON Patch.
 */
patch: JsonValue, } | { "t": "game.crowd", 
/**
 * The game.
 */
game_id: string, 
/**
 * Connections watching that are not the seated players'.
 */
spectators: number, 
/**
 * Whether each seated player has a connection, keyed by side name.
 */
online: { [key in string]: JsonValue }, } | { "t": "legal", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The seq the moves are legal at.
 */
seq: number, 
/**
 * Canonical notations.
 */
moves: Array<string>, } | { "t": "room", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The room (boxed: it is much larger than the other messages).
 */
room: RoomInfo, } | { "t": "game.started", 
/**
 * The game.
 */
game_id: string, 
/**
 * Game kind.
 */
kind: string, 
/**
 * This player's side.
 */
side: string, 
/**
 * Addition: the arena that paired this game (absent for other games).
 */
arena?: string | null, } | { "t": "queued", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The queue's description.
 */
queue: JsonValue, 
/**
 * Position in the queue.
 */
position: number, } | { "t": "lobby", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The lobby document's seq.
 */
seq: number, 
/**
 * The lobby document.
 */
doc: JsonValue, } | { "t": "lobby.diff", 
/**
 * The new seq.
 */
seq: number, 
/**
 * The JSON Patch.
 */
patch: JsonValue, } | { "t": "bot.invite", 
/**
 * The room to join.
 */
code: string, 
/**
 * Its game kind.
 */
kind: string, 
/**
 * The level asked for.
 */
level: number, } | { "t": "analysis", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * Where its review stands.
 */
state: AnalysisState, 
/**
 * The review, once `done`.
 */
result?: AnalysisResult | null, } | { "t": "analysis.job", 
/**
 * The job (one lease of the game's review to this worker).
 */
job: string, 
/**
 * The game.
 */
game_id: string, 
/**
 * Its kind.
 */
kind: string, 
/**
 * Its validated options.
 */
options: JsonValue, 
/**
 * Its moves from the start, canonical notation.
 */
moves: Array<string>, } | { "t": "record", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The game.
 */
game_id: string, 
/**
 * The record's text (see [`crate::record`]).
 */
text: string, } | { "t": "history", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * One summary per game, newest first.
 */
games: Array<JsonValue>, 
/**
 * Pass as `before` for the next page; `null` on the last page.
 */
next_before: number | null, } | { "t": "player", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The page, as `GET /api/players/<id>` serves it: `{"id","name","bot","ratings":
 * {<kind>:{"rating","deviation","provisional","games"}},"recent":[<summaries>]}`.
 */
player: JsonValue, } | { "t": "leaderboard", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The game kind.
 */
kind: string, 
/**
 * Best first: `{"rank","id","name","rating","deviation","games"}` each, as `GET
 * /api/leaderboard/<kind>` serves them.
 */
players: Array<JsonValue>, } | { "t": "link.code", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The one-time code to type on the other device.
 */
code: string, 
/**
 * When the code expires, ms since the epoch (server time).
 */
expires_ms: number, } | { "t": "link.token", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The new token; a `hello` with it is the linked player.
 */
token: string, 
/**
 * The linked player's id.
 */
player_id: string, 
/**
 * The linked player's name.
 */
name: string, } | { "t": "account", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The claimed account's name; `null` while the player is a guest.
 */
name: string | null, } | { "t": "account.token", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The new token; a `hello` with it is the account's player.
 */
token: string, 
/**
 * The player's id.
 */
player_id: string, 
/**
 * The player's name.
 */
name: string, } | { "t": "devices", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * Oldest first.
 */
devices: Array<DeviceInfo>, } | { "t": "shutdown", 
/**
 * Text for a person.
 */
message: string, } | { "t": "queue.status", 
/**
 * The queue, as in `queued`.
 */
queue: JsonValue, 
/**
 * Place in the queue, 1-based, in arrival order.
 */
position: number, 
/**
 * How many others wait in the same queue.
 */
same_queue: number, 
/**
 * How many players wait in all other queues.
 */
other_queues: number, 
/**
 * How long the player has waited so far, ms.
 */
waited_ms: number, } | { "t": "chat", 
/**
 * The game.
 */
game_id: string, 
/**
 * Its channel.
 */
channel: ChatChannel, 
/**
 * The author's public id.
 */
id: string, 
/**
 * The author's display name.
 */
name: string, 
/**
 * The text (plain text, never markup).
 */
text: string, 
/**
 * When the server took it, ms since the epoch.
 */
ts: number, } | { "t": "chat.history", 
/**
 * The game.
 */
game_id: string, 
/**
 * The lines.
 */
lines: Array<ChatEntry>, 
/**
 * Whether spectators may post.
 */
spectators: boolean, 
/**
 * The ids this player muted in this game.
 */
muted: Array<string>, } | { "t": "chat.spectators", 
/**
 * The game.
 */
game_id: string, 
/**
 * Whether spectators may post now.
 */
on: boolean, } | { "t": "room.chat", 
/**
 * The room's code.
 */
code: string, 
/**
 * The author's public id.
 */
id: string, 
/**
 * The author's display name.
 */
name: string, 
/**
 * The text (plain text, never markup).
 */
text: string, 
/**
 * When the server took it, ms since the epoch.
 */
ts: number, } | { "t": "room.chat.history", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The room's code (normalised).
 */
code: string, 
/**
 * The room's status: `waiting`, `started` or `closed`.
 */
status: RoomState, 
/**
 * The game the room started, once it did.
 */
game_id?: string | null, 
/**
 * The lines.
 */
lines: Array<RoomChatLine>, 
/**
 * Whether `room.say` is taken (the room still waits); a started room's chat
 * stays readable.
 */
open: boolean, } | { "t": "arena", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The document's seq.
 */
seq: number, 
/**
 * The document.
 */
doc: JsonValue, } | { "t": "arena.diff", 
/**
 * The arena.
 */
id: string, 
/**
 * The new seq.
 */
seq: number, 
/**
 * The JSON Patch.
 */
patch: JsonValue, } | { "t": "position", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * Game kind.
 */
kind: string, 
/**
 * The options, every one filled in with its default if not given.
 */
options: JsonValue, 
/**
 * The position string after the moves.
 */
position: string, 
/**
 * The moves played, in canonical notation (as many as were asked for).
 */
moves: Array<string>, 
/**
 * The side to act; `null` once the game has ended.
 */
to_act: string | null, 
/**
 * Every legal action of the side to act, canonical, sorted (empty once ended).
 */
legal: Array<string>, 
/**
 * `state` `playing` or `ended`, `winner` a side or `null`, `reason` as in a game
 * document's `status`.
 */
status: { state: string, winner: string | null, reason: string | null }, 
/**
 * The board view, exactly what a game document's `state` carries for this position.
 */
view: Record<string, any>, 
/**
 * The static geometry the view is drawn on (as `GET /api/kinds/<kind>` gives it).
 */
geometry: Record<string, any>, } | { "t": "lessons.progress", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * Every kind with a lesson, each with its steps done in the lesson's order.
 */
done: { [key in string]: Array<string> }, } | { "t": "reported", 
/**
 * Echoed rid.
 */
rid?: Rid | null, 
/**
 * The report's id.
 */
report_id: string, } | { "t": "moderation", 
/**
 * What was decided.
 */
action: ModerationAction, 
/**
 * The operator's reason, as written.
 */
reason: string, 
/**
 * Until when (mutes and bans for a time; ms since the epoch).
 */
until_ms?: number | null, 
/**
 * A sentence for a person, saying all of it.
 */
message: string, };

/**
 * Room visibility: public rooms and games are listed and watchable by anyone.
 */
export type Visibility = "public" | "private";
