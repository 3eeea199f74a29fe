//! Finished games as people look them up: the full record behind `GET /api/games/<id>`, the
//! portable text record (`GET /api/games/<id>/record`, `game.record`), and the one-line
//! summaries of a player's history (`GET /api/players/<id>/games`, `history`).
//!
//! Why built from the store's two pieces (the setup and the final document) rather than kept
//! as a third copy: both are already written when a game ends, and a record is read far less
//! often than games end.

use serde_json::{json, Map, Value};
use stoa_protocol::clock::TimeControl;
use stoa_protocol::record::{utc, Record};
use stoa_protocol::wire::{ErrorCode, Visibility};

use std::sync::Arc;

use crate::domain::visibility::Access;
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::ids::{GameId, PlayerId, RoomCode};
use crate::metrics::Metrics;
use crate::store::{FinishedGame, GameRecord, Store, StoreResult};

/// How many games one history page holds by default, and at most.
pub const PAGE: u64 = 20;
/// The largest history page.
pub const MAX_PAGE: u64 = 100;

/// Finished games as read from the store.
pub struct Records {
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records").finish_non_exhaustive()
    }
}

impl Records {
    /// Records in `store` (its calls timed in `metrics`).
    pub fn new(store: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Records { store, metrics }
    }

    async fn call<T>(
        &self,
        fut: impl std::future::Future<Output = StoreResult<T>>,
    ) -> Result<T, ApiError> {
        timed_store_call(&self.metrics, fut).await
    }

    /// A finished game's setup and final document, for `viewer` (a player id, if known) or
    /// whoever gives its room `code`: `not_found` when there is no such finished game,
    /// `forbidden` for a private game seen by anyone else.
    pub async fn finished_for(
        &self,
        game_id: &GameId,
        viewer: Option<&str>,
        code: Option<&str>,
    ) -> Result<(GameRecord, FinishedGame), ApiError> {
        let finished = self.call(self.store.finished_game(game_id)).await?;
        let setup = self.call(self.store.game(game_id)).await?;
        let (Some(finished), Some(setup)) = (finished, setup) else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no finished game '{game_id}'"),
            ));
        };
        let access = Access {
            visibility: setup.visibility,
            players: [setup.players[0].id.as_str(), setup.players[1].id.as_str()],
            code: setup.code.as_ref().map(RoomCode::as_str),
        };
        if access.may_see(viewer, code) {
            Ok((setup, finished))
        } else {
            Err(ApiError::private_game())
        }
    }

    /// One page of `player_id`'s finished games, newest first, as `viewer` may see them (their
    /// own private games only to themselves), and the `before` of the next page (`None` on the
    /// last one).
    pub async fn history(
        &self,
        player_id: &PlayerId,
        viewer: Option<&str>,
        before: Option<u64>,
        limit: Option<u64>,
    ) -> Result<(Vec<Value>, Option<u64>), ApiError> {
        let limit = limit.unwrap_or(PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("limit must be 1-{MAX_PAGE}, got {limit}"),
            ));
        }
        // An unknown player has no history to be empty: say so rather than list nothing.
        if self.call(self.store.player(player_id)).await?.is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no player '{player_id}'"),
            ));
        }
        let own = viewer == Some(player_id.as_str());
        let limit = limit as usize;
        let mut games = Vec::new();
        // Where the next page starts: just before the last index entry looked at.
        let mut cursor = before;
        let mut looked = 0;
        // Games the viewer may not see (another player's private ones) are skipped, and the
        // page is filled from further down the index, so a page is never empty while visible
        // games follow; the look is bounded, so one request never walks a huge index.
        let more = 'index: loop {
            // One more than asked tells whether another page follows.
            let ids = self
                .call(self.store.finished_games_of(player_id, cursor, limit + 1))
                .await?;
            let batch = ids.len();
            for (id, ended) in ids {
                if games.len() == limit || looked == HISTORY_LOOK {
                    break 'index true;
                }
                looked += 1;
                cursor = Some(ended);
                let finished = self.call(self.store.finished_game(&id)).await?;
                let setup = self.call(self.store.game(&id)).await?;
                // A game whose keys expired (retention) leaves its index entry behind for a
                // moment.
                let (Some(finished), Some(setup)) = (finished, setup) else {
                    continue;
                };
                if setup.visibility == Visibility::Public || own {
                    games.push(summary(&setup, &finished));
                }
            }
            if batch <= limit {
                break false;
            }
        };
        Ok((games, cursor.filter(|_| more)))
    }
}

/// The most index entries one history request looks at (visible or not).
const HISTORY_LOOK: usize = 10 * MAX_PAGE as usize;

/// The game's full record as JSON: the final document (as `game.snapshot` carries it) with
/// one added member, `record`, holding what only the store knows: the final seq, start and
/// end times, ratings after a rated game, the game it is a rematch of.
pub fn full_json(setup: &GameRecord, finished: &FinishedGame) -> Value {
    let mut doc = finished.doc.clone();
    if let Value::Object(m) = &mut doc {
        m.insert(
            "record".into(),
            json!({
                "seq": finished.seq,
                "started_ms": setup.created_ms,
                "ended_ms": finished.ended_ms,
                "ratings_after": finished.ratings_after,
                "rematch_of": setup.rematch_of,
                "arena": setup.arena.as_ref().map(|a| a.id.as_str()),
            }),
        );
    }
    doc
}

