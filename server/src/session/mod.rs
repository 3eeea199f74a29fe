//! One connection's session: `hello`/`welcome`, identities, rate limits, and routing each
//! request to the rooms registry or a game actor.
//!
//! Why separate from the socket loop: this is where the protocol's rules live (first message,
//! error codes, one answer per rid), independent of how frames arrive.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use stoa_protocol::wire::{
    parse_client_message, ClientMessage, ErrorCode, ExploreRequest, ParseError, PlayerInfo, Rid,
    SeatPlayer, ServerMessage, Visibility, PROTOCOL_VERSION,
};

use crate::domain::rate_limit::{ConnLimiter, Verdict};
use crate::domain::setup::GameSetup;
use crate::error::ApiError;
use crate::game::{Act, Answer, Command};
use crate::ids::{self, GameId, PlayerId, RoomCode};
use crate::net::frame::Frame;
use crate::net::outbound::ConnHandle;
use crate::services::hub::Hub;
use crate::services::rooms::{Room, RoomStatus};
use crate::store::PlayerRecord;

mod accounts;
mod analysis;
mod arenas;
mod bots;
mod chat;
mod devices;
mod explore;
mod games;
mod hello;
mod lessons;
mod records;
mod report;
mod room_chat;
mod rooms;

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
    /// The device id of the token this connection said `hello` with.
    device: Option<String>,
    redeem_tries: devices::RedeemTries,
    /// The rooms whose chat this connection opened (`room.watch`).
    rooms_open: Vec<RoomCode>,
    limiter: ConnLimiter,
    /// The client's address (the proxy's word for it with `--trust-proxy`): sign-in
    /// attempts are counted per address.
    ip: IpAddr,
}

impl Session {
    /// A session before `hello`, of a client at `ip`.
    pub fn new(hub: Arc<Hub>, conn: Arc<ConnHandle>, ip: IpAddr) -> Self {
        Session {
            ip,
            limiter: Self::fresh_limiter(&hub),
            hub,
            conn,
            player: None,
            device: None,
            redeem_tries: devices::RedeemTries::default(),
            rooms_open: Vec::new(),
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
            Err(e) => return self.unparsed(text, e),
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
            return self.before_hello(msg).await;
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

    /// A text frame that is no request: answered with the parse error, or, before
    /// `hello`, closed.
    fn unparsed(&mut self, text: &str, e: ParseError) -> Flow {
        if let Some(flow) = self.rate(&e.rid) {
            return flow;
        }
        // Before `hello`, any message typed other than `hello` (known type with bad
        // fields included) is "another first message": unauthorized, then close.
        if !self.identified() && (e.code == ErrorCode::UnknownType || typed_other_than_hello(text))
        {
            self.send_error(
                e.rid,
                &ApiError::new(ErrorCode::Unauthorized, "the first message must be hello"),
            );
            return Flow::Close(1008, "hello expected");
        }
        self.send(&ServerMessage::error(e.rid, e.code, e.message));
        Flow::Continue
    }

    /// A request before the session knows its player: only `hello` is one.
    async fn before_hello(&mut self, msg: ClientMessage) -> Flow {
        match msg {
            ClientMessage::Hello {
                rid,
                protocol,
                token,
                name,
                bot,
                device,
                login,
            } => {
                let said = hello::Said {
                    protocol,
                    token,
                    name,
                    bot,
                    device,
                    login,
                };
                // Boxed: it runs once per connection, its state need not stay with it.
                let hello = self.hello(rid.clone(), said);
                match Box::pin(hello).await {
                    // The handshake is not one of the 50 requests a client may make per
                    // window: the budget starts with the session.
                    Ok(()) => self.limiter = Self::fresh_limiter(&self.hub),
                    Err(e) => self.send_error(rid, &e),
                }
                Flow::Continue
            }
            other => {
                self.send_error(
                    other.rid().cloned(),
                    &ApiError::new(ErrorCode::Unauthorized, "the first message must be hello"),
                );
                Flow::Close(1008, "hello expected")
            }
        }
    }

    fn me(&self) -> Result<&PlayerRecord, ApiError> {
        self.player
            .as_ref()
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "say hello first"))
    }

