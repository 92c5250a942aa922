//! `redlock run` under a real systemd: a user manager (`systemd --user`) of the test's own,
//! and two `Type=notify` units made with `systemd-run`, a leader and a standby, as
//! examples/systemd/standby-worker.service sets them up. What `tests/sd_notify.rs` checks
//! datagram by datagram, this checks as systemd understands it: the states and the status
//! line that `systemctl status` shows, and the watchdog's timestamp.
//!
//! The manager runs in a mount namespace of its own (`unshare --mount`, root), with a fresh
//! /run holding /run/systemd/system: a user manager refuses to start on a host not booted
//! with systemd, which a container is not. Its bus is the private socket under the test's
//! XDG_RUNTIME_DIR, which `systemctl --user` and `systemd-run --user` find there.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{Cluster, eventually, redlock_binary};

/// A user manager of the test's own; stopped (with its units) when dropped.
struct Manager {
    process: Child,
    runtime: PathBuf,
    _dir: tempfile::TempDir,
}

impl Manager {
    fn start() -> Manager {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("xdg");
        std::fs::create_dir(&runtime).unwrap();
        let mut unshare = Command::new("unshare");
        // SAFETY: prctl is async-signal-safe. The manager dies with the test thread (the
        // signal survives both execs), as the masters do: a killed test leaves no manager.
        unsafe {
            unshare.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let process = unshare
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(
                "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && \
                 exec /lib/systemd/systemd --user",
            )
            .env("XDG_RUNTIME_DIR", &runtime)
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "cannot run `unshare`: this test starts systemd --user in a mount namespace \
                 (util-linux, as root; systemd installed: apt-get install systemd)",
            );
        let mut manager = Manager {
            process,
            runtime,
            _dir: dir,
        };
        let answers = eventually(Duration::from_secs(20), || {
            manager.process.try_wait().unwrap().is_none()
                && manager
                    .systemctl(&["show", "--property", "Version"])
                    .is_some()
        });
        assert!(
            answers,
            "systemd --user did not start (it needs root for unshare --mount, and \
             /lib/systemd/systemd: apt-get install systemd)"
        );
        manager
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("XDG_RUNTIME_DIR", &self.runtime)
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .arg("--user");
        cmd
    }

    /// `systemctl --user ARGS`'s stdout, if it succeeded.
    fn systemctl(&self, args: &[&str]) -> Option<String> {
        let output = self.command("systemctl").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// One property of a unit, as `systemctl show --value` prints it.
    fn property(&self, unit: &str, name: &str) -> String {
        self.systemctl(&["show", "--value", "--property", name, unit])
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// Starts `redlock run --key svc ... -- COMMAND` as a Type=notify unit, without waiting
    /// for it to become active (a standby never would).
    fn start_unit(&self, unit: &str, cluster: &Cluster, gate: &Path) {
        let status = self
            .command("systemd-run")
            .args(["--quiet", "--no-block", "--collect", "--unit", unit])
            .args(["-p", "Type=notify", "-p", "TimeoutStartSec=infinity"])
            .args(["-p", "WatchdogSec=2s", "-p", "KillMode=mixed"])
            .arg(format!(
                "--setenv=REDLOCK_SERVERS={}",
                cluster.servers_env()
            ))
            .arg("--setenv=XDG_CONFIG_HOME=/nonexistent/redlock-tests")
            .arg(redlock_binary())
            .args(["run", "--key", "svc", "--ttl", "10s", "--wait", "forever"])
            .args([
                "--",
                "sh",
                "-c",
                "while [ ! -e \"$1\" ]; do sleep 0.05; done",
                "sh",
            ])
            .arg(gate)
            .status()
            .unwrap();
        assert!(status.success(), "systemd-run {unit}: {status}");
    }

    fn wait_for(&self, unit: &str, name: &str, wanted: impl Fn(&str) -> bool) -> String {
        let mut value = String::new();
        let found = eventually(Duration::from_secs(30), || {
            value = self.property(unit, name);
            wanted(&value)
        });
        assert!(found, "{unit}: {name}={value:?}");
        value
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        // SAFETY: signals the manager this test started, by its pid (not yet reaped).
        unsafe { libc::kill(self.process.id() as i32, libc::SIGTERM) };
        if !eventually(Duration::from_secs(10), || {
            matches!(self.process.try_wait(), Ok(Some(_)))
        }) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

#[test]
fn systemd_sees_the_leader_active_and_the_standby_activating_until_it_takes_over() {
    let cluster = Cluster::start(3);
    let manager = Manager::start();
    let gates = tempfile::tempdir().unwrap();
    let (leader_gate, standby_gate) = (gates.path().join("leader"), gates.path().join("standby"));

    manager.start_unit("redlock-leader", &cluster, &leader_gate);
    manager.wait_for("redlock-leader", "ActiveState", |s| s == "active");
    let status = manager.property("redlock-leader", "StatusText");
    assert!(
        status.starts_with("holding lock \"svc\" since "),
        "{status}"
    );
    // The watchdog is armed at READY=1, and each ping moves its timestamp.
    let armed = manager.property("redlock-leader", "WatchdogTimestampMonotonic");
    manager.wait_for("redlock-leader", "WatchdogTimestampMonotonic", |t| {
        !t.is_empty() && t != armed
    });

    manager.start_unit("redlock-standby", &cluster, &standby_gate);
    let waiting = manager.wait_for("redlock-standby", "StatusText", |s| {
        s.contains("place 1 of 1 in line")
    });
    assert!(
        waiting.starts_with("waiting for lock \"svc\": held by "),
        "{waiting}"
    );
    assert_eq!(
        manager.property("redlock-standby", "ActiveState"),
        "activating"
    );
    assert_eq!(manager.property("redlock-standby", "SubState"), "start");

    // The leader's command ends: its unit ends, and the standby takes over.
    std::fs::write(&leader_gate, "").unwrap();
    manager.wait_for("redlock-standby", "ActiveState", |s| s == "active");
    let status = manager.property("redlock-standby", "StatusText");
    assert!(
        status.starts_with("holding lock \"svc\" since "),
        "{status}"
    );
    assert_ne!(
        manager.property("redlock-leader", "ActiveState"),
        "active",
        "the leader still runs"
    );

    // `systemctl stop`: SIGTERM to redlock, forwarded to the command; the lock is released.
    manager
        .systemctl(&["stop", "redlock-standby"])
        .expect("systemctl stop");
    assert!(
        eventually(Duration::from_secs(10), || cluster
            .key_gone_everywhere("svc")),
        "{:?}",
        cluster.values("svc")
    );
}
