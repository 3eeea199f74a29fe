//! The lessons' progress from a connection: `lesson.done` (a step done) and
//! `lessons.progress` (the steps done), for the connection's player. The rules live in
//! [`crate::services::lessons`].

use stoa_protocol::wire::{LessonDone, LessonsProgressRequest};

use super::*;
use crate::services::lessons;

impl Session {
    /// `lesson.done` and `lessons.progress`.
    pub(super) async fn dispatch_lessons(&mut self, msg: ClientMessage) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        let (store, metrics) = (&*self.hub.store, &*self.hub.metrics);
        match msg {
            ClientMessage::LessonDone(LessonDone { rid, kind, step }) => {
                lessons::mark_done(store, metrics, &me, &kind, &step).await?;
                self.ok(rid, None, None);
                Ok(())
            }
            ClientMessage::LessonsProgress(LessonsProgressRequest { rid }) => {
                let done = lessons::progress(store, metrics, &me).await?;
                self.send(&ServerMessage::LessonsProgress { rid, done });
                Ok(())
            }
            // Routed here only by `dispatch_more`.
            _other => Err(unexpected()),
        }
    }

    /// Carries this connection's lesson progress to `into`, the player this device is about
    /// to become (`link.redeem`, `account.login`): the guest it was is left behind, what it
    /// learnt is not.
    pub(super) async fn carry_lessons(&self, into: &PlayerId) -> Result<(), ApiError> {
        let me = self.me()?.id.clone();
        lessons::merge(&*self.hub.store, &self.hub.metrics, &me, into).await
    }
}
