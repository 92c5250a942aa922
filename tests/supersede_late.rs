//! `--supersede` against real masters: an evicted waiter that comes back late (see the lock's
//! `supersede`, "An evicted waiter never takes the lock afterwards"). It is stopped (SIGSTOP)
//! while a newer waiter evicts it on every master, takes the lock, deploys and releases, so
//! that the line is empty and the lock free everywhere when it resumes: while the marks last,
//! they refuse its turn and name its evictor; after they expired, nothing on the masters
//! remembers it, and it finds no place, a superseding waiter making its place in its first
//! turn only. (The model in tests/queue_model/supersede.rs has both: its marks expire at any
//! moment.)

use std::process::{Child, Command, Output};
use std::time::Duration;

use crate::common::procfs::state_of;
use crate::common::{Cluster, Running, describe, eventually, send_signal};
use crate::supersede::{
    MARKS, TTL, deploy_command, in_line, ran, spawn_piped, start_holder, stderr,
};

/// A waiter's timing that keeps its place 23 s (three heartbeats and two node timeouts, see
/// the lock's `queue`), and an evictor's that keeps its marks 46 s (two of its leases): what
/// happens while a waiter is stopped below takes under 1 s.
const PATIENT: [&str; 4] = ["--ttl", "60s", "--node-timeout", "10s"];

/// Whether a mark on master `i` names `token` as evicted.
fn marked(cluster: &Cluster, i: usize, token: &str) -> bool {
    let mut master = cluster.servers[i].connection();
    redis::cmd("HEXISTS")
        .arg(MARKS)
        .arg(token)
        .query(&mut master)
        .unwrap()
}

/// Whether master `i` still has the eviction marks of "deploy".
fn marks_kept(cluster: &Cluster, i: usize) -> bool {
    redis::cmd("EXISTS")
        .arg(MARKS)
        .query::<u64>(&mut cluster.servers[i].connection())
        .unwrap()
        == 1
}

fn in_line_everywhere(cluster: &Cluster, n: usize) -> bool {
    (0..3).all(|i| in_line(cluster, i).len() == n)
}

/// The SETs the masters ran, all together.
fn sets(cluster: &Cluster) -> u64 {
    cluster.servers.iter().map(|s| s.command_calls("set")).sum()
}

/// What [`evicted_while_stopped`] leaves.
struct Stopped {
    /// The first deploy, stopped.
    first: Child,
    /// Its evictor, run to its end, and its pid.
    second: Output,
    evictor: u32,
    /// Whether the first was seen stopped, and then evicted on every master.
    seen: bool,
    /// The holder both waited behind, ended.
    _holder: Running,
}

impl Stopped {
    /// Resumes the first (SIGCONT, before any assertion, so that a failed one leaves no
    /// process stopped), and waits for it: its output, and the SETs its late turn ran.
    fn resume(self, cluster: &Cluster) -> (Output, u64) {
        let before = sets(cluster);
        send_signal(self.first.id(), libc::SIGCONT);
        let first = self.first.wait_with_output().unwrap();
        let wrote = sets(cluster) - before;
        assert!(self.seen, "{}", describe(&first));
        let second = &self.second;
        assert_eq!(second.status.code(), Some(0), "{}", describe(second));
        (first, wrote)
    }
}

/// Starts `first` behind a holder; once it waits on every master, stops it (SIGSTOP) and
/// starts `second`, which evicts it everywhere and deploys once the holder ends.
fn evicted_while_stopped(cluster: &Cluster, first: Command, second: Command) -> Stopped {
    let holder = start_holder(cluster);
    let first = spawn_piped(first);
    let placed = || in_line_everywhere(cluster, 1);
    assert!(eventually(Duration::from_secs(20), placed));
    let token = in_line(cluster, 0).remove(0);
    send_signal(first.id(), libc::SIGSTOP);
    let pid = first.id() as i32;
    let stopped = eventually(Duration::from_secs(5), || state_of(pid) == Some('T'));
    let second = spawn_piped(second);
    let evictor = second.id();
    let evicted = eventually(Duration::from_secs(20), || {
        (0..3).all(|i| marked(cluster, i, &token) && !in_line(cluster, i).contains(&token))
    });
    holder.open_gate();
    Stopped {
        first,
        second: second.wait_with_output().unwrap(),
        evictor,
        seen: stopped && evicted,
        _holder: holder,
    }
}

