//! One Redis connection type for a single server and for a Redis Cluster.
//!
//! Why an enum rather than generics: the store, its scripts and the cluster module all take
//! "a connection"; the two clients the `redis` crate offers (a reconnecting connection to one
//! server, a slot-routing connection to a cluster) implement the same `ConnectionLike`, so one
//! small delegating type keeps every call site the same.

use std::sync::Arc;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

use super::sentinel::{lost_primary, Follower};

/// A connection to Redis: one server, or a cluster routed by hash slot.
#[derive(Clone)]
pub enum RedisConn {
    /// One server (reconnects with backoff by itself).
    Single(ConnectionManager),
    /// A Redis Cluster (each command goes to the master of its key's slot).
    Cluster(ClusterConnection),
    /// The primary the Sentinels name, followed through promotions (`--redis-sentinel`).
    Sentinel(Arc<Follower>),
}

impl RedisConn {
    /// Whether this is a Redis Cluster (no transaction or script may span hash slots).
    pub fn is_cluster(&self) -> bool {
        matches!(self, RedisConn::Cluster(_))
    }

    /// Whether this follows a primary through Sentinel.
    pub fn follows_sentinel(&self) -> bool {
        matches!(self, RedisConn::Sentinel(_))
    }

    /// The Sentinel follower behind this connection, when it follows one.
    pub fn follower(&self) -> Option<&Arc<Follower>> {
        match self {
            RedisConn::Sentinel(f) => Some(f),
            _ => None,
        }
    }

    /// A call on this connection suggests it no longer reaches the primary (a write that
    /// reached too few replicas): with Sentinel, ask where the primary is now.
    pub fn suspect_primary(&self) {
        if let RedisConn::Sentinel(f) = self {
            f.suspect(f.current().0);
        }
    }
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConn::Single(c) => c.req_packed_command(cmd),
            RedisConn::Cluster(c) => c.req_packed_command(cmd),
            RedisConn::Sentinel(f) => {
                let (generation, mut conn) = f.current();
                let f = f.clone();
                Box::pin(async move {
                    let r = conn.req_packed_command(cmd).await;
                    if r.as_ref().is_err_and(lost_primary) {
                        f.suspect(generation);
                    }
                    r
                })
            }
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConn::Single(c) => c.req_packed_commands(cmd, offset, count),
            RedisConn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
            RedisConn::Sentinel(f) => {
                let (generation, mut conn) = f.current();
                let f = f.clone();
                Box::pin(async move {
                    let r = conn.req_packed_commands(cmd, offset, count).await;
                    if r.as_ref().is_err_and(lost_primary) {
                        f.suspect(generation);
                    }
                    r
                })
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConn::Single(c) => c.get_db(),
            RedisConn::Cluster(c) => c.get_db(),
            RedisConn::Sentinel(_) => 0,
        }
    }
}
