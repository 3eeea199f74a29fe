//! One arena's state: its settings, its players and their sheets, its games, and the
//! document built from them (protocol/docs/PROTOCOL.md, "Arenas (additions)").
//!
//! Why plain state with methods: the service holds each arena under one lock and calls
//! these methods, which only compute (the rules are in [`crate::domain::arena`]); tasks,
//! timers, games and connections stay in the service.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use stoa_protocol::wire::Visibility;

use crate::domain::arena::{self, ArenaStatus, Candidate, Outcome, PlayerResult, Ranked, Sheet};
use crate::domain::pairing::{SideHistory, DEFAULT_SIDE_MEMORY};
use crate::domain::setup::GameSetup;
use crate::game::capabilities::ArenaGameEnd;
use crate::ids::{ArenaId, GameId, PlayerId};

mod document;
mod stored;

/// An arena's fixed settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The arena's id (`a…`).
    pub id: ArenaId,
    /// Its name.
    pub name: String,
    /// The games' settings.
    pub setup: GameSetup,
    /// Rated games.
    pub rated: bool,
    /// Public (listed) or private (joined by code).
    pub visibility: Visibility,
    /// A private arena's code.
    pub code: Option<String>,
    /// Who created it: (id, name).
    pub creator: (PlayerId, String),
    /// Start, server ms.
    pub starts_at: u64,
    /// End, server ms.
    pub ends_at: u64,
    /// Computer players may join.
    pub bots: bool,
    /// Berserk allowed.
    pub berserk: bool,
    /// Draws with fewer plies score nothing.
    pub min_draw_plies: u32,
}

/// A player in an arena.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entrant {
    /// Player id.
    pub id: PlayerId,
    /// Display name.
    pub name: String,
    /// Rating in the arena's kind, as of the player's latest pairing (or join).
    pub rating: i64,
    /// A computer player.
    pub bot: bool,
    /// Out of the pool.
    pub paused: bool,
    /// The arena game the player is in now.
    pub playing: Option<GameId>,
    /// Whom the player's last arena game was against.
    pub last_opponent: Option<PlayerId>,
    /// The score sheet.
    pub sheet: Sheet,
}

/// How an arena game ended, by player id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ended {
    /// The winner (`None`: a draw or an abort).
    pub winner: Option<PlayerId>,
    /// Aborted: not scored.
    pub aborted: bool,
    /// Plies played.
    pub plies: u32,
    /// Who went berserk.
    pub berserk: Vec<PlayerId>,
    /// Points scored, by player id.
    pub points: HashMap<PlayerId, u32>,
    /// The player paused because their first move never came (aborted games only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<PlayerId>,
}

/// A game the arena paired.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArenaGame {
    /// Game id.
    pub id: GameId,
    /// Player ids by side index at the start.
    pub players: [PlayerId; 2],
    /// Ratings at the start, by side index.
    pub ratings: [i64; 2],
    /// When it was paired, server ms.
    pub started_at: u64,
    /// Its end, once over.
    pub ended: Option<Ended>,
}

/// One arena.
#[derive(Clone, Debug)]
pub struct ArenaState {
    /// Settings.
    pub settings: Settings,
    /// Cancelled by its creator.
    pub cancelled: bool,
    /// Players in join order.
    pub players: Vec<Entrant>,
    /// Games in pairing order.
    pub games: Vec<ArenaGame>,
    /// Sides each player had, for alternation.
    pub sides: SideHistory<PlayerId>,
    /// In a cluster, the node that pairs this arena (its lease), and until when (server
    /// ms) unless it renews.
    pub pairer: Option<(String, u64)>,
}

/// A pairing the arena decided: (first side, second side) player ids and their ratings.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    /// The new game's id.
    pub game_id: GameId,
    /// Player ids by side index.
    pub players: [PlayerId; 2],
}

impl ArenaState {
    /// A new arena with nobody in it.
    pub fn new(settings: Settings) -> Self {
        ArenaState {
            settings,
            cancelled: false,
            players: Vec::new(),
            games: Vec::new(),
            sides: SideHistory::new(DEFAULT_SIDE_MEMORY),
            pairer: None,
        }
    }

    /// The status at `now`.
    pub fn status(&self, now: u64) -> ArenaStatus {
        if self.cancelled {
            return ArenaStatus::Cancelled;
        }
        ArenaStatus::at(now, self.settings.starts_at, self.settings.ends_at)
    }

