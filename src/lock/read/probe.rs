//! What each master says about itself, for `doctor`: the facts Redlock's safety depends on,
//! asked and decoded here so that no caller speaks the protocol.
//!
//! Every master is asked at once; each one, in turn and each request bounded by the same timeout:
//! `INFO` (which server, role, version, eviction policy, persistence, run id, modules; connecting
//! happens here), `TIME`
//! (its clock against ours, on the open connection so that the round trip is a pure one), and
//! `CONFIG GET appendfsync` (which managed services often refuse: then it is simply unknown).
//!
//! Then it tries what a lock needs, rather than guessing it from the configuration (renamed
//! commands, ACL rules and a full memory all show the same way: as a refusal): it takes and
//! releases a scratch lock under the reserved prefix with redlock's own scripts (a 1 s TTL, so
//! nothing is left behind even if the release never arrives), queues for it, takes and gives
//! back a reader's share and a semaphore's slot (their scripts run commands the lock's do not),
//! and publishes on a scratch
//! channel that nobody listens to, and subscribes to it as a waiter does: on the kept
//! connection where the server speaks RESP3, else on a connection of its own (which it says).
//!
//! A cluster's primaries are each probed the same way (see `cluster::probe`), with scratch
//! names in a slot of their own and sharded pub/sub ([`Scratch`]).

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::lock::scripts::calls::Call;
use crate::lock::scripts::calls::args::{
    Departure, Ended, EndedSlot, Leave, Queued, Recorded, Release, ReleaseSlot, Take, TakeSlot,
    Turn, Wake,
};
use crate::lock::scripts::keys::{self, RESERVED_PREFIX};
use crate::lock::scripts::{
    ACQUIRE, ACQUIRE_SLOT, LEAVE, READ_ACQUIRE, READ_RELEASE, RELEASE, RELEASE_SLOT, WAIT,
};
use crate::lock::wire::master::Master;
use crate::lock::wire::node::{Node, NodeError};
use crate::lock::wire::resp::Reply;
use crate::lock::wire::subscription::Carrier;

mod cluster;

use crate::lock::wire::endpoint::{Endpoint, Kind};
pub use cluster::{ClusterFacts, ShardFacts};

/// What `endpoint` says about itself; on a cluster, each shard's primary too.
pub(in crate::lock) async fn probe_endpoint(endpoint: &Endpoint, timeout: Duration) -> Probe {
    match &endpoint.kind {
        Kind::Server(node) => probe(node, timeout, &Scratch::server()).await,
        Kind::Cluster(cluster) => cluster::probe(cluster, timeout).await,
    }
}

/// What one master said.
#[derive(Clone, Debug)]
pub struct Probe {
    pub master: Master,
    /// The round trip of its `TIME` request (the connection already open).
    pub rtt: Duration,
    /// Its answers, or why it could not be asked. For a cluster: the node the URL names.
    pub facts: Result<ServerFacts, NodeError>,
    /// For a cluster (`redis+cluster://`): its slot map, and each shard's primary probed.
    pub cluster: Option<ClusterFacts>,
}

/// Where a probe takes its scratch lock and publishes: names in the probed node's slots
/// (any name, on a server), and plain or sharded pub/sub.
pub(in crate::lock) struct Scratch {
    /// The hash tag of the scratch names.
    pub tag: String,
    pub sharded: bool,
}

impl Scratch {
    pub(in crate::lock) fn server() -> Scratch {
        Scratch {
            tag: "doctor".into(),
            sharded: false,
        }
    }
}

