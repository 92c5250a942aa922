//! `redlock run` against real masters: exit codes, conflicts, waiting, renewal, signals.

use crate::common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Captured, Cluster, describe, holder_age, send_signal, wait_for_file};

/// Creates the file a gated script waits for.
fn open_gate(gate: &Path) {
    std::fs::write(gate, "go\n").unwrap();
}

/// The gated holder script: says it holds the lock, then holds it until the test creates
/// the gate. Run as `sh holder.sh` from `dir`, so that the holder's command line is short and
/// known.
fn write_gated_holder(dir: &Path) {
    std::fs::write(
        dir.join("holder.sh"),
        "echo ready > ready\nwhile [ ! -e gate ]; do sleep 0.02; done\n",
    )
    .unwrap();
}

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
    assert!(cluster.key_gone_everywhere("__redlock:{status}:holder:status"));
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

    // A script whose #! interpreter is missing: 127 as in a shell, but not "not found".
    let script = dir.path().join("bad-interpreter.sh");
    std::fs::write(&script, "#!/nonexistent/interpreter\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = run(
        &cluster,
        &["--key", "spawn", "--", script.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(127), "{}", describe(&output));
    assert!(
        stderr(&output).contains("interpreter on its #! line was not found"),
        "{}",
        describe(&output)
    );
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
    // The validity is the TTL less the time the acquire took and the clock-drift allowance
    // (TTL x 0.01 + 2 ms).
    let ttl = 10_000;
    let drift = ttl / 100 + 2;
    assert!(
        validity > ttl / 2 && validity <= ttl - drift,
        "validity {validity}"
    );
    assert_eq!(stderr(&output), "oops\n");
}

#[test]
fn a_contender_gets_75_while_the_lock_is_held_and_runs_once_it_is_free() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    write_gated_holder(dir.path());
    let before_holder = Instant::now();
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
            "holder.sh",
        ])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    wait_for_file(&dir.path().join("ready"), Duration::from_secs(10));
    // Let the holder's age reach whole seconds, so that the message's "for AGE" is seen to
    // count (this only makes it older; no timing is asserted).
    std::thread::sleep(Duration::from_millis(1500));

    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let output = run(&cluster, &["--key", "busy", "--", "sh", "-c", &touch]);
    let upper = before_holder.elapsed() + Duration::from_secs(1);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    // Who is in the way: `lock "busy" is held by HOST (pid P, user U, "sh holder.sh") for 1s,
    // expires in 9s unless renewed; tried once without waiting: to wait for it, pass --wait
    // DURATION (e.g. --wait 1m) or --wait forever`.
    assert!(
        message.starts_with("redlock: lock \"busy\" is held by "),
        "{message}"
    );
    let age = holder_age(&message, holder.id(), "sh holder.sh");
    assert!(
        age >= Duration::from_secs(1) && age <= upper,
        "held for {age:?}, but it was taken less than {upper:?} ago and more than 1.5s ago: \
         {message}"
    );
    let expiry = message
        .split(", expires in ")
        .nth(1)
        .and_then(|rest| rest.split(" unless renewed").next())
        .unwrap_or_else(|| panic!("no expiry in: {message}"));
    let expiry = humantime::parse_duration(expiry).unwrap();
    assert!(
        expiry >= Duration::from_secs(1) && expiry <= Duration::from_secs(10),
        "{message}"
    );
    assert!(message.contains("--wait"), "{message}");
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

    // --wait: the contender waits while the lock is held, and runs as soon as it is free.
    let mut waiter = cluster
        .redlock()
        .args([
            "run", "-v", "--key", "busy", "--wait", "60s", "--", "sh", "-c",
        ])
        .arg(&touch)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = Captured::stderr_of(&mut waiter);
    watch.wait_for("waiting for lock \"busy\"", Duration::from_secs(30));
    assert!(!marker.exists(), "the command ran without the lock");
    assert!(
        waiter.try_wait().unwrap().is_none(),
        "the waiter did not wait"
    );
    open_gate(&dir.path().join("gate"));
    let status = waiter.wait().unwrap();
    let log = watch.finish();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(marker.exists(), "{log}");
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
    let gate = dir.path().join("gate");
    let script = format!(
        "echo $REDLOCK_TOKEN > {}; while [ ! -e {} ]; do sleep 0.02; done",
        token_file.display(),
        gate.display()
    );
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
    // The command runs until the gate opens: well over three TTLs.
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
    assert!(checks >= 3, "only {checks} checks");
    // One last look, after the three TTLs.
    assert!(cluster.holding("long", &token) >= 2);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the command ended early"
    );
    open_gate(&gate);
    assert!(child.wait().unwrap().success());
    assert!(cluster.key_gone_everywhere("long"));
}

