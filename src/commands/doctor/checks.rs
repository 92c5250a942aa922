//! The doctor's judgement: what each master reported, checked against what Redlock's safety
//! needs. Pure functions over the reports, so every rule is unit-tested without Redis.
//!
//! What is an error (exit 1) and what a warning (which server a master is, and what that
//! server cannot keep, is judged in `server`):
//! - unreachable, a replica (its writes fail, or are lost on failover), a server too old for
//!   SET NX PX and Lua, `allkeys-*` eviction (it can evict a held lock), the same server listed
//!   under two addresses (it would count twice toward the quorum), a master where redlock's
//!   own scripts could not take a scratch lock (EVAL renamed, an ACL user without EVAL or
//!   EVALSHA, a full memory under `noeviction`), a node of a Redis Cluster given as a single
//!   server (`redis://` rather than `redis+cluster://`): errors;
//! - no `appendfsync always` (a restart can lose held locks), `volatile-*` eviction, an even or
//!   single master count, clock skew between masters, PUBLISH or SUBSCRIBE refused (waiters are
//!   not woken at once on release; they fall back to polling): warnings.
//!
//! A cluster master is judged in `cluster`, each shard's primary by [`check_master`].

use std::collections::HashMap;
use std::time::Duration;

use super::report::{Finding, Report, Severity, finding};
use super::server::{self, Name, parse_version};
use crate::lock::{MasterFailure, NodeError};

/// Clock skew between masters above this is worth a warning: Redlock tolerates offsets (it
/// relies on clock *rates*), but large ones point to broken time keeping.
pub const SKEW_WARNING: Duration = Duration::from_millis(500);

/// Whether a master answered: the first finding about it, an error when it did not.
pub(super) fn reachable(report: &Report) -> Result<Finding, Finding> {
    match &report.unreachable {
        Some(why) if report.answered => Err(finding(
            Severity::Error,
            "reachable",
            format!("reachable, but it answered INFO with an {why}: check its version and ACL"),
        )),
        Some(why) => Err(finding(
            Severity::Error,
            "reachable",
            format!("unreachable: {why}"),
        )),
        None => Ok(finding(
            Severity::Ok,
            "reachable",
            format!("reachable, round trip {:.1?}", report.rtt),
        )),
    }
}

