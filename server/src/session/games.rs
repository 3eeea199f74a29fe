//! The game requests of a session: watch, act, and their answers for a finished game
//! (read from the store when no actor serves it any more).

use super::*;

impl Session {
    /// A game that is not live: its final document from the store, or `not_found`.
    pub(super) async fn finished(&self, game_id: &GameId) -> Result<Finished, ApiError> {
        let finished = self
            .hub
            .store_call(self.hub.store.finished_game(game_id))
            .await?
            .ok_or_else(|| ApiError::no_game(game_id.as_str()))?;
        let record = self
            .hub
            .store_call(self.hub.store.game(game_id))
            .await?
            .ok_or_else(|| ApiError::no_game(game_id.as_str()))?;
        Ok(Finished {
            seq: finished.seq,
            doc: finished.doc,
            visibility: record.visibility,
            code: record.code,
            players: [record.players[0].id.clone(), record.players[1].id.clone()],
        })
    }

    /// The game id and code of a started room, when `id` is a room code and not a game id.
    pub(super) fn room_game(&self, id: &GameId) -> Option<(GameId, RoomCode)> {
        if self.hub.games.get(id).is_some() {
            return None;
        }
        let room = self.hub.rooms.get(&RoomCode::typed(id.as_str()))?;
        match room.status {
            RoomStatus::Started(game_id) => Some((game_id, room.code)),
            _ => None,
        }
    }

    pub(super) async fn watch(
        &mut self,
        rid: Option<Rid>,
        game_id: &GameId,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<(), ApiError> {
        // A started room's code in place of the game id watches its game, with the code as
        // the key: a spectator of a private game then needs only the code it was given and,
        // unlike `room.join`, can never take a free seat by accident.
        let (game_id, code) = match self.room_game(game_id) {
            Some((id, room_code)) => (id, Some(room_code.into_string())),
            None => (game_id.clone(), code),
        };
        if self.hub.game(&game_id).await?.is_none() {
            // A room code whose room still waits (here or, in a cluster, stored by another
            // node): there is nothing to watch yet, and watching never takes a seat.
            let room_code = RoomCode::typed(game_id.as_str());
            let waiting = match self.hub.rooms.get(&room_code) {
                Some(room) => Some(room),
                None => {
                    self.hub
                        .store_call(
                            self.hub
                                .recovery
                                .stored_room(&RoomCode::from(room_code.as_str())),
                        )
                        .await?
                }
            };
            match waiting.map(|r| r.status) {
                Some(RoomStatus::Waiting) => {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        format!(
                            "room '{}' is still waiting for its second player: its game has not started",
                            ids::typed_code(game_id.as_str())
                        ),
                    ));
                }
                Some(RoomStatus::Started(id)) if id != game_id => {
                    // Started on another node of a cluster: watch its game with the code.
                    return Box::pin(self.watch(rid, &id, since, Some(room_code.into_string())))
                        .await;
                }
                _ => {}
            }
        }
        let conn = self.conn.clone();
        let r = self
            .call(&game_id, |reply| Command::Watch {
                conn,
                rid: rid.clone(),
                since,
                code: code.clone(),
                reply: Some(reply),
            })
            .await;
        match r {
            Some(r) => self.answer(rid, &game_id, r?),
            None => self.watch_finished(rid, &game_id, since, code).await,
        }
    }

    /// `game.watch` of a game no actor serves any more: its final document from the store,
    /// for those who may see it, with the crowd as it is now.
    async fn watch_finished(
        &mut self,
        rid: Option<Rid>,
        game_id: &GameId,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<(), ApiError> {
        let finished = self.finished(game_id).await?;
        let me = self.me()?.id.clone();
        if !finished.may_see(me.as_str(), code.as_deref()) {
            return Err(ApiError::private_game());
        }
        let Finished { seq, doc, .. } = finished;
        // A finished game has no live subscribers: its crowd is nobody watching
        // and whoever of its players is connected now.
        let online = doc["players"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(side, p)| {
                        let id = p["id"].as_str().unwrap_or_default();
                        (
                            side.clone(),
                            Value::Bool(self.hub.players.is_online(&PlayerId::from(id))),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let crowd = ServerMessage::GameCrowd {
            game_id: game_id.to_string(),
            spectators: 0,
            online,
        };
        if since == Some(seq) {
            self.send(&crowd);
            self.ok(rid, Some(seq), Some(game_id.to_string()));
        } else {
            self.send(&ServerMessage::GameSnapshot {
                rid,
                game_id: game_id.to_string(),
                seq,
                doc,
            });
            self.send(&crowd);
        }
        Ok(())
    }

    pub(super) async fn act(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
        act: Act,
    ) -> Result<(), ApiError> {
        let player_id = self.me()?.id.clone();
        let rematch = act == Act::Rematch;
        // The action's diff reaches this connection before its answer: both leave in one
        // write (one system call and one packet instead of two).
        let conn = self.conn.clone();
        let _cork = conn.cork();
        let r = self
            .call(&game_id, |reply| Command::Act {
                player_id,
                act,
                reply,
            })
            .await;
        match r {
            Some(r) => self.answer(rid, &game_id, r?),
            None => {
                let finished = self.finished(&game_id).await?;
                if !finished.players.contains(&self.me()?.id) {
                    return Err(ApiError::new(
                        ErrorCode::Forbidden,
                        "only the seated players act in this game",
                    ));
                }
                if rematch {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        "this game is too old for a rematch: create a room",
                    ));
                }
                Err(ApiError::new(ErrorCode::GameOver, "the game is over"))
            }
        }
    }

    /// `game.unwatch`: ends a subscription (answered `ok` whether or not there was one).
    pub(super) async fn unwatch(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
    ) -> Result<(), ApiError> {
        if let Some(h) = self.hub.games.get(&game_id) {
            let _ =
                h.tx.send(Command::Unwatch {
                    conn_id: self.conn.id,
                })
                .await;
        }
        self.conn.remove_sub(&game_id);
        self.ok(rid, None, Some(game_id.into_string()));
        Ok(())
    }

    /// `game.legal`: the legal moves of the player now (none in a finished game).
    pub(super) async fn legal(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let answer = self
            .call(&game_id, |reply| Command::Legal {
                player_id: Some(me.clone()),
                reply,
            })
            .await;
        match answer {
            Some(r) => self.answer(rid, &game_id, r?),
            None => {
                let finished = self.finished(&game_id).await?;
                if !finished.may_see(me.as_str(), None) {
                    return Err(ApiError::private_game());
                }
                self.send(&ServerMessage::Legal {
                    rid,
                    game_id: game_id.into_string(),
                    seq: finished.seq,
                    moves: Vec::new(),
                });
                Ok(())
            }
        }
    }
}

/// A finished game as the store keeps it: its final document and who may see it.
pub(super) struct Finished {
    pub(super) seq: u64,
    pub(super) doc: Value,
    pub(super) visibility: Visibility,
    /// Its room code, for a private game.
    pub(super) code: Option<RoomCode>,
    pub(super) players: [PlayerId; 2],
}

impl Finished {
    /// The live game's rule (`game::actor`'s `may_see`) for a stored one: anyone when it
    /// is public, its players, whoever gives its room code.
    pub(super) fn may_see(&self, me: &str, code: Option<&str>) -> bool {
        crate::domain::visibility::Access {
            visibility: self.visibility,
            players: [self.players[0].as_str(), self.players[1].as_str()],
            code: self.code.as_ref().map(RoomCode::as_str),
        }
        .may_see(Some(me), code)
    }
}
