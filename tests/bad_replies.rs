//! Masters that answer with something no Redis would send: an endless reply, garbage, arrays
//! nested without end. Each is played by the fault proxy in front of a real master (the
//! master runs the request; the proxy replaces its reply). The promise: such a master is
//! failed like an unreachable one, with an error that names it and the cause, its connection
//! is dropped, and redlock's memory stays small whatever it sends.

use crate::common;

use std::process::Command;
use std::time::Duration;

use crate::common::proxy::{self, Fault, Proxy};
use crate::common::{Cluster, Measured, run_measured};

/// The bound on redlock's peak resident memory, whatever a master sends. A debug build of
/// `run` peaks near 11 MiB against healthy masters; a reply is capped at 1 MiB.
const PEAK_RSS_KIB: u64 = 20 * 1024;

/// Where the watchdog kills a runaway redlock: far above the bound, far below harm.
const CEILING_KIB: u64 = 512 * 1024;

/// `redlock` going through `proxies`.
fn redlock(proxies: &[Proxy]) -> Command {
    let mut cmd = common::redlock();
    cmd.env("REDLOCK_SERVERS", proxy::servers_env(proxies));
    cmd
}

fn measured(cmd: &mut Command) -> Measured {
    let measured = run_measured(cmd, CEILING_KIB, Duration::from_secs(60));
    // For the record (shown with --nocapture).
    eprintln!(
        "redlock {:?}: peak RSS {} KiB ({} KiB anonymous, {} KiB of files) in {:?}",
        cmd.get_args().collect::<Vec<_>>(),
        measured.peak_rss_kib,
        measured.peak_anon_kib,
        measured.peak_file_kib,
        measured.elapsed
    );
    assert!(
        measured.killed.is_none() && measured.peak_rss_kib < PEAK_RSS_KIB,
        "redlock must stay under {PEAK_RSS_KIB} KiB: {}",
        measured.describe()
    );
    measured
}

fn stderr(measured: &Measured) -> String {
    String::from_utf8_lossy(&measured.output.stderr).into_owned()
}

fn assert_no_key_without_ttl(cluster: &Cluster) {
    let found = cluster.keys_without_ttl();
    assert!(found.is_empty(), "keys that would never expire: {found:?}");
}

/// One master of three answers every request with the header of a ~1 TB bulk string and then
/// streams bytes for as long as anyone reads; another is slow, so that every round waits for
/// it, reading the endless one meanwhile. The run takes the lock on the good and the slow
/// master, renews it there (every renewal meets the endless reply again, on a new
/// connection), releases it, and its memory stays small throughout.
#[test]
fn one_master_streaming_an_endless_reply_costs_no_memory_and_the_run_keeps_its_lock() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[0].set(Fault::Oversized);
    proxies[1].set(Fault::Delay(Duration::from_millis(100)));
    // TTL 9 s: a renewal at 3 s while the command runs.
    let run = measured(redlock(&proxies).args([
        "-vv",
        "run",
        "--key",
        "endless",
        "--ttl",
        "9s",
        "--node-timeout",
        "3s",
        "--",
        "sleep",
        "3.5",
    ]));
    let text = stderr(&run);
    assert_eq!(run.output.status.code(), Some(0), "{}", run.describe());
    assert!(text.contains("renewed"), "{text}");
    let refused = format!(
        "{} -> bad reply: reply larger than 1048576 bytes",
        proxies[0].url()
    );
    for round in ["acquire", "extend"] {
        assert!(
            text.contains(&format!("{round} \"endless\": {refused}")),
            "the {round} did not name the master and the cause: {text}"
        );
    }
    // Released on the two good masters; whatever the bad one holds expires.
    assert!(cluster.servers[1].get("endless").is_none());
    assert!(cluster.servers[2].get("endless").is_none());
    assert_no_key_without_ttl(&cluster);
    // The refused replies' connections were dropped, not kept (and read) forever.
    assert!(
        common::eventually(Duration::from_secs(5), || proxies[0].open_connections()
            == 0),
        "{} connections left open",
        proxies[0].open_connections()
    );
}

