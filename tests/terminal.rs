//! redlock on a terminal, under a real pty made by script(1): a command under `redlock run` can
//! use the terminal (it gets the foreground: it would be stopped by SIGTTIN when reading
//! otherwise, its process group being a new one, and the terminal goes back to redlock's group
//! afterwards), and waiting for a lock is shown on one line, redrawn in place and cleared.

use crate::common;

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Captured, Cluster, eventually, hostname, this_user, wait_for_file};

/// Waits for script(1) to end; a session stuck for 30 s is killed and fails the test.
fn wait_for_exit(script: &mut Child, what: &str) {
    let started = Instant::now();
    while script.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            let _ = script.kill();
            let _ = script.wait();
            panic!("{what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the shell command `inner` in a pseudo-terminal made by script(1), with the cluster's
/// masters in REDLOCK_SERVERS and redlock's other variables cleared. Returns the session, its
/// input (keep it open until the session ends: script(1) must not see an end of input) and
/// what the terminal showed.
fn terminal_session(
    inner: &str,
    cluster: &Cluster,
) -> (std::process::Child, std::process::ChildStdin, Captured) {
    let mut script = Command::new("script")
        .args(["-q", "-e", "-c", inner, "/dev/null"])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .env("XDG_CONFIG_HOME", "/nonexistent/redlock-tests")
        .env_remove("REDLOCK_KEY")
        .env_remove("REDLOCK_TOKEN")
        .env_remove("REDLOCK_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux is needed for this test");
    let stdin = script.stdin.take().unwrap();
    let typescript = Captured::stdout_of(&mut script);
    (script, stdin, typescript)
}

#[test]
fn a_command_can_read_from_the_terminal() {
    let cluster = Cluster::start(3);
    let inner = format!(
        "{} run --key tty -- sh -c 'read answer; echo got:$answer; exit 3'; echo rc=$?",
        crate::common::redlock_binary()
    );
    let mut script = Command::new("script")
        .args(["-q", "-e", "-c", &inner, "/dev/null"])
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux is needed for this test");
    script.stdin.take().unwrap().write_all(b"alice\n").unwrap();
    // A command stuck in the background would never answer: do not wait forever.
    let started = Instant::now();
    while script.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = script.kill();
            panic!("the command could not read from the terminal (stopped by SIGTTIN?)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = script.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("got:alice"),
        "{}",
        common::describe(&output)
    );
    assert!(stdout.contains("rc=3"), "{}", common::describe(&output));
    assert!(cluster.key_gone_everywhere("tty"));
}

#[test]
fn waiting_is_drawn_in_place_on_the_terminal_and_cleared_once_the_lock_is_taken() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    // The holder runs as `sh holder.sh` from `dir` (a short, known command line) and holds the
    // lock until the test creates the gate.
    std::fs::write(
        dir.path().join("holder.sh"),
        "echo ready > ready\nwhile [ ! -e gate ]; do sleep 0.02; done\n",
    )
    .unwrap();
    let mut holder = cluster
        .redlock()
        .args(["run", "--key", "ttywait", "--", "sh", "holder.sh"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&dir.path().join("ready"), Duration::from_secs(10));

    // No -v: on a terminal the waiting line is shown anyway. A wide terminal, so that the
    // whole line is shown (a narrow one cuts it: see the test below).
    let inner = format!(
        "stty rows 40 cols 200; {} run --key ttywait --wait 60s -- sh -c 'echo got-lock'; echo rc=$?",
        crate::common::redlock_binary()
    );
    let (mut script, stdin, typescript) = terminal_session(&inner, &cluster);

    // The line is drawn, then redrawn over itself while the holder holds on.
    let draw = "\r\x1b[2Kredlock: waiting for lock \"ttywait\": held by ";
    let redrawn = eventually(Duration::from_secs(30), || {
        typescript.text().matches(draw).count() >= 2
    });
    let shown = typescript.text();
    assert!(
        redrawn,
        "the waiting line was not drawn and redrawn: {shown:?}"
    );
    assert!(
        !shown.contains("got-lock"),
        "ran without the lock: {shown:?}"
    );
    // It says who is in the way: `HOST (pid P, user U, "sh holder.sh") for AGE`.
    let line_start = shown.find(draw).unwrap() + draw.len();
    let line = &shown[line_start..];
    let line = &line[..line.find('\r').unwrap_or(line.len())];
    let expected = format!(
        "{} (pid {}, user {}, \"sh holder.sh\") for ",
        hostname(),
        holder.id(),
        this_user()
    );
    let rest = line
        .strip_prefix(&expected)
        .unwrap_or_else(|| panic!("expected `{expected}` at the start of {line:?}"));
    // Then how long redlock has waited, out of --wait 60s.
    let (age, waited) = rest
        .split_once(" (waited ")
        .unwrap_or_else(|| panic!("no waited time in {line:?}"));
    humantime::parse_duration(age).unwrap_or_else(|e| panic!("{age:?} is not an age: {e}"));
    assert!(waited.ends_with(" of 1m)"), "{line:?}");

    std::fs::write(dir.path().join("gate"), "go\n").unwrap();
    wait_for_exit(&mut script, "redlock never took the lock once it was free");
    drop(stdin);
    let output = typescript.finish();
    assert!(output.contains("rc=0"), "{output:?}");
    assert!(holder.wait().unwrap().success());

    let ran = output.find("got-lock").expect("the command did not run");
    let before = &output[..ran];
    let first_draw = before.find(draw).unwrap();
    let last_draw = before.rfind(draw).unwrap();
    let clear = before.rfind("\r\x1b[2K").unwrap();
    assert!(
        clear > last_draw,
        "the waiting line was not cleared before the command ran: {output:?}"
    );
    assert!(
        before[clear + "\r\x1b[2K".len()..].trim().is_empty(),
        "something was left after the clear: {output:?}"
    );
    // In place: no new line from the first drawing to the clearing.
    assert!(
        !before[first_draw..clear].contains('\n'),
        "the waiting line was not redrawn in place: {output:?}"
    );
    assert!(!output[ran..].contains("waiting for lock"), "{output:?}");
    assert!(cluster.key_gone_everywhere("ttywait"));
}

/// On a narrow terminal, and with `--wait forever`, the waiting line stays within the width
/// (a wrapped line cannot be redrawn in place) and says it has no limit.
#[test]
fn the_waiting_line_fits_a_narrow_terminal() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let long_command = format!("sh holder.sh {}", "--a-long-argument ".repeat(8));
    std::fs::write(
        dir.path().join("holder.sh"),
        "echo ready > ready; while [ ! -e gate ]; do sleep 0.05; done\n",
    )
    .unwrap();
    let mut holder = common::redlock()
        .current_dir(dir.path())
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .args(["run", "--key", "narrow", "--ttl", "20s", "--"])
        .args(long_command.split_whitespace())
        .spawn()
        .unwrap();
    wait_for_file(&dir.path().join("ready"), Duration::from_secs(10));

    let inner = format!(
        "stty rows 40 cols 60; {} run --key narrow --wait forever -- true; echo rc=$?",
        crate::common::redlock_binary()
    );
    let (mut script, stdin, typescript) = terminal_session(&inner, &cluster);
    let draw = "\r\x1b[2Kredlock: waiting for lock \"narrow\"";
    assert!(
        eventually(Duration::from_secs(30), || typescript
            .text()
            .matches(draw)
            .count()
            >= 2),
        "the waiting line was not drawn twice: {:?}",
        typescript.text()
    );
    std::fs::write(dir.path().join("gate"), "go\n").unwrap();
    wait_for_exit(
        &mut script,
        "redlock --wait forever never took the lock once it was free",
    );
    drop(stdin);
    let output = typescript.finish();
    assert!(output.contains("rc=0"), "{output:?}");
    assert!(holder.wait().unwrap().success());
    let drawn: Vec<&str> = output
        .split("\r\x1b[2K")
        .filter(|piece| piece.starts_with("redlock: waiting"))
        .map(|piece| piece.split(['\r', '\n']).next().unwrap())
        .collect();
    assert!(drawn.len() >= 2, "{output:?}");
    for line in drawn {
        assert!(
            line.chars().count() < 60,
            "wider than the terminal: {line:?}"
        );
        assert!(
            line.ends_with('…'),
            "a long line is cut with an ellipsis: {line:?}"
        );
    }
}
