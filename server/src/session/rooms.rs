//! The room requests of a session: create a waiting room, join one by its code.

use super::*;
use crate::services::hosting::Joined;

impl Session {
    /// `room.create`: a waiting room with these (checked) settings, the host seated on
    /// `side` (a side name or `random`); its code.
    pub(super) async fn room_create(
        &mut self,
        rid: Option<Rid>,
        setup: GameSetup,
        rated: bool,
        visibility: Visibility,
        side: String,
    ) -> Result<RoomCode, ApiError> {
        let side_names = setup.side_names();
        let side_index = match side.as_str() {
            "random" => usize::from(rand::random::<bool>()),
            name => side_names.iter().position(|n| *n == name).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidOptions,
                    format!(
                        "side must be 'random', '{}' or '{}'",
                        side_names[0], side_names[1]
                    ),
                )
            })?,
        };
        let mut host = self.seat_player()?;
        let open = self
            .hub
            .rooms
            .waiting_hosted_by(&PlayerId::from(host.id.as_str()))
            .len();
        if open >= self.hub.config.max_rooms_per_player {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("you already host {open} open rooms: close one (room.leave) first"),
            ));
        }
        self.hub
            .ratings
            .fill_seat(&mut host, setup.kind_id())
            .await?;
        let mut seats = [None, None];
        seats[side_index] = Some(host.clone());
        let room = self.hub.rooms.create(Room {
            code: RoomCode::default(),
            setup,
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
        let me = self.seat_player()?;
        let typed = code;
        let code = RoomCode::typed(code);
        // Matched forgivingly, echoed as typed.
        let joined = self.hub.hosting.join(&code, me).await.map_err(|e| {
            if e.code == ErrorCode::NotFound {
                ApiError::no_room(typed)
            } else {
                e
            }
        })?;
        match joined {
            Joined::Waiting(room) => {
                self.send(&ServerMessage::Room {
                    rid,
                    room: Box::new(room.info()),
                });
                Ok(())
            }
            Joined::Started(game_id) => {
                Box::pin(self.watch(rid, &game_id, None, Some(code.into_string()))).await
            }
            Joined::Start { room, game } => {
                self.send(&ServerMessage::Room {
                    rid,
                    room: Box::new(room.info()),
                });
                self.hub
                    .announce_from_room(&game, room.side_names(), Some(code))
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
        let typed = code;
        let code = RoomCode::typed(code);
        let room = self
            .hub
            .rooms
            .leave(&code, &me)
            .ok_or_else(|| ApiError::no_room(typed))?;
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
