//! What a change of the followed game says: new moves, whose turn, draw offers, the end,
//! rematch requests; and a spectator following the players into their rematch.

use std::time::Instant;

use serde_json::Value;
use stoa_protocol::wire::ClientMessage;

use super::answers::{rating_request, Pending};
use super::followed::Followed;
use super::{Note, Session};
use crate::document::{ending_sentence, outcome_text, GameDoc, Status};

impl Session {
    /// Announces what changed in the game: new moves, whose turn, offers, the end.
    pub(super) fn after_game_change(&mut self, snapshot: bool) {
        self.redraw.doc = true;
        let Some(v) = &self.game.doc else { return };
        let doc = v.doc.clone();
        let g = GameDoc::new(&doc);
        let id = g.id().to_string();
        let moves = g.moves();
        self.announce_moves(&id, &moves, snapshot);
        let status = g.status();
        if status.ended {
            self.announce_end(&id, &g, &status);
            self.announce_rematch(&id, &doc);
            self.back_to_arena();
            return;
        }
        self.announce_offer(&g, moves.len());
        self.game.first_move_seen = g
            .to_act()
            .zip(g.clock()["first_action_deadline"].as_u64())
            .map(|(side, deadline)| (side.to_string(), deadline));
        let turn_key = (id, moves.len());
        if self.my_turn() && self.announced.turn.as_ref() != Some(&turn_key) {
            self.announced.turn = Some(turn_key);
            self.info("your turn");
            self.fetch_legal();
        }
    }

    /// The moves not said yet (all of them, on the first snapshot of a game).
    fn announce_moves(&mut self, id: &str, moves: &[&str], snapshot: bool) {
        let seen = match &self.announced.moves {
            Some((gid, n)) if gid == id => *n,
            _ => {
                if !moves.is_empty() && snapshot {
                    self.info(format!("moves so far: {}", moves.join(" ")));
                }
                moves.len()
            }
        };
        if seen != moves.len() || snapshot {
            self.redraw.board = true;
            // The legal moves were those of the position before: fetched again on our turn.
            self.game.legal = None;
        }
        for (i, m) in moves.iter().enumerate().skip(seen) {
            self.info(format!("move {} {m}", i + 1));
        }
        self.announced.moves = Some((id.to_string(), moves.len()));
    }

    /// The end, once per game; the rating change of a rated game we played is asked for.
    fn announce_end(&mut self, id: &str, g: &GameDoc, status: &Status) {
        if self.announced.end.as_deref() == Some(id) {
            return;
        }
        self.announced.end = Some(id.to_string());
        self.redraw.board = true;
        self.game.legal = None;
        self.notes.push(Note::End {
            plain: format!("game over: {}", outcome_text(status)),
            people: format!("game over: {}", ending_sentence(status, &g.sides())),
        });
        if status.reason.as_deref() == Some("aborted") {
            let why = self.abort_reason(g);
            self.info(format!("aborted: {why}"));
        } else if g.rated() && self.my_side().is_some() {
            self.request(Pending::RatingChange(id.to_string(), 0), rating_request());
        }
    }

