//! The chat requests of a session: they go to the game's actor, which decides them (or
//! forwards them to the game's owner in a cluster).

use super::*;
use crate::domain::chat::ChatOp;
use crate::game::ChatRequest;

impl Session {
    /// The chat family: `chat.say`, `chat.mute` and `chat.spectators`.
    pub(super) async fn dispatch_chat(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            ClientMessage::ChatSay {
                rid,
                game_id,
                channel,
                text,
            } => {
                self.may_say(&text)?;
                let op = ChatOp::Say { channel, text };
                Box::pin(self.chat(rid, game_id.into(), op)).await
            }
            ClientMessage::ChatMute {
                rid,
                game_id,
                player_id,
                muted,
            } => {
                let op = ChatOp::Mute {
                    target: player_id,
                    muted,
                };
                Box::pin(self.chat(rid, game_id.into(), op)).await
            }
            ClientMessage::ChatSpectators { rid, game_id, on } => {
                let op = ChatOp::Spectators { on };
                Box::pin(self.chat(rid, game_id.into(), op)).await
            }
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

    /// Whether this player may say `text` in any chat: `forbidden` while an operator's mute
    /// holds (on every node: each holds the sanctions), `bad_request` for a line the
    /// deployment's word filter refuses.
    pub(super) fn may_say(&self, text: &str) -> Result<(), ApiError> {
        let me = self.me()?;
        let moderation = &self.hub.moderation;
        moderation.check_chat(&me.id, self.hub.time.now_ms())?;
        if moderation.words.refuses(text) {
            self.hub.metrics.moderation.filtered();
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "this line holds a word this server does not allow in chat",
            ));
        }
        Ok(())
    }

    /// `chat.say`, `chat.mute`, `chat.spectators`: answered `ok` (with the game's current
    /// seq) or an error that changed nothing.
    pub(super) async fn chat(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
        op: ChatOp,
    ) -> Result<(), ApiError> {
        let me = self.me()?;
        let (player_id, name) = (me.id.clone(), me.name.clone());
        let conn_id = self.conn.id;
        let answer = self
            .call(&game_id, |reply| {
                Command::Chat(Box::new(ChatRequest {
                    conn_id,
                    player_id,
                    name,
                    op,
                    reply,
                }))
            })
            .await;
        match answer {
            Some(r) => self.answer(rid, &game_id, r?),
            None => {
                // Not live: unknown (`not_found`), or over and gone with its chat.
                self.finished(&game_id).await?;
                Err(ApiError::new(
                    ErrorCode::Conflict,
                    "this game's chat is closed: the game ended a while ago",
                ))
            }
        }
    }
}
