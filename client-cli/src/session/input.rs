//! The text commands a person types (`resign`, `draw offer`, `watch <id>`, a move …) and
//! the requests they make.

use stoa_protocol::wire::{ClientMessage, DrawAction};

use super::answers::Pending;
use super::{Note, Phase, Session, Start};

/// One line naming the typed commands (the terminal UI's hint line).
pub const HELP: &str =
    "commands: <move> · legal · resign · draw offer/accept/decline · rematch · say <text> · help · quit";

/// The commands of someone watching a game (no moves, no offers).
pub const WATCH_HELP: &str = "watching: say <text> · watch <game> · join <code> · help · quit";

/// The commands in the lobby.
pub const LOBBY_HELP: &str =
    "lobby: ↑/↓ and Enter join a room or watch a game · join <code> · watch <game> · help · quit";

/// The commands in an arena, between its games.
pub const ARENA_HELP: &str =
    "arena: join · pause · standings · berserk (in a game, before your first move) · help · quit";

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
say <text>            say a line in the game's chat (players talk with players,
                      spectators with spectators); while your room waits, in the
                      room's chat with whoever opened the invitation
mute <name>           stop seeing the chat lines of someone who chatted here
unmute <name>         see them again
report <name> <reason> [what happened]
                      tell the operators about a player of this game (the
                      opponent, a player, or someone who chatted here); reasons:
                      abuse, cheating, name (an offensive name) or other; their
                      latest chat line here goes with it
spectators off|on     (players) turn the spectators' chat off or on
board                 draw the board again
watch <id|code>       watch another game (after this one, or from the lobby)
join <code>           join a room by its code
arena <id|code>       open an arena (from the lobby): its standings, then join
join                  (stoa arena) enter the arena's pool, or come back after a pause:
                      the server pairs you as soon as an opponent is free
pause                 (stoa arena) leave the pool; your points stay, a game in
                      progress goes on and counts
standings             (stoa arena) the arena's standings: rank, name, score, sheet
                      (🔥: on fire, the next win counts double), performance
berserk               (arena game, before your first move) halve your time and play
                      without increment; a win scores one more point
devices               list the devices holding your identity, numbered
revoke <n>            revoke device n of that list: its token stops working and its
                      connections close
link                  show a one-time code to type on another device (stoa link <code>,
                      or Devices in the browser) to be you there too
help                  this list
help <game>           how to play unane, staku, akron or akunur
quit                  leave (a running game goes on and your clock runs; come back with
                      stoa watch <game-id>)";

impl Session {
    /// Handles one typed line: a command or a move.
    pub fn on_input(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default().to_ascii_lowercase();
        let rest: Vec<&str> = words.collect();
        if self.arena_command(&first, &rest) {
            return;
        }
        match (first.as_str(), rest.as_slice()) {
            ("help" | "?", []) => self.notes.push(Note::Page {
                title: "commands".into(),
                text: HELP_PAGE.into(),
            }),
            ("help" | "rules", [game]) => self.guide(game),
            ("quit" | "exit" | "/quit" | "/q", _) => {
                self.leave();
                self.quit();
            }
            ("board", _) => {
                self.redraw.board = true;
                self.redraw.doc = true;
            }
            ("legal", _) => self.legal_command(),
            ("mute" | "unmute", [name]) => self.mute(name, first == "mute"),
            ("spectators", [state @ ("on" | "off")]) => {
                let on = *state == "on";
                self.chat_request("spectators", |game_id| ClientMessage::ChatSpectators {
                    rid: None,
                    game_id,
                    on,
                });
            }
            ("say", [_, ..]) => {
                // The text as typed after the command word, inner spacing kept.
                let text = line.split_once(char::is_whitespace).map_or("", |(_, t)| t);
                self.say(text.trim());
            }
            ("report", words) => self.report_command(words),
            ("devices", []) => self.devices_command(),
            ("revoke", [n]) => self.revoke_command(n),
            ("link", []) => self.link_command(),
            ("watch", [target]) => self.switch(Start::Watch {
                target: target.to_string(),
            }),
            ("join", [code]) => self.switch(Start::Join {
                code: code.to_string(),
            }),
            ("arena", [target]) => self.switch(Start::Arena {
                target: target.to_string(),
                join: false,
            }),
            (word, rest) => {
                if !self.game_command(word, rest) {
                    self.move_or_nonsense(line, word, rest);
                }
            }
        }
    }

