//! The network edge: sockets, HTTP and the web client's files.
//!
//! Why a layer: everything about connections (accepting them, the one task each
//! websocket runs, the HTTP routes) lives above the sessions, so the rest of the server never sees a
//! socket. [`outbound`], the handle a connection is sent to through, is the exception the
//! layer table names: the game actors and services below send through it.

mod admin;
mod api;
pub mod app;
pub mod connection;
pub mod fanout;
pub mod frame;
pub mod listener;
pub mod outbound;
pub mod rules;
pub mod socket;
mod state;
pub mod upgrade;
pub mod web;
