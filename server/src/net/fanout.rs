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
//! Why the caller waits until every part is written (rayon's scope) rather than handing the
//! parts to tasks and going on: a watcher's frames must leave in the order the actor made
//! them, and the actor's next send to the same socket (the next diff, a snapshot, an answer)
//! may follow at once. Writing in place keeps the order without a queue per part; the
//! actor's thread is held for the broadcast's length either way.
//!
//! Why one helper per worker, each pinned to its own core when the node has exactly one core
//! per worker to itself (a `taskset`, a cpuset; the default on a machine of its own), and the
//! caller writing nothing: before, the caller wrote parts beside the helpers and nothing told
//! the kernel to keep them apart. A helper woken beside the busy caller stayed on the
//! caller's core, the two taking turns every 4 ms tick, while the other core ran something
//! else (`perf sched`, 2026-11-29: one broadcast in 10–20 to 10,000 spectators took 55–90 ms
//! on 2 cores instead of 30, the other core left to the load generator). Pinned, every core
//! takes parts whatever the scheduler's placement; the caller, asleep, leaves its core to
//! the helper pinned there. Where the node shares its cores (a CPU quota, more cores allowed
//! than workers) nothing is pinned, and the kernel places the helpers as it sees fit.
//!
//! Small crowds are written in place as before: waking another thread costs more than a
//! few hundred sends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use parking_lot::Mutex;

use crate::net::frame::Frame;
use crate::net::outbound::{ConnHandle, SendOutcome};

/// Watchers a part holds: about 1.5 ms of writes, far above the cost of waking a thread.
const PART: usize = 256;

/// Crowds up to this size are written by the caller alone.
pub const IN_PLACE: usize = 2 * PART;

/// The helper threads: one per worker of the runtime, none on a one-worker runtime. Made at
/// the first big broadcast.
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
            let cores = own_cores(workers);
            rayon::ThreadPoolBuilder::new()
                .num_threads(workers)
                .thread_name(|i| format!("stoa-fanout-{i}"))
                .start_handler(move |i| pin(cores.as_deref(), i))
                .build()
                .map_err(|e| tracing::warn!(error = %e, "fan-out threads not started"))
                .ok()
        })
        .as_ref()
}

/// The cores this process may run on, when they are exactly one per worker (the node has
/// them to itself); `None` otherwise, or when the kernel does not say.
fn own_cores(workers: usize) -> Option<Vec<usize>> {
    allowed_cores().filter(|cores| cores.len() == workers)
}

/// The cores the calling thread may run on.
fn allowed_cores() -> Option<Vec<usize>> {
    let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
    Some(
        (0..CpuSet::count())
            .filter(|&c| allowed.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// Pins helper `i` (the calling thread) to the `i`-th of `cores`, if any.
fn pin(cores: Option<&[usize]>, i: usize) {
    let Some(&core) = cores.and_then(|c| c.get(i)) else {
        return;
    };
    let mut only = CpuSet::new();
    // Pid 0: the calling thread.
    if let Err(e) = only
        .set(core)
        .and_then(|()| sched_setaffinity(Pid::from_raw(0), &only))
    {
        tracing::warn!(core, error = %e, "fan-out thread not pinned");
    }
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
    // Every helper takes the next part until none is left: a helper the scheduler holds
    // back leaves its share to the others.
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
    // The caller only waits (see the module's comment).
    pool.in_place_scope(|scope| {
        for _ in 0..pool.current_num_threads().min(parts) {
            scope.spawn(|_| work());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Helpers are pinned only when the process may run on exactly one core per worker.
    #[test]
    fn cores_are_the_process_own_only_when_one_per_worker() {
        let allowed = allowed_cores().expect("the kernel's affinity");
        assert!(!allowed.is_empty());
        assert_eq!(own_cores(allowed.len()), Some(allowed.clone()));
        assert_eq!(own_cores(allowed.len() + 1), None);
        if allowed.len() > 1 {
            assert_eq!(own_cores(allowed.len() - 1), None);
        }
    }

    /// A pinned helper runs on its core only (checked on a thread of its own).
    #[test]
    fn a_helper_is_pinned_to_its_core() {
        let cores = allowed_cores().expect("the kernel's affinity");
        let last = cores.len() - 1;
        let want = cores[last];
        let got = std::thread::spawn(move || {
            pin(Some(&cores), last);
            allowed_cores()
        })
        .join()
        .unwrap();
        assert_eq!(got, Some(vec![want]));
        // Pinning a helper leaves the other threads as they were.
        assert!(allowed_cores().is_some_and(|c| c.contains(&want)));
    }
}
