//! Matchmaking in the running server: `queue.join` / `queue.leave`, the pairing task, and
//! starting the games it makes.
//!
//! The queue model itself is pure and lives in [`crate::pairing`]; this module owns one
//! [`Pairing`] behind a mutex, feeds it the time, and turns each [`crate::pairing::Match`]
//! into a game through the same path rooms and rematches use ([`Hub::start_game`]:
//! [`Hub::create_game`] then [`Hub::announce`]), so a paired player gets `game.started` and a snapshot exactly as a
//! room player does.
//!
//! Why a task with waves: pairing everyone at once per wave (every `--queue-wave-ms`, and
//! at once when a join makes a pair possible) lets rated queues choose the closest pairs
//! among all waiting players instead of first-come pairs, while nobody waits more than one
//! wave once a partner is acceptable. The widening schedule of the accepted rating gap is
//! configurable (`--queue-gap-*` flags) so operators can tune it and tests can speed it up.
//!
//! Decisions (documented in the README):
//! - A queue is (kind, options with defaults filled in, clock, rated); equal settings
//!   written differently (key order, omitted defaults, `9.0` for `9`) share a queue.
//! - Games made by matchmaking are public (they appear in the lobby and anyone may watch).
//! - A player is in at most one queue; joining another moves them; joining the same queue
//!   again (say from a second device) keeps their place. All of a player's connections share
//!   the entry, so a player is never paired with themself; the queue entry is dropped when
//!   the player's last connection closes.
//! - `queue.leave` answers `ok` even when the player was not queued (leaving is idempotent).
//! - While queued, the player's connections get `queue.status` (an addition) whenever their
//!   position or the number of others waiting changes, at most once per wave.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use stoa_protocol::wire::{Rid, SeatPlayer, ServerMessage, Visibility};
use tokio::sync::Notify;
use tracing::Instrument;

use crate::config::Config;
use crate::error::ApiError;
use crate::game::NewGame;
use crate::hub::Hub;
use crate::ids;
use crate::outbound::ConnHandle;
use crate::pairing::{Joined, Pairing, PairingConfig, QueueKey, Widening};
use crate::ratings;
use crate::store::PlayerRecord;

/// A pairing made by a wave, with what is needed to start its game.
#[derive(Clone, Debug, PartialEq)]
pub struct Made {
    /// The queue (and so the game settings).
    pub key: QueueKey,
    /// The players by side index (the first-acting side first).
    pub players: [SeatPlayer; 2],
    /// Their ratings in the queue's kind when paired, by side index.
    pub ratings: [f64; 2],
    /// How long each waited, ms, by side index.
    pub waited_ms: [u64; 2],
    /// The absolute rating difference at pairing.
    pub rating_gap: f64,
}

/// One waiting player's extra state (the pairing model keeps only ids and ratings).
#[derive(Clone, Debug)]
struct Waiting {
    seat: SeatPlayer,
    /// The (position, same_queue, other_queues) last sent in `queue.status`.
    told: Option<(usize, usize, usize)>,
}

#[derive(Debug)]
struct State {
    pairing: Pairing<QueueKey, String>,
    waiting: HashMap<String, Waiting>,
}

/// The matchmaking queues held by the hub.
#[derive(Debug)]
pub struct Matchmaker {
    state: Mutex<State>,
    wake: Notify,
    epoch: tokio::time::Instant,
}

/// The widening schedule from the configuration.
pub fn widening(config: &Config) -> Widening {
    Widening {
        initial_gap: config.queue_gap_initial,
        step_gap: config.queue_gap_step,
        step_ms: config.queue_gap_step_ms.max(1),
        unlimited_after_ms: config.queue_gap_unlimited_ms,
    }
}

impl Matchmaker {
    /// Empty queues with this widening schedule; side coin flips are seeded randomly.
    pub fn new(widening: Widening) -> Self {
        Self::with_seed(widening, rand::random())
    }

