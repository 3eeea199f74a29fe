//! Wire messages of protocol/docs/PROTOCOL.md version 2, as serde types shared by the server and clients.
//!
//! Why a module of plain types: the server, the reference client, bots and the tests must
//! agree byte for byte on field names, so every message lives here once. The types follow
//! `protocol/docs/PROTOCOL.md` exactly; additions (fields or messages the page does not name) are
//! marked as such in their docs and clients ignore what they do not know.
//!
//! Parsing a client frame goes through [`parse_client_message`], which separates the three
//! failure classes the protocol distinguishes: invalid JSON / missing `t` / wrong field types
//! (`bad_request`) versus an unknown `t` (`unknown_type`).

mod accounts;
mod analysis;
mod analysis_requests;
mod arena;
mod chat;
mod client;
mod client_types;
mod error;
mod explore;
mod game;
mod lessons;
mod moderation;
mod move_scan;
mod parse;
mod rid;
mod rooms;
mod server;

pub use accounts::*;
pub use analysis::*;
pub use analysis_requests::*;
pub use arena::*;
pub use chat::*;
pub use client::*;
pub use client_types::*;
pub use error::*;
pub use explore::*;
pub use game::*;
pub use lessons::*;
pub use moderation::*;
pub use parse::*;
pub use rid::*;
pub use rooms::*;
pub use server::*;

/// The protocol version this module implements (`hello.protocol`, `welcome.protocol`).
pub const PROTOCOL_VERSION: u32 = 1;
