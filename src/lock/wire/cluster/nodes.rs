//! The cluster's nodes by address: finding or adding one (each connected once, lazily), every
//! primary of the slot map (for SCAN), errors named by the node they came from, and the seed
//! for `doctor`'s probe.

use std::sync::Arc;
use std::time::Duration;

use super::super::master::Master;
use super::super::node::{Node, NodeError};
use super::{Cluster, Known, SEED, UNKNOWN, slots};

impl Cluster {
    /// Every primary the seed's slot map names, each once (for SCAN, which sees one node's
    /// keys only).
    pub(crate) async fn primaries(&self, timeout: Duration) -> Result<Vec<Arc<Node>>, NodeError> {
        let (seed, seed_address) = {
            let state = self.lock();
            (
                state.nodes[SEED].node.clone(),
                state.nodes[SEED].address.clone(),
            )
        };
        let map = tokio::time::timeout(timeout, seed.command(&[b"CLUSTER", b"SLOTS"]))
            .await
            .unwrap_or_else(|_| Err(seed.timed_out()))?;
        let ranges = slots::parse_slots(&map, &seed_address)
            .ok_or_else(|| NodeError::BadReply(format!("CLUSTER SLOTS answered {map}")))?;
        let mut primaries: Vec<&str> = Vec::new();
        for range in &ranges {
            if !primaries.contains(&range.primary.address.as_str()) {
                primaries.push(&range.primary.address);
            }
        }
        primaries
            .into_iter()
            .map(|address| {
                let index = self.index_of(address)?;
                Ok(self.lock().nodes[index].node.clone())
            })
            .collect()
    }

    /// The index of the node at `address`, added if new (not connected until used).
    pub(super) fn index_of(&self, address: &str) -> Result<usize, NodeError> {
        if let Some(found) = self.lock().nodes.iter().position(|k| k.address == address) {
            return Ok(found);
        }
        let master = self.node_master(address)?;
        let mut state = self.lock();
        // Another thread may have added it meanwhile: one connection per node.
        if let Some(found) = state.nodes.iter().position(|k| k.address == address) {
            return Ok(found);
        }
        if state.nodes.len() >= usize::from(UNKNOWN) {
            return Err(NodeError::BadReply(
                "the cluster names too many nodes".into(),
            ));
        }
        state.nodes.push(Known {
            address: address.to_string(),
            node: Arc::new(Node::new(master, self.tls.clone())),
            suspect: false,
        });
        Ok(state.nodes.len() - 1)
    }

    /// How to reach the node at `address`: the seed's scheme (TLS or not) and login.
    fn node_master(&self, address: &str) -> Result<Master, NodeError> {
        let unusable = || {
            NodeError::BadReply(format!(
                "the cluster named a node at {address:?}, which is no host:port"
            ))
        };
        let (host, port) = slots::split(address).ok_or_else(unusable)?;
        // A name, an IPv4 or an IPv6 address, nothing that could reshape the URL.
        let plain = |c: char| c.is_ascii_alphanumeric() || ".-_:".contains(c);
        if host.is_empty() || !host.chars().all(plain) {
            return Err(unusable());
        }
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let scheme = if self.seed.is_tls() {
            "rediss"
        } else {
            "redis"
        };
        let master = Master::parse(&format!("{scheme}://{host}:{port}")).map_err(|_| unusable())?;
        let login = self.seed.login();
        Ok(match &login.password {
            Some(password) => master.with_credentials(login.username.as_deref(), password),
            None => master,
        })
    }

    /// `error`, naming the node it came from when that is not the seed.
    pub(super) fn named(&self, index: usize, error: NodeError) -> NodeError {
        if index == SEED {
            return error;
        }
        let address = self.lock().nodes[index].address.clone();
        let via = |why: String| format!("node {address}: {why}");
        match error {
            NodeError::Timeout => NodeError::Timeout,
            NodeError::Connect(why) => NodeError::Connect(via(why)),
            NodeError::Server(why) => NodeError::Server(via(why)),
            NodeError::Io(why) => NodeError::Io(via(why)),
            NodeError::BadReply(why) => NodeError::BadReply(via(why)),
        }
    }

    /// The URL this cluster was named by (for `doctor`'s probe, in `read`).
    pub(in crate::lock) fn seed(&self) -> &Master {
        &self.seed
    }

    /// The node the URL names, and its address.
    pub(in crate::lock) fn seed_node(&self) -> Arc<Node> {
        self.lock().nodes[SEED].node.clone()
    }

    pub(in crate::lock) fn seed_address(&self) -> String {
        self.lock().nodes[SEED].address.clone()
    }

    /// The node at `address` (`host:port`), connected lazily like every other.
    pub(in crate::lock) fn node_at(&self, address: &str) -> Result<Arc<Node>, NodeError> {
        let index = self.index_of(address)?;
        Ok(self.lock().nodes[index].node.clone())
    }
}