/// The findings about one master.
pub fn check_master(report: &Report) -> Vec<Finding> {
    let mut findings = match reachable(report) {
        Ok(reached) => vec![reached],
        Err(unreachable) => return vec![unreachable],
    };
    let info = &report.info;
    let get = |field: &str| info.get(field).map(String::as_str);
    let software = server::recognise(&report.info_text);
    let scripts_refused = report.scripts_refused.as_ref();
    findings.push(server::check(&software, scripts_refused));
    // The `server` finding already says why redlock's scripts cannot run there.
    let scripts_explained = software.lua_module_missing || server::no_lua_engine(scripts_refused);
    // A KeyDB active replica takes writes as a master does: `server` says what it costs.
    let takes_writes = matches!(get("role"), Some("master" | "active-replica"));

    findings.push(match get("role") {
        Some("master") => finding(Severity::Ok, "role", "a master"),
        Some("active-replica") => finding(
            Severity::Ok,
            "role",
            "an active replica: it takes writes, and replicates them from and to other masters",
        ),
        Some(role) => finding(
            Severity::Error,
            "role",
            format!(
                "a {role}, not a master: writes fail on it, and a lock written through a \
                 failover can be lost; point redlock at independent masters"
            ),
        ),
        None => finding(Severity::Warning, "role", "role unknown (INFO has no role)"),
    });

    findings.push(match get("redis_version").map(parse_version) {
        // Another server's Redis version is what it claims to answer as, not what it runs:
        // `server` judged that server.
        Some(_) if !matches!(software.name, Name::Redis | Name::Unknown) => finding(
            Severity::Ok,
            "version",
            format!("answers as Redis {}", get("redis_version").unwrap_or("?")),
        ),
        Some(Some(version)) if version >= OLDEST_TESTED => finding(
            Severity::Ok,
            "version",
            format!("version {}", get("redis_version").unwrap_or("?")),
        ),
        Some(Some(version)) if version >= (2, 6, 12) => finding(
            Severity::Warning,
            "version",
            format!(
                "version {}: untested (the oldest tested is 6.2: see docs/redis-versions.md); \
                 locks work from 2.6.12, TLS and ACL users from 6.0",
                get("redis_version").unwrap_or("?")
            ),
        ),
        Some(Some(_)) => finding(
            Severity::Error,
            "version",
            format!(
                "version {} is too old: Redlock needs SET NX PX and Lua (Redis 2.6.12 or later)",
                get("redis_version").unwrap_or("?")
            ),
        ),
        _ => finding(Severity::Warning, "version", "version unknown"),
    });

    let policy = get("maxmemory_policy").unwrap_or("unknown");
    findings.push(if policy == "noeviction" {
        finding(Severity::Ok, "eviction", "maxmemory-policy noeviction")
    } else if policy.starts_with("allkeys") {
        finding(
            Severity::Error,
            "eviction",
            format!(
                "maxmemory-policy {policy} can evict a held lock when memory runs short; use \
                 noeviction (or a volatile-* policy with headroom)"
            ),
        )
    } else if policy.starts_with("volatile") {
        finding(
            Severity::Warning,
            "eviction",
            format!(
                "maxmemory-policy {policy} can evict lock keys (they have a TTL) when memory runs \
                 short; keep headroom, or use noeviction"
            ),
        )
    } else {
        finding(
            Severity::Warning,
            "eviction",
            format!("maxmemory-policy {policy}: cannot tell whether locks can be evicted"),
        )
    });

    findings.push(persistence(
        get("aof_enabled"),
        report.appendfsync.as_deref(),
    ));
    if get("role").is_some() && !takes_writes {
        // Its scripts fail with READONLY: the role error above already says why, and once.
        return findings;
    }
    if get("cluster_enabled") == Some("1") && !report.sharded {
        // Its scripts are redirected (MOVED) for slots it does not serve: say why, once.
        findings.push(finding(
            Severity::Error,
            "cluster",
            "a node of a Redis Cluster given as a single server: give the cluster as \
             redis+cluster://host:port (rediss+cluster:// with TLS)",
        ));
        return findings;
    }
    let (publish, subscribe) = match report.sharded {
        true => ("SPUBLISH", "SSUBSCRIBE"),
        false => ("PUBLISH", "SUBSCRIBE"),
    };
    findings.push(match &report.scripts_refused {
        // Said once, by `server`; and with no lock to take, its release notices do not matter.
        Some(_) if scripts_explained => return findings,
        None => finding(
            Severity::Ok,
            "scripts",
            "took and released a scratch lock, share and slot with redlock's scripts",
        ),
        Some(error) => finding(
            Severity::Error,
            "scripts",
            format!(
                "cannot take a lock: {error}; {}",
                refusal_advice(&report.server, error)
            ),
        ),
    });
    // A cluster before Redis 7.0 has no sharded pub/sub at all: that, not a refusal, is why.
    let version = report.info.get("redis_version").map(String::as_str);
    if report.sharded
        && version
            .and_then(parse_version)
            .is_some_and(|v| v < (7, 0, 0))
    {
        findings.push(finding(
            Severity::Warning,
            "publish",
            format!(
                "no sharded pub/sub before Redis 7.0 (this is {}): waiters are not woken at \
                 once when a lock is released, but by their heartbeat (each second); upgrade \
                 the cluster to 7.0 or later for release notices",
                version.unwrap_or("?")
            ),
        ));
        return findings;
    }
    findings.push(match &report.publish_refused {
        None => finding(
            Severity::Ok,
            "publish",
            format!("{publish} allowed (release notices)"),
        ),
        Some(error) => finding(
            Severity::Warning,
            "publish",
            format!(
                "{publish} refused ({error}): waiters are not woken at once when a lock is \
                 released, only by polling; {}",
                refusal_advice(&report.server, error)
            ),
        ),
    });
    findings.push(match &report.subscribe_refused {
        None => finding(
            Severity::Ok,
            "subscribe",
            format!(
                "{subscribe} allowed (waiting for release notices, {})",
                if report.notices_on_kept_connection {
                    "on the connection a waiter keeps: RESP3"
                } else {
                    "on a connection of their own: HELLO 3 refused"
                }
            ),
        ),
        Some(error) => finding(
            Severity::Warning,
            "subscribe",
            format!(
                "{subscribe} refused ({error}): a waiting redlock learns of a release only by \
                 polling; {}",
                refusal_advice(&report.server, error)
            ),
        ),
    });
    findings
}

/// What to do about a refusal, from its cause.
fn refusal_advice(server: &str, error: &NodeError) -> String {
    MasterFailure {
        master: server.to_string(),
        error: error.clone(),
    }
    .cause()
    .advice()
}

