//! The client's state machine, shared by plain mode and the terminal UI: what we asked the
//! server for (queue, room, watch, lobby), the game document we follow, whose side we are,
//! and the text commands a person types (`resign`, `draw offer`, a move …).
//!
//! Why front-end agnostic: both front-ends feed it the same inputs (connection events,
//! request results, typed lines, ticks) and read the same state and notes, so a behaviour
//! tested in plain mode holds in the terminal UI.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::connection::{ConnEvent, Connection, RequestError, Welcome};
use crate::document::{ending_sentence, outcome_text, Applied, GameDoc, Versioned};
use crate::present;

/// How many times the rating change of a rated game is asked again while its record is
/// not written yet.
const RATING_ASKS: u8 = 10;

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
        /// `public` or `private`.
        visibility: String,
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
}

/// Where the session is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The start request is on its way.
    Starting,
    /// Waiting in the matchmaking queue.
    Queued,
    /// Waiting for an opponent in our room.
    Hosting,
    /// Seated in a room, waiting for the game to start.
    Joined,
    /// Following a game (playing or watching).
    Game,
    /// Browsing the lobby.
    Lobby,
}

/// A line for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// Something happened.
    Info(String),
    /// A request failed: `error <code>: <message>`.
    Error(String),
    /// Long output the user asked for (legal moves, help, a game's guide): plain mode prints
    /// `text`; the terminal UI shows it in a scrollable window titled `title`, since a
    /// message pane of a few rows would cut it.
    Page {
        /// What it is, e.g. `legal moves (12)`.
        title: String,
        /// The text, lines separated by `\n`.
        text: String,
    },
    /// The end of a game: plain mode prints `plain` (`game over: white wins by resign`, the
    /// protocol's codes, which scripts read); the terminal UI shows `people`, the same end
    /// in words (`game over: Black resigned — White wins`).
    End {
        /// The line for scripts.
        plain: String,
        /// The line for people.
        people: String,
    },
}

impl Note {
    /// The line's text.
    pub fn text(&self) -> &str {
        match self {
            Note::Info(s) | Note::Error(s) | Note::Page { text: s, .. } => s,
            Note::End { plain, .. } => plain,
        }
    }
}

