//! `--supersede` against real masters (see the lock's `supersede`): a newer waiter evicts the
//! older waiters of the line, which exit 80 naming it without running, while the holder runs
//! on untouched and the newest runs after it; a higher order already waiting makes a newcomer
//! outdated (81); hosts racing with the same and with different orders; a minority of masters
//! paused during an eviction; an evicting waiter SIGKILLed; a waiter asking for the other
//! policy refused (64); the exit code and the metrics. An evicted waiter's late turns are in
//! `supersede_late`.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common::{Cluster, Running, describe, eventually};

const QUEUE: &str = "__redlock:{deploy}:queue:deploy";
const POLICY: &str = "__redlock:{deploy}:policy:deploy";
pub(crate) const MARKS: &str = "__redlock:{deploy}:evicted:deploy";

/// `redlock run --key deploy TIMING --supersede --wait 60s --order ORDER EXTRA -- sh -c 'echo
/// ORDER >> LOG'`.
pub(crate) fn deploy_command(
    cluster: &Cluster,
    timing: &[&str],
    order: u64,
    extra: &[&str],
    log: &Path,
) -> Command {
    let mut command = cluster.redlock();
    command
        .args(["run", "--key", "deploy"])
        .args(timing)
        .args(["--supersede", "--wait", "60s", "--order"])
        .arg(order.to_string())
        .args(extra)
        .args([
            "--",
            "sh",
            "-c",
            &format!("echo {order} >> {}", log.display()),
        ]);
    command
}

/// The timing of most deploys here.
pub(crate) const TTL: [&str; 2] = ["--ttl", "5s"];

/// [`deploy_command`] with [`TTL`], run to its end.
fn deploy(cluster: &Cluster, order: u64, extra: &[&str], log: &Path) -> Output {
    deploy_command(cluster, &TTL, order, extra, log)
        .output()
        .unwrap()
}

/// [`deploy_command`] with [`TTL`] in the background, its output piped.
fn spawn_deploy(cluster: &Cluster, order: u64, extra: &[&str], log: &Path) -> Child {
    spawn_piped(deploy_command(cluster, &TTL, order, extra, log))
}

pub(crate) fn spawn_piped(mut command: Command) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub(crate) fn ran(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// The tokens in line for "deploy" on master `i`.
pub(crate) fn in_line(cluster: &Cluster, i: usize) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(QUEUE)
        .arg(0)
        .arg(-1)
        .query(&mut cluster.servers[i].connection())
        .unwrap()
}

/// Waits until `n` wait in line on master `i`.
fn wait_for_line(cluster: &Cluster, i: usize, n: usize) {
    assert!(
        eventually(Duration::from_secs(20), || in_line(cluster, i).len() == n),
        "{n} never waited in line on master {i}: {:?}",
        in_line(cluster, i)
    );
}

/// A holder of "deploy" (a superseding run without an order, so that it leaves the order
/// register as it is), running until its gate opens.
pub(crate) fn start_holder(cluster: &Cluster) -> Running {
    let mut holder = Running::start(cluster.redlock().args([
        "run",
        "--key",
        "deploy",
        "--ttl",
        "5s",
        "--supersede",
        "--wait",
        "60s",
    ]));
    holder.wait_ready();
    holder
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The three pipelines: while the holder runs, 101 waits; 102 comes and evicts it; 103
/// comes and evicts 102. Each evicted run exits 80 at once (the holder still runs), with one
/// line naming who superseded it; the holder finishes untouched, and then 103 runs. The
/// metrics count the superseded run.
#[test]
fn the_newest_pipeline_runs_after_the_holder_and_the_older_are_superseded() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let metrics = dir.path().join("redlock.prom");
    let metrics_flag = ["--metrics-file", metrics.to_str().unwrap()];
    let mut holder = start_holder(&cluster);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| deploy(&cluster, 101, &metrics_flag, &log));
        wait_for_line(&cluster, 0, 1);
        let second = scope.spawn(|| deploy(&cluster, 102, &[], &log));
        // 101 leaves while the holder still runs: evicted, not served.
        let first = first.join().unwrap();
        assert_eq!(first.status.code(), Some(80), "{}", describe(&first));
        let said = stderr(&first);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains("superseded on lock \"deploy\" by a newer waiter")
                && said.contains("order 102"),
            "{said}"
        );
        wait_for_line(&cluster, 0, 1);
        let third = scope.spawn(|| deploy(&cluster, 103, &[], &log));
        let second = second.join().unwrap();
        assert_eq!(second.status.code(), Some(80), "{}", describe(&second));
        assert!(
            stderr(&second).contains("order 103"),
            "{}",
            describe(&second)
        );
        assert!(holder.is_running(), "the holder was touched");
        assert_eq!(ran(&log), Vec::<u64>::new());
        holder.open_gate();
        let third = third.join().unwrap();
        assert_eq!(third.status.code(), Some(0), "{}", describe(&third));
    });
    let held = holder.wait_output();
    assert_eq!(held.status.code(), Some(0), "{}", describe(&held));
    assert_eq!(ran(&log), [103]);
    let scrape = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        scrape.contains(
            r#"redlock_outcomes_total{key="deploy",mode="writer",outcome="superseded"} 1"#
        ),
        "{scrape}"
    );
    assert!(cluster.key_gone_everywhere("deploy"));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A lower order than one already waiting is outdated on arrival (81, naming that order);
