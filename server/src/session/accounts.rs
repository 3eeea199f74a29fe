//! Accounts from a connection: `account` (is this player claimed?), `account.claim`,
//! `account.login` (a new device token for an account), `account.password` and
//! `account.logout` (this device's token stops working). The rules live in
//! [`crate::services::accounts`]; here they meet the connection (its player, its device,
//! its address).

use super::*;

impl Session {
    /// The accounts family: accounts, device links and the devices of an account.
    pub(super) async fn dispatch_account(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            ClientMessage::LinkCode { rid } => Box::pin(self.link_code(rid)).await,
            ClientMessage::LinkRedeem { rid, code, device } => {
                Box::pin(self.link_redeem(rid, code, device)).await
            }
            ClientMessage::Devices { rid } => Box::pin(self.devices(rid)).await,
            ClientMessage::Account { rid } => Box::pin(self.account(rid)).await,
            ClientMessage::AccountClaim {
                rid,
                name,
                password,
            } => Box::pin(self.account_claim(rid, &name, &password.0)).await,
            ClientMessage::AccountLogin {
                rid,
                name,
                password,
                device,
            } => Box::pin(self.account_login(rid, &name, &password.0, device)).await,
            ClientMessage::AccountPassword {
                rid,
                current,
                new,
                revoke_others,
            } => Box::pin(self.account_password(rid, &current.0, &new.0, revoke_others)).await,
            ClientMessage::AccountLogout { rid } => Box::pin(self.account_logout(rid)).await,
            ClientMessage::DeviceRevoke { rid, id } => Box::pin(self.device_revoke(rid, id)).await,
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

    /// `account`: the account this player claimed, read afresh (another device may have
    /// claimed it since this connection's `hello`).
    pub(super) async fn account(&mut self, rid: Option<Rid>) -> Result<(), ApiError> {
        let name = self.stored_me().await?.account;
        self.send(&ServerMessage::Account { rid, name });
        Ok(())
    }

    /// This connection's player as stored now, not as its `hello` found it: another device
    /// may have claimed the account or changed it since.
    async fn stored_me(&self) -> Result<PlayerRecord, ApiError> {
        let me = self.me()?.id.clone();
        self.hub
            .store_call(self.hub.store.player(&me))
            .await?
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "say hello first"))
    }

    /// `account.claim`: this player takes a unique name and a password, and is named so.
    pub(super) async fn account_claim(
        &mut self,
        rid: Option<Rid>,
        name: &str,
        password: &str,
    ) -> Result<(), ApiError> {
        let player = self.stored_me().await?;
        let me = player.id.clone();
        let account = self.hub.accounts.claim(&player, name, password).await?;
        tracing::info!(player = %me, account = %account.name, "account claimed");
        if let Some(p) = self.player.as_mut() {
            p.name = account.name.clone();
            p.account = Some(account.name.clone());
        }
        self.send(&ServerMessage::Account {
            rid,
            name: Some(account.name),
        });
        Ok(())
    }

    /// `account.login`: a new device token of the account's player; this connection stays
    /// what it was (as with `link.redeem`).
    pub(super) async fn account_login(
        &mut self,
        rid: Option<Rid>,
        name: &str,
        password: &str,
        device: Option<String>,
    ) -> Result<(), ApiError> {
        let label = devices::valid_label(device, "device")?;
        let player = self.hub.accounts.sign_in(name, password, self.ip).await?;
        self.carry_lessons(&player.id).await?;
        let token = self.new_device(&player, label).await?;
        self.send(&ServerMessage::AccountToken {
            rid,
            token,
            player_id: player.id.into_string(),
            name: player.name,
        });
        Ok(())
    }

    /// A new token of `player` for a device labelled `label`, recorded among its devices.
    pub(super) async fn new_device(
        &self,
        player: &PlayerRecord,
        label: String,
    ) -> Result<String, ApiError> {
        let token = ids::token();
        let record = devices::device_record(ids::token_hash(&token), label);
        self.hub
            .store_call(self.hub.store.add_device(&player.id, &record))
            .await?;
        tracing::info!(player = %player.id, device = %record.id, "device added");
        Ok(token)
    }

    /// `account.password`: a new password, given the current one; with `revoke_others`
    /// every other device of the player is signed out too.
    pub(super) async fn account_password(
        &mut self,
        rid: Option<Rid>,
        current: &str,
        new: &str,
        revoke_others: bool,
    ) -> Result<(), ApiError> {
        let player = self.stored_me().await?;
        let me = player.id.clone();
        self.hub
            .accounts
            .change_password(&player, current, new)
            .await?;
        if revoke_others {
            let list = self.hub.store_call(self.hub.store.devices(&me)).await?;
            for d in list
                .into_iter()
                .filter(|d| self.device.as_deref() != Some(d.id.as_str()))
            {
                if self
                    .hub
                    .store_call(self.hub.store.revoke_device(&me, &d.id))
                    .await?
                {
                    self.hub.players.end_device(&me, &d.id);
                    self.hub.topology.device_revoked(&me, &d.id).await;
                }
            }
        }
        self.send(&ServerMessage::Ok {
            rid,
            seq: None,
            game_id: None,
        });
        Ok(())
    }

    /// `account.logout`: this device's token stops working (the device is revoked, as
    /// `device.revoke` of itself would).
    pub(super) async fn account_logout(&mut self, rid: Option<Rid>) -> Result<(), ApiError> {
        let device = self
            .device
            .clone()
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "say hello first"))?;
        self.device_revoke(rid, device).await
    }
}
