//! Processes the tests start and watch: a `redlock run` in the background ([`Running`]), its
//! output pipes read as they come ([`Captured`]), signals, process groups, and waiting for a
//! condition ([`eventually`]) instead of sleeping a fixed time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// Waits until `condition` holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Sends `signal` to `pid`.
pub fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill takes plain integers.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal})");
}

/// True while a process with this pid is alive: it exists and is not a zombie waiting to be
/// reaped (orphans are reparented to an init that may reap them late, or never in a sandbox).
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself contain spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The pids of live processes in process group `group`.
pub fn live_group_members(group: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    let fields: Vec<&str> = rest.split_whitespace().collect();
                    // fields[0] state, [1] ppid, [2] pgrp
                    Some(fields.first()? != &"Z" && fields.get(2)?.parse::<i32>().ok()? == group)
                })
                .unwrap_or(false)
        })
        .collect()
}

/// Reads a file the child writes, waiting until it exists and is non-empty.
pub fn wait_for_file(path: &Path, timeout: Duration) -> String {
    let mut content = String::new();
    let ok = eventually(timeout, || {
        content = std::fs::read_to_string(path).unwrap_or_default();
        !content.trim().is_empty()
    });
    assert!(ok, "{} never appeared", path.display());
    content.trim().to_string()
}

/// Milliseconds since the Unix epoch, comparable with `date +%s%3N` in a child.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A `redlock run` started in the background, whose command tells the test when it runs and
/// then waits for the test to let it finish.
///
/// The command is `sh -c SCRIPT sh DIR`, where DIR is [`Running::dir`] (`$d` in the script):
///
/// ```text
/// d=$1
/// echo "$REDLOCK_TOKEN" > "$d/token"
/// SETUP
/// echo $$ > "$d/ready"        # the shell's pid, which leads the command's process group
/// BODY                        # by default: wait until "$d/gate" exists, then exit 0
/// ```
///
/// redlock's stdout and stderr are read as they come, so a test can wait for a line
/// ([`Running::wait_for_stderr`]) while the command runs. Dropping a `Running` that is still
/// running SIGKILLs redlock (whose guard then takes the command down).
pub struct Running {
    pub child: Child,
    pub dir: TempDir,
    stdout: Captured,
    stderr: Captured,
}

/// The shell loop that waits for the gate file ([`Running::open_gate`]).
pub const WAIT_FOR_GATE: &str = "while [ ! -e \"$d/gate\" ]; do sleep 0.02; done";

impl Running {
    /// Spawns `cmd` (a `redlock ... run [options]`, without `--`) with the default command:
    /// write the token, announce ready, wait for the gate, exit 0.
    pub fn start(cmd: &mut Command) -> Running {
        Running::start_script(cmd, "", WAIT_FOR_GATE)
    }

    /// Like [`Running::start`], with `setup` run before the ready file is written and `body`
    /// after it (instead of waiting for the gate; include [`WAIT_FOR_GATE`] to keep it).
    pub fn start_script(cmd: &mut Command, setup: &str, body: &str) -> Running {
        let dir = tempfile::tempdir().expect("temp dir");
        let script = format!(
            "d=$1\necho \"$REDLOCK_TOKEN\" > \"$d/token\"\n{setup}\necho $$ > \"$d/ready\"\n{body}\n"
        );
        let mut child = cmd
            .args(["--", "sh", "-c", &script, "sh"])
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn redlock");
        let stdout = Captured::start(child.stdout.take().expect("stdout"));
        let stderr = Captured::start(child.stderr.take().expect("stderr"));
        Running {
            child,
            dir,
            stdout,
            stderr,
        }
    }

    /// A file in the command's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Waits until the command announced itself, and returns its pid (the leader of its
    /// process group). Fails at once, with redlock's output, if redlock exits first.
    pub fn wait_ready(&mut self) -> i32 {
        let ready = self.path("ready");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let content = std::fs::read_to_string(&ready).unwrap_or_default();
            // Written by one `echo`: the pid and a newline.
            if content.ends_with('\n') {
                return content.trim().parse().expect("pid in the ready file");
            }
            if self.child.try_wait().expect("try_wait").is_some() {
                let output = self.wait_output();
                panic!(
                    "redlock ended before the command was ready:\n{}",
                    describe(&output)
                );
            }
            assert!(
                Instant::now() < deadline,
                "the command never became ready; stderr so far:\n{}",
                self.stderr_so_far()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `$REDLOCK_TOKEN` as the command saw it (call after [`Running::wait_ready`]).
    pub fn token(&self) -> String {
        let token = std::fs::read_to_string(self.path("token")).expect("token file");
        token.trim().to_string()
    }

    /// Lets the default command (or a body that waits with [`WAIT_FOR_GATE`]) finish.
    pub fn open_gate(&self) {
        std::fs::write(self.path("gate"), "open\n").expect("write the gate file");
    }

    /// True while redlock has not exited.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// What redlock wrote on stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.stderr.text()
    }

    /// Waits until redlock's stderr contains `needle`; returns whether it did in time.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        eventually(timeout, || self.stderr.text().contains(needle))
    }

    /// Waits for redlock to exit, and returns its status and everything it wrote.
    pub fn wait_output(&mut self) -> Output {
        let status = self.child.wait().expect("wait for redlock");
        // The pipes close when the last process holding them (the command's included) exits;
        // whatever is left running after a few seconds is not waited for.
        eventually(Duration::from_secs(5), || {
            self.stdout.finished() && self.stderr.finished()
        });
        Output {
            status,
            stdout: self.stdout.bytes(),
            stderr: self.stderr.bytes(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One of a child's output pipes, read to the end by a thread of its own, so that a test can
/// wait for a line while the child runs.
pub struct Captured {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Captured {
    pub fn start(mut pipe: impl std::io::Read + Send + 'static) -> Captured {
        let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&bytes);
        let reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
        Captured { bytes, reader }
    }

    /// The child's stderr, which must be piped.
    pub fn stderr_of(child: &mut Child) -> Captured {
        Captured::start(child.stderr.take().expect("stderr must be piped"))
    }

    /// The child's stdout, which must be piped.
    pub fn stdout_of(child: &mut Child) -> Captured {
        Captured::start(child.stdout.take().expect("stdout must be piped"))
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }

    pub fn finished(&self) -> bool {
        self.reader.is_finished()
    }

    /// Waits until `needle` was written; panics with what was written otherwise.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let found = eventually(timeout, || self.text().contains(needle));
        let text = self.text();
        assert!(found, "{needle:?} never appeared: {text}");
        text
    }

    /// Everything written, once every writer closed the pipe.
    pub fn finish(self) -> String {
        self.reader.join().unwrap();
        String::from_utf8_lossy(&self.bytes.lock().unwrap()).into_owned()
    }
}

/// Closes `fds` in the child after its standard streams are set up, as `>&-` does in a shell.
pub fn closing<'a>(cmd: &'a mut Command, fds: &'static [i32]) -> &'a mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: close is async-signal-safe and touches only the child's own descriptors.
    unsafe {
        cmd.pre_exec(move || {
            for &fd in fds {
                libc::close(fd);
            }
            Ok(())
        })
    }
}
