//! Type erasure: drive any game through one object-safe interface.
//!
//! The server's game actors, the CLI and bots hold a `Box<dyn AnyGame>` and never learn which
//! game it is. Every method is a thin shim over the generic [`Game`] implementation, so the
//! hot loops (perft, legal move generation) still run monomorphised.

use std::fmt::Debug;

use serde_json::Value;

use crate::game::{Game, Outcome, RulesError, Side};
use crate::perft;

/// The result of playing one action through [`AnyGame::play`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// Canonical notation of the action.
    pub notation: String,
    /// The side that acted.
    pub side: Side,
    /// Whether the action was the pie-rule swap (the players exchange seats).
    pub swap: bool,
}

/// An object-safe view of a running game of any kind.
pub trait AnyGame: Debug + Send + Sync {
    /// The game id (`unane`, …).
    fn kind(&self) -> &'static str;
    /// Side names, first-acting side first.
    fn side_names(&self) -> [&'static str; 2];
    /// The name of a side.
    fn side_name(&self, side: Side) -> &'static str {
        self.side_names()[side.index()]
    }
    /// The side called `name`, if any.
    fn side_by_name(&self, name: &str) -> Option<Side> {
        self.side_names()
            .iter()
            .position(|n| *n == name)
            .map(Side::from_index)
    }
    /// The validated options, with every default filled in.
    fn options_json(&self) -> Value;
    /// The canonical position string.
    fn position(&self) -> String;
    /// The side to act; `None` once ended.
    fn to_act(&self) -> Option<Side>;
    /// The result by rule, if the game has ended.
    fn outcome(&self) -> Option<Outcome>;
    /// Canonical notations of every legal action, sorted by byte order.
    fn legal_notations(&self) -> Vec<String>;
    /// One legal action, formatted: the one at the index `choose` picks from the number of
    /// legal actions, in the engine's generation order (`None` when there is none). For
    /// random play (load generators) without formatting and sorting every action.
    fn pick_legal(&self, choose: &mut dyn FnMut(usize) -> usize) -> Option<String>;
    /// Parses, checks and applies one action given as text. On error nothing changes.
    fn play(&mut self, notation: &str) -> Result<Played, RulesError>;
    /// Parses and checks an action without applying it; returns its canonical notation.
    fn check_notation(&self, notation: &str) -> Result<String, RulesError>;
    /// The game-specific JSON view for clients.
    fn view(&self) -> Value;
    /// The static geometry the view is drawn on (see [`crate::Game::geometry`]).
    fn geometry(&self) -> Value;
    /// Perft to `depth`.
    fn perft(&self, depth: u32) -> u64;
    /// Perft split by first action, in legal-action order.
    fn perft_divide(&self, depth: u32) -> Vec<(String, u64)>;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn AnyGame>;
    /// As [`AnyGame::play`], also returning what the action changed in [`AnyGame::view`]
    /// when the engine can tell (see [`Game::view_changes`]).
    fn play_tracked(&mut self, notation: &str) -> Result<Tracked, RulesError> {
        Ok(Tracked {
            played: self.play(notation)?,
            view_changes: None,
        })
    }
    /// As [`AnyGame::play_tracked`] on a copy, leaving this game as it is: the copy after
    /// the action and what it changed. One copy, one play: a server decides a move on a
    /// copy (a refused move changes nothing) and keeps the copy when the move is applied.
    fn play_on_copy(&self, notation: &str) -> Result<(Box<dyn AnyGame>, Tracked), RulesError> {
        let mut next = self.clone_box();
        let tracked = next.play_tracked(notation)?;
        Ok((next, tracked))
    }
}

/// An action played by [`AnyGame::play_tracked`].
#[derive(Clone, Debug)]
pub struct Tracked {
    /// What was played.
    pub played: Played,
    /// The view's changed members (JSON pointer below the view, new value), when known.
    pub view_changes: Option<Vec<(String, Value)>>,
}

impl Clone for Box<dyn AnyGame> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A concrete game together with the options it was created with.
#[derive(Clone, Debug)]
pub struct Instance<G: Game> {
    options: G::Options,
    state: G,
}

impl<G: Game> Instance<G> {
    /// Wraps a state with its (validated) options.
    pub fn new(options: G::Options, state: G) -> Self {
        Instance { options, state }
    }

    /// The concrete state.
    pub fn state(&self) -> &G {
        &self.state
    }
}

impl<G: Game> AnyGame for Instance<G> {
    fn kind(&self) -> &'static str {
        G::KIND
    }

    fn side_names(&self) -> [&'static str; 2] {
        G::SIDE_NAMES
    }

    fn options_json(&self) -> Value {
        serde_json::to_value(&self.options).unwrap_or(Value::Null)
    }

    fn position(&self) -> String {
        self.state.position()
    }

    fn to_act(&self) -> Option<Side> {
        self.state.to_act()
    }

    fn outcome(&self) -> Option<Outcome> {
        self.state.outcome()
    }

    fn legal_notations(&self) -> Vec<String> {
        let mut actions = Vec::new();
        self.state.legal_actions(&mut actions);
        let mut out: Vec<String> = actions
            .into_iter()
            .map(|a| self.state.format_action(a))
            .collect();
        out.sort_unstable();
        out
    }

    fn pick_legal(&self, choose: &mut dyn FnMut(usize) -> usize) -> Option<String> {
        let mut actions = Vec::new();
        self.state.legal_actions(&mut actions);
        if actions.is_empty() {
            return None;
        }
        let i = choose(actions.len()).min(actions.len() - 1);
        Some(self.state.format_action(actions[i]))
    }

    fn play(&mut self, notation: &str) -> Result<Played, RulesError> {
        let side = self.state.to_act().ok_or(RulesError::GameOver)?;
        let action = self.state.parse_action(notation)?;
        self.state.check(action)?;
        let played = Played {
            notation: self.state.format_action(action),
            side,
            swap: self.state.is_swap(action),
        };
        self.state.apply(action);
        Ok(played)
    }

    fn check_notation(&self, notation: &str) -> Result<String, RulesError> {
        if self.state.to_act().is_none() {
            return Err(RulesError::GameOver);
        }
        let action = self.state.parse_action(notation)?;
        self.state.check(action)?;
        Ok(self.state.format_action(action))
    }

    fn view(&self) -> Value {
        self.state.view()
    }

    fn geometry(&self) -> Value {
        self.state.geometry()
    }

    fn perft(&self, depth: u32) -> u64 {
        self.state.perft(depth)
    }

    fn perft_divide(&self, depth: u32) -> Vec<(String, u64)> {
        perft::divide(&self.state, depth)
    }

    fn clone_box(&self) -> Box<dyn AnyGame> {
        Box::new(self.clone())
    }

    fn play_tracked(&mut self, notation: &str) -> Result<Tracked, RulesError> {
        let before = G::VIEW_CHANGES.then(|| self.state.clone());
        let played = self.play(notation)?;
        let view_changes = before.and_then(|b| self.state.view_changes_kept(&b));
        Ok(Tracked {
            played,
            view_changes,
        })
    }

    fn play_on_copy(&self, notation: &str) -> Result<(Box<dyn AnyGame>, Tracked), RulesError> {
        let mut next = self.clone();
        let played = next.play(notation)?;
        // This game is the state before: no second copy to compare with.
        let view_changes = if G::VIEW_CHANGES {
            next.state.view_changes_kept(&self.state)
        } else {
            None
        };
        Ok((
            Box::new(next),
            Tracked {
                played,
                view_changes,
            },
        ))
    }
}