/// The model's `NoMarkCheck` counterexample on real masters: resumed while the marks last,
/// the first reads the eviction's notice late and takes its turn: it exits 80 naming its
/// evictor, and never runs. (Without the mark check, that turn writes the policy, finds no
/// place, a superseding waiter making it in its first turn only, and exits 82 having lost
/// its place; before that rule, it joined again and took the lock on every master.)
#[test]
fn an_evicted_waiter_whose_turn_comes_after_its_evictor_ran() {
    let cluster = Cluster::start(3);
    for (first_order, second_order) in [(120, 120), (130, 131)] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let deploy = |order| deploy_command(&cluster, &PATIENT, order, &[], &log);
        let stopped = evicted_while_stopped(&cluster, deploy(first_order), deploy(second_order));
        let evictor = stopped.evictor;
        let line_empty = eventually(Duration::from_secs(5), || in_line_everywhere(&cluster, 0));
        let free = cluster.key_gone_everywhere("deploy");
        // Its notice, read now, starts the late turn.
        let (first, wrote) = stopped.resume(&cluster);
        assert!(line_empty && free);
        let deployed = ran(&log);
        let code = first.status.code();
        assert_eq!(code, Some(80), "{}deployed: {deployed:?}", describe(&first));
        // Refused before any write: it took the lock nowhere, not even on a minority.
        assert_eq!(wrote, 0, "the late turn wrote (the policy, or the lock)");
        let said = stderr(&first);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains("superseded on lock \"deploy\" by a newer waiter")
                && said.contains(&format!("(pid {evictor}, order {second_order})")),
            "{said}"
        );
        assert_eq!(deployed, [second_order]);
        assert!(cluster.key_gone_everywhere("deploy"));
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// Back after the marks expired: the first waits with [`PATIENT`]'s timing; its evictor, of
/// the same order (a retried pipeline) and a 5 s TTL (its node timeout 250 ms: its marks last
/// 7 s after its last eviction), deploys. The first is resumed once the marks are gone
/// everywhere, well within its place's 23 s, as its eviction's notice and its heartbeat start
/// a turn: it exits 82 saying it lost its place, never deploys, nor takes the lock anywhere.
/// (When a superseding waiter still made its place again within its lease, that turn joined
/// the empty line, took the free lock on every master and deployed again: `[120, 120]`,
/// exit 0.)
#[test]
fn an_evicted_waiter_back_after_its_marks_expired_does_not_join_again() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let stopped = evicted_while_stopped(
        &cluster,
        deploy_command(&cluster, &PATIENT, 120, &[], &log),
        deploy_command(&cluster, &TTL, 120, &[], &log),
    );
    let forgotten = eventually(Duration::from_secs(30), || {
        (0..3).all(|i| !marks_kept(&cluster, i)) && in_line_everywhere(&cluster, 0)
    });
    let free = cluster.key_gone_everywhere("deploy");
    let (first, wrote) = stopped.resume(&cluster);
    assert!(forgotten && free, "the marks or the line outlived 30 s");
    let deployed = ran(&log);
    let code = first.status.code();
    assert_eq!(code, Some(82), "{}deployed: {deployed:?}", describe(&first));
    // Its one turn wrote the line's policy on each master (a SET each) and took the lock
    // nowhere, not even on a minority (a take is two more: the key and its holder record).
    let policy_writes = 3;
    assert_eq!(
        wrote, policy_writes,
        "the late turn took the lock somewhere"
    );
    let said = stderr(&first);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("lost its place in line for lock \"deploy\"")
            && said.contains("does not join again"),
        "{said}"
    );
    assert_eq!(deployed, [120]);
    assert!(cluster.key_gone_everywhere("deploy"));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}