/// What a request was for, so its answer can be handled.
#[derive(Clone, Debug)]
pub enum Pending {
    /// The start request.
    Start,
    /// `game.watch` (resync or fallback).
    Watch,
    /// `game.legal` at a seq.
    Legal,
    /// `game.move`.
    Move(String),
    /// Any other game action, by name.
    Action(&'static str),
    /// `lobby.watch`.
    LobbyWatch,
    /// `history` (the newest game) after a rated game ended, for the rating change: the
    /// game's id and how many times it was asked before (its record is written just after
    /// the end).
    RatingChange(String, u8),
}

/// A request's answer, delivered back to the front-end loop.
pub type Answer = (Pending, Result<Value, RequestError>);

/// The client's state.
pub struct Session {
    conn: Connection,
    /// Who we are.
    pub me: Welcome,
    /// What was asked.
    pub start: Start,
    /// Where we are.
    pub phase: Phase,
    /// The room code we host or joined.
    pub room_code: Option<String>,
    /// The game followed.
    pub game_id: Option<String>,
    /// The game document.
    pub game: Option<Versioned>,
    /// The followed game's last `game.crowd` (spectators, online flags): unversioned and
    /// outside the document.
    pub crowd: Value,
    /// Our side from `game.started` (the document decides after a swap).
    started_side: Option<String>,
    /// A `room.join` is under way: the first snapshot that arrives is the room's game.
    awaiting_game: bool,
    /// The start request was cut off by a drop: send it again after reconnecting.
    retry_start: bool,
    /// The server's address when it is not the default (the share line names it).
    pub server: Option<String>,
    /// When to ask again to watch a room that was still waiting for its second player.
    watch_retry_at: Option<Instant>,
    /// The lobby document.
    pub lobby: Option<Versioned>,
    /// The last `queue.status` while queued: our place and how many others wait.
    pub queue_status: Option<Value>,
    /// When the server queued us.
    pub queued_at: Option<Instant>,
    /// Watching a game whose rematch started: its id, until the new game's snapshot comes
    /// (the rematch may not exist yet when the finished game names it, so ask again).
    following_rematch: Option<String>,
    /// Legal moves at a seq, for completion and `legal`.
    pub legal: Option<(u64, Vec<String>)>,
    /// Whether the link is up.
    pub connected: bool,
    /// The position (moves or status) changed since the front-end last drew it.
    pub board_changed: bool,
    /// Anything in the document changed (clocks, spectators …).
    pub doc_changed: bool,
    /// The lobby changed.
    pub lobby_changed: bool,
    /// The user asked to quit, or the connection is gone for good.
    pub quit: bool,
    /// Quitting because something failed (exit status 1).
    pub failed: bool,
    notes: Vec<Note>,
    answers: mpsc::UnboundedSender<Answer>,
    moves_seen: Option<(String, usize)>,
    turn_announced: Option<(String, usize)>,
    end_announced: Option<String>,
    /// The draw offer last seen (its side) and the number of moves then.
    offer_seen: Option<(String, usize)>,
    rematch_seen: Vec<(String, String)>,
    /// Before both first actions: the side to act and its first-move deadline, to tell a
    /// window that ran out from a player's abort (the document says `aborted` for both).
    first_move_seen: Option<(String, u64)>,
    /// This session asked to abort the game it shows.
    abort_sent: bool,
    watch_in_flight: bool,
    started_at: Option<Instant>,
}

/// One line naming the typed commands (the terminal UI's hint line).
pub const HELP: &str =
    "commands: <move> · legal · resign · draw offer/accept/decline · rematch · help · quit";

/// The commands of someone watching a game (no moves, no offers).
pub const WATCH_HELP: &str = "watching: watch <game> · join <code> · help · quit";

/// The commands in the lobby.
pub const LOBBY_HELP: &str =
    "lobby: ↑/↓ and Enter join a room or watch a game · join <code> · watch <game> · help · quit";

/// Moves that name no cell, in any game: the pie-rule swap, Akunur's pass.
const CELLLESS_MOVES: &[&str] = &["swap", "pass"];

/// The typed commands, one per line, with what each does (`help`).
pub const HELP_PAGE: &str = "\
<move>                type a move in the game's notation (Tab completes in the terminal UI)
move <notation>       the same, for a move that looks like a command
legal                 list your legal moves (on your turn)
swap                  take the pie-rule swap (Unane and Akron, second player's first turn)
resign                give up this game (the terminal UI asks you to confirm)
draw offer            offer a draw; the opponent answers draw accept or draw decline
draw accept           accept the opponent's draw offer
draw decline          decline the opponent's draw offer
abort                 end the game without a result, before both sides have moved
claim                 claim the win when the opponent has been gone past the timeout
rematch               ask for a rematch after the end (sides are exchanged)
board                 draw the board again
watch <id|code>       watch another game (after this one, or from the lobby)
join <code>           join a room by its code
help                  this list
help <game>           how to play unane, staku, akron or akunur
quit                  leave (a running game goes on and your clock runs; come back with
                      stoa watch <game-id>)";

impl Session {
    /// A session over an open connection; answers to requests arrive on the returned
    /// receiver and must be passed to [`Session::on_answer`].
    pub fn new(
        conn: Connection,
        me: Welcome,
        start: Start,
    ) -> (Session, mpsc::UnboundedReceiver<Answer>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Session {
                conn,
                me,
                start,
                phase: Phase::Starting,
                room_code: None,
                game_id: None,
                game: None,
                crowd: Value::Null,
                started_side: None,
                awaiting_game: false,
                retry_start: false,
                server: None,
                watch_retry_at: None,
                lobby: None,
                queue_status: None,
                queued_at: None,
                following_rematch: None,
                legal: None,
                connected: true,
                board_changed: false,
                doc_changed: false,
                lobby_changed: false,
                quit: false,
                failed: false,
                notes: Vec::new(),
                answers: tx,
                moves_seen: None,
                turn_announced: None,
                end_announced: None,
                offer_seen: None,
                first_move_seen: None,
                abort_sent: false,
                rematch_seen: Vec::new(),
                watch_in_flight: false,
                started_at: None,
            },
            rx,
        )
    }

    /// The server's clock now.
    pub fn server_now(&self) -> i64 {
        self.conn.server_now_ms()
    }

    /// Notes produced since the last call.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    fn fail(&mut self) {
        self.quit = true;
        self.failed = true;
    }

    fn info(&mut self, s: impl Into<String>) {
        self.notes.push(Note::Info(s.into()));
    }

    /// Adds an informational note (for the front-end's own messages).
    pub fn note_info(&mut self, s: impl Into<String>) {
        self.info(s);
    }

    fn error(&mut self, e: &RequestError) {
        self.notes
            .push(Note::Error(format!("error {}: {}", e.code(), e.message())));
    }

