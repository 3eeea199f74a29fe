//! One Redis connection type for a single server and for a Redis Cluster.
//!
//! Why an enum rather than generics: the store, its scripts and the cluster module all take
//! "a connection"; the two clients the `redis` crate offers (a reconnecting connection to one
//! server, a slot-routing connection to a cluster) implement the same `ConnectionLike`, so one
//! small delegating type keeps every call site the same.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A connection to Redis: one server, or a cluster routed by hash slot.
#[derive(Clone)]
pub enum RedisConn {
    /// One server (reconnects with backoff by itself).
    Single(ConnectionManager),
    /// A Redis Cluster (each command goes to the master of its key's slot).
    Cluster(ClusterConnection),
}

impl RedisConn {
    /// Whether this is a Redis Cluster (no transaction or script may span hash slots).
    pub fn is_cluster(&self) -> bool {
        matches!(self, RedisConn::Cluster(_))
    }
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConn::Single(c) => c.req_packed_command(cmd),
            RedisConn::Cluster(c) => c.req_packed_command(cmd),
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
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConn::Single(c) => c.get_db(),
            RedisConn::Cluster(c) => c.get_db(),
        }
    }
}
