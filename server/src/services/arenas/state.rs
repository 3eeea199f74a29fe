//! One arena's state: its settings, its players and their sheets, its games, and the
//! document built from them (protocol/docs/PROTOCOL.md, "Arenas (additions)").
//!
//! Why plain state with methods: the service holds each arena under one lock and calls
//! these methods, which only compute (the rules are in [`crate::domain::arena`]); tasks,
//! timers, games and connections stay in the service.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use stoa_protocol::wire::Visibility;

use crate::domain::arena::{self, ArenaStatus, Candidate, Outcome, PlayerResult, Ranked, Sheet};
use crate::domain::pairing::{SideHistory, DEFAULT_SIDE_MEMORY};
use crate::domain::setup::GameSetup;
use crate::game::capabilities::ArenaGameEnd;

/// An arena's fixed settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The arena's id (`a…`).
    pub id: String,
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
    pub creator: (String, String),
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
    pub id: String,
    /// Display name.
    pub name: String,
    /// Rating in the arena's kind, as of the player's latest pairing (or join).
    pub rating: i64,
    /// A computer player.
    pub bot: bool,
    /// Out of the pool.
    pub paused: bool,
    /// The arena game the player is in now.
    pub playing: Option<String>,
    /// Whom the player's last arena game was against.
    pub last_opponent: Option<String>,
    /// The score sheet.
    pub sheet: Sheet,
}

/// How an arena game ended, by player id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ended {
    /// The winner (`None`: a draw or an abort).
    pub winner: Option<String>,
    /// Aborted: not scored.
    pub aborted: bool,
    /// Plies played.
    pub plies: u32,
    /// Who went berserk.
    pub berserk: Vec<String>,
    /// Points scored, by player id.
    pub points: HashMap<String, u32>,
    /// The player paused because their first move never came (aborted games only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

/// A game the arena paired.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArenaGame {
    /// Game id.
    pub id: String,
    /// Player ids by side index at the start.
    pub players: [String; 2],
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
    pub sides: SideHistory<String>,
    /// In a cluster, the node that pairs this arena (its lease), and until when (server
    /// ms) unless it renews.
    pub pairer: Option<(String, u64)>,
}