    /// Empty queues with a fixed seed for the side coin flips (tests).
    pub fn with_seed(widening: Widening, seed: u64) -> Self {
        let config = PairingConfig {
            widening,
            ..PairingConfig::default()
        };
        Matchmaker {
            state: Mutex::new(State {
                pairing: Pairing::new(config, seed),
                waiting: HashMap::new(),
            }),
            wake: Notify::new(),
            epoch: tokio::time::Instant::now(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The matchmaker's monotonic time, ms since it was created (tokio's clock, so paused
    /// tokio tests can advance it).
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Puts a player in queue `key` at time `now`; wakes the pairing task at once when a
    /// pair has become possible.
    pub fn join(&self, key: QueueKey, seat: SeatPlayer, rating: f64, now: u64) -> Joined<QueueKey> {
        let joined = {
            let mut s = self.lock();
            let joined = s.pairing.join(key, seat.id.clone(), rating, now);
            let told = match s.waiting.get(&seat.id) {
                // Same queue again: keep what the player was told.
                Some(w) if joined.previous.as_ref() == s.pairing.queue_of(&seat.id) => w.told,
                _ => None,
            };
            s.waiting.insert(seat.id.clone(), Waiting { seat, told });
            joined
        };
        if joined.ready {
            self.wake.notify_one();
        }
        joined
    }

    /// Notes the sides of a game made outside the queues (a room, a rematch), so the next
    /// pairing alternates sides for these players too.
    pub fn record_sides(&self, players: [&str; 2]) {
        let mut s = self.lock();
        s.pairing
            .record_side(&players[0].to_string(), stoa_protocol::Side::First);
        s.pairing
            .record_side(&players[1].to_string(), stoa_protocol::Side::Second);
    }

    /// Empties every queue (this node stopped running the cluster's matchmaking; the nodes
    /// send their waiting players to the new matchmaker).
    pub fn clear(&self) {
        let mut s = self.lock();
        let players: Vec<String> = s.waiting.keys().cloned().collect();
        for p in players {
            s.waiting.remove(&p);
            s.pairing.leave(&p);
        }
    }

    /// Takes a player out of its queue; `false` when it was not queued.
    pub fn leave(&self, player_id: &str) -> bool {
        let mut s = self.lock();
        s.waiting.remove(player_id);
        s.pairing.leave(&player_id.to_string()).is_some()
    }

    /// The queue a player waits in.
    pub fn queue_of(&self, player_id: &str) -> Option<QueueKey> {
        self.lock()
            .pairing
            .queue_of(&player_id.to_string())
            .cloned()
    }

    /// Runs one pairing wave over every queue at time `now`.
    pub fn wave(&self, now: u64) -> Vec<Made> {
        let mut s = self.lock();
        let matches = s.pairing.wave(now);
        matches
            .into_iter()
            .map(|m| {
                let mut seat = |p: &String| {
                    s.waiting
                        .remove(p)
                        .map(|w| w.seat)
                        .unwrap_or_else(|| SeatPlayer {
                            id: p.clone(),
                            name: p.clone(),
                            rating: None,
                            bot: false,
                        })
                };
                let players = [seat(&m.first.player), seat(&m.second.player)];
                Made {
                    key: m.key,
                    players,
                    ratings: [m.first.rating, m.second.rating],
                    waited_ms: [m.first.waited_ms, m.second.waited_ms],
                    rating_gap: m.rating_gap,
                }
            })
            .collect()
    }

    /// Every non-empty queue with its size, in key order (lobby, metrics).
    pub fn counts(&self) -> Vec<(QueueKey, usize)> {
        self.lock()
            .pairing
            .sizes()
            .map(|(k, n)| (k.clone(), n))
            .collect()
    }

    /// The `queue.status` messages due at `now`: for every waiting player whose position or
    /// counts changed since last told (or who was never told), by player id.
    pub fn statuses(&self, now: u64) -> Vec<(String, ServerMessage)> {
        let mut s = self.lock();
        let total = s.pairing.total();
        let mut due = Vec::new();
        let keys: Vec<QueueKey> = s.pairing.sizes().map(|(k, _)| k.clone()).collect();
        for key in keys {
            let entries: Vec<(String, u64)> = s
                .pairing
                .entries(&key)
                .iter()
                .map(|e| (e.player.clone(), now.saturating_sub(e.joined_at)))
                .collect();
            let len = entries.len();
            for (i, (player, waited_ms)) in entries.into_iter().enumerate() {
                let now_told = (i + 1, len - 1, total - len);
                let Some(w) = s.waiting.get_mut(&player) else {
                    continue;
                };
                if w.told == Some(now_told) {
                    continue;
                }
                w.told = Some(now_told);
                due.push((
                    player,
                    ServerMessage::QueueStatus {
                        queue: describe(&key),
                        position: now_told.0 as u64,
                        same_queue: now_told.1 as u64,
                        other_queues: now_told.2 as u64,
                        waited_ms,
                    },
                ));
            }
        }
        due
    }
}

/// The queue as `queued.queue` and `queue.status` show it:
/// `{"kind","options","clock","rated"}` with the normalised settings.
pub fn describe(key: &QueueKey) -> Value {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    json!({
        "kind": key.kind,
        "options": parse(&key.options),
        "clock": parse(&key.clock),
        "rated": key.rated,
    })
}

/// Validates a queue's clock request and returns it normalised (only the fields of its
/// kind, so equal clocks written differently share a queue). Missing means no clock. The
/// rules are the rooms' ones: see [`crate::clock_request::validate_clock`].
pub fn validate_clock(clock: Option<Value>) -> Result<Value, ApiError> {
    crate::clock_request::validate_clock(clock.as_ref()).map(|(_, canonical)| canonical)
}

/// Handles `queue.join`: validates and normalises the settings, looks the player's rating
/// up, queues the player and answers `queued` (the pairing task then makes the game).
#[allow(clippy::too_many_arguments)]
pub async fn queue_join(
    hub: &Arc<Hub>,
    conn: &ConnHandle,
    player: &PlayerRecord,
    rid: Option<Rid>,
    kind: String,
    options: Value,
    clock: Option<Value>,
    rated: bool,
) -> Result<(), ApiError> {
    let (_, options, clock) =
        crate::clock_request::validate_settings(&kind, &options, clock.as_ref())?;
    let rating = ratings::of(hub, &player.id, &kind).await?;
    let key = QueueKey::new(&kind, &options, &clock, rated);
    let seat = SeatPlayer {
        id: player.id.clone(),
        name: player.name.clone(),
        rating: Some(ratings::seat_value(&rating)),
        bot: player.bot,
    };
    let position = match &hub.cluster {
        Some(cluster) => {
            cluster
                .queue_join(hub, key.clone(), seat, rating.rating, true)
                .await?
        }
        None => {
            let mm = &hub.matchmaker;
            mm.join(key.clone(), seat, rating.rating, mm.now_ms())
                .position as u64
        }
    };
    tracing::info!(player = %player.id, queue = %key, position, "queued");
    hub.metrics.queues.joined();
    conn.send_msg(&ServerMessage::Queued {
        rid,
        queue: describe(&key),
        position,
    });
    Ok(())
}

/// Takes a player out of its queue (on whatever node the matchmaking runs).
pub async fn queue_leave(hub: &Arc<Hub>, player_id: &str) {
    match &hub.cluster {
        Some(cluster) => cluster.queue_leave(hub, player_id).await,
        None => {
            hub.matchmaker.leave(player_id);
        }
    }
}

/// Starts the pairing task: a wave every `--queue-wave-ms` and whenever a join makes a pair
/// possible; stops at shutdown.
pub fn spawn(hub: Arc<Hub>) {
    let span = tracing::info_span!(parent: None, "matchmaker");
    tokio::spawn(run(hub).instrument(span));
}

async fn run(hub: Arc<Hub>) {
    let period = Duration::from_millis(hub.config.queue_wave_ms.clamp(10, 60_000));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = hub.shutdown.clone();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = hub.matchmaker.wake.notified() => {}
            r = shutdown.changed() => {
                if r.is_err() || *shutdown.borrow() {
                    break;
                }
            }
        }
        let mm = &hub.matchmaker;
        let now = mm.now_ms();
        for made in mm.wave(now) {
            start(&hub, made).await;
        }
        for (player, msg) in mm.statuses(now) {
            let conns = hub.players.connections(&player);
            if conns.is_empty() {
                if let Some(cluster) = &hub.cluster {
                    // Queued from another node of the cluster.
                    cluster.to_player(&player, msg.to_json()).await;
                }
            }
            for conn in conns {
                conn.send_msg(&msg);
            }
        }
        hub.metrics.queues.set_waiting(&mm.counts());
    }
}

/// Creates the game of a pairing and tells both players ([`Hub::start_game`]); when the game
/// cannot be created (store unavailable), puts the players back in the queue (they lose
/// their waiting time).
async fn start(hub: &Arc<Hub>, made: Made) {
    let desc = describe(&made.key);
    let new = NewGame {
        id: ids::game_id(),
        kind: made.key.kind.clone(),
        options: desc["options"].clone(),
        clock: desc["clock"].clone(),
        rated: made.key.rated,
        visibility: Visibility::Public,
        code: None,
        players: made.players.clone(),
        rematch_of: None,
    };
    match hub.start_game(new).await {
        Ok(handle) => {
            hub.metrics
                .queues
                .paired(&made.key.kind, made.waited_ms, made.rating_gap);
            tracing::info!(
                game = %handle.id,
                queue = %made.key,
                gap = made.rating_gap,
                waited_ms = ?made.waited_ms,
                "paired"
            );
        }
        Err(e) => {
            tracing::warn!(error = %e, queue = %made.key, "could not start a paired game");
            let now = hub.matchmaker.now_ms();
            for (i, seat) in made.players.into_iter().enumerate() {
                if hub.players.is_online(&seat.id) {
                    hub.matchmaker
                        .join(made.key.clone(), seat, made.ratings[i], now);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_protocol::wire::ErrorCode;

    fn seat(id: &str) -> SeatPlayer {
        SeatPlayer {
            id: id.into(),
            name: id.into(),
            rating: None,
            bot: false,
        }
    }

    fn key(kind: &str, rated: bool) -> QueueKey {
        QueueKey::new(kind, &json!({}), &json!({"kind":"none"}), rated)
    }

    #[test]
    fn sides_of_room_games_count_for_alternation() {
        // Both had the first side in a room game, then "b" had the second in another: "a" is
        // owed the second side now, so "b" gets the first.
        let mm = Matchmaker::with_seed(Widening::default(), 3);
        mm.record_sides(["a", "c"]);
        mm.record_sides(["x", "b"]);
        mm.join(key("unane", false), seat("a"), 1500.0, 0);
        mm.join(key("unane", false), seat("b"), 1500.0, 0);
        let made = mm.wave(0);
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].players[0].id, "b");
        assert_eq!(made[0].players[1].id, "a");

        // The mirror image, with the same seed and joins: only the history differs.
        let mm = Matchmaker::with_seed(Widening::default(), 3);
        mm.record_sides(["b", "c"]);
        mm.record_sides(["x", "a"]);
        mm.join(key("unane", false), seat("a"), 1500.0, 0);
        mm.join(key("unane", false), seat("b"), 1500.0, 0);
        let made = mm.wave(0);
        assert_eq!(made[0].players[0].id, "a");
        assert_eq!(made[0].players[1].id, "b");
    }

    #[test]
    fn far_ratings_pair_once_the_window_has_widened_on_virtual_time() {
        let mm = Matchmaker::with_seed(Widening::default(), 7);
        let t0 = 1_000;
        assert!(!mm.join(key("staku", true), seat("a"), 1500.0, t0).ready);
        // 700 points apart: outside 100 + 50/2 s until 12 s of waiting, but nobody waits
        // more than the 30 s of the default schedule.
        assert!(!mm.join(key("staku", true), seat("b"), 2200.0, t0).ready);
        assert!(mm.wave(t0).is_empty());
        assert!(mm.wave(t0 + 23_999).is_empty(), "gap 650 < 700 at 23.999 s");
        let made = mm.wave(t0 + 24_000);
        assert_eq!(made.len(), 1, "gap 700 reached at 24 s");
        let m = &made[0];
        let mut ids: Vec<&str> = m.players.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(m.rating_gap, 700.0);
        assert_eq!(m.waited_ms, [24_000, 24_000]);
        assert!(mm.counts().is_empty());
        assert!(mm.queue_of("a").is_none());
    }

    #[test]
    fn incompatible_keys_never_pair_and_leave_removes() {
        let mm = Matchmaker::with_seed(Widening::default(), 1);
        let t = 0;
        mm.join(key("staku", false), seat("a"), 1500.0, t);
        mm.join(key("akron", false), seat("b"), 1500.0, t);
        mm.join(key("staku", true), seat("c"), 1500.0, t);
        mm.join(
            QueueKey::new(
                "staku",
                &json!({"max_stack":2}),
                &json!({"kind":"none"}),
                false,
            ),
            seat("d"),
            1500.0,
            t,
        );
        assert!(mm.wave(t + 3_600_000).is_empty());
        assert_eq!(mm.counts().len(), 4);
        assert!(mm.leave("a"));
        assert!(!mm.leave("a"));
        assert_eq!(mm.counts().len(), 3);
        // A compatible newcomer for c is ready at once and pairs.
        assert!(mm.join(key("staku", true), seat("e"), 1510.0, t).ready);
        let made = mm.wave(t);
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].rating_gap, 10.0);
    }

    #[test]
    fn statuses_are_sent_once_per_change() {
        let mm = Matchmaker::with_seed(Widening::default(), 1);
        mm.join(key("staku", false), seat("a"), 1500.0, 0);
        let s = mm.statuses(500);
        assert_eq!(s.len(), 1);
        assert_eq!(
            serde_json::to_value(&s[0].1).unwrap(),
            json!({"t":"queue.status","queue":{"kind":"staku","options":{},
                "clock":{"kind":"none"},"rated":false},"position":1,"same_queue":0,
                "other_queues":0,"waited_ms":500})
        );
        assert!(mm.statuses(1_000).is_empty(), "nothing changed");
        mm.join(key("akron", false), seat("b"), 1500.0, 1_000);
        let s = mm.statuses(1_500);
        let told: Vec<(&str, u64)> = s
            .iter()
            .map(|(p, m)| match m {
                ServerMessage::QueueStatus { other_queues, .. } => (p.as_str(), *other_queues),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(told.len(), 2);
        assert!(told.contains(&("a", 1)) && told.contains(&("b", 1)));
    }

    #[test]
    fn clocks_are_validated_and_normalised() {
        assert_eq!(validate_clock(None).unwrap(), json!({"kind":"none"}));
        assert_eq!(
            validate_clock(Some(
                json!({"increment_ms":0,"kind":"fischer","initial_ms":60000,"x":1})
            ))
            .unwrap(),
            json!({"kind":"fischer","initial_ms":60000,"increment_ms":0})
        );
        for bad in [
            json!({"kind":"fischer","initial_ms":0,"increment_ms":0}),
            json!({"kind":"sundial"}),
            json!({"kind":"fischer"}),
            json!("5+3"),
            json!({"kind":"correspondence","days_per_turn":99}),
        ] {
            let e = validate_clock(Some(bad.clone())).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{bad}");
        }
    }
}
