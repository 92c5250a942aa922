//! The doctor's judgement of a Redis Cluster master (`redis+cluster://`). Pure functions over
//! the reports, unit-tested without Redis.
//!
//! A cluster counts as one master, so its findings are that master's; it is healthy when every
//! key can be locked on it and kept there:
//! - the node the URL names is reachable and is a cluster node, and `cluster_state` is ok;
//!   else an error (the cluster refuses requests);
//! - every one of the 16384 slots is served by a primary; slots served by nobody are an error
//!   (locks whose key hashes there cannot be taken); a slot map that cannot be read (CLUSTER
//!   SLOTS refused) is a warning: the shards go unchecked, and redlock finds owners by MOVED
//!   but cannot look for a new primary after a failover;
//! - each shard's primary is checked as a single master is (`checks::check_master`: reachable,
//!   role, version, eviction, persistence, scripts, sharded publish and subscribe);
//! - each shard's replicas: none is fine (while the primary is down, its slots are out of
//!   reach, and the other masters carry the quorum); a replica that is not in sync is a
//!   warning (a failover to it loses the latest writes, locks among them). Replicas in sync
//!   are fine too, with the caveat said: a failover can still lose a lock the old primary
//!   acknowledged, since replication is asynchronous. That is a warning once, for the whole
//!   set of masters, when the cluster is the only master (nothing outvotes the loss).

use crate::lock::{ClusterFacts, Probe};

use super::checks::{check_master, reachable};
use super::report::{ClusterReport, Finding, Report, Severity, ShardReport, finding};

/// How many hash slots a cluster has.
const SLOTS: usize = 16384;

/// A cluster's probe as the checks read it; `report` turns each shard's primary into a report.
pub fn report(facts: ClusterFacts, report: impl Fn(Probe) -> Report) -> ClusterReport {
    ClusterReport {
        info: facts.info,
        map_refused: facts.map_refused.map(|e| e.to_string()),
        slots_served: facts.slots_served,
        shards: facts
            .shards
            .into_iter()
            .map(|shard| {
                let mut primary = report(shard.probe);
                primary.sharded = true;
                ShardReport {
                    primary: shard.primary,
                    slots: shard.slots,
                    replicas: shard.replicas,
                    report: primary,
                }
            })
            .collect(),
    }
}

/// The findings about the cluster as a whole (its shards' are [`check_shard`]'s).
pub fn check(report: &Report, cluster: &ClusterReport) -> Vec<Finding> {
    let mut findings = match reachable(report) {
        Ok(reached) => vec![reached],
        Err(unreachable) => return vec![unreachable],
    };
    if report.info.get("cluster_enabled").map(String::as_str) != Some("1") {
        findings.push(finding(
            Severity::Error,
            "cluster",
            "not a cluster node (cluster_enabled is not 1): give a single server as \
             redis://host:port",
        ));
        return findings;
    }
    let shards = cluster.shards.len();
    findings.push(
        match cluster.info.get("cluster_state").map(String::as_str) {
            Some("ok") => finding(
                Severity::Ok,
                "cluster",
                format!("a Redis Cluster of {shards} shards, cluster_state ok"),
            ),
            state => finding(
                Severity::Error,
                "cluster",
                format!(
                    "cluster_state {}: the cluster refuses requests (a shard without a \
                     reachable primary, or slots served by nobody); see the shards below",
                    state.unwrap_or("unknown")
                ),
            ),
        },
    );
    findings.push(match &cluster.map_refused {
        Some(why) => finding(
            Severity::Warning,
            "slots",
            format!(
                "cannot read the slot map (CLUSTER SLOTS: {why}): the shards are not checked, \
                 and after a failover redlock cannot look for the new primary; allow \
                 CLUSTER SLOTS (ACL: +cluster|slots)"
            ),
        ),
        None if cluster.slots_served == SLOTS => {
            finding(Severity::Ok, "slots", "all 16384 slots are served")
        }
        None => finding(
            Severity::Error,
            "slots",
            format!(
                "{} of 16384 slots are served by no primary: locks whose key hashes there \
                 cannot be taken; assign them (redis-cli --cluster fix)",
                SLOTS - cluster.slots_served
            ),
        ),
    });
    findings
}