/// `--superseded-exit-code` maps an eviction to 0, and `--quiet` says nothing.
#[test]
fn a_lower_order_than_a_waiter_is_outdated_and_the_codes_are_configurable() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let holder = start_holder(&cluster);
    std::thread::scope(|scope| {
        let newest = scope.spawn(|| deploy(&cluster, 110, &[], &log));
        wait_for_line(&cluster, 0, 1);
        let late = deploy(&cluster, 105, &[], &log);
        assert_eq!(late.status.code(), Some(81), "{}", describe(&late));
        let said = stderr(&late);
        assert!(said.contains("order 110 was already waiting"), "{said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        let mapped = deploy(&cluster, 106, &["--outdated-exit-code", "0"], &log);
        assert_eq!(mapped.status.code(), Some(0), "{}", describe(&mapped));
        // A newer one evicts 110: mapped to success, quietly.
        let evicted_quietly = scope.spawn(|| {
            cluster
                .redlock()
                .args(["--quiet", "run", "--key", "deploy", "--supersede", "--wait"])
                .args(["60s", "--order", "111", "--superseded-exit-code", "0"])
                .args(["--", "false"])
                .output()
                .unwrap()
        });
        // 110 is evicted by 111 (exit 80), and 111 by 112.
        let evicted = newest.join().unwrap();
        assert_eq!(evicted.status.code(), Some(80), "{}", describe(&evicted));
        let last = scope.spawn(|| deploy(&cluster, 112, &[], &log));
        let quiet = evicted_quietly.join().unwrap();
        assert_eq!(quiet.status.code(), Some(0), "{}", describe(&quiet));
        assert_eq!(stderr(&quiet), "");
        holder.open_gate();
        assert_eq!(last.join().unwrap().status.code(), Some(0));
    });
    assert_eq!(ran(&log), [112]);
}

