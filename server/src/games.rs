//! The registry of live games: id → actor handle, and player → unfinished live games.
//!
//! Why a plain mutex-guarded map: lookups are short and never held across an await; the
//! actors own all game state, the registry only routes.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::game::GameHandle;

#[derive(Debug, Default)]
struct Inner {
    live: HashMap<String, GameHandle>,
    by_player: HashMap<String, HashSet<String>>,
}

/// Live games.
#[derive(Debug, Default)]
pub struct Games {
    inner: Mutex<Inner>,
}

impl Games {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
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

    /// The handle of a live game.
    pub fn get(&self, id: &str) -> Option<GameHandle> {
        self.lock().live.get(id).cloned()
    }

    /// Marks a game finished: it no longer follows its players' presence.
    pub fn ended(&self, id: &str) {
        let mut g = self.lock();
        let players = g.live.get(id).map(|h| h.players.clone());
        if let Some(players) = players {
            for p in players {
                if let Some(set) = g.by_player.get_mut(&p) {
                    set.remove(id);
                    if set.is_empty() {
                        g.by_player.remove(&p);
                    }
                }
            }
        }
    }

    /// Removes a game whose actor stopped.
    pub fn remove(&self, id: &str) {
        self.ended(id);
        self.lock().live.remove(id);
    }

    /// Handles of a player's unfinished live games.
    pub fn of_player(&self, player_id: &str) -> Vec<GameHandle> {
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
    pub fn public_summaries(&self) -> Vec<(String, serde_json::Value)> {
        let g = self.lock();
        let mut out: Vec<(String, serde_json::Value)> = g
            .live
            .values()
            .filter_map(|h| {
                let s = h
                    .summary
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()?;
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
