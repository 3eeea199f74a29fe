//! The error every request handler returns: a protocol code and a message for a person.
//!
//! Why a small struct instead of a big enum: every failure ends up as one `error` frame,
//! and the code set is fixed by protocol/docs/PROTOCOL.md; handlers pick the code where they know why.

use stoa_protocol::wire::{ErrorCode, Rid, ServerMessage};

/// A failed request (nothing changed): the code and a message for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The protocol error code.
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// The `error` frame answering the request `rid`.
    pub fn to_message(&self, rid: Option<Rid>) -> ServerMessage {
        ServerMessage::error(rid, self.code, self.message.clone())
    }

    /// `not_found` for a game id.
    pub fn no_game(id: &str) -> Self {
        ApiError::new(ErrorCode::NotFound, format!("no game '{id}'"))
    }

    /// `not_found` for a room code, echoed as it was typed ([`crate::ids::typed_code`]).
    pub fn no_room(typed: &str) -> Self {
        ApiError::new(
            ErrorCode::NotFound,
            format!("no room '{}'", crate::ids::typed_code(typed)),
        )
    }

    /// `forbidden` for someone who may not see a private game.
    pub fn private_game() -> Self {
        ApiError::new(
            ErrorCode::Forbidden,
            "this game is private: watch it with its room code",
        )
    }

    /// `unavailable` after a store failure.
    pub fn store(e: impl std::fmt::Display) -> Self {
        ApiError::new(
            ErrorCode::Unavailable,
            format!("storage unavailable, try again: {e}"),
        )
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}
