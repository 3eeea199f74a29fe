//! The one rule for who may see a game — watch it, read its legal moves, fetch its record —
//! whether it is live or finished, and wherever the question is asked (a game actor, a
//! session answering for a finished game, the HTTP records API).
//!
//! Why one pure function: a private game's privacy is only as strong as the weakest of the
//! places that check it; with one rule they cannot drift apart.

use stoa_protocol::wire::Visibility;

use crate::ids;

/// What decides who may see a game.
#[derive(Clone, Copy, Debug)]
pub struct Access<'a> {
    /// Public or private.
    pub visibility: Visibility,
    /// The players' ids.
    pub players: [&'a str; 2],
    /// The room code of a game started from a room (the key to a private game).
    pub code: Option<&'a str>,
}

impl Access<'_> {
    /// Whether `viewer` (a player id, if known) may see the game, given the room code it
    /// typed (`given`, normalised here): anyone when the game is public; its players;
    /// whoever gives its room code.
    pub fn may_see(&self, viewer: Option<&str>, given: Option<&str>) -> bool {
        self.visibility == Visibility::Public
            || viewer.is_some_and(|v| self.players.contains(&v))
            || self.code_matches(given)
    }

    /// Whether `given` is the game's room code (as typed: it is normalised first).
    pub fn code_matches(&self, given: Option<&str>) -> bool {
        matches!((self.code, given), (Some(mine), Some(given)) if mine == ids::normalize_code(given))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_to_all_private_to_its_players_and_its_code() {
        let public = Access {
            visibility: Visibility::Public,
            players: ["pa", "pb"],
            code: Some("ABCD23"),
        };
        assert!(public.may_see(None, None));
        assert!(public.may_see(Some("px"), None));
        let private = Access {
            visibility: Visibility::Private,
            ..public
        };
        assert!(!private.may_see(None, None));
        assert!(!private.may_see(Some("px"), None));
        assert!(private.may_see(Some("pa"), None));
        assert!(private.may_see(Some("pb"), Some("WRONG")));
        assert!(private.may_see(None, Some("ABCD23")));
        assert!(
            private.may_see(Some("px"), Some(" abcd23 ")),
            "typed codes are normalised"
        );
        assert!(!private.may_see(Some("px"), Some("ABCD24")));
        let no_room = Access {
            code: None,
            ..private
        };
        assert!(!no_room.may_see(None, Some("ABCD23")));
    }
}
