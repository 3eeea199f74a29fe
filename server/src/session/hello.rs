//! `hello`: who the connection is (a known player by token, or a new guest), and the
//! `welcome` that tells it. Each `hello` records its device (see `devices`).

use stoa_protocol::wire::Credentials;

use super::*;

/// What a `hello` says, as it came.
pub(super) struct Said {
    pub protocol: u32,
    pub token: Option<String>,
    pub name: Option<String>,
    pub bot: bool,
    pub device: Option<String>,
    pub login: Option<Credentials>,
}

impl Session {
    pub(super) async fn hello(&mut self, rid: Option<Rid>, said: Said) -> Result<(), ApiError> {
        let Said {
            protocol,
            token,
            name,
            bot,
            device,
            login,
        } = said;
        if protocol != PROTOCOL_VERSION {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("unsupported protocol {protocol}; this server speaks {PROTOCOL_VERSION}"),
            ));
        }
        let name = name.map(|n| valid_name(&n)).transpose()?;
        let first = if login.is_some() {
            "device"
        } else {
            "first device"
        };
        let label = devices::valid_label(device, if bot { "bot" } else { first })?;
        let (player, token) = match login {
            Some(_) if token.is_some() => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "say hello with a token or a login, not both",
                ))
            }
            Some(Credentials {
                name: account,
                password,
            }) => {
                let player = self
                    .hub
                    .accounts
                    .sign_in(&account, &password.0, self.ip)
                    .await?;
                // Refused before a device is made for the banned account.
                self.hub
                    .moderation
                    .check_hello(&player.id, self.hub.time.now_ms())?;
                let token = self.new_device(&player, label.clone()).await?;
                (player, token)
            }
            None => self.identify(token, name, bot).await?,
        };
        // Every token of a banned player is refused (the sanction names the player).
        self.hub
            .moderation
            .check_hello(&player.id, self.hub.time.now_ms())?;
        let device = devices::device_record(ids::token_hash(&token), label);
        self.hub
            .store_call(self.hub.store.seen_device(&player.id, &device))
            .await?;
        let games = self
            .hub
            .store_call(self.hub.store.unfinished_games(&player.id))
            .await?;
        let ratings = self.hub.ratings.welcome_map(&player.id).await?;
        self.conn.set_player(player.id.clone());
        // Before the connection is listed: a revocation finds it by its device.
        self.conn.set_device(device.id.clone());
        let first = self.hub.players.connect(&player.id, self.conn.clone());
        if first {
            self.hub.presence(&player.id, true).await;
        }
        tracing::info!(player = %player.id, "hello");
        self.send(&ServerMessage::Welcome {
            rid,
            protocol: PROTOCOL_VERSION,
            player: PlayerInfo {
                id: player.id.to_string(),
                name: player.name.clone(),
                ratings,
                account: player.account.clone(),
            },
            token,
            games: games.into_iter().map(GameId::into_string).collect(),
            server_time: self.hub.time.now_ms(),
            deployment: self.hub.deployment.clone(),
        });
        let me = player.id.clone();
        self.player = Some(player);
        self.device = Some(device.id);
        // Warnings and renames given while the player was away, shown once.
        crate::services::moderator::enforce::deliver_notices(&self.hub, &me).await;
        Ok(())
    }

    /// `conflict` when an operator reset this player's name from `name` (and did not undo
    /// it): a client that says its old name back at its next `hello` is refused it.
    async fn not_a_reset_name(&self, player: &PlayerId, name: &str) -> Result<(), ApiError> {
        use crate::domain::account::name_key;
        use crate::domain::moderation::SanctionKind;
        let sanctions = self
            .hub
            .store_call(self.hub.store.moderation().sanctions_of(player))
            .await?;
        let key = name_key(name);
        let reset = sanctions.iter().any(|s| {
            s.kind == SanctionKind::Rename
                && s.undone.is_none()
                && s.old_name.as_deref().map(name_key) == Some(key.clone())
        });
        if reset {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("an operator reset the name '{name}': choose another name"),
            ));
        }
        Ok(())
    }

    /// The player a `hello` names: the token's (renamed if it says a new name), or a new
    /// guest with a fresh token.
    async fn identify(
        &self,
        token: Option<String>,
        name: Option<String>,
        bot: bool,
    ) -> Result<(PlayerRecord, String), ApiError> {
        let found = match token {
            Some(token) => {
                let hash = ids::token_hash(&token);
                let found = self
                    .hub
                    .store_call(self.hub.store.player_by_token_hash(&hash))
                    .await?;
                match found {
                    // A known player who says a new name takes it (games already seated
                    // keep the name they started with); a claimed player's name is its
                    // account's, and nobody takes a claimed account's name.
                    Some(mut p) => {
                        if let Some(n) = name.filter(|n| *n != p.name) {
                            if let Some(account) = &p.account {
                                if crate::domain::account::name_key(&n)
                                    != crate::domain::account::name_key(account)
                                {
                                    return Err(ApiError::new(
                                        ErrorCode::Conflict,
                                        format!("a claimed account keeps its name '{account}'"),
                                    ));
                                }
                            }
                            self.hub
                                .accounts
                                .check_display_name(&n, Some(p.id.as_str()))
                                .await?;
                            self.not_a_reset_name(&p.id, &n).await?;
                            self.hub
                                .store_call(self.hub.store.rename_player(&p.id, &n))
                                .await?;
                            p.name = n;
                        }
                        (p, token)
                    }
                    None => {
                        return Err(ApiError::new(
                            ErrorCode::Unauthorized,
                            "unknown or revoked token",
                        ))
                    }
                }
            }
            None => {
                if let Some(n) = &name {
                    self.hub.accounts.check_display_name(n, None).await?;
                }
                let name = name.unwrap_or_else(|| {
                    format!("guest-{}", &ids::room_code()[..5].to_ascii_lowercase())
                });
                let token = ids::token();
                let record = PlayerRecord {
                    id: ids::player_id(),
                    name,
                    token_hash: ids::token_hash(&token),
                    created_ms: ids::now_ms(),
                    bot,
                    account: None,
                };
                self.hub
                    .store_call(self.hub.store.create_player(&record))
                    .await?;
                self.hub.identities.remember(&record);
                (record, token)
            }
        };
        Ok(found)
    }
}
