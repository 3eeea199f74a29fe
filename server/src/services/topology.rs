//! The one seam between a single node and a cluster: what the services need from "the other
//! nodes", as small domain-shaped traits.
//!
//! Why a seam: a single node is a cluster of one. The services (matchmaking, ratings, bots,
//! the lobby, game creation) ask the same questions either way — may I take this game's
//! lease, where does this queue join go, how does a frame reach a player connected
//! elsewhere, which listings do the other nodes share — and get local answers from
//! [`SingleNode`] or Redis-backed ones from the cluster (`crate::cluster::Cluster`, which
//! only the composition root, `crate::node`, names). No service branches on "am I in a
//! cluster"; `tests/tests/topology_contract.rs` runs one suite over both implementations,
//! as `store_contract.rs` does for the stores. The game actors' view of the other nodes,
//! [`Peers`], is answered the same way: by the cluster, or by [`SingleNode`], whose peers
//! are none (what an actor publishes reaches nobody, and it owns every game).

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_protocol::wire::{ErrorCode, RoomChatLine, SeatPlayer};
use stoa_protocol::GameKind;

use crate::cluster::messages::BusMessage;
use crate::domain::pairing::QueueKey;
use crate::error::ApiError;
use crate::game::capabilities::Peers;
use crate::game::queues::Matchmaker;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
use crate::store::StoreError;

/// One owner per live game: the right to run (and write) it.
#[async_trait]
pub trait Leases: Send + Sync {
    /// Takes a game's lease if nobody holds it (a new game, or one whose owner died);
    /// `false` when another holder has it.
    async fn acquire(&self, game: &GameId) -> Result<bool, StoreError>;
}

/// Games whose owner may be another node, followed through their event channel.
#[async_trait]
pub trait GameChannels: Send + Sync {
    /// Whether the game `game`, not live on this node, may be live on another one and be
    /// followed from there: a lookup that misses here must then ask the store rather than
    /// answer "no such game". Never on a single node: every game lives here.
    fn may_live_elsewhere(&self, game: &GameId) -> bool;
    /// Subscribes this node to a game's events (before its log is read, so nothing falls
    /// between the two).
    async fn subscribe_game(&self, game: &GameId) -> Result<(), StoreError>;
    /// Ends a [`GameChannels::subscribe_game`] subscription.
    fn unsubscribe_game(&self, game: &GameId);
}

/// Rooms, which any node may change (seat a joiner, start the game).
pub trait RoomSharing: Send + Sync {
    /// Whether another node may have changed the room `code` since this node last read
    /// it: the store then has the latest, and is read even for a room held here. Never on
    /// a single node: only it changes its rooms, so the copy it holds is the latest.
    fn room_may_change_elsewhere(&self, code: &RoomCode) -> bool;
}

/// Arenas, which every node holding one may change (a join, a game's end, a pairing
/// round) and any node may create.
pub trait ArenaSharing: Send + Sync {
    /// Whether other nodes create arenas this node must take up (it then looks for them in
    /// the store now and then). Never on a single node: it made every arena it holds.
    fn arenas_made_elsewhere(&self) -> bool;
    /// Whether another node may change the arena `id`: the store is then read again each
    /// wave, and one node pairs it under a lease. Never on a single node.
    fn arena_may_change_elsewhere(&self, id: &ArenaId) -> bool;
    /// Whether `player` may be connected to another node (this node's presence does not
    /// tell then). Never on a single node: a player not connected here is not connected.
    fn may_be_connected_elsewhere(&self, player: &PlayerId) -> bool;
}

/// Where matchmaking runs: the queues live on one node.
#[async_trait]
pub trait QueueRouting: Send + Sync {
    /// Queues a player with the node that runs matchmaking; the player's place.
    async fn queue_join(
        &self,
        key: QueueKey,
        seat: SeatPlayer,
        rating: f64,
    ) -> Result<u64, ApiError>;
    /// Takes a player out of its queue, wherever the matchmaking runs.
    async fn queue_leave(&self, player: &PlayerId);
}

/// A game start as the other nodes hear of it (they tell its players connected there).
#[derive(Clone)]
pub struct StartedGame {
    /// The game's id.
    pub game: GameId,
    /// Its kind.
    pub kind: &'static GameKind,
    /// Its players by side index.
    pub players: [PlayerId; 2],
    /// The names of the sides by index.
    pub side_names: [String; 2],
    /// The room that started it, if any (its node learns the room no longer waits).
    pub room: Option<RoomCode>,
}