    /// When pairing stops.
    pub fn cutoff_at(&self) -> u64 {
        arena::cutoff_at(
            self.settings.starts_at,
            self.settings.ends_at,
            &self.settings.setup.clock,
        )
    }

    /// A player by id.
    pub fn entrant(&self, id: &PlayerId) -> Option<&Entrant> {
        self.players.iter().find(|p| p.id == *id)
    }

    fn entrant_mut(&mut self, id: &PlayerId) -> Option<&mut Entrant> {
        self.players.iter_mut().find(|p| p.id == *id)
    }

    /// Puts a player in the arena and its pool (again, after a pause). `rating`: current.
    pub fn join(&mut self, id: &PlayerId, name: &str, rating: i64, bot: bool) {
        match self.entrant_mut(id) {
            Some(e) => {
                e.paused = false;
                e.name = name.to_string();
            }
            None => self.players.push(Entrant {
                id: id.clone(),
                name: name.to_string(),
                rating,
                bot,
                paused: false,
                playing: None,
                last_opponent: None,
                sheet: Sheet::default(),
            }),
        }
    }

    /// Takes a player out of the pool; `false` when not in the arena.
    pub fn pause(&mut self, id: &PlayerId) -> bool {
        match self.entrant_mut(id) {
            Some(e) => {
                e.paused = true;
                true
            }
            None => false,
        }
    }

    /// Players in standings order.
    pub fn standings(&self) -> Vec<&Entrant> {
        let mut v: Vec<&Entrant> = self.players.iter().collect();
        v.sort_by(|a, b| arena::order(&ranked(a), &ranked(b)));
        v
    }

    /// Decides this round's pairings among the free players (`online` says who is
    /// connected), records them (players playing, sides, last opponents) and returns them.
    /// `make_id` names each new game.
    pub fn pair_round(
        &mut self,
        now: u64,
        online: &dyn Fn(&PlayerId) -> bool,
        make_id: &mut dyn FnMut() -> GameId,
    ) -> Vec<Pairing> {
        if self.status(now) != ArenaStatus::Running || now >= self.cutoff_at() {
            return Vec::new();
        }
        let active = self.players.iter().filter(|p| !p.paused).count();
        let free: Vec<&Entrant> = self
            .standings()
            .into_iter()
            .filter(|p| !p.paused && p.playing.is_none() && online(&p.id))
            .collect();
        let candidates: Vec<Candidate> = free
            .iter()
            .map(|p| Candidate {
                id: p.id.as_str(),
                last_opponent: p.last_opponent.as_ref().map(PlayerId::as_str),
            })
            .collect();
        let pairs = arena::pair(&candidates, active == 2);
        let chosen: Vec<(PlayerId, PlayerId)> = pairs
            .into_iter()
            .map(|(i, j)| (free[i].id.clone(), free[j].id.clone()))
            .collect();
        let mut rng = rand::thread_rng();
        let mut out = Vec::new();
        for (a, b) in chosen {
            let players = if self.sides.a_takes_first(&a, &b, &mut rng) {
                [a, b]
            } else {
                [b, a]
            };
            let game_id = make_id();
            self.sides.record(&players[0], stoa_protocol::Side::First);
            self.sides.record(&players[1], stoa_protocol::Side::Second);
            let ratings = [0, 1].map(|i| self.entrant(&players[i]).map_or(0, |e| e.rating));
            for i in 0..2 {
                if let Some(e) = self.entrant_mut(&players[i]) {
                    e.playing = Some(game_id.clone());
                    e.last_opponent = Some(players[1 - i].clone());
                }
            }
            self.games.push(ArenaGame {
                id: game_id.clone(),
                players: players.clone(),
                ratings,
                started_at: now,
                ended: None,
            });
            out.push(Pairing { game_id, players });
        }
        out
    }

    /// A pairing's game could not be started: its players are free again.
    /// Their last opponents are again those of their last games that did exist.
    pub fn unpair(&mut self, game_id: &GameId) {
        let Some(gi) = self.games.iter().position(|g| g.id == *game_id) else {
            return;
        };
        let game = self.games.remove(gi);
        for pid in &game.players {
            let last = self
                .games
                .iter()
                .rev()
                .find(|g| g.players.contains(pid))
                .and_then(|g| g.players.iter().find(|p| *p != pid).cloned());
            if let Some(e) = self.entrant_mut(pid) {
                if e.playing.as_ref() == Some(game_id) {
                    e.playing = None;
                }
                e.last_opponent = last;
            }
        }
    }

