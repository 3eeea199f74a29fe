//! The engine-review requests of a session: asking for a finished game's review, and the
//! worker's side (serving, sending a result). See `crate::services::analysis`.

use stoa_protocol::wire::{
    AnalysisRequestBody, AnalysisResult, AnalysisResultBody, AnalysisServeBody,
};

use super::*;

impl Session {
    /// `analysis.request`, `analysis.serve` and `analysis.result`.
    pub(super) async fn dispatch_analysis(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        match msg {
            ClientMessage::AnalysisRequest(AnalysisRequestBody { rid, game_id, code }) => {
                Box::pin(self.analysis_request(rid, GameId::from(game_id), code)).await
            }
            ClientMessage::AnalysisServe(AnalysisServeBody { rid, kinds, key }) => {
                Box::pin(self.analysis_serve(rid, kinds, key.as_deref())).await
            }
            ClientMessage::AnalysisResult(AnalysisResultBody { rid, job, result }) => {
                Box::pin(self.analysis_result(rid, &job, &result)).await
            }
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

    /// `analysis.request`: queues the review of a finished game the caller may see (once
    /// per game; one pending request per player) and answers where it stands.
    async fn analysis_request(
        &mut self,
        rid: Option<Rid>,
        game_id: GameId,
        code: Option<String>,
    ) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        self.hub
            .records
            .finished_for(&game_id, Some(me.as_str()), code.as_deref())
            .await?;
        let review = self.hub.analysis.request(&game_id, &me).await?;
        self.send(&review.message(rid, &game_id));
        Ok(())
    }

    /// `analysis.serve`: this connection (a computer player: `stoa analyse --serve`) is a
    /// free analysis worker, if it says one of the workers' keys where the node has them.
    async fn analysis_serve(
        &mut self,
        rid: Option<Rid>,
        kinds: Vec<String>,
        key: Option<&str>,
    ) -> Result<(), ApiError> {
        if !self.me()?.bot {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only a computer player (stoa analyse --serve) may serve analysis",
            ));
        }
        self.hub.analysis.admits(key)?;
        if let Some(k) = kinds.iter().find(|k| stoa_protocol::kind(k).is_err()) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("unknown game kind '{k}'"),
            ));
        }
        self.hub.analysis.serve(self.conn.clone(), kinds).await;
        self.ok(rid, None, None);
        Ok(())
    }

    /// `analysis.result`: a worker's review of the job it holds.
    async fn analysis_result(
        &mut self,
        rid: Option<Rid>,
        job: &str,
        result: &AnalysisResult,
    ) -> Result<(), ApiError> {
        self.me()?;
        self.hub.analysis.result(self.conn.id, job, result).await?;
        self.ok(rid, None, None);
        Ok(())
    }
}
