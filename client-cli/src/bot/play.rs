//! The bot's session: it asks for a game (queue, host, join or serve), follows the game's
//! document, thinks on a blocking thread when it is its turn, and stays a few seconds after
//! the end for a rematch its opponent may ask for.

use std::process::ExitCode;

use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, DrawAction, ServerMessage, Visibility};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::search::Rng;
use super::{budget, level_name, think, BotArgs, REMATCH_WAIT};
use crate::commands::{connect, Global};
use crate::connection::{ConnEvent, Connection, Welcome};
use crate::document::{outcome_text, Applied, GameDoc, Versioned};

/// A search's answer: the seq it thought at, and the move (none: nothing to play) or why
/// the search failed.
type Thought = (u64, Result<Option<String>, String>);

/// What the command line asks for, checked before connecting.
pub(super) struct Plan {
    /// The kinds played, in turn.
    pub(super) kinds: Vec<String>,
    /// Game options when queueing or hosting.
    pub(super) options: Value,
    /// The clock asked for when queueing or hosting.
    pub(super) clock: Value,
    /// `bot.serve` with the levels offered.
    pub(super) serve: ClientMessage,
}

/// What comes after a message, an answer or a quiet rematch wait.
enum Flow {
    /// Go on with this game.
    Stay,
    /// Ask for the next game.
    NextGame,
    /// Stop: the room joined by code had its game.
    Finish,
}

/// A finished game's rematch: until when the opponent's request is accepted, and whether
/// it was.
#[derive(Default)]
struct Rematch {
    until: Option<Instant>,
    sent: bool,
}

/// The game being played, and where the bot is in it.
struct Table {
    /// The game's id and document (seq 0 and `null` until its snapshot comes).
    game: Option<(String, Versioned)>,
    /// The seq a search was started at, so each position is thought over once.
    asked_at: Option<u64>,
    rematch: Rematch,
    /// Where the searches send their answers.
    thoughts: UnboundedSender<Thought>,
}

impl Table {
    /// Whether `id` is the game followed.
    fn follows(&self, id: &str) -> bool {
        self.game.as_ref().is_some_and(|(g, _)| g == id)
    }
}

/// The bot's connection and what it keeps from game to game.
pub(super) struct Player<'a> {
    args: &'a BotArgs,
    plan: Plan,
    global: Global,
    /// Named after its level (no `--name`): it connects again under another name for a
    /// game asked at another level (a name is given at `hello`).
    auto_name: bool,
    conn: Connection,
    me: Welcome,
    events: UnboundedReceiver<ConnEvent>,
    /// The level of the game at hand.
    level: u8,
    rng: Rng,
    played: u32,
}