    /// A paired game that was never created (its pairing was stored, then the node died, or
    /// the game could not be started, before the game existed) ends `aborted`: watchers
    /// may have seen it `playing`, so it stays in the document, scoring nothing, and its
    /// players are free again. As after any abort, each one's last opponent stays the
    /// other: every pairing in `games` counts for "not the same opponent twice in a row".
    /// `false` when there is no such game in progress.
    pub fn abort_unstarted(&mut self, game_id: &GameId) -> bool {
        let Some(gi) = self
            .games
            .iter()
            .position(|g| g.id == *game_id && g.ended.is_none())
        else {
            return false;
        };
        self.games[gi].ended = Some(Ended {
            winner: None,
            aborted: true,
            plies: 0,
            berserk: Vec::new(),
            points: HashMap::new(),
            absent: None,
        });
        let players = self.games[gi].players.clone();
        for pid in &players {
            if let Some(e) = self.entrant_mut(pid) {
                if e.playing.as_ref() == Some(game_id) {
                    e.playing = None;
                }
            }
        }
        true
    }

    /// Scores a game's end; `false` when the game is not this arena's or already scored.
    pub fn game_ended(&mut self, end: &ArenaGameEnd) -> bool {
        let min_draw_plies = self.settings.min_draw_plies;
        let Some(gi) = self.games.iter().position(|g| g.id == end.game_id) else {
            return false;
        };
        let absent = end.absent.and_then(|a| end.players.get(a)).cloned();
        if let Some(ended) = self.games[gi].ended.as_mut() {
            // Already scored from the game's final document (read by the periodic settle
            // before the live report came): only the live report says whose first move
            // never came, so that part is applied now, once.
            let Some(pid) = absent.filter(|_| ended.aborted && ended.absent.is_none()) else {
                return false;
            };
            ended.absent = Some(pid.clone());
            if let Some(e) = self.entrant_mut(&pid) {
                e.paused = true;
            }
            return true;
        }
        let game = self.games[gi].clone();
        let winner = end.winner.and_then(|w| end.players.get(w).cloned());
        let berserk: Vec<PlayerId> = (0..2)
            .filter(|&i| end.berserk[i])
            .map(|i| end.players[i].clone())
            .collect();
        let mut points = HashMap::new();
        for (i, pid) in game.players.iter().enumerate() {
            let Some(e) = self.entrant_mut(pid) else {
                continue;
            };
            if e.playing.as_ref() == Some(&game.id) {
                e.playing = None;
            }
            // A player who never made a first move is not at the board (closed the page,
            // or their node died where presence is not known): out of the pool until they
            // join again, so nobody else waits out a first-action window for them.
            if absent.as_ref() == Some(pid) {
                e.paused = true;
            }
            if end.aborted {
                continue;
            }
            let outcome = match &winner {
                None => Outcome::Draw,
                Some(w) if w == pid => Outcome::Win,
                Some(_) => Outcome::Loss,
            };
            let result = PlayerResult {
                outcome,
                berserk: berserk.contains(pid),
                plies: end.plies,
                opponent_rating: game.ratings[1 - i] as f64,
            };
            points.insert(pid.clone(), e.sheet.add(&result, min_draw_plies));
        }
        self.games[gi].ended = Some(Ended {
            winner,
            aborted: end.aborted,
            plies: end.plies,
            berserk,
            points,
            absent,
        });
        true
    }

    /// The game shown as the arena's top game: among games in progress, the one with the
    /// best-placed player.
    pub fn top_game(&self) -> Option<&GameId> {
        self.standings()
            .into_iter()
            .find_map(|p| p.playing.as_ref())
    }

    /// Takes (or renews) the pairing lease for `node` until `until`; `false` when another
    /// node holds it at `now`.
    pub fn take_lease(&mut self, node: &str, now: u64, until: u64) -> bool {
        match &self.pairer {
            Some((holder, expiry)) if holder != node && *expiry > now => false,
            _ => {
                self.pairer = Some((node.to_string(), until));
                true
            }
        }
    }

    /// Whether the arena still needs its service: scheduled, running, or with a game in
    /// progress.
    pub fn open(&self, now: u64) -> bool {
        self.status(now).is_open() || self.games.iter().any(|g| g.ended.is_none())
    }
}

fn ranked(e: &Entrant) -> Ranked<'_> {
    Ranked {
        id: e.id.as_str(),
        score: e.sheet.score,
        performance: e.sheet.performance(),
    }
}

#[cfg(test)]
mod tests;
