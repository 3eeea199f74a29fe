//! Persistence behind one async trait, so the in-memory store (the embedded default) and
//! Redis (its own issue, `redis/`) are interchangeable.
//!
//! Why this shape: the live state of a game is owned by its actor; the store only records
//! what must survive the actor (players and their token hashes, rooms, each game's setup,
//! its action log, and the final document of finished games). The actor acknowledges an
//! action only after [`Store::append_action`] succeeded, so an acknowledged move is durable
//! as far as the store is.
//!
//! Two more rules make recovery exact (see `crate::services::recovery`): each logged action carries
//! the position it produced, so a replay is checked move by move against what was stored;
//! and every change of a game document is one logged entry whose seq is exactly one above
//! the last, so a game reloaded after a crash continues at the seq it had (protocol/docs/PROTOCOL.md
//! version 2) and a writer holding a stale view of the log can never append to it.

pub mod analysis;
pub mod connection;
pub mod memory;
pub mod moderation;
pub mod redis;
pub mod sentinel;
#[cfg(test)]
pub mod slowed;

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_protocol::wire::{RoomState, RoomTerms, Visibility};
use thiserror::Error;

use crate::domain::rating::Rating;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};
pub use analysis::{AnalysisEntry, AnalysisRequested, AnalysisStatus};

/// Why a store call failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The backend cannot be reached or failed; the call was not carried out.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The call was sent but its answer was lost (a timeout, a dropped connection): it may
    /// or may not have been carried out. A write in doubt is settled by reading back.
    #[error("store answer lost: {0}")]
    InDoubt(String),
    /// A write conflicts with what is stored (duplicate id, out-of-order action seq).
    #[error("store conflict: {0}")]
    Conflict(String),
    /// This node no longer holds the game's lease (cluster mode): another node owns it now,
    /// and nothing was written.
    #[error("this node no longer owns game {0}")]
    NotOwner(String),
    /// Stored data could not be decoded.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
}

/// A player identity. Only the SHA-256 of the token is kept, so a leaked store does not leak
/// sessions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRecord {
    /// Public id.
    pub id: PlayerId,
    /// Display name.
    pub name: String,
    /// Hex SHA-256 of the secret token.
    pub token_hash: String,
    /// Creation time, ms since the epoch.
    pub created_ms: u64,
    /// A computer player (`stoa bot`).
    #[serde(default)]
    pub bot: bool,
    /// The account this player claimed (its name as claimed), absent for a guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// A claimed account: a unique name and a password hash that sign in as one player from
/// any device (see `services::accounts`).
///
/// Why apart from the player record: the name is the key (unique per deployment), and the
/// hash is read only to sign in, never with the player.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountRecord {
    /// The name folded for comparison ([`crate::domain::account::name_key`]).
    pub name_key: String,
    /// The name as claimed.
    pub name: String,
    /// The player the account signs in as.
    pub player_id: PlayerId,
    /// The password's argon2id hash (PHC string); the only trace of the password.
    pub password_hash: String,
    /// When the account was claimed, ms since the epoch.
    pub created_ms: u64,
}

impl std::fmt::Debug for AccountRecord {
    /// Without the hash: records may be logged.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountRecord")
            .field("name", &self.name)
            .field("player_id", &self.player_id)
            .finish_non_exhaustive()
    }
}

/// One device of a player: one of its tokens, with the label the device gave. A player's
/// first token (the one `hello` made with the player) is a device too, recorded at its
/// first `hello`, so players from before devices keep working.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRecord {
    /// The device id: derived from the token hash ([`crate::ids::device_id`]).
    pub id: String,
    /// Hex SHA-256 of the device's token.
    pub token_hash: String,
    /// The label the device gave ("browser (Chrome)", "terminal").
    pub label: String,
    /// When the token was made (or, for a first token, first seen), ms since the epoch.
    pub created_ms: u64,
    /// The device's last `hello`, ms since the epoch.
    pub last_seen_ms: u64,
}

/// A room as persisted (the live room lives in [`crate::services::rooms::Rooms`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoomRecord {
    /// Room code.
    pub code: RoomCode,
    /// The game and its terms, as the wire's `RoomInfo` has them (stored as the record's
    /// own fields).
    #[serde(flatten)]
    pub terms: RoomTerms,
    /// Host player id.
    pub host: PlayerId,
    /// Player ids by side index (first-acting side first).
    pub seats: [Option<PlayerId>; 2],
    /// Where the room is in its life.
    pub status: RoomState,
    /// The game, once started.
    pub game_id: Option<GameId>,
}

