//! `stoa arena <id|code>`: the arena followed (its document kept live from `arena` and
//! `arena.diff`), the arena commands typed at the prompt (`join`, `pause`, `standings`,
//! `berserk`), and the way back from a finished arena game to the standings.
//!
//! Why the session keeps the arena beside the game it follows: the arena pairs its players
//! again and again, each game an ordinary game shown by the usual game screen; between games
//! (and before the first) the front-ends show the arena ([`Phase::Arena`]).

use std::time::{Duration, Instant};

use serde_json::Value;
use stoa_protocol::wire::{ClientMessage, ServerMessage};

use super::answers::Pending;
use super::{Note, Phase, Session, Start};
use crate::connection::RequestError;
use crate::document::{Applied, Versioned};
use crate::present;

/// How long leaving waits for the server to take the pause sent on the way out.
const LEAVE_WAIT: Duration = Duration::from_secs(2);

/// The arena a session follows.
#[derive(Clone, Debug)]
pub(super) struct ArenaFollow {
    /// What the user typed: an arena id, or a private arena's code.
    pub target: String,
    /// The arena's id, once its document came.
    pub id: Option<String>,
    /// The document and its seq.
    pub doc: Option<Versioned>,
    /// `stoa arena --join`: join once the arena is found.
    pub join_on_open: bool,
    /// The arena game we came back from (the arena's document may still name it as the
    /// game we play for a moment: it must not be followed again).
    pub left_game: Option<String>,
}

