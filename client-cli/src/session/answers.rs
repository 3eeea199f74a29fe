//! The answers to the session's requests: each request is sent with what it was for
//! ([`Pending`]), and its answer comes back with it.

use std::time::Duration;

use stoa_protocol::wire::{ClientMessage, ServerMessage};

use super::{Note, Session};
use crate::connection::RequestError;
use crate::present;

/// How many times the rating change of a rated game is asked again while its record is
/// not written yet.
const RATING_ASKS: u8 = 10;

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
    /// `arena.watch` again (after a reconnect or a missed diff).
    ArenaWatch,
    /// `arena.pause` sent on leaving the client.
    ArenaLeave,
    /// `history` (the newest game) after a rated game ended, for the rating change: the
    /// game's id and how many times it was asked before (its record is written just after
    /// the end).
    RatingChange(String, u8),
    /// `room.watch` of the room we host.
    RoomWatch,
    /// `devices` (the `devices` command).
    Devices,
    /// `link.code` (the `link` command).
    LinkCode,
    /// `device.revoke` of a listed device (the `revoke <n>` command).
    Revoke(stoa_protocol::wire::DeviceInfo),
    /// `report` of the player shown under this name.
    Report(String),
}

/// A request's answer, delivered back to the front-end loop.
pub type Answer = (Pending, Result<ServerMessage, RequestError>);

/// `history` of our newest game, for its rating change.
pub(super) fn rating_request() -> ClientMessage {
    ClientMessage::History {
        rid: None,
        player_id: None,
        before: None,
        limit: Some(1),
    }
}

impl Session {
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
                if let Ok(ServerMessage::Legal { seq, moves, .. }) = answer {
                    self.game.legal = Some((seq, moves));
                }
            }
            Pending::Move(mv) => self.on_move_answer(mv, answer),
            Pending::Action(what) => self.on_action_answer(what, answer),
            Pending::LobbyWatch => {
                if let Err(e) = answer {
                    self.error(&e);
                }
            }
            Pending::ArenaLeave => self.on_arena_left(answer),
            Pending::ArenaWatch => {
                if let Err(e) = answer {
                    if e != RequestError::Disconnected {
                        self.error(&e);
                    }
                }
            }
            Pending::RoomWatch => self.on_room_history(answer),
            Pending::Report(name) => self.on_report_answer(name, answer),
            pending @ (Pending::Devices | Pending::LinkCode | Pending::Revoke(_)) => {
                self.on_devices_answer(pending, answer)
            }
            Pending::RatingChange(game_id, asked) => {
                // A failure only loses this line: the result itself is already shown.
                match answer {
                    Ok(ServerMessage::History { games, .. }) => {
                        self.on_history(game_id, asked, games.first())
                    }
                    Ok(_) => self.on_history(game_id, asked, None),
                    Err(_) => {}
                }
            }
        }
    }

    /// The answer to a move: played, kept to send again (a game changing servers, a
    /// dropped connection), or not played and why.
    fn on_move_answer(&mut self, mv: String, answer: Result<ServerMessage, RequestError>) {
        match answer {
            // A game changing servers answers again in a moment: the move is sent
            // again by itself, never typed twice.
            Err(e) if e.code() == "unavailable" && self.keep_for_resend(&mv) => {}
            Err(RequestError::Disconnected) if self.resend_after_drop(&mv) => {}
            Ok(_) => self.move_answered(&mv),
            Err(e) => {
                self.move_answered(&mv);
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
    }

    /// The answer to a game or arena action (rematch, draw, mute …).
    fn on_action_answer(
        &mut self,
        what: &'static str,
        answer: Result<ServerMessage, RequestError>,
    ) {
        match answer {
            Ok(_) => match what {
                "rematch" => self.rematch_answered(),
                "draw offer" => self.own_offer_answered(),
                "draw decline" => self.info("draw declined"),
                "mute" => self.info("muted: their chat lines no longer reach you here"),
                "unmute" => self.info("unmuted: their chat lines reach you again"),
                other => self.arena_action_done(other),
            },
            Err(e) => {
                if what == "rematch" {
                    self.rematch_sent = None;
                }
                self.error(&e)
            }
        }
    }

    /// Says our rating change when the newest finished game is `game_id`, else asks again
    /// a little later (its record is written just after the end).
    fn on_history(&mut self, game_id: String, asked: u8, newest: Option<&serde_json::Value>) {
        // A game summary is a JSON document of the protocol, read as such.
        let newest = newest.unwrap_or(&serde_json::Value::Null);
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
                rating_request(),
                Duration::from_millis(300),
            );
        }
    }
}
