//! An arena as the store keeps it, and read back.
//!
//! Why its own shape: the settings' game setup is stored as the JSON it was checked from
//! (and checked again when read back), and the seq its document was published under goes
//! with it, so an arena read again never publishes under a lower seq.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_protocol::wire::Visibility;

use super::{ArenaGame, ArenaState, Entrant, Settings};
use crate::domain::setup::GameSetup;
use crate::ids::{ArenaId, PlayerId};

/// An arena as stored: its settings with the game setup as JSON, and the rest as is.
#[derive(Serialize, Deserialize)]
struct Stored {
    id: ArenaId,
    name: String,
    kind: String,
    options: Value,
    clock: Value,
    rated: bool,
    visibility: Visibility,
    code: Option<String>,
    creator: (PlayerId, String),
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
}
