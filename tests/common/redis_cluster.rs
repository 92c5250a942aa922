//! Real Redis Clusters ([`RedisCluster`]): N primaries (and R replicas each) of `redis-server`
//! in cluster mode, on loopback ports below the ephemeral range, client and cluster-bus ports
//! alike (the bus port is set, not left at port + 10000).
//!
//! Started by hand rather than with `redis-cli --cluster create` (which waits in seconds-long
//! steps): each primary gets its config epoch and its share of the slots (CLUSTER
//! SET-CONFIG-EPOCH, ADDSLOTS), the first node meets the others (CLUSTER MEET), replicas
//! are attached (CLUSTER REPLICATE), and the start returns as soon as every node reports
//! `cluster_state:ok`, knows every other and every replica is in sync, polled every 20 ms.
//! Several clusters are formed at once ([`RedisCluster::start_many`]), so they wait together.
//! Node timeouts are short (see [`NODE_TIMEOUT_MS`]) so that failure detection and failover
//! take a second or two. Dropping it kills every node.

use std::process::Command;
use std::time::Duration;

use redlock_cli::lock::keys::key_slot;

use super::processes::eventually;
use super::servers::{Server, free_port};
use super::{Pki, redlock};

/// The nodes' `cluster-node-timeout`: how long a node may be silent before it is suspected
/// failed. Short, so that a killed primary is failed over in a second or two; long enough that
/// a node on a busy test machine is not failed by mistake.
pub const NODE_TIMEOUT_MS: u64 = 1000;

/// How a cluster is started.
#[derive(Clone, Default)]
pub struct Layout<'a> {
    pub primaries: usize,
    /// Replicas per primary.
    pub replicas: usize,
    /// Extra `redis-server` arguments for every node.
    pub args: &'a [&'a str],
    /// TLS on every node (client port and cluster bus), with this PKI.
    pub tls: Option<&'a Pki>,
}

/// A running Redis Cluster: `nodes[..primaries]` are the primaries (in slot order), then the
/// replicas of primary 0, of primary 1, ...
pub struct RedisCluster {
    pub nodes: Vec<Server>,
    pub primaries: usize,
    tls: bool,
}

impl RedisCluster {
    /// `primaries` primaries, no replica.
    pub fn start(primaries: usize) -> RedisCluster {
        RedisCluster::start_with(Layout {
            primaries,
            ..Layout::default()
        })
    }

    pub fn start_with(layout: Layout) -> RedisCluster {
        RedisCluster::start_many(1, layout)
            .pop()
            .expect("one cluster")
    }

    /// `count` independent clusters, formed at the same time (a node waits about two seconds
    /// after its start before it serves: see `form`).
    pub fn start_many(count: usize, layout: Layout) -> Vec<RedisCluster> {
        let clusters: Vec<RedisCluster> =
            (0..count).map(|_| RedisCluster::launch(&layout)).collect();
        for cluster in &clusters {
            cluster.introduce();
        }
        for cluster in &clusters {
            cluster.settle(layout.replicas);
        }
        clusters
    }

    fn launch(layout: &Layout) -> RedisCluster {
        let timeout = NODE_TIMEOUT_MS.to_string();
        let total = layout.primaries * (1 + layout.replicas);
        // Started from the test's own thread (see `Cluster::start_with`).
        let nodes: Vec<Server> = (0..total)
            .map(|_| {
                let bus = free_port().to_string();
                let mut args = vec![
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    &timeout,
                    "--cluster-port",
                    &bus,
                    // A replica's first sync starts at once (Redis waits 5 s by default), and
                    // its offset moves within a second (the cluster names a replica only once
                    // its offset is not 0; without writes, only the primary's pings move it).
                    "--repl-diskless-sync-delay",
                    "0",
                    "--repl-ping-replica-period",
                    "1",
                ];
                if layout.tls.is_some() {
                    args.extend(["--tls-cluster", "yes", "--tls-replication", "yes"]);
                }
                args.extend(layout.args);
                Server::start_inner(&args, layout.tls.map(|pki| (pki, false)))
            })
            .collect();
        RedisCluster {
            nodes,
            primaries: layout.primaries,
            tls: layout.tls.is_some(),
        }
    }

