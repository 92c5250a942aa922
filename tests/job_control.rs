//! Job control: a command under `redlock run` that is stopped, from a terminal (Ctrl-Z, `fg`)
//! or by a signal.
//!
//! The terminal tests run an interactive bash on a pseudo-terminal of their own (openpty; the
//! shell is a session leader with the pty as its controlling terminal, so it has job control),
//! type into the master side as a user would, and read what the terminal shows.

use crate::common;

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::procfs::state_of;
use crate::common::{
    Captured, Cluster, Running, describe, eventually, live_group_members, wait_for_file,
};

const PROMPT: &str = "PROMPT> ";
const PATIENCE: Duration = Duration::from_secs(30);

/// A program running on a pseudo-terminal of its own, as its session leader.
struct Terminal {
    master: std::fs::File,
    session: Child,
    screen: Captured,
}

impl Terminal {
    fn start(mut command: Command) -> Terminal {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two descriptors into our locals; the null name, termios and
        // window size ask for the defaults.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are new and ours alone.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        // SAFETY: fcntl on a descriptor we own: the session must not inherit the master side.
        unsafe {
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&master),
                libc::F_SETFD,
                libc::FD_CLOEXEC,
            )
        };
        command
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe and take plain integers: a new
        // session whose controlling terminal is the pty on stdin.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let session = command.spawn().expect("start the session");
        // The slave ends the command holds are closed with it: once the session ends, reading
        // the master fails and the reader stops.
        drop(command);
        let master = std::fs::File::from(master);
        let screen = Captured::start(master.try_clone().unwrap());
        Terminal {
            master,
            session,
            screen,
        }
    }

    /// An interactive bash with a known prompt and no startup files, in `dir`, with redlock's
    /// environment pointing at `cluster`.
    fn bash(cluster: &Cluster, dir: &Path) -> Terminal {
        let mut bash = Command::new("bash");
        bash.args(["--norc", "--noprofile", "-i"])
            .current_dir(dir)
            .env("PS1", PROMPT)
            .env("TERM", "dumb")
            .env("HISTFILE", "/dev/null")
            .env("REDLOCK_SERVERS", cluster.servers_env())
            .env("XDG_CONFIG_HOME", "/nonexistent/redlock-tests");
        for var in [
            "REDLOCK_KEY",
            "REDLOCK_TOKEN",
            "REDLOCK_CONFIG",
            "REDLOCK_FENCE",
        ] {
            bash.env_remove(var);
        }
        let terminal = Terminal::start(bash);
        terminal.wait_for(0, PROMPT);
        terminal
    }

    /// Types `text`.
    fn type_in(&self, text: &str) {
        (&self.master).write_all(text.as_bytes()).unwrap();
    }

    /// Waits until `needle` shows on the screen after byte `from`; returns the offset just past
    /// it.
    fn wait_for(&self, from: usize, needle: &str) -> usize {
        let mut found = None;
        let shown = eventually(PATIENCE, || {
            let text = self.screen.text();
            found = text
                .get(from..)
                .and_then(|rest| rest.find(needle))
                .map(|at| from + at + needle.len());
            found.is_some()
        });
        assert!(
            shown,
            "{needle:?} never showed on the terminal; it shows:\n{}",
            self.screen.text()
        );
        found.unwrap()
    }

    /// Types a command line, and waits for its output to end with the next prompt; returns
    /// what it printed (the echo of the line included) and the offset after the prompt.
    fn run(&self, from: usize, line: &str) -> (String, usize) {
        self.type_in(&format!("{line}\n"));
        let end = self.wait_for(from, PROMPT);
        let text = self.screen.text();
        (text[from..end].to_string(), end)
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.session.kill();
        let _ = self.session.wait();
    }
}

