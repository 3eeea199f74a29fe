//! The lessons' progress (addition): which steps of each kind's lesson a player has done.
//! The server keeps it per player, so it follows the player (and the account) to every
//! device; the requests are the fields of their messages, newtype variants of
//! [`super::ClientMessage`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Rid;

/// `lesson.done`: a step of a kind's lesson (`protocol/lessons/<kind>.json`) is done.
/// Answered by `ok`; saying it again changes nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LessonDone {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// The game kind whose lesson it is.
    pub kind: String,
    /// The step's id in the lesson file.
    pub step: String,
}

/// `lessons.progress`: asks for the steps this player has done, answered by
/// [`super::ServerMessage::LessonsProgress`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LessonsProgressRequest {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
}

/// The steps done: every kind with a lesson, each with the ids of its steps done, in the
/// lesson's order.
pub type LessonsDone = BTreeMap<String, Vec<String>>;
