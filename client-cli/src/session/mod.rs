//! The client's state machine, shared by plain mode and the terminal UI: what we asked the
//! server for (queue, room, watch, lobby), the game document we follow, whose side we are,
//! and the text commands a person types (`resign`, `draw offer`, a move …).
//!
//! Why front-end agnostic: both front-ends feed it the same inputs (connection events,
//! request results, typed lines, ticks) and read the same state and notes, so a behaviour
//! tested in plain mode holds in the terminal UI.
//!
//! One concept per file: [`start`] (what the user asked for and its answer), [`events`]
//! (the server's pushes), [`announce`] (what a change of the game says), [`answers`] (the
//! answers to our other requests), [`devices`] (the devices holding this identity), [`input`] (typed commands), [`phase`] (where we are),
//! [`followed`] (the game we follow), [`arena`] (the arena followed, `stoa arena`) and
//! [`note`] (the lines for the user).

mod announce;
mod answers;
mod arena;
mod devices;
mod events;
mod followed;
mod input;
mod note;
mod phase;
mod report;
mod resend;
mod room_chat;
mod start;

use std::time::{Duration, Instant};

use stoa_protocol::wire::ClientMessage;
use tokio::sync::mpsc;

use crate::connection::{Connection, RequestError, Welcome};
use crate::document::{GameDoc, Versioned};

pub use answers::Answer;
use answers::Pending;
pub use events::disconnected_line;
use followed::{Announced, Followed};
pub use input::{ARENA_HELP, HELP, LOBBY_HELP, WATCH_HELP};
pub use note::Note;
pub use phase::{Phase, QueueStatus};
pub use start::Start;

/// What the front-end must draw again since it last drew.
///
/// Why flags and not state: they say what changed, for the front-end to clear once drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redraw {
    /// The position (moves or status) changed.
    pub board: bool,
    /// Anything in the document changed (clocks, spectators …).
    pub doc: bool,
    /// The lobby changed.
    pub lobby: bool,
    /// The arena's document changed, or we came back to it.
    pub arena: bool,
}

/// Why the session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The user asked to quit (exit status 0).
    Quit,
    /// Something failed, or the connection is gone for good (exit status 1).
    Failed,
}

/// The client's state.
pub struct Session {
    conn: Connection,
    answers: mpsc::UnboundedSender<Answer>,
    /// Who we are.
    pub me: Welcome,
    /// What was asked.
    pub start: Start,
    /// The server's address when it is not the default (the share line names it).
    pub server: Option<String>,
    /// Where we are, with the state only that phase has.
    phase: Phase,
    /// The room code we host or joined (or the code a game is watched by).
    pub room_code: Option<String>,
    /// The id of the game followed (or asked for).
    pub game_id: Option<String>,
    /// The followed game's document and what was seen of it.
    game: Followed,
    /// Our side from `game.started` (the document decides after a swap).
    started_side: Option<String>,
    /// When the followed game started (or was switched to), to ask for a snapshot that
    /// does not come.
    started_at: Option<Instant>,
    /// Watching a game whose rematch started: its id, until the new game's snapshot comes
    /// (the rematch may not exist yet when the finished game names it, so ask again).
    following_rematch: Option<String>,
    /// When to ask again to watch a room that was still waiting for its second player.
    watch_retry_at: Option<Instant>,
    /// A `game.watch` of the followed game is on its way: do not ask twice.
    watch_in_flight: bool,
    /// The finished game whose rematch we asked for, until that request was said: by its
    /// answer, or just before the rematch's `game started` when the game came first (the
    /// lines keep the order things happened in).
    rematch_sent: Option<String>,
    /// A move answered `unavailable` (a game changing servers), sent again by itself.
    resend: Option<resend::Resend>,
    /// What was already said, across games.
    announced: Announced,
    /// Whether the link is up.
    pub connected: bool,
    /// What to draw again.
    pub redraw: Redraw,
    /// The room chat's lines already shown are those before this time (ms).
    room_chat_seen: u64,
    /// The devices as `devices` last listed them (`revoke <n>` names one by its number).
    devices: Vec<stoa_protocol::wire::DeviceInfo>,
    /// The arena followed (`stoa arena`), across its games.
    arena: Option<arena::ArenaFollow>,
    /// Leaving the arena: the pause sent on the way out, unanswered, and how long the exit
    /// waits for its answer (a message still queued when the process ends is lost).
    arena_leaving: Option<Instant>,
    /// Set once the session should end.
    exit: Option<Exit>,
    notes: Vec<Note>,
}

impl Session {
    /// A session over an open connection; answers to requests arrive on the returned
    /// receiver and must be passed to [`Session::on_answer`].
    pub fn new(
        conn: Connection,
        me: Welcome,
        start: Start,
    ) -> (Session, mpsc::UnboundedReceiver<Answer>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let arena = Session::arena_start(&start);
        (
            Session {
                arena,
                arena_leaving: None,
                conn,
                answers: tx,
                me,
                start,
                server: None,
                phase: Phase::Starting { cut_off: false },
                room_code: None,
                game_id: None,
                game: Followed::default(),
                started_side: None,
                started_at: None,
                following_rematch: None,
                watch_retry_at: None,
                watch_in_flight: false,
                rematch_sent: None,
                resend: None,
                announced: Announced::default(),
                connected: true,
                redraw: Redraw::default(),
                room_chat_seen: 0,
                devices: Vec::new(),
                exit: None,
                notes: Vec::new(),
            },
            rx,
        )
    }

    /// Where the session is.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The lobby document, while browsing the lobby and once it came.
    pub fn lobby(&self) -> Option<&Versioned> {
        match &self.phase {
            Phase::Lobby { doc } => doc.as_ref(),
            _ => None,
        }
    }

