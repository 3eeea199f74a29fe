//! The chat requests of a session: they go to the game's actor, which decides them (or
//! forwards them to the game's owner in a cluster).

use super::*;
use crate::domain::chat::ChatOp;
use crate::game::ChatRequest;

impl Session {
    /// `chat.say`, `chat.mute`, `chat.spectators`: answered `ok` (with the game's current
    /// seq) or an error that changed nothing.
    pub(super) async fn chat(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
        op: ChatOp,
    ) -> Result<(), ApiError> {
        let me = self.me()?;
        let (player_id, name) = (me.id.to_string(), me.name.clone());
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
