//! `--order N` against real masters (see the lock's `order`): a run whose order is lower than
//! the highest that took the lock neither waits nor runs and exits 81 naming that order; the
//! same order runs again; the register is kept on a majority (a minority paused, then another
//! minority, still remembers it) with its TTL; a waiter whose order was overtaken while it
//! waited is refused by the raise under the lock; a raise that misses a majority runs nothing
//! and releases; hosts racing with the same and with different orders; a nested run raises
//! its order under the enclosing hold; what `status` and `list` show.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common::{Cluster, Running, describe};

const REGISTER: &str = "__redlock:{deploy}:order:deploy";

/// `redlock run --key KEY --order ORDER EXTRA -- sh -c 'echo ORDER >> LOG'`.
fn deploy(cluster: &Cluster, key: &str, order: u64, extra: &[&str], log: &Path) -> Output {
    cluster
        .redlock()
        .args(["run", "--key", key, "--ttl", "5s", "--order"])
        .arg(order.to_string())
        .args(extra)
        .args([
            "--",
            "sh",
            "-c",
            &format!("echo {order} >> {}", log.display()),
        ])
        .output()
        .unwrap()
}

fn ran(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// How many wait in line for "deploy" on the first master.
fn queued(cluster: &Cluster) -> i64 {
    redis::cmd("ZCARD")
        .arg("__redlock:{deploy}:queue:deploy")
        .query(&mut cluster.servers[0].connection())
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_lower_order_is_outdated_and_the_same_order_runs_again() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let output = deploy(&cluster, "deploy", 7, &[], &log);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let outdated = deploy(&cluster, "deploy", 6, &["--wait", "10s"], &log);
    assert_eq!(outdated.status.code(), Some(81), "{}", describe(&outdated));
    let said = stderr(&outdated);
    assert!(
        said.contains("order 6 is outdated on lock \"deploy\": order 7 already took it"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    // A retry of the same pipeline runs; a newer one runs.
    let retry = deploy(&cluster, "deploy", 7, &[], &log);
    assert_eq!(retry.status.code(), Some(0), "{}", describe(&retry));
    let newer = deploy(&cluster, "deploy", 8, &[], &log);
    assert_eq!(newer.status.code(), Some(0), "{}", describe(&newer));
    assert_eq!(ran(&log), [7, 7, 8]);
    // The register has the TTL of a year and a day, on every master; nothing lacks one.
    for server in &cluster.servers {
        assert_eq!(server.get(REGISTER).as_deref(), Some("8"));
        let ttl = server.pttl(REGISTER);
        assert!(
            ttl > 365 * 24 * 3600 * 1000 && ttl <= 366 * 24 * 3600 * 1000,
            "{ttl}"
        );
    }
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

#[test]
fn the_outdated_exit_code_is_configurable_and_quiet_says_nothing() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    assert!(deploy(&cluster, "deploy", 103, &[], &log).status.success());
    let skipped = deploy(
        &cluster,
        "deploy",
        101,
        &["--outdated-exit-code", "0"],
        &log,
    );
    assert_eq!(skipped.status.code(), Some(0), "{}", describe(&skipped));
    assert!(stderr(&skipped).contains("order 103 already took it"));
    let quiet = cluster
        .redlock()
        .args([
            "--quiet", "run", "--key", "deploy", "--order", "102", "--", "true",
        ])
        .output()
        .unwrap();
    assert_eq!(quiet.status.code(), Some(81), "{}", describe(&quiet));
    assert_eq!(stderr(&quiet), "");
    assert_eq!(ran(&log), [103]);
    // acquire is refused the same way, and holds nothing afterwards.
    let acquire = cluster
        .redlock()
        .args(["acquire", "--key", "deploy", "--order", "100"])
        .output()
        .unwrap();
    assert_eq!(acquire.status.code(), Some(81), "{}", describe(&acquire));
    assert!(acquire.stdout.is_empty());
    assert!(cluster.key_gone_everywhere("deploy"));
}

#[test]
fn order_with_a_shared_or_counted_lock_or_out_of_range_is_a_usage_error() {
    let cluster = Cluster::start(1);
    for args in [
        &["--order", "3", "--shared"][..],
        &["--order", "-1"],
        &["--order", "3", "--limit", "2"],
        &["--order", "9007199254740992"],
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
}

/// An order that is no whole number, from `--order` or from `REDLOCK_ORDER` (an unset CI
/// variable gives an empty one): one line that names both and says what an order is, exit 64.
#[test]
fn an_order_that_is_no_whole_number_says_what_an_order_is() {
    let cluster = Cluster::start(1);
    let flag = |order: &str| {
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--order", order, "--", "true"])
            .output()
            .unwrap()
    };
    let env = |order: &str| {
        cluster
            .redlock()
            .env("REDLOCK_ORDER", order)
            .args(["acquire", "--key", "deploy"])
            .output()
            .unwrap()
    };
    for output in [
        flag("-3"),
        flag("abc"),
        flag("1.5"),
        env(""),
        env("$CI_PIPELINE_IID"),
    ] {
        assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
        let said = stderr(&output);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("REDLOCK_ORDER"), "{said}");
        assert!(said.contains("a whole number"), "{said}");
        assert!(output.stdout.is_empty(), "{}", describe(&output));
    }
    assert!(cluster.key_gone_everywhere("deploy"));
}

/// Order `order` waits in line behind a holder of "deploy" (its check before waiting passed);
/// meanwhile masters 1 and 2 get `register` as their order register; then the holder ends,
/// and once both have exited, what the waiter did is returned.
fn wait_behind_a_holder(cluster: &Cluster, order: u64, log: &Path, register: &str) -> Output {
    let mut holder = Running::start(cluster.redlock().args(["run", "--key", "deploy"]));
    holder.wait_ready();
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| deploy(cluster, "deploy", order, &["--wait", "30s"], log));
        assert!(crate::common::eventually(Duration::from_secs(10), || {
            queued(cluster) == 1
        }));
        cluster.servers[1].set(REGISTER, register);
        cluster.servers[2].set(REGISTER, register);
        holder.open_gate();
        let waited = waiting.join().unwrap();
        // The holder's own release is waited for: the waiter needs only a majority of it,
        // and dropping a `Running` SIGKILLs a redlock that has not exited, which, under load,
        // could cut its release short before it reached the last master (the holder's token
        // was then left there with its TTL, and `key_gone_everywhere` failed, twice in CI).
        let released = holder.wait_output();
        assert_eq!(released.status.code(), Some(0), "{}", describe(&released));
        waited
    })
}