    /// Gives each primary its epoch and slots, and has the first node meet the others.
    fn introduce(&self) {
        let n = self.primaries;
        for (i, node) in self.nodes[..n].iter().enumerate() {
            let first = i * 16384 / n;
            let last = (i + 1) * 16384 / n - 1;
            let epoch = (i + 1).to_string();
            node.query(&["CLUSTER", "SET-CONFIG-EPOCH", &epoch]);
            // ADDSLOTSRANGE came with Redis 7.0; before, each slot is named.
            let slots: Vec<String> = (first..=last).map(|slot| slot.to_string()).collect();
            let mut add = vec!["CLUSTER", "ADDSLOTS"];
            add.extend(slots.iter().map(String::as_str));
            node.query(&add);
        }
        for node in &self.nodes[1..] {
            let port = node.port.to_string();
            let bus = node.bus_port().to_string();
            self.nodes[0].query(&["CLUSTER", "MEET", "127.0.0.1", &port, &bus]);
        }
    }

    /// Attaches the replicas once everyone knows everyone, and waits until every node serves
    /// (a primary turns `cluster_state:ok` no sooner than two seconds after it started:
    /// Redis's `CLUSTER_WRITABLE_DELAY`) and every replica is in sync.
    fn settle(&self, replicas: usize) {
        let n = self.primaries;
        let total = self.nodes.len();
        let everyone_known = eventually(Duration::from_secs(20), || {
            self.nodes.iter().all(|node| {
                node.info_field(&["CLUSTER", "INFO"], "cluster_known_nodes")
                    == Some(total.to_string())
            })
        });
        assert!(
            everyone_known,
            "the nodes never all met: {}",
            self.describe()
        );
        for r in 0..replicas {
            for p in 0..n {
                let id = self.nodes[p].text(&["CLUSTER", "MYID"]);
                self.nodes[n + p * replicas + r].query(&["CLUSTER", "REPLICATE", &id]);
            }
        }
        let ready = eventually(Duration::from_secs(20), || {
            self.nodes.iter().all(|node| {
                node.info_field(&["CLUSTER", "INFO"], "cluster_state")
                    .as_deref()
                    == Some("ok")
            }) && self.nodes[n..].iter().all(|replica| {
                replica.info_field(&["INFO", "replication"], "master_link_status")
                    == Some("up".into())
            }) && self
                .nodes
                .iter()
                .all(|node| node.replicas_in_map() == n * replicas)
        });
        assert!(ready, "the cluster never came up: {}", self.describe());
    }

    /// The URL of the cluster, through node `i`.
    pub fn url_via(&self, i: usize) -> String {
        if self.tls {
            format!(
                "rediss+cluster://localhost:{}",
                self.nodes[i].tls_port.expect("TLS")
            )
        } else {
            format!("redis+cluster://127.0.0.1:{}", self.nodes[i].port)
        }
    }

    /// The URL of the cluster, through its first node.
    pub fn url(&self) -> String {
        self.url_via(0)
    }

    /// `redlock` with REDLOCK_SERVERS naming this cluster as the only master.
    pub fn redlock(&self) -> Command {
        let mut cmd = redlock();
        cmd.env("REDLOCK_SERVERS", self.url());
        cmd
    }

