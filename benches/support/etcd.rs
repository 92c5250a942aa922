//! One etcd member on loopback, started by a bench for `etcdctl lock` (see `queue.rs`): ports
//! below the ephemeral range (`tests/common`'s [`free_port`]), its data in a temporary
//! directory, killed when dropped and by its parent-death signal if the bench dies. When etcd
//! is missing or does not come up, [`Etcd::start`] says why; the bench then skips etcd's rows.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::common::{free_port, listens_on};

/// One etcd member, for `etcdctl lock`.
pub struct Etcd {
    pub endpoint: String,
    child: Child,
    _dir: TempDir,
}

impl Etcd {
    pub fn start() -> Result<Etcd, String> {
        for program in ["etcd", "etcdctl"] {
            let found = std::env::var_os("PATH").is_some_and(|paths| {
                std::env::split_paths(&paths).any(|dir| dir.join(program).is_file())
            });
            if !found {
                return Err(format!(
                    "{program} is not installed (Debian: apt-get install etcd-server etcd-client)"
                ));
            }
        }
        let mut last = String::new();
        // A port may be taken between choosing it and etcd binding it: try again.
        for _ in 0..3 {
            match Etcd::launch() {
                Ok(etcd) => return Ok(etcd),
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    fn launch() -> Result<Etcd, String> {
        let dir = tempfile::Builder::new()
            .prefix("redlock-bench-etcd-")
            .tempdir()
            .map_err(|e| format!("cannot create etcd's data directory: {e}"))?;
        let client_port = free_port();
        let peer_port = loop {
            let port = free_port();
            if port != client_port {
                break port;
            }
        };
        let endpoint = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let log_path = dir.path().join("etcd.log");
        let log = std::fs::File::create(&log_path).map_err(|e| format!("etcd.log: {e}"))?;
        let mut cmd = Command::new("etcd");
        cmd.args(["--name", "bench"])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--listen-client-urls", &endpoint])
            .args(["--advertise-client-urls", &endpoint])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("bench={peer}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: prctl takes plain integers and is async-signal-safe; it makes etcd die with
        // the bench's main thread, so no etcd outlives a crashed bench.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot spawn etcd: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                let last = log.lines().last().unwrap_or("");
                return Err(format!(
                    "etcd exited with {status}; its last log line: {last}"
                ));
            }
            // Ours, not some other etcd that already had the port, and answering.
            if listens_on(child.id(), client_port) && healthy(&endpoint) {
                return Ok(Etcd {
                    endpoint,
                    child,
                    _dir: dir,
                });
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err("etcd did not report healthy within 20 s".to_string());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn healthy(endpoint: &str) -> bool {
    Command::new("etcdctl")
        .arg(format!("--endpoints={endpoint}"))
        .args(["endpoint", "health"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
