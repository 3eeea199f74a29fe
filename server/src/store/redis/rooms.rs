//! Rooms (see [`RoomRecord`]).
//!
//! Keys: `P:room:{code}` (hash: the record's fields) and `P:rooms:waiting` (set: the codes
//! of the rooms waiting for their second player, which recovery and the lobby read). The
//! room's own hash is the truth; the index may lag it by a crash (it is written after the
//! room, in another slot), and readers check each listed room's status.

use std::collections::HashMap;

use redis::AsyncCommands;

use super::encoding::{flat, from_fields, to_fields};
use super::keys::key_safe;
use super::RedisStore;
use crate::ids::RoomCode;
use crate::store::{RoomRecord, StoreError, StoreResult};
use stoa_protocol::wire::RoomState;

impl RedisStore {
    /// Adds a room to (or removes it from) the waiting index, which recovery and the lobby
    /// read; the room's own hash is the truth, the index may lag it by a crash.
    async fn index_room(&self, code: &RoomCode, waiting: bool) -> StoreResult<()> {
        let mut conn = self.conn();
        let key = self.key(&["rooms", "waiting"]);
        if waiting {
            self.run(conn.sadd::<_, _, ()>(&key, code)).await
        } else {
            self.run(conn.srem::<_, _, ()>(&key, code)).await
        }
    }

    async fn claim_room_record(&self, room: &RoomRecord) -> StoreResult<bool> {
        if !key_safe(&room.code) {
            return Err(StoreError::Conflict("malformed room code".into()));
        }
        let mut conn = self.conn();
        let mut inv = self.inner.scripts.claim_room.prepare_invoke();
        inv.key(self.room_key(&room.code))
            .arg(flat(to_fields(room)?));
        let r: i64 = self.run(inv.invoke_async(&mut conn)).await?;
        Ok(r == 1)
    }

    pub(super) async fn store_room(&self, room: &RoomRecord) -> StoreResult<()> {
        if !key_safe(&room.code) {
            return Err(StoreError::Conflict("malformed room code".into()));
        }
        let key = self.room_key(&room.code);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .del(&key)
            .ignore()
            .hset_multiple(&key, &to_fields(room)?)
            .ignore();
        let mut conn = self.conn();
        self.run(pipe.query_async::<()>(&mut conn)).await?;
        self.index_room(&room.code, room.status == RoomState::Waiting)
            .await
    }

    pub(super) async fn claim_and_index_room(&self, room: &RoomRecord) -> StoreResult<bool> {
        let claimed = self.claim_room_record(room).await?;
        if claimed {
            self.index_room(&room.code, room.status == RoomState::Waiting)
                .await?;
        }
        Ok(claimed)
    }

    pub(super) async fn room_record(&self, code: &RoomCode) -> StoreResult<Option<RoomRecord>> {
        if !key_safe(code) {
            return Ok(None);
        }
        let mut conn = self.conn();
        let fields: HashMap<String, String> = self.run(conn.hgetall(self.room_key(code))).await?;
        from_fields(fields)
    }

    pub(super) async fn waiting_room_records(&self) -> StoreResult<Vec<RoomRecord>> {
        let mut conn = self.conn();
        let mut codes: Vec<RoomCode> = self
            .run(conn.smembers(self.key(&["rooms", "waiting"])))
            .await?;
        codes.sort();
        let mut all: Vec<HashMap<String, String>> = Vec::with_capacity(codes.len());
        for code in &codes {
            all.push(self.run(conn.hgetall(self.room_key(code))).await?);
        }
        let mut rooms = Vec::new();
        for fields in all {
            if let Some(room) = from_fields::<RoomRecord>(fields)? {
                if room.status == RoomState::Waiting {
                    rooms.push(room);
                }
            }
        }
        Ok(rooms)
    }
}
