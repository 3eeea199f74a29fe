//! One connection's session: `hello`/`welcome`, identities, rate limits, and routing each
//! request to the rooms registry or a game actor.
//!
//! Why separate from the socket loop: this is where the protocol's rules live (first message,
//! error codes, one answer per rid), independent of how frames arrive.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use stoa_protocol::wire::{
    parse_client_message, ClientMessage, ErrorCode, PlayerInfo, Rid, SeatPlayer, ServerMessage,
    Visibility, PROTOCOL_VERSION,
};
use tokio::sync::oneshot;

use crate::error::ApiError;
use crate::game::{Act, Answer, Command, NewGame};
use crate::hub::Hub;
use crate::ids;
use crate::outbound::ConnHandle;
use crate::rate_limit::{ConnLimiter, Verdict};
use crate::recovery;
use crate::rooms::{JoinOutcome, Room, RoomStatus};
use crate::store::PlayerRecord;

/// What the socket loop should do after a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

/// A session's state.
pub struct Session {
    hub: Arc<Hub>,
    conn: Arc<ConnHandle>,
    player: Option<PlayerRecord>,
    limiter: ConnLimiter,
}

impl Session {
    /// A session before `hello`.
    pub fn new(hub: Arc<Hub>, conn: Arc<ConnHandle>) -> Self {
        Session {
            limiter: Self::fresh_limiter(&hub),
            hub,
            conn,
            player: None,
        }
    }

    fn fresh_limiter(hub: &Hub) -> ConnLimiter {
        ConnLimiter::new(
            hub.config.rate_limit,
            hub.config.rate_close_factor,
            hub.config.rate_window(),
        )
    }

    /// Whether `hello` succeeded.
    pub fn identified(&self) -> bool {
        self.player.is_some()
    }

    fn send(&self, msg: &ServerMessage) {
        self.conn.send_msg(msg);
    }

    fn send_error(&self, rid: Option<Rid>, e: &ApiError) {
        self.send(&e.to_message(rid));
    }

    fn rate(&mut self, rid: &Option<Rid>) -> Option<Flow> {
        match self.limiter.check(Instant::now()) {
            Verdict::Allow => None,
            Verdict::Limit => {
                self.hub.metrics.rate_limited.inc();
                tracing::info!(player = ?self.player.as_ref().map(|p| &p.id), "request rate limited");
                self.send_error(
                    rid.clone(),
                    &ApiError::new(ErrorCode::RateLimited, "too many requests: slow down"),
                );
                Some(Flow::Continue)
            }
            Verdict::Close => {
                tracing::warn!(player = ?self.player.as_ref().map(|p| &p.id), "request flood: closing");
                Some(Flow::Close(1008, "request flood"))
            }
        }
    }

    /// A binary frame: `bad_request`.
    pub fn on_binary(&mut self) -> Flow {
        if let Some(flow) = self.rate(&None) {
            return flow;
        }
        self.send_error(
            None,
            &ApiError::new(ErrorCode::BadRequest, "binary frames are not accepted"),
        );
        Flow::Continue
    }

    /// One text frame.
    pub async fn on_text(&mut self, text: &str) -> Flow {
        self.hub.metrics.messages_in.inc();
        let msg = match parse_client_message(text) {
            Ok(msg) => msg,
            Err(e) => {
                if let Some(flow) = self.rate(&e.rid) {
                    return flow;
                }
                // Before `hello`, any message typed other than `hello` (known type with bad
                // fields included) is "another first message": unauthorized, then close.
                if !self.identified()
                    && (e.code == ErrorCode::UnknownType || typed_other_than_hello(text))
                {
                    self.send_error(
                        e.rid,
                        &ApiError::new(ErrorCode::Unauthorized, "the first message must be hello"),
                    );
                    return Flow::Close(1008, "hello expected");
                }
                self.send(&ServerMessage::error(e.rid, e.code, e.message));
                return Flow::Continue;
            }
        };
        let rid = msg.rid().cloned();
        if let ClientMessage::Ping { rid } = &msg {
            if self.identified() {
                self.send(&ServerMessage::Pong {
                    rid: rid.clone(),
                    server_time: self.hub.time.now_ms(),
                });
                return Flow::Continue;
            }
        }
        if let Some(flow) = self.rate(&rid) {
            return flow;
        }
        if !self.identified() {
            return match msg {
                ClientMessage::Hello {
                    rid,
                    protocol,
                    token,
                    name,
                    bot,
                } => {
                    // Boxed: it runs once per connection, its state need not stay with it.
                    match Box::pin(self.hello(rid.clone(), protocol, token, name, bot)).await {
                        // The handshake is not one of the 50 requests a client may make per
                        // window: the budget starts with the session.
                        Ok(()) => self.limiter = Self::fresh_limiter(&self.hub),
                        Err(e) => self.send_error(rid, &e),
                    }
                    Flow::Continue
                }
                _ => {
                    self.send_error(
                        rid,
                        &ApiError::new(ErrorCode::Unauthorized, "the first message must be hello"),
                    );
                    Flow::Close(1008, "hello expected")
                }
            };
        }
        if *self.hub.shutdown.borrow() {
            self.send_error(
                rid,
                &ApiError::new(ErrorCode::Unavailable, "the server is shutting down"),
            );
            return Flow::Continue;
        }
        if let Err(e) = self.dispatch(msg).await {
            self.send_error(rid, &e);
        }
        Flow::Continue
    }

