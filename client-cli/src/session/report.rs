//! `report <name> <reason> [text…]`: tells the operators about a player of the game
//! followed (played or watched) — an opponent, a player, or someone whose chat line was
//! shown here. With a chat line of theirs in this game the report points at their latest
//! one (the server copies the lines around it for the operators); else at the game.

use stoa_protocol::wire::{ClientMessage, ReportReason, ReportRequest, ServerMessage};

use super::answers::Pending;
use super::{Note, Session};
use crate::connection::RequestError;

/// The reasons as typed, the short words first, and the wire names also.
pub const REASONS: &str = "abuse, cheating, name or other";

/// The reason a typed word names: `abuse`, `cheating`, `name`, `other`, or a wire name.
pub fn reason_named(word: &str) -> Option<ReportReason> {
    match word.to_ascii_lowercase().as_str() {
        "abuse" | "chat" => Some(ReportReason::ChatAbuse),
        "cheat" | "cheating" => Some(ReportReason::Cheating),
        "name" => Some(ReportReason::OffensiveName),
        w => ReportReason::parse(w),
    }
}

impl Session {
    /// `report …`: `words` are the words after `report`.
    pub(super) fn report_command(&mut self, words: &[&str]) {
        let usage =
            format!("error input: type report <name> <reason> [what happened]; reasons: {REASONS}");
        if words.len() < 2 {
            self.notes.push(Note::Error(usage));
            return;
        }
        let Some(game_id) = self.game_id.clone() else {
            self.notes.push(Note::Error(
                "error input: report a player of the game you play or watch, once it is here"
                    .into(),
            ));
            return;
        };
        // A name may hold spaces: the longest run of words naming someone here wins.
        let found = (1..words.len()).rev().find_map(|k| {
            let name = words[..k].join(" ");
            self.player_named(&name).map(|(shown, id)| (k, shown, id))
        });
        let Some((k, name, player_id)) = found else {
            self.notes.push(Note::Error(format!(
                "error input: nobody named '{}' plays or has chatted in this game",
                words[0]
            )));
            return;
        };
        if player_id == self.me.id {
            self.notes.push(Note::Error(
                "error input: you cannot report yourself".into(),
            ));
            return;
        }
        let Some(reason) = reason_named(words[k]) else {
            self.notes.push(Note::Error(format!(
                "error input: '{}' is no reason to report; reasons: {REASONS}",
                words[k]
            )));
            return;
        };
        let text = words[k + 1..].join(" ");
        let ts = self.game.chat_last.get(&player_id).copied();
        let msg = ClientMessage::Report(ReportRequest {
            rid: None,
            player_id,
            reason,
            text: Some(text).filter(|t| !t.is_empty()),
            game_id: Some(game_id),
            code: None,
            ts,
        });
        self.request(Pending::Report(name), msg);
    }

    /// The name as shown and the id of the player named `name` here: a chat author (their
    /// latest name), else a player of the game; exact first, then ignoring case.
    fn player_named(&self, name: &str) -> Option<(String, String)> {
        let mut known: Vec<(String, String)> = self
            .game
            .chat_authors
            .iter()
            .map(|(n, id)| (n.clone(), id.clone()))
            .collect();
        if let Some(g) = self.doc() {
            for side in g.sides() {
                if let Some(id) = g.player(&side)["id"].as_str() {
                    known.push((g.player_name(&side).to_string(), id.to_string()));
                }
            }
        }
        known
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| known.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)))
            .cloned()
    }

    /// The answer to a report: its id, or the server's reason for refusing it.
    pub(super) fn on_report_answer(
        &mut self,
        name: String,
        answer: Result<ServerMessage, RequestError>,
    ) {
        match answer {
            Ok(ServerMessage::Reported { report_id, .. }) => self.info(format!(
                "reported {name} ({report_id}): an operator will read it"
            )),
            Ok(_) => self.info(format!("reported {name}: an operator will read it")),
            Err(e) => self.error(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_as_typed_and_on_the_wire() {
        assert_eq!(reason_named("abuse"), Some(ReportReason::ChatAbuse));
        assert_eq!(reason_named("chat_abuse"), Some(ReportReason::ChatAbuse));
        assert_eq!(reason_named("Cheating"), Some(ReportReason::Cheating));
        assert_eq!(reason_named("name"), Some(ReportReason::OffensiveName));
        assert_eq!(
            reason_named("offensive_name"),
            Some(ReportReason::OffensiveName)
        );
        assert_eq!(reason_named("other"), Some(ReportReason::Other));
        assert_eq!(reason_named("rude"), None);
    }
}
