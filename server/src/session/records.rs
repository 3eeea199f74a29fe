//! The requests about finished games and what they made of players: `game.record` (the
//! portable text record), `history` (a player's finished games, page by page), `player` (a
//! player's page: ratings and recent games) and `leaderboard` (a kind's best players).

use super::*;

impl Session {
    /// The records family: `game.record`, `history`, `player` and `leaderboard`.
    pub(super) async fn dispatch_record(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            // Boxed: a rare request's state must not grow every idle connection's task.
            ClientMessage::GameRecord { rid, game_id, code } => {
                Box::pin(self.record(rid, game_id, code)).await
            }
            ClientMessage::History {
                rid,
                player_id,
                before,
                limit,
            } => Box::pin(self.history(rid, player_id, before, limit)).await,
            ClientMessage::Player { rid, player_id } => Box::pin(self.player(rid, player_id)).await,
            ClientMessage::Leaderboard { rid, kind } => Box::pin(self.leaderboard(rid, kind)).await,
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

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
            .finished_for(
                &GameId::from(game_id.as_str()),
                Some(me.as_str()),
                code.as_deref(),
            )
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
        let whose = player_id.map(PlayerId::from).unwrap_or_else(|| me.clone());
        let (games, next_before) = self
            .hub
            .records
            .history(&whose, Some(me.as_str()), before, limit)
            .await?;
        self.send(&ServerMessage::History {
            rid,
            games,
            next_before,
        });
        Ok(())
    }

    /// `player`: a player's page (the asker's by default), as `GET /api/players/<id>`.
    pub(super) async fn player(
        &mut self,
        rid: Option<Rid>,
        player_id: Option<String>,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let whose = player_id.map(PlayerId::from).unwrap_or_else(|| me.clone());
        let player = self.hub.profiles.player(&whose, Some(me.as_str())).await?;
        self.send(&ServerMessage::Player { rid, player });
        Ok(())
    }

    /// `leaderboard`: a kind's leaderboard, as `GET /api/leaderboard/<kind>`.
    pub(super) async fn leaderboard(
        &mut self,
        rid: Option<Rid>,
        kind: String,
    ) -> Result<(), ApiError> {
        let board = self.hub.profiles.leaderboard(&kind).await?;
        self.send(&ServerMessage::Leaderboard {
            rid,
            kind: board.kind.to_string(),
            players: board.players,
        });
        Ok(())
    }
}
