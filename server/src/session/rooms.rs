//! The room requests of a session: create a waiting room, join one by its code.

use super::*;

impl Session {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn room_create(
        &mut self,
        rid: Option<Rid>,
        kind: String,
        options: Value,
        clock: Option<Value>,
        rated: bool,
        visibility: Visibility,
        side: String,
    ) -> Result<String, ApiError> {
        let (game_kind, options, clock) =
            crate::clock_request::validate_settings(&kind, &options, clock.as_ref())?;
        let side_index = match side.as_str() {
            "random" => usize::from(rand::random::<bool>()),
            name => game_kind
                .side_names
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::InvalidOptions,
                        format!(
                            "side must be 'random', '{}' or '{}'",
                            game_kind.side_names[0], game_kind.side_names[1]
                        ),
                    )
                })?,
        };
        let mut host = self.seat_player()?;
        let open = self.hub.rooms.waiting_hosted_by(&host.id).len();
        if open >= self.hub.config.max_rooms_per_player {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("you already host {open} open rooms: close one (room.leave) first"),
            ));
        }
        self.hub.ratings.fill_seat(&mut host, &kind).await?;
        let mut seats = [None, None];
        seats[side_index] = Some(host.clone());
        let room = self.hub.rooms.create(Room {
            code: String::new(),
            kind,
            side_names: game_kind.side_names,
            options,
            clock,
            rated,
            visibility,
            host,
            seats,
            status: RoomStatus::Waiting,
        });
        if let Err(e) = self
            .hub
            .store_call(self.hub.store.save_room(&room.record()))
            .await
        {
            self.hub.rooms.remove(&room.code);
            return Err(e);
        }
        self.send(&ServerMessage::Room {
            rid,
            room: Box::new(room.info()),
        });
        Ok(room.code.clone())
    }

    pub(super) async fn room_join(&mut self, rid: Option<Rid>, code: &str) -> Result<(), ApiError> {
        let mut me = self.seat_player()?;
        let code = ids::normalize_code(code);
        let cluster = self.hub.topology.spans_nodes();
        if cluster || self.hub.rooms.get(&code).is_none() {
            // After a restart only waiting rooms are in memory: a started one is in the
            // store. In a cluster the store is the truth: the room may live on another node.
            let stored = self.hub.recovery.stored_room(&code).await;
            if let Some(room) = self.hub.store_call(async { stored }).await? {
                let local_waits = self
                    .hub
                    .rooms
                    .get(&code)
                    .is_some_and(|r| r.status == RoomStatus::Waiting);
                if cluster && !(local_waits && room.status == RoomStatus::Waiting) {
                    self.hub.rooms.replace(room);
                } else {
                    self.hub.rooms.restore(room);
                }
            }
        }
        if let Some(room) = self.hub.rooms.get(&code) {
            self.hub.ratings.fill_seat(&mut me, &room.kind).await?;
        }
        match self.hub.rooms.join(&code, &me) {
            JoinOutcome::NotFound => Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no room '{code}'"),
            )),
            JoinOutcome::Closed => Err(ApiError::new(ErrorCode::Conflict, "this room is closed")),
            JoinOutcome::Waiting(room) => {
                self.send(&ServerMessage::Room {
                    rid,
                    room: Box::new(room.info()),
                });
                Ok(())
            }
            JoinOutcome::Started(game_id) => {
                Box::pin(self.watch(rid, &game_id, None, Some(code))).await
            }
            JoinOutcome::Start(room, game_id) => {
                let players = match (&room.seats[0], &room.seats[1]) {
                    (Some(a), Some(b)) => [a.clone(), b.clone()],
                    _ => {
                        self.hub.rooms.revert_start(&code, &me.id);
                        return Err(ApiError::new(ErrorCode::Conflict, "the room is not full"));
                    }
                };
                // The seat is taken in the store first: only one joiner, on whichever node,
                // starts the room's game.
                let claimed = self
                    .hub
                    .store_call(self.hub.store.claim_room(&room.record()))
                    .await;
                match claimed {
                    Ok(true) => {}
                    Ok(false) => {
                        self.hub.rooms.revert_start(&code, &me.id);
                        let stored = self.hub.recovery.stored_room(&code).await;
                        let stored = self.hub.store_call(async { stored }).await?;
                        return match stored.map(|r| r.status) {
                            Some(RoomStatus::Started(game_id)) => {
                                self.hub.rooms.started(&code, &game_id);
                                Box::pin(self.watch(rid, &game_id, None, Some(code))).await
                            }
                            _ => Err(ApiError::new(ErrorCode::Conflict, "this room is closed")),
                        };
                    }
                    Err(e) => {
                        self.hub.rooms.revert_start(&code, &me.id);
                        return Err(e);
                    }
                }
                let new = NewGame {
                    id: game_id,
                    kind: room.kind.clone(),
                    options: room.options.clone(),
                    clock: room.clock.clone(),
                    rated: room.rated,
                    visibility: room.visibility,
                    code: Some(room.code.clone()),
                    players,
                    rematch_of: None,
                };
                let handle = match self.hub.create_game(new).await {
                    Ok(h) => h,
                    Err(e) => {
                        self.hub.rooms.revert_start(&code, &me.id);
                        if let Some(waiting) = self.hub.rooms.get(&code) {
                            let _ = self.hub.store.save_room(&waiting.record()).await;
                        }
                        return Err(e);
                    }
                };
                self.hub
                    .matchmaker
                    .record_sides([handle.players[0].as_str(), handle.players[1].as_str()]);
                let _ = self
                    .hub
                    .store_call(self.hub.store.save_room(&room.record()))
                    .await;
                self.send(&ServerMessage::Room {
                    rid,
                    room: Box::new(room.info()),
                });
                self.hub
                    .announce_from_room(&handle, room.side_names, Some(code.clone()))
                    .await;
                Ok(())
            }
        }
    }

    /// `room.leave`: a seated player leaves a waiting room (a host's leave closes it).
    pub(super) async fn room_leave(
        &mut self,
        rid: Option<Rid>,
        code: &str,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let code = ids::normalize_code(code);
        let room = self
            .hub
            .rooms
            .leave(&code, &me)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no room '{code}'")))?;
        if room.status == RoomStatus::Closed {
            let _ = self
                .hub
                .store_call(self.hub.store.save_room(&room.record()))
                .await;
        }
        self.ok(rid, None, None);
        Ok(())
    }
}