impl std::fmt::Debug for StartedGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartedGame")
            .field("game", &self.game)
            .field("kind", &self.kind.id)
            .field("players", &self.players)
            .field("side_names", &self.side_names)
            .field("room", &self.room)
            .finish()
    }
}

/// Reaching players connected to other nodes.
#[async_trait]
pub trait Delivery: Send + Sync {
    /// Sends a frame to a player connected to another node (nothing on a single node: a
    /// player not connected here is not connected).
    async fn to_player(&self, player: &PlayerId, frame: String);
    /// Tells the other nodes that a player's device was revoked: they end its connections
    /// there (nothing on a single node: this node ends its own).
    async fn device_revoked(&self, player: &PlayerId, device: &str);
    /// Relays a line said in a waiting room's chat here to the other nodes (nothing on a
    /// single node).
    async fn room_line(&self, code: &RoomCode, line: &RoomChatLine);
    /// Announces a game started here to the other nodes.
    async fn started(&self, game: StartedGame);
}

/// A bot serving on some node, as the nodes list them for each other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedBot {
    /// The bot's player id (invitations reach it through [`Delivery::to_player`]).
    pub player: PlayerId,
    /// The kinds it plays.
    pub kinds: Vec<String>,
    /// The levels it plays.
    pub levels: Vec<u8>,
}

impl ServedBot {
    /// Whether this bot can play `kind` at `level` against `player_id` (never itself).
    pub fn fits(&self, kind: &str, level: u8, player_id: &PlayerId) -> bool {
        self.player != *player_id
            && self.kinds.iter().any(|k| k == kind)
            && self.levels.contains(&level)
    }
}

/// What each node shares with the others for listings: its part of the lobby, its bots.
#[async_trait]
pub trait Listings: Send + Sync {
    /// Shares this node's part of the lobby (it lapses with the node).
    async fn put_lobby_part(&self, part: &Value);
    /// Whether other nodes list with this one: this node's lobby part and bots are shared,
    /// and the others' parts read, only then (a part costs a walk of every game here).
    /// Never on a single node.
    fn lists_with_others(&self) -> bool;
    /// The other live nodes' parts of the lobby.
    async fn lobby_parts(&self) -> Vec<Value>;
    /// Lists the bots serving on this node for the others (lapses with the node).
    async fn put_bots(&self, bots: &[ServedBot]);
    /// The bots serving on the other live nodes.
    async fn remote_bots(&self) -> Vec<ServedBot>;
    /// Takes a bot for one game; `false` when another node (or this one) already did, or
    /// nobody can say.
    async fn claim_bot(&self, player: &PlayerId) -> bool;
    /// A bot is free again (it said `bot.serve`, or its game could not be set up).
    async fn free_bot(&self, player: &PlayerId);
}

/// Two players' rating locks, released with [`PlayerLocks::unlock_players`].
#[derive(Debug)]
pub struct PlayersLock {
    /// What the implementation locked (Redis keys, or player ids on a single node).
    pub keys: Vec<String>,
    /// The holder's token.
    pub token: String,
}

/// Serialises rating updates of the same players, wherever their games end.
#[async_trait]
pub trait PlayerLocks: Send + Sync {
    /// Locks two players (in id order, so two updates never wait on each other in a
    /// cycle); `unavailable` when the lock cannot be had within a few seconds.
    async fn lock_players(&self, players: [&str; 2]) -> Result<PlayersLock, ApiError>;
    /// Releases a [`PlayerLocks::lock_players`] lock.
    async fn unlock_players(&self, lock: PlayersLock);
}

/// The per-IP connection quota across nodes.
#[async_trait]
pub trait Quotas: Send + Sync {
    /// Counts a new connection from `ip` in the deployment-wide window; `false` past
    /// `limit`. Each node's own limiter applies besides.
    async fn allow_ip(&self, ip: IpAddr, limit: u32, window_ms: u64) -> bool;
    /// Counts one attempt at something guarded by `key` (a sign-in by account name, or
    /// from an address) in a fixed window of the whole deployment; `false` past `limit`:
    /// a guesser spreading tries over the nodes meets the same limit.
    async fn allow_attempt(&self, key: &str, limit: u32, window_ms: u64) -> bool;
}

