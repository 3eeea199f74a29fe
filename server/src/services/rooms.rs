//! Rooms (hosting): a host waits with a code; the first joiner fills the other seat and the
//! game starts.
//!
//! Why a synchronous registry: joining must take the free seat atomically (two joiners, one
//! seat), so the check-and-take happens under one lock; the game itself is then created
//! outside the lock, and [`Rooms::revert_start`] undoes the seat if that fails, so a failed
//! request changes nothing.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use stoa_protocol::wire::{RoomInfo, RoomState, RoomTerms, SeatPlayer, Visibility};

use crate::domain::setup::GameSetup;
use crate::game::capabilities::timed_store_call;
use crate::game::players::Players;
use crate::ids::{self, GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::store::{RoomRecord, Store};

/// Where a room is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomStatus {
    /// The host waits for an opponent.
    Waiting,
    /// Both seats filled; the game has this id.
    Started(GameId),
    /// The host left before anyone joined.
    Closed,
}

/// One room.
#[derive(Clone, Debug)]
pub struct Room {
    /// Code.
    pub code: RoomCode,
    /// The game's settings (kind, options, clock), checked when the room was created; a
    /// room from the store holds them as stored and has them checked again when its game
    /// is made ([`GameSetup::recheck`]).
    pub setup: GameSetup,
    /// Rated flag.
    pub rated: bool,
    /// Visibility.
    pub visibility: Visibility,
    /// The host.
    pub host: SeatPlayer,
    /// Seats by side index.
    pub seats: [Option<SeatPlayer>; 2],
    /// Status.
    pub status: RoomStatus,
}

impl Room {
    /// The side names of the room's kind, by side index.
    pub fn side_names(&self) -> [&'static str; 2] {
        self.setup.side_names()
    }

    /// What the room offers (the settings as strings and JSON, as the protocol has them).
    pub fn terms(&self) -> RoomTerms {
        RoomTerms {
            kind: self.setup.kind_id().to_string(),
            options: self.setup.options.clone(),
            clock: self.setup.clock_json(),
            rated: self.rated,
            visibility: self.visibility,
            start: self.setup.start_str().map(str::to_string),
        }
    }

    /// Where the room is in its life, and its game once started.
    pub fn state(&self) -> (RoomState, Option<&GameId>) {
        match &self.status {
            RoomStatus::Waiting => (RoomState::Waiting, None),
            RoomStatus::Started(id) => (RoomState::Started, Some(id)),
            RoomStatus::Closed => (RoomState::Closed, None),
        }
    }

    /// The wire form.
    pub fn info(&self) -> RoomInfo {
        let mut seats = Map::new();
        for i in 0..2 {
            seats.insert(
                self.side_names()[i].to_string(),
                self.seats[i]
                    .as_ref()
                    .and_then(|p| serde_json::to_value(p).ok())
                    .unwrap_or(Value::Null),
            );
        }
        let (status, game_id) = self.state();
        RoomInfo {
            code: self.code.to_string(),
            terms: self.terms(),
            host: self.host.clone(),
            seats,
            status,
            game_id: game_id.map(GameId::to_string),
        }
    }

    /// The persisted form (the same terms as the wire's).
    pub fn record(&self) -> RoomRecord {
        let (status, game_id) = self.state();
        RoomRecord {
            code: self.code.clone(),
            terms: self.terms(),
            host: PlayerId::from(self.host.id.as_str()),
            seats: [
                self.seats[0]
                    .as_ref()
                    .map(|p| PlayerId::from(p.id.as_str())),
                self.seats[1]
                    .as_ref()
                    .map(|p| PlayerId::from(p.id.as_str())),
            ],
            status,
            game_id: game_id.cloned(),
        }
    }
}

/// What `room.join` found.
#[derive(Debug)]
pub enum JoinOutcome {
    /// No such room.
    NotFound,
    /// The room was closed.
    Closed,
    /// The joiner took the free seat: start a game with this id.
    Start(Room, GameId),
    /// The joiner is the waiting host: nothing changes.
    Waiting(Room),
    /// The room's game runs (or ran): watch it.
    Started(GameId),
}

