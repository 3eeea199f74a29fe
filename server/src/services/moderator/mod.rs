//! Moderation as it acts: the loop that keeps a node's sanctions in step with the store
//! (see [`crate::services::moderation`] for why a poll), what a node does when they change,
//! the operators' actions and the players' reports.
//!
//! Why apart from `moderation`: these reach the hub (games, rooms, connections, the
//! store), and the hub holds `moderation`'s state; one module each way keeps the graph
//! one-way.

pub mod actions;
pub mod enforce;
pub mod reports;

use std::sync::Arc;

use crate::services::hub::Hub;
use crate::services::moderation::standing::{Changes, Standing};
use crate::services::moderation::POLL;

/// Keeps this node's sanctions in step with the store until the server shuts down: every
/// [`POLL`], reload when the version moved, and act on what changed.
pub fn watch(hub: Arc<Hub>) {
    tokio::spawn(async move {
        let mut shutdown = hub.shutdown.clone();
        loop {
            if let Err(e) = reload(&hub).await {
                tracing::debug!(error = %e, "moderation reload failed; trying again");
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = shutdown.changed() => return,
            }
        }
    });
}

/// Reloads the standing sanctions if the store's version moved since the last load, and
/// acts here on what changed (see [`standing::Changes`]).
pub async fn reload(hub: &Hub) -> Result<(), crate::store::StoreError> {
    let _one_at_a_time = hub.moderation.reloading.lock().await;
    let store = hub.store.moderation();
    let version = store.sanctions_version().await?;
    if *hub.moderation.loaded.lock() == Some(version) {
        return Ok(());
    }
    let records = store.standing_sanctions().await?;
    let now = hub.time.now_ms();
    let next = Arc::new(Standing::new(records, now));
    let before = std::mem::replace(&mut *hub.moderation.standing.write(), next.clone());
    *hub.moderation.loaded.lock() = Some(version);
    let changes = Changes::between(&before, &next, now);
    enforce::enforce(changes, hub).await;
    actions::sync_rooms_here(hub).await;
    Ok(())
}
