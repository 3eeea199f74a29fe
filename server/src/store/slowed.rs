//! A store whose every call takes a set time more than the in-memory store's: tests of what
//! is timed (the store-latency metric) see a store call by its length.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::memory::MemoryStore;
use super::{
    AccountRecord, ActionRecord, AnalysisEntry, AnalysisRequested, DeviceRecord, FinishedGame,
    GameRecord, LessonSteps, PlayerRecord, RatingsByKind, RoomRecord, Store, StoreResult,
};
use crate::domain::rating::Rating;
use crate::ids::{ArenaId, GameId, PlayerId, RoomCode};

/// A [`MemoryStore`] whose calls each sleep `delay` before they run.
pub struct Slowed {
    inner: MemoryStore,
    delay: Duration,
}

impl Slowed {
    /// An empty store whose every call takes at least `delay`.
    pub fn new(delay: Duration) -> Self {
        Slowed {
            inner: MemoryStore::new(),
            delay,
        }
    }
}

/// Implements every asynchronous [`Store`] call as the same call on the inner store after
/// the delay (a macro, so the list of calls is the trait's and nothing else).
macro_rules! slowed_calls {
    ($( fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        #[async_trait]
        impl Store for Slowed {
            fn moderation(&self) -> &dyn super::moderation::ModerationStore {
                self.inner.moderation()
            }

            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    tokio::time::sleep(self.delay).await;
                    self.inner.$name($($arg),*).await
                }
            )*
        }
    };
}

slowed_calls! {
    fn ping(&self) -> StoreResult<()>;
    fn create_player(&self, player: &PlayerRecord) -> StoreResult<()>;
    fn restore_player(&self, player: &PlayerRecord) -> StoreResult<bool>;
    fn player_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<PlayerRecord>>;
    fn player(&self, id: &PlayerId) -> StoreResult<Option<PlayerRecord>>;
    fn rename_player(&self, id: &PlayerId, name: &str) -> StoreResult<()>;
    fn add_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()>;
    fn seen_device(&self, player_id: &PlayerId, device: &DeviceRecord) -> StoreResult<()>;
    fn devices(&self, player_id: &PlayerId) -> StoreResult<Vec<DeviceRecord>>;
    fn revoke_device(&self, player_id: &PlayerId, device_id: &str) -> StoreResult<bool>;
    fn create_link_code(&self, code: &str, player_id: &PlayerId, ttl_ms: u64) -> StoreResult<bool>;
    fn take_link_code(&self, code: &str) -> StoreResult<Option<PlayerId>>;
    fn claim_account(&self, account: &AccountRecord) -> StoreResult<bool>;
    fn account(&self, name_key: &str) -> StoreResult<Option<AccountRecord>>;
    fn set_password(&self, name_key: &str, password_hash: &str) -> StoreResult<()>;
    fn add_lesson_steps(&self, player_id: &PlayerId, kind: &str, steps: &[String]) -> StoreResult<()>;
    fn lesson_steps(&self, player_id: &PlayerId, kinds: &[&str]) -> StoreResult<LessonSteps>;
    fn save_room(&self, room: &RoomRecord) -> StoreResult<()>;
    fn claim_room(&self, room: &RoomRecord) -> StoreResult<bool>;
    fn room(&self, code: &RoomCode) -> StoreResult<Option<RoomRecord>>;
    fn save_arena(&self, id: &ArenaId, version: u64, open: bool, state: &Value) -> StoreResult<bool>;
    fn arena(&self, id: &ArenaId) -> StoreResult<Option<(u64, Value)>>;
    fn open_arenas(&self) -> StoreResult<Vec<ArenaId>>;
    fn create_game(&self, game: &GameRecord) -> StoreResult<()>;
    fn game(&self, id: &GameId) -> StoreResult<Option<GameRecord>>;
    fn append_action(&self, game_id: &GameId, action: &Arc<ActionRecord>) -> StoreResult<()>;
    fn actions(&self, game_id: &GameId) -> StoreResult<Vec<ActionRecord>>;
    fn all_unfinished_games(&self) -> StoreResult<Vec<GameId>>;
    fn waiting_rooms(&self) -> StoreResult<Vec<RoomRecord>>;
    fn finish_game(&self, game_id: &GameId, finished: FinishedGame) -> StoreResult<()>;
    fn finished_game(&self, game_id: &GameId) -> StoreResult<Option<FinishedGame>>;
    fn finished_games_of(
        &self,
        player_id: &PlayerId,
        before_ms: Option<u64>,
        limit: usize
    ) -> StoreResult<Vec<(GameId, u64)>>;
    fn unfinished_games(&self, player_id: &PlayerId) -> StoreResult<Vec<GameId>>;
    fn ratings(&self, player_id: &PlayerId) -> StoreResult<RatingsByKind>;
    fn save_ratings(&self, kind: &str, ratings: &[(String, Rating)]) -> StoreResult<()>;
    fn leaderboard(&self, kind: &str, limit: usize) -> StoreResult<Vec<(String, Rating)>>;
    fn request_analysis(&self, game_id: &GameId, player_id: &PlayerId) -> StoreResult<AnalysisRequested>;
    fn analysis(&self, game_id: &GameId) -> StoreResult<Option<AnalysisEntry>>;
    fn analysis_workers_seen(&self) -> StoreResult<u64>;
    fn take_analysis_job(&self, lease: &str, now_ms: u64, lease_ms: u64) -> StoreResult<Option<GameId>>;
    fn keep_analysis_leases(&self, leases: &[(GameId, String)], now_ms: u64, lease_ms: u64) -> StoreResult<()>;
    fn release_analysis_job(&self, game_id: &GameId, lease: &str) -> StoreResult<bool>;
    fn complete_analysis(&self, game_id: &GameId, lease: &str, result: &Value) -> StoreResult<bool>;
}