/// A master's answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerFacts {
    /// `INFO` fields of the server, replication, memory and persistence sections.
    pub info: HashMap<String, String>,
    /// The text of that `INFO` answer, as the server sent it: which server it is is read from
    /// it (a field can repeat, as `module:` does, which `info` keeps once).
    pub info_text: String,
    /// `CONFIG GET appendfsync`; `None` when CONFIG is refused.
    pub appendfsync: Option<String>,
    /// The master's clock minus ours, in milliseconds (from `TIME`, taking the midpoint of the
    /// round trip as the moment it answered).
    pub clock_offset_ms: Option<i64>,
    /// Why redlock's scripts could not take and release a scratch lock there, if they could not.
    pub scripts_refused: Option<NodeError>,
    /// Why a PUBLISH (release notices) was refused there, if it was.
    pub publish_refused: Option<NodeError>,
    /// Why a SUBSCRIBE (waiting for release notices) was refused there, if it was.
    pub subscribe_refused: Option<NodeError>,
    /// Whether a waiter hears its notices on the connection it keeps for its requests (the
    /// server speaks RESP3), not on a connection of their own (see `Node::listen`).
    pub notices_on_kept_connection: bool,
}

/// Asks one server, within `timeout` per request.
pub(in crate::lock) async fn probe(node: &Node, timeout: Duration, scratch: &Scratch) -> Probe {
    let ask = |args: &'static [&'static [u8]]| async move {
        let start = Instant::now();
        let answer = tokio::time::timeout(timeout, node.command(args))
            .await
            .unwrap_or_else(|_| Err(node.timed_out()));
        (answer, start.elapsed())
    };
    let info: &[&[u8]] = &[
        b"INFO",
        b"server",
        b"replication",
        b"memory",
        b"persistence",
        b"cluster",
        // Valkey 9.1 runs Lua as a module: a Lua engine missing shows here (doctor's `server`).
        b"modules",
    ];
    let (mut info, mut info_rtt) = ask(info).await;
    if matches!(info, Err(NodeError::Server(_))) {
        // INFO with several sections is Redis 7.0's; 6.x answers "ERR syntax error". Plain
        // INFO (its default sections hold all of these) works on every version.
        (info, info_rtt) = ask(&[b"INFO"]).await;
    }
    let info = match info {
        Ok(info) => info,
        Err(error) => {
            return Probe {
                master: node.master.clone(),
                rtt: info_rtt,
                facts: Err(error),
                cluster: None,
            };
        }
    };
    let sent = SystemTime::now();
    let (time, rtt) = ask(&[b"TIME"]).await;
    let (fsync, _) = ask(&[b"CONFIG", b"GET", b"appendfsync"]).await;
    let scripts_refused = try_scripts(node, timeout, scratch).await.err();
    let channel = format!("{RESERVED_PREFIX}{{{}}}:scratch", scratch.tag);
    let verb: &[u8] = if scratch.sharded {
        b"SPUBLISH"
    } else {
        b"PUBLISH"
    };
    let publish: [&[u8]; 3] = [verb, channel.as_bytes(), b""];
    let published = tokio::time::timeout(timeout, node.command(&publish))
        .await
        .unwrap_or_else(|_| Err(node.timed_out()));
    // As a waiter subscribes: on the kept connection where the server speaks RESP3, else on
    // a connection of its own; ended again at once.
    let subscribed = tokio::time::timeout(timeout, node.listen(&channel, scratch.sharded))
        .await
        .unwrap_or_else(|_| Err(node.timed_out()));
    let notices_on_kept_connection = subscribed
        .as_ref()
        .is_ok_and(|subscription| subscription.carrier() == Carrier::Kept);
    let info_text = info.text().unwrap_or_default();
    let facts = Ok(ServerFacts {
        info: parse_info(&info_text),
        info_text,
        appendfsync: fsync.ok().and_then(|v| config_value(&v)),
        clock_offset_ms: time.ok().and_then(|v| clock_offset_ms(&v, sent, rtt)),
        scripts_refused,
        publish_refused: published.err(),
        subscribe_refused: subscribed.err(),
        notices_on_kept_connection,
    });
    Probe {
        master: node.master.clone(),
        rtt,
        facts,
        cluster: None,
    }
}

