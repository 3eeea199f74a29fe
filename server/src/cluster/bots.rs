//! Computer opponents across the cluster ([`crate::services::topology::Listings`]): a person may ask for a bot on any node, whichever
//! node the serving `stoa bot` process is connected to.
//!
//! Why a claim key per bot: two nodes may pick the same free bot at once; the first `SET NX`
//! wins and the other looks further. Each node lists the bots serving on it under its own
//! key that lapses with the node (like its lobby part), so a dead node's bots are never
//! offered. The claim is dropped when the bot says `bot.serve` again (it is free); a claim
//! whose bot vanished lapses after [`CLAIM_MS`].

use super::Cluster;
use crate::ids::PlayerId;
use crate::services::topology::ServedBot;

/// How long a claimed bot stays taken without saying `bot.serve` again (a long game's
/// length; a bot that finishes earlier frees itself at once).
const CLAIM_MS: u64 = 6 * 60 * 60 * 1000;

impl Cluster {
    /// Lists the bots serving on this node for the others (lapses with the node).
    pub(super) async fn put_bots(&self, bots: &[ServedBot]) {
        let mut conn = self.store.connection();
        let key = self.store.key(&["bots", &self.node]);
        let text = serde_json::to_string(bots).unwrap_or_else(|_| "[]".into());
        let _: Result<(), _> = self
            .store
            .call(redis::AsyncCommands::pset_ex(
                &mut conn,
                &key,
                text,
                3 * self.lease_ms,
            ))
            .await;
    }

    /// The bots serving on the other live nodes.
    pub(super) async fn remote_bots(&self) -> Vec<ServedBot> {
        let mut out = Vec::new();
        for node in self.nodes().await {
            if node == self.node {
                continue;
            }
            let mut conn = self.store.connection();
            let key = self.store.key(&["bots", &node]);
            let text: Option<String> = self
                .store
                .call(redis::AsyncCommands::get(&mut conn, &key))
                .await
                .unwrap_or_default();
            if let Some(list) = text.and_then(|t| serde_json::from_str::<Vec<ServedBot>>(&t).ok()) {
                out.extend(list);
            }
        }
        out
    }

    /// Takes `player` (a bot) for one game; `false` when another node (or this one) already
    /// did, or Redis cannot say.
    pub(super) async fn claim_bot(&self, player: &PlayerId) -> bool {
        let key = self.store.key(&["botclaim", player.as_str()]);
        matches!(self.take_key(&key, &self.node, CLAIM_MS).await, Ok(true))
    }

    /// `player` (a bot) is free again: it said `bot.serve`, or the game it was claimed for
    /// could not be set up.
    pub(super) async fn free_bot(&self, player: &PlayerId) {
        let mut conn = self.store.connection();
        let key = self.store.key(&["botclaim", player.as_str()]);
        let _: Result<i64, _> = self
            .store
            .call(redis::AsyncCommands::del(&mut conn, &key))
            .await;
    }
}