    async fn hello(
        &mut self,
        rid: Option<Rid>,
        protocol: u32,
        token: Option<String>,
        name: Option<String>,
        bot: bool,
    ) -> Result<(), ApiError> {
        if protocol != PROTOCOL_VERSION {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("unsupported protocol {protocol}; this server speaks {PROTOCOL_VERSION}"),
            ));
        }
        let name = name.map(|n| valid_name(&n)).transpose()?;
        let (player, token) = match token {
            Some(token) => {
                let hash = ids::token_hash(&token);
                let found = self
                    .hub
                    .store_call(self.hub.store.player_by_token_hash(&hash))
                    .await?;
                match found {
                    // A known player who says a new name takes it (games already seated
                    // keep the name they started with).
                    Some(mut p) => {
                        if let Some(n) = name.filter(|n| *n != p.name) {
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
                };
                self.hub
                    .store_call(self.hub.store.create_player(&record))
                    .await?;
                (record, token)
            }
        };
        let games = self
            .hub
            .store_call(self.hub.store.unfinished_games(&player.id))
            .await?;
        let ratings = crate::ratings::welcome_map(&self.hub, &player.id).await?;
        self.conn.set_player(player.id.clone());
        let first = self.hub.players.connect(&player.id, self.conn.clone());
        if first {
            self.hub.presence(&player.id, true).await;
        }
        tracing::info!(player = %player.id, "hello");
        self.send(&ServerMessage::Welcome {
            rid,
            protocol: PROTOCOL_VERSION,
            player: PlayerInfo {
                id: player.id.clone(),
                name: player.name.clone(),
                ratings,
            },
            token,
            games,
            server_time: self.hub.time.now_ms(),
            deployment: self.hub.deployment.clone(),
        });
        self.player = Some(player);
        Ok(())
    }

    fn me(&self) -> Result<&PlayerRecord, ApiError> {
        self.player
            .as_ref()
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "say hello first"))
    }

    fn seat_player(&self) -> Result<SeatPlayer, ApiError> {
        let p = self.me()?;
        Ok(SeatPlayer {
            id: p.id.clone(),
            name: p.name.clone(),
            rating: None,
            bot: p.bot,
        })
    }

    async fn dispatch(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            ClientMessage::Hello { .. } => Err(ApiError::new(
                ErrorCode::Conflict,
                "this connection has already said hello",
            )),
            ClientMessage::Ping { rid } => {
                self.send(&ServerMessage::Pong {
                    rid,
                    server_time: self.hub.time.now_ms(),
                });
                Ok(())
            }
            ClientMessage::GameWatch {
                rid,
                game_id,
                since,
                code,
            } => {
                // Boxed: watching's state (a stored room's lookup among it) must not grow
                // every idle connection's task, which holds the largest request inline.
                Box::pin(self.watch(rid, &game_id, since, code)).await
            }
            ClientMessage::GameUnwatch { rid, game_id } => {
                if let Some(h) = self.hub.games.get(&game_id) {
                    let _ =
                        h.tx.send(Command::Unwatch {
                            conn_id: self.conn.id,
                        })
                        .await;
                }
                self.conn.remove_sub(&game_id);
                self.ok(rid, None, Some(game_id));
                Ok(())
            }
            ClientMessage::GameLegal { rid, game_id } => {
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
                        if !finished.may_see(&me, None) {
                            return Err(ApiError::private_game());
                        }
                        self.send(&ServerMessage::Legal {
                            rid,
                            game_id,
                            seq: finished.seq,
                            moves: Vec::new(),
                        });
                        Ok(())
                    }
                }
            }
            ClientMessage::GameMove {
                rid,
                game_id,
                mv,
                seq,
            } => self.act(rid, game_id, Act::Move { mv, seq }).await,
            ClientMessage::GameResign { rid, game_id } => self.act(rid, game_id, Act::Resign).await,
            ClientMessage::GameDraw {
                rid,
                game_id,
                action,
            } => self.act(rid, game_id, Act::Draw { action }).await,
            ClientMessage::GameAbort { rid, game_id } => self.act(rid, game_id, Act::Abort).await,
            ClientMessage::GameClaim { rid, game_id } => self.act(rid, game_id, Act::Claim).await,
            ClientMessage::GameRematch { rid, game_id } => {
                self.act(rid, game_id, Act::Rematch).await
            }
            ClientMessage::RoomCreate {
                rid,
                kind,
                options,
                clock,
                rated,
                visibility,
                side,
            } => Box::pin(self.room_create(rid, kind, options, clock, rated, visibility, side))
                .await
                .map(|_| ()),
            // Boxed: a rare request's state must not grow every idle connection's task.
            ClientMessage::BotServe { rid, kinds, levels } => {
                Box::pin(self.bot_serve(rid, kinds, levels)).await
            }
            ClientMessage::BotPlay {
                rid,
                kind,
                options,
                clock,
                level,
                side,
            } => Box::pin(self.bot_play(rid, kind, options, clock, level, side)).await,
            ClientMessage::RoomJoin { rid, code } => Box::pin(self.room_join(rid, &code)).await,
            ClientMessage::RoomLeave { rid, code } => {
                let me = self.me()?.id.clone();
                let code = ids::normalize_code(&code);
                let room = self.hub.rooms.leave(&code, &me).ok_or_else(|| {
                    ApiError::new(ErrorCode::NotFound, format!("no room '{code}'"))
                })?;
                if room.status == RoomStatus::Closed {
                    let _ = self
                        .hub
                        .store_call(self.hub.store.save_room(&room.record()))
                        .await;
                }
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::QueueJoin {
                rid,
                kind,
                options,
                clock,
                rated,
            } => {
                let me = self.me()?.clone();
                Box::pin(crate::matchmaker::queue_join(
                    &self.hub, &self.conn, &me, rid, kind, options, clock, rated,
                ))
                .await
            }
            ClientMessage::QueueLeave { rid } => {
                let me = self.me()?.id.clone();
                crate::matchmaker::queue_leave(&self.hub, &me).await;
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::LobbyWatch { rid } => {
                self.hub.lobby.watch(&self.hub, self.conn.clone(), rid);
                Ok(())
            }
            ClientMessage::LobbyUnwatch { rid } => {
                self.hub.lobby.unwatch(self.conn.id);
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::GameRecord { rid, game_id, code } => {
                let me = self.me()?.id.clone();
                // Boxed: a rare request's state must not grow every idle connection's task.
                let (setup, finished) = Box::pin(crate::records::finished_for(
                    &self.hub,
                    &game_id,
                    Some(&me),
                    code.as_deref(),
                ))
                .await?;
                self.send(&ServerMessage::Record {
                    rid,
                    game_id,
                    text: crate::records::record(&setup, &finished).to_text(),
                });
                Ok(())
            }
            ClientMessage::History {
                rid,
                player_id,
                before,
                limit,
            } => {
                let me = self.me()?.id.clone();
                let whose = player_id.unwrap_or_else(|| me.clone());
                let (games, next_before) = Box::pin(crate::records::history(
                    &self.hub,
                    &whose,
                    Some(&me),
                    before,
                    limit,
                ))
                .await?;
                self.send(&ServerMessage::History {
                    rid,
                    games,
                    next_before,
                });
                Ok(())
            }
        }
    }

    fn ok(&self, rid: Option<Rid>, seq: Option<u64>, game_id: Option<String>) {
        self.send(&ServerMessage::Ok { rid, seq, game_id });
    }

    fn answer(&self, rid: Option<Rid>, game_id: &str, answer: Answer) -> Result<(), ApiError> {
        match answer {
            Answer::Ok { seq } => self.ok(rid, Some(seq), Some(game_id.to_string())),
            Answer::Legal { seq, moves } => self.send(&ServerMessage::Legal {
                rid,
                game_id: game_id.to_string(),
                seq,
                moves,
            }),
            Answer::Sent => {}
        }
        Ok(())
    }

    /// Sends a command with a reply channel to a live game; `None` when the game is not
    /// live (never was, or its actor stopped).
    async fn call(
        &self,
        game_id: &str,
        make: impl FnOnce(crate::game::Reply) -> Command,
    ) -> Option<Result<Answer, ApiError>> {
        let handle = match self.hub.game(game_id).await {
            Ok(h) => h?,
            Err(e) => return Some(Err(e)),
        };
        let (tx, rx) = oneshot::channel();
        handle.tx.send(make(tx)).await.ok()?;
        rx.await.ok()
    }

    /// A game that is not live: its final document from the store, or `not_found`.
    async fn finished(&self, game_id: &str) -> Result<Finished, ApiError> {
        let finished = self
            .hub
            .store_call(self.hub.store.finished_game(game_id))
            .await?
            .ok_or_else(|| ApiError::no_game(game_id))?;
        let record = self
            .hub
            .store_call(self.hub.store.game(game_id))
            .await?
            .ok_or_else(|| ApiError::no_game(game_id))?;
        Ok(Finished {
            seq: finished.seq,
            doc: finished.doc,
            visibility: record.visibility,
            code: record.code,
            players: [record.players[0].id.clone(), record.players[1].id.clone()],
        })
    }

    /// The game id and code of a started room, when `id` is a room code and not a game id.
    fn room_game(&self, id: &str) -> Option<(String, String)> {
        if self.hub.games.get(id).is_some() {
            return None;
        }
        let room = self.hub.rooms.get(&ids::normalize_code(id))?;
        match room.status {
            RoomStatus::Started(game_id) => Some((game_id, room.code)),
            _ => None,
        }
    }

    async fn watch(
        &mut self,
        rid: Option<Rid>,
        game_id: &str,
        since: Option<u64>,
        code: Option<String>,
    ) -> Result<(), ApiError> {
        // A started room's code in place of the game id watches its game, with the code as
        // the key: a spectator of a private game then needs only the code it was given and,
        // unlike `room.join`, can never take a free seat by accident.
        let (game_id, code) = match self.room_game(game_id) {
            Some((id, room_code)) => (id, Some(room_code)),
            None => (game_id.to_string(), code),
        };
        if self.hub.game(&game_id).await?.is_none() {
            // A room code whose room still waits (here or, in a cluster, stored by another
            // node): there is nothing to watch yet, and watching never takes a seat.
            let room_code = ids::normalize_code(&game_id);
            let waiting = match self.hub.rooms.get(&room_code) {
                Some(room) => Some(room),
                None => {
                    let stored = recovery::stored_room(&self.hub, &room_code).await;
                    self.hub.store_call(async { stored }).await?
                }
            };
            match waiting.map(|r| r.status) {
                Some(RoomStatus::Waiting) => {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        format!("room '{room_code}' is still waiting for its second player: its game has not started"),
                    ));
                }
                Some(RoomStatus::Started(id)) if id != game_id => {
                    // Started on another node of a cluster: watch its game with the code.
                    return Box::pin(self.watch(rid, &id, since, Some(room_code))).await;
                }
                _ => {}
            }
        }
        let game_id = game_id.as_str();
        let conn = self.conn.clone();
        let r = self
            .call(game_id, |reply| Command::Watch {
                conn,
                rid: rid.clone(),
                since,
                code: code.clone(),
                reply: Some(reply),
            })
            .await;
        match r {
            Some(r) => self.answer(rid, game_id, r?),
            None => {
                let finished = self.finished(game_id).await?;
                let me = self.me()?.id.clone();
                if !finished.may_see(&me, code.as_deref()) {
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
                                (side.clone(), Value::Bool(self.hub.players.is_online(id)))
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
        }
    }

    async fn act(&mut self, rid: Option<Rid>, game_id: String, act: Act) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let r = self
            .call(&game_id, |reply| Command::Act {
                player_id: me.clone(),
                act: act.clone(),
                reply,
            })
            .await;
        match r {
            Some(r) => self.answer(rid, &game_id, r?),
            None => {
                let finished = self.finished(&game_id).await?;
                if !finished.players.contains(&me) {
                    return Err(ApiError::new(
                        ErrorCode::Forbidden,
                        "only the seated players act in this game",
                    ));
                }
                if act == Act::Rematch {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        "this game is too old for a rematch: create a room",
                    ));
                }
                Err(ApiError::new(ErrorCode::GameOver, "the game is over"))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn room_create(
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
        crate::ratings::fill_seat(&self.hub, &mut host, &kind).await?;
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

    /// `bot.serve`: a computer player is free for `bot.play` of `kinds` at `levels`.
    async fn bot_serve(
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
        crate::bots::served(&self.hub, self.conn.clone(), kinds, levels).await;
        self.ok(rid, None, None);
        Ok(())
    }

    /// `bot.play`: a private room for this player, and a free bot invited into it.
    async fn bot_play(
        &mut self,
        rid: Option<Rid>,
        kind: String,
        options: serde_json::Value,
        clock: Option<serde_json::Value>,
        level: u8,
        side: String,
    ) -> Result<(), ApiError> {
        if !(1..=5).contains(&level) {
            return Err(ApiError::new(ErrorCode::BadRequest, "level must be 1-5"));
        }
        let me = self.me()?.id.clone();
        // Settings are checked before a bot is taken off the list.
        crate::clock_request::validate_settings(&kind, &options, clock.as_ref())?;
        let Some(bot) = crate::bots::pick(&self.hub, &kind, level, &me).await else {
            let offered = crate::bots::offered_levels(&self.hub, &kind).await;
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
            .room_create(
                rid,
                kind.clone(),
                options,
                clock,
                false,
                Visibility::Private,
                side,
            )
            .await
        {
            Ok(code) => code,
            Err(e) => {
                crate::bots::release(&self.hub, &bot).await;
                return Err(e);
            }
        };
        crate::bots::invite(
            &self.hub,
            &bot,
            &ServerMessage::BotInvite { code, kind, level },
        )
        .await;
        Ok(())
    }

    async fn room_join(&mut self, rid: Option<Rid>, code: &str) -> Result<(), ApiError> {
        let mut me = self.seat_player()?;
        let code = ids::normalize_code(code);
        let cluster = self.hub.cluster.is_some();
        if cluster || self.hub.rooms.get(&code).is_none() {
            // After a restart only waiting rooms are in memory: a started one is in the
            // store. In a cluster the store is the truth: the room may live on another node.
            let stored = recovery::stored_room(&self.hub, &code).await;
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
            crate::ratings::fill_seat(&self.hub, &mut me, &room.kind).await?;
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
                        let stored = recovery::stored_room(&self.hub, &code).await;
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

    /// Ends the session: unsubscribes from every game, and reports the player offline when
    /// this was its last connection.
    pub async fn end(&mut self) {
        self.hub.lobby.unwatch(self.conn.id);
        for game_id in self.conn.subs() {
            if let Some(h) = self.hub.games.get(&game_id) {
                let _ =
                    h.tx.send(Command::Unwatch {
                        conn_id: self.conn.id,
                    })
                    .await;
            }
        }
        if let Some(p) = &self.player {
            if self.hub.players.disconnect(&p.id, self.conn.id) {
                // The last connection is gone: the player leaves its queue, and its waiting
                // rooms close unless it is back within the grace period.
                crate::matchmaker::queue_leave(&self.hub, &p.id).await;
                self.hub.presence(&p.id, false).await;
                crate::rooms::close_when_host_stays_away(self.hub.clone(), p.id.clone());
            }
        }
    }
}

/// Whether a frame is a JSON object whose `t` is a string other than `hello`.
fn typed_other_than_hello(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("t")?.as_str().map(|t| t != "hello"))
        .unwrap_or(false)
}

/// A display name as `hello` accepts it: trimmed, 1-24 printable characters.
fn valid_name(name: &str) -> Result<String, ApiError> {
    let n = name.trim().to_string();
    let len = n.chars().count();
    if !(1..=24).contains(&len) || n.chars().any(char::is_control) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "name must be 1-24 printable characters",
        ));
    }
    Ok(n)
}

/// Who may see a finished game read from the store (a live game's actor applies the same
/// rule to its own state): anyone when it is public, its players, whoever gives its code.
/// A finished game as the store keeps it: its final document and who may see it.
struct Finished {
    seq: u64,
    doc: Value,
    visibility: Visibility,
    /// Its room code, for a private game.
    code: Option<String>,
    players: [String; 2],
}

impl Finished {
    /// The live game's rule (`game::actor`'s `may_see`) for a stored one: anyone when it
    /// is public, its players, whoever gives its room code.
    fn may_see(&self, me: &str, code: Option<&str>) -> bool {
        self.visibility == Visibility::Public
            || self.players.iter().any(|p| p == me)
            || matches!((self.code.as_deref(), code), (Some(a), Some(b)) if a == ids::normalize_code(b))
    }
}
