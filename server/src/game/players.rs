//! Who is connected: player id → live connections (several per player).
//!
//! Why separate from the store: identities are persistent (store), presence is not. The
//! first connection and the last disconnection of a player are the moments its games'
//! `online` flags change, so [`Players::connect`]/[`Players::disconnect`] report them.

use hashbrown::HashMap;
use parking_lot::Mutex;
use std::sync::Arc;

use stoa_protocol::wire::{ErrorCode, ServerMessage};

use crate::ids::PlayerId;
use crate::net::outbound::ConnHandle;

/// The close code and reason of a connection whose device was revoked.
pub const REVOKED_CLOSE: (u16, &str) = (4401, "device revoked");
/// What a connection whose device was revoked is told before it closes.
pub const REVOKED_MESSAGE: &str = "this device was revoked: its token no longer works";

/// The live connections of every connected player (keyed by the typed id, looked up with
/// any `&str`: the id borrows as `str`).
#[derive(Debug, Default)]
pub struct Players {
    conns: Mutex<HashMap<PlayerId, Vec<Arc<ConnHandle>>>>,
}

impl Players {
    /// Registers a connection; `true` when it is the player's first.
    pub fn connect(&self, player_id: &PlayerId, conn: Arc<ConnHandle>) -> bool {
        let mut m = self.conns.lock();
        let v = m.entry(player_id.clone()).or_default();
        v.push(conn);
        v.len() == 1
    }

    /// Unregisters a connection; `true` when it was the player's last.
    pub fn disconnect(&self, player_id: &PlayerId, conn_id: u64) -> bool {
        let mut m = self.conns.lock();
        let Some(v) = m.get_mut(player_id) else {
            return false;
        };
        let before = v.len();
        v.retain(|c| c.id != conn_id);
        if v.is_empty() {
            m.remove(player_id);
            before > 0
        } else {
            false
        }
    }

    /// The player's live connections. Looked up by text, like [`Players::is_online`] and
    /// [`Players::end_device`]: the bus's frames, the queues' statuses and the seats of a new
    /// game name their players as wire text, and a typed id for each lookup would be a copy.
    pub fn connections(&self, player_id: &PlayerId) -> Vec<Arc<ConnHandle>> {
        self.conns
            .lock()
            .get(player_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Ends every connection here of the player that said `hello` with `device`'s token
    /// (the device was revoked): each is told why in an `error` frame, then closed with
    /// [`REVOKED_CLOSE`]. The number of connections ended.
    pub fn end_device(&self, player_id: &PlayerId, device: &str) -> usize {
        let told = ServerMessage::error(None, ErrorCode::Unauthorized, REVOKED_MESSAGE);
        let mut n = 0;
        for conn in self.connections(player_id) {
            if conn.device_id() == Some(device) {
                conn.send_msg(&told);
                conn.end(REVOKED_CLOSE.0, REVOKED_CLOSE.1);
                n += 1;
            }
        }
        n
    }

    /// Whether the player has at least one connection.
    pub fn is_online(&self, player_id: &PlayerId) -> bool {
        self.conns.lock().contains_key(player_id)
    }

    /// Number of connected players.
    pub fn online_count(&self) -> usize {
        self.conns.lock().len()
    }
}