/// One seated player as recorded with a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRecord {
    /// Player id.
    pub id: PlayerId,
    /// Display name at the start of the game.
    pub name: String,
    /// The rating shown in the seat at the start (restored with the game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<Value>,
    /// A computer player.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bot: bool,
}

/// Everything needed to recreate a game from its action log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Game id.
    pub id: GameId,
    /// Game kind.
    pub kind: String,
    /// Validated options.
    pub options: Value,
    /// Clock request object.
    pub clock: Value,
    /// Rated flag.
    pub rated: bool,
    /// Visibility.
    pub visibility: Visibility,
    /// Room code that grants access to a private game.
    pub code: Option<RoomCode>,
    /// Players by side index at the start (a swap later exchanges them).
    pub players: [SeatRecord; 2],
    /// Creation time, ms since the epoch.
    pub created_ms: u64,
    /// The game this one is a rematch of.
    pub rematch_of: Option<GameId>,
    /// The arena this game was paired in (its final standings are at
    /// `/api/arenas/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arena: Option<ArenaLink>,
    /// The position the game started from, when not the kind's start (absent otherwise,
    /// so the records of normal games are written as before): its replays start there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

/// An arena game's link to its arena, kept with the game (and its record).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaLink {
    /// The arena's id.
    pub id: ArenaId,
    /// Whether the arena allows berserk (`game.berserk`).
    #[serde(default)]
    pub berserk: bool,
}

/// One action in a game's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActionKind {
    /// A move, canonical notation.
    Move {
        /// Canonical notation.
        notation: String,
        /// The lag compensation credited to the mover's clock (ms), so that a replay of
        /// the log charges exactly what the live game did.
        #[serde(default, skip_serializing_if = "is_zero")]
        credit_ms: u64,
    },
    /// Resignation.
    Resign,
    /// Berserk (an arena game): the player halved their own time before their first
    /// action.
    Berserk,
    /// Draw offer.
    DrawOffer,
    /// Draw offer accepted.
    DrawAccept,
    /// Draw offer declined.
    DrawDecline,
    /// Abort.
    Abort,
    /// Win claimed for abandonment.
    Claim,
    /// Rematch requested; the second request carries the id of the rematch game it starts.
    Rematch {
        /// The new game's id (the request that completed the pair).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<GameId>,
    },
    /// Decided by the server: the side to act (this entry's player) ran out of time.
    Timeout,
    /// Decided by the server: the side to act (this entry's player) made no first action
    /// in time; the game is aborted.
    NoFirstAction,
    /// Decided by an operator: this entry's player was banned and loses the game.
    Banned,
    /// Decided by an operator: the game is aborted, whatever was played (unrated, no
    /// result); this entry's player is the first seated one.
    OperatorAbort,
    /// The clock stood still from `paused_ms` until this entry's time (a restart, or the
    /// store being unreachable): nobody was charged for it. Logged by the server.
    Resume {
        /// When the clock stopped.
        paused_ms: u64,
    },
}

/// One logged action: who, what, when, and the document seq it produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// The document seq after the action.
    pub seq: u64,
    /// Server time, ms since the epoch.
    pub at_ms: u64,
    /// The acting player's id.
    pub player_id: PlayerId,
    /// The action.
    pub action: ActionKind,
    /// The position string after the action, checked when the log is replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// The forwarded command this event carries out (cluster mode: `node:request`), so the
    /// node that forwarded it and lost the owner's answer settles it from the log by this
    /// exact command — never by another action of the same player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A finished game's final document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinishedGame {
    /// Final seq.
    pub seq: u64,
    /// Final document.
    pub doc: Value,
    /// When the game ended, ms since the epoch (0 in records written before it was kept).
    #[serde(default)]
    pub ended_ms: u64,
    /// A rated game's new ratings by side (`{"white": 1532.4, …}`); `None` otherwise.
    #[serde(default)]
    pub ratings_after: Option<Value>,
}

/// Result alias for store calls.
pub type StoreResult<T> = Result<T, StoreError>;