    /// `help <game>`: how to play it.
    fn guide(&mut self, game: &str) {
        let name = game.to_ascii_lowercase();
        match stoa_protocol::guide(&name) {
            Some(text) => self.notes.push(Note::Page {
                title: format!("how to play {name}"),
                text: text.into(),
            }),
            None => self.notes.push(Note::Error(format!(
                "error input: no guide for '{game}' (games: unane, staku, akron, akunur)"
            ))),
        }
    }

    /// `legal`: the legal moves, when known and it is our turn.
    fn legal_command(&mut self) {
        match &self.game.legal {
            Some((_, moves)) if self.my_turn() => {
                let title = format!("legal moves ({})", moves.len());
                let text = format!("legal: {}", moves.join(" "));
                self.notes.push(Note::Page { title, text });
            }
            _ => {
                if self.my_turn() {
                    self.fetch_legal();
                    self.info("fetching legal moves; type legal again");
                } else {
                    self.info("legal moves are listed on your turn");
                }
            }
        }
    }

    /// A command acting on the game we play; `false` when the words are none.
    fn game_command(&mut self, word: &str, rest: &[&str]) -> bool {
        let draw = |action| {
            move |game_id| ClientMessage::GameDraw {
                rid: None,
                game_id,
                action,
            }
        };
        match (word, rest) {
            ("resign", []) => self.action("resign", |game_id| ClientMessage::GameResign {
                rid: None,
                game_id,
            }),
            ("abort", []) => {
                self.game.abort_sent = true;
                self.action("abort", |game_id| ClientMessage::GameAbort {
                    rid: None,
                    game_id,
                })
            }
            ("claim", []) => self.action("claim", |game_id| ClientMessage::GameClaim {
                rid: None,
                game_id,
            }),
            ("rematch", []) => {
                self.rematch_sent = self.game_id.clone();
                self.action("rematch", |game_id| ClientMessage::GameRematch {
                    rid: None,
                    game_id,
                })
            }
            ("draw", []) | ("draw", ["offer"]) | ("offer", ["draw"]) => {
                self.action("draw offer", draw(DrawAction::Offer))
            }
            ("draw", ["accept"]) | ("accept", []) | ("accept", ["draw"]) => {
                self.action("draw accept", draw(DrawAction::Accept))
            }
            ("draw", ["decline"]) | ("decline", []) | ("decline", ["draw"]) => {
                self.action("draw decline", draw(DrawAction::Decline))
            }
            ("move", [mv]) => self.play(mv),
            _ => return false,
        }
        true
    }

    /// A line that is no command: a move when it may be one, else said back.
    fn move_or_nonsense(&mut self, line: &str, word: &str, rest: &[&str]) {
        if rest.is_empty() && self.may_be_move(word) {
            self.play(line);
        } else {
            self.notes.push(Note::Error(format!(
                "error input: '{line}' is neither a command nor a move; {HELP}"
            )));
        }
    }

    /// Whether a single typed word may be a move, so goes to the server as one: a legal
    /// move, or anything naming a cell (a digit: the server says why it is illegal).
    /// A word without one (a mistyped command) that no position allows is said back.
    fn may_be_move(&self, word: &str) -> bool {
        let w = word.to_ascii_lowercase();
        if let Some((_, legal)) = &self.game.legal {
            if legal.iter().any(|m| m.to_ascii_lowercase() == w) {
                return true;
            }
        }
        w.chars().any(|c| c.is_ascii_digit()) || CELLLESS_MOVES.contains(&w.as_str())
    }

