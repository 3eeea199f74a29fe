//! Practice positions: `position.explore`, answered from the engines alone.

use super::*;

impl Session {
    /// `position.explore`: the position after a line of moves, its legal moves and view.
    /// Pure computation on the engines, so a lesson or an analysis board can ask as often
    /// as it likes: no game is made, nothing is stored, listed or rated.
    pub(super) fn explore(
        &mut self,
        rid: Option<Rid>,
        kind: &str,
        options: &Value,
        position: Option<&str>,
        moves: &[String],
    ) -> Result<(), ApiError> {
        let explored = crate::services::explore::explore(kind, options, position, moves)?;
        self.send(&ServerMessage::Position {
            rid,
            explored: Box::new(explored),
        });
        Ok(())
    }
}