/// The command leads a process group of two: a shell and a background perl, each trapping
/// `signal`, reporting it in a file and exiting (the shell with 3). redlock must forward the
/// signal to the whole group (so both report), exit with the command's status, and release the
/// lock.
///
/// The background member is perl, not a shell: a non-interactive sh starts its background jobs
/// with SIGINT and SIGQUIT ignored, and a shell cannot trap a signal ignored at its start;
/// perl's handler replaces the inherited disposition. `&` without job control keeps it in the
/// shell's process group.
fn forwarded(signal: i32, name: &str) {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let member = format!(
        r#"perl -e '$SIG{{{name}}} = sub {{ open my $f, ">", "member-got"; print $f "{name}\n"; close $f; exit 0 }}; open my $r, ">", "member-ready"; print $r "ready\n"; close $r; for (1..1500) {{ select(undef, undef, undef, 0.02) }}' &"#
    );
    // The shell waits (boundedly) for the member's report before exiting, so that nothing
    // redlock does once the leader is gone can be mistaken for the forwarded signal. No core
    // files from SIGQUIT.
    let script = format!(
        "ulimit -c 0\n\
         {member}\n\
         trap 'echo {name} > leader-got; i=0; while [ ! -s member-got ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; exit 3' {name}\n\
         echo ready > leader-ready\n\
         while :; do sleep 0.05; done\n"
    );
    std::fs::write(dir.path().join("command.sh"), script).unwrap();
    let mut child = cluster
        .redlock()
        .args([
            "run",
            "--key",
            "sig",
            "--ttl",
            "5s",
            "--",
            "sh",
            "command.sh",
        ])
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = Captured::stderr_of(&mut child);
    wait_for_file(&dir.path().join("leader-ready"), Duration::from_secs(10));
    wait_for_file(&dir.path().join("member-ready"), Duration::from_secs(10));
    send_signal(child.id(), signal);
    let status = child.wait().unwrap();
    let log = watch.finish();
    assert_eq!(status.code(), Some(3), "{name}: {status:?}: {log}");
    let read = |file: &str| {
        std::fs::read_to_string(dir.path().join(file))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    assert_eq!(read("leader-got"), name, "{name}: the command's leader");
    assert_eq!(
        read("member-got"),
        name,
        "{name}: not forwarded to the rest of the command's process group"
    );
    assert!(
        cluster.key_gone_everywhere("sig"),
        "{name}: lock left behind"
    );
    assert!(cluster.key_gone_everywhere("__redlock:{sig}:holder:sig"));
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
fn sigquit_reaches_the_command_and_the_lock_is_released() {
    forwarded(libc::SIGQUIT, "QUIT");
}

#[test]
fn sigusr1_reaches_the_command() {
    forwarded(libc::SIGUSR1, "USR1");
}

#[test]
fn sigusr2_reaches_the_command() {
    forwarded(libc::SIGUSR2, "USR2");
}

#[test]
fn a_signal_while_waiting_ends_the_wait_at_once() {
    let cluster = Cluster::start(3);
    cluster.servers.iter().for_each(|s| s.set("held", "other"));
    let mut child = cluster
        .redlock()
        .args(["run", "-v", "--key", "held", "--wait", "120s", "--", "true"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = Captured::stderr_of(&mut child);
    // The signal handlers are in place once redlock is waiting.
    watch.wait_for("waiting for lock \"held\"", Duration::from_secs(30));
    let sent = Instant::now();
    send_signal(child.id(), libc::SIGTERM);
    let status = child.wait().unwrap();
    let log = watch.finish();
    assert_eq!(status.code(), Some(143), "{log}");
    // Far less than the 120 s it was ready to wait: the signal ended it, not the clock.
    assert!(
        sent.elapsed() < Duration::from_secs(60),
        "the wait did not end at the signal"
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
            crate::common::redlock_binary()
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
        cluster.servers[0].lock_keys().is_empty(),
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
