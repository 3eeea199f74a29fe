//! The registry of live games: id → actor handle, and player → unfinished live games.
//!
//! Why a plain mutex-guarded map: lookups are short and never held across an await; the
//! actors own all game state, the registry only routes.

use hashbrown::{HashMap, HashSet};
use parking_lot::Mutex;
use std::sync::Arc;

use serde_json::Value;

use crate::game::capabilities::Directory;
use crate::game::GameHandle;
use crate::ids::{GameId, PlayerId};

/// Keyed by typed ids, looked up with any `&str` (the ids borrow as `str`).
#[derive(Debug, Default)]
struct Inner {
    live: HashMap<GameId, GameHandle>,
    by_player: HashMap<PlayerId, HashSet<GameId>>,
}

/// Live games.
#[derive(Debug, Default)]
pub struct Games {
    inner: Mutex<Inner>,
}

impl Games {
    fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Registers a new live game (unfinished for both players).
    pub fn insert(&self, handle: GameHandle) {
        let mut g = self.lock();
        for p in &handle.players {
            g.by_player
                .entry(p.clone())
                .or_default()
                .insert(handle.id.clone());
        }
        g.live.insert(handle.id.clone(), handle);
    }

    /// Registers a game's actor unless another live actor serves it already: that one's
    /// handle is returned (and nothing changes). Two actors for one game on one node would
    /// split its subscribers and its commands between a stale copy and the real one (a
    /// takeover from the log racing a follower started for a `game.watch`).
    pub fn insert_if_absent(&self, handle: GameHandle) -> Option<GameHandle> {
        {
            let g = self.lock();
            if let Some(existing) = g.live.get(&handle.id) {
                if !existing.tx.is_closed() {
                    return Some(existing.clone());
                }
            }
        }
        self.insert(handle);
        None
    }

    /// The handle of a live game.
    pub fn get(&self, id: &GameId) -> Option<GameHandle> {
        self.lock().live.get(id).cloned()
    }

    /// Marks a game finished: it no longer follows its players' presence.
    pub fn ended(&self, id: &GameId) {
        let mut g = self.lock();
        let players = g.live.get(id).map(|h| h.players.clone());
        if let Some(players) = players {
            for p in players {
                if let Some(set) = g.by_player.get_mut(p.as_str()) {
                    set.remove(id);
                    if set.is_empty() {
                        g.by_player.remove(p.as_str());
                    }
                }
            }
        }
    }

    /// Removes a game whose actor stopped.
    pub fn remove(&self, id: &GameId) {
        self.ended(id);
        self.lock().live.remove(id);
    }

    /// Removes the game `id` if `summary` is its registered actor's (see
    /// [`GameHandle::summary`]): an actor that stops never unregisters another one that
    /// serves its game now.
    pub fn remove_actor(&self, id: &GameId, summary: &Arc<Mutex<Option<Value>>>) {
        let ours = self
            .lock()
            .live
            .get(id)
            .is_some_and(|h| Arc::ptr_eq(&h.summary, summary));
        if ours {
            self.remove(id);
        }
    }

    /// Handles of a player's unfinished live games.
    pub fn of_player(&self, player_id: &PlayerId) -> Vec<GameHandle> {
        let g = self.lock();
        g.by_player
            .get(player_id)
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| g.live.get(id).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Lobby summaries of live public games, by id.
    pub fn public_summaries(&self) -> Vec<(GameId, serde_json::Value)> {
        let g = self.lock();
        let mut out: Vec<(GameId, serde_json::Value)> = g
            .live
            .values()
            .filter_map(|h| {
                let s = h.summary.lock().clone()?;
                Some((h.id.clone(), s))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Number of live games (including ended ones still in memory).
    pub fn len(&self) -> usize {
        self.lock().live.len()
    }

    /// Whether no game is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Directory for Games {
    fn ended(&self, id: &GameId) {
        Games::ended(self, id);
    }

    fn remove_actor(&self, id: &GameId, summary: &Arc<Mutex<Option<Value>>>) {
        Games::remove_actor(self, id, summary);
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;
    use crate::game::Command;

    fn handle(id: &str) -> (GameHandle, mpsc::Receiver<Command>) {
        let (tx, rx) = mpsc::channel(4);
        let h = GameHandle::new(crate::game::GameRoute {
            id: id.into(),
            kind: stoa_protocol::kind("unane").expect("a kind"),
            tx,
            players: ["a".into(), "b".into()],
            arena: None,
            summary: Arc::new(parking_lot::Mutex::new(None)),
        });
        (h, rx)
    }

    #[test]
    fn one_actor_per_game_and_each_unregisters_only_itself() {
        let games = Games::default();
        let (first, _first_rx) = handle("g");
        let (second, second_rx) = handle("g");
        assert!(games.insert_if_absent(first.clone()).is_none());
        // A second actor for a served game is refused: the first one's handle comes back.
        let existing = games
            .insert_if_absent(second.clone())
            .expect("the first actor");
        assert!(Arc::ptr_eq(&existing.summary, &first.summary));
        // A stopping actor that is not the registered one leaves the game alone.
        games.remove_actor(&"g".into(), &second.summary);
        assert!(games.get(&"g".into()).is_some());
        assert_eq!(games.of_player(&"a".into()).len(), 1);
        games.remove_actor(&"g".into(), &first.summary);
        assert!(games.get(&"g".into()).is_none());
        assert!(games.of_player(&"a".into()).is_empty());
        // An actor whose queue is closed (it stopped) is replaced.
        assert!(games.insert_if_absent(second.clone()).is_none());
        drop(second_rx);
        let (third, _third_rx) = handle("g");
        assert!(games.insert_if_absent(third.clone()).is_none());
        let registered = games.get(&"g".into()).expect("the third actor");
        assert!(Arc::ptr_eq(&registered.summary, &third.summary));
    }
}
