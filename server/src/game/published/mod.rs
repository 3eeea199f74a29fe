//! A versioned document published to its watchers: the one mechanism behind a game's
//! document, the lobby and each arena's (protocol/docs/PROTOCOL.md, "Games and
//! documents").
//!
//! Each change moves the `seq` by one and goes out as one RFC 6902 diff, encoded once and
//! queued as the same bytes for every watcher; a watcher arriving gets the document whole
//! (encoded once per seq, whoever asks), or, when it names the seq it holds (`since`), the
//! diffs it missed while the bounded replay still holds them all. A watcher whose queue
//! is full is dropped, never waited for.
//!
//! What differs per kind stays with its owner: how a change's patch is found (a game's
//! from its event, field by field, in [`crate::game::core`]; the lobby and an arena diff
//! whole values, [`Published::update`]), the messages' names ([`Kind`]), and whether the
//! document is kept here at all: the lobby's and an arena's are (`Published<Value>`); a
//! game's lives in its core, which builds it only for a snapshot, so a game publishes a
//! `Published<()>` and hands the encoding in.

mod frames;
mod replay;

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;
use stoa_protocol::json_text::write_value;
use stoa_protocol::wire::Rid;

use crate::net::fanout;
use crate::net::frame::Frame;
use crate::net::outbound::{ConnHandle, SendOutcome};
pub use frames::Kind;
use replay::Replay;

/// Watchers dropped by a send (their queue was full or closed): already removed, for the
/// owner to forget too.
pub type Dropped = Vec<Arc<ConnHandle>>;

/// How a watcher arriving with what it holds was brought up to date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaughtUp {
    /// The diffs after its `since` (none when it was current).
    Replayed,
    /// The whole document.
    Snapshot,
}

/// One document, its seq, its watchers and the last diffs, published under one
/// [`Kind`] of messages.
pub struct Published<D> {
    doc: D,
    seq: u64,
    kind: &'static Kind,
    /// The document's id in its messages (empty when they name none).
    id: Box<str>,
    /// Why in arrival order: a broadcast walks every watcher's connection state and
    /// socket, and connections that came one after another sit next to each other in
    /// memory (ours and the kernel's), so walking them in that order is walking memory
    /// forwards rather than in hash order.
    ///
    /// Hashed with `hashbrown`'s default, not std's SipHash: a move looks its players'
    /// connections up in it.
    watchers: IndexMap<u64, Arc<ConnHandle>, hashbrown::DefaultHashBuilder>,
    /// The watchers served first (a game's seated players: a few at most), so a crowd of
    /// spectators never delays the opponent's diff.
    first: Vec<u64>,
    replay: Replay,
    /// The document encoded at one seq, shared by every snapshot of that seq.
    encoded: Option<(u64, Arc<str>)>,
}

impl<D> std::fmt::Debug for Published<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Published")
            .field("kind", &self.kind.snapshot)
            .field("id", &self.id)
            .field("seq", &self.seq)
            .field("watchers", &self.watchers.len())
            .finish_non_exhaustive()
    }
}

impl<D> Published<D> {
    /// `doc` published at `seq` under `kind`'s messages naming it `id`, keeping the last
    /// `replay` diffs for watchers that give `since` (0: such a kind has no `since`).
    pub fn new(doc: D, seq: u64, kind: &'static Kind, id: &str, replay: usize) -> Self {
        Published {
            doc,
            seq,
            kind,
            id: id.into(),
            watchers: IndexMap::default(),
            first: Vec::new(),
            replay: Replay::new(replay),
            encoded: None,
        }
    }

    /// The document as last published.
    pub fn doc(&self) -> &D {
        &self.doc
    }

    /// The seq of the document as last published.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Replaces the document under the same seq, sending nothing: only for a document no
    /// watcher has seen under this seq (the lobby's, first built when first watched).
    pub fn replace(&mut self, doc: D) {
        self.doc = doc;
        self.encoded = None;
    }

    /// The watchers, in the order they came.
    pub fn watchers(&self) -> impl Iterator<Item = (u64, &Arc<ConnHandle>)> {
        self.watchers.iter().map(|(id, conn)| (*id, conn))
    }

    /// Whether connection `conn_id` watches.
    pub fn is_watching(&self, conn_id: u64) -> bool {
        self.watchers.contains_key(&conn_id)
    }

    /// How many connections watch.
    pub fn len(&self) -> usize {
        self.watchers.len()
    }

    /// Whether nobody watches.
    pub fn is_empty(&self) -> bool {
        self.watchers.is_empty()
    }

    /// How many watchers are not served first (a game's spectators).
    pub fn others(&self) -> u64 {
        (self.watchers.len() - self.first.len()) as u64
    }

    /// Adds a watcher (`first`: served before the others); `false` when it already
    /// watched. It is sent nothing: see [`Published::catch_up`].
    pub fn subscribe(&mut self, conn: Arc<ConnHandle>, first: bool) -> bool {
        let id = conn.id;
        if self.watchers.insert(id, conn).is_some() {
            return false;
        }
        if first {
            self.first.push(id);
        }
        true
    }

    /// Removes a watcher; the connection, when it watched.
    pub fn unsubscribe(&mut self, conn_id: u64) -> Option<Arc<ConnHandle>> {
        // `swap_remove`: the last comes to the gap (order matters for speed only, and
        // shifting the rest costs a crowd's size per departure).
        let conn = self.watchers.swap_remove(&conn_id)?;
        if let Some(i) = self.first.iter().position(|id| *id == conn_id) {
            self.first.swap_remove(i);
        }
        Some(conn)
    }