/// Two hosts racing with the same order (a retried pipeline) behind a holder: the later
/// arrival supersedes the earlier, and exactly one runs. With different orders, the higher
/// runs and the lower never does, whichever came first.
#[test]
fn hosts_racing_with_the_same_and_with_different_orders_run_one() {
    let cluster = Cluster::start(3);
    // Orders grow from round to round: each round's highest raises the order register.
    for orders in [[142, 142], [150, 151], [161, 160]] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let holder = start_holder(&cluster);
        let outputs: Vec<(u64, Output)> = std::thread::scope(|scope| {
            let runs: Vec<_> = orders
                .iter()
                .map(|&order| {
                    let (cluster, log) = (&cluster, &log);
                    scope.spawn(move || (order, deploy(cluster, order, &[], log)))
                })
                .collect();
            // One of them leaves the line as the other comes: then one waits.
            assert!(eventually(Duration::from_secs(20), || runs
                .iter()
                .any(|run| run.is_finished())));
            wait_for_line(&cluster, 0, 1);
            holder.open_gate();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        let highest = *orders.iter().max().unwrap();
        assert_eq!(ran(&log), [highest], "{orders:?}");
        let codes: Vec<Option<i32>> = outputs.iter().map(|(_, o)| o.status.code()).collect();
        assert_eq!(
            codes.iter().filter(|c| **c == Some(0)).count(),
            1,
            "{codes:?}"
        );
        for (order, output) in &outputs {
            let code = output.status.code();
            assert!(
                code == Some(0) || code == Some(80) || (code == Some(81) && *order < highest),
                "{order}: {}",
                describe(output)
            );
        }
        assert!(cluster.key_gone_everywhere("deploy"));
    }
}

/// A minority paused (SIGSTOP) while 102 evicts 101: the majority's marks are enough; 101
/// exits 80 while the master is still stopped, and 102 runs after the holder.
#[test]
fn an_eviction_with_a_minority_paused_still_evicts() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let fast = ["--node-timeout", "200ms"];
    let holder = start_holder(&cluster);
    let first = spawn_deploy(&cluster, 101, &fast, &log);
    wait_for_line(&cluster, 2, 1);
    cluster.server(2).pause();
    let second = spawn_deploy(&cluster, 102, &fast, &log);
    let first = first.wait_with_output().unwrap();
    // Decided while master 2 is still stopped.
    let still_stopped = cluster.servers[2].is_paused();
    cluster.server(2).resume();
    assert_eq!(first.status.code(), Some(80), "{}", describe(&first));
    assert!(stderr(&first).contains("order 102"), "{}", describe(&first));
    assert!(still_stopped);
    holder.open_gate();
    let second = second.wait_with_output().unwrap();
    assert_eq!(second.status.code(), Some(0), "{}", describe(&second));
    assert_eq!(ran(&log), [102]);
    assert!(cluster.key_gone_everywhere("deploy"));
}

