//! A player's devices and the one-time codes that link them (see [`DeviceRecord`]).
//!
//! Keys: `P:player:{id}:devices` (hash: device id → JSON record, written once),
//! `P:player:{id}:seen` (hash: device id → last `hello` ms, rewritten at each), and
//! `P:link:<code>` (string: the player id, with the code's TTL). Last-seen lives apart from
//! the record so a `hello` is one plain `HSET`, never a read-modify-write.
//!
//! Why no script spans the token and the device: `P:token:<hash>` is in another hash slot.
//! The token is the truth (a `hello` reads only it): revoking deletes it first, so a revoked
//! device can never say `hello` again even if a crash leaves its record listed.

use std::collections::HashMap;

use redis::AsyncCommands;

use super::encoding::{decode, encode};
use super::keys::key_safe;
use super::RedisStore;
use crate::ids::PlayerId;
use crate::store::{DeviceRecord, StoreError, StoreResult};

impl RedisStore {
    fn link_key(&self, code: &str) -> String {
        self.key(&["link", code])
    }

    pub(super) async fn add_device_record(
        &self,
        player_id: &PlayerId,
        device: &DeviceRecord,
    ) -> StoreResult<()> {
        if !key_safe(player_id) || !key_safe(&device.token_hash) || !key_safe(&device.id) {
            return Err(StoreError::Conflict("malformed player id or device".into()));
        }
        let mut conn = self.conn();
        let taken: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(self.key(&["token", &device.token_hash]))
                    .arg(player_id)
                    .arg("NX")
                    .query_async(&mut conn),
            )
            .await?;
        if taken.is_none() {
            return Err(StoreError::Conflict("token hash exists".into()));
        }
        let key = self.player_key(player_id, Some("devices"));
        let _: i64 = self
            .run(conn.hset(key, &device.id, encode(device)?))
            .await?;
        Ok(())
    }

    pub(super) async fn seen_device_record(
        &self,
        player_id: &PlayerId,
        device: &DeviceRecord,
    ) -> StoreResult<()> {
        if !key_safe(player_id) || !key_safe(&device.id) || !key_safe(&device.token_hash) {
            return Ok(());
        }
        let mut conn = self.conn();
        // Only a live token is recorded (a revoked one names nobody).
        let owner: Option<String> = self
            .run(conn.get(self.key(&["token", &device.token_hash])))
            .await?;
        if owner.as_deref() != Some(player_id.as_str()) {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hset_nx(
                self.player_key(player_id, Some("devices")),
                &device.id,
                encode(device)?,
            )
            .ignore()
            .hset(
                self.player_key(player_id, Some("seen")),
                &device.id,
                device.last_seen_ms,
            )
            .ignore();
        self.run(pipe.query_async::<()>(&mut conn)).await
    }

    pub(super) async fn device_records(
        &self,
        player_id: &PlayerId,
    ) -> StoreResult<Vec<DeviceRecord>> {
        if !key_safe(player_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let (records, seen): (HashMap<String, String>, HashMap<String, u64>) = self
            .run(
                redis::pipe()
                    .hgetall(self.player_key(player_id, Some("devices")))
                    .hgetall(self.player_key(player_id, Some("seen")))
                    .query_async(&mut conn),
            )
            .await?;
        let mut list = Vec::with_capacity(records.len());
        for text in records.values() {
            let mut d: DeviceRecord = decode(text)?;
            if let Some(ms) = seen.get(&d.id) {
                d.last_seen_ms = d.last_seen_ms.max(*ms);
            }
            list.push(d);
        }
        list.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(list)
    }

    pub(super) async fn revoke_device_record(
        &self,
        player_id: &PlayerId,
        device_id: &str,
    ) -> StoreResult<bool> {
        if !key_safe(player_id) || !key_safe(device_id) {
            return Ok(false);
        }
        let mut conn = self.conn();
        let devices = self.player_key(player_id, Some("devices"));
        let text: Option<String> = self.run(conn.hget(&devices, device_id)).await?;
        let Some(text) = text else {
            return Ok(false);
        };
        let device: DeviceRecord = decode(&text)?;
        let token_key = self.key(&["token", &device.token_hash]);
        let owner: Option<String> = self.run(conn.get(&token_key)).await?;
        if owner.as_deref() == Some(player_id.as_str()) {
            let _: i64 = self.run(conn.del(&token_key)).await?;
        }
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hdel(&devices, device_id)
            .ignore()
            .hdel(self.player_key(player_id, Some("seen")), device_id)
            .ignore();
        self.run(pipe.query_async::<()>(&mut conn)).await?;
        Ok(true)
    }

    pub(super) async fn create_link(
        &self,
        code: &str,
        player_id: &PlayerId,
        ttl_ms: u64,
    ) -> StoreResult<bool> {
        if !key_safe(code) || !key_safe(player_id) {
            return Err(StoreError::Conflict(
                "malformed link code or player id".into(),
            ));
        }
        let mut conn = self.conn();
        let set: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(self.link_key(code))
                    .arg(player_id)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms.max(1))
                    .query_async(&mut conn),
            )
            .await?;
        Ok(set.is_some())
    }

    pub(super) async fn take_link(&self, code: &str) -> StoreResult<Option<PlayerId>> {
        if !key_safe(code) {
            return Ok(None);
        }
        let mut conn = self.conn();
        // GETDEL: read and delete in one command, so two nodes racing for one code cannot
        // both redeem it; an expired key is already gone.
        self.run(
            redis::cmd("GETDEL")
                .arg(self.link_key(code))
                .query_async(&mut conn),
        )
        .await
    }
}
