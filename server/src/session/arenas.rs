//! The arena requests of a session: `arena.create`, `arena.watch`, `arena.unwatch`,
//! `arena.join`, `arena.pause`, `arena.cancel` (protocol/docs/PROTOCOL.md, "Arenas
//! (additions)"); the service is [`crate::services::arenas`].

use stoa_protocol::wire::{ClientMessage, ErrorCode};

use super::Session;
use crate::error::ApiError;
use crate::ids::ArenaId;

impl Session {
    /// One arena request.
    pub(super) async fn arena(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        let me = self.me()?.clone();
        let arenas = self.hub.arenas.clone();
        match msg {
            ClientMessage::ArenaCreate { rid, settings } => {
                arenas.create(&self.conn, &me, rid, &settings).await
            }
            ClientMessage::ArenaWatch { rid, id, code } => {
                arenas
                    .watch(
                        &self.conn,
                        &me.id,
                        rid,
                        id.map(ArenaId::from).as_ref(),
                        code.as_deref(),
                    )
                    .await
            }
            ClientMessage::ArenaUnwatch { rid, id } => {
                arenas.unwatch(self.conn.id, &ArenaId::from(id));
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::ArenaJoin { rid, id, code } => {
                arenas
                    .join(&me, id.map(ArenaId::from).as_ref(), code.as_deref())
                    .await?;
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::ArenaPause { rid, id } => {
                arenas.pause(&me.id, &ArenaId::from(id)).await?;
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::ArenaCancel { rid, id } => {
                arenas.cancel(&me.id, &ArenaId::from(id)).await?;
                self.ok(rid, None, None);
                Ok(())
            }
            _ => Err(ApiError::new(ErrorCode::BadRequest, "not an arena request")),
        }
    }
}