/// The command every terminal test runs: it writes its pid, says it started, waits for the
/// gate file, says it finished, and exits 7. Its output words are not in the command line, so
/// the echo of what is typed cannot be mistaken for them.
///
/// The waiting is one process (perl, exec'd in the shell's place): a shell that starts a
/// `sleep` every few milliseconds can be caught by the stop between its vfork and the child's
/// exec, and then sits in uninterruptible sleep instead of stopping (a shell running the job
/// directly would hang the same way).
fn write_job(dir: &Path) {
    std::fs::write(
        dir.join("job.sh"),
        format!(
            "echo $$ > pid\necho command-started\n{}\n",
            wait_for("gate", 7)
        ),
    )
    .unwrap();
}

/// A perl command line that waits for the file `gate`, then says `command-finished` and exits
/// with `code`.
fn wait_for(gate: &str, code: i32) -> String {
    format!(
        "exec perl -e 'select(undef, undef, undef, 0.02) until -e $ARGV[0]; \
         print \"command-finished\\n\"; exit {code}' \"{gate}\""
    )
}

fn redlock_path() -> &'static str {
    crate::common::redlock_binary()
}

#[test]
fn ctrl_z_suspends_the_whole_job_and_fg_resumes_it() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    write_job(dir.path());
    let terminal = Terminal::bash(&cluster, dir.path());
    let at = terminal.screen.text().len();
    terminal.type_in(&format!("{} run --key jc -- sh job.sh\n", redlock_path()));
    let at = terminal.wait_for(at, "command-started");
    let command: i32 = wait_for_file(&dir.path().join("pid"), PATIENCE)
        .parse()
        .unwrap();

    // Ctrl-Z: the shell gets its prompt back and reports the job stopped.
    terminal.type_in("\x1a");
    let stopped = terminal.wait_for(at, "Stopped");
    let at = terminal.wait_for(stopped, PROMPT);
    let (jobs, at) = terminal.run(at, "jobs -l");
    let redlock: i32 = jobs
        .lines()
        .find(|line| line.contains("Stopped"))
        .and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or_else(|| panic!("no stopped job: {jobs}"));
    assert_eq!(state_of(redlock), Some('T'), "redlock is not stopped");
    assert_eq!(state_of(command), Some('T'), "the command is not stopped");
    // The lock is still held: a suspension shorter than the validity loses nothing.
    assert_eq!(cluster.values("jc").iter().flatten().count(), 3);

    // fg: the command runs on, in the foreground, to its end and its exit status.
    std::fs::write(dir.path().join("gate"), "").unwrap();
    let (shown, at) = terminal.run(at, "fg");
    assert!(shown.contains("command-finished"), "{shown}");
    let (status, _) = terminal.run(at, "echo rc=$?");
    assert!(status.contains("rc=7"), "{status}");
    assert!(cluster.key_gone_everywhere("jc"));
}

#[test]
fn a_suspension_longer_than_the_validity_ends_the_run_with_70() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    write_job(dir.path());
    let terminal = Terminal::bash(&cluster, dir.path());
    let at = terminal.screen.text().len();
    terminal.type_in(&format!(
        "{} run --key jclost --ttl 2s -- sh job.sh\n",
        redlock_path()
    ));
    let at = terminal.wait_for(at, "command-started");
    let command: i32 = wait_for_file(&dir.path().join("pid"), PATIENCE)
        .parse()
        .unwrap();
    terminal.type_in("\x1a");
    let stopped = terminal.wait_for(at, "Stopped");
    let at = terminal.wait_for(stopped, PROMPT);

    // redlock is stopped; its guard is not, and kills the command when the validity ends.
    assert!(
        eventually(PATIENCE, || live_group_members(command).is_empty()),
        "the suspended command outlived the lock: {:?}",
        live_group_members(command)
    );
    let (shown, at) = terminal.run(at, "fg");
    let lines: Vec<&str> = shown.lines().filter(|l| l.contains("redlock:")).collect();
    assert_eq!(lines.len(), 1, "{shown}");
    assert!(
        lines[0].contains("lock \"jclost\": lost the lock")
            && lines[0].contains("while redlock was stopped"),
        "{shown}"
    );
    assert!(!shown.contains("command-finished"), "{shown}");
    let (status, at) = terminal.run(at, "echo rc=$?");
    assert!(status.contains("rc=70"), "{status}");
    // The terminal is the shell's again.
    terminal.type_in("read answer; echo got-$answer\n");
    terminal.type_in("hello\n");
    terminal.wait_for(at, "got-hello");
    assert!(cluster.key_gone_everywhere("jclost"));
}