/// This node's place among the others, for `/health` and `/metrics`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Members {
    /// This node's id.
    pub node: String,
    /// The nodes seen alive, by id.
    pub nodes: Vec<String>,
    /// Games whose lease this node holds.
    pub owned: usize,
    /// Whether this node runs the matchmaking.
    pub matchmaker: bool,
}

/// Membership as operators see it.
#[async_trait]
pub trait Membership: Send + Sync {
    /// This node among the others; `None` on a single node (nothing to report).
    async fn members(&self) -> Option<Members>;
}

/// Everything a node needs from the other nodes, in one handle.
pub trait Topology:
    Leases
    + GameChannels
    + RoomSharing
    + ArenaSharing
    + QueueRouting
    + Delivery
    + Listings
    + PlayerLocks
    + Quotas
    + Membership
{
}

impl<T> Topology for T where
    T: Leases
        + GameChannels
        + RoomSharing
        + ArenaSharing
        + QueueRouting
        + Delivery
        + Listings
        + PlayerLocks
        + Quotas
        + Membership
{
}

/// A deployment of one node: every answer is local.
#[derive(Debug)]
pub struct SingleNode {
    queues: Arc<Matchmaker>,
    /// Players whose ratings are being updated.
    locked: Mutex<HashSet<String>>,
    unlocked: tokio::sync::Notify,
    /// Attempts by key: the window they count in and how many.
    attempts: Mutex<HashMap<String, (u64, u32)>>,
}

