//! What a cluster says about itself, for `doctor`: the node the URL names is asked for the
//! cluster's state (CLUSTER INFO) and its slot map (CLUSTER SLOTS); then every shard's primary
//! is probed at once, exactly as a single server is (`probe::probe`: INFO, clock, redlock's
//! scripts, publishing and subscribing), with scratch names in a slot that primary serves and
//! sharded pub/sub. Replicas are named by the map and reported on by their primary's INFO.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;

use super::{Probe, Scratch, ServerFacts, parse_info};
use crate::lock::wire::cluster::Cluster;
use crate::lock::wire::cluster::hash_slot::tag_for_slot;
use crate::lock::wire::cluster::slots::{self, Range};
use crate::lock::wire::node::NodeError;

/// A cluster's answers.
#[derive(Clone, Debug, Default)]
pub struct ClusterFacts {
    /// `CLUSTER INFO` fields (`cluster_state`, `cluster_slots_assigned`, ...).
    pub info: HashMap<String, String>,
    /// Why the slot map could not be read, if it could not.
    pub map_refused: Option<NodeError>,
    /// How many of the 16384 slots the map gives a primary.
    pub slots_served: usize,
    pub shards: Vec<ShardFacts>,
}

/// One shard: a primary, the slots it serves, its replicas.
#[derive(Clone, Debug)]
pub struct ShardFacts {
    /// The primary's address, `host:port`.
    pub primary: String,
    /// Its slot ranges, first and last slot of each.
    pub slots: Vec<(u16, u16)>,
    /// The replicas the map names (a failed one is left out of it by the cluster).
    pub replicas: Vec<String>,
    /// The primary, probed as a single server.
    pub probe: Probe,
}

/// Asks `cluster` about itself and each of its shards, within `timeout` per request.
pub(in crate::lock) async fn probe(cluster: &Cluster, timeout: Duration) -> Probe {
    let seed = cluster.seed_node();
    let ask = |args: &'static [&'static [u8]]| {
        let seed = &seed;
        async move {
            tokio::time::timeout(timeout, seed.command(args))
                .await
                .unwrap_or_else(|_| Err(seed.timed_out()))
        }
    };
    let start = Instant::now();
    let mut info = ask(&[b"INFO", b"server", b"cluster"]).await;
    if matches!(info, Err(NodeError::Server(_))) {
        // Before Redis 7.0, INFO takes one section at most (as in `probe::probe`).
        info = ask(&[b"INFO"]).await;
    }
    let rtt = start.elapsed();
    let info_text = match info {
        Ok(info) => info.text().unwrap_or_default(),
        Err(error) => {
            return Probe {
                master: cluster.seed().clone(),
                rtt,
                facts: Err(error),
                cluster: None,
            };
        }
    };
    let cluster_info = ask(&[b"CLUSTER", b"INFO"]).await;
    let map = ask(&[b"CLUSTER", b"SLOTS"]).await;
    let seed_address = cluster.seed_address();
    let mut facts = ClusterFacts {
        info: cluster_info
            .ok()
            .and_then(|reply| reply.text())
            .map(|text| parse_info(&text))
            .unwrap_or_default(),
        ..ClusterFacts::default()
    };
    let ranges = match map {
        Ok(reply) => slots::parse_slots(&reply, &seed_address).unwrap_or_else(|| {
            facts.map_refused = Some(NodeError::BadReply(format!(
                "CLUSTER SLOTS answered {reply}"
            )));
            Vec::new()
        }),
        Err(error) => {
            facts.map_refused = Some(error);
            Vec::new()
        }
    };
    facts.slots_served = slots::covered(&ranges);
    facts.shards = join_all(shards(&ranges).into_iter().map(|shard| async move {
        let probe = match cluster.node_at(&shard.primary) {
            Ok(node) => {
                let scratch = Scratch {
                    tag: tag_for_slot(shard.slots[0].0),
                    sharded: true,
                };
                super::probe(&node, timeout, &scratch).await
            }
            Err(error) => Probe {
                master: cluster.seed().clone(),
                rtt: Duration::ZERO,
                facts: Err(error),
                cluster: None,
            },
        };
        ShardFacts {
            primary: shard.primary,
            slots: shard.slots,
            replicas: shard.replicas,
            probe,
        }
    }))
    .await;
    Probe {
        master: cluster.seed().clone(),
        rtt,
        facts: Ok(ServerFacts {
            info: parse_info(&info_text),
            info_text,
            ..ServerFacts::default()
        }),
        cluster: Some(facts),
    }
}

/// A shard as the map shows it.
struct Shard {
    primary: String,
    slots: Vec<(u16, u16)>,
    replicas: Vec<String>,
}

/// The map's ranges gathered by primary, in the order the map first names each.
fn shards(ranges: &[Range]) -> Vec<Shard> {
    let mut shards: Vec<Shard> = Vec::new();
    for range in ranges {
        let at = match shards
            .iter()
            .position(|s| s.primary == range.primary.address)
        {
            Some(at) => at,
            None => {
                shards.push(Shard {
                    primary: range.primary.address.clone(),
                    slots: Vec::new(),
                    replicas: Vec::new(),
                });
                shards.len() - 1
            }
        };
        let shard = &mut shards[at];
        shard.slots.push((range.first, range.last));
        for replica in &range.replicas {
            if !shard.replicas.contains(&replica.address) {
                shard.replicas.push(replica.address.clone());
            }
        }
    }
    shards
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::wire::cluster::slots::Member;

    fn member(address: &str) -> Member {
        Member {
            address: address.into(),
            id: None,
        }
    }

    #[test]
    fn ranges_gather_into_shards_by_primary() {
        let range = |first, last, primary: &str, replicas: &[&str]| Range {
            first,
            last,
            primary: member(primary),
            replicas: replicas.iter().map(|r| member(r)).collect(),
        };
        let shards = shards(&[
            range(0, 99, "a:1", &["r:1"]),
            range(100, 199, "b:1", &[]),
            range(200, 299, "a:1", &["r:1", "r:2"]),
        ]);
        assert_eq!(shards.len(), 2);
        assert_eq!(shards[0].primary, "a:1");
        assert_eq!(shards[0].slots, vec![(0, 99), (200, 299)]);
        assert_eq!(
            shards[0].replicas,
            vec!["r:1".to_string(), "r:2".to_string()]
        );
        assert!(shards[1].replicas.is_empty());
    }
}