/// 102 evicts 101 and is SIGKILLed while it waits: a newer waiter evicts its dead place at
/// once and runs after the holder; with nobody newer, the dead place lapses and the line is
/// empty again for the next (no key left without a TTL either way).
#[test]
fn a_sigkilled_evictor_leaves_nobody_stuck() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let holder = start_holder(&cluster);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| deploy(&cluster, 101, &[], &log));
        wait_for_line(&cluster, 0, 1);
        let mut evictor = spawn_deploy(&cluster, 102, &[], &log);
        let first = first.join().unwrap();
        assert_eq!(first.status.code(), Some(80), "{}", describe(&first));
        evictor.kill().unwrap();
        evictor.wait().unwrap();
        // Its place is still there (its lease runs): 103 evicts it on arrival.
        let dead = in_line(&cluster, 0);
        assert_eq!(dead.len(), 1);
        let third = scope.spawn(|| deploy(&cluster, 103, &[], &log));
        assert!(eventually(Duration::from_secs(20), || {
            (0..3).all(|i| {
                let line = in_line(&cluster, i);
                line.len() == 1 && line != dead
            })
        }));
        holder.open_gate();
        let third = third.join().unwrap();
        assert_eq!(third.status.code(), Some(0), "{}", describe(&third));
    });
    assert_eq!(ran(&log), [103]);
    // Killed while first in line behind a holder that then ends: the next run evicts its
    // place on arrival and takes the lock.
    let holder = start_holder(&cluster);
    let mut evictor = spawn_deploy(&cluster, 104, &[], &log);
    wait_for_line(&cluster, 0, 1);
    evictor.kill().unwrap();
    evictor.wait().unwrap();
    holder.open_gate();
    assert!(cluster.key_gone_everywhere("deploy"));
    let next = deploy(&cluster, 105, &[], &log);
    assert_eq!(next.status.code(), Some(0), "{}", describe(&next));
    assert_eq!(ran(&log), [103, 105]);
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A waiter that asks for the other policy is refused at once (64, one line), either way, a
/// reader (`--shared`) as a writer;
/// `status` and `list` show the policy; `--supersede` without `--wait`, or with `--shared` or
/// `--limit`, is a usage error.
#[test]
fn a_waiter_asking_for_the_other_policy_is_refused() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let fifo = || {
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--wait", "60s", "--", "true"])
            .output()
            .unwrap()
    };
    // A superseding line: a first-come, first-served waiter is refused.
    let holder = start_holder(&cluster);
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| deploy(&cluster, 101, &[], &log));
        wait_for_line(&cluster, 0, 1);
        let refused = fifo();
        assert_eq!(refused.status.code(), Some(64), "{}", describe(&refused));
        let said = stderr(&refused);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("has a superseding line"), "{said}");
        // So is a reader: it used to join the line, and 101 left as superseded by it.
        let reader = cluster
            .redlock()
            .args([
                "run", "--key", "deploy", "--shared", "--wait", "20s", "--", "true",
            ])
            .output()
            .unwrap();
        assert_eq!(reader.status.code(), Some(64), "{}", describe(&reader));
        let said = stderr(&reader);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("has a superseding line"), "{said}");
        assert_eq!(in_line(&cluster, 0).len(), 1, "the reader is in line");
        // status and list name the line's policy, in text and JSON.
        let read = |args: &[&str]| {
            let output = cluster.redlock().args(args).output().unwrap();
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        let text = read(&["status", "--key", "deploy"]);
        assert!(text.contains("queue, superseding"), "{text}");
        assert!(text.contains("order 101"), "{text}");
        let json = read(&["status", "--key", "deploy", "--json"]);
        assert!(json.contains(r#""policy":"supersede""#), "{json}");
        let listed = read(&["list", "--json"]);
        assert!(listed.contains(r#""policy":"supersede""#), "{listed}");
        assert!(read(&["list"]).contains("its line supersedes"));
        holder.open_gate();
        assert_eq!(waiting.join().unwrap().status.code(), Some(0));
    });
    assert_eq!(ran(&log), [101]);
    // The policy lasts as long as the queue's keys after the last superseding waiter.
    assert!(eventually(Duration::from_secs(20), || {
        cluster.values(POLICY).iter().all(Option::is_none)
    }));
    // A first-come, first-served line: a superseding waiter is refused.
    let mut plain = Running::start(cluster.redlock().args(["run", "--key", "deploy"]));
    plain.wait_ready();
    std::thread::scope(|scope| {
        let waiting = scope.spawn(fifo);
        wait_for_line(&cluster, 0, 1);
        let refused = deploy(&cluster, 102, &[], &log);
        assert_eq!(refused.status.code(), Some(64), "{}", describe(&refused));
        let said = stderr(&refused);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("first-come, first-served line"), "{said}");
        plain.open_gate();
        assert_eq!(waiting.join().unwrap().status.code(), Some(0));
    });
    assert_eq!(ran(&log), [101]);
    for args in [
        &["--supersede"][..],
        &["--supersede", "--wait", "5s", "--shared"],
        &["--supersede", "--wait", "5s", "--limit", "2"],
    ] {
        let output = cluster
            .redlock()
            .args(["run", "--key", "deploy"])
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(64),
            "{args:?}: {}",
            describe(&output)
        );
        assert_eq!(stderr(&output).lines().count(), 1, "{}", describe(&output));
    }
    assert!(cluster.key_gone_everywhere("deploy"));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A lone superseding waiter stopped longer than its place lasts (a paused CI VM, a throttled
/// container), then resumed: its place is gone on every master and no mark names it, for
/// nobody newer came. It leaves without running, as a superseding waiter must (see the lock's
/// `supersede`), but exits 82 saying it lost its place and to run it again, and the metrics
/// count `lost_place`: not 80, which CI recipes map to "a newer build deploys" (it exited 80
/// as superseded, and the newest deploy never ran).
#[test]
fn a_lone_waiter_stopped_past_its_place_lost_it_and_was_not_superseded() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let metrics = dir.path().join("redlock.prom");
    let metrics_flag = ["--metrics-file", metrics.to_str().unwrap()];
    // A place lasts three heartbeats and two node timeouts: 3.5 s.
    let timing = ["--ttl", "5s", "--node-timeout", "250ms"];
    let holder = start_holder(&cluster);
    let waiter = spawn_piped(deploy_command(&cluster, &timing, 7, &metrics_flag, &log));
    wait_for_line(&cluster, 0, 1);
    crate::common::send_signal(waiter.id(), libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(6));
    crate::common::send_signal(waiter.id(), libc::SIGCONT);
    let waited = waiter.wait_with_output().unwrap();
    assert_eq!(waited.status.code(), Some(82), "{}", describe(&waited));
    let said = stderr(&waited);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("lost its place in line for lock \"deploy\"")
            && said.contains("no newer waiter is known to have superseded it")
            && said.contains("run it again"),
        "{said}"
    );
    let scrape = std::fs::read_to_string(&metrics).unwrap();
    for (outcome, count) in [("lost_place", 1), ("superseded", 0)] {
        let line = format!(
            r#"redlock_outcomes_total{{key="deploy",mode="writer",outcome="{outcome}"}} {count}"#
        );
        assert!(scrape.contains(&line), "{line} not in {scrape}");
    }
    holder.open_gate();
    assert_eq!(ran(&log), Vec::<u64>::new());
    assert!(eventually(Duration::from_secs(10), || {
        cluster.key_gone_everywhere("deploy")
    }));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A first-come, first-served waiter and a superseding one, each first on some masters, as
/// when they arrive in the same instant; made deterministic with a proxy. The first-come
/// waiter reaches masters 0 and 1 at once and master 2 through a proxy that drops everything,
/// so it is placed on 0 and 1 only. The superseding waiter then comes, is refused where the
/// first-come one is placed (0 and 1), and writes its policy on master 2 before it leaves:
/// refused on a majority, it exits 64. Then the proxy lets the first-come waiter's turns reach
/// master 2, which refuses them for the superseding policy left there: one refusal, which it
/// can spare, so it waits on with its two places and runs after the holder. (When one refusal
/// refused, it exited 64 too, and nobody ran.)
#[test]
fn waiters_of_both_policies_each_first_somewhere_leave_one_policy_standing() {
    use crate::common::proxy::{Fault, Proxy};
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let cut = Proxy::before(&cluster.servers[2]);
    cut.set(Fault::Blackhole);
    let direct = cluster.urls();
    let timing = ["--ttl", "10s", "--node-timeout", "1s"];
    let holder = start_holder(&cluster);
    let mut fifo = cluster.redlock();
    fifo.env(
        "REDLOCK_SERVERS",
        format!("{},{},{}", direct[0], direct[1], cut.url()),
    )
    .args(["run", "--key", "deploy", "--wait", "60s"])
    .args(timing)
    .args(["--", "sh", "-c", &format!("echo 1 >> {}", log.display())]);
    let fifo = spawn_piped(fifo);
    wait_for_line(&cluster, 0, 1);
    wait_for_line(&cluster, 1, 1);
    let superseding = deploy_command(&cluster, &timing, 2, &[], &log)
        .output()
        .unwrap();
    assert_eq!(
        superseding.status.code(),
        Some(64),
        "{}",
        describe(&superseding)
    );
    let said = stderr(&superseding);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("first-come, first-served line"), "{said}");
    assert_eq!(
        cluster.servers[2].get(POLICY).as_deref(),
        Some("supersede"),
        "the superseding waiter left no policy on master 2"
    );
    // The first-come waiter's heartbeats reach master 2 now (on a new connection: the one
    // whose requests the proxy dropped is closed), and are refused there.
    cut.set(Fault::Pass);
    cut.reset();
    let refused_there = eventually(Duration::from_secs(10), || cut.forwarded() >= 2);
    // Its next two heartbeats, with master 2 answering.
    std::thread::sleep(Duration::from_secs(2));
    holder.open_gate();
    let fifo = fifo.wait_with_output().unwrap();
    assert!(
        refused_there,
        "the first-come waiter never reached master 2"
    );
    assert_eq!(fifo.status.code(), Some(0), "{}", describe(&fifo));
    assert_eq!(ran(&log), [1]);
    assert!(eventually(Duration::from_secs(10), || {
        cluster.key_gone_everywhere("deploy")
    }));
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// A waiter without `--order` behind one with an order that arrived first is superseded on
/// arrival, and its line says why: a waiter without an order ranks below every waiter with
/// one (it called the earlier arrival "a newer waiter").
#[test]
fn a_waiter_without_an_order_is_told_how_it_ranks() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let holder = start_holder(&cluster);
    std::thread::scope(|scope| {
        let ordered = scope.spawn(|| deploy(&cluster, 5, &[], &log));
        wait_for_line(&cluster, 0, 1);
        let plain = cluster
            .redlock()
            .args([
                "run",
                "--key",
                "deploy",
                "--supersede",
                "--wait",
                "60s",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(plain.status.code(), Some(80), "{}", describe(&plain));
        let said = stderr(&plain);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains("by a waiter with --order 5, already waiting")
                && said.contains("a waiter without --order ranks below every waiter with one")
                && !said.contains("newer"),
            "{said}"
        );
        holder.open_gate();
        assert_eq!(ordered.join().unwrap().status.code(), Some(0));
    });
    assert_eq!(ran(&log), [5]);
}