/// The persistence interface. Every call is async so a networked backend fits.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Checks the backend is reachable (for `/health`).
    async fn ping(&self) -> StoreResult<()>;

    /// Moderation's records (reports, sanctions, the audit log) in this store.
    fn moderation(&self) -> &dyn moderation::ModerationStore;

    /// What `/health` reports as `persistence`: `"off"` when nothing survives a restart.
    fn persistence(&self) -> &'static str {
        "off"
    }

    /// Whether the backend is believed reachable right now (no I/O): while it is not,
    /// games pause their clocks, since no move can be acknowledged.
    fn available(&self) -> bool {
        true
    }

    /// Changes of [`Store::available`], for whoever must react to an outage when it starts
    /// rather than find it on a periodic check (an idle game pauses its clock); `None` for
    /// a backend that is always available.
    fn availability(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        None
    }

    /// How many times the backend may have lost writes it had acknowledged (Redis came back
    /// after an outage, perhaps restarted; Sentinel promoted a replica that was behind): a
    /// game's owner that sees it move checks that the game's log still holds every event
    /// it applied, and logs again what it finds missing. 0 for a backend that never does.
    fn generation(&self) -> u64 {
        0
    }

    /// The deployment's id (`welcome.deployment`): the id stored with the data if there is
    /// one, else `fresh`, stored now for the next start and every other node. Tokens are
    /// valid wherever the players they name are, so the id names the set of players: Redis
    /// keeps it under the key prefix (every node of a cluster, and every restart, read the
    /// same one, created once with `SET NX`); the in-memory store forgets its players on
    /// exit, so each process is a deployment of its own and keeps `fresh`.
    async fn deployment(&self, fresh: &str) -> StoreResult<String> {
        Ok(fresh.to_string())
    }

    /// Creates a player; `Conflict` if the id or token hash exists.
    async fn create_player(&self, player: &PlayerRecord) -> StoreResult<()>;
    /// Stores again a player this node created whose record a Redis failover lost: its
    /// token, then its record. A player whose record is still there is left as it is
    /// (renamed or claimed since), and so is its token: the token is written before the
    /// record, so a record that survived kept its token too, and a token gone since was
    /// revoked, never to be brought back. Whether it had to be stored again.
    async fn restore_player(&self, player: &PlayerRecord) -> StoreResult<bool>;
    /// The player whose token hashes to `token_hash`.
    async fn player_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<PlayerRecord>>;
    /// A player by id.
    async fn player(&self, id: &PlayerId) -> StoreResult<Option<PlayerRecord>>;
    /// Changes an existing player's display name (`hello` with a token and a new name).
    async fn rename_player(&self, id: &PlayerId, name: &str) -> StoreResult<()>;

    /// Gives a player one more device: its token (`device.token_hash`) now names the
    /// player. `Conflict` if the token hash exists.
    async fn add_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()>;
    /// Records a `hello` of a device: its last-seen time, and the device itself if it is
    /// not recorded yet (a player's first token). Does nothing for a revoked token.
    async fn seen_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()>;
    /// A player's devices, oldest first (then by id).
    async fn devices(&self, player_id: &PlayerId) -> StoreResult<Vec<DeviceRecord>>;
    /// Removes a device: its token names nobody from now on. `false` if the player has no
    /// such device (nothing changed).
    async fn revoke_device(&self, player_id: &PlayerId, device_id: &str) -> StoreResult<bool>;
    /// Stores a one-time link code naming a player, for `ttl_ms`; `false` if the code is
    /// taken (nothing changed). Shared by every node of a cluster.
    async fn create_link_code(
        &self,
        code: &str,
        player_id: &PlayerId,
        ttl_ms: u64,
    ) -> StoreResult<bool>;
    /// Takes a link code: the player it names, and the code is gone, in one step (a code
    /// redeems once, even raced by two nodes); `None` if unknown, used or expired.
    async fn take_link_code(&self, code: &str) -> StoreResult<Option<PlayerId>>;

    /// Claims an account: its name names its player from now on, and the player record
    /// carries the name (`PlayerRecord::account`). `false` when the name is taken by another
    /// player or the player has an account already (nothing changed).
    async fn claim_account(&self, account: &AccountRecord) -> StoreResult<bool>;
    /// The account a folded name names.
    async fn account(&self, name_key: &str) -> StoreResult<Option<AccountRecord>>;
    /// Replaces an existing account's password hash.
    async fn set_password(&self, name_key: &str, password_hash: &str) -> StoreResult<()>;

    /// Marks steps of a kind's lesson done for a player: a set, so a step marked twice is
    /// kept once. Kept as long as the player's other data (no expiry).
    async fn add_lesson_steps(
        &self,
        player_id: &PlayerId,
        kind: &str,
        steps: &[String],
    ) -> StoreResult<()>;
    /// The lesson steps a player has done in each of `kinds`, sorted by id; a kind with
    /// none is absent.
    async fn lesson_steps(&self, player_id: &PlayerId, kinds: &[&str]) -> StoreResult<LessonSteps>;

    /// Creates or replaces a room.
    async fn save_room(&self, room: &RoomRecord) -> StoreResult<()>;
    /// Saves a room that leaves the waiting state (a seat taken, the host closing it) only
    /// if the stored room still waits; `false` when it started or closed meanwhile (on
    /// another node of a cluster, say), and nothing was written.
    async fn claim_room(&self, room: &RoomRecord) -> StoreResult<bool>;
    /// A room by code.
    async fn room(&self, code: &RoomCode) -> StoreResult<Option<RoomRecord>>;

    /// Saves an arena's state (`state`, the arenas service's JSON) as version `version`,
    /// only if the stored version is `version - 1` (an arena never saved counts as 0);
    /// `false` when another writer got there first (nothing was written). The version
    /// makes every change of an arena — a pairing round above all — one conditional write,
    /// so a writer with a stale view (a node that lost the arena) cannot make it twice.
    /// `open` keeps the arena listed in [`Store::open_arenas`].
    async fn save_arena(
        &self,
        id: &ArenaId,
        version: u64,
        open: bool,
        state: &Value,
    ) -> StoreResult<bool>;
    /// An arena's stored version and state.
    async fn arena(&self, id: &ArenaId) -> StoreResult<Option<(u64, Value)>>;
    /// Ids of the arenas saved as open (scheduled or running, or with games still
    /// running), sorted.
    async fn open_arenas(&self) -> StoreResult<Vec<ArenaId>>;

    /// Creates a game (its setup); `Conflict` if the id exists. The game counts as
    /// unfinished for both players until [`Store::finish_game`].
    async fn create_game(&self, game: &GameRecord) -> StoreResult<()>;
    /// A game's setup.
    async fn game(&self, id: &GameId) -> StoreResult<Option<GameRecord>>;
    /// Appends to a game's action log; `Conflict` unless `action.seq` is exactly one above
    /// the last logged seq (0 for an empty log). Appending the
    /// very record that is already last succeeds without a second copy, so a write whose
    /// answer was lost can be retried. Shared: the memory store keeps the record itself
    /// instead of a copy of its three strings (a move's event is logged once).
    async fn append_action(&self, game_id: &GameId, action: &Arc<ActionRecord>) -> StoreResult<()>;
    /// A game's action log, in order.
    async fn actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>>;
    /// A game's action log as it survives a failover of the store: with
    /// `--redis-min-replicas N`, read only once N replicas hold everything the primary held
    /// at the read (an error otherwise); elsewhere the same as [`Store::actions`]. What
    /// settles a write in doubt: an entry read here may be answered `ok`.
    async fn replicated_actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>> {
        self.actions(game_id).await
    }
    /// The last logged action (to settle a write whose outcome is unknown).
    async fn last_action(&self, game_id: &GameId) -> StoreResult<Option<ActionRecord>> {
        Ok(self.actions(game_id).await?.pop())
    }
    /// Ids of every unfinished game, oldest first (what recovery reloads).
    async fn all_unfinished_games(&self) -> StoreResult<Vec<GameId>>;
    /// Repairs the unfinished indexes of game `game_id` after a crash inside
    /// [`Store::create_game`], for a store whose creation is several writes: with its
    /// `record` (the game exists) its players list it again; without (the crash came before
    /// the record) the index entry of a game never created is dropped. Only the node that
    /// holds the game's lease calls it (nobody else is creating the game meanwhile). A store
    /// that creates a game in one step has nothing to repair.
    async fn repair_unfinished(
        &self,
        _game_id: &GameId,
        _record: Option<&GameRecord>,
    ) -> StoreResult<()> {
        Ok(())
    }
    /// Rooms still waiting for an opponent (what recovery reloads).
    async fn waiting_rooms(&self) -> StoreResult<Vec<RoomRecord>>;
    /// Records (or replaces) the final document of a finished game and removes the game from
    /// its players' unfinished lists. Taken whole: the memory store keeps it as it is
    /// (a copy of the whole document was a fifth of a game's end).
    async fn finish_game(&self, game_id: &GameId, finished: FinishedGame) -> StoreResult<()>;
    /// The final document of a finished game.
    async fn finished_game(&self, game_id: &GameId) -> StoreResult<Option<FinishedGame>>;
    /// A player's finished games, newest first: `(game id, end ms)` for games that ended
    /// before `before_ms` (all when `None`), at most `limit`.
    async fn finished_games_of(
        &self,
        player_id: &PlayerId,
        before_ms: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(GameId, u64)>>;
    /// Ids of the unfinished games a player sits in.
    async fn unfinished_games(&self, player_id: &PlayerId) -> StoreResult<Vec<GameId>>;

    /// A player's Glicko-2 ratings by game kind; kinds the player never played rated are
    /// absent (the caller shows the default rating for them).
    async fn ratings(&self, player_id: &PlayerId) -> StoreResult<RatingsByKind>;
    /// Stores new ratings in one game kind for several players (the two players of a rated
    /// game) all at once: either every rating is written or none is, so a game never rates
    /// one side only. The caller serialises read-compute-write (see `crate::services::ratings`).
    ///
    /// The same call keeps the kind's leaderboard index ([`Store::leaderboard`]) in step:
    /// a player whose new rating is established (not provisional) is entered at it, one
    /// whose rating is provisional is taken out.
    async fn save_ratings(&self, kind: &str, ratings: &[(String, Rating)]) -> StoreResult<()>;
    /// The leaderboard of a game kind: at most `limit` players whose rating in `kind` is
    /// established (not provisional), highest rating first; equal ratings by player id,
    /// the greater first (how Redis orders a sorted set read backwards). Each with the
    /// rating [`Store::save_ratings`] last wrote.
    async fn leaderboard(&self, kind: &str, limit: usize) -> StoreResult<Vec<(String, Rating)>>;

    /// Queues the engine review of finished game `game_id` for `player_id`, in one step:
    /// nothing changes when the game was queued before (any state, done included: a game
    /// is reviewed once) or the player has another request pending (see
    /// [`AnalysisRequested`]).
    async fn request_analysis(
        &self,
        game_id: &GameId,
        player_id: &PlayerId,
    ) -> StoreResult<AnalysisRequested>;
    /// A game's review: its state, who asked, and the result once done.
    async fn analysis(&self, game_id: &GameId) -> StoreResult<Option<AnalysisEntry>>;
    /// When a worker was last seen by [`Store::take_analysis_job`] or
    /// [`Store::keep_analysis_leases`] (ms since the epoch, 0 never): a queue nobody took
    /// from lately is waiting for a worker.
    async fn analysis_workers_seen(&self) -> StoreResult<u64>;
    /// Leases the next queued review to `lease` (a worker's lease id) until `now_ms +
    /// lease_ms`, after putting back first in the queue the leases that ran out; `None`
    /// when nothing is queued. Notes a worker as seen at `now_ms`.
    async fn take_analysis_job(
        &self,
        lease: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<Option<GameId>>;
    /// Extends those of `leases` (game, lease id) that are still current to `now_ms +
    /// lease_ms`, and notes workers as seen at `now_ms`.
    async fn keep_analysis_leases(
        &self,
        leases: &[(GameId, String)],
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<()>;
    /// Gives a leased review back to the front of the queue (its worker went away); `false`
    /// when `lease` is not its current lease (nothing changed).
    async fn release_analysis_job(&self, game_id: &GameId, lease: &str) -> StoreResult<bool>;
    /// Stores a review's result, only under its current `lease`: the game's review is done
    /// and its player may ask for another. `false` when the lease is not current (it ran
    /// out and the job went to another worker, or the result was stored already): nothing
    /// is written, so a result is stored exactly once.
    async fn complete_analysis(
        &self,
        game_id: &GameId,
        lease: &str,
        result: &Value,
    ) -> StoreResult<bool>;
}

/// Lesson steps done by game kind (kind id → step ids), as [`Store::lesson_steps`] returns
/// them.
pub type LessonSteps = std::collections::BTreeMap<String, Vec<String>>;

/// Ratings by game kind (kind id → rating), as [`Store::ratings`] returns them.
pub type RatingsByKind = std::collections::BTreeMap<String, Rating>;
