//! Computer opponents on call: `stoa bot --serve` connections that said `bot.serve`, and the
//! choice of one for a person's `bot.play`.
//!
//! Why a registry of connections rather than a queue entry: a person asks for a level and a
//! game at once and expects an opponent now; the bot is told (`bot.invite`) to join the room
//! made for that person, exactly as a friend with the code would. A bot takes one game at a
//! time and says `bot.serve` again when it is free.
//!
//! In a cluster a person may be on another node than every serving bot: [`pick`] looks at
//! this node's bots first, then at those the other nodes list ([`Listings`]), and a bot is
//! claimed there before it is invited, so two nodes never invite the same bot at once.

use parking_lot::Mutex;
use std::sync::Arc;

use stoa_protocol::wire::ServerMessage;

use crate::ids::PlayerId;
use crate::net::outbound::ConnHandle;
use crate::services::topology::{ServedBot, Topology};

/// The bot chosen for a person's game.
pub enum Picked {
    /// A bot connected to this node.
    Local(Arc<ConnHandle>),
    /// A bot connected to another node (its player id), claimed in Redis.
    Remote(PlayerId),
}

struct Served {
    conn: Arc<ConnHandle>,
    kinds: Vec<String>,
    levels: Vec<u8>,
    busy: bool,
}

/// The bots serving on this node, and the way to those serving on others.
pub struct Bots {
    served: Mutex<Vec<Served>>,
    topology: Arc<dyn Topology>,
}

impl std::fmt::Debug for Bots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bots").finish_non_exhaustive()
    }
}

impl Bots {
    /// No bot serving yet; the other nodes' bots are found through `topology`.
    pub fn new(topology: Arc<dyn Topology>) -> Self {
        Bots {
            served: Mutex::new(Vec::new()),
            topology,
        }
    }

    /// Takes a free bot that plays `kind` at `level` against `player_id`, here or on
    /// another node; `None` when none is.
    pub async fn pick_anywhere(
        &self,
        kind: &str,
        level: u8,
        player_id: &PlayerId,
    ) -> Option<Picked> {
        for conn in self.candidates(kind, level, player_id) {
            let Some(bot) = conn.player_id() else {
                continue;
            };
            // Claimed for the deployment first, then here: two requests on this node never
            // take the same bot, nor two nodes.
            if self.topology.claim_bot(bot).await {
                if self.take(conn.id) {
                    return Some(Picked::Local(conn));
                }
                self.topology.free_bot(bot).await;
            }
        }
        for bot in self.topology.remote_bots().await {
            if bot.fits(kind, level, player_id) && self.topology.claim_bot(&bot.player).await {
                return Some(Picked::Remote(bot.player));
            }
        }
        None
    }

    /// The levels bots offer for `kind` (here and on the other nodes), for the answer when
    /// none fits.
    pub async fn offered_levels(&self, kind: &str) -> Vec<u8> {
        let mut levels = self.levels(kind);
        for bot in self.topology.remote_bots().await {
            if bot.kinds.iter().any(|k| k == kind) {
                levels.extend(bot.levels);
            }
        }
        levels.sort_unstable();
        levels.dedup();
        levels
    }

    /// Sends the invitation to the picked bot, wherever it is connected.
    pub async fn invite(&self, picked: &Picked, msg: &ServerMessage) {
        match picked {
            Picked::Local(conn) => {
                conn.send_msg(msg);
            }
            Picked::Remote(player) => {
                let frame = serde_json::to_string(msg).unwrap_or_default();
                self.topology.to_player(player, frame).await;
            }
        }
    }

    /// Frees a picked bot whose game could not be set up.
    pub async fn release(&self, picked: &Picked) {
        let player = match picked {
            Picked::Local(conn) => {
                self.set_busy(conn.id, false);
                conn.player_id().cloned()
            }
            Picked::Remote(player) => Some(player.clone()),
        };
        if let Some(player) = player {
            self.topology.free_bot(&player).await;
        }
    }

    /// A bot said `bot.serve`: it is free, here and for the other nodes.
    pub async fn served(&self, conn: Arc<ConnHandle>, kinds: Vec<String>, levels: Vec<u8>) {
        let player = conn.player_id().cloned();
        self.serve(conn, kinds, levels);
        if let Some(player) = player {
            self.topology.free_bot(&player).await;
        }
        self.topology.put_bots(&self.listing()).await;
    }

    /// Marks a free bot busy; `false` when it was taken meanwhile (or is gone).
    fn take(&self, conn_id: u64) -> bool {
        match self
            .lock()
            .iter_mut()
            .find(|s| s.conn.id == conn_id && !s.busy && !s.conn.is_closed())
        {
            Some(s) => {
                s.busy = true;
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Vec<Served>> {
        self.served.lock()
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
    pub fn pick(&self, kind: &str, level: u8, player_id: &PlayerId) -> Option<Arc<ConnHandle>> {
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

    /// The free bots here that play `kind` at `level` against `player_id`.
    pub fn candidates(&self, kind: &str, level: u8, player_id: &PlayerId) -> Vec<Arc<ConnHandle>> {
        let mut served = self.lock();
        served.retain(|s| !s.conn.is_closed());
        served
            .iter()
            .filter(|s| {
                !s.busy
                    && s.conn.player_id() != Some(player_id)
                    && s.kinds.iter().any(|k| k == kind)
                    && s.levels.contains(&level)
            })
            .map(|s| s.conn.clone())
            .collect()
    }

    /// Marks a bot taken for a game (or free again when its game could not be set up).
    pub fn set_busy(&self, conn_id: u64, busy: bool) {
        if let Some(s) = self.lock().iter_mut().find(|s| s.conn.id == conn_id) {
            s.busy = busy;
        }
    }

    /// Every bot serving here, busy or not, for the other nodes (a claim in Redis says
    /// which are taken).
    pub fn listing(&self) -> Vec<ServedBot> {
        self.lock()
            .iter()
            .filter(|s| !s.conn.is_closed())
            .filter_map(|s| {
                Some(ServedBot {
                    player: s.conn.player_id()?.clone(),
                    kinds: s.kinds.clone(),
                    levels: s.levels.clone(),
                })
            })
            .collect()
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
