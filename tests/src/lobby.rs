//! Helpers for the lobby and matchmaking tests: a lobby document kept up to date from its
//! diffs, and reading a client's messages with a deadline that is allowed to pass.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{Client, Server};

/// The next message matching `pred` within `within` (pending first), or `None` when none
/// came; messages that do not match stay queued in order.
pub async fn recv_within(
    client: &mut Client,
    within: Duration,
    pred: impl Fn(&Value) -> bool,
) -> Option<Value> {
    if let Some(i) = client.pending.iter().position(&pred) {
        return client.pending.remove(i);
    }
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let frame = tokio::time::timeout_at(deadline, client.read_frame()).await;
        match frame {
            Err(_) => return None,
            Ok(Ok(v)) if pred(&v) => return Some(v),
            Ok(Ok(v)) => client.pending.push_back(v),
            Ok(Err(code)) => panic!("connection closed ({code}) while waiting"),
        }
    }
}

/// A lobby document kept up to date by applying `lobby.diff`s, checking the seq chain.
#[derive(Clone, Debug)]
pub struct LobbyView {
    /// Current seq.
    pub seq: u64,
    /// Current document.
    pub doc: Value,
    /// Number of diffs applied.
    pub diffs: usize,
}

impl LobbyView {
    /// Sends `lobby.watch` and starts from its answer.
    pub async fn watch(client: &mut Client) -> LobbyView {
        let snap = client.request(json!({"t":"lobby.watch"})).await;
        assert_eq!(snap["t"], "lobby", "lobby.watch failed: {snap}");
        for key in ["rooms", "games", "queues"] {
            assert!(snap["doc"][key].is_object(), "{key} missing: {snap}");
        }
        assert!(snap["doc"]["online"].is_u64(), "{snap}");
        LobbyView {
            seq: snap["seq"].as_u64().expect("seq"),
            doc: snap["doc"].clone(),
            diffs: 0,
        }
    }

    /// Applies one `lobby.diff`; panics unless it is exactly the next seq and applies.
    pub fn apply(&mut self, diff: &Value) {
        assert_eq!(diff["t"], "lobby.diff");
        let seq = diff["seq"].as_u64().expect("seq");
        assert_eq!(seq, self.seq + 1, "gap or repeat in lobby seq: {diff}");
        let patch: json_patch::Patch =
            serde_json::from_value(diff["patch"].clone()).expect("patch is RFC 6902");
        json_patch::patch(&mut self.doc, &patch).expect("patch applies");
        self.seq = seq;
        self.diffs += 1;
    }

    /// Applies the client's next lobby diff.
    pub async fn next(&mut self, client: &mut Client) {
        let d = client.recv_where(|m| m["t"] == "lobby.diff").await;
        self.apply(&d);
    }

    /// Applies diffs until `pred` holds for the document (it may hold already).
    pub async fn until(&mut self, client: &mut Client, pred: impl Fn(&Value) -> bool) {
        while !pred(&self.doc) {
            self.next(client).await;
        }
    }

    /// Checks that this view equals a fresh `lobby.watch` snapshot taken by a new client,
    /// once both are at the same seq (each side applies its own diffs to catch up).
    pub async fn assert_equals_fresh(&mut self, client: &mut Client, server: &Server) {
        let mut other = Client::guest(server, "fresh").await;
        let mut fresh = LobbyView::watch(&mut other).await;
        while self.seq < fresh.seq {
            self.next(client).await;
        }
        while fresh.seq < self.seq {
            fresh.next(&mut other).await;
        }
        assert_eq!(
            self.doc, fresh.doc,
            "after {} diffs at seq {}",
            self.diffs, self.seq
        );
        other.close().await;
    }
}