    fn seat_player(&self) -> Result<SeatPlayer, ApiError> {
        let p = self.me()?;
        Ok(SeatPlayer {
            id: p.id.to_string(),
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
                Box::pin(self.watch(rid, &GameId::from(game_id), since, code)).await
            }
            ClientMessage::GameUnwatch { rid, game_id } => self.unwatch(rid, game_id.into()).await,
            ClientMessage::GameLegal { rid, game_id } => self.legal(rid, game_id.into()).await,
            ClientMessage::GameMove {
                rid,
                game_id,
                mv,
                seq,
            } => self.act(rid, game_id.into(), Act::Move { mv, seq }).await,
            ClientMessage::GameResign { rid, game_id } => {
                self.act(rid, game_id.into(), Act::Resign).await
            }
            ClientMessage::GameDraw {
                rid,
                game_id,
                action,
            } => self.act(rid, game_id.into(), Act::Draw { action }).await,
            ClientMessage::GameAbort { rid, game_id } => {
                self.act(rid, game_id.into(), Act::Abort).await
            }
            ClientMessage::GameClaim { rid, game_id } => {
                self.act(rid, game_id.into(), Act::Claim).await
            }
            ClientMessage::GameRematch { rid, game_id } => {
                self.act(rid, game_id.into(), Act::Rematch).await
            }
            // Rooms, bots, queues, the lobby and records: the less frequent requests, boxed
            // so that their state does not grow every idle connection's task.
            other => Box::pin(self.dispatch_more(other)).await,
        }
    }