/// A pairing the arena decided: (first side, second side) player ids and their ratings.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    /// The new game's id.
    pub game_id: String,
    /// Player ids by side index.
    pub players: [String; 2],
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
    pub fn entrant(&self, id: &str) -> Option<&Entrant> {
        self.players.iter().find(|p| p.id == id)
    }

    fn entrant_mut(&mut self, id: &str) -> Option<&mut Entrant> {
        self.players.iter_mut().find(|p| p.id == id)
    }

    /// Puts a player in the arena and its pool (again, after a pause). `rating`: current.
    pub fn join(&mut self, id: &str, name: &str, rating: i64, bot: bool) {
        match self.entrant_mut(id) {
            Some(e) => {
                e.paused = false;
                e.name = name.to_string();
            }
            None => self.players.push(Entrant {
                id: id.to_string(),
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
    pub fn pause(&mut self, id: &str) -> bool {
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
        online: &dyn Fn(&str) -> bool,
        make_id: &mut dyn FnMut() -> String,
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
                id: &p.id,
                last_opponent: p.last_opponent.as_deref(),
            })
            .collect();
        let pairs = arena::pair(&candidates, active == 2);
        let chosen: Vec<(String, String)> = pairs
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
    pub fn unpair(&mut self, game_id: &str) {
        let Some(gi) = self.games.iter().position(|g| g.id == game_id) else {
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
                if e.playing.as_deref() == Some(game_id) {
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
    pub fn abort_unstarted(&mut self, game_id: &str) -> bool {
        let Some(gi) = self
            .games
            .iter()
            .position(|g| g.id == game_id && g.ended.is_none())
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
                if e.playing.as_deref() == Some(game_id) {
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
        let berserk: Vec<String> = (0..2)
            .filter(|&i| end.berserk[i])
            .map(|i| end.players[i].clone())
            .collect();
        let mut points = HashMap::new();
        for (i, pid) in game.players.iter().enumerate() {
            let Some(e) = self.entrant_mut(pid) else {
                continue;
            };
            if e.playing.as_deref() == Some(game.id.as_str()) {
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
    pub fn top_game(&self) -> Option<&str> {
        self.standings()
            .into_iter()
            .find_map(|p| p.playing.as_deref())
    }

    /// The whole document at `now` (`code` shown: private arenas show it to those who may
    /// see them).
    pub fn document(&self, now: u64) -> Value {
        let s = &self.settings;
        let names = s.setup.kind.side_names;
        let players: Vec<Value> = self
            .standings()
            .into_iter()
            .map(|p| {
                json!({
                    "id": p.id,
                    "name": p.name,
                    "rating": p.rating,
                    "bot": p.bot,
                    "score": p.sheet.score,
                    "sheet": p.sheet.text(),
                    "fire": p.sheet.fire(),
                    "games": p.sheet.games(),
                    "wins": p.sheet.wins,
                    "draws": p.sheet.draws,
                    "losses": p.sheet.losses,
                    "performance": p.sheet.performance(),
                    "paused": p.paused,
                    "playing": p.playing,
                })
            })
            .collect();
        let mut games = Map::new();
        for g in &self.games {
            let mut entry = Map::new();
            entry.insert(names[0].to_string(), json!(g.players[0]));
            entry.insert(names[1].to_string(), json!(g.players[1]));
            entry.insert(
                "ratings".into(),
                json!({g.players[0].as_str(): g.ratings[0], g.players[1].as_str(): g.ratings[1]}),
            );
            entry.insert("started_at".into(), json!(g.started_at));
            match &g.ended {
                None => {
                    entry.insert("status".into(), json!("playing"));
                }
                Some(e) => {
                    entry.insert(
                        "status".into(),
                        json!(if e.aborted { "aborted" } else { "ended" }),
                    );
                    entry.insert("winner".into(), json!(e.winner));
                    entry.insert("plies".into(), json!(e.plies));
                    entry.insert("berserk".into(), json!(e.berserk));
                    entry.insert("points".into(), json!(e.points));
                }
            }
            games.insert(g.id.clone(), Value::Object(entry));
        }
        let mut doc = json!({
            "id": s.id,
            "name": s.name,
            "kind": s.setup.kind_id(),
            "options": s.setup.options,
            "clock": s.setup.clock_json(),
            "rated": s.rated,
            "visibility": s.visibility.as_str(),
            "creator": {"id": s.creator.0, "name": s.creator.1},
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "cutoff_at": self.cutoff_at(),
            "status": self.status(now).as_str(),
            "berserk": s.berserk,
            "bots": s.bots,
            "min_draw_plies": s.min_draw_plies,
            "players": players,
            "games": games,
            "top_game": self.top_game(),
        });
        if let Some(code) = &s.code {
            doc["code"] = json!(code);
        }
        doc
    }

    /// The lobby's entry for a public arena that is scheduled or running.
    pub fn lobby_entry(&self, now: u64) -> Option<Value> {
        let s = &self.settings;
        if s.visibility != Visibility::Public || !self.status(now).is_open() {
            return None;
        }
        Some(json!({
            "name": s.name,
            "kind": s.setup.kind_id(),
            "options": s.setup.options,
            "clock": s.setup.clock_json(),
            "rated": s.rated,
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "status": self.status(now).as_str(),
            "players": self.players.len(),
        }))
    }
}

/// An arena as stored: its settings with the game setup as JSON, and the rest as is.
#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    name: String,
    kind: String,
    options: Value,
    clock: Value,
    rated: bool,
    visibility: Visibility,
    code: Option<String>,
    creator: (String, String),
    starts_at: u64,
    ends_at: u64,
    bots: bool,
    berserk: bool,
    min_draw_plies: u32,
    cancelled: bool,
    players: Vec<Entrant>,
    games: Vec<ArenaGame>,
    #[serde(default)]
    pairer: Option<(String, u64)>,
    /// The seq of the document as published with this version: an arena read again from
    /// the store (over and dropped from memory, or after a restart) goes on from it rather
    /// than from 0, so a watcher's seq never goes backwards (a client keeps the document
    /// with the higher seq, and would ignore the re-read one).
    #[serde(default)]
    seq: u64,
}

impl ArenaState {
    /// The state as the store keeps it, with `seq`, the seq its document is published
    /// under (see [`ArenaState::stored_seq`]).
    pub fn to_stored(&self, seq: u64) -> Value {
        let s = &self.settings;
        let stored = Stored {
            id: s.id.clone(),
            name: s.name.clone(),
            kind: s.setup.kind_id().to_string(),
            options: s.setup.options.clone(),
            clock: s.setup.clock_json(),
            rated: s.rated,
            visibility: s.visibility,
            code: s.code.clone(),
            creator: s.creator.clone(),
            starts_at: s.starts_at,
            ends_at: s.ends_at,
            bots: s.bots,
            berserk: s.berserk,
            min_draw_plies: s.min_draw_plies,
            cancelled: self.cancelled,
            players: self.players.clone(),
            games: self.games.clone(),
            pairer: self.pairer.clone(),
            seq,
        };
        serde_json::to_value(stored).unwrap_or(Value::Null)
    }

    /// The seq stored with an arena's state ([`ArenaState::to_stored`]); 0 for an arena
    /// stored before seqs were kept.
    pub fn stored_seq(v: &Value) -> u64 {
        v["seq"].as_u64().unwrap_or(0)
    }

    /// The state back from the store; `None` when it does not read (its settings no longer
    /// check, say). The sides' history is rebuilt from the games.
    pub fn from_stored(v: &Value) -> Option<ArenaState> {
        let s: Stored = serde_json::from_value(v.clone()).ok()?;
        let setup = GameSetup::stored(&s.kind, &s.options, &s.clock).ok()?;
        let mut state = ArenaState::new(Settings {
            id: s.id,
            name: s.name,
            setup,
            rated: s.rated,
            visibility: s.visibility,
            code: s.code,
            creator: s.creator,
            starts_at: s.starts_at,
            ends_at: s.ends_at,
            bots: s.bots,
            berserk: s.berserk,
            min_draw_plies: s.min_draw_plies,
        });
        state.cancelled = s.cancelled;
        state.players = s.players;
        state.games = s.games;
        state.pairer = s.pairer;
        for g in &state.games {
            state
                .sides
                .record(&g.players[0], stoa_protocol::Side::First);
            state
                .sides
                .record(&g.players[1], stoa_protocol::Side::Second);
        }
        Some(state)
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
        id: &e.id,
        score: e.sheet.score,
        performance: e.sheet.performance(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arena(now_start: u64) -> ArenaState {
        let setup = GameSetup::parse(
            "unane",
            &json!({}),
            Some(&json!({"kind":"fischer","initial_ms":15000,"increment_ms":0})),
        )
        .unwrap();
        ArenaState::new(Settings {
            id: "a1".into(),
            name: "t".into(),
            setup,
            rated: false,
            visibility: Visibility::Public,
            code: None,
            creator: ("c".into(), "C".into()),
            starts_at: now_start,
            ends_at: now_start + 90_000,
            bots: false,
            berserk: true,
            min_draw_plies: 4,
        })
    }

    fn end(a: &ArenaState, game: &str, winner: Option<&str>, plies: u32) -> ArenaGameEnd {
        let g = a.games.iter().find(|g| g.id == game).unwrap();
        ArenaGameEnd {
            game_id: game.into(),
            arena: "a1".into(),
            players: g.players.clone(),
            winner: winner.map(|w| g.players.iter().position(|p| p == w).unwrap()),
            aborted: false,
            plies,
            berserk: [false, false],
            absent: None,
        }
    }

    #[test]
    fn a_player_whose_first_move_never_came_leaves_the_pool() {
        let mut a = arena(0);
        a.join("x", "x", 1500, false);
        a.join("y", "y", 1600, false);
        let mut ids = || "g1".to_string();
        let pairs = a.pair_round(1, &|_| true, &mut ids);
        let first = pairs[0].players[0].clone();
        let second = pairs[0].players[1].clone();
        let mut e = end(&a, "g1", None, 0);
        e.aborted = true;
        e.absent = Some(0);
        assert!(a.game_ended(&e));
        assert!(
            a.entrant(&first).unwrap().paused,
            "not at the board: paused"
        );
        assert!(!a.game_ended(&e), "applied once");
        assert!(!a.entrant(&second).unwrap().paused);
        assert!(a.players.iter().all(|p| p.sheet.games() == 0), "no result");
        // Nobody left to pair the other with, until the absent player joins again.
        let mut ids = || "g2".to_string();
        assert!(a.pair_round(2, &|_| true, &mut ids).is_empty());
        a.join(&first, &first, 1500, false);
        assert!(!a.entrant(&first).unwrap().paused);
        let mut ids = || "g3".to_string();
        assert_eq!(a.pair_round(3, &|_| true, &mut ids).len(), 1);
        // The same abort scored first from the final document (which cannot tell who was
        // absent), then reported live: the player is paused all the same, once.
        let g3_first = a.games[1].players[0].clone();
        let mut from_doc = end(&a, "g3", None, 0);
        from_doc.aborted = true;
        assert!(a.game_ended(&from_doc));
        assert!(!a.entrant(&g3_first).unwrap().paused);
        let mut live = from_doc.clone();
        live.absent = Some(0);
        assert!(a.game_ended(&live));
        assert!(a.entrant(&g3_first).unwrap().paused);
        assert!(!a.game_ended(&live), "applied once");
    }

    #[test]
    fn a_round_pairs_scores_and_frees_the_players() {
        let mut n = 0;
        let mut ids = || {
            n += 1;
            format!("g{n}")
        };
        let mut b = arena(10);
        for p in ["p1", "p2", "p3", "p4"] {
            b.join(p, p, 1500, false);
        }
        // Nothing before the start.
        assert!(b.pair_round(5, &|_| true, &mut ids).is_empty());
        let pairs = b.pair_round(10, &|p| p != "p4", &mut ids);
        assert_eq!(pairs.len(), 1, "p4 is offline: one pair of three");
        let g = pairs[0].game_id.clone();
        let winner = pairs[0].players[0].clone();
        assert!(b.game_ended(&end(&b, &g, Some(&winner), 20)));
        assert!(
            !b.game_ended(&end(&b, &g, Some(&winner), 20)),
            "scored once"
        );
        let top = b.standings()[0];
        assert_eq!((top.id.as_str(), top.sheet.score), (winner.as_str(), 2));
        assert!(b.players.iter().all(|p| p.playing.is_none()));
        let doc = b.document(11);
        assert_eq!(doc["status"], "running");
        assert_eq!(doc["players"][0]["sheet"], "2");
        assert_eq!(doc["games"][g.as_str()]["status"], "ended");
        assert_eq!(doc["cutoff_at"], 75_010);
        // A pairing whose game never started is undone, last opponents included.
        let pairs = b.pair_round(20, &|_| true, &mut ids);
        assert_eq!(pairs.len(), 2);
        for p in &pairs {
            b.unpair(&p.game_id);
        }
        assert_eq!(b.games.len(), 1);
        for p in &b.players {
            let expected = if g_players(&b, &g).contains(&p.id) {
                g_players(&b, &g).into_iter().find(|x| *x != p.id)
            } else {
                None
            };
            assert_eq!(p.last_opponent, expected, "{}", p.id);
            assert_eq!(p.playing, None);
        }
        // After the cut-off nobody is paired.
        assert!(b.pair_round(75_010, &|_| true, &mut ids).is_empty());
    }

    fn g_players(a: &ArenaState, game: &str) -> Vec<String> {
        a.games
            .iter()
            .find(|g| g.id == game)
            .map(|g| g.players.to_vec())
            .unwrap_or_default()
    }

    #[test]
    fn early_draws_and_aborts() {
        let mut a = arena(0);
        a.join("x", "x", 1500, false);
        a.join("y", "y", 1600, false);
        let mut ids = || "g1".to_string();
        let pairs = a.pair_round(1, &|_| true, &mut ids);
        assert_eq!(pairs.len(), 1);
        assert!(a.game_ended(&end(&a, "g1", None, 3)));
        assert!(a.players.iter().all(|p| p.sheet.points == vec![0]));
        // y's performance: x's 1500 + 0.
        assert_eq!(a.entrant("y").unwrap().sheet.performance(), 1500);
        // The two only active players may play again.
        let mut ids = || "g2".to_string();
        assert_eq!(a.pair_round(2, &|_| true, &mut ids).len(), 1);
        let mut e = end(&a, "g2", None, 30);
        e.aborted = true;
        assert!(a.game_ended(&e));
        assert!(a.players.iter().all(|p| p.sheet.games() == 1));
        // The pairing lease: one holder until it expires.
        assert!(a.take_lease("n1", 10, 3_010));
        assert!(!a.take_lease("n2", 3_009, 6_009));
        assert!(a.take_lease("n1", 3_000, 6_000), "renewed");
        assert!(a.take_lease("n2", 6_000, 9_000), "expired: taken over");
        // The state reads back from the store as it was.
        let back = ArenaState::from_stored(&a.to_stored(7)).expect("reads back");
        assert_eq!(back.document(3), a.document(3));
        assert_eq!(back.pairer, a.pairer);
        assert!(!back.open(90_000));
        assert!(back.open(89_999));
    }
}