    /// Rematch requests of the other side (server addition: `rematch.requested` lists the
    /// sides that asked); a spectator follows the players into their rematch.
    fn announce_rematch(&mut self, id: &str, doc: &Value) {
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
            let key = (id.to_string(), side.clone());
            if Some(&side) != mine.as_ref() && !self.announced.rematch.contains(&key) {
                self.announced.rematch.push(key);
                // We asked first (or the rematch is already made): theirs is the answer,
                // and telling us to type `rematch` again would be wrong.
                let accepted = mine.as_ref().is_some_and(|m| asked_by(doc, m))
                    || doc["rematch"]["game_id"].is_string();
                if mine.is_some() && accepted {
                    self.info(format!("rematch accepted by {side}"));
                } else if mine.is_some() {
                    self.info(format!("rematch requested by {side} (type: rematch)"));
                } else {
                    self.info(format!("rematch requested by {side}"));
                }
            }
        }
        if let Some(next) = doc["rematch"]["game_id"].as_str() {
            if mine.is_none() && self.following_rematch.is_none() && next != id {
                self.follow_rematch(next.to_string());
            }
        }
    }

    /// The answer to our `rematch`: said unless the rematch already started (its
    /// `game started` line then came with [`Session::rematch_before_start`]).
    pub(super) fn rematch_answered(&mut self) {
        let Some(old) = self.rematch_sent.take() else {
            return;
        };
        if self.game_id.as_deref() != Some(old.as_str()) {
            return;
        }
        if self.rematch_asked_by_opponent(&old) {
            self.info("rematch accepted");
        } else {
            self.info("rematch requested; waiting for the opponent");
        }
    }

    /// Just before the rematch's `game started`: our request, when its answer has not come
    /// yet (the game it made came first), so the lines say what happened in order.
    pub(super) fn rematch_before_start(&mut self, new_id: &str) {
        let Some(old) = self.rematch_sent.take() else {
            return;
        };
        if self.game_id.as_deref() == Some(old.as_str()) && old != new_id {
            if self.rematch_asked_by_opponent(&old) {
                self.info("rematch accepted");
            } else {
                self.info("rematch requested");
            }
        }
    }

    /// Whether the opponent's rematch request for game `id` was seen.
    fn rematch_asked_by_opponent(&self, id: &str) -> bool {
        let mine = self.my_side();
        self.announced
            .rematch
            .iter()
            .any(|(g, side)| g == id && Some(side) != mine.as_ref())
    }

    /// The answer to our draw offer: says it, unless the document already did.
    pub(super) fn own_offer_answered(&mut self) {
        let (Some(side), Some(moves)) = (self.my_side(), self.doc().map(|g| g.moves().len()))
        else {
            return;
        };
        self.say_own_offer(&side, moves);
    }

    /// `draw offered by <our side>`, once per offer (the answer and the document both
    /// report it; whichever comes first says it).
    fn say_own_offer(&mut self, side: &str, moves: usize) {
        if self.game.offer_said != Some(moves) {
            self.game.offer_said = Some(moves);
            self.info(format!("draw offered by {side}"));
        }
    }

    /// A draw offer that came or went while the game goes on.
    fn announce_offer(&mut self, g: &GameDoc, moves: usize) {
        let offer = g.draw_offer().map(String::from);
        let mine = self.my_side();
        if offer.as_ref() != self.game.offer_seen.as_ref().map(|(side, _)| side) {
            match (&offer, self.game.offer_seen.clone()) {
                (Some(side), _) if Some(side) != mine.as_ref() => self.info(if mine.is_some() {
                    format!("draw offered by {side} (type: draw accept | draw decline)")
                } else {
                    format!("draw offered by {side}")
                }),
                (Some(side), _) => self.say_own_offer(side, moves),
                // The offer went away while the game goes on: declined, unless the side
                // that offered moved since (then it lapsed). The decliner has its answer.
                (None, Some((side, at))) => {
                    let other = g
                        .sides()
                        .into_iter()
                        .find(|s| *s != side)
                        .unwrap_or_default();
                    let lapsed = moves != at;
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
        self.game.offer_seen = offer.map(|side| (side, moves));
    }

    /// Why the game shown was aborted: its end came at the first-move deadline of the side
    /// to act, or a player aborted it (this session, or else its opponent).
    fn abort_reason(&self, g: &GameDoc) -> String {
        if let Some((side, deadline)) = &self.game.first_move_seen {
            if self.server_now() + 1_000 >= *deadline as i64 {
                return format!("{side} did not make a first move in time");
            }
        }
        match self.my_side() {
            Some(_) if self.game.abort_sent => "you aborted the game".into(),
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
            self.conn.send(ClientMessage::GameUnwatch {
                rid: None,
                game_id: old,
            });
        }
        self.info(format!("rematch started: watching {next}"));
        self.game = Followed::default();
        self.game_id = Some(next.clone());
        self.following_rematch = Some(next);
        self.started_at = Some(Instant::now());
        self.watch_in_flight = false;
        self.watch_game();
    }
}

/// Whether `side` is among the sides that asked for a rematch in the finished document.
fn asked_by(doc: &Value, side: &str) -> bool {
    doc["rematch"]["requested"]
        .as_array()
        .is_some_and(|a| a.iter().any(|s| s == side))
}
