//! Calls to Redis while it may be down: each with a timeout, an outage told apart from a
//! bad request, and a health flag so calls fail at once while Redis is known to be down.
//!
//! Why a connection manager plus a health flag: the manager
//! reconnects with exponential backoff on its own; the flag (kept by a 250 ms ping task)
//! lets calls fail at once with `unavailable` while Redis is known to be down, instead of
//! each waiting out a timeout.

use std::sync::Weak;
use std::time::Duration;

use redis::{ErrorKind, RedisError};

use super::{Inner, RedisStore};
use crate::store::{StoreError, StoreResult};

/// How often the health task pings Redis.
const PING_PERIOD: Duration = Duration::from_millis(250);

impl RedisStore {
    /// Whether Redis answered the last call or ping.
    pub fn is_up(&self) -> bool {
        *self.inner.up.borrow()
    }

    /// Runs a command with this store's timeout and outage bookkeeping.
    pub async fn call<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: std::future::Future<Output = Result<T, RedisError>>,
    {
        self.run(op).await
    }

    /// Runs one Redis operation with the timeout, failing at once while Redis is known to
    /// be down (the health task notices when it is back).
    pub(super) async fn run<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: std::future::Future<Output = Result<T, RedisError>>,
    {
        self.run_within(op, self.inner.timeout).await
    }

    /// [`RedisStore::run`] with another timeout (a call that includes a `WAIT`).
    pub(super) async fn run_within<T, F>(&self, op: F, within: Duration) -> StoreResult<T>
    where
        F: std::future::Future<Output = Result<T, RedisError>>,
    {
        if !self.is_up() {
            return Err(StoreError::Unavailable("redis is unreachable".into()));
        }
        match tokio::time::timeout(within, op).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if e.kind() == ErrorKind::ReadOnly && self.inner.conn.follows_sentinel() {
                    // A demoted primary refused the write: it did not happen, and the
                    // connection is already looking for the new primary.
                    Err(StoreError::Unavailable(format!(
                        "redis answered as a replica (the primary moved): {e}"
                    )))
                } else if is_outage(&e) {
                    self.mark_down(&e.to_string());
                    // Sent (or maybe sent) before the connection failed: it may have run.
                    Err(StoreError::InDoubt(e.to_string()))
                } else {
                    Err(StoreError::Unavailable(e.to_string()))
                }
            }
            Err(_) => {
                self.mark_down("timeout");
                // The command may still run: Redis executes it when it can.
                Err(StoreError::InDoubt("redis timed out".into()))
            }
        }
    }

    /// Runs a pipeline of writes: as one transaction on a single server; on a Redis Cluster,
    /// whose transactions cannot span hash slots, command by command (each is idempotent, and
    /// the caller retries the whole on failure).
    pub(super) async fn run_writes(&self, pipe: redis::Pipeline) -> StoreResult<()> {
        let mut conn = self.conn();
        if !conn.is_cluster() {
            let mut pipe = pipe;
            pipe.atomic();
            return self.run(pipe.query_async::<()>(&mut conn)).await;
        }
        for cmd in pipe.cmd_iter() {
            self.run(cmd.query_async::<()>(&mut conn)).await?;
        }
        Ok(())
    }

    /// Notes that Redis stopped answering (logged once per outage).
    pub(super) fn mark_down(&self, why: &str) {
        if set_up(&self.inner.up, false) {
            tracing::warn!(
                reason = why,
                "redis unreachable: refusing writes until it answers"
            );
        }
    }
}

/// Sets the health flag; `true` when that changed it (watchers are woken only then).
fn set_up(up: &tokio::sync::watch::Sender<bool>, now: bool) -> bool {
    up.send_if_modified(|v| std::mem::replace(v, now) != now)
}

impl Inner {
    /// Redis may have lost acknowledged writes (it came back from an outage, possibly
    /// restarted; another primary took over): the store's generation moves on and every
    /// watcher of its availability is woken, to check what it wrote.
    pub(super) fn new_generation(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.up.send_modify(|_| {});
    }
}

/// Errors that mean Redis cannot serve now (rather than a bad request or bad data).
fn is_outage(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::BusyLoadingError
                | ErrorKind::TryAgain
                | ErrorKind::MasterDown
                | ErrorKind::ReadOnly
                | ErrorKind::ClusterDown
        )
}

/// Pings Redis every [`PING_PERIOD`] and keeps the `up` flag; stops with the store.
pub(super) async fn health_task(inner: Weak<Inner>) {
    loop {
        tokio::time::sleep(PING_PERIOD).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let mut conn = inner.conn.clone();
        let ping = tokio::time::timeout(
            inner.timeout,
            redis::cmd("PING").query_async::<String>(&mut conn),
        )
        .await;
        let ok = matches!(ping, Ok(Ok(_)));
        if ok && !*inner.up.borrow() {
            // Back after an outage, maybe restarted with less than it had acknowledged:
            // games check their logs (the flag's change below wakes them).
            inner
                .generation
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        if set_up(&inner.up, ok) {
            if ok {
                tracing::info!("redis is reachable again");
            } else {
                tracing::warn!("redis unreachable: refusing writes until it answers");
            }
        }
    }
}
