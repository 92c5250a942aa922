//! A command under `redlock run` can use the terminal: it gets the foreground (it would be
//! stopped by SIGTTIN when reading otherwise, its process group being a new one), and the
//! terminal goes back to redlock's group afterwards. Runs under a real pty made by script(1).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Cluster;

#[test]
fn a_command_can_read_from_the_terminal() {
    let cluster = Cluster::start(3);
    let inner = format!(
        "{} run --key tty -- sh -c 'read answer; echo got:$answer; exit 3'; echo rc=$?",
        env!("CARGO_BIN_EXE_redlock")
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