    /// Queues on `conn` what it lacks of the document: the diffs after `since` when the
    /// replay still holds them all, the snapshot (answering `rid`, the document encoded
    /// by `encode`) otherwise. `None` when its queue took not all of it.
    pub fn catch_up(
        &mut self,
        conn: &ConnHandle,
        rid: Option<&Rid>,
        since: Option<u64>,
        encode: impl FnOnce(&D) -> String,
    ) -> Option<CaughtUp> {
        if let Some(diffs) = since.and_then(|since| self.replay.since(since, self.seq)) {
            for d in diffs {
                if conn.send(d) != SendOutcome::Sent {
                    return None;
                }
            }
            return Some(CaughtUp::Replayed);
        }
        let frame = self.snapshot_frame(rid, encode);
        (conn.send(frame) == SendOutcome::Sent).then_some(CaughtUp::Snapshot)
    }

    /// The snapshot frame answering `rid`: the document is encoded (by `encode`) once per
    /// seq and shared by every watcher who asks for that seq; only the envelope differs.
    pub fn snapshot_frame(
        &mut self,
        rid: Option<&Rid>,
        encode: impl FnOnce(&D) -> String,
    ) -> Frame {
        let doc = match &self.encoded {
            Some((s, doc)) if *s == self.seq => doc.clone(),
            _ => {
                let doc: Arc<str> = encode(&self.doc).into();
                self.encoded = Some((self.seq, doc.clone()));
                doc
            }
        };
        frames::snapshot_frame(self.kind, &self.id, self.seq, rid, &doc)
    }

    /// Publishes a change already made to the document (a game's lives in its core): the
    /// seq moves on by one and the diff, its patch written by `patch`, is encoded once,
    /// kept for `since` and queued for every watcher. Nothing is encoded when nobody
    /// watches and nothing is kept.
    pub fn publish(&mut self, patch: impl FnOnce(&mut String)) -> Dropped {
        self.seq += 1;
        // The encoded document of an older seq is never sent again: not kept for the life
        // of an idle document (a few KiB each).
        self.encoded = None;
        if self.watchers.is_empty() && !self.replay.keeps() {
            return Dropped::new();
        }
        let last_len = self.replay.last_len();
        let bytes = frames::diff_frame(self.kind, &self.id, self.seq, last_len, patch);
        self.replay.push(self.seq, bytes.clone());
        self.broadcast(bytes)
    }

    /// The document went back to an earlier `seq` (a game whose store lost its last events,
    /// rebuilt from what its log holds): every watcher is sent the whole document, encoded
    /// by `encode`, without a `rid` (a client takes such a snapshot whatever seq it holds),
    /// and a `since` above `seq` is answered with the snapshot from now on (it may name a
    /// document holding the lost events).
    pub fn rewind(&mut self, seq: u64, encode: impl FnOnce(&D) -> String) -> Dropped {
        self.seq = seq;
        self.encoded = None;
        self.replay.rewind(seq);
        let frame = self.snapshot_frame(None, encode);
        self.broadcast(frame)
    }

    /// Queues the same bytes for every watcher, those served first first; a watcher whose
    /// queue is full is dropped (a slow watcher is kicked, never waited for). A big crowd
    /// is written by every core ([`crate::net::fanout`]).
    pub fn broadcast(&mut self, bytes: Frame) -> Dropped {
        let mut gone = Vec::new();
        for id in &self.first {
            if let Some(conn) = self.watchers.get(id) {
                if conn.send(bytes.clone()) != SendOutcome::Sent {
                    gone.push(*id);
                }
            }
        }
        let others = self
            .watchers
            .iter()
            .filter(|(id, _)| !self.first.contains(id));
        if self.watchers.len() - self.first.len() > fanout::IN_PLACE {
            let others: Vec<&Arc<ConnHandle>> = others.map(|(_, conn)| conn).collect();
            gone.extend(fanout::send_all(&others, &bytes));
        } else {
            // A game's usual few watchers: no list made, no thread woken.
            for (id, conn) in others {
                if conn.send(bytes.clone()) != SendOutcome::Sent {
                    gone.push(*id);
                }
            }
        }
        gone.into_iter()
            .filter_map(|id| self.unsubscribe(id))
            .collect()
    }
}

impl Published<Value> {
    /// Subscribes `conn` and queues the snapshot on it (answering `rid`); `false` when
    /// its queue refused it (it does not watch then).
    pub fn watch(&mut self, conn: Arc<ConnHandle>, rid: Option<&Rid>) -> bool {
        match self.catch_up(&conn, rid, None, Value::to_string) {
            Some(_) => {
                self.subscribe(conn, false);
                true
            }
            None => false,
        }
    }

    /// Replaces the document with `new`, diffing the whole values: a change is published
    /// as one diff under the next seq; `false` (and nothing sent) when nothing changed.
    pub fn update(&mut self, new: Value) -> bool {
        let patch = json_patch::diff(&self.doc, &new);
        if patch.0.is_empty() {
            return false;
        }
        self.doc = new;
        self.publish(|out| {
            let patch = serde_json::to_value(&patch).unwrap_or(Value::Array(Vec::new()));
            write_value(out, &patch);
        });
        true
    }
}

#[cfg(test)]
mod tests;
