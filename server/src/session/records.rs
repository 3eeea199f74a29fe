//! The requests about finished games: `game.record` (the portable text record) and
//! `history` (a player's finished games, page by page).

use super::*;

impl Session {
    /// `game.record`: a finished game's text record, for its players, anyone for a public
    /// game, or whoever gives its room's code.
    pub(super) async fn record(
        &mut self,
        rid: Option<Rid>,
        game_id: String,
        code: Option<String>,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let (setup, finished) = self
            .hub
            .records
            .finished_for(&game_id, Some(&me), code.as_deref())
            .await?;
        self.send(&ServerMessage::Record {
            rid,
            game_id,
            text: crate::services::records::record(&setup, &finished).to_text(),
        });
        Ok(())
    }

    /// `history`: one page of a player's finished games (the asker's by default).
    pub(super) async fn history(
        &mut self,
        rid: Option<Rid>,
        player_id: Option<String>,
        before: Option<u64>,
        limit: Option<u64>,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let whose = player_id.unwrap_or_else(|| me.clone());
        let (games, next_before) = self
            .hub
            .records
            .history(&whose, Some(&me), before, limit)
            .await?;
        self.send(&ServerMessage::History {
            rid,
            games,
            next_before,
        });
        Ok(())
    }
}
