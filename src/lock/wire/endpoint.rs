//! One master as the rounds see it: a single server (a [`Node`]) or a whole Redis Cluster (see
//! `cluster`), each answering the requests about lock K. Everything a round, a notice or a
//! probe sends goes through here, so that neither the algorithm nor the round knows which of
//! the two a master is; the differences are the routing (by K's slot on a cluster) and the
//! pub/sub commands (sharded on a cluster).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cluster::Cluster;
use super::lua::Lua;
use super::master::Master;
use super::node::{Node, NodeError};
use super::pipe::Pipe;
use super::resp::Reply;
use super::subscription::Subscription;

pub(crate) struct Endpoint {
    pub master: Master,
    pub(in crate::lock) kind: Kind,
}

pub(in crate::lock) enum Kind {
    Server(Arc<Node>),
    Cluster(Box<Cluster>),
}

impl Endpoint {
    pub fn new(master: Master, tls: Option<Arc<rustls::ClientConfig>>) -> Endpoint {
        let kind = if master.is_cluster() {
            Kind::Cluster(Box::new(Cluster::new(master.clone(), tls)))
        } else {
            Kind::Server(Arc::new(Node::new(master.clone(), tls)))
        };
        Endpoint { master, kind }
    }

    /// Runs `script`, whose keys are all in one cluster slot (see `keys`). Await it in the
    /// caller's task; see `node` for why.
    pub async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Reply, NodeError> {
        match &self.kind {
            Kind::Server(node) => node.eval(script, keys, args, false).await,
            Kind::Cluster(cluster) => cluster.eval(script, keys, args).await,
        }
    }

    /// Runs a plain command about `key` (a read no script covers).
    pub async fn command(&self, key: &str, args: &[&[u8]]) -> Result<Reply, NodeError> {
        match &self.kind {
            Kind::Server(node) => node.command(args).await,
            Kind::Cluster(cluster) => cluster.command(key, args).await,
        }
    }

    /// A connection of its own subscribed to release notices on `channel` (see `notices`).
    pub async fn subscribe(&self, channel: &str) -> Result<Pipe, NodeError> {
        match &self.kind {
            Kind::Server(node) => node.subscribe(channel, false).await,
            Kind::Cluster(cluster) => cluster.subscribe(channel).await,
        }
    }

    /// A subscription to release notices on `channel`, on the kept connection where the
    /// master allows it (see `Node::listen`).
    pub async fn listen(&self, channel: &str) -> Result<Subscription, NodeError> {
        match &self.kind {
            Kind::Server(node) => node.listen(channel, false).await,
            Kind::Cluster(cluster) => cluster.listen(channel).await,
        }
    }

    /// The command the release script announces with: sharded pub/sub on a cluster, where a
    /// plain PUBLISH would be broadcast to every node; plain PUBLISH on a server (SPUBLISH
    /// needs Redis 7).
    pub fn publish_command(&self) -> &'static str {
        match &self.kind {
            Kind::Server(_) => "PUBLISH",
            Kind::Cluster(_) => "SPUBLISH",
        }
    }

    /// See [`Node::is_flushed`]; on a cluster, for every node.
    pub fn is_flushed(&self, patience: Duration) -> bool {
        match &self.kind {
            Kind::Server(node) => node.is_flushed(patience),
            Kind::Cluster(cluster) => cluster.is_flushed(patience),
        }
    }

    /// See [`Node::stranded_since`]; on a cluster, for any node.
    pub fn stranded_since(&self, since: Instant) -> bool {
        match &self.kind {
            Kind::Server(node) => node.stranded_since(since),
            Kind::Cluster(cluster) => cluster.stranded_since(since),
        }
    }

    /// True while a kept connection is open (see [`Node::is_connected`]); on a cluster, to
    /// any of its nodes.
    pub fn is_connected(&self) -> bool {
        match &self.kind {
            Kind::Server(node) => node.is_connected(),
            Kind::Cluster(cluster) => cluster.is_connected(),
        }
    }

    /// See [`Node::take_unwanted_refusal`]; on a cluster, of any of its nodes.
    pub fn take_unwanted_refusal(&self) -> Option<NodeError> {
        match &self.kind {
            Kind::Server(node) => node.take_unwanted_refusal(),
            Kind::Cluster(cluster) => cluster.take_unwanted_refusal(),
        }
    }

    /// What to report when a deadline passed before this master answered.
    pub fn timed_out(&self) -> NodeError {
        match &self.kind {
            Kind::Server(node) => node.timed_out(),
            Kind::Cluster(cluster) => cluster.timed_out(),
        }
    }

    /// The servers whose keys together are this master's keyspace, for SCAN (see `scan`): the
    /// server itself, or every primary of a cluster, from its slot map.
    pub async fn scan_nodes(&self, timeout: Duration) -> Result<Vec<Arc<Node>>, NodeError> {
        match &self.kind {
            Kind::Server(node) => Ok(vec![Arc::clone(node)]),
            Kind::Cluster(cluster) => cluster.primaries(timeout).await,
        }
    }
}
