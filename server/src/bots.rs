//! Computer opponents on call: `stoa bot --serve` connections that said `bot.serve`, and the
//! choice of one for a person's `bot.play`.
//!
//! Why a registry of connections rather than a queue entry: a person asks for a level and a
//! game at once and expects an opponent now; the bot is told (`bot.invite`) to join the room
//! made for that person, exactly as a friend with the code would. A bot takes one game at a
//! time and says `bot.serve` again when it is free.

use std::sync::{Arc, Mutex};

use crate::outbound::ConnHandle;

struct Served {
    conn: Arc<ConnHandle>,
    kinds: Vec<String>,
    levels: Vec<u8>,
    busy: bool,
}

/// The bots serving on this node.
#[derive(Default)]
pub struct Bots {
    served: Mutex<Vec<Served>>,
}

impl Bots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Served>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `conn` serves `kinds` at `levels` and is free (again).
    pub fn serve(&self, conn: Arc<ConnHandle>, kinds: Vec<String>, levels: Vec<u8>) {
        let mut served = self.lock();
        served.retain(|s| s.conn.id != conn.id && !s.conn.is_closed());
        served.push(Served {
            conn,
            kinds,
            levels,
            busy: false,
        });
    }

    /// A free bot that plays `kind` at `level` (not `player_id` itself), marked busy; `None`
    /// when none is.
    pub fn pick(&self, kind: &str, level: u8, player_id: &str) -> Option<Arc<ConnHandle>> {
        let mut served = self.lock();
        served.retain(|s| !s.conn.is_closed());
        let s = served.iter_mut().find(|s| {
            !s.busy
                && s.conn.player_id() != Some(player_id)
                && s.kinds.iter().any(|k| k == kind)
                && s.levels.contains(&level)
        })?;
        s.busy = true;
        Some(s.conn.clone())
    }

    /// Frees a bot picked for a game that could not be set up.
    pub fn release(&self, conn_id: u64) {
        if let Some(s) = self.lock().iter_mut().find(|s| s.conn.id == conn_id) {
            s.busy = false;
        }
    }

    /// The levels free bots offer for `kind`, for error messages.
    pub fn levels(&self, kind: &str) -> Vec<u8> {
        let mut levels: Vec<u8> = self
            .lock()
            .iter()
            .filter(|s| !s.busy && !s.conn.is_closed() && s.kinds.iter().any(|k| k == kind))
            .flat_map(|s| s.levels.iter().copied())
            .collect();
        levels.sort_unstable();
        levels.dedup();
        levels
    }
}
