//! The game's chat as the actor runs it: the owner decides each request
//! ([`crate::domain::chat`]), applies the change, delivers it to its subscribers and
//! publishes it; a follower forwards its people's requests to the owner and folds the
//! owner's changes into its own copy for its own subscribers.
//!
//! Why per subscriber rather than one shared frame: who reads a line depends on the
//! reader (the channel, the reader's mutes), so each line is encoded once and sent to
//! those who read it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::ids::{GameId, PlayerId};
use crate::net::frame::Frame;
use stoa_protocol::wire::{ErrorCode, ServerMessage};

use super::{Actor, Role};
use crate::cluster::messages::{BusMessage, RemoteOp};
use crate::domain::chat::{Author, Change, ChatLog, ChatOp, Reader, LINES_PER_SECOND, LINE_BURST};
use crate::domain::rate_limit::TokenBucket;
use crate::error::ApiError;
use crate::game::act::Answer;
use crate::game::ChatRequest;
use crate::net::outbound::{ConnHandle, SendOutcome};

/// The chat of one game on this node.
#[derive(Default)]
pub(super) struct Chat {
    /// The lines and settings (every node holds a copy).
    log: ChatLog,
    /// Each person's line budget (the owner's: it decides every line).
    buckets: HashMap<String, TokenBucket>,
}

impl Chat {
    /// Whether a line made by the forwarded command `cmd` is kept.
    pub(super) fn posted(&self, cmd: &str) -> bool {
        self.log.posted(cmd)
    }
}

impl Actor {
    /// A chat request from a connection here: decided here by an owner, forwarded to the
    /// owner by a follower. Only a connection watching the game may chat in it (which
    /// also keeps a private game's chat to those who may see it).
    pub(super) async fn chat_request(&mut self, req: ChatRequest) {
        if !self.published.is_watching(req.conn_id) {
            let _ = req.reply.send(Err(ApiError::new(
                ErrorCode::Conflict,
                "watch this game (game.watch) before chatting in it",
            )));
            return;
        }
        match self.role {
            Role::Owner(_) => {
                let answer = self.chat_decide(&req.player_id, &req.name, req.op, None);
                let answer = match answer {
                    Ok(change) => {
                        self.chat_change(change).await;
                        Ok(Answer::Ok {
                            seq: self.core.seq(),
                        })
                    }
                    Err(e) => Err(e),
                };
                let _ = req.reply.send(answer);
            }
            Role::Follower(_) => {
                let op = RemoteOp::Chat {
                    player_id: req.player_id,
                    name: req.name,
                    request: req.op,
                    cmd: None,
                };
                self.forward(op, Some(req.reply)).await;
            }
        }
    }

    /// The owner serves a follower's chat request: the change goes out (to the asking
    /// node too, over the bus) before the answer.
    pub(super) async fn remote_chat(
        &mut self,
        player_id: &PlayerId,
        name: &str,
        op: ChatOp,
        cmd: String,
    ) -> Result<Answer, ApiError> {
        if self.chat.posted(&cmd) {
            // Sent again after a lost answer: it was posted.
            return Ok(Answer::Ok {
                seq: self.core.seq(),
            });
        }
        let change = self.chat_decide(player_id, name, op, Some(cmd))?;
        self.chat_change(change).await;
        Ok(Answer::Ok {
            seq: self.core.seq(),
        })
    }

    /// The owner decides a request: the change it makes (`None`: nothing changes), or why
    /// not. A line costs its author a token of their budget.
    fn chat_decide(
        &mut self,
        player_id: &PlayerId,
        name: &str,
        op: ChatOp,
        cmd: Option<String>,
    ) -> Result<Option<Change>, ApiError> {
        let author = Author {
            id: player_id.as_str(),
            name,
            seated: self.is_player(Some(player_id)),
        };
        let change = self
            .chat
            .log
            .decide(author, op, self.caps.time.now_ms(), cmd)?;
        if let Some(Change::Line(_)) = &change {
            let now = Instant::now();
            let bucket = self
                .chat
                .buckets
                .entry(player_id.to_string())
                .or_insert_with(|| TokenBucket::new(LINE_BURST, LINES_PER_SECOND, now));
            if !bucket.take(now) {
                return Err(ApiError::new(
                    ErrorCode::RateLimited,
                    crate::domain::chat::TOO_FAST,
                ));
            }
        }
        Ok(change)
    }

