//! The services layer: the server's use cases, each built with the handles it needs.
//!
//! Why here: services sit over the game layer (actors and the registries they live in) and
//! under the sessions that turn requests into service calls. They reach other nodes only
//! through the [`topology`] seam, answered by a single node or by the cluster; [`hub`]
//! bundles them for the sessions and the HTTP edge.

pub mod accounts;
pub mod analysis;
pub mod arenas;
pub mod bots;
pub mod explore;
pub mod hosting;
pub mod hub;
pub mod identities;
pub mod lessons;
pub mod lobby;
pub mod matchmaker;
pub mod moderation;
pub mod moderator;
pub mod profiles;
pub mod ratings;
pub mod records;
pub mod recovery;
pub mod registries;
pub mod room_chat;
pub mod rooms;
pub mod rtt;
pub mod starter;
pub mod topology;
