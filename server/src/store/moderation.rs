//! Where moderation's records live: reports, sanctions and the audit log, and a counter
//! that moves on every change of the sanctions so each node knows to reload them.
//!
//! Why in the store, beside the games: a report must outlive the game and chat it points
//! at, a sanction must hold on every node and after a restart, and the audit log must say
//! who did what whichever node the operator used. The in-memory form below is the
//! reference for the Redis one (`redis/moderation.rs`).
//!
//! Why a trait of its own, reached through [`super::Store::moderation`]: moderation is a
//! separate concern with its own records; the game store's trait stays about games.

use async_trait::async_trait;
use hashbrown::HashMap;
use parking_lot::Mutex;

use super::StoreResult;
use crate::domain::moderation::{AuditEntry, ReportClosed, ReportRecord, SanctionRecord};
use crate::ids::PlayerId;

/// How many audit entries are kept (the oldest go first).
pub const AUDIT_KEEP: usize = 10_000;

/// How many reports are kept, open or closed (the oldest closed ones go first).
pub const REPORTS_KEEP: usize = 10_000;

/// Moderation's persistence.
#[async_trait]
pub trait ModerationStore: Send + Sync {
    /// Stores a new report, unless its reporter has an open report about the same player:
    /// `false` then, and nothing is written.
    async fn open_report(&self, report: &ReportRecord) -> StoreResult<bool>;
    /// A report by id.
    async fn report(&self, id: &str) -> StoreResult<Option<ReportRecord>>;
    /// Reports newest first: only the open ones, or all; at most `limit`.
    async fn reports(&self, open_only: bool, limit: usize) -> StoreResult<Vec<ReportRecord>>;
    /// The reports about `player`, newest first, at most `limit`.
    async fn reports_about(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> StoreResult<Vec<ReportRecord>>;
    /// How many reports `reporter` made since `since_ms` (the reporters' budget).
    async fn reports_by_since(&self, reporter: &PlayerId, since_ms: u64) -> StoreResult<usize>;
    /// Closes an open report; `None` when there is no such report, `Some(false)` when it
    /// was closed already (nothing changed).
    async fn close_report(&self, id: &str, closed: &ReportClosed) -> StoreResult<Option<bool>>;
    /// Stores a sanction (new, or changed: delivered, undone) and moves the sanctions'
    /// version on.
    async fn save_sanction(&self, sanction: &SanctionRecord) -> StoreResult<()>;
    /// A sanction by id.
    async fn sanction(&self, id: &str) -> StoreResult<Option<SanctionRecord>>;
    /// A player's sanctions, newest first.
    async fn sanctions_of(&self, player: &PlayerId) -> StoreResult<Vec<SanctionRecord>>;
    /// The standing sanctions ([`SanctionRecord::standing`]): mutes, bans and address bans
    /// not undone (the caller checks their time with [`SanctionRecord::in_force`]), and
    /// notices not yet shown.
    async fn standing_sanctions(&self) -> StoreResult<Vec<SanctionRecord>>;
    /// A number that changes whenever a sanction is saved (or [`ModerationStore::bump`]
    /// is called): a node polls it and reloads [`ModerationStore::standing_sanctions`] when
    /// it moved.
    async fn sanctions_version(&self) -> StoreResult<u64>;
    /// Moves the version on without a sanction (an operator closed a room: every node
    /// looks at its rooms again).
    async fn bump(&self) -> StoreResult<()>;
    /// Appends to the audit log.
    async fn audit(&self, entry: &AuditEntry) -> StoreResult<()>;
    /// The audit log, newest first, at most `limit`.
    async fn audit_log(&self, limit: usize) -> StoreResult<Vec<AuditEntry>>;
}

/// Moderation's records in process memory (the embedded default; lost on restart).
#[derive(Default)]
pub struct MemoryModeration {
    inner: Mutex<Records>,
}

#[derive(Default)]
struct Records {
    /// Reports in the order they were made.
    reports: Vec<ReportRecord>,
    /// Sanctions by id, and their order.
    sanctions: HashMap<String, SanctionRecord>,
    order: Vec<String>,
    version: u64,
    /// The audit log, oldest first.
    audit: std::collections::VecDeque<AuditEntry>,
}

/// The newest `limit` of `items` that pass `keep`, newest first.
fn newest<T: Clone>(items: &[T], limit: usize, keep: impl Fn(&T) -> bool) -> Vec<T> {
    items
        .iter()
        .rev()
        .filter(|r| keep(r))
        .take(limit)
        .cloned()
        .collect()
}

#[async_trait]
impl ModerationStore for MemoryModeration {
    async fn open_report(&self, report: &ReportRecord) -> StoreResult<bool> {
        let mut r = self.inner.lock();
        let open_already = r.reports.iter().any(|o| {
            o.closed.is_none() && o.reporter == report.reporter && o.target == report.target
        });
        if open_already {
            return Ok(false);
        }
        if r.reports.len() >= REPORTS_KEEP {
            let at = r
                .reports
                .iter()
                .position(|o| o.closed.is_some())
                .unwrap_or(0);
            r.reports.remove(at);
        }
        r.reports.push(report.clone());
        Ok(true)
    }