impl<'a> Player<'a> {
    /// Connects as a bot (`global` resolved), named after its level unless `--name` says.
    pub(super) async fn connect(
        args: &'a BotArgs,
        plan: Plan,
        mut global: Global,
    ) -> Result<Player<'a>, ExitCode> {
        global.bot = true;
        let auto_name = global.name.is_none();
        if auto_name {
            global.name = Some(level_name(args.level));
        }
        let (conn, me, events) = connect(&global).await?;
        println!("bot {} ({}) level {}", me.name, me.id, args.level);
        Ok(Player {
            args,
            plan,
            global,
            auto_name,
            conn,
            me,
            events,
            level: args.level,
            rng: Rng::new(args.seed),
            played: 0,
        })
    }

    /// Plays games until `--games` are played (or forever), one kind after the other.
    pub(super) async fn run(mut self) -> Result<ExitCode, ExitCode> {
        let mut next_kind = 0usize;
        loop {
            if self.args.games > 0 && self.played >= self.args.games {
                return Ok(ExitCode::SUCCESS);
            }
            let kind = self.plan.kinds[next_kind % self.plan.kinds.len()].clone();
            next_kind += 1;
            self.ask_for_game(kind).await?;
            if let Flow::Finish = self.play_game().await? {
                return Ok(ExitCode::SUCCESS);
            }
        }
    }

    /// Asks for a game as the command line says: serve, join, host or queue.
    async fn ask_for_game(&mut self, kind: String) -> Result<(), ExitCode> {
        let (args, plan) = (self.args, &self.plan);
        let request = if args.serve {
            self.level = args.level;
            plan.serve.clone()
        } else if let Some(code) = &args.join {
            room_join(code.clone())
        } else if args.host {
            ClientMessage::RoomCreate {
                rid: None,
                kind,
                options: plan.options.clone(),
                clock: Some(plan.clock.clone()),
                rated: false,
                visibility: Visibility::Public,
                side: "random".into(),
            }
        } else {
            ClientMessage::QueueJoin {
                rid: None,
                kind,
                options: plan.options.clone(),
                clock: Some(plan.clock.clone()),
                rated: false,
            }
        };
        if let Err(e) = self.conn.request(request).await {
            eprintln!("error {}: {}", e.code(), e.message());
            return Err(ExitCode::FAILURE);
        }
        Ok(())
    }

    /// Follows one game from the request to its end (and a rematch's end).
    async fn play_game(&mut self) -> Result<Flow, ExitCode> {
        let (thoughts, mut answers) = unbounded_channel::<Thought>();
        let mut table = Table {
            game: None,
            asked_at: None,
            rematch: Rematch::default(),
            thoughts,
        };
        loop {
            tokio::select! {
                ev = self.events.recv() => self.on_event(&mut table, ev).await?,
                () = wait_until(table.rematch.until) => {
                    // Nobody asked for a rematch in time: on to the next game.
                    if let Some((id, _)) = &table.game {
                        self.conn.send(unwatch(id));
                    }
                    return Ok(Flow::NextGame);
                }
                Some(thought) = answers.recv() => self.on_thought(&mut table, thought).await?,
            }
            match self.after_change(&mut table) {
                Flow::Stay => {}
                done => return Ok(done),
            }
        }
    }

    /// A connection event: a message, or the connection lost, back or closed.
    async fn on_event(&mut self, table: &mut Table, ev: Option<ConnEvent>) -> Result<(), ExitCode> {
        match ev {
            None | Some(ConnEvent::Closed(_)) => {
                eprintln!("error connection: the server closed the connection");
                return Err(ExitCode::FAILURE);
            }
            Some(ConnEvent::Disconnected(why)) => {
                eprintln!("{}", crate::session::disconnected_line(&why))
            }
            Some(ConnEvent::Reconnected(_)) => {
                if let Some((id, doc)) = &table.game {
                    self.conn.send(watch_since(id, doc.seq));
                } else if self.args.serve {
                    self.conn.send(self.plan.serve.clone());
                }
            }
            Some(ConnEvent::Message(msg)) => self.on_message(table, msg).await?,
        }
        Ok(())
    }

    /// A server message: an invitation, a game started, or the followed game's document.
    async fn on_message(&mut self, table: &mut Table, msg: ServerMessage) -> Result<(), ExitCode> {
        match msg {
            ServerMessage::BotInvite { code, level, .. } if table.game.is_none() => {
                self.accept_invite(code, level).await?
            }
            ServerMessage::GameStarted {
                game_id: id, side, ..
            } => {
                println!("game started {id} side {side}");
                table.game = Some((id, Versioned::new(0, Value::Null)));
                table.asked_at = None;
                table.rematch = Rematch::default();
            }
            ServerMessage::GameSnapshot {
                game_id: id,
                seq,
                doc,
                rid,
            } if table.follows(&id) => {
                if let Some((_, held)) = &mut table.game {
                    if rid.is_none() {
                        // Pushed (a game that went back): taken whatever its seq.
                        *held = Versioned::new(seq, doc);
                    } else {
                        held.snapshot(seq, doc);
                    }
                }
            }
            ServerMessage::GameDiff {
                game_id: id,
                seq,
                patch,
            } if table.follows(&id) => {
                let (_, doc) = table.game.as_mut().expect("the game followed");
                // Before its snapshot the game has no document to patch: ask for it.
                if doc.doc.is_null() || doc.apply(seq, &patch) == Applied::Gap {
                    self.conn.send(watch_since(&id, doc.seq));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// An invitation to play someone at `level`: joins the room (under the level's name).
    async fn accept_invite(&mut self, code: String, level: u8) -> Result<(), ExitCode> {
        self.level = level.clamp(1, 5);
        println!("invited to room {code} at level {}", self.level);
        if self.auto_name && self.me.name != level_name(self.level) {
            self.global.name = Some(level_name(self.level));
            (self.conn, self.me, self.events) = connect(&self.global).await?;
            println!("bot {} ({}) level {}", self.me.name, self.me.id, self.level);
        }
        if let Err(e) = self.conn.request(room_join(code.clone())).await {
            eprintln!(
                "note: could not join room {code}: {} {}",
                e.code(),
                e.message()
            );
            self.conn.send(self.plan.serve.clone());
        }
        Ok(())
    }

    /// A search's answer: played when the game is still where it was thought over.
    async fn on_thought(&mut self, table: &mut Table, thought: Thought) -> Result<(), ExitCode> {
        let (seq, result) = thought;
        let Some((id, doc)) = &table.game else {
            return Ok(());
        };
        match result {
            Ok(Some(mv)) if doc.seq == seq => {
                let mv_msg = ClientMessage::GameMove {
                    rid: None,
                    game_id: id.clone(),
                    mv: mv.clone(),
                    seq: Some(seq),
                };
                if let Err(e) = self.conn.request(mv_msg).await {
                    // A stale seq (a draw offer came in) is thought over again.
                    eprintln!("note: {mv} not played: {} {}", e.code(), e.message());
                    table.asked_at = None;
                }
            }
            Ok(_) => table.asked_at = None,
            Err(e) => {
                eprintln!("error: the search failed: {e}");
                return Err(ExitCode::FAILURE);
            }
        }
        Ok(())
    }

    /// What the game's document asks of the bot now: a rematch once ended, else declining
    /// a draw offer and thinking when it is its turn.
    fn after_change(&mut self, table: &mut Table) -> Flow {
        let Some((id, versioned)) = &table.game else {
            return Flow::Stay;
        };
        if versioned.doc.is_null() {
            return Flow::Stay;
        }
        if GameDoc::new(&versioned.doc).status().ended {
            return self.after_end(id, versioned, &mut table.rematch);
        }
        self.on_position(id, versioned, &mut table.asked_at, &table.thoughts);
        Flow::Stay
    }

    /// The game ended: counts it, then stays for a rematch the opponent asks for (unless
    /// the games asked for are played, or the room was joined by code).
    fn after_end(&mut self, id: &str, versioned: &Versioned, rematch: &mut Rematch) -> Flow {
        let doc = GameDoc::new(&versioned.doc);
        if rematch.until.is_none() {
            println!("game over: {}", outcome_text(&doc.status()));
            self.played += 1;
            let more = self.args.games == 0 || self.played < self.args.games;
            if self.args.join.is_some() || !more {
                self.conn.send(unwatch(id));
                if self.args.join.is_some() {
                    return Flow::Finish;
                }
                return Flow::NextGame;
            }
            rematch.until = Some(Instant::now() + REMATCH_WAIT);
        }
        // The person asked for a rematch: play it (the server starts it once both asked,
        // and says `game.started`).
        let mine = doc.side_of(&self.me.id);
        let asked = versioned.doc["rematch"]["requested"]
            .as_array()
            .is_some_and(|a| a.iter().any(|s| s.as_str() != mine.as_deref()));
        if asked && !rematch.sent {
            rematch.sent = true;
            println!("rematch asked: accepting");
            self.conn.send(ClientMessage::GameRematch {
                rid: None,
                game_id: id.to_string(),
            });
        }
        Flow::Stay
    }

    /// A position of a game in play: declines the opponent's draw offer, and starts a
    /// search on a blocking thread when it is the bot's turn (once per position).
    fn on_position(
        &mut self,
        id: &str,
        versioned: &Versioned,
        asked_at: &mut Option<u64>,
        thoughts: &UnboundedSender<Thought>,
    ) {
        let doc = GameDoc::new(&versioned.doc);
        let mine = doc.side_of(&self.me.id);
        if let (Some(side), Some(offer)) = (&mine, doc.draw_offer()) {
            if offer != side {
                self.conn.send(ClientMessage::GameDraw {
                    rid: None,
                    game_id: id.to_string(),
                    action: DrawAction::Decline,
                });
            }
        }
        let my_turn = mine.is_some() && doc.to_act() == mine.as_deref();
        if !my_turn || *asked_at == Some(versioned.seq) {
            return;
        }
        *asked_at = Some(versioned.seq);
        let seq = versioned.seq;
        let kind = doc.kind().to_string();
        let options = doc.options().clone();
        let moves: Vec<String> = doc.moves().iter().map(|m| m.to_string()).collect();
        let start = doc.start().map(str::to_string);
        let side = mine.unwrap_or_default();
        let think_for = budget(
            doc.clock(),
            doc.remaining_ms(&side, self.conn.server_now_ms()),
        );
        let mut search_rng = Rng::new(self.rng.next());
        let level = self.level;
        let thoughts = thoughts.clone();
        tokio::task::spawn_blocking(move || {
            let from = (start.as_deref(), moves.as_slice());
            let r = think(&kind, &options, from, level, think_for, &mut search_rng);
            let _ = thoughts.send((seq, r));
        });
    }
}

/// Sleeps until `at`; never returns without one (a `select!` branch that stays quiet).
async fn wait_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `room.join` of room `code`.
fn room_join(code: String) -> ClientMessage {
    ClientMessage::RoomJoin { rid: None, code }
}

/// `game.unwatch` of the game followed.
fn unwatch(game_id: &str) -> ClientMessage {
    ClientMessage::GameUnwatch {
        rid: None,
        game_id: game_id.to_string(),
    }
}

/// `game.watch` of a game we follow, from the seq we have (the missed diffs, or a snapshot).
fn watch_since(game_id: &str, seq: u64) -> ClientMessage {
    ClientMessage::GameWatch {
        rid: None,
        game_id: game_id.to_string(),
        since: Some(seq),
        code: None,
    }
}
