//! The ends of an arena's games: reported by their actors (scored at once, and the arena
//! pairs again), or read from a finished game's document when the report was lost.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use super::Arenas;
use crate::game::capabilities::ArenaGameEnd;
use crate::ids::{ArenaId, GameId};

impl Arenas {
    /// Reads arena games' ends until the server stops: each is scored (and stored), and
    /// its arena pairs again at once.
    pub(super) async fn read_ends(
        self: Arc<Self>,
        mut ends: mpsc::UnboundedReceiver<ArenaGameEnd>,
    ) {
        while let Some(end) = ends.recv().await {
            let cell = match self.cell(&end.arena).await {
                Ok(Some(cell)) => cell,
                Ok(None) => {
                    tracing::warn!(arena = %end.arena, game = %end.game_id, "an end for an unknown arena");
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, arena = %end.arena, game = %end.game_id,
                        "cannot read the arena to score a game");
                    continue;
                }
            };
            match self.mutate(&cell, |s| Ok(s.game_ended(&end))).await {
                Ok(true) => cell.wake.notify_one(),
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(error = %e, game = %end.game_id, "cannot score an arena game")
                }
            }
        }
    }
}

/// How a finished arena game ended, read from its final document.
pub(super) fn end_of(arena: &ArenaId, game: &GameId, doc: &Value) -> Option<ArenaGameEnd> {
    let kind = stoa_protocol::kind(doc["kind"].as_str()?).ok()?;
    let names = kind.side_names;
    let players = names.map(|n| doc["players"][n]["id"].as_str().unwrap_or_default().into());
    let status = &doc["status"];
    let winner = status["winner"]
        .as_str()
        .and_then(|w| names.iter().position(|n| *n == w));
    Some(ArenaGameEnd {
        game_id: game.clone(),
        arena: arena.clone(),
        players,
        winner,
        aborted: status["reason"] == "aborted",
        plies: doc["moves"].as_array().map_or(0, |m| m.len() as u32),
        berserk: names.map(|n| doc["arena"]["berserk"][n] == true),
        // A final document does not say whose first action was missing.
        absent: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_end_reads_from_a_final_document() {
        let doc = json!({"kind":"unane",
            "players":{"white":{"id":"pw"},"black":{"id":"pb"}},
            "status":{"state":"ended","winner":"black","reason":"resign"},
            "moves":["a","b","c"],
            "arena":{"id":"a1","berserk":{"white":false,"black":true}}});
        let end = end_of(&"a1".into(), &"g1".into(), &doc).expect("an end");
        // Ūnane's sides are black (first) and white.
        assert_eq!(end.players, ["pb".to_string(), "pw".to_string()]);
        assert_eq!(end.winner, Some(0));
        assert!(!end.aborted);
        assert_eq!(end.plies, 3);
        assert_eq!(end.berserk, [true, false]);
        let mut aborted = doc.clone();
        aborted["status"] = json!({"state":"ended","winner":null,"reason":"aborted"});
        let end = end_of(&"a1".into(), &"g1".into(), &aborted).expect("an end");
        assert!(end.aborted && end.winner.is_none());
        assert!(end_of(&"a1".into(), &"g1".into(), &json!({"kind":"chess"})).is_none());
    }
}