    async fn report(&self, id: &str) -> StoreResult<Option<ReportRecord>> {
        Ok(self
            .inner
            .lock()
            .reports
            .iter()
            .find(|r| r.id == id)
            .cloned())
    }

    async fn reports(&self, open_only: bool, limit: usize) -> StoreResult<Vec<ReportRecord>> {
        let r = self.inner.lock();
        Ok(newest(&r.reports, limit, |o| {
            !open_only || o.closed.is_none()
        }))
    }

    async fn reports_about(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> StoreResult<Vec<ReportRecord>> {
        let r = self.inner.lock();
        Ok(newest(&r.reports, limit, |o| o.target == *player))
    }

    async fn reports_by_since(&self, reporter: &PlayerId, since_ms: u64) -> StoreResult<usize> {
        let r = self.inner.lock();
        Ok(r.reports
            .iter()
            .filter(|o| o.reporter == *reporter && o.created_ms >= since_ms)
            .count())
    }

    async fn close_report(&self, id: &str, closed: &ReportClosed) -> StoreResult<Option<bool>> {
        let mut r = self.inner.lock();
        let Some(report) = r.reports.iter_mut().find(|o| o.id == id) else {
            return Ok(None);
        };
        if report.closed.is_some() {
            return Ok(Some(false));
        }
        report.closed = Some(closed.clone());
        Ok(Some(true))
    }

    async fn save_sanction(&self, sanction: &SanctionRecord) -> StoreResult<()> {
        let mut r = self.inner.lock();
        if r.sanctions
            .insert(sanction.id.clone(), sanction.clone())
            .is_none()
        {
            r.order.push(sanction.id.clone());
        }
        r.version += 1;
        Ok(())
    }

    async fn sanction(&self, id: &str) -> StoreResult<Option<SanctionRecord>> {
        Ok(self.inner.lock().sanctions.get(id).cloned())
    }

    async fn sanctions_of(&self, player: &PlayerId) -> StoreResult<Vec<SanctionRecord>> {
        let r = self.inner.lock();
        Ok(r.order
            .iter()
            .rev()
            .filter_map(|id| r.sanctions.get(id))
            .filter(|s| s.player.as_ref() == Some(player))
            .cloned()
            .collect())
    }

    async fn standing_sanctions(&self) -> StoreResult<Vec<SanctionRecord>> {
        let r = self.inner.lock();
        Ok(r.order
            .iter()
            .filter_map(|id| r.sanctions.get(id))
            .filter(|s| s.standing())
            .cloned()
            .collect())
    }

    async fn sanctions_version(&self) -> StoreResult<u64> {
        Ok(self.inner.lock().version)
    }

    async fn bump(&self) -> StoreResult<()> {
        self.inner.lock().version += 1;
        Ok(())
    }

    async fn audit(&self, entry: &AuditEntry) -> StoreResult<()> {
        let mut r = self.inner.lock();
        if r.audit.len() >= AUDIT_KEEP {
            r.audit.pop_front();
        }
        r.audit.push_back(entry.clone());
        Ok(())
    }

    async fn audit_log(&self, limit: usize) -> StoreResult<Vec<AuditEntry>> {
        let r = self.inner.lock();
        Ok(r.audit.iter().rev().take(limit).cloned().collect())
    }
}
