//! The engine-review requests (addition): a player asking for a finished game's review, and
//! an analysis worker offering to review and reporting its result. Each is the fields of
//! its message (`{"t":"analysis.request","game_id":...}`), a newtype variant of
//! [`super::ClientMessage`].

use serde::{Deserialize, Serialize};

use super::{AnalysisResult, Rid};

/// `analysis.request`: the engine review of a finished game (see `analysis`): queued for an
/// analysis worker once per game, one pending request per player at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnalysisRequestBody {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// The finished game.
    pub game_id: String,
    /// The room code of a private game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `analysis.serve`: an analysis worker (`stoa analyse --serve`) is free for a job (games of
/// `kinds`, every kind when empty); it gets `analysis.job`, one at a time, and says this
/// again when free.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnalysisServeBody {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// Game kinds reviewed (empty: all).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// The worker's key, where the server requires one (`--analysis-keys`): a key it does
    /// not know, or none, is `forbidden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// `analysis.result`: a worker's review of the job it was given (`analysis.job`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnalysisResultBody {
    /// Request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rid: Option<Rid>,
    /// The job, as `analysis.job` named it.
    pub job: String,
    /// The review.
    pub result: AnalysisResult,
}
