//! How an actor comes to run: a new game's, a game rebuilt from its log (after a restart,
//! or taken over from a dead node), or a follower of a game another node owns; each on its
//! own task, supervised so a panicking actor unregisters its game.

use super::*;

/// How a new game's record was stored.
#[derive(Debug)]
pub struct Created {
    /// The record. Its creation time starts the clock (a rebuild from the log, on a
    /// follower or a new owner, starts from the same instant, so every node holds the same
    /// document at seq 0), and the actor keeps it to store it again if a Redis failover
    /// loses it.
    pub record: Arc<GameRecord>,
    /// The store's answer was lost: the record may be missing, and the actor checks at
    /// once (storing it again if so).
    pub in_doubt: bool,
}

/// What a game rebuilt from the store was rebuilt from, for its actor to keep.
#[derive(Debug)]
pub struct Stored {
    /// The game's record (stored again if a Redis failover loses it).
    pub record: Arc<GameRecord>,
    /// The log's last events (at most [`super::repair::RECENT`]): the actor holds them as
    /// if it had applied them, so that a log a failover shortened below them is still
    /// known to be a prefix of what it applied (and the rest logged again).
    pub tail: Vec<ActionRecord>,
}

impl Actor {
    /// Keeps what a rebuilt game came from.
    fn keep(&mut self, stored: Stored) {
        self.record = Some(stored.record);
        for event in stored.tail {
            self.remember(&Arc::new(event));
        }
    }
}

/// Starts the actor of a new game on its own task.
pub fn spawn(
    caps: Capabilities,
    new: NewGame,
    game: Box<dyn AnyGame>,
    created: Created,
    online: [bool; 2],
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let core = new_core(&caps, new, game, created.record.created_ms);
    let mut actor = Actor::new(caps, core, online, summary, now);
    actor.record = Some(created.record);
    if created.in_doubt {
        // Not the store's generation: the first upkeep checks the log and the record.
        actor.log_checked = actor.caps.store.generation().wrapping_add(1);
    }
    actor.update_summary();
    actor.start(rx);
}

/// Starts the actor of a game rebuilt from its log (see [`crate::services::recovery`]). Nobody is
/// connected after a restart: both players count as offline from now. The clock stood
/// still since the last logged event; the actor logs that as a `resume` event as soon as
/// it runs. A game the log ended has its final document stored.
pub fn spawn_recovered(
    caps: Capabilities,
    mut core: Core,
    stored: Stored,
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
    takeover: bool,
) {
    let now = caps.time.now_ms();
    if !takeover {
        // After a restart the clock stood still; a node taking over a dead node's game in
        // a running cluster lets it run on (the deadline may even have passed: it flags at
        // once).
        core.pause(core.last_ms());
    }
    caps.peers.set_owned(core.id(), true);
    let mut actor = Actor::new(caps, core, [false, false], summary, now);
    actor.keep(stored);
    if actor.core.result().is_some() {
        actor.mark_ended();
        if let Role::Owner(o) = &mut actor.role {
            o.finish_unsaved = true;
        }
    }
    actor.update_summary();
    actor.start(rx);
}

/// Starts a follower of a game another node owns (cluster mode), from its log: it serves
/// this node's subscribers and forwards their commands. `online`: the seated players
/// connected to this node.
pub fn spawn_follower(
    caps: Capabilities,
    core: Core,
    stored: Stored,
    online: [bool; 2],
    rx: mpsc::Receiver<Command>,
    summary: Arc<parking_lot::Mutex<Option<Value>>>,
) {
    let now = caps.time.now_ms();
    let mut actor = Actor::new(caps, core, online, summary, now);
    actor.keep(stored);
    actor.role = Role::Follower(Follower::new(None, true));
    if actor.core.result().is_some() {
        actor.ended_at = Some(Instant::now());
    }
    actor.start(rx);
}

impl Actor {
    pub(super) fn new(
        caps: Capabilities,
        core: Core,
        online: [bool; 2],
        summary: Arc<parking_lot::Mutex<Option<Value>>>,
        now: u64,
    ) -> Actor {
        let mut online_map = HashMap::new();
        let mut offline_since = HashMap::new();
        for (i, p) in core.player_ids().iter().enumerate() {
            online_map.insert(PlayerId::from(*p), online[i]);
            if !online[i] {
                offline_since.insert(PlayerId::from(*p), now);
            }
        }
        let log_checked = caps.store.generation();
        Actor {
            role: Role::Owner(Owner::default()),
            played: std::collections::VecDeque::new(),
            published: subscribers::published(&core, caps.settings.replay_buffer),
            caps,
            core,
            code_viewers: HashSet::new(),
            pinged_at: [None; 2],
            spectators: 0,
            online: online_map,
            offline_since,
            ended_at: None,
            ended_ms: None,
            ratings_after: None,
            in_doubt: None,
            shutting_down: false,
            summary,
            chat: chat::Chat::default(),
            recent: std::collections::VecDeque::new(),
            log_checked,
            record: None,
        }
    }

    fn start(self, rx: mpsc::Receiver<Command>) {
        let span = tracing::info_span!(parent: None, "game", id = %self.core.id(), kind = %self.core.kind());
        let directory = self.caps.directory.clone();
        let id = self.core.id().clone();
        let summary = self.summary.clone();
        // Boxed: an `async fn` taking the actor by value keeps it twice in its state (the
        // argument and the local it moves into), several KiB per idle game.
        let task = tokio::spawn(Box::new(self).run(rx).instrument(span));
        // Supervision: an actor that panics (a rules-engine bug) must not leave a dead handle
        // behind; its game is unregistered and requests get `not_found` instead of hanging.
        tokio::spawn(async move {
            if let Err(e) = task.await {
                if e.is_panic() {
                    tracing::error!(game = %id, "game actor panicked; game unregistered");
                    directory.remove_actor(&id, &summary);
                }
            }
        });
    }
}
