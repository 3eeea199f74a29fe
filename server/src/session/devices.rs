//! Identity across devices: `link.code` (a one-time code naming this player), `link.redeem`
//! (another device trades the code for a token of its own), `devices` and `device.revoke`.
//!
//! Why the code lives in the store: the device that redeems it may be connected to another
//! node of a cluster; the store takes a code in one step, so it redeems once.

use std::time::{Duration, Instant};

use stoa_protocol::wire::DeviceInfo;

use super::*;
use crate::store::DeviceRecord;

/// Code redemptions a connection may try in one [`REDEEM_WINDOW`] (a code has 40 random
/// bits and lives 5 minutes: guessing is hopeless at this pace).
pub(super) const REDEEM_TRIES: u32 = 5;
/// The window of [`REDEEM_TRIES`].
pub(super) const REDEEM_WINDOW: Duration = Duration::from_secs(60);

/// A connection's redemption attempts: when the window started, and how many in it.
#[derive(Default)]
pub(super) struct RedeemTries(Option<(Instant, u32)>);

impl RedeemTries {
    /// Counts one attempt; `false` when the window's budget is spent.
    fn take(&mut self, now: Instant) -> bool {
        let (start, n) = match self.0 {
            Some((start, n)) if now.duration_since(start) < REDEEM_WINDOW => (start, n),
            _ => (now, 0),
        };
        if n >= REDEEM_TRIES {
            return false;
        }
        self.0 = Some((start, n + 1));
        true
    }
}

/// A device label as given, trimmed: 1-40 printable characters (`default` when absent).
pub(super) fn valid_label(label: Option<String>, default: &str) -> Result<String, ApiError> {
    let Some(label) = label else {
        return Ok(default.to_string());
    };
    let l = label.trim().to_string();
    if !(1..=40).contains(&l.chars().count()) || l.chars().any(char::is_control) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "device must be 1-40 printable characters",
        ));
    }
    Ok(l)
}

/// A device record for a token, made or seen now.
pub(super) fn device_record(token_hash: String, label: String) -> DeviceRecord {
    let now = ids::now_ms();
    DeviceRecord {
        id: ids::device_id(&token_hash),
        token_hash,
        label,
        created_ms: now,
        last_seen_ms: now,
    }
}

impl Session {
    /// `link.code`: a fresh one-time code naming this player.
    pub(super) async fn link_code(&mut self, rid: Option<Rid>) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let ttl = self.hub.config.link_code_ttl_ms;
        // 40 random bits: a clash with a live code is all but impossible; retried anyway.
        for _ in 0..3 {
            let code = ids::link_code();
            let stored = self.hub.store.create_link_code(&code, &me, ttl);
            if self.hub.store_call(stored).await? {
                self.send(&ServerMessage::LinkCode {
                    rid,
                    code,
                    expires_ms: ids::now_ms() + ttl,
                });
                return Ok(());
            }
        }
        Err(ApiError::new(
            ErrorCode::Unavailable,
            "no free link code; try again",
        ))
    }

    /// `link.redeem`: trades a code for a new token of the code's player.
    pub(super) async fn link_redeem(
        &mut self,
        rid: Option<Rid>,
        code: String,
        device: Option<String>,
    ) -> Result<(), ApiError> {
        let label = valid_label(device, "device")?;
        if !self.redeem_tries.take(Instant::now()) {
            return Err(ApiError::new(
                ErrorCode::RateLimited,
                format!("too many link codes tried: at most {REDEEM_TRIES} a minute"),
            ));
        }
        let code = ids::normalize_code(&code);
        let unknown = || ApiError::new(ErrorCode::NotFound, "unknown, expired or used link code");
        if code.len() != ids::LINK_CODE_LEN || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(unknown());
        }
        let store = &self.hub.store;
        let player_id = self
            .hub
            .store_call(store.take_link_code(&code))
            .await?
            .ok_or_else(unknown)?;
        let player = self
            .hub
            .store_call(store.player(&player_id))
            .await?
            .ok_or_else(unknown)?;
        self.carry_lessons(&player.id).await?;
        let token = ids::token();
        let record = device_record(ids::token_hash(&token), label);
        self.hub
            .store_call(store.add_device(&player.id, &record))
            .await?;
        tracing::info!(player = %player.id, device = %record.id, "device linked");
        self.send(&ServerMessage::LinkToken {
            rid,
            token,
            player_id: player.id.into_string(),
            name: player.name,
        });
        Ok(())
    }

    /// `devices`: this player's devices, oldest first.
    pub(super) async fn devices(&mut self, rid: Option<Rid>) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let list = self.hub.store_call(self.hub.store.devices(&me)).await?;
        let devices = list
            .into_iter()
            .map(|d| DeviceInfo {
                current: self.device.as_deref() == Some(d.id.as_str()),
                id: d.id,
                label: d.label,
                created_ms: d.created_ms,
                last_seen_ms: d.last_seen_ms,
            })
            .collect();
        self.send(&ServerMessage::Devices { rid, devices });
        Ok(())
    }

    /// `device.revoke`: the device's token stops working, and its open connections end at
    /// once, on this node and (through the topology) on the others; revoking this very
    /// device ends this connection too, after its `ok`.
    pub(super) async fn device_revoke(
        &mut self,
        rid: Option<Rid>,
        id: String,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let revoked = self.hub.store.revoke_device(&me, &id);
        if !self.hub.store_call(revoked).await? {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no device {id} of yours"),
            ));
        }
        // Ended before the `ok`: once the revoker hears it, no connection of the device on
        // this node serves another request (the revoking connection itself still gets its
        // `ok`, then closes).
        let ended = self.hub.players.end_device(&me, &id);
        tracing::info!(player = %me, device = %id, ended, "device revoked");
        self.hub.topology.device_revoked(&me, &id).await;
        self.send(&ServerMessage::Ok {
            rid,
            seq: None,
            game_id: None,
        });
        Ok(())
    }
}