/// Takes and releases a scratch lock with redlock's own scripts, with a second token waiting in
/// its queue meanwhile, so that every command a script may run (the queue's sorted sets and
/// hash, TIME, INCR) is tried under this user's permissions.
async fn try_scripts(node: &Node, timeout: Duration, scratch: &Scratch) -> Result<(), NodeError> {
    // A scratch key per kind: a key is a lock, shared or not, or a semaphore, never both.
    let scratch_key = || {
        format!(
            "{RESERVED_PREFIX}{{{}}}:scratch:{}",
            scratch.tag,
            uuid::Uuid::new_v4().simple()
        )
    };
    let (key, shared_key, slots_key) = (scratch_key(), scratch_key(), scratch_key());
    let names = keys::Names::of(&key);
    let layout = names.keys(key.as_str());
    let shared_names = keys::Names::of(&shared_key);
    let shared_layout = shared_names.keys(shared_key.as_str());
    let slot_names = keys::Names::of(&slots_key);
    let slot_layout = slot_names.keys(slots_key.as_str());
    let publish: &[u8] = if scratch.sharded {
        b"SPUBLISH"
    } else {
        b"PUBLISH"
    };
    // Everything with a TTL of 1 to 2 s: nothing is left behind even if a step fails.
    let take = |token: &str, will_wait| Take {
        token: token.into(),
        ttl_ms: b"1000".to_vec(),
        record: String::new(),
        will_wait,
        keep_ms: "2000".into(),
    };
    let give_back = |token: &str| Release {
        token: token.into(),
        ..Release::default()
    };
    // The probe's scratch keys keep no history (an empty one writes nothing).
    fn unrecorded<A>(args: A) -> Recorded<A> {
        Recorded {
            args,
            history: String::new(),
        }
    }
    let ended = |token: &str| Ended {
        args: give_back(token),
        ..Ended::default()
    };
    let (holder, waiter) = ("doctor-holder", "doctor-waiter");
    let queued = Queued {
        token: waiter.into(),
        ttl_ms: b"1000".to_vec(),
        ticket: "1".into(),
        lease_ms: "1000".into(),
        keep_ms: "2000".into(),
        ..Queued::default()
    };
    let leave = Leave {
        token: waiter.into(),
        wake: Wake::default(),
    };
    let (reader, slot) = ("shr-doctor", "sem2-doctor");
    let take_slot = unrecorded(TakeSlot {
        args: take(slot, false),
        limit: "2".into(),
    });
    let slot_back = EndedSlot {
        args: ReleaseSlot {
            release: give_back(slot),
            limit: "2".into(),
            seat: Default::default(),
        },
        ..EndedSlot::default()
    };
    // Each step over its key's layout, and whether it answers 1 (else a refusal).
    let steps = [
        (
            Call::new(&ACQUIRE, unrecorded(take(holder, false))),
            &layout,
            true,
        ),
        // Refused, drawing a ticket; then placed in the queue; then leaving it.
        (
            Call::new(&ACQUIRE, unrecorded(take(waiter, true))),
            &layout,
            false,
        ),
        (
            Call::new(&WAIT, unrecorded(Turn { queued, join: true })),
            &layout,
            false,
        ),
        (
            Call::new(
                &LEAVE,
                Departure {
                    args: leave,
                    ..Departure::default()
                },
            ),
            &layout,
            true,
        ),
        (Call::new(&RELEASE, ended(holder)), &layout, true),
        // A reader's share (`--shared`) and a semaphore's slot (`--limit`): their scripts run
        // commands the lock's do not (PEXPIREAT, ZCOUNT), which an ACL may still refuse.
        (
            Call::new(&READ_ACQUIRE, unrecorded(take(reader, false))),
            &shared_layout,
            true,
        ),
        (
            Call::new(&READ_RELEASE, ended(reader)),
            &shared_layout,
            true,
        ),
        (Call::new(&ACQUIRE_SLOT, take_slot), &slot_layout, true),
        (Call::new(&RELEASE_SLOT, slot_back), &slot_layout, true),
    ];
    for (call, layout, one) in &steps {
        expect(
            within(node, timeout, call.run_on(node, *layout, publish)).await,
            *one,
        )?;
    }
    // The ticket counter would outlive the test by its TTL: remove it now.
    let del: [&[u8]; 2] = [b"DEL", names.tickets.as_bytes()];
    within(node, timeout, node.command(&del)).await.map(drop)
}