/// A waiter that passed the check before waiting, while a higher order took the lock on the
/// masters (as another host's run leaves the register): the raise under the lock finds it,
/// so the command never runs, and the lock is released for the next.
#[test]
fn a_waiter_overtaken_while_it_waits_is_refused_under_the_lock() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // Order 9's raise lands on a majority, as a run of order 9 that took the lock leaves it.
    let waiter = wait_behind_a_holder(&cluster, 5, &log, "9");
    assert_eq!(waiter.status.code(), Some(81), "{}", describe(&waiter));
    assert!(
        stderr(&waiter).contains("order 9 already took it"),
        "{}",
        describe(&waiter)
    );
    assert!(stderr(&waiter).contains("(the lock was released)"));
    assert_eq!(ran(&log), Vec::<u64>::new());
    assert!(cluster.key_gone_everywhere("deploy"));
    // The register was raised where it was lower: a later retry of 5 is refused before waiting.
    let again = deploy(&cluster, "deploy", 5, &[], &log);
    assert_eq!(again.status.code(), Some(81), "{}", describe(&again));
}

/// A raise that fewer than a majority confirm (here two masters hold something that is not a
/// number where the register goes, written after the run's read): the command does not run,
/// the lock is released, exit 69 naming the masters; the master it reached keeps the order.
#[test]
fn a_raise_that_misses_a_majority_skips_the_command_and_releases() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let waiter = wait_behind_a_holder(&cluster, 5, &log, "not a number");
    assert_eq!(waiter.status.code(), Some(69), "{}", describe(&waiter));
    let said = stderr(&waiter);
    assert!(
        said.contains("took lock \"deploy\" but too many masters answered with errors when its order register was raised to 5"),
        "{said}"
    );
    assert!(said.contains("not a whole number"), "{said}");
    assert_eq!(ran(&log), Vec::<u64>::new());
    assert!(cluster.key_gone_everywhere("deploy"));
    assert_eq!(cluster.servers[0].get(REGISTER).as_deref(), Some("5"));
    // Once the registers are numbers again, the same order runs.
    cluster.servers[1].del(REGISTER);
    cluster.servers[2].del(REGISTER);
    let retry = deploy(&cluster, "deploy", 5, &[], &log);
    assert_eq!(retry.status.code(), Some(0), "{}", describe(&retry));
    assert_eq!(ran(&log), [5]);
}

