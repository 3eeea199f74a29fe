//! `report`: a player reports another (see [`crate::services::moderator::reports`]).

use super::*;
use crate::services::moderator::reports::{self, Reporter};
use stoa_protocol::wire::ReportRequest;

impl Session {
    /// Opens the report and answers `reported` with its id.
    pub(super) async fn report(&mut self, ask: ReportRequest) -> Result<(), ApiError> {
        let rid = ask.rid.clone();
        let me = self.me()?.clone();
        let by = Reporter {
            player: &me,
            conn_id: self.conn.id,
        };
        let report_id = reports::open(&self.hub, by, ask).await?;
        self.send(&ServerMessage::Reported { rid, report_id });
        Ok(())
    }
}
