//! Hostile tests of the shared lock (`--shared`, issue 25), from its review: the readers'
//! marker handed to the writer's `release` and `extend` as if it were a token; K's TTL
//! against the longest share after shorter shares extend and release; a waiting writer that
//! leaves the line while readers wait behind it; nested readers and writers. Each one states
//! what must hold; all run against real masters.

use crate::common;

use std::time::Duration;

use crate::common::{Cluster, Running, describe, eventually};
use redlock_cli::lock::keys;

const MARKER: &str = "__redlock:shared";

fn zcard(server: &common::Server, key: &str) -> usize {
    redis::cmd("ZCARD")
        .arg(key)
        .query(&mut server.connection())
        .expect("ZCARD")
}

/// `redlock run --shared` on `key` (TTL 10 s), ready and waiting at its gate.
fn reader(cluster: &Cluster, key: &str) -> Running {
    let mut running = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", key, "--ttl", "10s", "--shared"]),
    );
    running.wait_ready();
    running
}

/// `acquire --shared` on `key`, which must succeed; its token.
fn acquire_reader(cluster: &Cluster, key: &str, ttl: &str) -> String {
    let output = cluster
        .redlock()
        .args(["acquire", "--key", key, "--shared", "--ttl", ttl])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// Whether another Redlock client's `SET K x NX PX` wins on a majority of the 3 masters.
fn foreign_set_nx_wins(cluster: &Cluster, key: &str) -> bool {
    let won = cluster
        .servers
        .iter()
        .filter(|server| {
            let reply: Option<String> = redis::cmd("SET")
                .arg(key)
                .arg("foreign-token")
                .arg("NX")
                .arg("PX")
                .arg(30_000)
                .query(&mut server.connection())
                .expect("SET NX");
            reply.is_some()
        })
        .count();
    won >= 2
}

/// The readers' marker is a constant anybody can read (`GET K`, and `status` names it), and
/// the old idiom to break a stuck lock is `release --token "$(redis-cli GET K)"`. Given the
/// marker, the writer's `release` must not delete K under live shares: a writer (ours or a
/// foreign `SET NX`) would then hold K while the reader still holds its share, within its
/// validity.
#[test]
fn release_with_the_marker_as_token_does_not_let_a_writer_in_beside_a_reader() {
    let cluster = Cluster::start(3);
    let mut reading = reader(&cluster, "rv-marker-release");
    let release = cluster
        .redlock()
        .args(["release", "--key", "rv-marker-release", "--token", MARKER])
        .output()
        .unwrap();
    let writer = cluster
        .redlock()
        .args(["run", "--key", "rv-marker-release", "--", "true"])
        .output()
        .unwrap();
    assert_ne!(
        writer.status.code(),
        Some(0),
        "a writer ran while a reader held, after `release --token {MARKER}` ({}): {}",
        describe(&release),
        describe(&writer)
    );
    assert_ne!(
        release.status.code(),
        Some(0),
        "release with the marker as token said it released: {}",
        describe(&release)
    );
    assert_eq!(
        cluster.values("rv-marker-release"),
        vec![Some(MARKER.to_string()); 3],
        "the marker was deleted while a reader holds"
    );
    assert!(reading.is_running());
    reading.open_gate();
    assert_eq!(reading.wait_output().status.code(), Some(0));
}

/// The same with `extend`: the marker as token must not set K's TTL, else K expires under a
/// live share and another client's `SET K x NX` wins a majority while the reader holds.
#[test]
fn extend_with_the_marker_as_token_does_not_shorten_k_under_a_live_share() {
    let cluster = Cluster::start(3);
    let mut reading = reader(&cluster, "rv-marker-extend");
    let extend = cluster
        .redlock()
        .args(["extend", "--key", "rv-marker-extend", "--token", MARKER])
        .args(["--ttl", "200ms", "--node-timeout", "50ms"])
        .output()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(reading.is_running(), "{}", reading.stderr_so_far());
    assert!(
        !foreign_set_nx_wins(&cluster, "rv-marker-extend"),
        "a foreign SET NX won a majority while a reader holds: `extend --token {MARKER}` \
         cut K's TTL ({})",
        describe(&extend)
    );
    assert_ne!(
        extend.status.code(),
        Some(0),
        "extend with the marker as token said it extended: {}",
        describe(&extend)
    );
    reading.open_gate();
    reading.wait_output();
}

/// K's TTL always covers the longest live share (the model checker's note): a long reader and
/// a short one; the short one extends (to a still shorter TTL) and releases; K, the readers
/// key and the records keep at least the long share's time left.
#[test]
fn k_outlives_the_longest_share_after_a_shorter_one_extends_and_releases() {
    let cluster = Cluster::start(3);
    let key = "rv-pttl";
    let acquire = |ttl: &str| acquire_reader(&cluster, key, ttl);
    let long = acquire("60s");
    let short = acquire("5s");
    let extend = cluster
        .redlock()
        .args(["extend", "--key", key, "--token", &short, "--ttl", "2s"])
        .output()
        .unwrap();
    assert!(extend.status.success(), "{}", describe(&extend));
    let check = |when: &str| {
        for (i, server) in cluster.servers.iter().enumerate() {
            for name in [
                key.to_string(),
                keys::readers(key),
                keys::reader_holders(key),
            ] {
                let pttl = server.pttl(&name);
                assert!(pttl > 50_000, "{when}: master {i}: {name} has PTTL {pttl}");
            }
        }
    };
    check("after the short one extended");
    let release = cluster
        .redlock()
        .args(["release", "--key", key, "--token", &short])
        .output()
        .unwrap();
    assert!(release.status.success(), "{}", describe(&release));
    check("after the short one released");
    let release = cluster
        .redlock()
        .args(["release", "--key", key, "--token", &long])
        .output()
        .unwrap();
    assert!(release.status.success(), "{}", describe(&release));
    assert!(cluster.key_gone_everywhere(key));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A reader holds; a writer waits behind it (with a short --wait); a reader waits behind the
/// writer. When the writer gives up and leaves the line, the reader behind it is eligible at
/// once (only readers hold): it must be woken by a notice (LEAVE's wake-up), not by its
/// heartbeat.
#[test]
fn a_writer_leaving_the_line_wakes_the_reader_behind_it() {
    let cluster = Cluster::start(3);
    let key = "rv-leave";
    let mut first = reader(&cluster, key);
    let writer = cluster
        .redlock()
        .args(["run", "--key", key, "--wait", "3s", "--", "true"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let queue = keys::queue(key);
    assert!(eventually(Duration::from_secs(10), || cluster
        .servers
        .iter()
        .all(|s| zcard(s, &queue) == 1)));
    let mut behind = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", key, "--shared", "--wait", "60s", "-v"]),
    );
    assert!(eventually(Duration::from_secs(10), || cluster
        .servers
        .iter()
        .all(|s| zcard(s, &queue) == 2)));
    let writer = writer.wait_with_output().unwrap();
    assert_eq!(writer.status.code(), Some(75), "{}", describe(&writer));
    behind.wait_ready();
    let stderr = behind.stderr_so_far();
    assert!(
        stderr.contains("in turn (started by notice)"),
        "the reader behind the leaving writer was not woken by a notice:\n{stderr}"
    );
    for running in [&mut first, &mut behind] {
        running.open_gate();
        assert_eq!(running.wait_output().status.code(), Some(0));
    }
    assert!(cluster.key_gone_everywhere(key));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A writer's command that itself takes the same key as a reader (`run --shared` inside
/// `run`): the writer already excludes everybody, so the nested reader either re-uses it (as
/// a nested writer would) or is refused at once with a usage error; it must not wait for its
/// own parent until --wait runs out.
#[test]
fn a_nested_reader_inside_the_writer_does_not_wait_for_its_own_parent() {
    let cluster = Cluster::start(3);
    let exe = crate::common::redlock_binary();
    let output = cluster
        .redlock()
        .args(["run", "--key", "rv-nested", "--", exe])
        .args(["run", "--key", "rv-nested", "--shared", "--wait", "3s"])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_ne!(
        output.status.code(),
        Some(75),
        "the nested reader waited for its own parent: {}",
        describe(&output)
    );
}

/// The reverse: a writer nested inside a reader of the same key can never get it (its own
/// parent's share keeps it out; there is no upgrade), so it must be refused at once with a
/// line that says so, not wait for --wait and then blame "readers".
#[test]
fn a_nested_writer_inside_a_reader_is_refused_at_once() {
    let cluster = Cluster::start(3);
    let exe = crate::common::redlock_binary();
    let output = cluster
        .redlock()
        .args(["run", "--key", "rv-nested-up", "--shared", "--", exe])
        .args(["run", "--key", "rv-nested-up", "--wait", "3s"])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(64),
        "a writer inside its own reader: {}",
        describe(&output)
    );
}

/// Checked atomically on one master: live shares (score ahead of the master's clock) while K
/// does not hold the marker, or K expiring (PEXPIRETIME, absolute: the scores' clock) before
/// the longest live share ends, or any key of the lock without a TTL. Returns the violation, or
/// nil. (Absolute times: a PTTL read after TIME in the same script would be skewed by however
/// long the script ran in between.)
const INVARIANT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
  if redis.call('PTTL', KEYS[i]) == -1 then
    return 'no TTL: ' .. KEYS[i]
  end
end
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'WITHSCORES')
if #live == 0 then
  return nil
end
local longest = tonumber(live[#live])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'live shares while K is ' .. tostring(redis.call('GET', KEYS[1]))
end
local expires = redis.pcall('PEXPIRETIME', KEYS[1])
if type(expires) == 'table' then
  -- Before Redis 7.0 (no PEXPIRETIME): from the TTL, read after TIME, so never later than the
  -- true expiry; the check can only be stricter for it.
  expires = now + redis.call('PTTL', KEYS[1])
end
if expires < longest then
  return 'K expires at ' .. expires .. ', before the longest share ends at ' .. longest
end
return nil
";

/// Readers with short TTLs that renew, release, and get killed, beside writers, for a few
/// seconds; meanwhile every master is polled: at no instant does a live share stand without
/// the marker on K covering it, and no key of the lock is ever without a TTL.
#[test]
fn k_covers_every_live_share_at_every_instant_under_a_mixed_herd() {
    let cluster = Cluster::start(3);
    let key = "rv-invariant";
    let names = [
        key.to_string(),
        keys::readers(key),
        keys::reader_holders(key),
        keys::holder(key),
        keys::queue(key),
        keys::lease(key),
        keys::waiters(key),
        keys::tickets(key),
    ];
    let mut herd = Vec::new();
    for n in 0..6 {
        let mut cmd = cluster.redlock();
        let shared = n % 3 != 0;
        cmd.args(["run", "--key", key, "--ttl", "600ms", "--wait", "30s"]);
        if shared {
            cmd.arg("--shared");
        }
        let section = if shared { "sleep 0.3" } else { "sleep 0.05" };
        let script = format!("for i in 1 2 3 4 5 6; do {section}; done");
        herd.push((
            shared,
            cmd.args(["--", "sh", "-c", &script]).spawn().unwrap(),
        ));
    }
    let mut violations = Vec::new();
    let mut polls = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    let mut killed = false;
    while std::time::Instant::now() < deadline {
        for (i, server) in cluster.servers.iter().enumerate() {
            let found: Option<String> = redis::cmd("EVAL")
                .arg(INVARIANT)
                .arg(names.len())
                .arg(&names)
                .arg(MARKER)
                .query(&mut server.connection())
                .expect("EVAL");
            if let Some(found) = found {
                violations.push(format!("master {i}: {found}"));
            }
        }
        polls += 1;
        // Half-way, a reader is killed: its share must expire by itself, covered all along.
        if !killed && polls == 50 {
            if let Some((_, child)) = herd.iter_mut().find(|(shared, _)| *shared) {
                let _ = child.kill();
            }
            killed = true;
        }
    }
    for (_, mut child) in herd {
        let _ = child.wait();
    }
    assert!(violations.is_empty(), "after {polls} polls: {violations:?}");
    assert!(polls > 50, "only {polls} polls");
}

/// A reader whose share expired while another reader keeps K (the marker) alive: extending it
/// must fail and must not re-create its share, though K still holds the marker everywhere.
#[test]
fn an_expired_share_is_not_re_created_by_its_extension_under_another_reader() {
    let cluster = Cluster::start(3);
    let key = "rv-late-extend";
    let acquire = |ttl: &str| acquire_reader(&cluster, key, ttl);
    let late = acquire("500ms");
    let keeper = acquire("30s");
    std::thread::sleep(Duration::from_millis(900));
    let extend = cluster
        .redlock()
        .args(["extend", "--key", key, "--token", &late, "--ttl", "30s"])
        .output()
        .unwrap();
    assert_eq!(extend.status.code(), Some(70), "{}", describe(&extend));
    for server in &cluster.servers {
        let score: Option<f64> = redis::cmd("ZSCORE")
            .arg(keys::readers(key))
            .arg(&late)
            .query(&mut server.connection())
            .unwrap();
        assert!(score.is_none(), "the expired share came back: {score:?}");
    }
    assert_eq!(cluster.values(key), vec![Some(MARKER.to_string()); 3]);
    let release = cluster
        .redlock()
        .args(["release", "--key", key, "--token", &keeper])
        .output()
        .unwrap();
    assert!(release.status.success(), "{}", describe(&release));
    assert!(cluster.key_gone_everywhere(key));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Issue 33, item 2: a share another client wrote into the readers key with a score redlock
/// never writes (not a whole number, past any TTL redlock gives, `+inf`) is no reason to fail.
/// Before, K was set to the marker and the script then failed on PEXPIREAT of that score: the
/// reader got 69 and K kept the marker forever, refusing every writer. A share scored past
/// any TTL is dropped as not redlock's; one that is only fractional is a live share, and K
/// covers it. K and the readers' keys always have a TTL.
#[test]
fn a_foreign_share_with_a_score_redlock_never_writes_is_no_crash_and_no_key_without_ttl() {
    let cluster = Cluster::start(3);
    let fractional = format!("{}.5", common::now_ms() + 60_000);
    for (i, score) in [fractional.as_str(), "1e20", "+inf"]
        .into_iter()
        .enumerate()
    {
        let key = format!("rv-odd-score-{i}");
        for server in &cluster.servers {
            let added: i64 = redis::cmd("ZADD")
                .arg(keys::readers(&key))
                .arg(score)
                .arg("shr-foreign")
                .query(&mut server.connection())
                .unwrap();
            assert_eq!(added, 1);
        }
        let token = acquire_reader(&cluster, &key, "30s");
        assert_eq!(
            cluster.values(&key),
            vec![Some(MARKER.to_string()); 3],
            "{score}"
        );
        assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new(), "{score}");
        for server in &cluster.servers {
            // K lives as long as the longest live share, never past a year and a day.
            let ttl = server.pttl(&key);
            assert!((29_000..=366 * 86_400_000).contains(&ttl), "{score}: {ttl}");
        }
        let release = cluster
            .redlock()
            .args(["release", "--key", &key, "--token", &token])
            .output()
            .unwrap();
        assert!(release.status.success(), "{score}: {}", describe(&release));
        let writer = cluster
            .redlock()
            .args(["acquire", "--key", &key, "--ttl", "30s", "--wait", "0"])
            .output()
            .unwrap();
        if i == 0 {
            // A fractional score is a live share still: the writer waits for it.
            assert_eq!(writer.status.code(), Some(75), "{}", describe(&writer));
        } else {
            assert!(writer.status.success(), "{score}: {}", describe(&writer));
        }
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Issue 33, item 9: while readers hold the key, a waiting writer's progress line says so, as
/// its give-up line does; it said "held by another client".
#[test]
fn a_waiting_writers_progress_line_says_readers_hold_the_key() {
    let cluster = Cluster::start(3);
    let key = "rv-progress";
    acquire_reader(&cluster, key, "30s");
    let writer = cluster
        .redlock()
        .args([
            "acquire", "--key", key, "--ttl", "10s", "--wait", "1500ms", "-v",
        ])
        .output()
        .unwrap();
    assert_eq!(writer.status.code(), Some(75), "{}", describe(&writer));
    let stderr = String::from_utf8_lossy(&writer.stderr);
    let progress: Vec<&str> = stderr.lines().filter(|l| l.contains("waiting")).collect();
    assert!(!progress.is_empty(), "{stderr}");
    for line in progress {
        assert!(
            line.contains("held by readers (--shared)"),
            "{line}\n{stderr}"
        );
    }
    assert!(!stderr.contains("another client"), "{stderr}");
    assert!(stderr.contains("is held by readers (--shared)"), "{stderr}");
}