/// All rooms by code.
#[derive(Debug, Default)]
pub struct Rooms {
    rooms: Mutex<HashMap<RoomCode, Room>>,
}

impl Rooms {
    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<RoomCode, Room>> {
        self.rooms.lock()
    }

    /// Adds a room under a fresh code and returns it.
    pub fn create(&self, mut room: Room) -> Room {
        let mut rooms = self.lock();
        loop {
            let code = RoomCode::from(ids::room_code());
            if let std::collections::hash_map::Entry::Vacant(slot) = rooms.entry(code.clone()) {
                room.code = code;
                slot.insert(room.clone());
                return room;
            }
        }
    }

    /// Puts back a room loaded from the store (recovery); a room already in memory wins.
    pub fn restore(&self, room: Room) {
        self.lock().entry(room.code.clone()).or_insert(room);
    }

    /// Puts a room as the store has it now (cluster mode: another node may have changed it).
    pub fn replace(&self, room: Room) {
        self.lock().insert(room.code.clone(), room);
    }

    /// A room's game started on another node: it waits no more.
    pub fn started(&self, code: &RoomCode, game_id: &GameId) {
        if let Some(room) = self.lock().get_mut(code) {
            room.status = RoomStatus::Started(game_id.clone());
        }
    }

    /// Removes a room (a failed create).
    pub fn remove(&self, code: &RoomCode) {
        self.lock().remove(code);
    }

    /// A room by (normalised) code.
    pub fn get(&self, code: &RoomCode) -> Option<Room> {
        self.lock().get(code).cloned()
    }

    /// Takes the free seat for `player`, atomically.
    pub fn join(&self, code: &RoomCode, player: &SeatPlayer) -> JoinOutcome {
        let mut rooms = self.lock();
        let Some(room) = rooms.get_mut(code) else {
            return JoinOutcome::NotFound;
        };
        match &room.status {
            RoomStatus::Closed => JoinOutcome::Closed,
            RoomStatus::Started(id) => JoinOutcome::Started(id.clone()),
            RoomStatus::Waiting => {
                if room.host.id == player.id {
                    return JoinOutcome::Waiting(room.clone());
                }
                let Some(free) = room.seats.iter().position(Option::is_none) else {
                    return JoinOutcome::Closed;
                };
                room.seats[free] = Some(player.clone());
                let game_id = ids::game_id();
                room.status = RoomStatus::Started(game_id.clone());
                JoinOutcome::Start(room.clone(), game_id)
            }
        }
    }

    /// Undoes a [`Rooms::join`] whose game could not be created.
    pub fn revert_start(&self, code: &RoomCode, player_id: &PlayerId) {
        if let Some(room) = self.lock().get_mut(code) {
            for seat in room.seats.iter_mut() {
                if seat.as_ref().is_some_and(|p| p.id == player_id.as_str()) {
                    *seat = None;
                }
            }
            room.status = RoomStatus::Waiting;
        }
    }

    /// The player leaves; the host leaving a waiting room closes it. Returns the room after.
    pub fn leave(&self, code: &RoomCode, player_id: &PlayerId) -> Option<Room> {
        let mut rooms = self.lock();
        let room = rooms.get_mut(code)?;
        if room.status == RoomStatus::Waiting && room.host.id == player_id.as_str() {
            room.status = RoomStatus::Closed;
            room.seats = [None, None];
        }
        Some(room.clone())
    }

    /// Codes of the rooms `player_id` hosts that still wait for an opponent.
    pub fn waiting_hosted_by(&self, player_id: &PlayerId) -> Vec<RoomCode> {
        self.lock()
            .values()
            .filter(|r| r.status == RoomStatus::Waiting && r.host.id == player_id.as_str())
            .map(|r| r.code.clone())
            .collect()
    }

