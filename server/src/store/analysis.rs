//! The analysis queue's records (engine reviews of finished games, see
//! `crate::services::analysis`) and its in-memory form, the reference for the Redis one
//! (`redis/analysis.rs`, the same steps as Lua scripts).
//!
//! Why the queue lives in the store: a worker may be connected to any node of a cluster, and
//! a job must be handed out once and stored once whichever node hands it out or hears its
//! result. Every step is one atomic check-and-write: a request queues a game only if it was
//! never queued (and its player has no other pending request); a job is leased to one
//! worker's lease id; a result is stored only under the lease that is still current, so a
//! job given back (its worker gone, or its lease run out) and handed to another worker can
//! never be stored twice.

use std::collections::VecDeque;

use hashbrown::HashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{GameId, PlayerId};

/// Where a game's review stands in the store.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisStatus {
    /// Waiting in the queue.
    Queued,
    /// Leased to a worker.
    Running,
    /// Done; the result is stored.
    Done,
}

impl AnalysisStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            AnalysisStatus::Queued => "queued",
            AnalysisStatus::Running => "running",
            AnalysisStatus::Done => "done",
        }
    }

    /// The status a stored name names.
    pub fn parse(s: &str) -> Option<AnalysisStatus> {
        match s {
            "queued" => Some(AnalysisStatus::Queued),
            "running" => Some(AnalysisStatus::Running),
            "done" => Some(AnalysisStatus::Done),
            _ => None,
        }
    }
}

/// A game's review as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisEntry {
    /// Where it stands.
    pub status: AnalysisStatus,
    /// Who asked for it.
    pub requested_by: PlayerId,
    /// The result (the worker's JSON), once done.
    pub result: Option<Value>,
}

/// What [`crate::store::Store::request_analysis`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum AnalysisRequested {
    /// The game was queued now.
    Queued,
    /// The game was queued (or done) before: nothing changed.
    Exists(AnalysisStatus),
    /// The player has another request pending (that game): nothing changed.
    Busy(GameId),
}

/// The queue in memory: the in-memory store's, and what the Redis scripts mirror.
#[derive(Debug, Default)]
pub struct MemoryQueue {
    entries: HashMap<String, AnalysisEntry>,
    /// Queued games, first out first.
    queue: VecDeque<String>,
    /// Leased games: the lease id and until when (ms).
    leases: HashMap<String, (String, u64)>,
    /// Each player's pending request.
    pending: HashMap<String, String>,
    /// When a worker last said it was there (ms).
    workers_seen: u64,
}

impl MemoryQueue {
    /// See [`crate::store::Store::request_analysis`].
    pub fn request(&mut self, game: &GameId, player: &PlayerId) -> AnalysisRequested {
        if let Some(e) = self.entries.get(game.as_str()) {
            return AnalysisRequested::Exists(e.status);
        }
        if let Some(other) = self.pending.get(player.as_str()) {
            return AnalysisRequested::Busy(GameId::from(other.clone()));
        }
        self.entries.insert(
            game.to_string(),
            AnalysisEntry {
                status: AnalysisStatus::Queued,
                requested_by: player.clone(),
                result: None,
            },
        );
        self.pending.insert(player.to_string(), game.to_string());
        self.queue.push_back(game.to_string());
        AnalysisRequested::Queued
    }

    /// See [`crate::store::Store::analysis`].
    pub fn entry(&self, game: &GameId) -> Option<AnalysisEntry> {
        self.entries.get(game.as_str()).cloned()
    }

    /// See [`crate::store::Store::analysis_workers_seen`].
    pub fn workers_seen(&self) -> u64 {
        self.workers_seen
    }

    /// See [`crate::store::Store::take_analysis_job`].
    pub fn take(&mut self, lease: &str, now_ms: u64, lease_ms: u64) -> Option<GameId> {
        self.requeue_expired(now_ms);
        self.workers_seen = self.workers_seen.max(now_ms);
        let game = self.queue.pop_front()?;
        if let Some(e) = self.entries.get_mut(&game) {
            e.status = AnalysisStatus::Running;
        }
        self.leases
            .insert(game.clone(), (lease.to_string(), now_ms + lease_ms));
        Some(GameId::from(game))
    }

    /// Leases that ran out go back to the front of the queue.
    fn requeue_expired(&mut self, now_ms: u64) {
        // Soonest run out first in the queue (as Redis's sorted set gives them).
        let mut expired: Vec<(u64, String)> = self
            .leases
            .iter()
            .filter(|(_, (_, until))| *until <= now_ms)
            .map(|(g, (_, until))| (*until, g.clone()))
            .collect();
        expired.sort();
        for (_, g) in expired.into_iter().rev() {
            self.leases.remove(&g);
            if let Some(e) = self.entries.get_mut(&g) {
                e.status = AnalysisStatus::Queued;
            }
            self.queue.push_front(g);
        }
    }

    /// See [`crate::store::Store::keep_analysis_leases`].
    pub fn keep(&mut self, leases: &[(GameId, String)], now_ms: u64, lease_ms: u64) {
        self.workers_seen = self.workers_seen.max(now_ms);
        for (game, lease) in leases {
            if let Some((held, until)) = self.leases.get_mut(game.as_str()) {
                if held == lease {
                    *until = now_ms + lease_ms;
                }
            }
        }
    }

    /// See [`crate::store::Store::release_analysis_job`].
    pub fn release(&mut self, game: &GameId, lease: &str) -> bool {
        if self.leases.get(game.as_str()).map(|(l, _)| l.as_str()) != Some(lease) {
            return false;
        }
        self.leases.remove(game.as_str());
        if let Some(e) = self.entries.get_mut(game.as_str()) {
            e.status = AnalysisStatus::Queued;
        }
        self.queue.push_front(game.to_string());
        true
    }

    /// See [`crate::store::Store::complete_analysis`].
    pub fn complete(&mut self, game: &GameId, lease: &str, result: &Value) -> bool {
        if self.leases.get(game.as_str()).map(|(l, _)| l.as_str()) != Some(lease) {
            return false;
        }
        self.leases.remove(game.as_str());
        let Some(e) = self.entries.get_mut(game.as_str()) else {
            return false;
        };
        e.status = AnalysisStatus::Done;
        e.result = Some(result.clone());
        let player = e.requested_by.to_string();
        if self.pending.get(&player).map(String::as_str) == Some(game.as_str()) {
            self.pending.remove(&player);
        }
        true
    }

    /// Forgets a game's review (the in-memory store drops a finished game it no longer
    /// keeps).
    pub fn forget(&mut self, game: &str) {
        if let Some(e) = self.entries.remove(game) {
            if self
                .pending
                .get(e.requested_by.as_str())
                .map(String::as_str)
                == Some(game)
            {
                self.pending.remove(e.requested_by.as_str());
            }
        }
        self.leases.remove(game);
        self.queue.retain(|g| g != game);
    }
}