fn persistence(aof_enabled: Option<&str>, appendfsync: Option<&str>) -> Finding {
    const DELAYED_RESTART: &str = "or keep a restarted master out of service for longer than \
                                   the longest TTL (delayed restart: it protects locks, not \
                                   --fence counters, which have no TTL and need persistence)";
    match (aof_enabled, appendfsync) {
        (Some("1"), Some("always")) => finding(
            Severity::Ok,
            "persistence",
            "appendonly yes, appendfsync always: locks survive a restart",
        ),
        (Some("1"), Some(mode)) => finding(
            Severity::Warning,
            "persistence",
            format!(
                "appendfsync {mode}: a crash can lose the last writes, and with them a held \
                 lock; use appendfsync always, {DELAYED_RESTART}"
            ),
        ),
        (Some("1"), None) => finding(
            Severity::Warning,
            "persistence",
            format!(
                "appendonly yes, but appendfsync is unknown (CONFIG is disabled): make sure it \
                 is always, {DELAYED_RESTART}"
            ),
        ),
        _ => finding(
            Severity::Warning,
            "persistence",
            format!(
                "no append-only file: a restart loses every lock (and fencing counter) it held, \
                 so a second client can take a lock that is still held; enable appendonly yes \
                 with appendfsync always, {DELAYED_RESTART}"
            ),
        ),
    }
}

/// Findings about the set of masters as a whole.
pub fn check_cluster(reports: &[Report]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let n = reports.len();
    findings.push(match n {
        1 => finding(
            Severity::Warning,
            "count",
            "1 master: a plain single-instance lock, not fault tolerant; use 3 or 5",
        ),
        n if n % 2 == 0 => finding(
            Severity::Warning,
            "count",
            format!(
                "{n} masters: an even number tolerates no more failures than {} would; use an \
                 odd number",
                n - 1
            ),
        ),
        n => finding(
            Severity::Ok,
            "count",
            format!(
                "{n} masters: a majority is {}, so {} may fail",
                n / 2 + 1,
                n - (n / 2 + 1)
            ),
        ),
    });

    let mut by_run_id: HashMap<&str, Vec<&str>> = HashMap::new();
    for report in reports {
        for run_id in servers(report).iter().filter_map(|r| r.info.get("run_id")) {
            let masters = by_run_id.entry(run_id).or_default();
            if !masters.contains(&report.server.as_str()) {
                masters.push(&report.server);
            }
        }
    }
    let mut duplicates: Vec<_> = by_run_id.values().filter(|s| s.len() > 1).collect();
    duplicates.sort();
    if duplicates.is_empty() {
        findings.push(finding(
            Severity::Ok,
            "duplicate",
            "every master is a distinct server",
        ));
    }
    for servers in duplicates {
        findings.push(finding(
            Severity::Error,
            "duplicate",
            format!(
                "{} are the same server, or clusters that share one (same run_id): it would \
                 count {} times toward the quorum; list it once",
                servers.join(" and "),
                servers.len()
            ),
        ));
    }

    let offsets: Vec<i64> = reports
        .iter()
        .flat_map(|r| servers(r))
        .filter_map(|r| r.clock_offset_ms)
        .collect();
    if offsets.len() >= 2 {
        let skew = offsets.iter().max().unwrap() - offsets.iter().min().unwrap();
        let skew_duration = Duration::from_millis(skew.unsigned_abs());
        findings.push(if skew_duration > SKEW_WARNING {
            finding(
                Severity::Warning,
                "clock",
                format!(
                    "the masters' clocks differ by {skew} ms: check their time synchronisation \
                     (NTP); Redlock needs clocks that run at the same rate"
                ),
            )
        } else {
            finding(
                Severity::Ok,
                "clock",
                format!("the masters' clocks agree within {skew} ms"),
            )
        });
    }
    findings
}

/// The servers behind a master: itself, and a cluster's shards' primaries.
fn servers(report: &Report) -> Vec<&Report> {
    let shards = report.cluster.iter().flat_map(|c| &c.shards);
    std::iter::once(report)
        .chain(shards.map(|s| &s.report))
        .collect()
}

/// The oldest Redis the test suite runs against (scripts/test-redis-versions).
const OLDEST_TESTED: (u32, u32, u32) = (6, 2, 0);

#[cfg(test)]
pub(super) mod tests;