    /// The requests [`Session::dispatch`] hands on: rooms, bots, queues, the lobby,
    /// finished games' records, chat, accounts and arenas. Each family goes to the
    /// function beside its requests.
    async fn dispatch_more(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            msg @ (ClientMessage::RoomCreate { .. }
            | ClientMessage::BotServe { .. }
            | ClientMessage::BotPlay { .. }
            | ClientMessage::RoomJoin { .. }
            | ClientMessage::RoomLeave { .. }
            | ClientMessage::RoomWatch { .. }
            | ClientMessage::RoomUnwatch { .. }
            | ClientMessage::RoomSay { .. }) => self.dispatch_room(msg).await,
            msg @ (ClientMessage::AnalysisRequest(_)
            | ClientMessage::AnalysisServe(_)
            | ClientMessage::AnalysisResult(_)) => self.dispatch_analysis(msg).await,
            msg @ (ClientMessage::LessonDone(_) | ClientMessage::LessonsProgress(_)) => {
                Box::pin(self.dispatch_lessons(msg)).await
            }
            msg @ (ClientMessage::GameRecord { .. }
            | ClientMessage::History { .. }
            | ClientMessage::Player { .. }
            | ClientMessage::Leaderboard { .. }) => self.dispatch_record(msg).await,
            msg @ (ClientMessage::ChatSay { .. }
            | ClientMessage::ChatMute { .. }
            | ClientMessage::ChatSpectators { .. }) => self.dispatch_chat(msg).await,
            msg @ (ClientMessage::LinkCode { .. }
            | ClientMessage::LinkRedeem { .. }
            | ClientMessage::Devices { .. }
            | ClientMessage::Account { .. }
            | ClientMessage::AccountClaim { .. }
            | ClientMessage::AccountLogin { .. }
            | ClientMessage::AccountPassword { .. }
            | ClientMessage::AccountLogout { .. }
            | ClientMessage::DeviceRevoke { .. }) => self.dispatch_account(msg).await,
            ClientMessage::QueueJoin {
                rid,
                kind,
                options,
                clock,
                rated,
            } => {
                let me = self.me()?.clone();
                let request = crate::services::matchmaker::JoinRequest {
                    setup: GameSetup::parse(&kind, &options, clock.as_ref())?,
                    rated,
                };
                Box::pin(self.hub.matchmaking.join(&self.conn, &me, rid, request)).await
            }
            ClientMessage::QueueLeave { rid } => {
                let me = self.me()?.id.clone();
                self.hub.matchmaking.leave(&me).await;
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::LobbyWatch { rid } => {
                self.hub.lobby.watch(self.conn.clone(), rid);
                Ok(())
            }
            ClientMessage::LobbyUnwatch { rid } => {
                self.hub.lobby.unwatch(self.conn.id);
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::GameBerserk { rid, game_id } => {
                self.act(rid, game_id.into(), Act::Berserk).await
            }
            ClientMessage::PositionExplore(ExploreRequest {
                rid,
                kind,
                options,
                position,
                moves,
            }) => self.explore(rid, &kind, &options, position.as_deref(), &moves),
            ClientMessage::Report(ask) => Box::pin(self.report(ask)).await,
            msg @ (ClientMessage::ArenaCreate { .. }
            | ClientMessage::ArenaWatch { .. }
            | ClientMessage::ArenaUnwatch { .. }
            | ClientMessage::ArenaJoin { .. }
            | ClientMessage::ArenaPause { .. }
            | ClientMessage::ArenaCancel { .. }) => Box::pin(self.arena(msg)).await,
            // Handled by `dispatch` before it hands the rest on.
            _handled => Err(unexpected()),
        }
    }

    /// Rooms and bots: creating, joining, leaving and watching a room, its chat, and the
    /// games against a bot (which are rooms too).
    async fn dispatch_room(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            ClientMessage::RoomCreate {
                rid,
                kind,
                options,
                clock,
                rated,
                visibility,
                side,
            } => {
                // Parsed here, at the edge: from now on the settings travel typed.
                let setup = GameSetup::parse(&kind, &options, clock.as_ref())?;
                Box::pin(self.room_create(rid, setup, rated, visibility, side))
                    .await
                    .map(|_| ())
            }
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
                position,
            } => {
                // Checked at the edge, before a bot is taken off the list.
                let setup = bots::bot_setup(level, &kind, &options, clock.as_ref(), position)?;
                Box::pin(self.bot_play(rid, setup, level, side)).await
            }
            ClientMessage::RoomJoin { rid, code } => Box::pin(self.room_join(rid, &code)).await,
            ClientMessage::RoomLeave { rid, code } => self.room_leave(rid, &code).await,
            ClientMessage::RoomWatch { rid, code } => Box::pin(self.room_watch(rid, &code)).await,
            ClientMessage::RoomUnwatch { rid, code } => {
                self.room_unwatch(rid, &code);
                Ok(())
            }
            ClientMessage::RoomSay { rid, code, text } => {
                Box::pin(self.room_say(rid, &code, &text)).await
            }
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

    fn ok(&self, rid: Option<Rid>, seq: Option<u64>, game_id: Option<String>) {
        self.send(&ServerMessage::Ok { rid, seq, game_id });
    }

    fn answer(&self, rid: Option<Rid>, game_id: &GameId, answer: Answer) -> Result<(), ApiError> {
        match answer {
            // Every move's answer: written from the borrowed id, not a message built first.
            Answer::Ok { seq } => {
                self.conn
                    .send(Frame::ok(rid.as_ref(), Some(seq), Some(game_id.as_str())));
            }
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
        game_id: &GameId,
        make: impl FnOnce(crate::game::Reply) -> Command,
    ) -> Option<Result<Answer, ApiError>> {
        self.hub.call_game(game_id, make).await
    }

    /// Ends the session: unsubscribes from every game, and reports the player offline when
    /// this was its last connection.
    pub async fn end(&mut self) {
        self.hub.lobby.unwatch(self.conn.id);
        // A worker's job goes back to the queue at once (another worker takes it).
        self.hub.analysis.closed(self.conn.id).await;
        for code in std::mem::take(&mut self.rooms_open) {
            self.hub.room_chats.unwatch(&code, self.conn.id);
        }
        self.hub.arenas.unwatch_all(self.conn.id);
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
                self.hub.matchmaking.leave(&p.id).await;
                self.hub.presence(&p.id, false).await;
                self.hub.close_rooms_when_host_stays_away(p.id.clone());
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

/// A display name as `hello` accepts it ([`crate::domain::account::display_name`]).
fn valid_name(name: &str) -> Result<String, ApiError> {
    crate::domain::account::display_name(name)
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, e.to_string()))
}

/// The error for a request handed to a dispatch function that does not serve its family:
/// the routing above it sends each request to one family only.
fn unexpected() -> ApiError {
    ApiError::new(ErrorCode::BadRequest, "unexpected request")
}