impl SingleNode {
    /// The single node over this node's matchmaking queues.
    pub fn new(queues: Arc<Matchmaker>) -> Self {
        SingleNode {
            queues,
            locked: Mutex::new(HashSet::new()),
            unlocked: tokio::sync::Notify::new(),
            attempts: Mutex::new(HashMap::new()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> parking_lot::MutexGuard<'_, T> {
    m.lock()
}

/// How long a rating update waits for another one of the same player.
pub const PLAYER_LOCK_WAIT: Duration = Duration::from_secs(3);

/// The answer when another update holds a player's lock too long.
pub fn ratings_busy() -> ApiError {
    ApiError::new(ErrorCode::Unavailable, "ratings are busy: try again")
}

#[async_trait]
impl Leases for SingleNode {
    async fn acquire(&self, _game: &GameId) -> Result<bool, StoreError> {
        // Every game lives here; a game id taken twice is refused by the store itself.
        Ok(true)
    }
}

#[async_trait]
impl GameChannels for SingleNode {
    fn may_live_elsewhere(&self, _game: &GameId) -> bool {
        false
    }

    async fn subscribe_game(&self, _game: &GameId) -> Result<(), StoreError> {
        // Every game lives here: there is no other owner to hear from.
        Err(StoreError::Unavailable("no other node runs games".into()))
    }

    fn unsubscribe_game(&self, _game: &GameId) {}
}

impl RoomSharing for SingleNode {
    fn room_may_change_elsewhere(&self, _code: &RoomCode) -> bool {
        false
    }
}

impl ArenaSharing for SingleNode {
    fn arenas_made_elsewhere(&self) -> bool {
        false
    }

    fn arena_may_change_elsewhere(&self, _id: &ArenaId) -> bool {
        false
    }

    fn may_be_connected_elsewhere(&self, _player: &PlayerId) -> bool {
        false
    }
}

#[async_trait]
impl QueueRouting for SingleNode {
    async fn queue_join(
        &self,
        key: QueueKey,
        seat: SeatPlayer,
        rating: f64,
    ) -> Result<u64, ApiError> {
        let mm = &self.queues;
        Ok(mm.join(key, seat, rating, mm.now_ms()).position as u64)
    }

    async fn queue_leave(&self, player: &PlayerId) {
        self.queues.leave(player);
    }
}

#[async_trait]
impl Delivery for SingleNode {
    async fn to_player(&self, _player: &PlayerId, _frame: String) {}

    async fn device_revoked(&self, _player: &PlayerId, _device: &str) {}

    async fn room_line(&self, _code: &RoomCode, _line: &RoomChatLine) {}

    async fn started(&self, _game: StartedGame) {}
}

#[async_trait]
impl Listings for SingleNode {
    async fn put_lobby_part(&self, _part: &Value) {}

    fn lists_with_others(&self) -> bool {
        false
    }

    async fn lobby_parts(&self) -> Vec<Value> {
        Vec::new()
    }

    async fn put_bots(&self, _bots: &[ServedBot]) {}

    async fn remote_bots(&self) -> Vec<ServedBot> {
        Vec::new()
    }

    async fn claim_bot(&self, _player: &PlayerId) -> bool {
        // This node's own registry marks its bots busy; nobody else can invite them.
        true
    }

    async fn free_bot(&self, _player: &PlayerId) {}
}

#[async_trait]
impl PlayerLocks for SingleNode {
    async fn lock_players(&self, players: [&str; 2]) -> Result<PlayersLock, ApiError> {
        let mut ids = players.map(str::to_string).to_vec();
        ids.sort();
        ids.dedup();
        let deadline = tokio::time::Instant::now() + PLAYER_LOCK_WAIT;
        loop {
            let waiting = self.unlocked.notified();
            {
                let mut locked = lock(&self.locked);
                if ids.iter().all(|id| !locked.contains(id)) {
                    locked.extend(ids.iter().cloned());
                    return Ok(PlayersLock {
                        keys: ids,
                        token: String::new(),
                    });
                }
            }
            if tokio::time::timeout_at(deadline, waiting).await.is_err() {
                return Err(ratings_busy());
            }
        }
    }

    async fn unlock_players(&self, players: PlayersLock) {
        let mut locked = lock(&self.locked);
        for id in &players.keys {
            locked.remove(id);
        }
        drop(locked);
        self.unlocked.notify_waiters();
    }
}

#[async_trait]
impl Quotas for SingleNode {
    async fn allow_ip(&self, _ip: IpAddr, _limit: u32, _window_ms: u64) -> bool {
        // The node's own limiter is the deployment's.
        true
    }

    async fn allow_attempt(&self, key: &str, limit: u32, window_ms: u64) -> bool {
        let slot = crate::ids::now_ms() / window_ms.max(1);
        let mut attempts = lock(&self.attempts);
        // Past windows are dropped as they go, so the map holds this window's keys only.
        attempts.retain(|_, (s, _)| *s == slot);
        let (_, n) = attempts.entry(key.to_string()).or_insert((slot, 0));
        *n = n.saturating_add(1);
        *n <= limit
    }
}

#[async_trait]
impl Membership for SingleNode {
    async fn members(&self) -> Option<Members> {
        None
    }
}

/// The name a single node goes by among its (no) peers.
pub const SINGLE_NODE: &str = "single";

/// A single node's peers: there are none. What an actor publishes reaches nobody, a
/// message to another node certainly reaches nobody, and every game's owner is this node
/// (the only one, and the only one alive).
#[async_trait]
impl Peers for SingleNode {
    fn node(&self) -> &str {
        SINGLE_NODE
    }

    async fn publish(&self, _message: &BusMessage) {}

    async fn send_to(&self, _node: &str, _message: &BusMessage) -> Option<bool> {
        Some(false)
    }

    async fn owner_of(&self, _game: &GameId) -> Result<Option<String>, StoreError> {
        Ok(Some(SINGLE_NODE.to_string()))
    }

    fn set_owned(&self, _game: &GameId, _owned: bool) {}

    async fn hold_lease(&self, _game: &GameId) -> Result<bool, StoreError> {
        Ok(true)
    }

    async fn follow(&self, _game: &GameId) {}

    fn is_live(&self, node: &str) -> bool {
        node == SINGLE_NODE
    }

    fn unfollow(&self, _game: &GameId) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_fits_its_kinds_and_levels_and_never_plays_itself() {
        let b = ServedBot {
            player: "pbot".into(),
            kinds: vec!["staku".into(), "akron".into()],
            levels: vec![1, 3],
        };
        let (person, bot) = (PlayerId::from("pperson"), PlayerId::from("pbot"));
        assert!(b.fits("staku", 3, &person));
        assert!(!b.fits("staku", 2, &person));
        assert!(!b.fits("unane", 1, &person));
        assert!(!b.fits("staku", 1, &bot));
    }
}
