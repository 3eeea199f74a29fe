//! A game's chat: its lines, who reads which, who may post, who muted whom.
//!
//! Why pure values: the game's owner decides every change here and every node of a
//! cluster folds the same changes (sent over the bus) into its own copy, so that each node
//! delivers lines to its own subscribers and the history survives the owner's death with
//! any follower that takes the game over. The chat lives only as long as the game's actor:
//! it is never stored.
//!
//! The rules (documented in protocol/docs/PROTOCOL.md, "Chat"): a seated player writes in
//! the players' channel, everyone else in the spectators'; the players' channel is read by
//! the players only, the spectators' by the spectators and — once the game has ended — by
//! the players too (as on lichess, the crowd does not talk to players who are playing). A
//! person who mutes someone stops receiving that person's lines in this game, on every
//! connection; nobody else is affected.

use std::collections::{BTreeSet, HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use stoa_protocol::wire::{ChatChannel, ChatEntry, ErrorCode, MAX_CHAT_CHARS};

use crate::error::ApiError;

/// How many recent lines of each channel are kept (and sent as history).
pub const HISTORY: usize = 100;

/// A person's chat budget, in a game's chat and a waiting room's alike: a burst of this
/// many lines…
pub const LINE_BURST: u32 = 5;
/// …then this many a second.
pub const LINES_PER_SECOND: f64 = 1.0;
/// The answer to a line over that budget.
pub const TOO_FAST: &str = "you are chatting too fast: wait a second";

/// How many people one person may mute in one game (bounds what a game keeps).
pub const MAX_MUTED: usize = 100;

/// Longest player id accepted in a mute (ids are far shorter).
const MAX_ID_LEN: usize = 64;

/// A chat request from a person, as the session hands it on (and a follower forwards it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "c", rename_all = "snake_case")]
pub enum ChatOp {
    /// Say a line.
    Say {
        /// The channel asked for (`None`: the person's own).
        channel: Option<ChatChannel>,
        /// The text as sent.
        text: String,
    },
    /// Mute or unmute a person.
    Mute {
        /// Whom.
        target: String,
        /// Mute (`true`) or unmute.
        muted: bool,
    },
    /// Turn the spectators' chat on or off (seated players only).
    Spectators {
        /// On?
        on: bool,
    },
}

/// A kept line: what the wire shows, and the forwarded command that made it, so that the
/// same command sent again (its answer was lost) is not posted twice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// The line.
    pub entry: ChatEntry,
    /// The forwarded command's id (`node:request`), if it came from another node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
}

/// One change of a chat, decided by the game's owner and folded in by every node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "c", rename_all = "snake_case")]
pub enum Change {
    /// A new line.
    Line(Line),
    /// The spectators' chat turned on or off.
    Spectators {
        /// On?
        on: bool,
    },
    /// `player` muted or unmuted `target`.
    Mute {
        /// Who mutes.
        player: String,
        /// Whom.
        target: String,
        /// Muted now?
        muted: bool,
    },
    /// The whole chat as the owner holds it (for a node that just started following).
    State(ChatLog),
}

/// Who asks: a person and whether they sit in the game.
#[derive(Clone, Copy, Debug)]
pub struct Author<'a> {
    /// Public id.
    pub id: &'a str,
    /// Display name.
    pub name: &'a str,
    /// Seated in the game?
    pub seated: bool,
}

/// Who reads: a subscriber's player (if known), whether it sits in the game, and whether
/// the game has ended.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    /// Public id.
    pub id: Option<&'a str>,
    /// Seated in the game?
    pub seated: bool,
    /// Has the game ended?
    pub ended: bool,
}

/// A game's chat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatLog {
    /// The players' recent lines, oldest first.
    players: VecDeque<Line>,
    /// The spectators' recent lines, oldest first.
    spectators: VecDeque<Line>,
    /// The players turned the spectators' chat off.
    spectators_off: bool,
    /// Whom each person muted.
    muted: HashMap<String, BTreeSet<String>>,
}

