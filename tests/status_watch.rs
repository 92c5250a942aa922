//! `redlock status --watch`: a line per change of holder, in order, none twice, through
//! takes, releases, a holder killed by SIGKILL whose key expires, readers, a semaphore's slot,
//! a holder revoked by `release --force` and masters that stop answering; a signal ends it with 0, a closed output quietly.
//!
//! Each step of a scripted sequence waits until the watcher has said the step's line before
//! the next step starts (the watcher reads at least every second, and a step is never timed),
//! and at the end the whole stream is compared with the sequence: every change, in order,
//! and nothing else.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{
    Captured, Cluster, RedisCluster, Running, describe, eventually, send_signal, sharded_pub_sub,
};
use crate::force_release::force;

/// How long a watcher gets to say a change: its fallback read is every second, an expiry is
/// read when the TTL runs out; generous for a loaded machine.
const SAY_WITHIN: Duration = Duration::from_secs(20);

/// A `status --watch` running in the background, its stdout read as it comes.
struct Watcher {
    child: Child,
    stdout: Captured,
    stderr: Captured,
}

impl Watcher {
    /// `redlock [GLOBAL OPTIONS] status --watch --key KEY [--json]`, `redlock` being `cmd`
    /// (a cluster's, with its masters; global options such as `-vv` already added).
    fn start(mut cmd: Command, key: &str, json: bool) -> Watcher {
        cmd.args(["status", "--watch", "--key", key]);
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the watcher");
        let stdout = Captured::stdout_of(&mut child);
        let stderr = Captured::stderr_of(&mut child);
        Watcher {
            child,
            stdout,
            stderr,
        }
    }

    /// The JSON lines said so far.
    fn lines(&self) -> Vec<Value> {
        self.stdout
            .text()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    }

    /// Waits until the watcher said `count` lines, the last one being `event`; returns it.
    fn said(&self, count: usize, event: &str) -> Value {
        let said = eventually(SAY_WITHIN, || self.lines().len() >= count);
        let lines = self.lines();
        assert!(
            said,
            "the watcher said {} lines, not {count} (the last one {event:?}): {}\nstderr: {}",
            lines.len(),
            self.stdout.text(),
            self.stderr.text()
        );
        let line = lines[count - 1].clone();
        assert_eq!(line["event"], event, "line {count}: {}", self.stdout.text());
        line
    }

