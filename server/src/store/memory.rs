//! The in-memory store: the embedded default, and the reference behaviour for other backends.
//!
//! Why one mutex: every call is a few map operations with no await inside, so a single lock
//! is simpler than sharding and never contended for long.

use std::collections::{BTreeMap, BTreeSet};

use hashbrown::HashMap;
use parking_lot::Mutex;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use stoa_protocol::wire::RoomState;

use super::analysis::MemoryQueue;
use super::{
    AccountRecord, ActionRecord, AnalysisEntry, AnalysisRequested, DeviceRecord, FinishedGame,
    GameRecord, LessonSteps, PlayerRecord, RatingsByKind, RoomRecord, Store, StoreError,
    StoreResult,
};
use crate::domain::rating::Rating;
use crate::ids;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};

#[derive(Default)]
struct Inner {
    players: HashMap<String, PlayerRecord>,
    by_token: HashMap<String, String>,
    rooms: HashMap<String, RoomRecord>,
    /// Arenas: (version, state, open).
    arenas: HashMap<String, (u64, Value, bool)>,
    games: HashMap<String, GameRecord>,
    actions: HashMap<String, Vec<Arc<ActionRecord>>>,
    finished: HashMap<String, FinishedGame>,
    /// Finished games by (end ms, id), oldest first: what goes when the bound is reached.
    finished_order: BTreeSet<(u64, String)>,
    /// Each player's finished games by (end ms, id).
    history: HashMap<String, BTreeSet<(u64, String)>>,
    unfinished: HashMap<String, BTreeSet<String>>,
    ratings: HashMap<String, RatingsByKind>,
    /// Per kind, the players whose rating there is established, by (rating, id): the
    /// leaderboard index, read from the end.
    leaderboards: HashMap<String, BTreeSet<(Ranked, String)>>,
    /// Each player's devices by device id.
    devices: HashMap<String, BTreeMap<String, DeviceRecord>>,
    /// Link codes: the player named and when the code expires (ms since the epoch).
    link_codes: HashMap<String, (String, u64)>,
    /// Claimed accounts by folded name.
    accounts: HashMap<String, AccountRecord>,
    /// Each player's lesson steps done, by kind.
    lessons: HashMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// The engine reviews of finished games, and their queue.
    analysis: MemoryQueue,
    /// Games whose next append is refused as if their lease had lapsed (tests only).
    #[cfg(test)]
    lost_leases: BTreeSet<String>,
}

/// A rating as an index key: ordered by `f64::total_cmp` (stored ratings are finite; the
/// order is total anyway, so the index can never be corrupted by a value).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ranked(f64);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A [`Store`] in process memory (lost on restart).
pub struct MemoryStore {
    inner: Mutex<Inner>,
    /// Reports, sanctions and the audit log.
    moderation: super::moderation::MemoryModeration,
    /// At most this many finished games are kept (the oldest go first), so a long-running
    /// server's memory stays bounded.
    keep_finished: usize,
}