    /// As [`Session::request`], sent after `delay`.
    fn request_later(&self, pending: Pending, msg: Value, delay: Duration) {
        let conn = self.conn.clone();
        let tx = self.answers.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let answer = conn.request(msg).await;
            let _ = tx.send((pending, answer));
        });
    }

    fn request(&self, pending: Pending, msg: Value) {
        let conn = self.conn.clone();
        let tx = self.answers.clone();
        tokio::spawn(async move {
            let answer = conn.request(msg).await;
            let _ = tx.send((pending, answer));
        });
    }

    /// The game document, if we have one.
    pub fn doc(&self) -> Option<GameDoc<'_>> {
        self.game
            .as_ref()
            .map(|v| GameDoc::with_crowd(&v.doc, &self.crowd))
    }

    /// Our side in the followed game: the document's seat of our id (it changes after a
    /// swap), else the side `game.started` gave. `None` for a spectator.
    pub fn my_side(&self) -> Option<String> {
        self.doc()
            .and_then(|g| g.side_of(&self.me.id))
            .or_else(|| self.started_side.clone())
    }

    /// Watching, not playing (a seated player running `stoa watch` plays).
    pub fn spectating(&self) -> bool {
        self.my_side().is_none()
    }

    /// Whether the followed game has ended.
    pub fn game_over(&self) -> bool {
        self.doc().is_some_and(|g| g.status().ended)
    }

    /// Whether we are to act now.
    pub fn my_turn(&self) -> bool {
        match (self.doc(), self.my_side()) {
            (Some(g), Some(side)) => !g.status().ended && g.to_act() == Some(side.as_str()),
            _ => false,
        }
    }

    /// Sends the start request.
    pub fn begin(&mut self) {
        let msg = match &self.start {
            Start::Queue {
                kind,
                options,
                clock,
                rated,
            } => {
                json!({"t":"queue.join","kind":kind,"options":options,"clock":clock,"rated":rated})
            }
            Start::Host {
                kind,
                options,
                clock,
                rated,
                visibility,
                side,
            } => {
                json!({"t":"room.create","kind":kind,"options":options,"clock":clock,"rated":rated,"visibility":visibility,"side":side})
            }
            Start::Computer {
                kind,
                options,
                clock,
                level,
                side,
            } => {
                json!({"t":"bot.play","kind":kind,"options":options,"clock":clock,"level":level,"side":side})
            }
            Start::Join { code } => {
                self.awaiting_game = true;
                json!({"t":"room.join","code":code})
            }
            Start::Watch { target } => {
                self.game_id = Some(target.clone());
                json!({"t":"game.watch","game_id":target})
            }
            Start::Lobby => {
                self.phase = Phase::Lobby;
                json!({"t":"lobby.watch"})
            }
        };
        self.request(Pending::Start, msg);
    }

    /// Handles one connection event.
    pub fn on_event(&mut self, ev: ConnEvent) {
        match ev {
            ConnEvent::Message(msg) => self.on_message(msg),
            ConnEvent::Disconnected(why) => {
                self.connected = false;
                self.watch_in_flight = false;
                self.info(format!("disconnected: {why}; reconnecting"));
            }
            ConnEvent::Reconnected(me) => {
                self.connected = true;
                self.me = me;
                self.info("reconnected");
                self.resubscribe();
            }
            ConnEvent::Closed(why) => {
                self.connected = false;
                self.notes
                    .push(Note::Error(format!("error connection: {why}")));
                self.fail();
            }
        }
    }

    /// After a reconnect: subscriptions ended with the old connection, so ask again.
    fn resubscribe(&mut self) {
        if self.phase == Phase::Lobby {
            self.request(Pending::LobbyWatch, json!({"t":"lobby.watch"}));
        }
        if self.game_id.is_some() {
            self.watch_game();
        }
        if self.phase == Phase::Queued || std::mem::take(&mut self.retry_start) {
            // Dropping every connection left the queue (join it again), or the start request
            // itself was cut off.
            self.begin();
        }
    }

    /// Asks for the followed game again: the missed diffs when the server still has them,
    /// else a snapshot.
    fn watch_game(&mut self) {
        let Some(id) = self.game_id.clone() else {
            return;
        };
        if self.watch_in_flight {
            return;
        }
        self.watch_in_flight = true;
        let mut msg = json!({"t":"game.watch","game_id":id});
        if let Some(v) = &self.game {
            msg["since"] = json!(v.seq);
        }
        if let Some(code) = &self.room_code {
            if self.spectating() {
                // Wire addition: lets a spectator of a private game resume by its code.
                msg["code"] = json!(code);
            }
        }
        self.request(Pending::Watch, msg);
    }

    fn on_message(&mut self, msg: Value) {
        match msg["t"].as_str().unwrap_or_default() {
            "game.started" => {
                let id = msg["game_id"].as_str().unwrap_or_default().to_string();
                let side = msg["side"].as_str().unwrap_or_default().to_string();
                if self.game_id.as_deref() != Some(id.as_str()) {
                    if let Some(old) = &self.game_id {
                        // A rematch: the finished game is of no more interest.
                        self.conn.send(json!({"t":"game.unwatch","game_id":old}));
                    }
                    self.game = None;
                    self.legal = None;
                    self.offer_seen = None;
                    self.abort_sent = false;
                    self.first_move_seen = None;
                }
                if self.phase == Phase::Starting {
                    // The game can start before the answer to our join arrives: say we
                    // joined first, in the order it happened (the late answer says nothing).
                    if let Start::Join { code } = &self.start {
                        let line = format!("joined room {code}");
                        self.info(line);
                    }
                }
                self.game_id = Some(id.clone());
                self.started_side = Some(side.clone());
                self.awaiting_game = false;
                self.queue_status = None;
                self.phase = Phase::Game;
                self.started_at = Some(Instant::now());
                self.info(format!("game started {id} side {side}"));
            }
            "game.snapshot" => {
                self.watch_retry_at = None;
                let id = msg["game_id"].as_str().unwrap_or_default();
                if self.game_id.is_none() && self.awaiting_game {
                    self.awaiting_game = false;
                    self.game_id = Some(id.to_string());
                }
                if let Start::Watch { target } = &self.start {
                    if self.game.is_none()
                        && self.game_id.as_deref() == Some(target)
                        && id != target
                    {
                        // `watch <room-code>`: the server resolved the code to its game; keep
                        // the code to watch again (reconnects) and follow the real id.
                        self.room_code = Some(target.clone());
                        self.game_id = Some(id.to_string());
                    }
                }
                if self.game_id.as_deref() != Some(id) {
                    return;
                }
                let seq = msg["seq"].as_u64().unwrap_or(0);
                if self.game.as_ref().is_some_and(|g| g.seq > seq) {
                    return;
                }
                self.watch_in_flight = false;
                self.following_rematch = None;
                self.game = Some(Versioned::new(seq, msg["doc"].clone()));
                if self.phase != Phase::Game {
                    self.phase = Phase::Game;
                }
                self.after_game_change(true);
            }
            "game.crowd" => {
                let id = msg["game_id"].as_str().unwrap_or_default();
                if self.game_id.as_deref() == Some(id) {
                    self.crowd = msg;
                    self.doc_changed = true;
                }
            }
            "game.diff" => {
                let id = msg["game_id"].as_str().unwrap_or_default();
                if self.game_id.as_deref() != Some(id) {
                    return;
                }
                let seq = msg["seq"].as_u64().unwrap_or(0);
                let Some(game) = self.game.as_mut() else {
                    self.watch_game();
                    return;
                };
                match game.apply(seq, &msg["patch"]) {
                    Applied::Changed => self.after_game_change(false),
                    Applied::Stale => {}
                    Applied::Gap => {
                        self.watch_in_flight = false;
                        self.watch_game();
                    }
                }
            }
            "lobby" | "lobby.diff" if self.phase != Phase::Lobby => {}
            "lobby" => {
                self.lobby = Some(Versioned::new(
                    msg["seq"].as_u64().unwrap_or(0),
                    msg["doc"].clone(),
                ));
                self.lobby_changed = true;
            }
            "lobby.diff" => {
                let seq = msg["seq"].as_u64().unwrap_or(0);
                let gap = match self.lobby.as_mut() {
                    Some(l) => match l.apply(seq, &msg["patch"]) {
                        Applied::Changed => {
                            self.lobby_changed = true;
                            false
                        }
                        Applied::Stale => false,
                        Applied::Gap => true,
                    },
                    None => false,
                };
                if gap {
                    self.request(Pending::LobbyWatch, json!({"t":"lobby.watch"}));
                }
            }
            "error" => {
                let e = RequestError::Server {
                    code: msg["code"].as_str().unwrap_or("?").into(),
                    message: msg["message"].as_str().unwrap_or("").into(),
                };
                self.error(&e);
            }
            "queue.status" if self.phase == Phase::Queued => {
                let line = queue_line(&msg);
                self.queue_status = Some(msg);
                self.info(line);
            }
            "shutdown" => {
                self.info(format!(
                    "server shutting down: {}",
                    msg["message"].as_str().unwrap_or("")
                ));
            }
            _ => {}
        }
    }

    /// Announces what changed in the game: new moves, whose turn, offers, the end.
    fn after_game_change(&mut self, snapshot: bool) {
        self.doc_changed = true;
        let Some(v) = &self.game else { return };
        let doc = v.doc.clone();
        let g = GameDoc::new(&doc);
        let id = g.id().to_string();
        let moves = g.moves();
        let seen = match &self.moves_seen {
            Some((gid, n)) if *gid == id => *n,
            _ => {
                if !moves.is_empty() && snapshot {
                    self.info(format!("moves so far: {}", moves.join(" ")));
                }
                moves.len()
            }
        };
        if seen != moves.len() || snapshot {
            self.board_changed = true;
            // The legal moves were those of the position before: fetched again on our turn.
            self.legal = None;
        }
        for (i, m) in moves.iter().enumerate().skip(seen) {
            self.info(format!("move {} {m}", i + 1));
        }
        self.moves_seen = Some((id.clone(), moves.len()));
        let status = g.status();
        if status.ended {
            if self.end_announced.as_deref() != Some(id.as_str()) {
                self.end_announced = Some(id.clone());
                self.board_changed = true;
                self.legal = None;
                self.notes.push(Note::End {
                    plain: format!("game over: {}", outcome_text(&status)),
                    people: format!("game over: {}", ending_sentence(&status, &g.sides())),
                });
                if status.reason.as_deref() == Some("aborted") {
                    let why = self.abort_reason(&g);
                    self.info(format!("aborted: {why}"));
                } else if doc["rated"] == true && self.my_side().is_some() {
                    self.request(
                        Pending::RatingChange(id.clone(), 0),
                        json!({"t":"history","limit":1}),
                    );
                }
            }
            // Server addition: `rematch.requested` lists the sides that asked for one.
            let mine = self.my_side();
            let asked: Vec<String> = doc["rematch"]["requested"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            for side in asked {
                let key = (id.clone(), side.clone());
                if Some(&side) != mine.as_ref() && !self.rematch_seen.contains(&key) {
                    self.rematch_seen.push(key);
                    if mine.is_some() {
                        self.info(format!("rematch requested by {side} (type: rematch)"));
                    } else {
                        self.info(format!("rematch requested by {side}"));
                    }
                }
            }
            // A spectator follows the players into their rematch.
            if let Some(next) = doc["rematch"]["game_id"].as_str() {
                if mine.is_none() && self.following_rematch.is_none() && next != id {
                    self.follow_rematch(next.to_string());
                }
            }
            return;
        }
        let offer = g.draw_offer().map(String::from);
        let mine = self.my_side();
        if offer.as_ref() != self.offer_seen.as_ref().map(|(side, _)| side) {
            match (&offer, &self.offer_seen) {
                (Some(side), _) if Some(side) != mine.as_ref() => self.info(if mine.is_some() {
                    format!("draw offered by {side} (type: draw accept | draw decline)")
                } else {
                    format!("draw offered by {side}")
                }),
                (Some(side), _) => self.info(format!("draw offered by {side}")),
                // The offer went away while the game goes on: declined, unless the side
                // that offered moved since (then it lapsed). The decliner has its answer.
                (None, Some((side, at))) => {
                    let other = g
                        .sides()
                        .into_iter()
                        .find(|s| s != side)
                        .unwrap_or_default();
                    let lapsed = moves.len() != *at;
                    match (mine.as_deref() == Some(side.as_str()), lapsed) {
                        (true, false) => self.info(format!("{other} declined your draw offer")),
                        (true, true) => self.info("your draw offer lapsed with your move"),
                        (false, false) if mine.is_none() => {
                            self.info(format!("{other} declined the draw offer of {side}"))
                        }
                        (false, true) => self.info(format!("the draw offer of {side} lapsed")),
                        (false, false) => {}
                    }
                }
                (None, None) => {}
            }
        }
        self.offer_seen = offer.map(|side| (side, moves.len()));
        self.first_move_seen = g
            .to_act()
            .zip(g.clock()["first_action_deadline"].as_u64())
            .map(|(side, deadline)| (side.to_string(), deadline));
        let turn_key = (id, moves.len());
        if self.my_turn() && self.turn_announced.as_ref() != Some(&turn_key) {
            self.turn_announced = Some(turn_key);
            self.info("your turn");
            self.fetch_legal();
        }
    }

    /// Why the game shown was aborted: its end came at the first-move deadline of the side
    /// to act, or a player aborted it (this session, or else its opponent).
    fn abort_reason(&self, g: &GameDoc) -> String {
        if let Some((side, deadline)) = &self.first_move_seen {
            if self.server_now() + 1_000 >= *deadline as i64 {
                return format!("{side} did not make a first move in time");
            }
        }
        match self.my_side() {
            Some(_) if self.abort_sent => "you aborted the game".into(),
            Some(mine) => {
                let other = g.sides().into_iter().find(|s| *s != mine);
                format!(
                    "{} aborted the game",
                    other.as_deref().unwrap_or("the opponent")
                )
            }
            None => "a player aborted the game".into(),
        }
    }

    /// Watches the rematch of the finished game we watch: a new document at seq 0.
    fn follow_rematch(&mut self, next: String) {
        if let Some(old) = self.game_id.take() {
            self.conn.send(json!({"t":"game.unwatch","game_id":old}));
        }
        self.info(format!("rematch started: watching {next}"));
        self.game = None;
        self.crowd = Value::Null;
        self.legal = None;
        self.offer_seen = None;
        self.abort_sent = false;
        self.first_move_seen = None;
        self.game_id = Some(next.clone());
        self.following_rematch = Some(next);
        self.started_at = Some(Instant::now());
        self.watch_in_flight = false;
        self.watch_game();
    }

    /// Asks for the legal moves of the side to act.
    pub fn fetch_legal(&mut self) {
        if let Some(id) = &self.game_id {
            self.request(Pending::Legal, json!({"t":"game.legal","game_id":id}));
        }
    }

    /// Handles the answer to one of our requests.
    pub fn on_answer(&mut self, (pending, answer): Answer) {
        match pending {
            Pending::Start => self.on_start_answer(answer),
            Pending::Watch => {
                self.watch_in_flight = false;
                if let Err(e) = answer {
                    // A rematch that is not there yet is asked for again on the tick.
                    let early_rematch = self.following_rematch.is_some() && e.code() == "not_found";
                    if e != RequestError::Disconnected && !early_rematch {
                        self.error(&e);
                    }
                }
            }
            Pending::Legal => {
                if let Ok(msg) = answer {
                    let moves = msg["moves"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|m| m.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                    self.legal = Some((msg["seq"].as_u64().unwrap_or(0), moves));
                }
            }
            Pending::Move(mv) => {
                if let Err(e) = answer {
                    // One error line, so the reason stays the last thing shown.
                    let hint = if e.code() == "illegal_move" {
                        " (type legal to list the legal moves)"
                    } else {
                        ""
                    };
                    self.notes.push(Note::Error(format!(
                        "error {}: {mv} not played: {}{hint}",
                        e.code(),
                        e.message()
                    )));
                }
            }
            Pending::Action(what) => match answer {
                Ok(_) => match what {
                    "rematch" => self.info("rematch requested; waiting for the opponent"),
                    "draw offer" => self.info("draw offered"),
                    "draw decline" => self.info("draw declined"),
                    _ => {}
                },
                Err(e) => self.error(&e),
            },
            Pending::LobbyWatch => {
                if let Err(e) = answer {
                    self.error(&e);
                }
            }
            Pending::RatingChange(game_id, asked) => {
                // A failure only loses this line: the result itself is already shown.
                let Ok(answer) = answer else { return };
                let newest = &answer["games"][0];
                if newest["id"] == game_id.as_str() {
                    let players = newest["players"].as_object().cloned().unwrap_or_default();
                    let mine = players.iter().find(|(_, p)| p["id"] == self.me.id.as_str());
                    if let Some((side, p)) = mine {
                        let before = p["rating"].as_f64();
                        let after = newest["ratings_after"][side.as_str()].as_f64();
                        if let (Some(before), Some(after)) = (before, after) {
                            self.info(format!("your {}", present::rating_change(before, after)));
                            return;
                        }
                    }
                }
                if asked < RATING_ASKS {
                    self.request_later(
                        Pending::RatingChange(game_id, asked + 1),
                        json!({"t":"history","limit":1}),
                        Duration::from_millis(300),
                    );
                }
            }
        }
    }

    fn on_start_answer(&mut self, answer: Result<Value, RequestError>) {
        let msg = match answer {
            Ok(m) => m,
            Err(e) => {
                if let Start::Watch { target } = &self.start {
                    let target = target.clone();
                    if e.code() == "conflict" && e.message().contains("waiting") {
                        // A room still waiting for its second player: watch its game once
                        // it starts (watching never takes the free seat).
                        if self.watch_retry_at.is_none() {
                            self.info(format!(
                                "room {target} is waiting for its second player: watching starts with its game"
                            ));
                        }
                        self.watch_retry_at = Some(Instant::now() + Duration::from_secs(2));
                        return;
                    }
                    if e != RequestError::Disconnected {
                        // Say what the user typed (a game id, or a room code).
                        self.notes.push(Note::Error(format!(
                            "error {}: cannot watch '{target}': {}",
                            e.code(),
                            e.message()
                        )));
                        self.fail();
                        return;
                    }
                }
                if e == RequestError::Disconnected {
                    // Watching and the lobby resubscribe anyway; the others ask again.
                    if matches!(
                        self.start,
                        Start::Queue { .. } | Start::Host { .. } | Start::Join { .. }
                    ) {
                        self.info("the start request was cut off; retrying after reconnect");
                        self.retry_start = true;
                    }
                    return;
                }
                self.error(&e);
                self.fail();
                return;
            }
        };
        match msg["t"].as_str().unwrap_or_default() {
            // A late answer (the game may already have started) says nothing any more.
            "queued" if self.phase == Phase::Starting => {
                self.phase = Phase::Queued;
                self.queued_at = Some(Instant::now());
                self.info(format!(
                    "queued position {}",
                    msg["position"].as_u64().unwrap_or(0)
                ));
            }
            "queued" => {}
            "room" => {
                let room = &msg["room"];
                let code = room["code"].as_str().unwrap_or_default().to_string();
                self.room_code = Some(code.clone());
                match &self.start {
                    // Once the game started, a late answer says nothing any more.
                    Start::Computer { level, .. } => {
                        if self.phase == Phase::Starting {
                            self.phase = Phase::Hosting;
                            self.info(format!(
                                "waiting for the computer (level {level}) to sit down"
                            ));
                        }
                    }
                    Start::Host { .. } => {
                        if self.phase == Phase::Starting {
                            self.phase = Phase::Hosting;
                        }
                        self.info(format!("room {code}"));
                        let line = self.share_line(&code);
                        self.info(format!("share this line with your opponent: {line}"));
                        self.info("waiting for an opponent");
                    }
                    _ => {
                        if self.phase == Phase::Starting {
                            self.phase = Phase::Joined;
                            self.info(format!("joined room {code}"));
                        }
                    }
                }
            }
            "game.snapshot" => {
                // Watching (a full room answers like game.watch); the document itself came
                // through the event stream.
                if matches!(self.start, Start::Join { .. }) {
                    self.info("the room is full: watching its game");
                }
                if let Some(id) = msg["game_id"].as_str() {
                    if self.game_id.is_none() {
                        self.game_id = Some(id.to_string());
                    }
                }
                if self.phase != Phase::Lobby {
                    self.phase = Phase::Game;
                }
                if self.spectating() {
                    if let Some(id) = self.game_id.clone() {
                        self.info(format!("watching {id}"));
                    }
                }
            }
            "lobby" => {}
            _ => {
                if self.phase == Phase::Starting {
                    self.phase = Phase::Game;
                }
            }
        }
    }

    /// Periodic work: if a game started but no snapshot came, ask for it; watch a waiting
    /// room's game again.
    pub fn on_tick(&mut self) {
        if self
            .watch_retry_at
            .is_some_and(|at| Instant::now() >= at && self.connected)
        {
            self.watch_retry_at = Some(Instant::now() + Duration::from_secs(60));
            if let Start::Watch { target } = &self.start {
                let msg = json!({"t":"game.watch","game_id":target});
                self.request(Pending::Start, msg);
            }
        }
        if self.phase == Phase::Game && self.game.is_none() && self.connected {
            let wait = if self.following_rematch.is_some() {
                Duration::from_millis(300)
            } else {
                Duration::from_secs(2)
            };
            if let Some(t) = self.started_at {
                if t.elapsed() > wait {
                    self.started_at = Some(Instant::now());
                    self.watch_game();
                }
            }
        }
    }

    /// The command an invited opponent runs to join room `code` (it names the server when
    /// it is not the default one).
    pub fn share_line(&self, code: &str) -> String {
        match &self.server {
            Some(s) => format!("stoa --server {s} join {code}"),
            None => format!("stoa join {code}"),
        }
    }

    /// What to tell a player who leaves a game that goes on: how to come back.
    pub fn leaving_note(&self) -> Option<String> {
        let id = self.game_id.as_ref()?;
        if self.spectating() || self.game_over() || self.game.is_none() {
            return None;
        }
        Some(format!(
            "game {id} goes on without you and your clock runs; resume with: stoa watch {id}"
        ))
    }

    /// Whether leaving now would walk away from a game we play that is still running.
    pub fn in_running_game(&self) -> bool {
        self.game.is_some() && !self.spectating() && !self.game_over()
    }

    /// Best-effort goodbye: leave a queue or close a waiting room.
    pub fn leave(&mut self) {
        match self.phase {
            Phase::Queued => self.conn.send(json!({"t":"queue.leave"})),
            Phase::Hosting => {
                if let Some(code) = &self.room_code {
                    self.conn.send(json!({"t":"room.leave","code":code}));
                }
            }
            _ => {}
        }
    }

    /// Handles one typed line: a command or a move.
    pub fn on_input(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default().to_ascii_lowercase();
        let rest: Vec<&str> = words.collect();
        match (first.as_str(), rest.as_slice()) {
            ("help" | "?", []) => self.notes.push(Note::Page {
                title: "commands".into(),
                text: HELP_PAGE.into(),
            }),
            ("help" | "rules", [game]) => match stoa_protocol::guide(&game.to_ascii_lowercase()) {
                Some(text) => self.notes.push(Note::Page {
                    title: format!("how to play {}", game.to_ascii_lowercase()),
                    text: text.into(),
                }),
                None => self.notes.push(Note::Error(format!(
                    "error input: no guide for '{game}' (games: unane, staku, akron, akunur)"
                ))),
            },
            ("quit" | "exit" | "/quit" | "/q", _) => {
                self.leave();
                self.quit = true;
            }
            ("board", _) => {
                self.board_changed = true;
                self.doc_changed = true;
            }
            ("legal", _) => match &self.legal {
                Some((_, moves)) if self.my_turn() => {
                    let title = format!("legal moves ({})", moves.len());
                    self.notes.push(Note::Page {
                        title,
                        text: format!("legal: {}", moves.join(" ")),
                    });
                }
                _ => {
                    if self.my_turn() {
                        self.fetch_legal();
                        self.info("fetching legal moves; type legal again");
                    } else {
                        self.info("legal moves are listed on your turn");
                    }
                }
            },
            ("watch", [target]) => self.switch(Start::Watch {
                target: target.to_string(),
            }),
            ("join", [code]) => self.switch(Start::Join {
                code: code.to_string(),
            }),
            ("resign", []) => self.action("resign", json!({"t":"game.resign"})),
            ("abort", []) => {
                self.abort_sent = true;
                self.action("abort", json!({"t":"game.abort"}))
            }
            ("claim", []) => self.action("claim", json!({"t":"game.claim"})),
            ("rematch", []) => self.action("rematch", json!({"t":"game.rematch"})),
            ("draw", []) | ("draw", ["offer"]) | ("offer", ["draw"]) => {
                self.action("draw offer", json!({"t":"game.draw","action":"offer"}))
            }
            ("draw", ["accept"]) | ("accept", []) | ("accept", ["draw"]) => {
                self.action("draw accept", json!({"t":"game.draw","action":"accept"}))
            }
            ("draw", ["decline"]) | ("decline", []) | ("decline", ["draw"]) => {
                self.action("draw decline", json!({"t":"game.draw","action":"decline"}))
            }
            ("move", [mv]) => self.play(mv),
            (word, []) if !self.may_be_move(word) => self.notes.push(Note::Error(format!(
                "error input: '{line}' is neither a command nor a move; {HELP}"
            ))),
            (_, []) => self.play(line),
            _ => self.notes.push(Note::Error(format!(
                "error input: '{line}' is neither a command nor a move; {HELP}"
            ))),
        }
    }

    /// Whether a single typed word may be a move, so goes to the server as one: a legal
    /// move, or anything naming a cell (a digit: the server says why it is illegal).
    /// A word without one (a mistyped command) that no position allows is said back.
    fn may_be_move(&self, word: &str) -> bool {
        let w = word.to_ascii_lowercase();
        if let Some((_, legal)) = &self.legal {
            if legal.iter().any(|m| m.to_ascii_lowercase() == w) {
                return true;
            }
        }
        w.chars().any(|c| c.is_ascii_digit()) || CELLLESS_MOVES.contains(&w.as_str())
    }

    /// Leaves the lobby (or a finished game) for another start.
    fn switch(&mut self, start: Start) {
        if self.phase == Phase::Lobby {
            self.conn.send(json!({"t":"lobby.unwatch"}));
            self.lobby = None;
        } else if let Some(id) = &self.game_id {
            if self.spectating() || self.game_over() {
                self.conn.send(json!({"t":"game.unwatch","game_id":id}));
            } else {
                self.notes.push(Note::Error(
                    "error input: finish or resign this game first".into(),
                ));
                return;
            }
        }
        self.game = None;
        self.game_id = None;
        self.legal = None;
        self.started_side = None;
        self.room_code = None;
        self.phase = Phase::Starting;
        self.start = start;
        self.board_changed = true;
        self.begin();
    }

    fn game_target(&mut self) -> Option<String> {
        match (&self.game_id, self.spectating()) {
            // After `game.started` the seat is known even before the snapshot arrives.
            (Some(id), false) if self.game.is_some() || self.started_side.is_some() => {
                Some(id.clone())
            }
            (Some(_), true) => {
                self.notes.push(Note::Error(
                    "error forbidden: you are watching this game, not playing".into(),
                ));
                None
            }
            _ => {
                self.notes
                    .push(Note::Error("error input: no game in progress yet".into()));
                None
            }
        }
    }

    fn action(&mut self, what: &'static str, mut msg: Value) {
        let Some(id) = self.game_target() else { return };
        msg["game_id"] = json!(id);
        self.request(Pending::Action(what), msg);
    }

    /// Sends a move. No `seq` is sent: when it is our turn only we change the position, and
    /// spectator or clock updates must not make a good move stale.
    pub fn play(&mut self, mv: &str) {
        let Some(id) = self.game_target() else { return };
        self.request(
            Pending::Move(mv.to_string()),
            json!({"t":"game.move","game_id":id,"move":mv}),
        );
    }

    /// Legal moves starting with `prefix` (case-insensitive), for completion.
    pub fn completions(&self, prefix: &str) -> Vec<String> {
        let p = prefix.trim().to_ascii_lowercase();
        match &self.legal {
            Some((_, moves)) if self.my_turn() && !p.is_empty() => moves
                .iter()
                .filter(|m| m.to_ascii_lowercase().starts_with(&p))
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A `queue.status` message in words: our place and how many others wait.
pub fn queue_line(msg: &Value) -> String {
    let n = |k: &str| msg[k].as_u64().unwrap_or(0);
    let same = match n("same_queue") {
        0 => "nobody else waits for the same settings".to_string(),
        1 => "1 other player waits for the same settings".to_string(),
        k => format!("{k} other players wait for the same settings"),
    };
    format!(
        "in the queue: position {}; {same}; {} in other queues",
        n("position"),
        n("other_queues")
    )
}