    /// The node that serves `key`'s slot now, by CLUSTER SLOTS of a node that is running.
    pub fn owner(&self, key: &str) -> usize {
        let slot = i64::from(key_slot(key));
        let asked = self
            .nodes
            .iter()
            .find(|n| n.is_running())
            .expect("a node runs");
        let mut connection = asked.connection();
        let map: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut connection)
            .expect("CLUSTER SLOTS");
        for range in map {
            let redis::Value::Array(fields) = range else {
                continue;
            };
            let int = |v: &redis::Value| match v {
                redis::Value::Int(n) => *n,
                other => panic!("not a number: {other:?}"),
            };
            if (int(&fields[0])..=int(&fields[1])).contains(&slot) {
                let redis::Value::Array(primary) = &fields[2] else {
                    panic!("no primary: {fields:?}");
                };
                let port = int(&primary[1]) as u16;
                return self
                    .nodes
                    .iter()
                    .position(|n| n.port == port || n.tls_port == Some(port))
                    .expect("a node of ours");
            }
        }
        panic!("slot {slot} of {key:?} is served by nobody")
    }

    /// A key with `prefix` whose slot primary `i` was given at the start.
    pub fn key_on(&self, i: usize, prefix: &str) -> String {
        let n = self.primaries;
        let range = (i * 16384 / n) as u16..((i + 1) * 16384 / n) as u16;
        (0..)
            .map(|k| format!("{prefix}{k}"))
            .find(|key| range.contains(&key_slot(key)))
            .expect("some key lands in every range")
    }

    /// The value of `key`, from the node that serves it.
    pub fn get(&self, key: &str) -> Option<String> {
        self.nodes[self.owner(key)].get(key)
    }

    /// `key`'s time to live in ms (-2 missing), from the node that serves it.
    pub fn pttl(&self, key: &str) -> i64 {
        self.nodes[self.owner(key)].pttl(key)
    }

    /// Every key without a TTL, on every running node, as `node i: key`.
    pub fn keys_without_ttl(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if !node.is_running() {
                continue;
            }
            for key in node.keys() {
                if node.pttl(&key) == -1 {
                    found.push(format!("node {i}: {key}"));
                }
            }
        }
        found
    }

    /// Moves `slot` from node `from` to node `to` in the steps `redis-cli --cluster reshard`
    /// takes, with `between` run at each step: after IMPORTING/MIGRATING ("open"), after the
    /// keys moved ("moved"), and after the slot was given to `to` on every node ("done").
    pub fn migrate(&self, slot: u16, from: usize, to: usize, mut between: impl FnMut(&str)) {
        let slot = slot.to_string();
        let (source, target) = (&self.nodes[from], &self.nodes[to]);
        let source_id = source.text(&["CLUSTER", "MYID"]);
        let target_id = target.text(&["CLUSTER", "MYID"]);
        target.query(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &source_id]);
        source.query(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &target_id]);
        between("open");
        let mut connection = source.connection();
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(&slot)
            .arg(1000)
            .query(&mut connection)
            .expect("GETKEYSINSLOT");
        if !keys.is_empty() {
            let _: redis::Value = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(target.port)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query(&mut connection)
                .expect("MIGRATE");
        }
        between("moved");
        for node in self.nodes.iter().filter(|n| n.is_running()) {
            node.query(&["CLUSTER", "SETSLOT", &slot, "NODE", &target_id]);
        }
        between("done");
    }

    /// What each node says about the cluster, for assertion messages.
    pub fn describe(&self) -> String {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_running())
            .map(|(i, n)| {
                let state = n.info_field(&["CLUSTER", "INFO"], "cluster_state");
                format!("node {i} (port {}): {state:?}", n.port)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Server {
    /// The cluster bus port this node was started with.
    fn bus_port(&self) -> u16 {
        let nodes = self.text(&["CLUSTER", "NODES"]);
        let myself = nodes
            .lines()
            .find(|line| line.contains("myself"))
            .expect("CLUSTER NODES names myself");
        let address = myself.split_whitespace().nth(1).expect("an address");
        let bus = address.split('@').nth(1).expect("a bus port");
        bus.split(',').next().unwrap().parse().expect("a port")
    }

    /// The value of `key` on a node that imports its slot (after ASKING).
    pub fn get_asking(&self, key: &str) -> Option<String> {
        self.get_after("ASKING", key)
    }

    /// The value of `key` on a replica (after READONLY).
    pub fn get_readonly(&self, key: &str) -> Option<String> {
        self.get_after("READONLY", key)
    }

    /// GET `key` right after `first`, on one connection.
    fn get_after(&self, first: &str, key: &str) -> Option<String> {
        let (value,): (Option<String>,) = redis::pipe()
            .cmd(first)
            .ignore()
            .cmd("GET")
            .arg(key)
            .query(&mut self.connection())
            .unwrap_or_else(|e| panic!("{first}, GET {key} on port {}: {e}", self.port));
        value
    }

    /// How many replicas this node's CLUSTER SLOTS names: those in sync, as far as it knows
    /// (Redis leaves out a replica that has not yet reported a replication offset).
    pub fn replicas_in_map(&self) -> usize {
        let Ok(redis::Value::Array(ranges)) = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut self.connection())
        else {
            return 0;
        };
        let members = |range: &redis::Value| match range {
            redis::Value::Array(fields) => fields.len().saturating_sub(3),
            _ => 0,
        };
        ranges.iter().map(members).sum()
    }

    /// Runs a command that must not fail.
    pub fn query(&self, args: &[&str]) -> redis::Value {
        let mut command = redis::cmd(args[0]);
        for arg in &args[1..] {
            command.arg(*arg);
        }
        command
            .query(&mut self.connection())
            .unwrap_or_else(|e| panic!("{args:?} on port {}: {e}", self.port))
    }

    /// A command's answer as text.
    pub fn text(&self, args: &[&str]) -> String {
        match self.query(args) {
            redis::Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            redis::Value::SimpleString(text) => text,
            redis::Value::VerbatimString { text, .. } => text,
            other => panic!("{args:?}: not text: {other:?}"),
        }
    }

    /// One `field:value` of an INFO-style answer, `None` when missing (or the server does not
    /// answer).
    pub fn info_field(&self, args: &[&str], field: &str) -> Option<String> {
        let mut command = redis::cmd(args[0]);
        for arg in &args[1..] {
            command.arg(*arg);
        }
        let text: String = command.query(&mut self.connection()).ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .map(|value| value.trim().to_string())
    }
}