/// Issue 47, item 9: an order register beyond 64 bits, written by another client, gave 69
/// "too many masters are unreachable" with no cause, though every master answered; one above
/// the 2^53-1 that `--order` accepts was taken as the highest order (exit 81). Each is named
/// as the foreign value it is, as text that is no number is: exit 69, nothing runs, nothing
/// is written over it; before waiting, and in the raise under the lock.
#[test]
fn a_register_above_the_largest_order_is_named_not_unreachable_nor_an_order() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    for register in [
        "99999999999999999999",
        "9007199254740993",
        "9007199254740992",
    ] {
        for server in &cluster.servers {
            server.set(REGISTER, register);
        }
        let output = deploy(&cluster, "deploy", 5, &[], &log);
        assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
        let said = stderr(&output);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.contains("too many masters answered with errors when the order register")
                && said.contains("holds a number above 9007199254740991 (2^53-1)"),
            "{said}"
        );
        assert!(!said.contains("unreachable"), "{said}");
        for server in &cluster.servers {
            assert_eq!(server.get(REGISTER).as_deref(), Some(register));
            server.del(REGISTER);
        }
        let waiter = wait_behind_a_holder(&cluster, 5, &log, register);
        assert_eq!(waiter.status.code(), Some(69), "{}", describe(&waiter));
        assert!(
            stderr(&waiter).contains("holds a number above 9007199254740991"),
            "{}",
            describe(&waiter)
        );
        assert!(cluster.key_gone_everywhere("deploy"));
        for server in &cluster.servers {
            server.del(REGISTER);
        }
    }
    assert_eq!(ran(&log), Vec::<u64>::new());
}

/// The order that ran is kept on a majority: with one master down while 3 runs, and then
/// another one paused (so that the majority read now includes the master that missed it),
/// order 2 is still outdated.
#[test]
fn the_highest_order_survives_a_minority_down_then_another_paused() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // Down, not paused: a paused master would still run the raise queued on its wire.
    cluster.server(0).kill();
    let output = deploy(&cluster, "deploy", 3, &["--node-timeout", "200ms"], &log);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    cluster.server(0).restart();
    assert_eq!(cluster.servers[0].get(REGISTER), None);
    cluster.server(1).pause();
    let outdated = deploy(&cluster, "deploy", 2, &["--node-timeout", "200ms"], &log);
    cluster.server(1).resume();
    assert_eq!(outdated.status.code(), Some(81), "{}", describe(&outdated));
    assert!(stderr(&outdated).contains("order 3 already took it"));
    assert_eq!(ran(&log), [3]);
}

#[test]
fn a_majority_out_of_reach_skips_the_command() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    cluster.server(0).pause();
    cluster.server(1).pause();
    let output = deploy(&cluster, "deploy", 4, &["--node-timeout", "200ms"], &log);
    cluster.server(0).resume();
    cluster.server(1).resume();
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    assert!(
        stderr(&output).contains("order register of lock \"deploy\" was read for order 4"),
        "{}",
        describe(&output)
    );
    assert_eq!(ran(&log), Vec::<u64>::new());
}