/// The findings about one shard: its primary as a master, and its replicas.
pub fn check_shard(shard: &ShardReport) -> Vec<Finding> {
    let mut findings = check_master(&shard.report);
    if shard.report.unreachable.is_some() {
        return findings;
    }
    let info = &shard.report.info;
    let in_sync = (0..)
        .map_while(|i| info.get(&format!("slave{i}")))
        .filter(|replica| replica.split(',').any(|field| field == "state=online"))
        .count();
    let named = shard.replicas.len();
    findings.push(if named == 0 {
        finding(
            Severity::Ok,
            "replicas",
            "no replica: while this primary is down, locks on its slots are out of reach",
        )
    } else if in_sync >= named {
        finding(
            Severity::Ok,
            "replicas",
            format!(
                "{named} replica{} in sync: a failover keeps these slots available, and can \
                 lose the latest locks (replication is asynchronous)",
                if named == 1 { "" } else { "s" }
            ),
        )
    } else {
        finding(
            Severity::Warning,
            "replicas",
            format!(
                "{in_sync} of {named} replicas in sync: a failover to one that is behind \
                 loses the latest writes, locks among them; check its replication link"
            ),
        )
    });
    findings
}

/// A warning when the only master is a cluster with replicas: a failover can lose a held lock,
/// and no other master outvotes the loss.
pub fn failover_exposure(reports: &[Report]) -> Option<Finding> {
    let [only] = reports else {
        return None;
    };
    let cluster = only.cluster.as_ref()?;
    cluster
        .shards
        .iter()
        .any(|s| !s.replicas.is_empty())
        .then(|| {
            finding(
                Severity::Warning,
                "failover",
                "the only master is a cluster with replicas: a failover can promote a replica \
             that never saw a lock its primary acknowledged, and another client can then take \
             it; use 3 or 5 masters (servers or clusters), or cluster-replica-no-failover yes",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn primary(slaves: &[&str]) -> Report {
        let mut report = super::super::checks::tests::healthy("redis://127.0.0.1:7000", "1");
        for (i, slave) in slaves.iter().enumerate() {
            report.info.insert(format!("slave{i}"), slave.to_string());
        }
        report.sharded = true;
        report
    }

    fn cluster(state: &str, served: usize, replicas: usize) -> (Report, ClusterReport) {
        let seed = Report {
            server: "redis+cluster://127.0.0.1:7000".into(),
            info: [("cluster_enabled".to_string(), "1".to_string())].into(),
            ..Report::default()
        };
        let shard = ShardReport {
            primary: "127.0.0.1:7000".into(),
            slots: vec![(0, 5460), (6000, 6000)],
            replicas: (0..replicas)
                .map(|i| format!("127.0.0.1:{}", 7100 + i))
                .collect(),
            report: primary(&[]),
        };
        let facts = ClusterReport {
            info: [("cluster_state".to_string(), state.to_string())].into(),
            map_refused: None,
            slots_served: served,
            shards: vec![shard],
        };
        (seed, facts)
    }

    fn level(findings: &[Finding], check: &str) -> Severity {
        findings.iter().find(|f| f.check == check).unwrap().severity
    }

    #[test]
    fn a_healthy_cluster_is_ok_and_gaps_are_errors() {
        let (seed, facts) = cluster("ok", SLOTS, 0);
        let findings = check(&seed, &facts);
        assert!(
            findings.iter().all(|f| f.severity == Severity::Ok),
            "{findings:?}"
        );
        let (seed, facts) = cluster("fail", SLOTS - 100, 0);
        let findings = check(&seed, &facts);
        assert_eq!(level(&findings, "cluster"), Severity::Error);
        let slots = findings.iter().find(|f| f.check == "slots").unwrap();
        assert_eq!(slots.severity, Severity::Error);
        assert!(slots.message.starts_with("100 of 16384"), "{slots:?}");
        assert_eq!(
            facts.shards[0].title(),
            "shard 127.0.0.1:7000 (slots 0-5460, 6000)"
        );
    }

    #[test]
    fn a_plain_server_given_as_a_cluster_is_an_error() {
        let (mut seed, facts) = cluster("ok", SLOTS, 0);
        seed.info.clear();
        assert_eq!(level(&check(&seed, &facts), "cluster"), Severity::Error);
    }

    #[test]
    fn replicas_behind_are_a_warning_and_a_lone_cluster_with_replicas_too() {
        let (seed, mut facts) = cluster("ok", SLOTS, 1);
        let shard = &mut facts.shards[0];
        assert_eq!(level(&check_shard(shard), "replicas"), Severity::Warning);
        shard.report = primary(&["ip=127.0.0.1,port=7100,state=online,offset=1,lag=0"]);
        let findings = check_shard(shard);
        assert_eq!(level(&findings, "replicas"), Severity::Ok);
        // The primary's own checks speak of sharded pub/sub.
        let publish = findings.iter().find(|f| f.check == "publish").unwrap();
        assert!(publish.message.contains("SPUBLISH"), "{publish:?}");
        let lone = Report {
            cluster: Some(facts),
            ..seed
        };
        assert!(failover_exposure(std::slice::from_ref(&lone)).is_some());
        assert!(failover_exposure(&[lone.clone(), lone.clone(), lone]).is_none());
    }
}
