//! Computer opponents on call: `stoa bot --serve` connections that said `bot.serve`, and the
//! choice of one for a person's `bot.play`.
//!
//! Why a registry of connections rather than a queue entry: a person asks for a level and a
//! game at once and expects an opponent now; the bot is told (`bot.invite`) to join the room
//! made for that person, exactly as a friend with the code would. A bot takes one game at a
//! time and says `bot.serve` again when it is free.
//!
//! In a cluster a person may be on another node than every serving bot: [`pick`] looks at
//! this node's bots first, then at those the other nodes list in Redis, and a bot is claimed
//! there before it is invited ([`crate::cluster::bots`]), so two nodes never invite the same
//! bot at once.

use std::sync::{Arc, Mutex};

use stoa_protocol::wire::ServerMessage;

use crate::cluster::bots::ServedBot;
use crate::hub::Hub;
use crate::outbound::ConnHandle;

/// The bot chosen for a person's game.
pub enum Picked {
    /// A bot connected to this node.
    Local(Arc<ConnHandle>),
    /// A bot connected to another node (its player id), claimed in Redis.
    Remote(String),
}

/// Takes a free bot that plays `kind` at `level` against `player_id`; `None` when none is.
pub async fn pick(hub: &Hub, kind: &str, level: u8, player_id: &str) -> Option<Picked> {
    let Some(cluster) = &hub.cluster else {
        return hub.bots.pick(kind, level, player_id).map(Picked::Local);
    };
    for conn in hub.bots.candidates(kind, level, player_id) {
        let Some(bot) = conn.player_id() else {
            continue;
        };
        if cluster.claim_bot(bot).await {
            hub.bots.set_busy(conn.id, true);
            return Some(Picked::Local(conn));
        }
    }
    for bot in cluster.remote_bots().await {
        if bot.fits(kind, level, player_id) && cluster.claim_bot(&bot.player).await {
            return Some(Picked::Remote(bot.player));
        }
    }
    None
}

/// The levels bots offer for `kind` (here and, in a cluster, on the other nodes), for the
/// answer when none fits.
pub async fn offered_levels(hub: &Hub, kind: &str) -> Vec<u8> {
    let mut levels = hub.bots.levels(kind);
    if let Some(cluster) = &hub.cluster {
        for bot in cluster.remote_bots().await {
            if bot.kinds.iter().any(|k| k == kind) {
                levels.extend(bot.levels);
            }
        }
    }
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// Sends the invitation to the picked bot, wherever it is connected.
pub async fn invite(hub: &Hub, picked: &Picked, msg: &ServerMessage) {
    match (picked, &hub.cluster) {
        (Picked::Local(conn), _) => {
            conn.send_msg(msg);
        }
        (Picked::Remote(player), Some(cluster)) => {
            let frame = serde_json::to_string(msg).unwrap_or_default();
            cluster.to_player(player, frame).await;
        }
        (Picked::Remote(_), None) => {}
    }
}

/// Frees a picked bot whose game could not be set up.
pub async fn release(hub: &Hub, picked: &Picked) {
    let player = match picked {
        Picked::Local(conn) => {
            hub.bots.set_busy(conn.id, false);
            conn.player_id().map(str::to_string)
        }
        Picked::Remote(player) => Some(player.clone()),
    };
    if let (Some(cluster), Some(player)) = (&hub.cluster, player) {
        cluster.free_bot(&player).await;
    }
}

/// A bot said `bot.serve`: it is free, here and (in a cluster) for the other nodes.
pub async fn served(hub: &Hub, conn: Arc<ConnHandle>, kinds: Vec<String>, levels: Vec<u8>) {
    let player = conn.player_id().map(str::to_string);
    hub.bots.serve(conn, kinds, levels);
    if let Some(cluster) = &hub.cluster {
        if let Some(player) = player {
            cluster.free_bot(&player).await;
        }
        cluster.put_bots(&hub.bots.listing()).await;
    }
}

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

    /// The free bots here that play `kind` at `level` against `player_id`.
    pub fn candidates(&self, kind: &str, level: u8, player_id: &str) -> Vec<Arc<ConnHandle>> {
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
                    player: s.conn.player_id()?.to_string(),
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
