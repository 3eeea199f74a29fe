//! What the user asked the client to do (queue, host, play the computer, join, watch, the
//! lobby): the start request and what its answer says.

use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, ServerMessage, Visibility};

use super::answers::Pending;
use super::{Note, Phase, Session};
use crate::connection::RequestError;

/// What the user asked the client to do.
#[derive(Clone, Debug)]
pub enum Start {
    /// `stoa play`: the quick-pairing queue.
    Queue {
        /// Game kind.
        kind: String,
        /// Options object.
        options: Value,
        /// Clock request object.
        clock: Value,
        /// Rated pairing.
        rated: bool,
    },
    /// `stoa host`: create a room.
    Host {
        /// Game kind.
        kind: String,
        /// Options object.
        options: Value,
        /// Clock request object.
        clock: Value,
        /// Rated game.
        rated: bool,
        /// Listed in the lobby or reachable by code only.
        visibility: Visibility,
        /// `random` or a side name.
        side: String,
    },
    /// `stoa play --computer <level>`: a room against a computer opponent.
    Computer {
        /// Game kind.
        kind: String,
        /// Options object.
        options: Value,
        /// Clock request object.
        clock: Value,
        /// Strength, 1-5.
        level: u8,
        /// `random` or a side name.
        side: String,
    },
    /// `stoa join <code>`.
    Join {
        /// Room code.
        code: String,
    },
    /// `stoa watch <game-id|room-code>`.
    Watch {
        /// Game id or room code.
        target: String,
    },
    /// `stoa lobby`.
    Lobby,
    /// `stoa arena <id|code>`.
    Arena {
        /// An arena id, or a private arena's code.
        target: String,
        /// Join the arena once it is found (`--join`).
        join: bool,
    },
    /// `stoa host-arena`: create an arena, then follow it as [`Start::Arena`] (which the
    /// start becomes once the arena exists: a reconnect watches it, never creates another).
    NewArena {
        /// The arena's settings.
        settings: Box<stoa_protocol::wire::ArenaSettings>,
        /// Join the arena once it is created (`--join`).
        join: bool,
    },
}

impl Start {
    /// The request that starts this.
    fn request(&self) -> ClientMessage {
        match self.clone() {
            Start::Queue {
                kind,
                options,
                clock,
                rated,
            } => ClientMessage::QueueJoin {
                rid: None,
                kind,
                options,
                clock: Some(clock),
                rated,
            },
            Start::Host {
                kind,
                options,
                clock,
                rated,
                visibility,
                side,
            } => ClientMessage::RoomCreate {
                rid: None,
                kind,
                options,
                clock: Some(clock),
                rated,
                visibility,
                side,
            },
            Start::Computer {
                kind,
                options,
                clock,
                level,
                side,
            } => ClientMessage::BotPlay {
                rid: None,
                kind,
                options,
                clock: Some(clock),
                level,
                side,
                position: None,
            },
            Start::Join { code } => ClientMessage::RoomJoin { rid: None, code },
            Start::Watch { target } => watch_request(target),
            Start::Lobby => ClientMessage::LobbyWatch { rid: None },
            Start::Arena { target, .. } => super::arena::arena_watch_request(&target),
            Start::NewArena { settings, .. } => ClientMessage::ArenaCreate {
                rid: None,
                settings,
            },
        }
    }
}

/// `game.watch` of a game id or room code, from the start (no seq, no code).
pub(super) fn watch_request(target: String) -> ClientMessage {
    ClientMessage::GameWatch {
        rid: None,
        game_id: target,
        since: None,
        code: None,
    }
}

impl Session {
    /// Sends the start request.
    pub fn begin(&mut self) {
        match &self.start {
            Start::Watch { target } => self.game_id = Some(target.clone()),
            Start::Lobby => self.phase = Phase::Lobby { doc: None },
            _ => {}
        }
        self.request(Pending::Start, self.start.request());
    }

    /// A `room.join` is under way: the first snapshot that arrives is the room's game.
    pub(super) fn awaiting_room_game(&self) -> bool {
        matches!(self.start, Start::Join { .. })
            && matches!(self.phase, Phase::Starting { .. } | Phase::Joined)
    }

    /// Handles the answer to the start request.
    pub(super) fn on_start_answer(&mut self, answer: Result<ServerMessage, RequestError>) {
        match answer {
            Ok(msg) => self.on_start_reply(msg),
            Err(e) => self.on_start_failed(e),
        }
    }