    /// Ends the watcher with `signal`; returns its exit code and everything it said.
    fn stop(mut self, signal: i32) -> (Option<i32>, String, String) {
        send_signal(self.child.id(), signal);
        let status = self.child.wait().expect("wait for the watcher");
        eventually(SAY_WITHIN, || {
            self.stdout.finished() && self.stderr.finished()
        });
        (status.code(), self.stdout.text(), self.stderr.text())
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cmd` with `-vv`: each read of the watch says what started it.
fn verbose(mut cmd: Command) -> Command {
    cmd.arg("-vv");
    cmd
}

fn token_of(line: &Value) -> &str {
    line["token"].as_str().expect("the line names a token")
}

fn pid_of(line: &Value) -> u64 {
    line["holder"]["pid"]
        .as_u64()
        .expect("the line names the holder's pid")
}

fn acquire(cluster: &Cluster, key: &str) -> String {
    cluster.acquire(key, &["--ttl", "30s", "--wait", "0"])
}

/// A `run` holding `key` with `options`, its command waiting for the gate.
fn holder(cluster: &Cluster, key: &str, options: &[&str]) -> Running {
    let mut cmd = cluster.redlock();
    cmd.args(["run", "--key", key, "--wait", "10s"])
        .args(options);
    let mut running = Running::start(&mut cmd);
    running.wait_ready();
    running
}

/// Opens the gate of a `run` holder and waits for it to end and release.
fn finish(mut running: Running) {
    running.open_gate();
    let output = running.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
}

/// Waits for line `count`, a `revoked` one naming the force's `reason`; returns it.
fn said_revoked(watcher: &Watcher, count: usize, reason: &str) -> Value {
    let revoked = watcher.said(count, "revoked");
    assert_eq!(revoked["verdict"], "revoked", "{revoked}");
    assert_eq!(revoked["revoked"]["reason"], reason, "{revoked}");
    revoked
}

/// Waits for a revoked `run` to end, as a revoked run does (exit 70), and so to release.
fn ended_revoked(running: &mut Running) {
    let output = running.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));
}

/// Waits for line `count`: the key opened, `current` and free.
fn said_opened(watcher: &Watcher, count: usize) {
    let opened = watcher.said(count, "current");
    assert_eq!(opened["verdict"], "free", "{opened}");
}

#[test]
fn every_change_of_a_scripted_sequence_is_said_in_order_and_none_twice() {
    let cluster = Cluster::start(3);
    let key = "watched";
    let watcher = Watcher::start(cluster.redlock(), key, true);
    let first = watcher.said(1, "current");
    assert_eq!(first["verdict"], "free", "{first}");

    // Taken and released by the shell workflow.
    let token = acquire(&cluster, key);
    let taken = watcher.said(2, "taken");
    assert_eq!(token_of(&taken), token);
    assert_eq!(taken["kind"], "lock");
    assert_eq!(taken["verdict"], "held");
    assert_eq!(taken["holders"][0]["token"], token.as_str());
    cluster.release(key, &token);
    let released = watcher.said(3, "released");
    assert_eq!(token_of(&released), token);
    assert_eq!(released["verdict"], "free");

    // A `run` killed by SIGKILL: nobody releases, the key expires by its TTL.
    let mut killed = holder(&cluster, key, &["--ttl", "2s"]);
    let taken = watcher.said(4, "taken");
    assert_eq!(pid_of(&taken), u64::from(killed.child.id()));
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    let expired = watcher.said(5, "expired");
    assert_eq!(token_of(&expired), token_of(&taken));

    // Taken again by another holder, which releases it.
    let other = holder(&cluster, key, &["--ttl", "30s"]);
    let taken = watcher.said(6, "taken");
    assert_eq!(pid_of(&taken), u64::from(other.child.id()));
    finish(other);
    watcher.said(7, "released");

    // Two readers, each taken and released on its own line.
    let first_reader = holder(&cluster, key, &["--ttl", "30s", "--shared"]);
    let taken = watcher.said(8, "taken");
    assert_eq!(taken["kind"], "shared");
    assert_eq!(pid_of(&taken), u64::from(first_reader.child.id()));
    let second_reader = holder(&cluster, key, &["--ttl", "30s", "--shared"]);
    let taken = watcher.said(9, "taken");
    assert_eq!(pid_of(&taken), u64::from(second_reader.child.id()));
    assert_eq!(taken["holders"].as_array().unwrap().len(), 2, "{taken}");
    let first_pid = u64::from(first_reader.child.id());
    finish(first_reader);
    let released = watcher.said(10, "released");
    assert_eq!(pid_of(&released), first_pid);
    finish(second_reader);
    watcher.said(11, "released");

    // A semaphore's slot.
    let slot = holder(&cluster, key, &["--ttl", "30s", "--limit", "2"]);
    let taken = watcher.said(12, "taken");
    assert_eq!(taken["kind"], "semaphore");
    assert_eq!(taken["limit"], 2);
    finish(slot);
    let released = watcher.said(13, "released");
    assert_eq!(released["verdict"], "free");

    // Revoked by `release --force`: the holder is said revoked, with who and why; the key
    // stays closed until the revoked run stops at its next renewal and says so.
    let mut forced = holder(&cluster, key, &["--ttl", "3s"]);
    let taken = watcher.said(14, "taken");
    let forced_token = token_of(&taken).to_string();
    let force = force(&cluster, key, "watched it");
    assert_eq!(force.status.code(), Some(0), "{}", describe(&force));
    let revoked = said_revoked(&watcher, 15, "watched it");
    assert_eq!(token_of(&revoked), forced_token);
    ended_revoked(&mut forced);
    said_opened(&watcher, 16);

    let (code, stdout, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let events: Vec<String> = stdout
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            line["event"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        events,
        [
            "current", "taken", "released", "taken", "expired", "taken", "released", "taken",
            "taken", "released", "released", "taken", "released", "taken", "revoked", "current"
        ],
        "{stdout}"
    );
}

/// A semaphore forced by `release --force` is said `revoked`, each slot holder with the
/// record (who, why), as the lock and the readers are, not `released` with nobody holding;
/// and the revoked holders' own releases, once the last one said it stopped, open it: said
/// `current`, free (issue 47, item 5).
#[test]
fn a_forced_semaphore_is_said_revoked_and_opened_by_its_revoked_holders_releases() {
    let cluster = Cluster::start(3);
    let key = "batch";
    let watcher = Watcher::start(cluster.redlock(), key, true);
    watcher.said(1, "current");
    let slot = ["--ttl", "30s", "--limit", "2"];
    let mut first = holder(&cluster, key, &slot);
    watcher.said(2, "taken");
    let mut second = holder(&cluster, key, &slot);
    watcher.said(3, "taken");
    let tokens = [first.token(), second.token()];

    let force = force(&cluster, key, "batch hung");
    assert_eq!(force.status.code(), Some(0), "{}", describe(&force));
    let mut said = Vec::new();
    for count in [4, 5] {
        let revoked = said_revoked(&watcher, count, "batch hung");
        assert_eq!(revoked["kind"], "semaphore", "{revoked}");
        let whom: Vec<&str> = revoked["revoked"]["revoked"]
            .as_array()
            .expect("the slots it revoked")
            .iter()
            .map(|r| r["token"].as_str().unwrap())
            .collect();
        assert_eq!(whom.len(), 2, "{revoked}");
        assert!(
            tokens.iter().all(|t| whom.contains(&t.as_str())),
            "{revoked}"
        );
        said.push(token_of(&revoked).to_string());
    }
    said.sort();
    let mut expected = tokens.to_vec();
    expected.sort();
    assert_eq!(said, expected);

    // Each revoked run ends and says it stopped: the last one opens the semaphore.
    for running in [&mut first, &mut second] {
        running.open_gate();
        ended_revoked(running);
    }
    said_opened(&watcher, 6);
    let (code, stdout, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stdout.lines().count(), 6, "{stdout}");
}

/// A hand-off to a waiter is announced on the waiter's own channel only (the key's release
/// channel stays silent while someone waits): the watch listens there too, and reads when it
/// hears it. `-vv` says what started each read.
#[test]
fn a_hand_off_to_a_waiter_wakes_the_watch_by_the_waiters_notice() {
    let cluster = Cluster::start(3);
    let key = "handoff";
    let first = holder(&cluster, key, &["--ttl", "30s"]);
    let watcher = Watcher::start(verbose(cluster.redlock()), key, true);
    watcher.said(1, "current");
    let mut cmd = cluster.redlock();
    cmd.args(["run", "--key", key, "--ttl", "30s", "--wait", "30s"]);
    let mut second = Running::start(&mut cmd);
    // The watch saw the waiter in line and listens on its channel.
    watcher
        .stderr
        .wait_for("a read after new subscriptions", SAY_WITHIN);
    let notices_before = watcher
        .stderr
        .text()
        .matches("a read after a notice\n")
        .count();
    let first_pid = u64::from(first.child.id());
    finish(first);
    second.wait_ready();
    let released = watcher.said(2, "released");
    assert_eq!(pid_of(&released), first_pid);
    let taken = watcher.said(3, "taken");
    assert_eq!(pid_of(&taken), u64::from(second.child.id()));
    let notices = watcher
        .stderr
        .text()
        .matches("a read after a notice\n")
        .count();
    assert!(
        notices > notices_before,
        "no read after the waiter's notice: {}",
        watcher.stderr.text()
    );
    // With nobody waiting, the release is announced on the key's channel.
    finish(second);
    watcher.said(4, "released");
    let (code, _, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0));
    assert!(
        stderr.matches("a read after a notice\n").count() > notices,
        "no read after the release notice: {stderr}"
    );
}

/// A Redis Cluster as the one master: the watch reads through the node the URL names, and
/// hears the release on the node that owns the key's slot (sharded pub/sub, Redis 7).
#[test]
fn a_cluster_master_is_watched_through_the_node_that_owns_the_key() {
    let cluster = RedisCluster::start(3);
    let key = cluster.key_on(2, "watched-");
    assert_ne!(cluster.owner(&key), 0);
    let watcher = Watcher::start(verbose(cluster.redlock()), &key, true);
    assert_eq!(watcher.said(1, "current")["verdict"], "free");
    let mut acquire = cluster.redlock();
    let output = acquire
        .args(["acquire", "--key", &key, "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(token_of(&watcher.said(2, "taken")), token);
    let output = cluster
        .redlock()
        .args(["release", "--key", &key, "--token", &token])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(token_of(&watcher.said(3, "released")), token);
    let (code, _, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0), "{stderr}");
    if sharded_pub_sub() {
        assert!(
            stderr.contains("a read after a notice\n"),
            "the release was not heard: {stderr}"
        );
    }
}

#[test]
fn sigint_ends_the_watch_with_0_after_saying_who_holds() {
    let cluster = Cluster::start(1);
    let token = acquire(&cluster, "held");
    let watcher = Watcher::start(cluster.redlock(), "held", false);
    let text = watcher.stdout.wait_for("\n", SAY_WITHIN);
    assert!(
        text.contains(" current  lock \"held\" is held by ") && text.contains("(1 of 1 master"),
        "{text}"
    );
    let (code, stdout, stderr) = watcher.stop(libc::SIGINT);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(
        stdout.lines().count(),
        1,
        "nothing changed, nothing more said: {stdout}"
    );
    cluster.release("held", &token);
}

#[test]
fn a_paused_minority_is_said_once_and_the_watch_goes_on() {
    let mut cluster = Cluster::start(3);
    let key = "minority";
    let watcher = Watcher::start(cluster.redlock(), key, true);
    watcher.said(1, "current");
    cluster.server(2).pause();
    let down = watcher.said(2, "down");
    assert_eq!(down["master"], cluster.urls()[2].as_str(), "{down}");
    assert_eq!(down["unreachable"], 1);
    // Changes are still seen with a master paused.
    let token = acquire(&cluster, key);
    let taken = watcher.said(3, "taken");
    assert_eq!(token_of(&taken), token);
    assert_eq!(taken["holders"][0]["masters"], 2, "{taken}");
    cluster.release(key, &token);
    watcher.said(4, "released");
    cluster.server(2).resume();
    let up = watcher.said(5, "up");
    assert_eq!(up["master"], cluster.urls()[2].as_str());
    let (code, stdout, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stdout.lines().count(), 5, "the outage said once: {stdout}");
}

#[test]
fn a_majority_out_of_reach_makes_the_state_unknown_until_it_answers() {
    let mut cluster = Cluster::start(3);
    let key = "majority";
    let token = acquire(&cluster, key);
    let watcher = Watcher::start(cluster.redlock(), key, true);
    watcher.said(1, "current");
    cluster.server(1).pause();
    cluster.server(2).pause();
    // Two masters down, each said once (one read may see the first alone), and the state
    // unknown once.
    let lines = {
        eventually(SAY_WITHIN, || watcher.lines().len() >= 4);
        watcher.lines()
    };
    let mut events: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["event"].as_str().unwrap())
        .collect();
    events.sort_unstable();
    assert_eq!(events, ["down", "down", "unknown"], "{lines:?}");
    let unknown = lines.iter().find(|l| l["event"] == "unknown").unwrap();
    assert_eq!(unknown["verdict"], "unknown");
    cluster.server(1).resume();
    cluster.server(2).resume();
    // Known again: the holder did not change, so the state is said again.
    let current = watcher.said(5, "current");
    assert_eq!(current["verdict"], "held");
    assert_eq!(current["holders"][0]["token"], token.as_str());
    watcher.said(7, "up");
    let (code, stdout, stderr) = watcher.stop(libc::SIGTERM);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stdout.lines().count(), 7, "{stdout}");
    cluster.release(key, &token);
}

#[test]
fn a_closed_output_ends_the_watch_quietly() {
    let cluster = Cluster::start(1);
    let mut cmd = crate::common::redlock_env(Command::new("bash"));
    cmd.env("REDLOCK_SERVERS", cluster.servers_env())
        .env("REDLOCK", crate::common::redlock_binary())
        .args([
            "-c",
            "\"$REDLOCK\" status --watch --key piped | head -1; echo \"exit ${PIPESTATUS[0]}\" >&2",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut shell = cmd.spawn().unwrap();
    let stdout = Captured::stdout_of(&mut shell);
    let stderr = Captured::stderr_of(&mut shell);
    stdout.wait_for(" current ", SAY_WITHIN);
    // Nothing changes: the watch ends because head is gone, not at a next line.
    let ended = eventually(SAY_WITHIN, || shell.try_wait().unwrap().is_some());
    assert!(
        ended,
        "the watcher went on after head exited: {}",
        stderr.text()
    );
    assert_eq!(stderr.finish(), "exit 0\n");
}
