//! One frame written to a crowd's sockets by every core of the node, not by the one thread
//! that runs the publishing actor.
//!
//! Why: a broadcast is one non-blocking `write` per watcher, and the kernel's TCP send is
//! nearly all of its cost (5.9 µs per spectator against 5.3 µs for a bare send,
//! docs/performance.md); 10,000 spectators of one game took 96 ms on the actor's one thread
//! however many cores the node had. Split over the runtime's workers, the same writes can
//! take that time divided by the cores, when the cores are free for it (docs/performance.md,
//! "Fan-out over the node's workers": on 2 cores shared with the load generator, 10,000
//! spectators' p99 went from 97–99 to 67–83 ms, and a broadcast gets longer when other
//! work preempts the parts' threads).
//!
//! Why the caller waits until every part is written (rayon's scope, the caller writing one
//! part itself) rather than handing the parts to tasks and going on: a watcher's frames
//! must leave in the order the actor made them, and the actor's next send to the same
//! socket (the next diff, a snapshot, an answer) may follow at once. Writing in place keeps
//! the order without a queue per part; the actor's thread is busy for the broadcast's
//! length either way, only now the other cores share it.
//!
//! Small crowds are written in place as before: waking another thread costs more than a
//! few hundred sends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::net::frame::Frame;
use crate::net::outbound::{ConnHandle, SendOutcome};

/// Watchers a part holds: about 1.5 ms of writes, far above the cost of waking a thread.
const PART: usize = 256;

/// Crowds up to this size are written by the caller alone.
pub const IN_PLACE: usize = 2 * PART;

/// The helper threads: one fewer than the runtime's workers (the caller writes a part
/// itself), none on a one-worker runtime. Made at the first big broadcast.
static HELPERS: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();

fn helpers() -> Option<&'static rayon::ThreadPool> {
    HELPERS
        .get_or_init(|| {
            let workers = tokio::runtime::Handle::try_current()
                .map(|h| h.metrics().num_workers())
                .unwrap_or(1);
            if workers < 2 {
                return None;
            }
            rayon::ThreadPoolBuilder::new()
                .num_threads(workers - 1)
                .thread_name(|i| format!("stoa-fanout-{i}"))
                .build()
                .map_err(|e| tracing::warn!(error = %e, "fan-out threads not started"))
                .ok()
        })
        .as_ref()
}

/// Writes `frame` to every connection of `conns` (spread over the node's cores when they
/// are many) and returns the ids of those that did not take it (kicked or gone), in no
/// particular order. Returns once every write is done.
pub fn send_all(conns: &[&Arc<ConnHandle>], frame: &Frame) -> Vec<u64> {
    let pool = match conns.len() > IN_PLACE {
        true => helpers(),
        false => None,
    };
    let Some(pool) = pool else {
        return send_part(conns, frame);
    };
    // Every thread, the caller included, takes the next part until none is left: a thread
    // the scheduler holds back leaves its share to the others.
    let gone = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let parts = conns.len().div_ceil(PART);
    let work = || {
        let mut lost = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= parts {
                break;
            }
            let part = &conns[i * PART..((i + 1) * PART).min(conns.len())];
            lost.extend(send_part(part, frame));
        }
        if !lost.is_empty() {
            gone.lock().extend(lost);
        }
    };
    pool.in_place_scope(|scope| {
        for _ in 0..pool.current_num_threads().min(parts - 1) {
            scope.spawn(|_| work());
        }
        work();
    });
    gone.into_inner()
}

/// One thread's share: each connection in turn.
fn send_part(conns: &[&Arc<ConnHandle>], frame: &Frame) -> Vec<u64> {
    conns
        .iter()
        .filter(|conn| conn.send(frame.clone()) != SendOutcome::Sent)
        .map(|conn| conn.id)
        .collect()
}
