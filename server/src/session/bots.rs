//! The bot requests of a session: serve as a bot, play against one.

use super::*;

impl Session {
    /// `bot.serve`: a computer player is free for `bot.play` of `kinds` at `levels`.
    pub(super) async fn bot_serve(
        &mut self,
        rid: Option<Rid>,
        kinds: Vec<String>,
        levels: Vec<u8>,
    ) -> Result<(), ApiError> {
        let me = self.me()?;
        if !me.bot {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only a computer player (stoa bot) may serve",
            ));
        }
        if let Some(k) = kinds.iter().find(|k| stoa_protocol::kind(k).is_err()) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("unknown game kind '{k}'"),
            ));
        }
        if levels.is_empty() || levels.iter().any(|l| !(1..=5).contains(l)) {
            return Err(ApiError::new(ErrorCode::BadRequest, "levels are 1-5"));
        }
        self.hub.bots.served(self.conn.clone(), kinds, levels).await;
        self.ok(rid, None, None);
        Ok(())
    }

    /// `bot.play`: a private room for this player, and a free bot invited into it (the
    /// settings checked by [`bot_setup`]).
    pub(super) async fn bot_play(
        &mut self,
        rid: Option<Rid>,
        setup: GameSetup,
        level: u8,
        side: String,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let kind = setup.kind_id();
        let Some(bot) = self.hub.bots.pick_anywhere(kind, level, &me).await else {
            let offered = self.hub.bots.offered_levels(kind).await;
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                if offered.is_empty() {
                    format!("no computer opponent for {kind} is free right now")
                } else {
                    format!("no computer opponent of level {level} is free for {kind} (free levels: {offered:?})")
                },
            ));
        };
        let code = match self
            .room_create(rid, setup, false, Visibility::Private, side)
            .await
        {
            Ok(code) => code,
            Err(e) => {
                self.hub.bots.release(&bot).await;
                return Err(e);
            }
        };
        self.hub
            .bots
            .invite(
                &bot,
                &ServerMessage::BotInvite {
                    code: code.into_string(),
                    kind: kind.to_string(),
                    level,
                },
            )
            .await;
        Ok(())
    }
}

/// A `bot.play`'s checked settings, in this order: the level (`bad_request`), the kind,
/// options and clock (`invalid_options`), then the `position` to start from, loaded by the
/// kind's engine (`bad_request` with its message, or when the game is over there).
pub(super) fn bot_setup(
    level: u8,
    kind: &str,
    options: &serde_json::Value,
    clock: Option<&serde_json::Value>,
    position: Option<String>,
) -> Result<GameSetup, ApiError> {
    if !(1..=5).contains(&level) {
        return Err(ApiError::new(ErrorCode::BadRequest, "level must be 1-5"));
    }
    let setup = GameSetup::parse(kind, options, clock)?;
    match position {
        Some(position) => setup.from_position(&position),
        None => Ok(setup),
    }
}