fn rating_text(v: &Value) -> Option<String> {
    v.as_f64()
        .or_else(|| v["rating"].as_f64())
        .map(|r| format!("{}", r.round()))
}

/// The portable text record of a finished game.
pub fn record(setup: &GameRecord, finished: &FinishedGame) -> Record {
    let doc = &finished.doc;
    let mut r = Record::default();
    r.set("Game", setup.kind.clone());
    r.set(
        "Options",
        serde_json::to_string(&doc["options"]).unwrap_or_default(),
    );
    r.set("Id", setup.id.clone());
    // A game from a position says where it started (like PGN's FEN tag): its moves are
    // played from there.
    if let Some(start) = &setup.start {
        r.set("Start", start.clone());
    }
    let sides: Vec<String> = stoa_protocol::kind(&setup.kind)
        .map(|k| k.side_names.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    // An unrated game changed no rating: its record names none, so a reader never takes
    // the ratings players had for ones the game counted for.
    let rated = doc["rated"] == true;
    for side in &sides {
        let p = &doc["players"][side.as_str()];
        let tag = capitalized(side);
        r.set(&tag, p["name"].as_str().unwrap_or("?"));
        r.set(&format!("{tag}Id"), p["id"].as_str().unwrap_or("?"));
        if !rated {
            continue;
        }
        if let Some(before) = rating_text(&p["rating"]) {
            r.set(&format!("{tag}Rating"), before);
        }
        if let Some(after) = finished
            .ratings_after
            .as_ref()
            .and_then(|a| rating_text(&a[side.as_str()]))
        {
            r.set(&format!("{tag}RatingAfter"), after);
        }
    }
    let clock = serde_json::from_value::<TimeControl>(setup.clock.clone())
        .map(|tc| tc.label())
        .unwrap_or_else(|_| "?".into());
    r.set("Clock", clock);
    r.set("Rated", if doc["rated"] == true { "yes" } else { "no" });
    // An arena game names its arena: its final standings are at /api/arenas/{id}.
    if let Some(arena) = &setup.arena {
        r.set("Arena", arena.id.clone());
    }
    r.set("Date", utc(setup.created_ms));
    if finished.ended_ms > 0 {
        r.set("End", utc(finished.ended_ms));
    }
    let status = &doc["status"];
    let reason = status["reason"].as_str().unwrap_or("unknown");
    let result = match (status["winner"].as_str(), reason) {
        (_, "aborted") => "aborted".to_string(),
        (Some(w), _) => w.to_string(),
        (None, _) => "draw".to_string(),
    };
    r.set("Result", result);
    r.set("Reason", reason);
    r.moves = doc["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    r
}

/// Every position of a finished game, for stepping through it: `{"moves": [...],
/// "states": [...]}` where `states[i]` is the document's `state` after `i` moves from the
/// game's start, its `start` position when it has one (the client draws boards from that
/// and knows no rules). A record the rules refuse (it never
/// should) is a `conflict` naming the move.
pub fn replay(setup: &GameRecord, finished: &FinishedGame) -> Result<Value, ApiError> {
    let doc = &finished.doc;
    let broken = |what: String| {
        ApiError::new(
            ErrorCode::Conflict,
            format!("this record cannot be replayed: {what}"),
        )
    };
    let kind = stoa_protocol::kind(&setup.kind).map_err(|e| broken(e.to_string()))?;
    // From where the game started: the kind's start, or the position it was created from.
    let mut game = match &setup.start {
        Some(start) => kind.from_position(&doc["options"], start),
        None => kind.start(&doc["options"]),
    }
    .map_err(|e| broken(e.to_string()))?;
    let moves: Vec<String> = doc["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut states = vec![game.view()];
    for m in &moves {
        game.play(m)
            .map_err(|e| broken(format!("the record's move {m}: {e}")))?;
        states.push(game.view());
    }
    Ok(json!({"moves": moves, "states": states}))
}

/// One line of a player's history: who played what, how it ended, when.
pub fn summary(setup: &GameRecord, finished: &FinishedGame) -> Value {
    let doc = &finished.doc;
    let mut players = Map::new();
    if let Some(m) = doc["players"].as_object() {
        for (side, p) in m {
            players.insert(
                side.clone(),
                json!({"id": p["id"], "name": p["name"], "rating": p["rating"]}),
            );
        }
    }
    let mut line = json!({
        "id": setup.id,
        "kind": setup.kind,
        "options": doc["options"],
        "clock": setup.clock,
        "rated": doc["rated"],
        "visibility": setup.visibility,
        "players": players,
        "status": doc["status"],
        "moves": doc["moves"].as_array().map_or(0, Vec::len),
        "started_ms": setup.created_ms,
        "ended_ms": finished.ended_ms,
        "ratings_after": finished.ratings_after,
    });
    // Only a game from a position has the member: other lines stay as they were.
    if let (Some(start), Value::Object(m)) = (&setup.start, &mut line) {
        m.insert("start".into(), json!(start));
    }
    line
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