/// How many finished games [`MemoryStore::new`] keeps.
pub const DEFAULT_KEEP_FINISHED: usize = 10_000;

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store keeping [`DEFAULT_KEEP_FINISHED`] finished games.
    pub fn new() -> Self {
        Self::keeping(DEFAULT_KEEP_FINISHED)
    }

    /// An empty store keeping at most `keep_finished` finished games (at least one).
    pub fn keeping(keep_finished: usize) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner::default()),
            moderation: Default::default(),
            keep_finished: keep_finished.max(1),
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Forgets the last `n` logged events of a game, as a Redis failover to a replica that
    /// had not received them does (for the tests of what a game does then).
    #[cfg(test)]
    pub fn lose_last_actions(&self, game_id: &GameId, n: usize) {
        let mut s = self.lock();
        if let Some(log) = s.actions.get_mut(game_id.as_str()) {
            log.truncate(log.len().saturating_sub(n));
        }
    }

    /// Refuses the game's next append as a store that lost the game's lease key does (a
    /// Redis restart that outlasted the lease): `NotOwner`, nothing written.
    #[cfg(test)]
    pub fn lose_lease(&self, game_id: &GameId) {
        self.lock().lost_leases.insert(game_id.to_string());
    }

    /// Forgets a player (its record and its token), as a Redis failover does to an
    /// identity created just before it.
    #[cfg(test)]
    pub fn lose_player(&self, player_id: &PlayerId) {
        let mut s = self.lock();
        s.players.remove(player_id.as_str());
        s.by_token.retain(|_, id| id != player_id.as_str());
    }

    /// Forgets a game altogether (its record, its log, its players' lists of unfinished
    /// games), as a Redis failover does to a game created just before it.
    #[cfg(test)]
    pub fn lose_game(&self, game_id: &GameId) {
        let mut s = self.lock();
        s.games.remove(game_id.as_str());
        s.actions.remove(game_id.as_str());
        for list in s.unfinished.values_mut() {
            list.remove(game_id.as_str());
        }
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn moderation(&self) -> &dyn super::moderation::ModerationStore {
        &self.moderation
    }

    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn create_player(&self, player: &PlayerRecord) -> StoreResult<()> {
        let mut s = self.lock();
        if s.players.contains_key(player.id.as_str()) || s.by_token.contains_key(&player.token_hash)
        {
            return Err(StoreError::Conflict(format!("player {} exists", player.id)));
        }
        s.by_token
            .insert(player.token_hash.clone(), player.id.to_string());
        s.players.insert(player.id.to_string(), player.clone());
        Ok(())
    }

    async fn restore_player(&self, player: &PlayerRecord) -> StoreResult<bool> {
        let mut s = self.lock();
        if s.players.contains_key(player.id.as_str()) {
            return Ok(false);
        }
        s.by_token
            .insert(player.token_hash.clone(), player.id.to_string());
        s.players.insert(player.id.to_string(), player.clone());
        Ok(true)
    }

    async fn player_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<PlayerRecord>> {
        let s = self.lock();
        Ok(s.by_token
            .get(token_hash)
            .and_then(|id| s.players.get(id))
            .cloned())
    }

    async fn player(&self, id: &PlayerId) -> StoreResult<Option<PlayerRecord>> {
        Ok(self.lock().players.get(id.as_str()).cloned())
    }

    async fn rename_player(&self, id: &PlayerId, name: &str) -> StoreResult<()> {
        match self.lock().players.get_mut(id.as_str()) {
            Some(p) => {
                p.name = name.to_string();
                Ok(())
            }
            None => Err(StoreError::Conflict(format!("no player {id}"))),
        }
    }

    async fn claim_account(&self, account: &AccountRecord) -> StoreResult<bool> {
        let mut s = self.lock();
        let Inner {
            players, accounts, ..
        } = &mut *s;
        let Some(player) = players.get_mut(account.player_id.as_str()) else {
            return Err(StoreError::Conflict(format!(
                "no player {}",
                account.player_id
            )));
        };
        if player.account.is_some() || accounts.contains_key(&account.name_key) {
            return Ok(false);
        }
        player.account = Some(account.name.clone());
        accounts.insert(account.name_key.clone(), account.clone());
        Ok(true)
    }

    async fn account(&self, name_key: &str) -> StoreResult<Option<AccountRecord>> {
        Ok(self.lock().accounts.get(name_key).cloned())
    }

    async fn set_password(&self, name_key: &str, password_hash: &str) -> StoreResult<()> {
        match self.lock().accounts.get_mut(name_key) {
            Some(a) => {
                a.password_hash = password_hash.to_string();
                Ok(())
            }
            None => Err(StoreError::Conflict(format!("no account {name_key}"))),
        }
    }

    async fn add_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()> {
        let mut s = self.lock();
        if s.by_token.contains_key(&device.token_hash) {
            return Err(StoreError::Conflict("token hash exists".into()));
        }
        s.by_token
            .insert(device.token_hash.clone(), player_id.to_string());
        s.devices
            .entry(player_id.to_string())
            .or_default()
            .insert(device.id.clone(), device.clone());
        Ok(())
    }

    async fn seen_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()> {
        let mut s = self.lock();
        if s.by_token.get(&device.token_hash).map(String::as_str) != Some(player_id.as_str()) {
            return Ok(());
        }
        s.devices
            .entry(player_id.to_string())
            .or_default()
            .entry(device.id.clone())
            .or_insert_with(|| device.clone())
            .last_seen_ms = device.last_seen_ms;
        Ok(())
    }

    async fn devices(&self, player_id: &PlayerId) -> StoreResult<Vec<DeviceRecord>> {
        let mut list: Vec<DeviceRecord> = self
            .lock()
            .devices
            .get(player_id.as_str())
            .map(|d| d.values().cloned().collect())
            .unwrap_or_default();
        list.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(list)
    }

    async fn revoke_device(&self, player_id: &PlayerId, device_id: &str) -> StoreResult<bool> {
        let mut s = self.lock();
        let Some(device) = s
            .devices
            .get_mut(player_id.as_str())
            .and_then(|d| d.remove(device_id))
        else {
            return Ok(false);
        };
        s.by_token.remove(&device.token_hash);
        Ok(true)
    }

    async fn create_link_code(
        &self,
        code: &str,
        player_id: &PlayerId,
        ttl_ms: u64,
    ) -> StoreResult<bool> {
        let now = ids::now_ms();
        let mut s = self.lock();
        // Expired codes go here, so the map holds only live ones (a few per player).
        s.link_codes.retain(|_, (_, expires)| *expires > now);
        if s.link_codes.contains_key(code) {
            return Ok(false);
        }
        s.link_codes
            .insert(code.to_string(), (player_id.to_string(), now + ttl_ms));
        Ok(true)
    }

    async fn take_link_code(&self, code: &str) -> StoreResult<Option<PlayerId>> {
        let now = ids::now_ms();
        Ok(self
            .lock()
            .link_codes
            .remove(code)
            .filter(|(_, expires)| *expires > now)
            .map(|(player, _)| PlayerId::from(player)))
    }

    async fn add_lesson_steps(
        &self,
        player_id: &PlayerId,
        kind: &str,
        steps: &[String],
    ) -> StoreResult<()> {
        let mut s = self.lock();
        let done = s.lessons.entry(player_id.to_string()).or_default();
        done.entry(kind.to_string())
            .or_default()
            .extend(steps.iter().cloned());
        Ok(())
    }

    async fn lesson_steps(&self, player_id: &PlayerId, kinds: &[&str]) -> StoreResult<LessonSteps> {
        let s = self.lock();
        let Some(done) = s.lessons.get(player_id.as_str()) else {
            return Ok(LessonSteps::new());
        };
        Ok(kinds
            .iter()
            .filter_map(|k| {
                done.get(*k)
                    .filter(|d| !d.is_empty())
                    .map(|d| (k.to_string(), d.iter().cloned().collect()))
            })
            .collect())
    }

    async fn save_room(&self, room: &RoomRecord) -> StoreResult<()> {
        self.lock()
            .rooms
            .insert(room.code.to_string(), room.clone());
        Ok(())
    }

    async fn claim_room(&self, room: &RoomRecord) -> StoreResult<bool> {
        let mut s = self.lock();
        if s.rooms
            .get(room.code.as_str())
            .is_none_or(|r| r.status != RoomState::Waiting)
        {
            return Ok(false);
        }
        s.rooms.insert(room.code.to_string(), room.clone());
        Ok(true)
    }

    async fn room(&self, code: &RoomCode) -> StoreResult<Option<RoomRecord>> {
        Ok(self.lock().rooms.get(code.as_str()).cloned())
    }

    async fn create_game(&self, game: &GameRecord) -> StoreResult<()> {
        let mut s = self.lock();
        if s.games.contains_key(game.id.as_str()) {
            return Err(StoreError::Conflict(format!("game {} exists", game.id)));
        }
        for p in &game.players {
            s.unfinished
                .entry(p.id.to_string())
                .or_default()
                .insert(game.id.to_string());
        }
        s.games.insert(game.id.to_string(), game.clone());
        s.actions.insert(game.id.to_string(), Vec::new());
        Ok(())
    }

    async fn game(&self, id: &GameId) -> StoreResult<Option<GameRecord>> {
        Ok(self.lock().games.get(id.as_str()).cloned())
    }

    async fn append_action(&self, game_id: &GameId, action: &Arc<ActionRecord>) -> StoreResult<()> {
        let mut s = self.lock();
        #[cfg(test)]
        if s.lost_leases.remove(game_id.as_str()) {
            return Err(StoreError::NotOwner(game_id.to_string()));
        }
        let log = s
            .actions
            .get_mut(game_id.as_str())
            .ok_or_else(|| StoreError::Conflict(format!("no game {game_id}")))?;
        if log.last().is_some_and(|last| **last == **action) {
            return Ok(());
        }
        let last = log.last().map_or(0, |last| last.seq);
        if action.seq != last + 1 {
            return Err(StoreError::Conflict(format!(
                "action seq {} does not follow the last logged one ({last})",
                action.seq
            )));
        }
        log.push(Arc::clone(action));
        Ok(())
    }

    async fn all_unfinished_games(&self) -> StoreResult<Vec<GameId>> {
        let s = self.lock();
        let mut games: Vec<&GameRecord> = s
            .games
            .values()
            .filter(|g| !s.finished.contains_key(g.id.as_str()))
            .collect();
        games.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(games.into_iter().map(|g| g.id.clone()).collect())
    }

    async fn save_arena(
        &self,
        id: &ArenaId,
        version: u64,
        open: bool,
        state: &Value,
    ) -> StoreResult<bool> {
        let mut s = self.lock();
        let stored = s.arenas.get(id.as_str()).map_or(0, |a| a.0);
        if stored.checked_add(1) != Some(version) {
            return Ok(false);
        }
        s.arenas
            .insert(id.to_string(), (version, state.clone(), open));
        Ok(true)
    }

    async fn arena(&self, id: &ArenaId) -> StoreResult<Option<(u64, Value)>> {
        Ok(self
            .lock()
            .arenas
            .get(id.as_str())
            .map(|a| (a.0, a.1.clone())))
    }

    async fn open_arenas(&self) -> StoreResult<Vec<ArenaId>> {
        let mut ids: Vec<ArenaId> = self
            .lock()
            .arenas
            .iter()
            .filter(|(_, a)| a.2)
            .map(|(id, _)| ArenaId::from(id.as_str()))
            .collect();
        ids.sort();
        Ok(ids)
    }

    async fn waiting_rooms(&self) -> StoreResult<Vec<RoomRecord>> {
        let s = self.lock();
        let mut rooms: Vec<RoomRecord> = s
            .rooms
            .values()
            .filter(|r| r.status == RoomState::Waiting)
            .cloned()
            .collect();
        rooms.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(rooms)
    }

    async fn actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>> {
        Ok(self
            .lock()
            .actions
            .get(game_id.as_str())
            .map(|log| log.iter().map(|a| ActionRecord::clone(a)).collect())
            .unwrap_or_default())
    }

    async fn finish_game(&self, game_id: &GameId, finished: FinishedGame) -> StoreResult<()> {
        let mut s = self.lock();
        let players: Vec<String> = s
            .games
            .get(game_id.as_str())
            .map(|g| g.players.iter().map(|p| p.id.to_string()).collect())
            .unwrap_or_default();
        if let Some(old) = s.finished.get(game_id.as_str()).map(|f| f.ended_ms) {
            // Replaced (a rematch request after the end): re-index under its end time.
            let key = (old, game_id.to_string());
            s.finished_order.remove(&key);
            for p in &players {
                if let Some(h) = s.history.get_mut(p) {
                    h.remove(&key);
                }
            }
        }
        let key = (finished.ended_ms, game_id.to_string());
        for p in players {
            if let Some(set) = s.unfinished.get_mut(&p) {
                set.remove(game_id.as_str());
            }
            s.history.entry(p).or_default().insert(key.clone());
        }
        s.finished_order.insert(key);
        s.finished.insert(game_id.to_string(), finished);
        while s.finished.len() > self.keep_finished {
            let Some((ended, id)) = s.finished_order.pop_first() else {
                break;
            };
            s.finished.remove(&id);
            s.actions.remove(&id);
            s.analysis.forget(&id);
            if let Some(g) = s.games.remove(&id) {
                for p in g.players {
                    if let Some(h) = s.history.get_mut(p.id.as_str()) {
                        h.remove(&(ended, id.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    async fn finished_games_of(
        &self,
        player_id: &PlayerId,
        before_ms: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(GameId, u64)>> {
        let s = self.lock();
        let Some(h) = s.history.get(player_id.as_str()) else {
            return Ok(Vec::new());
        };
        Ok(h.iter()
            .rev()
            .filter(|(ended, _)| before_ms.is_none_or(|b| *ended < b))
            .take(limit)
            .map(|(ended, id)| (GameId::from(id.as_str()), *ended))
            .collect())
    }

    async fn finished_game(&self, game_id: &GameId) -> StoreResult<Option<FinishedGame>> {
        Ok(self.lock().finished.get(game_id.as_str()).cloned())
    }

    async fn unfinished_games(&self, player_id: &PlayerId) -> StoreResult<Vec<GameId>> {
        Ok(self
            .lock()
            .unfinished
            .get(player_id.as_str())
            .map(|s| s.iter().map(|g| GameId::from(g.as_str())).collect())
            .unwrap_or_default())
    }

    async fn ratings(&self, player_id: &PlayerId) -> StoreResult<RatingsByKind> {
        Ok(self
            .lock()
            .ratings
            .get(player_id.as_str())
            .cloned()
            .unwrap_or_default())
    }

    async fn save_ratings(&self, kind: &str, ratings: &[(String, Rating)]) -> StoreResult<()> {
        // One lock for all players: the write is atomic.
        let mut s = self.lock();
        for (player, rating) in ratings {
            let old = s
                .ratings
                .entry(player.clone())
                .or_default()
                .insert(kind.to_string(), *rating);
            let board = s.leaderboards.entry(kind.to_string()).or_default();
            if let Some(old) = old {
                board.remove(&(Ranked(old.rating), player.clone()));
            }
            if !rating.provisional() {
                board.insert((Ranked(rating.rating), player.clone()));
            }
        }
        Ok(())
    }

    async fn leaderboard(&self, kind: &str, limit: usize) -> StoreResult<Vec<(String, Rating)>> {
        let s = self.lock();
        let Some(board) = s.leaderboards.get(kind) else {
            return Ok(Vec::new());
        };
        Ok(board
            .iter()
            .rev()
            .take(limit)
            .filter_map(|(_, id)| Some((id.clone(), *s.ratings.get(id)?.get(kind)?)))
            .collect())
    }

    async fn request_analysis(
        &self,
        game_id: &GameId,
        player_id: &PlayerId,
    ) -> StoreResult<AnalysisRequested> {
        Ok(self.lock().analysis.request(game_id, player_id))
    }

    async fn analysis(&self, game_id: &GameId) -> StoreResult<Option<AnalysisEntry>> {
        Ok(self.lock().analysis.entry(game_id))
    }

    async fn analysis_workers_seen(&self) -> StoreResult<u64> {
        Ok(self.lock().analysis.workers_seen())
    }

    async fn take_analysis_job(
        &self,
        lease: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<Option<GameId>> {
        Ok(self.lock().analysis.take(lease, now_ms, lease_ms))
    }

    async fn keep_analysis_leases(
        &self,
        leases: &[(GameId, String)],
        now_ms: u64,
        lease_ms: u64,
    ) -> StoreResult<()> {
        self.lock().analysis.keep(leases, now_ms, lease_ms);
        Ok(())
    }

    async fn release_analysis_job(&self, game_id: &GameId, lease: &str) -> StoreResult<bool> {
        Ok(self.lock().analysis.release(game_id, lease))
    }

    async fn complete_analysis(
        &self,
        game_id: &GameId,
        lease: &str,
        result: &Value,
    ) -> StoreResult<bool> {
        Ok(self.lock().analysis.complete(game_id, lease, result))
    }
}