    /// The codes of every room here waiting for an opponent.
    pub fn waiting_codes(&self) -> Vec<RoomCode> {
        self.lock()
            .values()
            .filter(|r| r.status == RoomStatus::Waiting)
            .map(|r| r.code.clone())
            .collect()
    }

    /// The kind of every room waiting for an opponent, public or private (for metrics).
    pub fn waiting_kinds(&self) -> Vec<String> {
        self.lock()
            .values()
            .filter(|r| r.status == RoomStatus::Waiting)
            .map(|r| r.setup.kind_id().to_string())
            .collect()
    }

    /// Public rooms waiting for an opponent (for the lobby).
    pub fn public_waiting(&self) -> Vec<Room> {
        self.lock()
            .values()
            .filter(|r| r.visibility == Visibility::Public && r.status == RoomStatus::Waiting)
            .cloned()
            .collect()
    }
}

/// After a host's last connection closed: once the grace period has passed with the host
/// still away, its waiting rooms close (and leave the lobby), so a room never waits for a
/// host who is gone. A reconnect within the grace period keeps them.
pub fn close_when_host_stays_away(rooms: Arc<Rooms>, away: HostAway, host: PlayerId) {
    if rooms.waiting_hosted_by(&host).is_empty() {
        return;
    }
    tokio::spawn(async move {
        tokio::time::sleep(away.grace).await;
        if away.players.is_online(&host) {
            return;
        }
        for code in rooms.waiting_hosted_by(&host) {
            if let Some(room) = rooms.leave(&code, &host) {
                tracing::info!(room = %code, "host away past the grace period: room closed");
                let _ = timed_store_call(&away.metrics, away.store.save_room(&room.record())).await;
            }
        }
    });
}

/// What closing an absent host's rooms takes besides the rooms.
#[derive(Clone)]
pub struct HostAway {
    /// How long a host may be away (`--room-host-grace-ms`).
    pub grace: std::time::Duration,
    /// Who is connected.
    pub players: Arc<Players>,
    /// Where closed rooms are written.
    pub store: Arc<dyn Store>,
    /// Metrics (store call timings).
    pub metrics: Arc<Metrics>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn host() -> SeatPlayer {
        SeatPlayer {
            id: "pa".into(),
            name: "a".into(),
            rating: None,
            bot: false,
        }
    }

    #[test]
    fn a_room_writes_its_settings_as_they_came_in() {
        let kind = stoa_protocol::kind("staku").unwrap();
        let options = kind.validate_options(&json!({})).unwrap();
        let clock = json!({"kind": "fischer", "initial_ms": 60000, "increment_ms": 0});
        let room = Room {
            code: "ABC".into(),
            setup: GameSetup::unchecked(kind, options.clone(), &clock, None).unwrap(),
            rated: false,
            visibility: Visibility::Public,
            host: host(),
            seats: [Some(host()), None],
            status: RoomStatus::Waiting,
        };
        let record = room.record();
        assert_eq!(
            (record.terms.kind.as_str(), &record.code),
            ("staku", &RoomCode::from("ABC"))
        );
        assert_eq!(record.terms.options, options);
        assert_eq!(
            record.terms.clock.to_string(),
            clock.to_string(),
            "same JSON, same order"
        );
        assert_eq!(room.info().terms.clock.to_string(), clock.to_string());
        assert_eq!(room.side_names(), kind.side_names);
    }

    #[test]
    fn a_stored_room_keeps_settings_no_longer_accepted_until_its_game_is_made() {
        let kind = stoa_protocol::kind("staku").unwrap();
        let options = kind.validate_options(&json!({})).unwrap();
        let odd = json!({"kind": "correspondence", "days_per_turn": 99});
        let setup = GameSetup::unchecked(kind, options.clone(), &odd, None).unwrap();
        assert_eq!(setup.clock_json(), odd, "shown as stored");
        assert!(setup.recheck().is_err(), "refused when the game is made");
        assert!(GameSetup::unchecked(kind, options, &json!("5+3"), None).is_none());
    }
}
