//! The lessons' progress: which steps of each kind's lesson (`protocol/lessons/<kind>.json`)
//! a player has done, kept in the store by player id so that it follows the player, and the
//! account the player is, to every device.
//!
//! Why the server checks step ids against the lesson files: the store keeps only steps that
//! exist, so the progress a client reads back is always steps of the lessons it shows.
//! Why the answer is in lesson order and drops ids the file no longer has: a step renamed
//! or removed in a later version of a lesson stops counting, without rewriting the store.
//!
//! Why linking merges: a device that becomes another player (`link.redeem`,
//! `account.login`) leaves its guest behind, and what was learnt as that guest would be lost
//! with it; the steps are added to the player the device becomes (a union: nothing is ever
//! taken away).

use std::sync::OnceLock;

use stoa_protocol::wire::{ErrorCode, LessonsDone};

use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::ids::PlayerId;
use crate::metrics::Metrics;
use crate::store::Store;

/// Every kind's step ids, in lesson order, read once from the embedded lesson files.
fn steps() -> &'static [(&'static str, Vec<String>)] {
    static STEPS: OnceLock<Vec<(&'static str, Vec<String>)>> = OnceLock::new();
    STEPS.get_or_init(|| {
        stoa_protocol::lessons::kinds()
            .filter_map(|kind| {
                let lesson = stoa_protocol::lessons::lesson(kind)?;
                Some((kind, lesson.steps.into_iter().map(|s| s.id).collect()))
            })
            .collect()
    })
}

/// The kinds with a lesson, in order.
fn kinds() -> Vec<&'static str> {
    steps().iter().map(|(k, _)| *k).collect()
}

/// Marks `step` of `kind`'s lesson done for `player` (again: no change). An unknown kind,
/// or a step that is not in the kind's lesson, is `not_found` and nothing is stored.
pub async fn mark_done(
    store: &dyn Store,
    metrics: &Metrics,
    player: &PlayerId,
    kind: &str,
    step: &str,
) -> Result<(), ApiError> {
    let Some((_, ids)) = steps().iter().find(|(k, _)| *k == kind) else {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no lesson for '{kind}'"),
        ));
    };
    if !ids.iter().any(|id| id == step) {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no step '{step}' in the lesson of {kind}"),
        ));
    }
    let step = [step.to_string()];
    timed_store_call(metrics, store.add_lesson_steps(player, kind, &step)).await
}

/// The steps `player` has done: every kind with a lesson, each with its steps done in the
/// lesson's order (ids the lesson no longer has are left out).
pub async fn progress(
    store: &dyn Store,
    metrics: &Metrics,
    player: &PlayerId,
) -> Result<LessonsDone, ApiError> {
    let stored = timed_store_call(metrics, store.lesson_steps(player, &kinds())).await?;
    Ok(steps()
        .iter()
        .map(|(kind, ids)| {
            let done = stored.get(*kind);
            let in_order = ids
                .iter()
                .filter(|id| done.is_some_and(|d| d.contains(id)))
                .cloned()
                .collect();
            (kind.to_string(), in_order)
        })
        .collect())
}

/// Adds the steps `from` has done to those of `into` (a device of `from` becomes `into`).
pub async fn merge(
    store: &dyn Store,
    metrics: &Metrics,
    from: &PlayerId,
    into: &PlayerId,
) -> Result<(), ApiError> {
    if from == into {
        return Ok(());
    }
    let done = timed_store_call(metrics, store.lesson_steps(from, &kinds())).await?;
    for (kind, ids) in done {
        timed_store_call(metrics, store.add_lesson_steps(into, &kind, &ids)).await?;
    }
    Ok(())
}