/// A waiter subscribes to release notices on every master, on connections of their own (read
/// by a pipe like every connection, under the same caps). One master streams an endless reply
/// there too: the wait must not buffer it, and must still end when the holder releases.
#[test]
fn waiting_for_notices_from_a_master_streaming_an_endless_reply_costs_no_memory() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    // The holder goes straight to the masters, and releases after a second.
    let mut holder = cluster
        .redlock()
        .args(["run", "--key", "notice", "--ttl", "10s", "--", "sleep", "1"])
        .spawn()
        .expect("spawn the holder");
    assert!(
        common::eventually(Duration::from_secs(10), || cluster
            .values("notice")
            .iter()
            .flatten()
            .count()
            == 3),
        "the holder did not take the lock"
    );
    proxies[0].set(Fault::Oversized);
    let waiter = measured(redlock(&proxies).args([
        "-vv",
        "run",
        "--key",
        "notice",
        "--ttl",
        "10s",
        "--node-timeout",
        "1s",
        "--wait",
        "20s",
        "--",
        "true",
    ]));
    assert_eq!(
        waiter.output.status.code(),
        Some(0),
        "{}",
        waiter.describe()
    );
    assert!(holder.wait().unwrap().success());
    assert_no_key_without_ttl(&cluster);
}

/// `status` waits for every master: one that streams forever is failed as soon as its reply
/// passes the cap, not read until the node timeout.
#[test]
fn status_names_a_master_whose_reply_is_too_large() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[1].set(Fault::Oversized);
    let status =
        measured(redlock(&proxies).args(["status", "--key", "endless", "--node-timeout", "20s"]));
    let stdout = String::from_utf8_lossy(&status.output.stdout);
    // A free lock on a majority: exit 3 (free), with the bad master shown.
    assert!(
        stdout.contains(&proxies[1].url()) && stdout.contains("reply larger than 1048576 bytes"),
        "{}",
        status.describe()
    );
    assert!(
        status.elapsed < Duration::from_secs(20),
        "decided only at the node timeout: {}",
        status.describe()
    );
}

#[test]
fn a_majority_streaming_endless_replies_gives_69_naming_them_and_the_cause() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[0].set(Fault::Oversized);
    proxies[2].set(Fault::Oversized);
    let acquire = measured(redlock(&proxies).args([
        "acquire",
        "--key",
        "endless",
        "--ttl",
        "10s",
        "--node-timeout",
        "4s",
    ]));
    assert_eq!(
        acquire.output.status.code(),
        Some(69),
        "{}",
        acquire.describe()
    );
    let text = stderr(&acquire);
    assert_eq!(text.lines().count(), 1, "{text}");
    for bad in [&proxies[0], &proxies[2]] {
        assert!(
            text.contains(&format!(
                "{} bad reply: reply larger than 1048576 bytes",
                bad.url()
            )),
            "{text}"
        );
    }
    assert!(!text.contains(&proxies[1].url()), "{text}");
    // Decided when the replies passed the cap, not at the node timeout.
    assert!(
        acquire.elapsed < Duration::from_secs(4),
        "{}",
        acquire.describe()
    );
    assert_no_key_without_ttl(&cluster);
}

#[test]
fn a_majority_sending_garbage_gives_69_naming_them_and_the_cause() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[1].set(Fault::Garbage);
    proxies[2].set(Fault::Garbage);
    let run = measured(redlock(&proxies).args([
        "run",
        "--key",
        "garbage",
        "--ttl",
        "10s",
        "--node-timeout",
        "4s",
        "--",
        "true",
    ]));
    assert_eq!(run.output.status.code(), Some(69), "{}", run.describe());
    let text = stderr(&run);
    assert_eq!(text.lines().count(), 1, "{text}");
    for bad in [&proxies[1], &proxies[2]] {
        assert!(
            text.contains(&format!("{} bad reply: not RESP (starts", bad.url())),
            "{text}"
        );
    }
    assert!(run.elapsed < Duration::from_secs(4), "{}", run.describe());
    // The garbage masters ran the acquire (the proxy only replaced the replies): whatever
    // they kept must expire, and the good master was released. redlock exits once the undo is
    // decided and on the wire (lock/quorum/round.rs: `Until::DecidedAndSent`), here decided
    // by the two bad replies: the good master may run its release just after redlock exits.
    assert!(common::eventually(Duration::from_secs(5), || cluster
        .servers[0]
        .get("garbage")
        .is_none()));
    assert_no_key_without_ttl(&cluster);
}