/// Two hosts with the same order (a retried pipeline): both run, one after the other.
#[test]
fn two_hosts_with_the_same_order_both_run() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| deploy(&cluster, "deploy", 42, &["--wait", "30s"], &log)))
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for output in &outputs {
        assert_eq!(output.status.code(), Some(0), "{}", describe(output));
    }
    assert_eq!(ran(&log), [42, 42]);
}

/// Hosts racing with different orders: whatever the arrival order, no order runs after a
/// higher one, the highest always runs, and every run that did not run says which order did.
#[test]
fn hosts_racing_with_different_orders_never_run_an_older_after_a_newer() {
    let cluster = Cluster::start(3);
    for round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let key = format!("race-{round}");
        let outputs: Vec<(u64, Output)> = std::thread::scope(|scope| {
            let runs: Vec<_> = (1..=5u64)
                .map(|order| {
                    let (cluster, log, key) = (&cluster, &log, &key);
                    scope.spawn(move || {
                        (order, deploy(cluster, key, order, &["--wait", "30s"], log))
                    })
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        let ran = ran(&log);
        assert!(
            ran.windows(2).all(|w| w[0] < w[1]),
            "round {round}: {ran:?}"
        );
        assert_eq!(ran.last(), Some(&5), "round {round}: {ran:?}");
        for (order, output) in &outputs {
            match output.status.code() {
                Some(0) => assert!(ran.contains(order)),
                Some(81) => {
                    assert!(!ran.contains(order), "round {round}: {ran:?}");
                    let said = stderr(output);
                    let higher = said
                        .split("order ")
                        .nth(2)
                        .and_then(|rest| rest.split(' ').next())
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or_else(|| panic!("no order named: {said}"));
                    assert!(higher > *order, "{said}");
                }
                _ => panic!("order {order}: {}", describe(output)),
            }
        }
    }
}

/// A `run --order` or `acquire --order` inside a `run` of the same lock (re-entrance) takes
/// nothing, and is still outdated below the highest order; with the order the enclosing run raised (REDLOCK_ORDER
/// inherited, as in a CI job), it runs.
#[test]
fn a_nested_run_checks_its_order_under_the_enclosing_hold() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    assert!(deploy(&cluster, "deploy", 5, &[], &log).status.success());
    let nested = |outer: &[&str], inner: &[&str]| {
        cluster
            .redlock()
            .args(["run", "--key", "deploy"])
            .args(outer)
            .args([
                "--",
                crate::common::redlock_binary(),
                "run",
                "--key",
                "deploy",
            ])
            .args(inner)
            .args([
                "--",
                "sh",
                "-c",
                &format!("echo nested >> {}", log.display()),
            ])
            .output()
            .unwrap()
    };
    let outdated = nested(&[], &["--order", "4"]);
    assert_eq!(outdated.status.code(), Some(81), "{}", describe(&outdated));
    assert!(stderr(&outdated).contains("order 5 already took it"));
    let acquire = cluster
        .redlock()
        .args(["run", "--key", "deploy", "--"])
        .args([
            crate::common::redlock_binary(),
            "acquire",
            "--key",
            "deploy",
            "--order",
            "4",
        ])
        .output()
        .unwrap();
    assert_eq!(acquire.status.code(), Some(81), "{}", describe(&acquire));
    assert!(acquire.stdout.is_empty(), "{}", describe(&acquire));
    let inherited = cluster
        .redlock()
        .env("REDLOCK_ORDER", "6")
        .args(["run", "--key", "deploy", "--"])
        .args([crate::common::redlock_binary(), "run", "--key", "deploy"])
        .args(["--", "sh", "-c", &format!("echo 6 >> {}", log.display())])
        .output()
        .unwrap();
    assert_eq!(inherited.status.code(), Some(0), "{}", describe(&inherited));
    assert_eq!(ran(&log), [5, 6]);
}

/// A nested run or acquire whose order is above what the enclosing run raised (the enclosing
/// run took the lock without `--order`, or with a lower one) runs under that hold, so it raises
/// the register there: an order between the two is outdated afterwards.
#[test]
fn a_nested_run_with_a_higher_order_raises_it_under_the_enclosing_hold() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    assert!(deploy(&cluster, "deploy", 5, &[], &log).status.success());
    // `redlock run --key deploy -- redlock INNER...`: the enclosing run has no order.
    let nested = |inner: &[&str]| {
        cluster
            .redlock()
            .args([
                "run",
                "--key",
                "deploy",
                "--",
                crate::common::redlock_binary(),
            ])
            .args(inner)
            .output()
            .unwrap()
    };
    let echo = format!("echo 7 >> {}", log.display());
    let run = nested(&[
        "run", "--key", "deploy", "--order", "7", "--", "sh", "-c", &echo,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    // On a majority at least (the raise is not waited for on the last master).
    let holding = |order: &str| {
        cluster
            .servers
            .iter()
            .filter(|server| server.get(REGISTER).as_deref() == Some(order))
            .count()
    };
    assert!(holding("7") >= 2);
    let between = deploy(&cluster, "deploy", 6, &[], &log);
    assert_eq!(between.status.code(), Some(81), "{}", describe(&between));
    assert!(stderr(&between).contains("order 7 already took it"));
    let acquire = nested(&["acquire", "--key", "deploy", "--order", "9"]);
    assert_eq!(acquire.status.code(), Some(0), "{}", describe(&acquire));
    assert!(holding("9") >= 2);
    assert_eq!(
        deploy(&cluster, "deploy", 8, &[], &log).status.code(),
        Some(81)
    );
    assert_eq!(ran(&log), [5, 7]);
    assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new());
}

/// `--limit 1` is a semaphore's slot too: refused before anything is taken or waited for, even
/// while another holds the key.
#[test]
fn order_with_limit_one_is_refused_before_taking_anything() {
    let cluster = Cluster::start(1);
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--limit", "1"]),
    );
    holder.wait_ready();
    let output = cluster
        .redlock()
        .args([
            "run", "--key", "deploy", "--limit", "1", "--order", "3", "--wait", "0",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
    let said = stderr(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("--order with --limit 1"), "{said}");
}

#[test]
fn status_and_list_show_the_highest_order_and_the_orders_in_line() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    assert!(deploy(&cluster, "deploy", 101, &[], &log).status.success());
    let mut holder = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--order", "102"]),
    );
    holder.wait_ready();
    let mut waiter = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "deploy", "--order", "103", "--wait", "30s"]),
    );
    assert!(crate::common::eventually(Duration::from_secs(10), || {
        queued(&cluster) == 1
    }));
    let text = |args: &[&str]| {
        let output = cluster.redlock().args(args).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let status = text(&["status", "--key", "deploy"]);
    assert!(
        status.contains("highest order that took the lock: 102"),
        "{status}"
    );
    assert!(status.contains(", order 102) for "), "{status}");
    assert!(status.contains(", order 103"), "{status}");
    let json: serde_json::Value =
        serde_json::from_str(&text(&["status", "--key", "deploy", "--json"])).unwrap();
    assert_eq!(json["order"], 102);
    assert_eq!(json["holder"]["order"], 102);
    assert_eq!(json["queue"][0]["holder"]["order"], 103);
    assert!(
        json["masters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["order"] == 102)
    );
    let list = text(&["list"]);
    assert!(list.contains("highest order that took it: 102"), "{list}");
    assert!(list.contains(", order 103"), "{list}");
    let json: serde_json::Value = serde_json::from_str(&text(&["list", "--json"])).unwrap();
    let lock = &json["locks"][0];
    assert_eq!(
        (&lock["key"], &lock["order"]),
        (&"deploy".into(), &102.into()),
        "{json}"
    );
    holder.open_gate();
    assert!(holder.wait_output().status.success());
    waiter.open_gate();
    let output = waiter.wait_output();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(cluster.servers[0].get(REGISTER).as_deref(), Some("103"));
}
