//! `redlock run` against real masters: exit codes, conflicts, waiting, renewal, signals.

mod common;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{Cluster, describe, send_signal, wait_for_file};

fn run(cluster: &Cluster, args: &[&str]) -> Output {
    cluster
        .redlock()
        .arg("run")
        .args(args)
        .output()
        .expect("run redlock")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn exit_status_of_the_command_is_passed_through() {
    let cluster = Cluster::start(3);
    for code in [0, 1, 7, 255] {
        let script = format!("exit {code}");
        let output = run(&cluster, &["--key", "status", "--", "sh", "-c", &script]);
        assert_eq!(output.status.code(), Some(code), "{}", describe(&output));
        assert!(stderr(&output).is_empty(), "{}", describe(&output));
    }
    assert!(cluster.key_gone_everywhere("status"));
    assert!(cluster.key_gone_everywhere("redlock:holder:status"));
}

#[test]
fn a_command_killed_by_signal_n_gives_128_plus_n() {
    let cluster = Cluster::start(3);
    for (signal, code) in [("TERM", 143), ("KILL", 137), ("INT", 130)] {
        let script = format!("kill -{signal} $$");
        let output = run(&cluster, &["--key", "signalled", "--", "sh", "-c", &script]);
        assert_eq!(output.status.code(), Some(code), "{}", describe(&output));
    }
    assert!(cluster.key_gone_everywhere("signalled"));
}

#[test]
fn a_missing_command_gives_127_and_a_non_executable_one_126() {
    let cluster = Cluster::start(3);
    let output = run(
        &cluster,
        &["--key", "spawn", "--", "no-such-command-for-redlock"],
    );
    assert_eq!(output.status.code(), Some(127), "{}", describe(&output));
    assert!(
        stderr(&output).contains("command not found"),
        "{}",
        describe(&output)
    );
    assert_eq!(stderr(&output).lines().count(), 1, "{}", describe(&output));

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let output = run(
        &cluster,
        &["--key", "spawn", "--", script.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(126), "{}", describe(&output));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", describe(&output));
    assert!(
        cluster.key_gone_everywhere("spawn"),
        "the lock was not released"
    );
}

#[test]
fn the_command_sees_the_lock_in_its_environment_and_keeps_stdio() {
    let cluster = Cluster::start(3);
    let mut child = cluster
        .redlock()
        .args(["run", "--key", "env", "--ttl", "10s", "--"])
        .args(["sh", "-c", "read line; echo \"$line $REDLOCK_KEY $REDLOCK_TOKEN $REDLOCK_VALIDITY_MS\"; echo oops >&2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let fields: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(fields[0], "hello");
    assert_eq!(fields[1], "env");
    assert_eq!(fields[2].len(), 32, "token: {stdout}");
    let validity: u64 = fields[3].parse().unwrap();
    assert!(
        validity > 8_000 && validity <= 10_000,
        "validity {validity}"
    );
    assert_eq!(stderr(&output), "oops\n");
}

#[test]
fn a_contender_gets_75_while_the_lock_is_held_and_runs_once_it_is_free() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let holder_script = format!("echo ready > {}; sleep 2", ready.display());
    let mut holder = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "busy",
            "--ttl",
            "10s",
            "--",
            "sh",
            "-c",
            &holder_script,
        ])
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));

    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let output = run(&cluster, &["--key", "busy", "--", "sh", "-c", &touch]);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("lock \"busy\" is held by"), "{message}");
    assert!(
        message.contains(&format!("pid {}", holder.id())),
        "{message}"
    );
    assert!(!marker.exists(), "the command ran without the lock");

    // cron style: a conflict is not an error.
    let output = run(
        &cluster,
        &[
            "--key",
            "busy",
            "--conflict-exit-code",
            "0",
            "--",
            "sh",
            "-c",
            &touch,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(!marker.exists(), "the command ran without the lock");

    // --quiet: the code still says so, stderr says nothing.
    let output = run(&cluster, &["-q", "--key", "busy", "--", "true"]);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    assert!(stderr(&output).is_empty(), "{}", describe(&output));

    // --wait: runs as soon as the holder is done.
    let output = run(
        &cluster,
        &["--key", "busy", "--wait", "30s", "--", "sh", "-c", &touch],
    );
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(marker.exists());
    assert!(holder.wait().unwrap().success());
    assert!(cluster.key_gone_everywhere("busy"));
}

#[test]
fn a_wait_that_runs_out_gives_75() {
    let cluster = Cluster::start(3);
    cluster
        .servers
        .iter()
        .for_each(|s| s.set("taken", "someone-else"));
    let start = Instant::now();
    let output = run(
        &cluster,
        &["--key", "taken", "--wait", "600ms", "--", "true"],
    );
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    assert!(start.elapsed() >= Duration::from_millis(600));
    assert!(
        stderr(&output).contains("held by another client"),
        "{}",
        describe(&output)
    );
    // A foreign holder's key is never touched.
    assert!(
        cluster
            .values("taken")
            .iter()
            .all(|v| v.as_deref() == Some("someone-else"))
    );
}

#[test]
fn a_command_running_for_three_ttls_keeps_the_lock_the_whole_time() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    let script = format!("echo $REDLOCK_TOKEN > {}; sleep 3.5", token_file.display());
    let mut child = cluster
        .redlock()
        .args([
            "run", "--key", "long", "--ttl", "1s", "--", "sh", "-c", &script,
        ])
        .spawn()
        .unwrap();
    let token = wait_for_file(&token_file, Duration::from_secs(10));
    let started = Instant::now();
    let mut checks = 0;
    while started.elapsed() < Duration::from_millis(3200) {
        let holding = cluster.holding("long", &token);
        assert!(
            holding >= 2,
            "only {holding} of 3 masters hold the lock after {:?}",
            started.elapsed()
        );
        // Where the key exists it always has a TTL (a master the acquire did not wait for
        // may not have it at all: -2).
        for server in &cluster.servers {
            let pttl = server.pttl("long");
            assert!(
                pttl != -1 && pttl <= 1000,
                "PTTL {pttl}: the key must always expire"
            );
        }
        // A contender is refused all along.
        let output = run(&cluster, &["-q", "--key", "long", "--", "true"]);
        assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
        checks += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(checks >= 10);
    assert!(child.wait().unwrap().success());
    assert!(cluster.key_gone_everywhere("long"));
}

/// A child that traps `signal`, reports it and exits 3; redlock must forward the signal, exit
/// with the child's status, and release the lock.
fn forwarded(signal: i32, name: &str) {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let got = dir.path().join("got");
    let script = format!(
        "trap 'echo {name} > {got}; exit 3' {name}; echo ready > {ready}; while :; do sleep 0.05; done",
        got = got.display(),
        ready = ready.display()
    );
    let child = cluster
        .redlock()
        .args([
            "run", "--key", "sig", "--ttl", "5s", "--", "sh", "-c", &script,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ready, Duration::from_secs(10));
    send_signal(child.id(), signal);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{name}: {}",
        describe(&output)
    );
    assert_eq!(std::fs::read_to_string(&got).unwrap().trim(), name);
    assert!(
        cluster.key_gone_everywhere("sig"),
        "{name}: lock left behind"
    );
    assert!(cluster.key_gone_everywhere("redlock:holder:sig"));
}

#[test]
fn sigint_reaches_the_command_and_the_lock_is_released() {
    forwarded(libc::SIGINT, "INT");
}

#[test]
fn sigterm_reaches_the_command_and_the_lock_is_released() {
    forwarded(libc::SIGTERM, "TERM");
}

#[test]
fn sighup_reaches_the_command_and_the_lock_is_released() {
    forwarded(libc::SIGHUP, "HUP");
}

#[test]
fn sigusr1_reaches_the_command() {
    forwarded(libc::SIGUSR1, "USR1");
}

#[test]
fn a_signal_while_waiting_ends_the_wait_at_once() {
    let cluster = Cluster::start(3);
    cluster.servers.iter().for_each(|s| s.set("held", "other"));
    let child = cluster
        .redlock()
        .args(["run", "--key", "held", "--wait", "60s", "--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    send_signal(child.id(), libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "the wait did not end at once"
    );
    assert!(
        cluster
            .values("held")
            .iter()
            .all(|v| v.as_deref() == Some("other"))
    );
}

#[test]
fn a_signal_ignored_by_the_parent_stays_ignored_for_the_command() {
    // nohup-style: HUP ignored before redlock starts must stay ignored in the child.
    let cluster = Cluster::start(1);
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' HUP; exec {} run --key ign -- sh -c 'kill -HUP $$; echo survived'",
            env!("CARGO_BIN_EXE_redlock")
        ))
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "survived");
}

