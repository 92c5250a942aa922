//! A process's peak memory, for the tests that feed redlock hostile replies: a client that
//! buffers an endless reply shows as a growing resident set long before it runs out of time.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Captured, describe, eventually};

/// A finished process: what it wrote, how it ended, and the most memory it held.
pub struct Measured {
    pub output: Output,
    /// Peak resident set size in KiB: the largest VmHWM seen (see [`run_measured`]).
    pub peak_rss_kib: u64,
    /// The largest anonymous and file-backed parts of the resident set seen in one read
    /// (RssAnon, RssFile): which of the two a peak was made of, when the bound fails.
    pub peak_anon_kib: u64,
    pub peak_file_kib: u64,
    pub elapsed: Duration,
    /// Why the watchdog killed it, if it did.
    pub killed: Option<String>,
}

impl Measured {
    /// For assertion messages: what it wrote, then the figures, last, where a log cut to
    /// its tail (as CI's summary is) still shows them.
    pub fn describe(&self) -> String {
        format!(
            "{}\npeak RSS {} KiB (at most {} KiB anonymous, {} KiB of files in one read) after \
             {:?}{}",
            describe(&self.output),
            self.peak_rss_kib,
            self.peak_anon_kib,
            self.peak_file_kib,
            self.elapsed,
            self.killed
                .as_ref()
                .map_or(String::new(), |why| format!(", killed: {why}")),
        )
    }
}

/// Runs `cmd` to the end and measures its peak memory, reading VmHWM (the kernel's
/// high-water mark of the resident set) from /proc every millisecond: a spike between two
/// reads still shows in the next one; only the last millisecond before exit can escape.
/// (wait4's `ru_maxrss` cannot serve: a child spawned from this large, many-threaded test
/// process inherits its high-water mark when it execs.) A watchdog SIGKILLs the process once
/// it passes `ceiling_kib`, or once `timeout` passed, so that a runaway (a client buffering
/// an endless reply) can neither take the machine down nor hang the test; the test then
/// fails on the figures.
pub fn run_measured(cmd: &mut Command, ceiling_kib: u64, timeout: Duration) -> Measured {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = Captured::stdout_of(&mut child);
    let stderr = Captured::stderr_of(&mut child);
    let mut killed = None;
    let mut peak = 0;
    let (mut peak_anon, mut peak_file) = (0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        // Read before the exit check of the next turn: a process that is gone reads as 0.
        let read = resident_kib(child.id());
        peak = peak.max(read.high_water);
        peak_anon = peak_anon.max(read.anon);
        peak_file = peak_file.max(read.file);
        if killed.is_none() {
            if peak > ceiling_kib {
                killed = Some(format!("over the ceiling of {ceiling_kib} KiB"));
            } else if start.elapsed() > timeout {
                killed = Some(format!("still running after {timeout:?}"));
            }
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let elapsed = start.elapsed();
    // The pipes close once every process holding them is gone (a `run`'s command included).
    eventually(Duration::from_secs(5), || {
        stdout.finished() && stderr.finished()
    });
    Measured {
        output: Output {
            status,
            stdout: stdout.bytes(),
            stderr: stderr.bytes(),
        },
        peak_rss_kib: peak,
        peak_anon_kib: peak_anon,
        peak_file_kib: peak_file,
        elapsed,
        killed,
    }
}

/// What /proc says of a process's resident set, in KiB (all 0 once it is gone).
#[derive(Default)]
struct Resident {
    /// VmHWM: the most it ever had resident.
    high_water: u64,
    /// RssAnon and RssFile: its anonymous and file-backed pages now.
    anon: u64,
    file: u64,
}

fn resident_kib(pid: u32) -> Resident {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return Resident::default();
    };
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0)
    };
    Resident {
        high_water: field("VmHWM:"),
        anon: field("RssAnon:"),
        file: field("RssFile:"),
    }
}
