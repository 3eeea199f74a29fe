//! The error codes an `error` answer carries.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Error codes of protocol/docs/PROTOCOL.md's Errors section, serialised as the exact code strings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Invalid JSON, a missing `t`, wrong field types, a binary frame.
    BadRequest,
    /// A `t` the server does not know.
    UnknownType,
    /// A first message other than `hello`, or an unknown/revoked token.
    Unauthorized,
    /// An unknown game id or room code.
    NotFound,
    /// The player may not do this (a spectator acting, a private game without its code).
    Forbidden,
    /// A move by the side not to act.
    NotYourTurn,
    /// A move the rules reject (the reason is in `message`).
    IllegalMove,
    /// `seq` given with a move is not the current one.
    StaleSeq,
    /// An action on an ended game.
    GameOver,
    /// An action not allowed in the game's or room's current state.
    Conflict,
    /// Too many requests in the window.
    RateLimited,
    /// The server cannot serve this now (store down, shutting down).
    Unavailable,
    /// Room/queue options rejected by the game's validation.
    InvalidOptions,
}

impl ErrorCode {
    /// The wire string of the code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::IllegalMove => "illegal_move",
            ErrorCode::StaleSeq => "stale_seq",
            ErrorCode::GameOver => "game_over",
            ErrorCode::Conflict => "conflict",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::InvalidOptions => "invalid_options",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