    /// Leaves the lobby (or a finished game) for another start.
    fn switch(&mut self, start: Start) {
        if self.in_arena() {
            // The arena pairs us again and again: leaving it is `quit`.
            self.notes.push(Note::Error(
                "error input: this client is in an arena; quit it first".into(),
            ));
            return;
        }
        if self.phase.is_lobby() {
            self.conn.send(ClientMessage::LobbyUnwatch { rid: None });
        } else if let Some(id) = &self.game_id {
            if self.spectating() || self.game_over() {
                self.conn.send(ClientMessage::GameUnwatch {
                    rid: None,
                    game_id: id.clone(),
                });
            } else {
                self.notes.push(Note::Error(
                    "error input: finish or resign this game first".into(),
                ));
                return;
            }
        }
        self.game.doc = None;
        self.game.legal = None;
        self.game.chat_seen = 0;
        self.game.chat_authors.clear();
        self.game_id = None;
        self.started_side = None;
        self.room_code = None;
        self.phase = Phase::Starting { cut_off: false };
        // `arena <id>` typed at the lobby follows the arena from here on, as `stoa arena`.
        self.arena = Session::arena_start(&start);
        self.start = start;
        self.redraw.board = true;
        self.begin();
    }

    /// The game our commands act on: one we play, once we know it.
    fn game_target(&mut self) -> Option<String> {
        match (&self.game_id, self.spectating()) {
            // After `game.started` the seat is known even before the snapshot arrives.
            (Some(id), false) if self.game.doc.is_some() || self.started_side.is_some() => {
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

    /// Sends a game action, made for the game we play.
    pub(super) fn action(&mut self, what: &'static str, msg: impl FnOnce(String) -> ClientMessage) {
        let Some(id) = self.game_target() else { return };
        self.request(Pending::Action(what), msg(id));
    }

    /// Sends a move. No `seq` is sent: when it is our turn only we change the position, and
    /// spectator or clock updates must not make a good move stale.
    pub fn play(&mut self, mv: &str) {
        let Some(id) = self.game_target() else { return };
        let msg = ClientMessage::GameMove {
            rid: None,
            game_id: id,
            mv: mv.to_string(),
            seq: None,
        };
        self.request(Pending::Move(mv.to_string()), msg);
    }

    /// `say <text>`: a line in the chat of the game followed (played or watched); it comes
    /// back as a `chat` message like everyone else's.
    fn say(&mut self, text: &str) {
        if self.room_say(text) {
            return;
        }
        let text = text.to_string();
        self.chat_request("say", |game_id| ClientMessage::ChatSay {
            rid: None,
            game_id,
            channel: None,
            text,
        });
    }

    /// `mute <name>` / `unmute <name>`: by the name of someone whose line was shown here.
    fn mute(&mut self, name: &str, muted: bool) {
        let Some(player_id) = self.game.chat_authors.get(name).cloned() else {
            self.notes.push(Note::Error(format!(
                "error input: nobody named '{name}' has chatted in this game"
            )));
            return;
        };
        let what = if muted { "mute" } else { "unmute" };
        self.chat_request(what, |game_id| ClientMessage::ChatMute {
            rid: None,
            game_id,
            player_id,
            muted,
        });
    }

    /// Sends a chat request for the game followed (played or watched).
    fn chat_request(&mut self, what: &'static str, msg: impl FnOnce(String) -> ClientMessage) {
        let Some(game_id) = self.game_id.clone() else {
            self.notes
                .push(Note::Error("error input: no game to chat in yet".into()));
            return;
        };
        self.request(Pending::Action(what), msg(game_id));
    }

    /// Legal moves starting with `prefix` (case-insensitive), for completion.
    pub fn completions(&self, prefix: &str) -> Vec<String> {
        let p = prefix.trim().to_ascii_lowercase();
        match &self.game.legal {
            Some((_, moves)) if self.my_turn() && !p.is_empty() => moves
                .iter()
                .filter(|m| m.to_ascii_lowercase().starts_with(&p))
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }
}
