//! The key layout (every key under the deployment's prefix `P`, `--redis-prefix`, so several
//! deployments share one Redis without seeing each other). Every hash field holds one JSON
//! value, so a record round-trips through serde and stays readable with `HGETALL`:
//!
//! | key | type | what |
//! |---|---|---|
//! | `P:player:{id}` | hash | a [`PlayerRecord`](crate::store::PlayerRecord) (the token only as its SHA-256) |
//! | `P:token:<sha256>` | string | the player id owning that token hash |
//! | `P:player:{id}:unfinished` | sorted set | unfinished games of the player, by creation ms |
//! | `P:player:{id}:finished` | sorted set | finished games of the player, by end ms |
//! | `P:player:{id}:devices` | hash | device id → the JSON [`DeviceRecord`](crate::store::DeviceRecord) (one per token) |
//! | `P:player:{id}:seen` | hash | device id → its last `hello`, ms |
//! | `P:player:{id}:lessons:<kind>` | set | the ids of the steps of a kind's lesson the player has done |
//! | `P:account:<sha256>` | string | a claimed [`AccountRecord`](crate::store::AccountRecord) by the SHA-256 of its folded name |
//! | `P:link:<code>` | string | the player a one-time link code names, with the code's TTL (`SET NX PX`, taken with `GETDEL`) |
//! | `P:player:{id}:ratings` | hash | kind → the player's JSON `Rating` in that kind |
//! | `P:ratings:<kind>` | sorted set | every rated player by rating in a kind |
//! | `P:leaderboard:<kind>` | sorted set | players whose rating in a kind is established (not provisional), by rating: the leaderboard |
//! | `P:leaderboards:built` | string | set once the boards were built from ratings saved before they were kept |
//! | `P:room:{code}` | hash | a [`RoomRecord`](crate::store::RoomRecord) |
//! | `P:rooms:waiting` | set | codes of rooms waiting for an opponent |
//! | `P:game:{id}` | hash | a [`GameRecord`](crate::store::GameRecord) plus `last_seq` |
//! | `P:game:{id}:log` | list | the action log, one JSON [`ActionRecord`](crate::store::ActionRecord) per entry |
//! | `P:game:{id}:final` | string | the JSON [`FinishedGame`](crate::store::FinishedGame) once ended |
//! | `P:game:{id}:lease` | string | the node owning the live game (cluster mode, with a TTL) |
//! | `P:games:unfinished` | sorted set | every unfinished game, by creation ms (recovery) |
//! | `P:games:finished` | sorted set | every finished game, by end ms |
//! | `P:replicated` | string | a counter written only to make a read's `WAIT` cover it (`--redis-min-replicas`) |
//! | `P:deployment` | string | the deployment's id (`welcome.deployment`), set once with `SET NX` |
//!
//! Braces are literal: `{id}` and `{code}` are Redis Cluster hash tags, so a game's keys
//! (and a player's, and a room's) live in one slot and the append script (game hash, log,
//! lease) runs on a cluster too. No script or transaction spans two records; the indexes are
//! written beside the records, one command each (a game: `P:games:unfinished`, the record,
//! then its players' lists, an order whose crash leftovers recovery repairs). The cluster mode adds `P:nodes` (sorted
//! set of heartbeats), `P:matchmaker` (the matchmaking node's lease), `P:lobby:<node>` (each
//! node's part of the lobby), `P:ratinglock:<player>`, and the counters of the deployment-wide
//! quotas `P:ipwin:<ip>:<window>` and `P:attempts:<sha256 of the key>:<window>` (sign-ins); its pub/sub channels are
//! `P:bus:game:<id>`, `P:bus:node:<node>` and `P:bus:push`.
//!
//!
//! Why every key is built here: a key names a record in every deployment that shares the
//! Redis, so a typo'd key is silent data loss; one function per kind of key keeps the
//! layout in one place, and [`key_safe`] keeps a client's id from reaching into other keys.

use super::RedisStore;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};

/// An id goes to Redis as its text (a member of an index set, a script argument), exactly
/// as the string it was before it had a type.
macro_rules! id_as_redis_arg {
    ($($id:ty),*) => {$(
        impl redis::ToRedisArgs for $id {
            fn write_redis_args<W>(&self, out: &mut W)
            where
                W: ?Sized + redis::RedisWrite,
            {
                self.as_str().write_redis_args(out)
            }
        }

        // And comes back as its text: an index read from Redis is a list of ids.
        impl redis::FromRedisValue for $id {
            fn from_redis_value(v: &redis::Value) -> redis::RedisResult<Self> {
                String::from_redis_value(v).map(<$id>::from)
            }

            fn from_owned_redis_value(v: redis::Value) -> redis::RedisResult<Self> {
                String::from_owned_redis_value(v).map(<$id>::from)
            }
        }
    )*};
}

id_as_redis_arg!(ArenaId, GameId, PlayerId, RoomCode);

impl RedisStore {
    /// A key under this deployment's prefix (the cluster keeps its keys beside the store's).
    pub fn key(&self, parts: &[&str]) -> String {
        let mut k = self.inner.prefix.clone();
        for p in parts {
            k.push(':');
            k.push_str(p);
        }
        k
    }

    pub(super) fn game_key(&self, id: &GameId) -> String {
        self.key(&["game", &format!("{{{id}}}")])
    }

    pub(super) fn log_key(&self, id: &GameId) -> String {
        self.key(&["game", &format!("{{{id}}}"), "log"])
    }

    pub(super) fn final_key(&self, id: &GameId) -> String {
        self.key(&["game", &format!("{{{id}}}"), "final"])
    }

    /// A player's keys (`P:player:{id}` and its sets), in the player's hash slot.
    pub(super) fn player_key(&self, id: &PlayerId, suffix: Option<&str>) -> String {
        let tagged = format!("{{{id}}}");
        match suffix {
            Some(suffix) => self.key(&["player", &tagged, suffix]),
            None => self.key(&["player", &tagged]),
        }
    }

    pub(super) fn arena_key(&self, id: &ArenaId) -> String {
        self.key(&["arena", id.as_str()])
    }

    pub(super) fn room_key(&self, code: &RoomCode) -> String {
        self.key(&["room", &format!("{{{code}}}")])
    }

    /// The key holding the id of the node that owns a live game (cluster mode).
    pub fn lease_key(&self, id: &GameId) -> String {
        self.key(&["game", &format!("{{{id}}}"), "lease"])
    }
}

/// Whether an id or code from a client may be part of a key (they are generated as short
/// alphanumerics; anything else cannot exist, and must not reach into other keys).
pub(super) fn key_safe<S: AsRef<str> + ?Sized>(s: &S) -> bool {
    let s = s.as_ref();
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_ids_never_reach_keys() {
        assert!(key_safe("gabc123"));
        assert!(!key_safe("g:log"));
        assert!(!key_safe(""));
        assert!(!key_safe("a b"));
        assert!(!key_safe(&"a".repeat(65)));
    }
}