/// `*1\r\n*1\r\n...` without end: refused at the nesting limit, long before the reply's size
/// would be, for acquire and for status alike.
#[test]
fn deeply_nested_replies_are_refused() {
    let cluster = Cluster::start(3);
    let proxies = proxy::before_each(&cluster);
    proxies[2].set(Fault::DeepNesting);
    let acquire = measured(redlock(&proxies).args([
        "acquire",
        "--key",
        "deep",
        "--ttl",
        "10s",
        "--node-timeout",
        "4s",
    ]));
    assert_eq!(
        acquire.output.status.code(),
        Some(0),
        "{}",
        acquire.describe()
    );
    let status =
        measured(redlock(&proxies).args(["status", "--key", "deep", "--node-timeout", "20s"]));
    let stdout = String::from_utf8_lossy(&status.output.stdout);
    assert!(
        stdout.contains(&proxies[2].url()) && stdout.contains("nested deeper than 8 arrays"),
        "{}",
        status.describe()
    );
    assert!(
        status.elapsed < Duration::from_secs(20),
        "{}",
        status.describe()
    );
    assert_no_key_without_ttl(&cluster);
}

/// The caps leave room for every legitimate reply: a lock whose command line is a megabyte
/// (a file list) is still shown to a contender and to `status`, its holder record cut short.
#[test]
fn a_megabyte_command_line_stays_inside_the_caps() {
    let cluster = Cluster::start(3);
    let files: Vec<String> = (0..20_000)
        .map(|i| format!("src/some/deeply/nested/directory/file-{i:05}.rs"))
        .collect();
    let mut holder = cluster
        .redlock()
        .args(["run", "--key", "long", "--ttl", "20s", "--"])
        .args(["sh", "-c", "sleep 30", "sh"])
        .args(&files)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the holder");
    assert!(
        common::eventually(Duration::from_secs(10), || cluster
            .values("long")
            .iter()
            .flatten()
            .count()
            >= 2),
        "the lock was not taken"
    );
    let contender = cluster
        .redlock()
        .args(["run", "--key", "long", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&contender.stderr);
    assert_eq!(contender.status.code(), Some(75), "{text}");
    assert!(text.contains("sh -c 'sleep 30' sh src/some/"), "{text}");
    let status = cluster
        .redlock()
        .args(["status", "--key", "long", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        common::describe(&status)
    );
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let command = json["holder"]["command"].as_str().unwrap();
    assert!(command.len() <= 4096 && command.ends_with('…'), "{command}");
    let _ = holder.kill();
    let _ = holder.wait();
}

/// A cluster master (`redis+cluster://`) whose node redirects to an address that does not
/// parse: the error says the node sent a redirection that cannot be followed and shows the
/// address escaped, rather than advising to give the cluster as redis+cluster://, which it is.
#[test]
fn a_redirection_that_cannot_be_followed_is_named_as_such() {
    let cluster = Cluster::start(1);
    let proxies = proxy::before_each(&cluster);
    proxies[0].set(Fault::BadMoved);
    let url = proxies[0].url().replace("redis://", "redis+cluster://");
    let run = measured(
        common::redlock()
            .env("REDLOCK_SERVERS", &url)
            .args(["status", "--key", "k"]),
    );
    let text = stderr(&run);
    assert_eq!(run.output.status.code(), Some(69), "{}", run.describe());
    assert!(
        text.contains("sent a redirection that cannot be followed"),
        "{text}"
    );
    assert!(text.contains(r"MOVED 3999 \u{1b}[2Jnowhere"), "{text}");
    assert!(!text.contains("give the cluster as"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}