/// Whether a typed arena target is an id (`a` and 12 letters or digits, as the server makes
/// them) rather than a private arena's code (10 letters).
pub fn looks_like_arena_id(target: &str) -> bool {
    target.len() == 13
        && target.starts_with('a')
        && target.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `(id, code)` of an arena request for what the user typed.
fn by_target(target: &str) -> (Option<String>, Option<String>) {
    if looks_like_arena_id(target) {
        (Some(target.to_string()), None)
    } else {
        (None, Some(target.to_string()))
    }
}

/// `arena.watch` of what the user typed (by id, or by a private arena's code).
pub(super) fn arena_watch_request(target: &str) -> ClientMessage {
    let (id, code) = by_target(target);
    ClientMessage::ArenaWatch {
        rid: None,
        id,
        code,
    }
}

impl Session {
    /// The arena's document, when following an arena and once it came.
    pub fn arena(&self) -> Option<&Value> {
        self.arena.as_ref()?.doc.as_ref().map(|v| &v.doc)
    }

    /// Whether this session follows an arena (`stoa arena`).
    pub fn in_arena(&self) -> bool {
        self.arena.is_some()
    }

    /// Our entry in the arena's standings, once we joined.
    pub fn arena_me(&self) -> Option<&Value> {
        let me = self.me.id.as_str();
        self.arena()?["players"]
            .as_array()?
            .iter()
            .find(|p| p["id"] == me)
    }

    /// Whether the arena is over for good: finished or cancelled.
    pub fn arena_over(&self) -> bool {
        self.arena()
            .is_some_and(|d| matches!(d["status"].as_str(), Some("finished" | "cancelled")))
    }

    /// The answer to the start request of `stoa arena`.
    pub(super) fn on_arena_opened(&mut self, msg: &ServerMessage) {
        let ServerMessage::Arena { doc, .. } = msg else {
            return;
        };
        if !self.phase.is_starting() {
            return;
        }
        self.phase = Phase::Arena;
        self.redraw.arena = true;
        let id = doc["id"].as_str().unwrap_or_default().to_string();
        if let Start::NewArena { join, .. } = &self.start {
            // From now on it is `stoa arena` of what was created (a reconnect watches it).
            let target = doc["code"].as_str().unwrap_or(&id).to_string();
            self.start = Start::Arena {
                target: target.clone(),
                join: *join,
            };
            if let Some(a) = self.arena.as_mut() {
                a.target = target.clone();
            }
            let line = self.command_line(&format!("arena {target}"));
            self.info(format!("created arena {id}; others open it with: {line}"));
            if let Some(web) = self.web_base() {
                // The arena's page in a browser; a private arena's link carries its code.
                let code = doc["code"]
                    .as_str()
                    .map(|c| format!("?code={c}"))
                    .unwrap_or_default();
                self.info(format!("or this link: {web}/t/{id}{code}"));
            }
        }
        self.info(format!("watching arena {id}"));
        // The document itself came (or comes) through the event stream.
        self.follow_my_arena_game();
        let join = self
            .arena
            .as_mut()
            .is_some_and(|a| std::mem::take(&mut a.join_on_open));
        if join {
            self.arena_join();
        }
    }

    /// The start request of `stoa arena` failed: say which arena, and end (as `stoa watch`
    /// of an unknown game does).
    pub(super) fn on_arena_refused(&mut self, target: &str, e: &RequestError) {
        self.notes.push(Note::Error(format!(
            "error {}: cannot open arena '{target}': {}",
            e.code(),
            e.message()
        )));
        self.fail();
    }

    /// An `arena` document (the answer to a watch, here or after a reconnect).
    pub(super) fn on_arena_doc(&mut self, seq: u64, doc: Value) {
        let Some(a) = self.arena.as_mut() else { return };
        if a.id.as_deref().is_some_and(|id| doc["id"] != id) {
            return;
        }
        let id = doc["id"].as_str().map(String::from);
        if !Versioned::take_snapshot(&mut a.doc, seq, doc, false) {
            return;
        }
        a.id = id;
        self.after_arena_change();
        self.follow_my_arena_game();
    }

    /// An `arena.diff`: applied in seq order; a gap asks for the whole document again.
    pub(super) fn on_arena_diff(&mut self, id: &str, seq: u64, patch: &Value) {
        let Some(a) = self.arena.as_mut() else { return };
        if a.id.as_deref() != Some(id) {
            return;
        }
        let Some(doc) = a.doc.as_mut() else { return };
        match doc.apply(seq, patch) {
            Applied::Changed => self.after_arena_change(),
            Applied::Stale => {}
            Applied::Gap => self.watch_arena(),
        }
    }

    /// Asks for the arena's document again (after a reconnect or a missed diff).
    pub(super) fn watch_arena(&mut self) {
        if let Some(a) = &self.arena {
            let msg = arena_watch_request(&a.target);
            self.request(Pending::ArenaWatch, msg);
        }
    }

    /// The arena changed: draw it again.
    fn after_arena_change(&mut self) {
        self.redraw.arena = true;
    }

    /// On opening the arena (or its whole document again after a reconnect): a game the
    /// document says we play, that we do not follow (the client started mid-game, or its
    /// `game.started` went with a dropped connection), is opened. Live, `game.started`
    /// does it.
    fn follow_my_arena_game(&mut self) {
        if !matches!(self.phase, Phase::Arena) {
            return;
        }
        let playing = self.arena_me().and_then(|p| p["playing"].as_str());
        let left = self.arena.as_ref().and_then(|a| a.left_game.as_deref());
        if let Some(game) = playing.filter(|g| Some(*g) != left).map(String::from) {
            self.info(format!("your arena game {game} is on: opening it"));
            self.game = super::followed::Followed::default();
            self.game_id = Some(game);
            self.started_side = None;
            self.phase = Phase::Game;
            self.started_at = Some(Instant::now());
            self.watch_in_flight = false;
            self.watch_game();
        }
    }

    /// An arena game we played ended: back to the arena's standings (the server pairs us
    /// again when an opponent is free). The finished game's document stays for plain mode's
    /// last board; it is no longer followed.
    pub(super) fn back_to_arena(&mut self) {
        if !self.in_arena() || !matches!(self.phase, Phase::Game) || self.spectating() {
            return;
        }
        // Read before the game is let go: whether it was aborted for our own missing first
        // move (the server then pauses us; the arena's diff saying so may come a moment
        // after the game's end).
        let missed = self.missed_my_first_move();
        if let Some(id) = self.game_id.take() {
            self.conn.send(ClientMessage::GameUnwatch {
                rid: None,
                game_id: id.clone(),
            });
            if let Some(a) = self.arena.as_mut() {
                a.left_game = Some(id);
            }
        }
        self.phase = Phase::Arena;
        self.redraw.arena = true;
        let paused = self.arena_me().is_some_and(|p| p["paused"] == true);
        if self.arena_over() {
            self.info("back to the arena: it is over, no more games are paired");
        } else if missed {
            let target = self
                .arena
                .as_ref()
                .map(|a| a.target.clone())
                .unwrap_or_default();
            let later = self.command_line(&format!("arena {target} --join"));
            self.info(format!(
                "back to the arena: you are paused, as your first move never came; type join to be paired again (or later: {later})"
            ));
        } else if paused {
            self.info("back to the arena: paused, type join to be paired again");
        } else {
            self.info("back to the arena: you are paired again as soon as an opponent is free");
        }
    }

    /// Whether the game just ended was aborted because our own first-move window ran out:
    /// the server then pauses us in the arena (protocol/docs/PROTOCOL.md, "Pairing").
    fn missed_my_first_move(&self) -> bool {
        let aborted = self
            .doc()
            .is_some_and(|g| g.status().reason.as_deref() == Some("aborted"));
        let mine = self.my_side();
        aborted
            && self
                .game
                .first_move_seen
                .as_ref()
                .is_some_and(|(side, deadline)| {
                    Some(side) == mine.as_ref() && self.server_now() + 1_000 >= *deadline as i64
                })
    }

    /// The arena commands: `join`, `pause`, `standings`, `berserk`; `false` when the words
    /// are none of them (or no arena is followed).
    pub(super) fn arena_command(&mut self, word: &str, rest: &[&str]) -> bool {
        if !self.in_arena() {
            return false;
        }
        match (word, rest) {
            ("join", []) => self.arena_join(),
            ("pause", []) => self.arena_pause(),
            ("standings", []) => self.standings_page(),
            ("berserk", []) => self.action("berserk", |game_id| ClientMessage::GameBerserk {
                rid: None,
                game_id,
            }),
            _ => return false,
        }
        true
    }

    /// `join`: enter the arena's pool (again after a pause).
    fn arena_join(&mut self) {
        let Some(a) = &self.arena else { return };
        if a.target.is_empty() {
            // `stoa host-arena` before the server answered.
            self.notes.push(Note::Error(
                "error input: the arena is not created yet".into(),
            ));
            return;
        }
        // As typed: a private arena is joined by its code.
        let (id, code) = by_target(&a.target);
        self.request(
            Pending::Action("arena join"),
            ClientMessage::ArenaJoin {
                rid: None,
                id,
                code,
            },
        );
    }

    /// `pause`: leave the arena's pool (points stay; a game in progress goes on).
    fn arena_pause(&mut self) {
        let Some(id) = self.arena.as_ref().and_then(|a| a.id.clone()) else {
            self.notes.push(Note::Error(
                "error input: the arena is not loaded yet".into(),
            ));
            return;
        };
        self.request(
            Pending::Action("arena pause"),
            ClientMessage::ArenaPause { rid: None, id },
        );
    }

    /// `standings`: the standings as a page (plain mode prints it; the terminal UI opens a
    /// window, useful during a game).
    fn standings_page(&mut self) {
        let Some(doc) = self.arena() else {
            self.notes.push(Note::Error(
                "error input: the arena is not loaded yet".into(),
            ));
            return;
        };
        let me = self.me.id.clone();
        let title = format!(
            "standings of {}",
            doc["name"].as_str().unwrap_or("the arena")
        );
        let text = present::standings_lines(doc, &me).join("\n");
        self.notes.push(Note::Page { title, text });
    }

    /// What an answered arena action says.
    pub(super) fn arena_action_done(&mut self, what: &str) {
        match what {
            "arena join" => {
                let scheduled = self.arena().is_some_and(|d| d["status"] == "scheduled");
                self.info(if scheduled {
                    "joined the arena: pairing starts at its start"
                } else {
                    "joined the arena: you are paired as soon as an opponent is free"
                });
            }
            // A game that started is running before its first snapshot arrives: `pause`
            // typed right after `game started` is about that game.
            "arena pause" => self.info(if self.in_running_game() || self.game_starting() {
                "paused: this game goes on and counts; no new game until you type join"
            } else {
                "paused: you are not paired until you type join"
            }),
            "berserk" => self.info(
                "berserk: your time is halved and you play without increment; a win scores one more",
            ),
            _ => {}
        }
    }

    /// Leaving the client while in the arena's pool: pause, so the arena does not pair a
    /// player who is gone (best effort; `join` after `stoa arena` again un-pauses).
    pub(super) fn leave_arena(&mut self) {
        let in_pool = self.arena_me().is_some_and(|p| p["paused"] != true);
        if !in_pool || self.arena_over() {
            return;
        }
        if let Some(id) = self.arena.as_ref().and_then(|a| a.id.clone()) {
            self.arena_leaving = Some(Instant::now() + LEAVE_WAIT);
            self.request(
                Pending::ArenaLeave,
                ClientMessage::ArenaPause { rid: None, id },
            );
            let target = self
                .arena
                .as_ref()
                .map(|a| a.target.clone())
                .unwrap_or_default();
            self.info(format!(
                "left the arena's pool (paused; your points stay): come back with stoa arena {target}, then join"
            ));
        }
    }

    /// The answer to the pause sent on leaving: the exit need not wait any more.
    pub(super) fn on_arena_left(&mut self, answer: Result<ServerMessage, RequestError>) {
        self.arena_leaving = None;
        if let Err(e) = answer {
            self.error(&e);
        }
    }

    /// Whether `start` is `stoa arena`.
    pub(super) fn arena_start(start: &Start) -> Option<ArenaFollow> {
        match start {
            Start::Arena { target, join } => Some(ArenaFollow {
                target: target.clone(),
                id: None,
                doc: None,
                join_on_open: *join,
                left_game: None,
            }),
            // Its target is known once the server made it (`on_arena_opened`).
            Start::NewArena { join, .. } => Some(ArenaFollow {
                target: String::new(),
                id: None,
                doc: None,
                join_on_open: *join,
                left_game: None,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_codes_are_told_apart() {
        assert!(looks_like_arena_id("a7k2m9x4c0t8r"));
        assert!(!looks_like_arena_id("AB12CD34EF"));
        assert!(!looks_like_arena_id("ab12cd34ef"));
        assert!(!looks_like_arena_id("b7k2m9x4c0t8r"));
        assert_eq!(
            by_target("a7k2m9x4c0t8r"),
            (Some("a7k2m9x4c0t8r".into()), None)
        );
        assert_eq!(by_target("AB12CD34EF"), (None, Some("AB12CD34EF".into())));
    }
}
