//! The crowd: the spectator count and whether each player is online.
//!
//! Why outside the document: people coming and going must never move `seq` nor evict the
//! replay buffer, so the crowd goes out as unversioned `game.crowd` frames; the owner sums
//! every node's spectators and presence, followers relay what it publishes.

use crate::ids::PlayerId;
use crate::net::frame::Frame;
use serde_json::{Map, Value};
use stoa_protocol::wire::{ServerMessage, Visibility};

use super::{Actor, Role};
use crate::cluster::messages::BusMessage;

impl Actor {
    /// The `game.crowd` frame: the spectator count and each seated player's online flag.
    pub(super) fn crowd_frame(&self, spectators: u64) -> Frame {
        let names = self.core.side_names();
        let mut online = Map::new();
        for (i, p) in self.core.player_ids().iter().enumerate() {
            online.insert(
                names[i].to_string(),
                Value::Bool(self.is_online(&PlayerId::from(*p))),
            );
        }
        let msg = ServerMessage::GameCrowd {
            game_id: self.core.id().to_string(),
            spectators,
            online,
        };
        Frame::text(msg.to_json())
    }

    /// Publishes a changed spectator count (batched: called on every tick).
    pub(super) async fn flush_crowd(&mut self) {
        if self.total_watchers() != self.spectators {
            self.crowd_out().await;
            if self.core.visibility() == Visibility::Public && self.core.result().is_none() {
                self.update_summary();
            }
        }
    }

    /// Spectators here and, for an owner, on every other node.
    pub(super) fn total_watchers(&self) -> u64 {
        let remote = match &self.role {
            Role::Owner(o) => o.remote_watchers.values().sum::<u64>(),
            Role::Follower(_) => 0,
        };
        self.published.others() + remote
    }

    /// Whether a player has a connection on this node or (as the owner knows) another.
    pub(super) fn is_online(&self, player_id: &PlayerId) -> bool {
        let elsewhere = match &self.role {
            Role::Owner(o) => o
                .remote_online
                .get(player_id)
                .is_some_and(|nodes| !nodes.is_empty()),
            Role::Follower(_) => false,
        };
        self.online.get(player_id).copied().unwrap_or(false) || elsewhere
    }

    /// The crowd goes out: to this node's subscribers and, from an owner, to every
    /// follower's.
    pub(super) async fn crowd_out(&mut self) {
        self.spectators = self.total_watchers();
        let frame = self.crowd_frame(self.spectators);
        self.broadcast(frame.clone());
        self.caps
            .peers
            .publish(&BusMessage::Crowd {
                game: self.core.id().clone(),
                frame: frame.payload_text().to_string(),
            })
            .await;
    }

    /// A seated player's first connection or last disconnection here (`node: None`) or on
    /// another node: published at once when it changes whether the player is online.
    pub(super) async fn presence(
        &mut self,
        player_id: &PlayerId,
        node: Option<&str>,
        online: bool,
    ) {
        if self.core.side_of(player_id).is_none() {
            return;
        }
        let before = self.is_online(player_id);
        match node {
            None => {
                self.online.insert(player_id.clone(), online);
            }
            Some(node) => {
                let Role::Owner(o) = &mut self.role else {
                    return;
                };
                let nodes = o.remote_online.entry(player_id.clone()).or_default();
                if online {
                    nodes.insert(node.to_string());
                } else {
                    nodes.remove(node);
                }
            }
        }
        let after = self.is_online(player_id);
        if before == after {
            return;
        }
        if after {
            self.offline_since.remove(player_id);
        } else {
            self.offline_since
                .insert(player_id.clone(), self.caps.time.now_ms());
        }
        self.crowd_out().await;
    }
}