    /// The server's clock now.
    pub fn server_now(&self) -> i64 {
        self.conn.server_now_ms()
    }

    /// Notes produced since the last call.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    /// Whether the session should end now (the user quit, or something failed); a user
    /// leaving an arena's pool waits for the server to take the pause, a moment at most.
    pub fn quitting(&self) -> bool {
        self.exit.is_some()
            && (self.exit == Some(Exit::Failed)
                || self
                    .arena_leaving
                    .is_none_or(|until| Instant::now() >= until))
    }

    /// Whether the session ends because something failed (exit status 1).
    pub fn failed(&self) -> bool {
        self.exit == Some(Exit::Failed)
    }

    /// Ends the session at the user's wish.
    pub fn quit(&mut self) {
        // A failure already noted stays the reason.
        self.exit.get_or_insert(Exit::Quit);
    }

    fn fail(&mut self) {
        self.exit = Some(Exit::Failed);
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
    fn request_later(&self, pending: Pending, msg: ClientMessage, delay: Duration) {
        let conn = self.conn.clone();
        let tx = self.answers.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let answer = conn.request(msg).await;
            let _ = tx.send((pending, answer));
        });
    }

    /// Sends a request; its answer comes back through [`Session::on_answer`] with `pending`.
    fn request(&self, pending: Pending, msg: ClientMessage) {
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
            .doc
            .as_ref()
            .map(|v| GameDoc::with_crowd(&v.doc, &self.game.crowd))
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

    /// The command an invited opponent runs to join room `code` (it names the server when
    /// it is not the default one).
    pub fn share_line(&self, code: &str) -> String {
        self.command_line(&format!("join {code}"))
    }

    /// The web client's address on the server we are connected to (`http(s)://host[:port]`),
    /// for the links to share; `None` when the address cannot say it.
    pub fn web_base(&self) -> Option<String> {
        web_base(&self.me.url)
    }

    /// The `stoa` command that opens `what` (e.g. `arena <id>`) on this server: it names the
    /// server when it is not the default one.
    pub fn command_line(&self, what: &str) -> String {
        match &self.server {
            Some(s) => format!("stoa --server {s} {what}"),
            None => format!("stoa {what}"),
        }
    }

    /// What to tell a player who leaves a game that goes on: how to come back.
    pub fn leaving_note(&self) -> Option<String> {
        let id = self.game_id.as_ref()?;
        if self.spectating() || self.game_over() || self.game.doc.is_none() {
            return None;
        }
        Some(format!(
            "game {id} goes on without you and your clock runs; resume with: stoa watch {id}"
        ))
    }

    /// Whether leaving now would walk away from a game we play that is still running.
    pub fn in_running_game(&self) -> bool {
        self.game.doc.is_some() && !self.spectating() && !self.game_over()
    }

    /// Whether a game of ours started (`game.started`) and its first snapshot has not come.
    pub fn game_starting(&self) -> bool {
        matches!(self.phase, Phase::Game) && self.game.doc.is_none() && self.started_side.is_some()
    }

    /// Best-effort goodbye: leave a queue, close a waiting room, or leave an arena's pool.
    pub fn leave(&mut self) {
        if self.in_arena() {
            self.leave_arena();
        }
        match self.phase {
            Phase::Queued { .. } => self.conn.send(ClientMessage::QueueLeave { rid: None }),
            Phase::Hosting => {
                if let Some(code) = &self.room_code {
                    self.conn.send(ClientMessage::RoomLeave {
                        rid: None,
                        code: code.clone(),
                    });
                }
            }
            _ => {}
        }
    }

    /// Asks for the legal moves of the side to act.
    pub fn fetch_legal(&mut self) {
        if let Some(id) = &self.game_id {
            let msg = ClientMessage::GameLegal {
                rid: None,
                game_id: id.clone(),
            };
            self.request(Pending::Legal, msg);
        }
    }
}

/// The web client's base address for a websocket address: `ws` becomes `http` and `wss`
/// `https`, and the websocket path (`/ws`, or `/prefix/ws` behind a proxy that mounts the
/// server under a prefix) gives way to the pages' root. The web pages are served by the
/// same server (or balancer) as the websocket, so the address the client used is the one
/// a browser can open.
pub fn web_base(ws_url: &str) -> Option<String> {
    let (scheme, rest) = ws_url.trim().split_once("://")?;
    let scheme = match scheme {
        "ws" => "http",
        "wss" => "https",
        _ => return None,
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.is_empty() {
        return None;
    }
    let path = path.trim_end_matches('/');
    let prefix = path
        .strip_suffix("ws")
        .filter(|p| p.is_empty() || p.ends_with('/'))
        .map(|p| p.trim_end_matches('/'))
        .unwrap_or("");
    Some(if prefix.is_empty() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/{prefix}")
    })
}

#[cfg(test)]
mod tests {
    use super::web_base;

    #[test]
    fn web_links_come_from_the_websocket_address() {
        let base = |u: &str| web_base(u);
        assert_eq!(
            base("ws://127.0.0.1:7878/ws").as_deref(),
            Some("http://127.0.0.1:7878")
        );
        assert_eq!(
            base("wss://stoa.example.org/ws").as_deref(),
            Some("https://stoa.example.org")
        );
        assert_eq!(
            base("wss://example.org/games/ws").as_deref(),
            Some("https://example.org/games")
        );
        assert_eq!(
            base("ws://example.org:81/socket").as_deref(),
            Some("http://example.org:81")
        );
        assert_eq!(base("ftp://x/ws"), None);
        assert_eq!(base("ws:///ws"), None);
    }
}