#[test]
fn single_master_works_as_a_plain_lock() {
    let cluster = Cluster::start(1);
    let output = run(&cluster, &["--key", "one", "--", "sh", "-c", "exit 4"]);
    assert_eq!(output.status.code(), Some(4), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("one"));
}

#[test]
fn servers_can_be_given_as_flags_and_the_same_master_twice_is_rejected() {
    let cluster = Cluster::start(2);
    let output = common::redlock()
        .args(["run", "--key", "flags"])
        .args([
            "-s",
            &cluster.servers[0].url(),
            "-s",
            &cluster.servers[1].url(),
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));

    let same = cluster.servers[0].url().replace("127.0.0.1", "localhost");
    let output = common::redlock()
        .args([
            "run",
            "--key",
            "flags",
            "-s",
            &cluster.servers[0].url(),
            "-s",
            &same,
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    assert!(
        stderr(&output).contains("same master"),
        "{}",
        describe(&output)
    );
    assert!(cluster.key_gone_everywhere("flags"));
}

#[test]
fn usage_errors_give_64_and_one_line() {
    let cluster = Cluster::start(1);
    let cases: &[&[&str]] = &[
        &["run", "--", "true"],
        &["run", "--key", "k"],
        &["run", "--key", "k", "--ttl", "soon", "--", "true"],
        &["run", "--key", "k", "--ttl", "30", "--", "true"],
        &["run", "--key", "k", "--ttl", "0s", "--", "true"],
        &["run", "--key", "k", "--wait", "-1s", "--", "true"],
        &["run", "--key", "", "--", "true"],
        &["run", "--key", "k", "--bogus", "--", "true"],
        &["frobnicate"],
    ];
    for args in cases {
        let output = cluster.redlock().args(*args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(64),
            "{args:?}: {}",
            describe(&output)
        );
        assert_eq!(
            stderr(&output).lines().count(),
            1,
            "{args:?}: {}",
            describe(&output)
        );
    }
    assert!(
        cluster.servers[0].keys().is_empty(),
        "a rejected command touched Redis"
    );
}

#[test]
fn a_master_on_a_unix_socket_works() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let socket_arg = socket.to_str().unwrap();
    let cluster = Cluster::start_with(1, &["--unixsocket", socket_arg, "--unixsocketperm", "700"]);
    let output = common::redlock()
        .args(["-s", &format!("redis+unix://{socket_arg}")])
        .args([
            "run",
            "--key",
            "unix",
            "--",
            "sh",
            "-c",
            "echo $REDLOCK_KEY",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "unix");
    assert!(cluster.key_gone_everywhere("unix"));
}