    /// Folds a change in and delivers it to this node's subscribers; an owner publishes it
    /// to the followers.
    pub(super) async fn chat_change(&mut self, change: Option<Change>) {
        let Some(change) = change else {
            return;
        };
        self.chat.log.apply(change.clone());
        let game_id = self.core.id().clone();
        let gone = match &change {
            Change::Line(line) => {
                let e = &line.entry;
                let frame = Frame::text(
                    ServerMessage::Chat {
                        game_id: game_id.to_string(),
                        channel: e.channel,
                        id: e.id.clone(),
                        name: e.name.clone(),
                        text: e.text.clone(),
                        ts: e.ts,
                    }
                    .to_json(),
                );
                self.chat_send(|log, reader| log.reads(reader, e).then(|| frame.clone()))
            }
            Change::Spectators { on } => {
                let frame = Frame::text(
                    ServerMessage::ChatSpectators {
                        game_id: game_id.to_string(),
                        on: *on,
                    }
                    .to_json(),
                );
                self.chat_send(|_, _| Some(frame.clone()))
            }
            // The muting person's connections here get what they read now; everyone's after
            // a whole new state.
            Change::Mute { player, .. } => self.chat_send(|log, reader| {
                (reader.id == Some(player.as_str())).then(|| history_frame(&game_id, log, reader))
            }),
            Change::State(_) => {
                self.chat_send(|log, reader| Some(history_frame(&game_id, log, reader)))
            }
        };
        for id in gone {
            self.unsubscribe(id);
        }
        if let Role::Owner(_) = self.role {
            self.caps
                .peers
                .publish(&BusMessage::Chat {
                    game: game_id,
                    change,
                })
                .await;
        }
    }

    /// Sends each subscriber here the frame `frame` makes for it, if any; the ids of those
    /// whose queue is full.
    fn chat_send(&self, frame: impl Fn(&ChatLog, Reader<'_>) -> Option<Frame>) -> Vec<u64> {
        let mut gone = Vec::new();
        for (id, conn) in self.published.watchers() {
            if let Some(bytes) = frame(&self.chat.log, self.reader(conn)) {
                if conn.send(bytes) != SendOutcome::Sent {
                    gone.push(id);
                }
            }
        }
        gone
    }

    /// A reported line and its neighbours as `reporter` reads this node's copy of the chat.
    pub(super) fn chat_context(
        &self,
        reporter: &PlayerId,
        author: &PlayerId,
        ts: u64,
    ) -> Option<(usize, Vec<stoa_protocol::wire::ChatEntry>)> {
        let reader = Reader {
            id: Some(reporter.as_str()),
            seated: self.is_player(Some(reporter)),
            ended: self.core.result().is_some(),
        };
        let around = crate::domain::moderation::CONTEXT_LINES;
        self.chat.log.context(reader, author.as_str(), ts, around)
    }

    /// A subscriber as a reader of the chat.
    fn reader<'a>(&self, conn: &'a ConnHandle) -> Reader<'a> {
        Reader {
            id: conn.player_id().map(PlayerId::as_str),
            seated: self.is_player(conn.player_id()),
            ended: self.core.result().is_some(),
        }
    }

    /// The `chat.history` a new subscriber gets after its snapshot, when there is anything
    /// to show (lines it reads, spectators' chat off, people it muted): a game nobody
    /// chatted in sends nothing more than before.
    pub(super) fn chat_history_for(&self, conn: &Arc<ConnHandle>) -> Option<Frame> {
        if self.chat.log.is_empty() {
            return None;
        }
        Some(history_frame(
            self.core.id(),
            &self.chat.log,
            self.reader(conn),
        ))
    }

    /// The game ended: the players read the spectators' chat from now on, so the players
    /// here get the history that includes it (when the spectators said anything).
    pub(super) fn chat_at_end(&mut self) {
        if self
            .chat
            .log
            .history(Reader {
                id: None,
                seated: false,
                ended: true,
            })
            .is_empty()
        {
            return;
        }
        let game_id = self.core.id().clone();
        let gone = self
            .chat_send(|log, reader| reader.seated.then(|| history_frame(&game_id, log, reader)));
        for id in gone {
            self.unsubscribe(id);
        }
    }

    /// A follower asks the owner for the whole chat (it just started following).
    pub(super) async fn chat_sync(&mut self) {
        self.forward(RemoteOp::ChatSync, None).await;
    }

    /// The owner publishes its whole chat to the followers (one just started).
    pub(super) async fn chat_publish_state(&mut self) {
        if self.chat.log.is_empty() {
            return;
        }
        self.caps
            .peers
            .publish(&BusMessage::Chat {
                game: self.core.id().clone(),
                change: Change::State(self.chat.log.clone()),
            })
            .await;
    }
}

/// The `chat.history` frame for one reader.
fn history_frame(game_id: &GameId, log: &ChatLog, reader: Reader<'_>) -> Frame {
    Frame::text(
        ServerMessage::ChatHistory {
            game_id: game_id.to_string(),
            lines: log.history(reader),
            spectators: log.spectators_on(),
            muted: log.muted_by(reader.id),
        }
        .to_json(),
    )
}