    fn on_start_failed(&mut self, e: RequestError) {
        if let Start::Arena { target, .. } = &self.start {
            if e != RequestError::Disconnected {
                let target = target.clone();
                self.on_arena_refused(&target, &e);
                return;
            }
        }
        if let Start::Watch { target } = &self.start {
            let target = target.clone();
            if self.on_watch_refused(&target, &e) {
                return;
            }
        }
        if matches!(self.start, Start::NewArena { .. }) {
            // Not asked again after a drop: the arena may exist already, and a second
            // request would create another.
            self.error(&e);
            if e == RequestError::Disconnected {
                self.info(
                    "the arena may have been created before the connection dropped: see stoa lobby",
                );
            }
            self.fail();
            return;
        }
        if e == RequestError::Disconnected {
            // Watching and the lobby resubscribe anyway; the others ask again.
            if matches!(
                self.start,
                Start::Queue { .. } | Start::Host { .. } | Start::Join { .. } | Start::Arena { .. }
            ) {
                self.info("the start request was cut off; retrying after reconnect");
                if let Phase::Starting { cut_off } = &mut self.phase {
                    *cut_off = true;
                }
            }
            return;
        }
        self.error(&e);
        self.fail();
    }

    /// `stoa watch` refused: wait for a room's game, or give up. `false` for a drop, which
    /// the caller handles like any start request's.
    fn on_watch_refused(&mut self, target: &str, e: &RequestError) -> bool {
        if e.code() == "conflict" && e.message().contains("waiting") {
            // A room still waiting for its second player: watch its game once it starts
            // (watching never takes the free seat).
            if self.watch_retry_at.is_none() {
                self.info(format!(
                    "room {target} is waiting for its second player: watching starts with its game"
                ));
            }
            self.watch_retry_at = Some(Instant::now() + Duration::from_secs(2));
            return true;
        }
        if *e == RequestError::Disconnected {
            return false;
        }
        // Say what the user typed (a game id, or a room code).
        self.notes.push(Note::Error(format!(
            "error {}: cannot watch '{target}': {}",
            e.code(),
            e.message()
        )));
        self.fail();
        true
    }

    fn on_start_reply(&mut self, msg: ServerMessage) {
        match msg {
            // A late answer (the game may already have started) says nothing any more.
            ServerMessage::Queued { position, .. } if self.phase.is_starting() => {
                self.phase = Phase::Queued {
                    since: Instant::now(),
                    status: None,
                };
                self.info(format!("queued position {position}"));
            }
            ServerMessage::Queued { .. } => {}
            ServerMessage::Room { room, .. } => self.on_room(room.code),
            ServerMessage::GameSnapshot { game_id, .. } => self.on_watching(game_id),
            ServerMessage::Lobby { .. } => {}
            ServerMessage::Arena { .. } => self.on_arena_opened(&msg),
            _ => {
                if self.phase.is_starting() {
                    self.phase = Phase::Game;
                }
            }
        }
    }

    /// The room we created or joined.
    fn on_room(&mut self, code: String) {
        self.room_code = Some(code.clone());
        let starting = self.phase.is_starting();
        match &self.start {
            // Once the game started, a late answer says nothing any more.
            Start::Computer { level, .. } => {
                let level = *level;
                if starting {
                    self.phase = Phase::Hosting;
                    self.info(format!(
                        "waiting for the computer (level {level}) to sit down"
                    ));
                }
            }
            Start::Host { .. } => {
                if starting {
                    self.phase = Phase::Hosting;
                }
                self.info(format!("room {code}"));
                let line = self.share_line(&code);
                self.info(format!("share this line with your opponent: {line}"));
                if let Some(web) = self.web_base() {
                    // The same invitation for a browser (the web client's `/r/<code>`).
                    self.info(format!("or this link: {web}/r/{code}"));
                }
                self.info("waiting for an opponent");
                if starting {
                    self.open_room_chat();
                }
            }
            _ => {
                if starting {
                    self.phase = Phase::Joined;
                    self.info(format!("joined room {code}"));
                }
            }
        }
    }

    /// Watching a game (a full room answers like `game.watch`); the document itself came
    /// through the event stream.
    fn on_watching(&mut self, game_id: String) {
        if matches!(self.start, Start::Join { .. }) {
            self.info("the room is full: watching its game");
        }
        if self.game_id.is_none() {
            self.game_id = Some(game_id);
        }
        if !self.phase.is_lobby() {
            self.phase = Phase::Game;
        }
        if self.spectating() {
            if let Some(id) = self.game_id.clone() {
                self.info(format!("watching {id}"));
            }
        }
    }
}
