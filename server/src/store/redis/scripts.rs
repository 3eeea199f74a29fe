//! The Lua scripts that check and write in one step.
//!
//! Why Lua scripts: appending an action must check the seq, push the entry and raise the
//! seq reservation atomically, in one round trip; a script does all three, and Redis replays
//! it from its AOF as one unit.
//!
//! A script never spans two records (a cluster keeps each record's keys in one slot).

use redis::Script;

/// Creates a player hash unless it exists.
/// KEYS: player hash. ARGV: field/value pairs.
const CREATE_PLAYER: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
";

/// Creates a game hash unless its id is taken.
/// KEYS: game hash. ARGV: field/value pairs.
const CREATE_GAME: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'last_seq', '0', unpack(ARGV))
return 1
";

/// Appends one action: 1 appended, 2 already the last entry (a retried write), -1 no such
/// game, -2 seq not exactly one above the last one (the check that makes the log the one
/// order of a game's changes: a writer with a stale view cannot append), -3 the writer is
/// not the node holding the game's lease (cluster mode: a node that lost its lease, paused
/// or cut off, can never write the game again).
/// KEYS: game hash, log, lease. ARGV: seq, entry, the writing node ('' outside a cluster).
const APPEND_ACTION: &str = r"
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then
  return -3
end
local last = redis.call('HGET', KEYS[1], 'last_seq')
if not last then
  return -1
end
local seq = tonumber(ARGV[1])
if seq ~= tonumber(last) + 1 then
  if seq == tonumber(last) and redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then
    return 2
  end
  return -2
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'last_seq', ARGV[1])
return 1
";

/// Saves a room record only while the stored room still waits: 1 saved, 0 not (it started
/// or closed meanwhile, perhaps on another node).
/// KEYS: room hash. ARGV: field/value pairs.
const CLAIM_ROOM: &str = r#"
if redis.call('HGET', KEYS[1], 'status') ~= '"waiting"' then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#;

/// Saves an arena's state as version ARGV[1] only if the stored version is one below it
/// (none stored counts as 0): 1 saved, 0 not (another writer got there first).
/// KEYS: arena hash. ARGV: version, state.
const SAVE_ARENA: &str = r"
local v = redis.call('HGET', KEYS[1], 'version') or '0'
if tonumber(v) + 1 ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'state', ARGV[2])
return 1
";

/// The scripts, each loaded once per store (the client sends `EVALSHA` and loads the
/// script again when Redis forgot it, after a restart).
pub(super) struct Scripts {
    pub(super) create_player: Script,
    pub(super) create_game: Script,
    pub(super) append_action: Script,
    pub(super) claim_room: Script,
    pub(super) save_arena: Script,
}

impl Scripts {
    /// Every script, ready to invoke.
    pub(super) fn new() -> Scripts {
        Scripts {
            create_player: Script::new(CREATE_PLAYER),
            create_game: Script::new(CREATE_GAME),
            append_action: Script::new(APPEND_ACTION),
            claim_room: Script::new(CLAIM_ROOM),
            save_arena: Script::new(SAVE_ARENA),
        }
    }
}