/// `run`'s answer, or a timeout after `timeout`.
async fn within(
    node: &Node,
    timeout: Duration,
    run: impl Future<Output = Result<Reply, NodeError>>,
) -> Result<Reply, NodeError> {
    match tokio::time::timeout(timeout, run).await {
        Ok(answer) => answer,
        Err(_) => Err(node.timed_out()),
    }
}

/// Checks a script's answer: 1 when `one`, else a refusal (an array).
fn expect(answer: Result<Reply, NodeError>, one: bool) -> Result<(), NodeError> {
    match answer? {
        Reply::Int(1) if one => Ok(()),
        Reply::Array(_) if !one => Ok(()),
        other => Err(NodeError::BadReply(format!("unexpected reply {other}"))),
    }
}

/// Parses the text of `INFO` into its `field:value` pairs.
pub fn parse_info(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The value of a `CONFIG GET` reply: `[name, value]`; `None` when the parameter is unknown
/// (an empty array).
fn config_value(value: &Reply) -> Option<String> {
    match value {
        Reply::Array(items) if items.len() == 2 => items[1].text(),
        _ => None,
    }
}

/// The master's clock minus ours, from a TIME reply `[seconds, microseconds]`.
fn clock_offset_ms(value: &Reply, sent: SystemTime, rtt: Duration) -> Option<i64> {
    let Reply::Array(items) = value else {
        return None;
    };
    let number = |v: &Reply| v.text()?.parse::<i64>().ok();
    let server_us = number(items.first()?)? * 1_000_000 + number(items.get(1)?)?;
    let local = (sent + rtt / 2).duration_since(UNIX_EPOCH).ok()?;
    let local_us = i64::try_from(local.as_micros()).ok()?;
    Some((server_us - local_us) / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_text_becomes_fields() {
        let info = parse_info("# Server\r\nredis_version:7.2.4\r\nrole:master\r\n\r\n");
        assert_eq!(info.get("redis_version").map(String::as_str), Some("7.2.4"));
        assert_eq!(info.get("role").map(String::as_str), Some("master"));
    }

    #[test]
    fn config_get_replies() {
        let pair = Reply::Array(vec![
            Reply::Bulk(b"appendfsync".to_vec()),
            Reply::Bulk(b"always".to_vec()),
        ]);
        assert_eq!(config_value(&pair).as_deref(), Some("always"));
        assert_eq!(config_value(&Reply::Array(vec![])), None);
        assert_eq!(config_value(&Reply::Nil), None);
    }

    #[test]
    fn clock_offset_from_time() {
        let sent = UNIX_EPOCH + Duration::from_secs(1_000);
        let reply = Reply::Array(vec![
            Reply::Bulk(b"1002".to_vec()),
            Reply::Bulk(b"500000".to_vec()),
        ]);
        // Answered at the midpoint of a 1 s round trip: 1000.5 s here, 1002.5 s there.
        let offset = clock_offset_ms(&reply, sent, Duration::from_secs(1));
        assert_eq!(offset, Some(2_000));
        // Anything else has no offset.
        for odd in [
            Reply::Array(vec![Reply::Bulk(b"x".to_vec()), Reply::Int(0)]),
            Reply::Array(vec![Reply::Int(1)]),
            Reply::Int(1002),
        ] {
            assert_eq!(clock_offset_ms(&odd, sent, Duration::ZERO), None, "{odd:?}");
        }
    }
}