/// Under `script -c`, a terminal emulator's `-e`, or any session without a job-control shell,
/// nobody could resume a stopped job, and the kernel ignores Ctrl-Z for it: the command, which
/// redlock put in a group of its own, is resumed at once, as if redlock were not there.
#[test]
fn ctrl_z_where_nobody_could_resume_the_job_changes_nothing() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    write_job(dir.path());
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!(
            "{} run -v --key jcorphan -- sh job.sh; echo rc=$?",
            redlock_path()
        ))
        .current_dir(dir.path())
        .env("REDLOCK_SERVERS", cluster.servers_env())
        .env("XDG_CONFIG_HOME", "/nonexistent/redlock-tests");
    let terminal = Terminal::start(sh);
    let at = terminal.wait_for(0, "command-started");
    terminal.type_in("\x1a");
    let at = terminal.wait_for(at, "resuming it");
    std::fs::write(dir.path().join("gate"), "").unwrap();
    let at = terminal.wait_for(at, "command-finished");
    terminal.wait_for(at, "rc=7");
}

/// `kill -TERM` to redlock while the command's group is stopped: forwarded with SIGCONT, so
/// the group acts on it at once instead of keeping it pending for ever.
#[test]
fn sigterm_ends_a_run_whose_command_is_stopped() {
    let cluster = Cluster::start(3);
    let mut run = Running::start_script(
        cluster.redlock().args(["run", "-v", "--key", "termstop"]),
        "",
        &wait_for("$d/gate", 0),
    );
    let group = run.wait_ready();
    stop_group(group, &run);
    common::send_signal(run.child.id(), libc::SIGTERM);
    let ended = eventually(PATIENCE, || !run.is_running());
    assert!(
        ended,
        "redlock did not end: the stopped command never acted on SIGTERM"
    );
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    assert!(live_group_members(group).is_empty());
    assert!(cluster.key_gone_everywhere("termstop"));
}

/// Without a terminal there is no job to suspend: a command stopped by someone stays stopped,
/// and redlock keeps its lock alive meanwhile.
#[test]
fn a_stopped_command_without_a_terminal_keeps_the_lock() {
    let cluster = Cluster::start(3);
    let mut run = Running::start_script(
        cluster
            .redlock()
            .args(["run", "-v", "--key", "quiet", "--ttl", "1s"]),
        "",
        &wait_for("$d/gate", 0),
    );
    let group = run.wait_ready();
    let token = run.token();
    stop_group(group, &run);
    // Three TTLs.
    std::thread::sleep(Duration::from_secs(3));
    assert!(run.is_running(), "{}", run.stderr_so_far());
    assert_eq!(state_of(group), Some('T'));
    assert!(cluster.holding("quiet", &token) >= 2);
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(-group, libc::SIGCONT) }, 0);
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(cluster.key_gone_everywhere("quiet"));
}

/// Stops the process group `group` and waits until its leader (a single process, see
/// [`write_job`]) is stopped.
fn stop_group(group: i32, run: &Running) {
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(-group, libc::SIGSTOP) }, 0);
    assert!(
        eventually(PATIENCE, || state_of(group) == Some('T')),
        "the command's group did not stop: state {:?}; redlock said:\n{}",
        state_of(group),
        run.stderr_so_far()
    );
}