/// A line's text as the chat accepts it: trimmed, not empty, at most [`MAX_CHAT_CHARS`]
/// characters, no control characters (line breaks, tabs, escapes).
pub fn clean_text(text: &str) -> Result<String, ApiError> {
    let text = text.trim();
    let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
    if text.is_empty() {
        return Err(bad("a chat line may not be empty".into()));
    }
    if text.chars().any(char::is_control) {
        return Err(bad(
            "a chat line may not contain control characters (line breaks, tabs)".into(),
        ));
    }
    let len = text.chars().count();
    if len > MAX_CHAT_CHARS {
        return Err(bad(format!(
            "a chat line may be at most {MAX_CHAT_CHARS} characters (this one has {len})"
        )));
    }
    Ok(text.to_string())
}

impl ChatLog {
    /// Whether nothing was said or set (a new follower needs no state then).
    pub fn is_empty(&self) -> bool {
        *self == ChatLog::default()
    }

    /// Whether spectators may post.
    pub fn spectators_on(&self) -> bool {
        !self.spectators_off
    }

    /// The ids `player` muted, sorted.
    pub fn muted_by(&self, player: Option<&str>) -> Vec<String> {
        player
            .and_then(|p| self.muted.get(p))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether a line made by the forwarded command `cmd` is kept.
    pub fn posted(&self, cmd: &str) -> bool {
        self.players
            .iter()
            .chain(&self.spectators)
            .any(|l| l.cmd.as_deref() == Some(cmd))
    }

    /// Whether `reader` receives `entry`: its channel is one they read, and they have not
    /// muted its author.
    pub fn reads(&self, reader: Reader<'_>, entry: &ChatEntry) -> bool {
        let channel = match entry.channel {
            ChatChannel::Players => reader.seated,
            ChatChannel::Spectators => !reader.seated || reader.ended,
        };
        channel
            && !reader
                .id
                .and_then(|p| self.muted.get(p))
                .is_some_and(|m| m.contains(&entry.id))
    }

    /// A reported line — `author`'s at `ts`, in a channel `reader` reads — with up to
    /// `around` lines of its channel before and after it, oldest first; `None` when there
    /// is no such line (or the reader cannot read it).
    pub fn context(
        &self,
        reader: Reader<'_>,
        author: &str,
        ts: u64,
        around: usize,
    ) -> Option<(usize, Vec<ChatEntry>)> {
        [&self.players, &self.spectators]
            .into_iter()
            .find_map(|lines| {
                let at = lines.iter().position(|l| {
                    l.entry.id == author && l.entry.ts == ts && self.reads(reader, &l.entry)
                })?;
                let from = at.saturating_sub(around);
                let to = (at + around + 1).min(lines.len());
                let entries = lines
                    .iter()
                    .skip(from)
                    .take(to - from)
                    .map(|l| l.entry.clone());
                Some((at - from, entries.collect()))
            })
    }

    /// The recent lines `reader` receives, oldest first.
    pub fn history(&self, reader: Reader<'_>) -> Vec<ChatEntry> {
        let mut lines: Vec<ChatEntry> = self
            .players
            .iter()
            .chain(&self.spectators)
            .map(|l| &l.entry)
            .filter(|e| self.reads(reader, e))
            .cloned()
            .collect();
        // Stable: lines of one instant keep their channel's order.
        lines.sort_by_key(|e| e.ts);
        lines
    }

    /// Decides a request: the change it makes (`None`: nothing to change), or why it is
    /// refused (then nothing changes). `now_ms` stamps a new line; `cmd` is a forwarded
    /// command's id.
    pub fn decide(
        &self,
        author: Author<'_>,
        op: ChatOp,
        now_ms: u64,
        cmd: Option<String>,
    ) -> Result<Option<Change>, ApiError> {
        match op {
            ChatOp::Say { channel, text } => {
                self.say(author, channel, &text, now_ms, cmd).map(Some)
            }
            ChatOp::Mute { target, muted } => {
                if target.is_empty() || target.chars().count() > MAX_ID_LEN {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        "player_id must be a player's id",
                    ));
                }
                if target == author.id {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        "you cannot mute yourself",
                    ));
                }
                let set = self.muted.get(author.id);
                if muted == set.is_some_and(|s| s.contains(&target)) {
                    return Ok(None);
                }
                if muted && set.is_some_and(|s| s.len() >= MAX_MUTED) {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        format!("you muted {MAX_MUTED} people in this game already"),
                    ));
                }
                Ok(Some(Change::Mute {
                    player: author.id.to_string(),
                    target,
                    muted,
                }))
            }
            ChatOp::Spectators { on } => {
                if !author.seated {
                    return Err(ApiError::new(
                        ErrorCode::Forbidden,
                        "only the seated players turn the spectators' chat on or off",
                    ));
                }
                Ok((on == self.spectators_off).then_some(Change::Spectators { on }))
            }
        }
    }

    /// Decides a line: its change, or why it is refused.
    fn say(
        &self,
        author: Author<'_>,
        channel: Option<ChatChannel>,
        text: &str,
        now_ms: u64,
        cmd: Option<String>,
    ) -> Result<Change, ApiError> {
        let own = if author.seated {
            ChatChannel::Players
        } else {
            ChatChannel::Spectators
        };
        let channel = channel.unwrap_or(own);
        if channel != own {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                match own {
                    ChatChannel::Players => "players write in the players' chat",
                    ChatChannel::Spectators => "only the seated players write in the players' chat",
                },
            ));
        }
        if channel == ChatChannel::Spectators && self.spectators_off {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "the players turned the spectators' chat off for this game",
            ));
        }
        let text = clean_text(text)?;
        // Strictly after the chat's last line, in either channel: a line is named by its
        // author and `ts` (a report points at one), so two lines of one millisecond must not
        // share it, and the history (both channels by `ts`) keeps the order they were said.
        let last = [self.players.back(), self.spectators.back()]
            .into_iter()
            .flatten()
            .map(|l| l.entry.ts)
            .max();
        let ts = last.map_or(now_ms, |t| now_ms.max(t + 1));
        Ok(Change::Line(Line {
            entry: ChatEntry {
                channel,
                id: author.id.to_string(),
                name: author.name.to_string(),
                text,
                ts,
            },
            cmd,
        }))
    }

    /// Folds a change in.
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Line(line) => {
                let lines = match line.entry.channel {
                    ChatChannel::Players => &mut self.players,
                    ChatChannel::Spectators => &mut self.spectators,
                };
                if lines.len() == HISTORY {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
            Change::Spectators { on } => self.spectators_off = !on,
            Change::Mute {
                player,
                target,
                muted,
            } => {
                let set = self.muted.entry(player.clone()).or_default();
                if muted {
                    set.insert(target);
                } else {
                    set.remove(&target);
                }
                if set.is_empty() {
                    self.muted.remove(&player);
                }
            }
            Change::State(log) => *self = log,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str) -> Author<'_> {
        Author {
            id,
            name: id,
            seated: true,
        }
    }

    fn spectator(id: &str) -> Author<'_> {
        Author {
            id,
            name: id,
            seated: false,
        }
    }

    fn say(text: &str) -> ChatOp {
        ChatOp::Say {
            channel: None,
            text: text.into(),
        }
    }

    fn post(log: &mut ChatLog, who: Author<'_>, text: &str, ts: u64) {
        let change = log.decide(who, say(text), ts, None).unwrap().unwrap();
        log.apply(change);
    }

    #[test]
    fn text_is_trimmed_capped_and_never_empty_or_controlled() {
        assert_eq!(clean_text("  hi  ").unwrap(), "hi");
        assert_eq!(clean_text("   ").unwrap_err().code, ErrorCode::BadRequest);
        assert!(clean_text("a\nb").unwrap_err().message.contains("control"));
        assert!(clean_text("a\u{1b}[31m").is_err());
        assert!(clean_text(&"é".repeat(MAX_CHAT_CHARS)).is_ok());
        let long = clean_text(&"x".repeat(MAX_CHAT_CHARS + 1)).unwrap_err();
        assert_eq!(
            long.message,
            "a chat line may be at most 300 characters (this one has 301)"
        );
    }

    #[test]
    fn each_side_reads_its_channel_and_players_read_the_crowd_after_the_end() {
        let mut log = ChatLog::default();
        post(&mut log, player("a"), "good luck", 1);
        post(&mut log, spectator("s"), "go a!", 2);
        let playing = |id, seated| Reader {
            id: Some(id),
            seated,
            ended: false,
        };
        let texts = |r| -> Vec<String> { log.history(r).into_iter().map(|e| e.text).collect() };
        assert_eq!(texts(playing("b", true)), ["good luck"]);
        assert_eq!(texts(playing("t", false)), ["go a!"]);
        let after = Reader {
            id: Some("b"),
            seated: true,
            ended: true,
        };
        assert_eq!(texts(after), ["good luck", "go a!"]);
    }

    #[test]
    fn channels_are_by_role_and_spectators_can_be_silenced() {
        let mut log = ChatLog::default();
        let into_players = ChatOp::Say {
            channel: Some(ChatChannel::Players),
            text: "hi".into(),
        };
        let e = log
            .decide(spectator("s"), into_players, 1, None)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Forbidden);
        let off = ChatOp::Spectators { on: false };
        let e = log
            .decide(spectator("s"), off.clone(), 1, None)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Forbidden);
        let change = log.decide(player("a"), off.clone(), 1, None).unwrap();
        log.apply(change.unwrap());
        assert!(!log.spectators_on());
        // Turning it off again changes nothing.
        assert_eq!(log.decide(player("a"), off, 1, None).unwrap(), None);
        let e = log.decide(spectator("s"), say("hi"), 1, None).unwrap_err();
        assert_eq!(
            e.message,
            "the players turned the spectators' chat off for this game"
        );
        // The players still talk.
        assert!(log.decide(player("a"), say("hi"), 1, None).is_ok());
    }

    #[test]
    fn a_mute_hides_one_author_from_one_reader_only() {
        let mut log = ChatLog::default();
        post(&mut log, player("a"), "one", 1);
        let mute = ChatOp::Mute {
            target: "a".into(),
            muted: true,
        };
        log.apply(log.decide(player("b"), mute, 2, None).unwrap().unwrap());
        post(&mut log, player("a"), "two", 3);
        let b = Reader {
            id: Some("b"),
            seated: true,
            ended: false,
        };
        let a = Reader { id: Some("a"), ..b };
        assert!(log.history(b).is_empty());
        assert_eq!(log.history(a).len(), 2);
        assert_eq!(log.muted_by(Some("b")), ["a"]);
        let myself = ChatOp::Mute {
            target: "b".into(),
            muted: true,
        };
        assert!(log.decide(player("b"), myself, 4, None).is_err());
        let unmute = ChatOp::Mute {
            target: "a".into(),
            muted: false,
        };
        log.apply(log.decide(player("b"), unmute, 5, None).unwrap().unwrap());
        assert_eq!(log.history(b).len(), 2);
        assert!(log.muted_by(Some("b")).is_empty());
    }

    #[test]
    fn history_keeps_the_last_lines_and_remembers_forwarded_commands() {
        let mut log = ChatLog::default();
        for i in 0..(HISTORY as u64 + 5) {
            post(&mut log, player("a"), &format!("line {i}"), i);
        }
        let reader = Reader {
            id: Some("b"),
            seated: true,
            ended: false,
        };
        let history = log.history(reader);
        assert_eq!(history.len(), HISTORY);
        assert_eq!(history[0].text, "line 5");
        let change = log
            .decide(player("a"), say("again"), 200, Some("n1:7".into()))
            .unwrap()
            .unwrap();
        log.apply(change);
        assert!(log.posted("n1:7"));
        assert!(!log.posted("n1:8"));
        // The whole state travels over the bus and comes back equal.
        let state = Change::State(log.clone());
        let text = serde_json::to_string(&state).unwrap();
        let mut copy = ChatLog::default();
        copy.apply(serde_json::from_str(&text).unwrap());
        assert_eq!(copy, log);
    }
}
